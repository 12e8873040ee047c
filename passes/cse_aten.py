"""Compute each value of the imported graph once: repeated aten ops with the same operands.

A traced model repeats work that eager mode repeats too. HF's GPT-2 builds its attention
mask once per layer (`where(mask, 0, min)` on the same boolean mask, with its own two `full`
scalars each time), and each of the 12 cuDNN attention calls then needs that mask stored:
12 copies of one [4, 1, 512, 512] tensor a step, which Inductor writes too. As MLIR's `--cse`
does for ops without side effects, the later of two identical ops is replaced by the earlier:

Before:
    %0 = aten.full {size = array<i64>, fill_value = 0.0 : f64, dtype = bf16} : () -> tensor<bf16>
    %1 = aten.full {size = array<i64>, fill_value = -65504.0 : f64, dtype = bf16} : () -> tensor<bf16>
    %2 = aten.where.self %mask, %0, %1 : (...) -> tensor<4x1x512x512xbf16>
    %3 = aten.full {size = array<i64>, fill_value = 0.0 : f64, dtype = bf16} : () -> tensor<bf16>
    %4 = aten.full {size = array<i64>, fill_value = -65504.0 : f64, dtype = bf16} : () -> tensor<bf16>
    %5 = aten.where.self %mask, %3, %4 : (...) -> tensor<4x1x512x512xbf16>
    %a = aten.call "_scaled_dot_product_cudnn_attention.default" (%q, %k, %v, %2) ...
    %b = aten.call "_scaled_dot_product_cudnn_attention.default" (%q2, %k2, %v2, %5) ...
After:
    %0 = aten.full ...
    %1 = aten.full ...
    %2 = aten.where.self %mask, %0, %1 : (...) -> tensor<4x1x512x512xbf16>
    %a = aten.call "_scaled_dot_product_cudnn_attention.default" (%q, %k, %v, %2) ...
    %b = aten.call "_scaled_dot_product_cudnn_attention.default" (%q2, %k2, %v2, %2) ...

Two ops are one value when they have the same name, operands, arguments (properties) and
result types. Only the dedicated ops take part: each is a pure function of its operands
(`aten.call`, where random and mutating ops land, never does), except `empty_like`, whose
contents are undefined. A graph output, or a view of one, is never replaced by an earlier
value: eager returns separate tensors there, and the caller may write one of them. An `aten.call` that is not
`fresh` (it may write its operands: a functionalized graph's `copy_` into an input) ends what
earlier ops are known to compute.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from mlc.dialects.aten import FRESH_RESULTS, AtenOp, CallOp
from mlc.passes.pipeline import remark
from mlc.passes.stages import check_stage

_UNDEFINED_CONTENTS = frozenset({"aten.empty_like"})


def _key(op: AtenOp) -> tuple[object, ...]:
    return (
        op.name,
        tuple(id(v) for v in op.operands),
        tuple(sorted((k, str(v)) for k, v in op.properties.items())),
        tuple(str(r.type) for r in op.results),
    )


def _aliases_an_output(block: Block) -> set[SSAValue]:
    """The values a graph output is, or is a view of (through ops whose results alias)."""
    returned: set[SSAValue] = set()
    pending = [v for op in block.ops if isinstance(op, func.ReturnOp) for v in op.operands]
    while pending:
        value = pending.pop()
        if value in returned:
            continue
        returned.add(value)
        owner = value.owner
        if isinstance(owner, (AtenOp, CallOp)) and not _returns_fresh(owner):
            pending.extend(owner.operands)
    return returned


def _returns_fresh(op: AtenOp | CallOp) -> bool:
    """Its results are new tensors: no operand, nor a view of one (the schema says so, or
    the importer's `fresh` on an aten.call)."""
    return op.SCHEMA.fresh_results if isinstance(op, AtenOp) else FRESH_RESULTS in op.attributes


def _may_write(op: Operation) -> bool:
    return isinstance(op, CallOp) and not _returns_fresh(op)


def eliminate_in_graph(block: Block) -> int:
    """Replace the repeated ops of one graph's block by their first occurrence; how many went."""
    returned = _aliases_an_output(block)
    seen: dict[tuple[object, ...], AtenOp] = {}
    removed = 0
    for op in list(block.ops):
        if _may_write(op):
            seen = {}
            continue
        if not isinstance(op, AtenOp) or not op.results or op.name in _UNDEFINED_CONTENTS:
            continue
        first = seen.setdefault(_key(op), op)
        if first is op or any(r in returned for r in op.results):
            continue
        remark(first, f"computes {op.name} once: a later copy with the same operands and arguments is removed")
        Rewriter.replace_op(op, [], first.results)
        removed += 1
    return removed


@dataclass(frozen=True)
class CseAtenPass(ModulePass):
    """Compute each value of the imported graph once: repeated aten ops with the same operands."""

    name = "cse-aten"
    ACCEPTS: ClassVar[tuple[str, ...]] = ("aten",)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_stage(self, op)
        for graph in op.body.block.ops:
            if isinstance(graph, func.FuncOp):
                eliminate_in_graph(graph.body.block)
