"""Fold unrealized producers into their consumers (Inductor's loaders of unrealized buffers)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import sympy
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    ArrayAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from mlc.dialects.loops import IndexOp, LoadOp, LoopsBodyOp, YieldOp, index_names
from mlc.dialects.sym import symbol
from mlc.passes.realization import RealizeOptions, consumers, should_inline


def _zero(typ: Attribute) -> arith.ConstantOp:
    """The value a masked-off load reads: 0 of the element type."""
    if isinstance(typ, IntegerType):
        return arith.ConstantOp(IntegerAttr(0, typ))
    return arith.ConstantOp(FloatAttr(0.0, typ))  # type: ignore[arg-type]


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
            # xreplace substitutes all variables at once, so the consumer's own i0, i1, ...
            # appearing in `subst`'s values are never substituted a second time.
            indices = [e.xreplace(subst) for e in op.index_exprs]
            mask = mapping[op.mask] if op.mask is not None else None
            if load.mask is not None:
                if mask is None:
                    mask = load.mask
                else:
                    both = arith.AndIOp(mask, load.mask)
                    Rewriter.insert_op(both, at)
                    mask = both.result
            new: Operation = LoadOp(op.source, indices, mask)
        elif isinstance(op, IndexOp):
            new = IndexOp(op.expr.expr.xreplace(subst), op.result.type)
        elif op.regions:
            # Loads nested in a region would escape the re-indexing below.
            raise PassFailedException(f"{op.name} with regions in a loops body")
        else:
            new = op.clone(value_mapper=mapping)
        Rewriter.insert_op(new, at)
        mapping.update(zip(op.results, new.results))
    raise AssertionError("loops body without loops.yield")  # the verifier rules this out


def _inline_load(load: LoadOp, producer: LoopsBodyOp) -> None:
    """Replace one load of `producer` by its body; a masked load selects 0 where masked off."""
    value = _copy_body_before(load, producer, _substitution(producer, load.index_exprs))
    if load.mask is not None:
        # Loads in the copy read 0 where masked, but the math on them need not give 0.
        zero = _zero(value.type)
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


def erase_dead(block: Block) -> None:
    """Erase pointwise/reduction ops nothing reads any more, consumers before producers."""
    for op in reversed(list(block.ops)):
        if isinstance(op, LoopsBodyOp) and not any(r.uses for r in op.results):
            Rewriter.erase_op(op)


def inline_block(block: Block, options: RealizeOptions) -> None:
    """Decide each op in program order (its producers are final by then) and inline it."""
    uses = consumers(block)  # before any inlining: Inductor counts an FX node's users
    inlinable: set[Operation] = set()
    for op in list(block.ops):
        if isinstance(op, LoopsBodyOp):
            inline_producers(op, inlinable)
            if should_inline(op, uses[op], options):
                inlinable.add(op)
    erase_dead(block)


@dataclass(frozen=True)
class InlinePass(ModulePass):
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
    Fails when: a producer's body holds an op with regions (loops bodies are straight-line).
    Ops other than loops ops are left alone.
    """

    name = "inline"
    reads_threshold: int = 4
    acc_reads_threshold: int = 8
    opcount_threshold: int = 30

    def __post_init__(self) -> None:
        self.options  # validates the thresholds (ValueError)

    @property
    def options(self) -> RealizeOptions:
        return RealizeOptions(self.reads_threshold, self.acc_reads_threshold, self.opcount_threshold)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        options = self.options
        for f in [o for o in op.walk() if isinstance(o, func.FuncOp)]:
            if f.body.blocks:
                inline_block(f.body.block, options)
