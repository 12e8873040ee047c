"""Overlap communication with computation: each collective starts as early and is waited for as
late as its dependencies allow (Inductor's `reorder_compute_and_comm_for_overlap`, in spirit).

Before (the order Dynamo traced: the all-reduce is waited for right after it starts):
    buffer.computed "buf0" ... { relu(x) }
    buffer.extern "buf1" = "_c10d_functional::all_reduce.default" {args = [@buf0, "sum", "0"]} : ...
    buffer.extern "buf2" = "_c10d_functional::wait_tensor.default" {args = [@buf1]} : ...
    buffer.computed "buf3" ... { sigmoid(x) }                 // reads neither buf1 nor buf2
    buffer.computed "buf4" ... { buf2 * buf3 }
After:
    buffer.computed "buf0" ... { relu(x) }
    buffer.extern "buf1" = "_c10d_functional::all_reduce.default" ...
    buffer.computed "buf3" ... { sigmoid(x) }                 // runs while buf1 is in flight
    buffer.extern "buf2" = "_c10d_functional::wait_tensor.default" ...
    buffer.computed "buf4" ... { buf2 * buf3 }

The rules (the dependencies are `analysis.dependencies.read_writes`; which calls start, wait for
or block on a collective is `analysis.collectives`):
  * a start moves up past every node until one writes a buffer it reads, or is another start or
    a blocking collective: collectives are issued in program order, the same order on every rank;
  * a wait moves down past every node until one reads the buffer it defines or the buffer it
    waits for (the same storage), or to the end of the graph;
  * every other node keeps its place relative to the others.
Moving only past independent nodes keeps every dependency, so the result computes what the
input did; starts first, then waits, each in program order.

Where it runs: on the buffer graph after `--fuse` and before `--convert-to-triton`. After fuse,
because its groups are the kernels that will run (fuse re-sorts the graph, which would undo a
move made before it); before convert-to-triton, because the host wrapper runs the nodes in
graph order and places allocations and frees from that order.

Options:
  enabled=true     false leaves the graph as it is (the collectives then run where traced)
  explain=false    true says, as a remark at each collective, how far it moved and what stopped
                   it, and which nodes run while it is in flight
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from mlc.analysis.collectives import node_comm_kind, short_name
from mlc.analysis.dependencies import dep_buffer, read_writes
from mlc.dialects import buffer
from mlc.passes.pipeline import option, remark
from mlc.passes.stages import check_stage


@dataclass(eq=False)
class Node:
    """A graph node with the buffer names it reads and writes."""

    op: buffer.BufferNode
    reads: set[str]
    writes: set[str]
    kind: str | None  # 'start', 'wait', 'blocking' or None (analysis.collectives)

    @property
    def name(self) -> str:
        return _label(self.op)


def _node(op: buffer.BufferNode) -> Node:
    reads, writes = read_writes(op)
    return Node(op, {dep_buffer(d) for d in reads}, {dep_buffer(d) for d in writes}, node_comm_kind(op))


def _label(op: buffer.BufferNode) -> str:
    """`buf3`, `buf4+buf5` for a fused group (as fuse names it), the op name for a call that
    defines no buffer."""
    return "+".join(op.defined_names()) or op.name


def _blocks_start(start: Node, earlier: Node) -> str | None:
    """Why `start` cannot move up past `earlier`, or None when it can."""
    written = sorted(earlier.writes & start.reads)
    if written:
        return f"it reads {', '.join(written)}"
    if earlier.kind in ("start", "blocking"):
        return "collectives start in program order"
    return None


def _blocks_wait(wait: Node, later: Node) -> str | None:
    """Why `wait` cannot move down past `later`, or None when it can."""
    read = sorted(later.reads & (wait.writes | wait.reads))
    return f"it reads {', '.join(read)}" if read else None


Move = tuple[int, str]  # positions moved, where it stopped and why


def hoist_starts(nodes: list[Node]) -> dict[Node, Move]:
    """Move each start up (in place), in program order; each start's Move."""
    moves: dict[Node, Move] = {}
    for node in [n for n in nodes if n.kind == "start"]:
        i = j = nodes.index(node)
        why = None
        while j > 0 and (why := _blocks_start(node, nodes[j - 1])) is None:
            j -= 1
        nodes.insert(j, nodes.pop(i))
        where = "first in the graph (it reads only inputs)" if why is None else f"right after {nodes[j - 1].name} ({why})"
        moves[node] = (i - j, where)
    return moves


def sink_waits(nodes: list[Node]) -> dict[Node, Move]:
    """Move each wait down (in place), in program order (waits stopping at one node keep their
    order); each wait's Move."""
    moves: dict[Node, Move] = {}
    for node in [n for n in nodes if n.kind == "wait"]:
        i = j = nodes.index(node)
        why = None
        while j + 1 < len(nodes) and (why := _blocks_wait(node, nodes[j + 1])) is None:
            j += 1
        nodes.insert(j, nodes.pop(i))
        where = "last in the graph (only the output reads it)" if why is None else f"right before {nodes[j + 1].name} ({why})"
        moves[node] = (j - i, where)
    return moves


def _moved(what: str, move: Move, direction: str) -> str:
    n, where = move
    return f"{what} stays: {where}" if n == 0 else f"{what} moves {n} node{'s' if n > 1 else ''} {direction}, {where}"


def _explain(nodes: list[Node], starts: dict[Node, Move], waits: dict[Node, Move]) -> None:
    """Remarks at each start and wait: how far it moved, what stopped it, what overlaps it."""
    for k, node in enumerate(nodes):
        if node.kind == "start":
            what = f"{short_name(node.op)} {node.name}"
            remark(node.op, _moved(what, starts[node], "earlier"))
            wait = next((w for w in nodes[k + 1:] if w.kind == "wait" and w.reads & node.writes), None)
            if wait is not None:
                between = [n.name for n in nodes[k + 1:nodes.index(wait)]]
                remark(node.op, f"{what} is in flight over {', '.join(between) if between else 'no node'}")
        elif node.kind == "wait":
            remark(node.op, _moved(f"wait {node.name} for {', '.join(sorted(node.reads))}", waits[node], "later"))


def reorder(graph: buffer.GraphOp, explain: bool) -> None:
    """Reorder one graph's nodes (see the module docstring)."""
    block = graph.body.block
    ops = [op for op in block.ops if isinstance(op, buffer.BufferNode) and not isinstance(op, buffer.GRAPH_INPUTS)]
    if not any(node_comm_kind(op) in ("start", "wait") for op in ops):
        return  # nothing to move: skip the dependency analysis
    nodes = [_node(op) for op in ops]
    starts = hoist_starts(nodes)
    waits = sink_waits(nodes)
    output = block.last_op
    assert output is not None
    for node in nodes:
        node.op.detach()
        block.insert_op_before(node.op, output)
    if explain:
        _explain(nodes, starts, waits)


@dataclass(frozen=True)
class OverlapCommPass(ModulePass):
    """Start each collective as early and wait for it as late as its dependencies allow."""

    name = "overlap-comm"
    ACCEPTS: ClassVar[tuple[str, ...]] = ("buffer",)

    enabled: bool = option(True, "false leaves every collective where it was traced")
    explain: bool = option(False, "say at each collective how far it moved, what stopped it, what overlaps it")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_stage(self, op)
        if not self.enabled:
            return
        for graph in [g for g in op.body.block.ops if isinstance(g, buffer.GraphOp)]:
            reorder(graph, self.explain)
