"""Group computed nodes into kernels: Inductor's scheduler (`Scheduler.fuse_nodes`).

Candidates are pairs of nodes that touch a common buffer (each with the next 64 such nodes);
`analysis.fusion.can_fuse` judges each and `fusion_score` orders the legal ones, best first;
they merge greedily, and rounds repeat until nothing changes (at most `max-rounds`). Each group
becomes a `buffer.fused` of its members in program order, and the graph is re-sorted so every
node still follows what it reads (a group runs where its last input is ready). A pointwise
member whose loop straddles the kept/reduced boundary of its reduction group is cut in two
(Inductor's `split_iteration_ranges`); a pointwise member its reader reads in another order (a
column sum of it, a transposed copy) runs over the reader's loops (Inductor's loop reordering
after fusion). What `--convert-to-triton` makes of a group: one kernel,
whose buffers read only inside it are never stored.

Before (seed 001: sum, then sigmoid of it):
    buffer.computed "buf0" #buffer.layout<[3], [1], f32> ranges [3] reduce [9] { ...
      %3 = buffer.reduce sum %2 : f32 -> f32
      buffer.store @buf0[i0], %3 : f32 }
    buffer.computed "buf1" #buffer.layout<[3], [1], f32> ranges [3] {
      %0 = buffer.load @buf0[i0] : f32 ...
      buffer.store @buf1[i0], %5 : f32 }
After (`explain=true` adds the `fusion` log to the graph):
    buffer.fused {
      buffer.computed "buf0" ... ranges [3] reduce [9] { ... }
      buffer.computed "buf1" ... ranges [3] { ... }
    }
    ... attributes {fusion = ["candidate buf0 + buf1: score (0, 12, -1), saves 1.50 us", "fused buf0 + buf1"]}

Options:
  explain=false        true writes every candidate with its score and its predicted time saved
                       in the order considered, every merge and every refusal with its category
                       into the graph's `fusion` attribute (the backend's dump writes it as fusion.txt)
  priority=score       the order legal pairs merge in: `score` (Inductor's `fusion_score`), or
                       `model`, the most time the cost model predicts a fusion saves first
                       (`analysis.cost.fusion_saving`: a launch, the stores and loads of buffers
                       no one else reads, shared reads; XLA's priority fusion), ties by score
  max-fusion-size=64   the most nodes in one group
  max-distance=64      the most program positions between a horizontal pair (farther: "memory")
  max-rounds=10        fusion rounds at most
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import sympy
from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr
from xdsl.ir import Block, Operation, Region
from xdsl.passes import ModulePass

from mlc.analysis import kernel_shape as ks
from mlc.analysis.cost import fusion_saving
from mlc.analysis.fusion import (
    MAX_DISTANCE,
    MAX_FUSION_SIZE,
    FusionGraph,
    FusionLimits,
    Refusal,
    Unit,
    can_fuse,
    fusion_score,
)
from mlc.analysis.target import H100, Target
from mlc.dialects import buffer
from mlc.dialects.buffer_layout import LayoutAttr
from mlc.analysis.flat_index import simplify_index
from mlc.dialects.loops import index_names, reduction_index_names
from mlc.dialects.sym import ExprAttr, expr_str, symbol
from mlc.passes.pipeline import option, remark
from mlc.passes.stages import check_stage

PAIRS_PER_BUFFER = 64  # config.max_fusion_buffer_group_pairwise_attempts


@dataclass
class FusionLog:
    """The explain output: lines in the order decided, each once, with the op each is about."""

    lines: list[str] = field(default_factory=list)
    ops: list[Operation | None] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)

    def add(self, line: str, at: Unit | Operation | None = None) -> None:
        if line not in self.seen:
            self.seen.add(line)
            self.lines.append(line)
            self.ops.append(_op_of(at) if isinstance(at, Unit) else at)

    def summary(self) -> list[str]:
        counts: dict[str, int] = {}
        for line in self.lines:
            if line.startswith("refused") and "[" in line:
                category = line.split("[", 1)[1].split("]", 1)[0]
                counts[category] = counts.get(category, 0) + 1
        return [f"refusals: {category}: {n}" for category, n in sorted(counts.items())]


def _op_of(unit: Unit) -> Operation | None:
    """The op a remark about `unit` points at: its first member (a group's too)."""
    return unit.members[0] if unit.members else unit.op


def candidate_pairs(graph: FusionGraph) -> Iterator[tuple[Unit, Unit]]:
    """Pairs sharing a buffer, each unit with the next PAIRS_PER_BUFFER, in a stable order."""
    by_buffer: dict[str, list[Unit]] = {}
    for u in graph.units:
        if u.op is not None and not isinstance(u.op, (buffer.ExternOp, buffer.ScatterOp)):
            continue  # views are not kernels
        for name in sorted(u.reads | u.writes):
            by_buffer.setdefault(name, []).append(u)
    seen: set[tuple[int, int]] = set()
    for name in sorted(by_buffer):
        units = by_buffer[name]
        for k, a in enumerate(units):
            for b in units[k + 1:k + 1 + PAIRS_PER_BUFFER]:
                key = (id(a), id(b))
                if key not in seen and a is not b and (a.fusable or b.fusable):
                    seen.add(key)
                    yield a, b


def fuse_round(graph: FusionGraph, layouts: dict[str, LayoutAttr], log: FusionLog, limits: FusionLimits,
               saving: Callable[[Unit, Unit], float] | None = None, by_saving: bool = False) -> bool:
    """One round (`fuse_nodes_once`): legal pairs best first; True if anything merged. A pair
    that re-runs a member in another loop order comes after every pair that does not (Inductor
    tries loop reordering in a round of its own after the others): a log_softmax's gradient
    fuses with the row sum it needs before a transposed copy of it could pull it into the
    copy's order. Best is the highest `fusion_score`, or with `by_saving` the most time
    `saving` predicts (the score breaks ties); the log gives each candidate's saving where known."""
    legal = []
    for a, b in candidate_pairs(graph):
        verdict = can_fuse(a, b, graph, limits)
        if isinstance(verdict, Refusal):
            log.add(f"refused {a.name} + {b.name}: [{verdict.category}] {verdict.reason}", b)
        else:
            rerun = verdict.rerun_by(a, b)
            saved = saving(a, b) if saving is not None else 0.0
            legal.append((not rerun, saved if by_saving else 0.0, fusion_score(a, b, layouts, rerun), a.first, b.first,
                          saved, a, b))
    legal.sort(key=lambda t: (t[0], t[1], t[2], -t[3], -t[4]), reverse=True)
    current: dict[Unit, Unit] = {}

    def find(u: Unit) -> Unit:
        while u in current:
            u = current[u]
        return u

    merged = False
    for _, _, score, _, _, saved, a, b in legal:
        a, b = find(a), find(b)
        if a is b:
            continue
        log.add(f"candidate {a.name} + {b.name}: score {score}" + (f", saves {saved * 1e6:.2f} us" if saving else ""), b)
        verdict = can_fuse(a, b, graph, limits)
        if isinstance(verdict, Refusal):
            log.add(f"refused {a.name} + {b.name}: [{verdict.category}] {verdict.reason}", b)
            continue
        fused = graph.merge(a, b, verdict)
        gemm = any(m.is_contraction for m in [*a.members, *b.members])
        log.add(f"fused {a.name} + {b.name}" + (" [gemm epilogue]" if gemm else ""), b)
        for m in verdict.rerun_by(a, b):
            log.add(f"reordered {m.buffer.data}: loops {_loops(m)} -> {_ranges(verdict.reindex[m].ranges)} to run "
                    "in the order its reader reads it", m)
        current[a] = current[b] = fused
        merged = True
    return merged


def predicted_saving(graph: FusionGraph, returned: set[str], layouts: dict[str, LayoutAttr],
                     target: Target = H100) -> Callable[[Unit, Unit], float]:
    """The seconds fusing two of the graph's units saves (`analysis.cost.fusion_saving`), its
    buffers' readers as they are now."""
    readers: dict[str, list[Unit]] = {}
    for u in graph.units:
        for name in u.reads:
            readers.setdefault(name, []).append(u)

    def stored(name: str, group: Sequence[buffer.ComputedOp]) -> bool:
        inside = {id(m) for m in group}
        return name in returned or any(not u.members or id(u.members[0]) not in inside for u in readers.get(name, ()))

    return lambda a, b: fusion_saving(a.members, b.members, stored, layouts, target)


def cut_loop(node: buffer.ComputedOp, d: int, outer: int) -> None:
    """Run loop d of `node` as two loops (outer, size / outer): i_d -> i_d * inner + i_(d+1)."""
    ranges = node.range_exprs
    inner = ranges[d] / outer
    old = [symbol(n) for n in index_names(len(ranges))]
    new = [symbol(n) for n in index_names(len(ranges) + 1)]
    placeholders = [sympy.Dummy(v.name, integer=True) for v in new]
    mapping: dict[sympy.Basic, sympy.Expr] = {v: placeholders[k] for k, v in enumerate(old[:d])}
    mapping[old[d]] = placeholders[d] * inner + placeholders[d + 1]
    mapping |= {v: placeholders[k + 1] for k, v in enumerate(old[d + 1:], start=d + 1)}
    back = dict(zip(placeholders, new))
    sizes = [*ranges[:d], sympy.Integer(outer), inner, *ranges[d + 1:]]
    extents = dict(zip(new, sizes)) | dict(zip(map(symbol, reduction_index_names(len(node.reduction_range_exprs))),
                                               node.reduction_range_exprs))
    for op in node.body.walk():
        for key, value in list(op.properties.items()):
            if isinstance(value, ExprAttr):
                cut = sympy.expand(value.expr.xreplace(mapping).xreplace(back))
                op.properties[key] = ExprAttr(simplify_index(cut, extents))
    node.properties["ranges"] = ArrayAttr([ExprAttr(s) for s in sizes])


def _cut_straddling_loops(unit: Unit, log: FusionLog) -> None:
    shape = ks.kernel_shape(unit.members)
    assert isinstance(shape, ks.KernelShape)
    for m in unit.members:
        if m.is_reduction or not shape.is_reduction or ks.equal(ks.node_numels(m)[0], shape.numel):
            continue
        if ks.split_point(m.range_exprs, shape) is None:
            cut = ks.straddling_loop(m.range_exprs, shape.numel)
            assert cut is not None  # kernel_shape accepted the member
            before = _loops(m)
            cut_loop(m, *cut)
            log.add(f"reordered {m.buffer.data}: loops {before} -> {_loops(m)} to run as "
                    f"{expr_str(shape.numel)} x {expr_str(shape.rnumel)} with its group", m)


def _loops(node: buffer.ComputedOp) -> str:
    return _ranges(node.range_exprs)


def _ranges(ranges: Sequence[sympy.Expr]) -> str:
    return "[" + ", ".join(expr_str(r) for r in ranges) + "]"


def apply_reindex(node: buffer.ComputedOp, how: ks.Reindex) -> None:
    """Run `node` over `how.ranges`: every index rewritten from the old loop variables to the new."""
    new = [symbol(n) for n in index_names(len(how.ranges))]
    placeholders = how.variables
    mapping = {old: expr for old, expr in how.old}
    extents = dict(zip(new, how.ranges))
    rename = dict(zip(placeholders, new))
    for op in node.body.walk():
        for key, value in list(op.properties.items()):
            if isinstance(value, ExprAttr):
                moved = sympy.expand(value.expr.xreplace(mapping).xreplace(rename))
                op.properties[key] = ExprAttr(simplify_index(moved, extents))
    node.properties["ranges"] = ArrayAttr([ExprAttr(s) for s in how.ranges])


def rewrite(graph: buffer.GraphOp, fg: FusionGraph, log: FusionLog) -> None:
    """Rebuild the graph's block: groups as buffer.fused, every node after what it reads."""
    block = graph.body.block
    ops = list(block.ops)
    inputs = [op for op in ops if isinstance(op, buffer.GRAPH_INPUTS)]
    output = block.last_op
    for op in ops:
        op.detach()
    nodes = {}
    for u in fg.units:
        for m in u.members:
            if m.parent is not None:
                m.detach()  # out of a buffer.fused the input already had
        for m, how in u.reindex.items():
            apply_reindex(m, how)
        if len(u.members) > 1:
            _cut_straddling_loops(u, log)
            nodes[u] = buffer.FusedOp(Region(Block(u.members)))
        else:
            nodes[u] = u.members[0] if u.members else u.op
    block.add_ops(inputs)
    block.add_ops(nodes[u] for u in _topological(fg))
    assert output is not None
    block.add_op(output)


def _topological(fg: FusionGraph) -> list[Unit]:
    """Units with every producer first, ties in program order (Kahn's algorithm)."""
    waiting = {u: 0 for u in fg.units}
    for users in fg.users.values():
        for u in users:
            waiting[u] += 1
    rank = {u: k for k, u in enumerate(fg.units)}
    ready = [(u.first, rank[u], u) for u in fg.units if waiting[u] == 0]
    heapq.heapify(ready)
    order: list[Unit] = []
    while ready:
        _, _, u = heapq.heappop(ready)
        order.append(u)
        for user in fg.users[u]:
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(ready, (user.first, rank[user], user))
    assert len(order) == len(fg.units), "fusion left a cycle"
    return order


def _layouts(graph: buffer.GraphOp) -> dict[str, LayoutAttr]:
    out: dict[str, LayoutAttr] = {}
    for node in graph.walk():
        if isinstance(node, (buffer.ComputedOp, buffer.InputOp)):
            out[node.buffer.data] = node.layout
        elif isinstance(node, (buffer.ExternCall, buffer.ViewBase)):
            out |= {n: layout for n in node.defined_names() if (layout := node.layout_of(n)) is not None}
    return out


@dataclass(frozen=True)
class FusePass(ModulePass):
    """Fuse computed nodes into kernels (Inductor's scheduler), explaining each decision on request."""

    name = "fuse"
    ACCEPTS: ClassVar[tuple[str, ...]] = ("buffer",)

    explain: bool = option(False, "write every candidate, score, merge and refusal into the graph's `fusion` attribute")
    max_fusion_size: int = option(MAX_FUSION_SIZE, "the most nodes in one group")
    max_distance: int = option(MAX_DISTANCE, "the most program positions between a horizontal pair")
    max_rounds: int = option(10, "fusion rounds at most")
    priority: str = option("score", "the order legal pairs merge in: score (Inductor's fusion_score) or model "
                                    "(the cost model's predicted time saved; the score breaks ties)")

    def __post_init__(self) -> None:
        if self.max_fusion_size < 1 or self.max_distance < 0 or self.max_rounds < 0:
            raise ValueError("fuse: max-fusion-size must be >= 1, max-distance and max-rounds >= 0")
        if self.priority not in ("score", "model"):
            raise ValueError(f"fuse: priority must be score or model, not {self.priority!r}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_stage(self, op)
        for graph in [g for g in op.body.block.ops if isinstance(g, buffer.GraphOp)]:
            fg = FusionGraph(graph)
            layouts = _layouts(graph)
            log = FusionLog()
            limits = FusionLimits(self.max_fusion_size, self.max_distance)
            returned = set(graph.body.block.last_op.names) if isinstance(graph.body.block.last_op, buffer.OutputOp) else set()
            by_saving = self.priority == "model"
            for _ in range(self.max_rounds):
                saving = predicted_saving(fg, returned, layouts) if by_saving or self.explain else None
                if not fuse_round(fg, layouts, log, limits, saving, by_saving):
                    break
            rewrite(graph, fg, log)
            if self.explain:
                graph.attributes["fusion"] = ArrayAttr([StringAttr(line) for line in [*log.lines, *log.summary()]])
                for line, at in [*zip(log.lines, log.ops), *((line, None) for line in log.summary())]:
                    remark(at or graph, line)
