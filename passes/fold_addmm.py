"""Fold `aten.add.Tensor(aten.mm(a, b), inp)` into `aten.addmm(inp, a, b)` (Inductor's post-grad
`addmm` pattern, `torch/_inductor/fx_passes/post_grad.py`).

A backward pass often sums two products, as x.grad when x feeds two Linear layers (SwiGLU,
q/k/v projections); cuBLAS's addmm accumulates the second into the first with beta=1, which
saves a pointwise kernel and a round trip of the result through memory.

Before:
    %0 = aten.mm %g1, %w1 : (tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32> loc("mm")
    %1 = aten.mm %g2, %w2 : (tensor<8x16xf32>, tensor<16x64xf32>) -> tensor<8x64xf32> loc("mm_1")
    %2 = aten.add.Tensor %0, %1 : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32> loc("add")
    func.return %2 : tensor<8x64xf32>
After:
    %0 = aten.mm %g1, %w1 : (tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32> loc("mm")
    %1 = aten.addmm %0, %g2, %w2 : (tensor<8x64xf32>, tensor<8x16xf32>, tensor<16x64xf32>) -> tensor<8x64xf32> loc("add")
    func.return %1 : tensor<8x64xf32>

The addmm (beta and alpha default) takes the add's location and discardable attributes (its
`origin`); the mm is erased. An add folds unless (Inductor's `is_valid_addmm_fusion`):
  - the mm has another use (the pattern's intermediate node must have one user);
  - alpha is not 1;
  - `inp` does not expand to the mm's [M, N] (`is_expandable_to`; [N], [1, N], [M, 1] do);
  - `inp`, mat1 and mat2 differ in dtype (cuBLAS's addmm assumes one);
  - every use of the add is pointwise, through views (`should_prefer_unfused_addmm`, on GPU,
    where mlc always is): the add then fuses into those ops' kernel at no extra cost, and a
    bias stays a broadcast load there instead of an addmm input.
When both operands are mms, the right one is folded first (Inductor registers that pattern
first). Adds are visited last to first, as Inductor's pattern matcher does, so in
mm + mm + mm the outer add folds first and the inner one, now feeding an addmm, folds too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import sympy
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from mlc.dialects.aten import ELEMENTWISE, OPS, AtenOp, CallOp, parse_schema
from mlc.dialects.aten_schemas import SCHEMAS
from mlc.dialects.sym import sizes_of
from mlc.passes.stages import check_stage

# Inductor's `is_view`: an argument with an alias annotation (`Tensor(a) self`).
_VIEWS = frozenset(parse_schema(s).overload for s in SCHEMAS if "Tensor(a" in s.partition(" -> ")[0])
# torch.Tag.pointwise; `_to_copy` is how the importer spells prims.convert_element_type.
_POINTWISE = ELEMENTWISE | {"clone", "_to_copy"}
_ADDMM = OPS["addmm"]


def pointwise_use(op: Operation) -> bool:
    """Inductor's `is_pointwise_use`: a pointwise op, or a view whose uses all are."""
    if isinstance(op, AtenOp) and op.SCHEMA.overload in _VIEWS:
        return all(pointwise_use(use.operation) for r in op.results for use in r.uses)
    if isinstance(op, AtenOp):
        return op.packet in _POINTWISE
    return isinstance(op, CallOp) and op.overload.data.split(".")[0] in _POINTWISE


def expandable(shape: Sequence[int | sympy.Expr], desired: Sequence[int | sympy.Expr]) -> bool:
    """torch's `is_expandable_to`: `shape` broadcasts to `desired` without changing it."""
    return len(shape) <= len(desired) and all(
        s in (1, d) for s, d in zip(reversed(shape), reversed(desired))
    )


def refusal(add: AtenOp, mm: AtenOp, inp: SSAValue) -> str | None:
    """Why `add` = mm + inp must not become one addmm, or None when it folds."""
    if not mm.outputs[0].has_one_use():
        return "the mm has another use"
    if add.arg("alpha") != 1:
        return "alpha is not 1"
    mm_type, in_type = mm.outputs[0].type, inp.type
    assert isinstance(mm_type, TensorType) and isinstance(in_type, TensorType)
    if not expandable(sizes_of(in_type), sizes_of(mm_type)):
        return f"{sizes_of(in_type)} does not expand to the mm's {sizes_of(mm_type)}"
    if len({in_type.element_type, *(m.type.element_type for m in mm.tensors)}) != 1:  # type: ignore[attr-defined]
        return "the input and the mm's operands differ in dtype"
    if all(pointwise_use(use.operation) for use in add.outputs[0].uses):
        return "every use is pointwise: the add fuses there (should_prefer_unfused_addmm)"
    return None


def fold(add: AtenOp) -> bool:
    """Replace `add` by an addmm of its right (else left) mm operand, if one may fold."""
    lhs, rhs = add.tensors
    for mm, inp in ((rhs.owner, lhs), (lhs.owner, rhs)):
        if isinstance(mm, AtenOp) and mm.name == "aten.mm" and refusal(add, mm, inp) is None:
            addmm = _ADDMM([inp, *mm.tensors], {}, [add.outputs[0].type])
            addmm.location = add.location
            addmm.attributes |= add.attributes  # the importer's `origin` tag
            Rewriter.replace_op(add, addmm)
            Rewriter.erase_op(mm)
            return True
    return False


@dataclass(frozen=True)
class FoldAddmmPass(ModulePass):
    """Fold add(mm(a, b), inp) into addmm(inp, a, b) where Inductor's post-grad pass does."""

    name = "fold-addmm"
    ACCEPTS: ClassVar[tuple[str, ...]] = ("aten",)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_stage(self, op)
        adds = [o for o in op.walk() if isinstance(o, AtenOp) and o.name == "aten.add.Tensor"]
        for add in reversed(adds):  # last to first, as Inductor's PatternMatcherPass
            fold(add)
