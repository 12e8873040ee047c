"""What the aten verifier checks of an op's arguments against its operand shapes.

torch raises these at trace time; an aten op that breaks them is statically wrong, so the
verifier rejects it at its line rather than letting `--lower-aten` crash on it, lower it to
wrong loads, or keep it as an extern that fails at run time:

  * every `dim`, `dims`, `dim0`, `dim1` names a dim of the first tensor (`cat`: of its
    tensors, the legacy empty [0] ones aside; `unsqueeze`: one past the last too), negative
    ones from the end (a 0-d tensor takes 0 and -1), and a list names each dim once;
  * `permute` names every dim; `select` picks an index inside the dim; `cat`'s tensors
    agree on every dim but the joined one;
  * a reduction over explicit dims (`dim` and `keepdim` in its schema) has the result shape
    of those dims removed, or kept as 1;
  * a view that only re-indexes (view, reshape, squeeze, unsqueeze) keeps the element count.

Arguments not given take the schema's defaults, which are always in range. Symbolic sizes
(`s0`) are skipped where a check would need them: only static sizes are compared.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import sympy
from xdsl.dialects.builtin import TensorType
from xdsl.utils.exceptions import VerifyException

from mlc.dialects.sym import sizes_of
from mlc.dialects.values import attr_to_py

DIM_ARGS = ("dim", "dims", "dim0", "dim1")
RESHAPES = frozenset({"view", "reshape", "_unsafe_view", "squeeze", "unsqueeze"})


def verify_arguments(op: Any) -> None:
    """All of this module's checks on one dedicated aten op (an `AtenOp`)."""
    shape = _dims_shape(op)
    if shape is None:
        return
    for name in DIM_ARGS:
        if (dims := _given(op, name)) is not None:
            _verify_dims(op, name, dims, len(shape))
    if op.packet == "permute":
        _verify_permutation(op, _given(op, "dims") or [], len(shape))
    if op.packet == "select":
        _verify_select(op, shape)
    if op.packet == "cat":
        _verify_cat(op, shape)
    if _is_reduction(op):
        _verify_reduction_shape(op, shape)
    if op.packet in RESHAPES:
        _verify_numel(op, shape)


def _shape(value: Any) -> list[int | sympy.Expr]:
    typ = value.type
    return sizes_of(typ) if isinstance(typ, TensorType) else []


def _differ(a: int | sympy.Expr, b: int | sympy.Expr) -> bool:
    """Whether two sizes are known to differ: both static and unequal."""
    return isinstance(a, int) and isinstance(b, int) and a != b


def _dims_shape(op: Any) -> list[int] | None:
    """The shape whose dims the op's dim arguments name; None when it has no tensor."""
    shapes = [_shape(t) for t in op.tensors]
    if op.packet == "cat":
        shapes = [s for s in shapes if s != [0]] or shapes  # torch skips legacy empty tensors
    return shapes[0] if shapes else None


def _given(op: Any, name: str) -> list[int] | None:
    """The ints an argument holds when the op gives it (None when absent or None)."""
    if op.args is None or name not in op.args.data:
        return None
    value = attr_to_py(op.args.data[name])
    if isinstance(value, int) and not isinstance(value, bool):
        return [value]
    if isinstance(value, list) and all(isinstance(v, int) for v in value):
        return value
    return None


def _verify_dims(op: Any, name: str, dims: Sequence[int], rank: int) -> None:
    bound = max(rank, 1) + (1 if op.packet == "unsqueeze" else 0)
    seen: set[int] = set()
    for d in dims:
        if not -bound <= d < bound:
            what = f"dim {d} in dims" if name == "dims" else f"{name} {d}"
            raise VerifyException(
                f"{op.name}: {what} is out of range for a rank-{rank} tensor (expected {-bound} to {bound - 1})"
            )
        wrapped = d % bound
        if wrapped in seen:
            raise VerifyException(f"{op.name}: {name} {list(dims)} names dim {wrapped} twice")
        seen.add(wrapped)


def _verify_permutation(op: Any, dims: Sequence[int], rank: int) -> None:
    if len(dims) != rank:
        raise VerifyException(f"{op.name}: dims {list(dims)} name {len(dims)} dims of a rank-{rank} tensor")


def _verify_select(op: Any, shape: list[int]) -> None:
    dim, index = _given(op, "dim"), _given(op, "index")
    if not shape or dim is None or index is None:
        return
    size = shape[dim[0] % len(shape)]
    if isinstance(size, int) and not -size <= index[0] < size:
        raise VerifyException(f"{op.name}: index {index[0]} is out of range for dim {dim[0]} of size {size}")


def _verify_cat(op: Any, shape: list[int]) -> None:
    """The tensors agree on every dim but the one joined (legacy empty [0] tensors aside)."""
    dim = (_given(op, "dim") or [0])[0] % max(len(shape), 1)
    for other in (_shape(t) for t in op.tensors):
        if other == [0]:
            continue
        if len(other) != len(shape) or any(
            _differ(a, b) for k, (a, b) in enumerate(zip(other, shape)) if k != dim
        ):
            raise VerifyException(f"{op.name}: tensors of shapes {shape} and {other} do not join along dim {dim}")


def _is_reduction(op: Any) -> bool:
    names = {a.name for a in op.SCHEMA.args}
    return "dim" in names and "keepdim" in names


def _verify_reduction_shape(op: Any, shape: list[int]) -> None:
    dims = _given(op, "dim")
    if not dims:  # None or [] (all dims, or for some ops none): no explicit dims to check
        return
    reduced = {d % max(len(shape), 1) for d in dims}
    keep = bool(op.arg("keepdim"))
    expected = [1 if k in reduced else s for k, s in enumerate(shape) if keep or k not in reduced]
    for result in op.outputs:
        got = _shape(result)
        if len(got) != len(expected) or any(_differ(g, e) for g, e in zip(got, expected)):
            raise VerifyException(
                f"{op.name}: result shape {got} is not {expected}, the shape {shape} reduced over dims {dims}"
                f"{' with keepdim' if keep else ''}"
            )


def _verify_numel(op: Any, shape: list[int]) -> None:
    got = _shape(op.outputs[0]) if len(op.outputs) == 1 else None
    if got is None or not all(isinstance(d, int) for d in (*shape, *got)):
        return
    if math.prod(got) != math.prod(shape):
        raise VerifyException(
            f"{op.name}: result shape {got} has {math.prod(got)} elements, the operand {shape} has {math.prod(shape)}"
        )
