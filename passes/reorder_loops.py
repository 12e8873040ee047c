"""Simplify each computed node's loops (the first half of Inductor's `simplify_and_reorder`).

Loops of size 1 are dropped, and a loop merges into its inner neighbour when every index the
body uses (loads, the store, `loops.index`) and the contiguous order all step by the inner
loop's whole extent along it: one loop then walks both. Pointwise and reduction loops are
simplified apart; the node's `ranges` / `reduce` become the merged sizes and every index is
rewritten over the new variables (a merged group's innermost variable becomes the new one,
the others 0: the strides line up by construction).

Before (seed 002: the bias added after a convolution over [1, 10, 88, 78]):
    buffer.computed "buf1" #buffer.layout<[1, 10, 88, 78], ...> ranges [1, 10, 88, 78] {
      %0 = buffer.load @buf0[i3 + 78*i2 + 6864*i1 + 68640*i0] : f32
      %1 = buffer.load @primals_2[i1] : f32
      ...
      buffer.store @buf1[i3 + 78*i2 + 6864*i1 + 68640*i0], %2 : f32 }
After (`explain=true` adds the reasons):
    buffer.computed "buf1" #buffer.layout<[1, 10, 88, 78], ...> ranges [10, 6864] {
      %0 = buffer.load @buf0[i1 + 6864*i0] : f32
      %1 = buffer.load @primals_2[i0] : f32
      ...
      buffer.store @buf1[i1 + 6864*i0], %2 : f32 } attributes {loops = "[10, 6864] from
        [1, 10, 88, 78]: i0 dropped (size 1); i1 | i2 kept apart: @primals_2[i1] steps 1 along
        i1, not 0"}

The layout is the buffer's and does not change. An index that is not affine in the loop
variables (a view's FloorDiv) blocks every merge of the loops it uses.

Before merging, a node's pointwise loops are put in the order its accesses walk memory (the
second half of `simplify_and_reorder`, Inductor's `pick_loop_order`, `order_by_strides`):
each index of the body (the store and every load) votes, for each pair of loops, for the one
it steps less along as the inner one, and the majority orders them. A channels-last
elementwise op's [N, C, H, W] runs as [N, H, W, C], then merges to [N, H*W*C]; a column sum's
split partials over [columns, split], stored split-major, run as [split, columns], so that
neighbouring lanes read neighbouring columns; `x.t() + y` stored column-major runs with i0
innermost (two accesses to one). An index not affine in a loop (a gather's window position, a
view's FloorDiv) has no say about that loop: a max pool's backward, which gathers from the
windows of a channels-last gradient, runs channels-last as the rest of its reads do. A tie (a
transpose copy) keeps the written order, and convert-to-triton tiles such kernels. Reduction
loops keep their order, and a contraction (`buffer.dot`) all of its loops.

Options:
  explain=false   true writes the decision into a `loops` attribute on each node: the new
                  sizes and, for every pair of neighbours kept apart, the first index that
                  keeps them apart
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import sympy
from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from mlc.analysis.dependencies import loop_groups, merged_variables
from mlc.analysis.flat_index import access_order, followed_positions, loop_strides
from mlc.dialects import buffer
from mlc.dialects.loops import index_names, reduction_index_names
from mlc.dialects.sym import ExprAttr, equal, expr_str, symbol
from mlc.passes.stages import check_stage
from mlc.passes.pipeline import option


@dataclass(frozen=True)
class Access:
    """One index expression of a body, with what it names (for the explanation)."""

    what: str
    expr: sympy.Expr


def body_accesses(node: buffer.ComputedOp) -> list[tuple[Operation, str, Access]]:
    """(op, property name, access) for every index expression in the node's body."""
    found = []
    for op in node.body.walk():
        for key, value in op.properties.items():
            if isinstance(value, ExprAttr):
                name = getattr(op, "buffer_name", None)
                what = f"@{name}[{expr_str(value.expr)}]" if name else f"index {expr_str(value.expr)}"
                found.append((op, key, Access(what, value.expr)))
    return found


@dataclass(frozen=True)
class LoopPlan:
    """The decision for one loop nest: `groups` of old positions per new loop, and why each
    pair of neighbours kept apart is kept apart."""

    groups: list[list[int]]
    reasons: list[str]


def plan_loops(names: Sequence[str], sizes: Sequence[sympy.Expr], accesses: Sequence[Access]) -> LoopPlan:
    """Which of the loops `names` (outermost first) merge, given every index of the body."""
    variables = [symbol(n) for n in names]
    groups = loop_groups(sizes, variables, [a.expr for a in accesses])
    reasons = [f"{names[d]} dropped (size 1)" for d in range(len(sizes)) if sizes[d] == 1]
    for outer, inner in zip(groups, groups[1:]):
        reasons.append(_kept_apart(names, sizes, accesses, variables, outer[-1], inner))
    return LoopPlan(groups, reasons)


def _kept_apart(names: Sequence[str], sizes: Sequence[sympy.Expr], accesses: Sequence[Access],
                variables: Sequence[sympy.Symbol], d: int, inner: list[int]) -> str:
    """Why loop d does not merge with the group `inner` after it: the first index in the way."""
    pair = f"{names[d]} | {names[inner[0]]} kept apart"
    span = sympy.Mul(*(sizes[e] for e in inner))
    for access in accesses:
        s = loop_strides(access.expr, variables)
        if s is None and {variables[d], variables[inner[0]]} & access.expr.free_symbols:
            return f"{pair}: {access.what} is not affine in them"
        if s is not None and not equal(s[d], s[inner[-1]] * span):
            return (f"{pair}: {access.what} steps {expr_str(s[d])} along {names[d]}, "
                    f"not {expr_str(s[inner[-1]] * span)}")
    return f"{pair}: not in contiguous order"


