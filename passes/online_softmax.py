"""Merge a looped kernel's max loop and its sum-of-exp loop into one online-softmax loop.

A looped softmax (log_softmax, cross-entropy, logsumexp) reads its row three times: once for
the max, once for sum(exp(v - max)), once for the output. Carrying a running max and a sum
rescaled whenever the max grows (Milakov & Gimelshein's online normalizer; Inductor's
`prepare_softmax_online`) finds both in the first loop, so the row is read twice:

Before:
    %2 = triton.rloop iter_args(%3 = %ninf : f32) {
      %4 = triton.load %in_ptr0[r0_0 + 8192*x0] mask r0_mask, xmask other -inf : f32
      %5 = triton.accumulate max %4 into %3 mask r0_mask, xmask : f32 -> f32
      triton.yield %5 : f32
    }
    %6 = triton.reduce max %2 : f32 -> f32
    %7 = triton.rloop iter_args(%8 = %zero : f32) {
      %9 = triton.load %in_ptr0[r0_0 + 8192*x0] mask r0_mask, xmask other 0.0 : f32
      %10 = arith.subf %9, %6 : f32
      %11 = math.exp %10 : f32
      %12 = triton.accumulate sum %11 into %8 mask r0_mask, xmask : f32 -> f32
      triton.yield %12 : f32
    }
    %13 = triton.reduce sum %7 : f32 -> f32
After:
    %2, %7 = triton.rloop iter_args(%3 = %ninf : f32, %8 = %zero : f32) {
      %4 = triton.load %in_ptr0[r0_0 + 8192*x0] mask r0_mask, xmask other -inf : f32
      %5, %12 = triton.accumulate online_softmax %4 into %3, %8 mask r0_mask, xmask : f32 -> f32, f32
      triton.yield %5, %12 : f32, f32
    }
    %6, %13 = triton.reduce online_softmax %2, %7 : f32, f32 -> f32, f32

The pair merges when the second loop computes nothing but sum(exp(w - max)), where w is the
value the first loop took the max of (the same ops on the same loads, recomputed), and reads
memory (a loop that only computes saves nothing). Persistent kernels hold the row in registers
and read it once either way: they are left alone. Options: `enabled` (default true) and
`explain`, which writes `online_softmax = "..."` on each kernel with a merged pair (and says
it as a remark).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from mlc.dialects import triton as tt
from mlc.passes.pipeline import option, remark
from mlc.passes.stages import check_stage

_IGNORED_LOAD_PROPERTIES = ("other", "eviction_policy")  # what masked lanes read; a cache hint


@dataclass(frozen=True)
class SoftmaxLoops:
    """A max loop and the sum-of-exp loop over its max, with the values the merge rewires."""

    max_loop: tt.RLoopOp
    max_reduce: tt.ReduceOp
    max_step: tt.AccumulateOp
    sum_loop: tt.RLoopOp
    sum_reduce: tt.ReduceOp


def same_value(a: SSAValue, b: SSAValue, seen: dict[SSAValue, SSAValue] | None = None) -> bool:
    """Whether `b` (in one loop) recomputes `a` (in another): one value, or the same pure ops
    over operands that are the same; loads differ at most in what masked lanes read."""
    seen = {} if seen is None else seen
    if a is b or seen.get(a) is b:
        return True
    op_a, op_b = a.owner, b.owner
    if not (isinstance(op_a, Operation) and isinstance(op_b, Operation)) or op_a.name != op_b.name:
        return False
    if isinstance(op_a, (tt.AccumulateOp, tt.StoreOp, tt.RLoopOp)) or op_a.regions or op_b.regions:
        return False
    if list(op_a.results).index(a) != list(op_b.results).index(b) or len(op_a.operands) != len(op_b.operands):
        return False
    ignored = _IGNORED_LOAD_PROPERTIES if isinstance(op_a, tt.LoadOp) else ()
    props_a = {k: v for k, v in op_a.properties.items() if k not in ignored}
    props_b = {k: v for k, v in op_b.properties.items() if k not in ignored}
    if props_a != props_b or op_a.attributes.keys() - {"loc"} != op_b.attributes.keys() - {"loc"}:
        return False
    if not all(same_value(x, y, seen) for x, y in zip(op_a.operands, op_b.operands)):
        return False
    seen[a] = b
    return True


def _index_definitions(loop: tt.RLoopOp) -> set[tuple[str, str]]:
    return {(op.var.data, str(op.expr.expr)) for op in loop.body.block.ops if isinstance(op, tt.IndexOp)}


def match_softmax_loops(max_loop: tt.RLoopOp) -> SoftmaxLoops | str:
    """The pair starting at `max_loop`, or why there is none."""
    if len(max_loop.inits) != 1:
        return "the first loop carries more than a max"
    step = max_loop.body.block.last_op.operands[0] if max_loop.body.block.last_op.operands else None
    if step is None or not isinstance(step.owner, tt.AccumulateOp) or step.owner.reduction_kind != "max":
        return "the first loop is no max"
    max_step = step.owner
    max_reduce = max_loop.results[0].get_user_of_unique_use()
    if not isinstance(max_reduce, tt.ReduceOp) or max_reduce.reduction_kind != "max":
        return "the max loop's accumulator has other uses"
    row_max = max_reduce.results[0]
    for op in row_max.uses:
        loop = op.operation.parent_op()
        if not isinstance(loop, tt.RLoopOp) or loop is max_loop or len(loop.inits) != 1:
            continue
        last = loop.body.block.last_op
        acc = last.operands[0].owner if last.operands else None
        if not isinstance(acc, tt.AccumulateOp) or acc.reduction_kind != "sum" or acc.masks != max_step.masks:
            continue
        exp = acc.value.owner
        sub = exp.operands[0].owner if isinstance(exp, math.ExpOp) else None
        if not isinstance(sub, arith.SubfOp) or sub.rhs is not row_max:
            continue
        if not same_value(max_step.value, sub.lhs) or _index_definitions(loop) != _index_definitions(max_loop):
            continue
        needed = {last, acc, exp, sub} | _defining_ops(sub.lhs, loop)
        if any(op not in needed and not isinstance(op, tt.IndexOp) for op in loop.body.block.ops):
            continue  # the loop computes something else too
        if not any(isinstance(op, tt.LoadOp) for op in loop.body.block.ops):
            return "the sum loop reads no memory: merging saves nothing"
        sum_reduce = loop.results[0].get_user_of_unique_use()
        if isinstance(sum_reduce, tt.ReduceOp) and sum_reduce.reduction_kind == "sum":
            return SoftmaxLoops(max_loop, max_reduce, max_step, loop, sum_reduce)
    return "no loop sums exp(v - max) over the same values"


def _defining_ops(value: SSAValue, loop: tt.RLoopOp) -> set[Operation]:
    """The ops of `loop`'s body that `value` is computed by."""
    found: set[Operation] = set()
    stack = [value]
    while stack:
        op = stack.pop().owner
        if isinstance(op, Operation) and op.parent_op() is loop and op not in found:
            found.add(op)
            stack.extend(op.operands)
    return found


