"""Compute each value of a kernel once: repeated pure ops and repeated loads of one address.

A fused kernel is assembled from its members' bodies, so a persistent softmax loads its row
for the max and again for the output, and takes exp(x - max) twice. Inductor's kernels hold
one value per expression (its `CSE` cache); here a pass removes the copies afterwards, as
MLIR's `--cse` does:

Before:
    %0 = triton.load %in_ptr0[r0_0 + 1024*x0] evict_last : f32
    %1 = triton.reduce max %0 : f32 -> f32
    %2 = arith.subf %0, %1 : f32
    %3 = math.exp %2 : f32
    %4 = triton.reduce sum %3 : f32 -> f32
    %5 = triton.load %in_ptr0[r0_0 + 1024*x0] evict_first : f32
    %6 = arith.subf %5, %1 : f32
    %7 = math.exp %6 : f32
    %8 = arith.divf %7, %4 : f32
After:
    %0 = triton.load %in_ptr0[r0_0 + 1024*x0] evict_first : f32
    %1 = triton.reduce max %0 : f32 -> f32
    %2 = arith.subf %0, %1 : f32
    %3 = math.exp %2 : f32
    %4 = triton.reduce sum %3 : f32 -> f32
    %8 = arith.divf %3, %4 : f32

Two ops are one value when they have the same name, operands, properties and result types,
in the same block (each loop names its own r0 symbols, so nothing is shared across blocks).
Two loads are one when they read the same pointer at the same index under the same masks
with no store between them (a store may write what the second one reads); the load kept takes
the eviction policy of the last one it replaces, which is now the last read of that address.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Attribute, Block, Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.traits import Pure

from mlc.dialects import triton as tt
from mlc.passes.stages import check_stage


def _key(op: Operation) -> tuple[object, ...]:
    properties: dict[str, Attribute] = dict(op.properties)
    if isinstance(op, tt.LoadOp):
        properties.pop("eviction_policy", None)
    return (
        op.name,
        tuple(id(v) for v in op.operands),
        tuple(sorted((k, str(v)) for k, v in properties.items())),
        tuple(str(r.type) for r in op.results),
    )


def _stores(op: Operation) -> bool:
    return isinstance(op, tt.StoreOp) or any(_stores(inner) for r in op.regions for b in r.blocks for inner in b.ops)


def eliminate_in_block(block: Block) -> int:
    """Replace the repeats in `block` (and, separately, in each nested block); how many went."""
    seen: dict[tuple[object, ...], Operation] = {}
    removed = 0
    for op in list(block.ops):
        for region in op.regions:
            for inner in region.blocks:
                removed += eliminate_in_block(inner)
        if _stores(op):  # what a later load reads may have changed
            seen = {k: v for k, v in seen.items() if not isinstance(v, tt.LoadOp)}
            continue
        if op.regions or not op.results or not op.has_trait(Pure()):
            continue
        key = _key(op)
        first = seen.get(key)
        if first is None:
            seen[key] = op
            continue
        if isinstance(op, tt.LoadOp) and op.eviction_policy is not None:
            first.properties["eviction_policy"] = StringAttr(op.eviction_policy.data)
        Rewriter.replace_op(op, [], first.results)
        removed += 1
    return removed


@dataclass(frozen=True)
class CsePass(ModulePass):
    """Compute each value of a kernel once: repeated pure ops and loads of one address."""

    name = "cse"
    ACCEPTS: ClassVar[tuple[str, ...]] = ("triton",)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_stage(self, op)
        for kernel in op.body.block.ops:
            if isinstance(kernel, tt.KernelOp):
                eliminate_in_block(kernel.body.block)