def stride_order(names: Sequence[str], sizes: Sequence[sympy.Expr], accesses: Sequence[Access]) -> list[int] | None:
    """The loops' order (old positions, outermost first) the accesses vote for
    (`order_by_strides`, Inductor's `pick_loop_order`), when it is not the present one; else
    None (see the module docstring). An index has no say about a loop it is not affine in or
    moves by a symbolic stride. Size-1 loops, which the merge drops, go first."""
    return access_order([a.expr for a in accesses], [symbol(n) for n in names], sizes)


def _permute(node: buffer.ComputedOp, accesses: list[tuple[Operation, str, Access]], order: list[int]) -> None:
    """Run `node`'s pointwise loops in `order` (old positions, outermost first)."""
    names = [symbol(n) for n in index_names(len(order))]
    placeholders = [sympy.Dummy(n.name, integer=True) for n in names]
    rename = {names[old]: placeholders[new] for new, old in enumerate(order)}
    back = dict(zip(placeholders, names))
    for op, key, access in accesses:
        op.properties[key] = ExprAttr(access.expr.xreplace(rename).xreplace(back))
    sizes = node.range_exprs
    node.properties["ranges"] = ArrayAttr([ExprAttr(sizes[old]) for old in order])


def reorder_node(node: buffer.ComputedOp, explain: bool) -> None:
    """Order, then simplify `node`'s pointwise and reduction loops in place (see the module
    docstring). A contraction keeps its [M, N] over [K]: its kernel tiles M and N itself."""
    if node.is_contraction:
        if explain:
            node.attributes["loops"] = StringAttr(f"{_nest(node.range_exprs, node.reduction_range_exprs)} kept: a contraction")
        return
    before = _nest(node.range_exprs, node.reduction_range_exprs)
    reordered = []
    accesses = body_accesses(node)
    names = index_names(len(node.range_exprs))
    variables = [symbol(n) for n in names + reduction_index_names(len(node.reduction_range_exprs))]
    walked = [Access(a.what, a.expr.xreplace(followed_positions(op, variables))) for op, _, a in accesses]
    order = stride_order(names, node.range_exprs, walked)
    if order is not None:
        _permute(node, accesses, order)
        accesses = body_accesses(node)  # the permuted indices
        reordered = [f"loops reordered to [{', '.join(names[d] for d in order)}] by stride (then renamed i0, i1, ...)"]
    ranges, rranges = node.range_exprs, node.reduction_range_exprs
    every = [a for _, _, a in accesses]
    nests = [(index_names, ranges), (reduction_index_names, rranges)]
    plans = [plan_loops(namer(len(sizes)), sizes, every) for namer, sizes in nests]
    # Old variables -> placeholders -> the new names (simultaneous: i1 may become i0).
    to_placeholder: dict[sympy.Basic, sympy.Expr] = {}
    to_new: dict[sympy.Basic, sympy.Expr] = {}
    new_sizes: list[list[sympy.Expr]] = []
    for plan, (namer, sizes) in zip(plans, nests):
        placeholders = [sympy.Dummy(n, integer=True) for n in namer(len(plan.groups))]
        to_placeholder |= merged_variables([symbol(n) for n in namer(len(sizes))], plan.groups, placeholders)
        to_new |= {p: symbol(p.name) for p in placeholders}
        new_sizes.append([sympy.Mul(*(sizes[d] for d in group)) for group in plan.groups])
    if new_sizes != [list(ranges), list(rranges)]:
        for op, key, access in accesses:
            op.properties[key] = ExprAttr(sympy.expand(access.expr.xreplace(to_placeholder).xreplace(to_new)))
        node.properties["ranges"] = ArrayAttr([ExprAttr(s) for s in new_sizes[0]])
        if node.is_reduction:
            node.properties["reduction_ranges"] = ArrayAttr([ExprAttr(s) for s in new_sizes[1]])
    if explain:
        reasons = "; ".join([*reordered, *(r for plan in plans for r in plan.reasons)])
        decision = f"{_nest(*new_sizes)} from {before}" + (f": {reasons}" if reasons else "")
        node.attributes["loops"] = StringAttr(decision)


def _nest(ranges: Sequence[sympy.Expr], rranges: Sequence[sympy.Expr]) -> str:
    text = f"[{', '.join(map(expr_str, ranges))}]"
    return text + (f" reduce [{', '.join(map(expr_str, rranges))}]" if rranges else "")


@dataclass(frozen=True)
class ReorderLoopsPass(ModulePass):
    """Drop size-1 loops and merge loops every index walks contiguously (simplify_and_reorder)."""

    name = "reorder-loops"
    ACCEPTS: ClassVar[tuple[str, ...]] = ("buffer",)

    explain: bool = option(False, "write each node's new loops and what keeps neighbours apart into a `loops` attribute")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_stage(self, op)
        for node in op.walk():
            if isinstance(node, buffer.ComputedOp) and not isinstance(node.parent_op(), buffer.FusedOp):
                reorder_node(node, self.explain)
