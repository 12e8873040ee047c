"""Fold unrealized producers into their consumers (Inductor's loaders of unrealized buffers)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

import sympy
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    Float16Type,
    Float32Type,
    FloatAttr,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from mlc.dialects.loops import (
    EXPLICIT_ROUNDING, IndexOp, LoadOp, LoopsBodyOp, YieldOp, index_names, masked_off_value,
)
from mlc.dialects.sym import compact_indirect, rename_indirect, symbol
from mlc.analysis.realization import RealizeOptions, ThresholdOptions, consumers, should_inline
from mlc.passes.stages import check_stage
from mlc.passes.pipeline import option


def _substitution(producer: LoopsBodyOp, indices: list[sympy.Expr]) -> dict[sympy.Basic, sympy.Expr]:
    """Producer index variables -> the consumer's index expressions (applied simultaneously)."""
    return {symbol(n): e for n, e in zip(index_names(len(producer.ranges)), indices)}


def _copy_body_before(
    load: LoadOp, producer: LoopsBodyOp, subst: Mapping[sympy.Basic, sympy.Expr]
) -> SSAValue:
    """Insert the producer's body before `load`, re-indexed and masked; return its element."""
    at = InsertPoint.before(load)
    mapping: dict[SSAValue, SSAValue] = {}
    for op in producer.body.block.ops:
        if isinstance(op, YieldOp):
            return mapping[op.values[0]]
        if isinstance(op, LoadOp):
            indices, indirect = _reindexed(op.index_exprs, op.indirect, load, subst, mapping)
            mask = mapping[op.mask] if op.mask is not None else None
            if load.mask is not None:
                if mask is None:
                    mask = load.mask
                else:
                    both = arith.AndIOp(mask, load.mask)
                    Rewriter.insert_op(both, at)
                    mask = both.result
            new: Operation = LoadOp(op.source, indices, mask, indirect)
        elif isinstance(op, IndexOp):
            (expr,), indirect = _reindexed([op.expr.expr], op.indirect, load, subst, mapping)
            new = IndexOp(expr, op.result.type, indirect)
        elif op.regions:
            # Loads nested in a region would escape the re-indexing below.
            raise PassFailedException(f"{op.name} with regions in a loops body")
        else:
            new = op.clone(value_mapper=mapping)
        Rewriter.insert_op(new, at)
        mapping.update(zip(op.results, new.results))
    raise AssertionError("loops body without loops.yield")  # the verifier rules this out


def _reindexed(
    exprs: list[sympy.Expr],
    own: Sequence[SSAValue],
    load: LoadOp,
    subst: Mapping[sympy.Basic, sympy.Expr],
    mapping: Mapping[SSAValue, SSAValue],
) -> tuple[list[sympy.Expr], list[SSAValue]]:
    """A producer's index expressions at the consumer's `load`, and the indirect operands they
    name: the load's own positions (which `subst` brings in) come first, the producer's follow.
    xreplace substitutes all variables at once, so the consumer's own i0, i1, ... appearing in
    `subst`'s values are never substituted a second time."""
    outer = list(load.indirect)
    moved = [rename_indirect(e, len(outer)).xreplace(subst) for e in exprs]
    return compact_indirect(moved, [*outer, *(mapping[v] for v in own)])


def _inline_load(load: LoadOp, producer: LoopsBodyOp) -> None:
    """Replace one load of `producer` by its body; a masked load selects 0 where masked off."""
    value = _copy_body_before(load, producer, _substitution(producer, load.index_exprs))
    if load.mask is not None:
        # Loads in the copy read 0 where masked, but the math on them need not give 0.
        zero = masked_off_value(value.type)
        select = arith.SelectOp(load.mask, value, zero.result)
        Rewriter.insert_op([zero, select], InsertPoint.before(load))
        value = select.result
    load.result.replace_all_uses_with(value)
    Rewriter.erase_op(load)


def _merge_origins(op: LoopsBodyOp, producer: LoopsBodyOp) -> None:
    """The consumer now computes the producer's FX nodes too (Inductor's `origins`)."""
    names = sorted(set(op.origin_names) | set(producer.origin_names))
    if names:
        op.properties["origins"] = ArrayAttr([StringAttr(n) for n in names])


def inline_producers(op: LoopsBodyOp, inlinable: set[Operation]) -> None:
    """Replace every load in `op`'s body that reads an op of `inlinable`, until none is left."""
    while True:
        pending = [
            load
            for load in op.body.walk()
            if isinstance(load, LoadOp) and load.source.owner in inlinable
        ]
        if not pending:
            return
        for load in pending:
            producer = load.source.owner
            assert isinstance(producer, LoopsBodyOp)
            _merge_origins(op, producer)
            _inline_load(load, producer)


