"""Print what every node of a `buffer.graph` reads and writes, as attributes: a print pass.

`analysis.dependencies.read_writes` is the one place that answers "what does this node read and
write" (`MemoryDep`s over canonical loop variables for computed nodes, `StarDep`s for externs
and views); `--fuse`, `--overlap-comm` and `--emit-dot` ask it directly. This pass writes its
answer, exactly, into the IR as `reads` and `writes` attributes, for golden tests and
`--explain`-style inspection (Inductor's `debug.ir_post_fusion` prints the same), like MLIR's
test-print passes. No pass reads the attributes, and the default pipeline does not run it.

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
    """Print each buffer node's reads and writes (MemoryDep, StarDep) as attributes, for tests."""

    name = "deps"
    ACCEPTS: ClassVar[tuple[str, ...]] = ("buffer",)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_stage(self, op)
        for node in op.walk():
            if isinstance(node, buffer.BufferNode) and not isinstance(node, (*buffer.GRAPH_INPUTS, buffer.FusedOp)):
                reads, writes = read_writes(node)
                node.attributes["reads"] = ArrayAttr(reads)
                node.attributes["writes"] = ArrayAttr(writes)
