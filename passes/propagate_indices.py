"""Read at a computed position directly where it is an index expression (Inductor's IndexPropagation).

`x[torch.arange(n)]`, and the attention masks transformers build by indexing a padding mask
with aranges, lower to loads at a position read from a value (`loops.indirect_index`). Once
`--inline` has folded the arange in, that value is integer arithmetic on `loops.index`: the
kernel computes it in 64 bits, wraps negative values and gathers element by element. Where
the value is an affine expression of the index variables whose range the loops bound, the
load reads at that expression instead, an affine access that Triton vectorizes:

Before:
    %0 = loops.index r0_0 : i64
    %1 = arith.constant 0 : i64
    %2 = arith.addi %0, %1 : i64
    %3 = loops.indirect_index %2 size 512 : i64
    %4 = loops.load %mask[0, ind0] indirect(%3) : tensor<1x512xi64>
After:
    %4 = loops.load %mask[0, r0_0] : tensor<1x512xi64>

The range of the expression over the loops' extents decides: inside [0, size) it is the
position; inside [-size, 0) it counts from the end (`indirect_index` wraps it: expression +
size). A range that crosses 0 or leaves the dim stays indirect, as a value read from memory
does. The arithmetic followed: integer constants, `loops.index` without indirect positions,
addi, subi, muli and extsi. Loads and `loops.index` ops at the position are rewritten;
scatters keep theirs (an affine scatter is still a scatter). Ops left unread are erased.
"""

from __future__ import annotations

from typing import ClassVar

import sympy
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from mlc.dialects.loops import IndexOp, IndirectIndexOp, LoadOp, enclosing_loops, index_extents
from mlc.dialects.sym import affine_range, compact_indirect, indirect_symbol
from mlc.passes.stages import check_stage


def index_value(value: SSAValue) -> sympy.Expr | None:
    """`value` as an expression of the index variables, where the ops computing it are
    followed (see the module docstring); else None."""
    op = value.owner
    if isinstance(op, IndexOp):
        return None if op.indirect else op.expr.expr
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return sympy.Integer(op.value.value.data)
    if isinstance(op, arith.ExtSIOp):
        return index_value(op.input)
    if isinstance(op, (arith.AddiOp, arith.SubiOp, arith.MuliOp)):
        lhs, rhs = index_value(op.lhs), index_value(op.rhs)
        if lhs is None or rhs is None:
            return None
        return lhs + rhs if isinstance(op, arith.AddiOp) else lhs - rhs if isinstance(op, arith.SubiOp) else lhs * rhs
    return None


def propagated_position(op: IndirectIndexOp) -> sympy.Expr | None:
    """The position `op` names as an index expression: its value where the value's range lies
    in [0, size), value + size where it lies in [-size, 0); None otherwise."""
    size, owner = op.size.expr, enclosing_loops(op)
    value = index_value(op.value)
    if value is None or owner is None or not size.is_Integer:
        return None
    span = affine_range(value, index_extents(owner))
    if span is None:
        return None
    low, high = span
    if 0 <= low and high < int(size):
        return value
    if -int(size) <= low and high < 0:
        return value + size
    return None


def _substituted(user: Operation, operand: SSAValue, position: sympy.Expr) -> Operation | None:
    """`user` (a load or a `loops.index`) reading at `position` where it named `operand`."""
    subst = {indirect_symbol(k): position for k, v in enumerate(user.indirect) if v == operand}
    if isinstance(user, LoadOp):
        exprs, kept = compact_indirect([e.xreplace(subst) for e in user.index_exprs], list(user.indirect))
        return LoadOp(user.source, exprs, user.mask, kept)
    if isinstance(user, IndexOp):
        (expr,), kept = compact_indirect([user.expr.expr.xreplace(subst)], list(user.indirect))
        return IndexOp(expr, user.result.type, kept)
    return None


def _erase_unread(op: Operation) -> None:
    """Erase `op` if nothing reads it, then the ops that computed its operands, likewise."""
    if op.parent is None or any(r.uses for r in op.results) or op.regions:
        return
    operands = [v.owner for v in op.operands if isinstance(v.owner, Operation)]
    Rewriter.erase_op(op)
    for owner in operands:
        _erase_unread(owner)


def propagate(op: IndirectIndexOp) -> bool:
    """Rewrite the loads and index ops at `op`'s position where it is an index expression;
    whether any changed."""
    position = propagated_position(op)
    if position is None:
        return False
    changed = False
    for use in list(op.result.uses):
        user = use.operation
        new = _substituted(user, op.result, position)
        if new is None:
            continue
        Rewriter.replace_op(user, new)
        changed = True
    _erase_unread(op)
    return changed


class PropagateIndicesPass(ModulePass):
    """Read at a computed position directly where it is an index expression (Inductor's IndexPropagation)."""

    name = "propagate-indices"
    ACCEPTS: ClassVar[tuple[str, ...]] = ("loops",)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_stage(self, op)
        for indirect in [o for o in op.walk() if isinstance(o, IndirectIndexOp)]:
            propagate(indirect)