# Inductor computes float16/bfloat16 in float32 (triton_compute_type) and rounds only on store.
_NARROW = (Float16Type, BFloat16Type)


def _unrounded(
    value: SSAValue, at: InsertPoint, touched: list[Operation], memo: dict[SSAValue, SSAValue | None]
) -> SSAValue | None:
    """The f32 value that the f16/bf16 `value` is a rounding of, or None when there is none.

    `truncf(x : f32)` gives x; `select(c, a, b)` (a masked load of an inlined producer selects
    0 where masked off) gives a select of the arms' f32 values when at least one arm is a
    truncf: a constant arm is widened exactly, any other arm by an `extf` inserted at `at`.
    `memo` keeps one widened select per select (bodies are straight-line: the first dominates).
    """
    if value not in memo:
        memo[value] = _widen(value, at, touched, memo)
    return memo[value]


def _widen(
    value: SSAValue, at: InsertPoint, touched: list[Operation], memo: dict[SSAValue, SSAValue | None]
) -> SSAValue | None:
    owner = value.owner
    if not isinstance(value.type, _NARROW) or not isinstance(owner, Operation):
        return None
    if isinstance(owner, arith.TruncFOp):
        if not isinstance(owner.input.type, Float32Type) or EXPLICIT_ROUNDING in owner.attributes:
            return None
        touched.append(owner)
        return owner.input
    if not isinstance(owner, arith.SelectOp):
        return None
    arms = [_unrounded(arm, at, touched, memo) for arm in (owner.lhs, owner.rhs)]
    if all(a is None for a in arms):
        return None
    touched.append(owner)
    wide: list[SSAValue] = []
    for arm, folded in zip((owner.lhs, owner.rhs), arms):
        if folded is None:
            const = arm.owner
            if isinstance(const, arith.ConstantOp) and isinstance(const.value, FloatAttr):
                touched.append(const)
                new: Operation = arith.ConstantOp(FloatAttr(const.value.value.data, Float32Type()))
            else:
                new = arith.ExtFOp(arm, Float32Type())
            Rewriter.insert_op(new, at)
            folded = new.results[0]
        wide.append(folded)
    select = arith.SelectOp(owner.cond, wide[0], wide[1])
    Rewriter.insert_op(select, at)
    return select.result


def fold_precision_casts(op: LoopsBodyOp) -> int:
    """Drop the f32 -> f16/bf16 -> f32 round trips in `op`'s body; return how many.

    `arith.extf(arith.truncf(%x : f32) : f16) : f32` becomes %x (also through a select, see
    `_unrounded`); a truncf still read elsewhere (the yield: the stored value) stays.
    """
    folded = 0
    touched: list[Operation] = []
    memo: dict[SSAValue, SSAValue | None] = {}
    for ext in [o for o in op.body.walk() if isinstance(o, arith.ExtFOp)]:
        if not isinstance(ext.result.type, Float32Type):
            continue
        wide = _unrounded(ext.input, InsertPoint.before(ext), touched, memo)
        if wide is not None:
            touched.append(ext)
            ext.result.replace_all_uses_with(wide)
            folded += 1
    # Erase what the fold left unread, readers before what they read.
    for dead in sorted(set(touched), key=_position(op), reverse=True):
        if dead.parent is not None and not any(r.uses for r in dead.results):
            Rewriter.erase_op(dead)
    return folded


def _position(op: LoopsBodyOp) -> Callable[[Operation], int]:
    order = {o: k for k, o in enumerate(op.body.walk())}
    return lambda o: order.get(o, -1)


def erase_dead(block: Block) -> None:
    """Erase pointwise/reduction ops nothing reads any more, consumers before producers."""
    for op in reversed(list(block.ops)):
        if isinstance(op, LoopsBodyOp) and not any(r.uses for r in op.results):
            Rewriter.erase_op(op)


def inline_block(block: Block, options: RealizeOptions, emulate_precision_casts: bool = False) -> None:
    """Decide each op in program order (its producers are final by then) and inline it."""
    erase_dead(block)  # an unread op is no consumer (FX graphs reach Inductor dead-code-eliminated)
    uses = consumers(block)  # before any inlining: Inductor counts an FX node's users
    inlinable: set[Operation] = set()
    for op in list(block.ops):
        if isinstance(op, LoopsBodyOp):
            inline_producers(op, inlinable)
            if not emulate_precision_casts:
                fold_precision_casts(op)  # before counting its ops, as --realize will see it
            if should_inline(op, uses[op], options):
                inlinable.add(op)
    erase_dead(block)


