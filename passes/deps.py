"""Annotate every node of a `buffer.graph` with what it reads and writes (Inductor's ReadWrites).

The deps are `analysis.dependencies.read_writes`: `MemoryDep`s over canonical loop variables
for computed nodes, `StarDep`s for externs and views. They are the facts `--fuse` decides on;
this pass writes them into the IR as `reads` and `writes` attributes so that they can be read
and golden-tested (Inductor's `debug.ir_post_fusion` prints the same).

Before (seed 002: a convolution, then its bias added over [10, 88, 78]):
    buffer.computed "buf1" #buffer.layout<[10, 88, 78], [6864, 78, 1], f32> ranges [10, 88, 78] {
      %0 = buffer.load @buf0[i2 + 78*i1 + 6864*i0] : f32
      %1 = buffer.load @primals_2[i0] : f32
      %2 = arith.addf %0, %1 : f32
      buffer.store @buf1[i2 + 78*i1 + 6864*i0], %2 : f32 }
After:
    buffer.computed "buf1" ... { ... } attributes {
      reads = [#buffer.memory<"buf0", c0, {c0: 68640}>,
               #buffer.memory<"primals_2", c0, {c0: 10}>],
      writes = [#buffer.memory<"buf1", c0, {c0: 68640}>]}
    buffer.extern "buf0" = "convolution.default" {args = [@primals_3, @primals_1, ...]} ...
      attributes {reads = [#buffer.star<"primals_3">, #buffer.star<"primals_1">],
                  writes = [#buffer.star<"buf0">]}

The deps of a node are recomputed from its body each time the pass runs (a stale annotation is
replaced). Nodes inside `buffer.fused` get their own deps; the group is not annotated.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, ModuleOp
from xdsl.passes import ModulePass

from mlc.analysis.dependencies import read_writes
from mlc.dialects import buffer
from mlc.passes.stages import check_stage


class DepsPass(ModulePass):
    """Annotate each buffer node with its reads and writes (MemoryDep, StarDep)."""

    name = "deps"
    ACCEPTS: ClassVar[tuple[str, ...]] = ("buffer",)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_stage(self, op)
        for node in op.walk():
            if isinstance(node, buffer.BufferNode) and not isinstance(node, (*buffer.GRAPH_INPUTS, buffer.FusedOp)):
                reads, writes = read_writes(node)
                node.attributes["reads"] = ArrayAttr(reads)
                node.attributes["writes"] = ArrayAttr(writes)