def merge(loops: SoftmaxLoops) -> None:
    """One loop carrying (max, sum); the two reduces become one online_softmax reduce."""
    old = loops.max_loop
    inits = [old.inits[0], loops.sum_loop.inits[0]]
    body = Block(arg_types=[v.type for v in inits])
    old.body.block.args[0].replace_all_uses_with(body.args[0])
    for op in list(old.body.block.ops):
        op.detach()
        body.add_op(op)
    step = tt.AccumulateOp("online_softmax", loops.max_step.value, body.args, loops.max_step.masks)
    Rewriter.insert_op(step, InsertPoint.before(loops.max_step))
    loops.max_step.results[0].replace_all_uses_with(step.results[0])
    Rewriter.erase_op(loops.max_step)
    yield_op = body.last_op
    assert isinstance(yield_op, tt.YieldOp)
    Rewriter.replace_op(yield_op, tt.YieldOp(list(step.results)))
    loop = tt.RLoopOp(inits, Region(body))
    Rewriter.insert_op(loop, InsertPoint.before(old))
    value_type = inits[0].type
    reduce = tt.ReduceOp("online_softmax", list(loop.results), [value_type, value_type])
    Rewriter.insert_op(reduce, InsertPoint.before(loops.max_reduce))
    loops.max_reduce.results[0].replace_all_uses_with(reduce.results[0])
    loops.sum_reduce.results[0].replace_all_uses_with(reduce.results[1])
    for op in (loops.sum_reduce, loops.sum_loop, loops.max_reduce, old):
        Rewriter.erase_op(op, safe_erase=False)


@dataclass(frozen=True)
class OnlineSoftmaxPass(ModulePass):
    """Merge a looped kernel's max and sum-of-exp loops into one online-softmax loop."""

    name = "online-softmax"
    ACCEPTS: ClassVar[tuple[str, ...]] = ("triton",)

    enabled: bool = option(True, "false leaves softmax's max and sum loops apart")
    explain: bool = option(False, "write online_softmax on each kernel with a merged pair")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_stage(self, op)
        if not self.enabled:
            return
        for kernel in [k for k in op.body.block.ops if isinstance(k, tt.KernelOp)]:
            reasons = []
            for loop in [o for o in kernel.body.block.ops if isinstance(o, tt.RLoopOp)]:
                if loop.parent is None:  # merged away as a sum loop
                    continue
                found = match_softmax_loops(loop)
                if isinstance(found, SoftmaxLoops):
                    merge(found)
                    reasons.append("a max loop and its sum(exp(v - max)) loop merged: the row is read once less")
            if self.explain and reasons:
                kernel.attributes["online_softmax"] = StringAttr("; ".join(reasons))
                remark(kernel, "; ".join(reasons))