@dataclass(frozen=True)
class InlinePass(ThresholdOptions, ModulePass):
    """Fold unrealized loops producers into the bodies of their consumers.

    A `loops.load %p[e0, e1]` of a `loops.pointwise` %p that is not realized becomes a copy of
    %p's body with i0 := e0, i1 := e1 (simultaneously), and the origins merge. A masked load
    masks the copied loads and selects 0 where the mask is off. Ops left unread are erased.

        %m = loops.pointwise [8, 64] origins ["mul"] -> tensor<8x64xf32> {
          %0 = loops.load %x[i0, i1] : tensor<8x64xf32>
          %1 = arith.mulf %0, %0 : f32
          loops.yield %1 : f32 }
        %t = loops.pointwise [64, 8] origins ["erf"] -> tensor<64x8xf32> {
          %0 = loops.load %m[i1, i0] : tensor<8x64xf32>
          %1 = math.erf %0 : f32
          loops.yield %1 : f32 }
      becomes
        %t = loops.pointwise [64, 8] origins ["erf", "mul"] -> tensor<64x8xf32> {
          %0 = loops.load %x[i1, i0] : tensor<8x64xf32>
          %1 = arith.mulf %0, %0 : f32
          %2 = math.erf %1 : f32
          loops.yield %2 : f32 }

    float16/bfloat16 math is done in f32 (`--lower-aten` widens loads with `arith.extf` and
    narrows the yield with `arith.truncf`), so an inlined chain has f32 -> f16 -> f32 round
    trips between its ops. As Inductor (which rounds only where it stores, unless
    `emulate_precision_casts`), every `extf(truncf(%x : f32) : f16|bf16) : f32` in a loops body
    becomes %x; one fp16 chain keeps one extf per load and one truncf before the yield. Unlike
    Inductor, a truncf marked `{explicit_rounding}` (an explicit `.to(float16)`: --lower-aten
    marks `_to_copy`'s) stays: the program asked for that rounding, eager does it, and a value
    recomputed by two kernels then agrees in both (the GPU contracts `a*b - a*b` into an fma):

        %0 = loops.load %x[i0] : tensor<8xf16>          %0 = loops.load %x[i0] : tensor<8xf16>
        %1 = arith.extf %0 : f16 to f32                 %1 = arith.extf %0 : f16 to f32
        %2 = math.exp %1 : f32                          %2 = math.exp %1 : f32
        %3 = arith.truncf %2 : f32 to f16       ->      %3 = arith.negf %2 : f32
        %4 = arith.extf %3 : f16 to f32                 %4 = arith.truncf %3 : f32 to f16
        %5 = arith.negf %4 : f32                        loops.yield %4 : f16
        %6 = arith.truncf %5 : f32 to f16
        loops.yield %6 : f16

    What stays is what `--realize` stores; the decision is `realization.realize_reason`
    (reductions, externs, graph outputs, extern inputs, reused or read-heavy bodies). Pointwise
    ops without loads or that are a single load (views) are recomputed by every pointwise
    consumer even when they are also stored (an output, an extern's input), as Inductor does.

    Options (Inductor's GPU defaults; give `--realize` the same values):
      reads-threshold=4       a producer with > 1 consumer is kept when it reads more than
                              this many distinct (tensor, index) places: recomputing it would
                              multiply memory traffic (config.realize_reads_threshold)
      acc-reads-threshold=8   a producer is kept, even with one consumer, when it reads more
                              than this (and has > 1 non-constant read), so one kernel does not
                              accumulate unbounded inputs (config.realize_acc_reads_threshold)
      opcount-threshold=30    a producer with more ops than this is kept when reused (rather
                              than recomputed per consumer) or when it has > 1 non-constant
                              read (config.realize_opcount_threshold); any pointwise over
                              max(100, this) ops is kept regardless (Inductor's recursion guard)
      emulate-precision-casts=false
                              true keeps the f32 -> f16/bf16 -> f32 round trips, rounding
                              between fused ops as eager does (config.emulate_precision_casts)
    Fails when: a producer's body holds an op with regions (loops bodies are straight-line).
    Ops other than loops ops are left alone.
    """

    name = "inline"
    ACCEPTS: ClassVar[tuple[str, ...]] = ("loops",)
    emulate_precision_casts: bool = option(False, "keep f16/bf16 round trips eager makes (extf(truncf(x))) inside fused bodies")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_stage(self, op)
        options = self.options
        for f in [o for o in op.walk() if isinstance(o, func.FuncOp)]:
            if f.body.blocks:
                inline_block(f.body.block, options, self.emulate_precision_casts)
