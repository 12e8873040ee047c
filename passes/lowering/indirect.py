"""Loads at positions read from memory: advanced indexing, gather and embedding.

Each is one pointwise over the result whose body loads the index tensor, makes each index a
position (`loops.indirect_index`, which counts negative values from the end) and loads the
source there, named `ind0, ind1, ...` in the load's index (Inductor's `indirect_indexing`):

    x[i, :, j]          %a = loops.load %i[i0, i1]            (i, j broadcast to [B0, B1])
    x: [S0, D, S2]      %p = loops.indirect_index %a size S0 : i64
                        %b = loops.load %j[i1]                 ...size S2...
                        %v = loops.load %x[ind0, i2, ind1] indirect(%p, %q)

so the gathered values fuse with the elementwise work around them, and a gather of a
computed tensor (`x.exp()[idx]`) computes only the elements it reads. Positions out of range
read outside the tensor, as in Inductor (eager raises); `--convert-to-triton="check-indices=true"`
asserts on the device instead.

  index.Tensor   `self[indices]`: the index tensors (None for a full slice) broadcast to one
                 shape B; when they index adjacent dims B takes their place in the result,
                 otherwise it leads (NumPy's rule). Boolean masks (a data-dependent shape)
                 stay extern calls.
  gather         out[..., k, ...] = self[..., index[..., k, ...], ...] along `dim`
                 (take_along_dim decomposes to it)
  embedding      out[..., d] = weight[indices[...], d]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sympy
from xdsl.ir import Operation, SSAValue

from mlc.dialects.sym import indirect_symbol
from mlc.passes.lowering.body import Body, Value, make_pointwise
from mlc.passes.lowering.dtypes import dtype_of, is_float
from mlc.passes.lowering.indexing import broadcast_index
from mlc.passes.lowering.registry import Call, register, shape


def is_index_tensor(value: SSAValue) -> bool:
    dtype = dtype_of(value.type)
    return dtype is not None and not is_float(dtype) and dtype != "bool"


def position(b: Body, index: SSAValue, at: Sequence[sympy.Expr], size: int) -> SSAValue:
    """The element of `index` at `at` as a position in a dim of `size`."""
    return b.indirect_index(b.load(index, at), size)


def _broadcast_shape(shapes: Sequence[Sequence[int]]) -> list[int]:
    rank = max(len(s) for s in shapes)
    out = [1] * rank
    for s in shapes:
        for k, size in enumerate(s, start=rank - len(s)):
            out[k] = size if out[k] == 1 else out[k]
    return out


@dataclass(frozen=True)
class AdvancedIndex:
    """`x[indices]` by NumPy's rule (index.Tensor reads it, index_put writes it): the index
    tensors (None: a full slice) broadcast to `bshape`, which sits at `start` in the result:
    where the indexed dims were when they are adjacent, else in front."""

    sizes: list[int]  # x's shape
    indices: list[SSAValue | None]
    bshape: list[int]
    start: int

    @property
    def shape(self) -> list[int]:
        """The shape of `x[indices]`."""
        rest = [s for d, s in enumerate(self.sizes) if d >= len(self.indices) or self.indices[d] is None]
        return [*rest[: self.start], *self.bshape, *rest[self.start :]]

    def at(self, b: Body, point: Sequence[sympy.Expr]) -> tuple[list[sympy.Expr], list[SSAValue]]:
        """Where in x the result's element at `point` is: its index, naming the positions it
        loads from the index tensors as ind0, ..., and those positions."""
        end = self.start + len(self.bshape)
        bvars, rest = point[self.start : end], iter([*point[: self.start], *point[end:]])
        at: list[sympy.Expr] = []
        positions: list[SSAValue] = []
        for d, size in enumerate(self.sizes):
            t = self.indices[d] if d < len(self.indices) else None
            if t is None:
                at.append(next(rest))
                continue
            positions.append(position(b, t, broadcast_index(bvars, shape(t), self.bshape), size))
            at.append(indirect_symbol(len(positions) - 1))
        return at, positions


def advanced_index(x: SSAValue, indices: Sequence[SSAValue | None]) -> AdvancedIndex | None:
    """None when mlc reads no such index natively (no tensor, or a boolean mask)."""
    xs, indices = shape(x), list(indices)
    used = [(d, t) for d, t in enumerate(indices) if t is not None]
    if not used or len(indices) > len(xs) or not all(is_index_tensor(t) for _, t in used):
        return None
    dims = [d for d, _ in used]
    adjacent = dims == list(range(dims[0], dims[-1] + 1))
    return AdvancedIndex(xs, indices, _broadcast_shape([shape(t) for _, t in used]), dims[0] if adjacent else 0)


@register("index.Tensor")
def index_tensor(call: Call) -> list[Operation] | None:
    x = call["self"]
    if (index := advanced_index(x, call["indices"])) is None:
        return None

    def body(b: Body) -> Value:
        at, positions = index.at(b, b.vars)
        return b.load(x, at, widen=False, indirect=positions)

    return [make_pointwise(call, call.result_type, body)]


@register("gather")
def gather(call: Call) -> list[Operation] | None:
    x, index = call["self"], call["index"]
    xs = shape(x)
    if not xs or not is_index_tensor(index) or len(shape(index)) != len(xs):
        return None
    dim = call["dim"] % len(xs)

    def body(b: Body) -> Value:
        at: list[sympy.Expr] = list(b.vars)
        at[dim] = indirect_symbol(0)
        return b.load(x, at, widen=False, indirect=[position(b, index, b.vars, xs[dim])])

    return [make_pointwise(call, call.result_type, body)]


@register("embedding")
def embedding(call: Call) -> list[Operation] | None:
    weight, indices = call["weight"], call["indices"]
    ws = shape(weight)
    if len(ws) != 2 or not is_index_tensor(indices):
        return None
    rank = len(shape(indices))

    def body(b: Body) -> Value:
        row = position(b, indices, b.vars[:rank], ws[0])
        return b.load(weight, [indirect_symbol(0), b.vars[rank]], widen=False, indirect=[row])

    return [make_pointwise(call, call.result_type, body)]
