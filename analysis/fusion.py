"""Fusion legality and scoring: Inductor's `Scheduler.can_fuse` and `score_fusion`, as data.

    graph = FusionGraph(buffer_graph)          # the scheduler's nodes (units) and their users
    verdict = can_fuse(a, b, graph)            # Fusable(reindex), or a Refusal(category, reason)
    key = fusion_score(a, b, layouts)          # larger fuses first

A `Unit` is one `buffer.computed` or a group of them that will be one kernel; externs, views and
inputs are units that never fuse. `can_fuse` checks, in order (each refusal names its category):

  extern            one side is an extern call (a library kernel: nothing fuses into it)
  scatter           one side stores at loaded positions: a buffer.scatter runs alone (its
                    readers need every store done), except as a contraction's epilogue, the
                    only scatter of the kernel, where it adds each lane's value of the
                    accumulator tile into its base (a mixture of experts' weighted
                    scatter-add of the expert outputs into the token rows)
  empty             one side computes no elements (a size-0 dim): allocated, never launched
  too large         the group would hold more than `max_fusion_size` nodes
  different numel   the members cannot share one iteration space (`kernel_shape`); also cat
  reduction sizes   two reductions over different (numel, rnumel)
  gemm              a contraction (`buffer.dot`) takes pointwise (or scatter) epilogues over
                    its [M, N] only: not a second contraction, a reduction, or a node its K
                    loop reads (prologues are folded in by `--inline`, not fused)
  gemm epilogue     an epilogue reads the contraction's result at an element its lane does
                    not hold (another output tile)
  cycle             a node outside the pair depends on one side and feeds the other (fusing
                    would need it inside the kernel); also a path through a view
  broadcast / different offset / different loop order
                    a member reads a buffer the other side writes, but not the element the
                    writing lane holds (`kernel_shape.access_mismatch`); where a pointwise
                    writer could run in its reader's loop order instead (the read visits each
                    element once), it does (`kernel_shape.reindex_to_reader`: Inductor's loop
                    reordering after fusion) and the pair fuses; readers are fixed before
                    their writers, so a chain of pointwise nodes re-runs in a reduction's order
  indirect          a member reads a buffer the other side writes at positions loaded from
                    memory (a gather of a computed tensor): any lane may need any element
  no shared data    the pair reads and writes nothing in common at the same index
  memory            a horizontal pair more than 64 nodes apart (Inductor's
                    `are_long_distant_nodes`: fusing keeps buffers alive across the distance)

`fusion_score` is `score_fusion`'s key: (both or neither a reduction, bytes of the deps both
touch at the same index, -distance). The peak-memory veto (`can_fusion_increase_peak_memory`)
is not modelled yet.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import sympy
from xdsl.ir import Attribute

from mlc.analysis import kernel_shape as ks
from mlc.analysis.cost import dep_bytes
from mlc.analysis.dependencies import dep_buffer, read_writes
from mlc.dialects import buffer
from mlc.dialects.buffer_layout import LayoutAttr
from mlc.dialects.sym import equal, expr_str

MAX_FUSION_SIZE = 64  # config.max_fusion_size
MAX_DISTANCE = 64  # choices.py: are_long_distant_nodes


@dataclass(frozen=True)
class FusionLimits:
    """The thresholds of `can_fuse` (options of the fuse pass)."""

    max_size: int = MAX_FUSION_SIZE  # nodes in one group
    max_distance: int = MAX_DISTANCE  # program positions between a horizontal pair


@dataclass(eq=False)
class Unit:
    """A node of the scheduler: computed (or scatter) members (empty for an extern, view or input)."""

    first: int  # program position of the first member (Inductor's min_order)
    last: int
    op: buffer.BufferNode | None  # the node itself when it is not computed
    members: list[buffer.BodyNode] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)  # each member's program position
    reads: set[str] = field(default_factory=set)
    writes: set[str] = field(default_factory=set)
    deps: set[Attribute] = field(default_factory=set)  # MemoryDeps read or written
    reindex: dict[buffer.ComputedOp, ks.Reindex] = field(default_factory=dict)  # members to re-run (`Fusable`)

    @property
    def fusable(self) -> bool:
        return bool(self.members)

    @property
    def scatters(self) -> list[buffer.ScatterOp]:
        return [m for m in self.members if isinstance(m, buffer.ScatterOp)]

    @property
    def is_reduction(self) -> bool:
        return any(m.is_reduction for m in self.members)

    @property
    def is_empty(self) -> bool:
        """Every member computes zero elements (a size-0 dim): its buffers are allocated and
        nothing runs, so there is no kernel to share."""
        return bool(self.members) and all(m.layout.is_empty for m in self.members)

    @property
    def name(self) -> str:
        if not self.members:
            assert self.op is not None
            return next(iter(self.op.defined_names()), self.op.name)
        return "+".join(m.buffer.data for m in self.members)


@dataclass(frozen=True)
class Refusal:
    category: str
    reason: str


def _unit(pos: int, node: buffer.BufferNode) -> Unit:
    reads, writes = read_writes(node)
    members = [node] if isinstance(node, buffer.BodyNode) else []
    if isinstance(node, buffer.FusedOp):
        members = [m for m in node.members() if isinstance(m, buffer.BodyNode)]
    return Unit(pos, pos, None if members else node, members, [pos] * len(members),
                {dep_buffer(d) for d in reads}, {dep_buffer(d) for d in writes},
                {d for d in [*reads, *writes] if isinstance(d, buffer.MemoryDepAttr)})


class FusionGraph:
    """The units of one buffer.graph and who reads whom; `merge` fuses two of them."""

    def __init__(self, graph: buffer.GraphOp):
        nodes = [(pos, n) for pos, n in enumerate(graph.nodes()) if not isinstance(n, buffer.GRAPH_INPUTS)]
        self.units = [_unit(pos, n) for pos, n in nodes]
        producer = {name: u for u in self.units for name in u.writes}
        self.users: dict[Unit, set[Unit]] = {u: set() for u in self.units}
        for u in self.units:
            for name in u.reads:
                if (p := producer.get(name)) is not None and p is not u:
                    self.users[p].add(u)

    def depends(self, later: Unit, earlier: Unit) -> bool:
        """`later` reads something `earlier` writes."""
        return later in self.users[earlier]

    def node_between(self, a: Unit, b: Unit) -> Unit | None:
        """A unit outside the pair on a dependency path from one to the other (fusing them would
        close a cycle through it: Inductor's `will_fusion_create_cycle`). Users are visited in
        program order, so that the unit named is the same in every run."""
        for start, goal in ((a, b), (b, a)):
            seen: set[Unit] = set()
            frontier = [(u, u) for u in self._users_in_order(start) if u is not goal]
            while frontier:
                unit, via = frontier.pop()
                if unit in seen:
                    continue
                seen.add(unit)
                if goal in self.users[unit]:
                    return via
                frontier += [(u, via) for u in self._users_in_order(unit) if u is not goal]
        return None

    def _users_in_order(self, unit: Unit) -> list[Unit]:
        return sorted(self.users[unit], key=lambda u: u.first)  # units hash by identity

    def merge(self, a: Unit, b: Unit, how: Fusable) -> Unit:
        """Replace `a` and `b` by their fused unit, members in program order."""
        order = sorted(zip([*a.positions, *b.positions], [*a.members, *b.members]), key=lambda pm: pm[0])
        writes = a.writes | b.writes
        fused = Unit(min(a.first, b.first), max(a.last, b.last), None, [m for _, m in order], [p for p, _ in order],
                     (a.reads | b.reads) - writes, writes, a.deps | b.deps, how.reindex)
        self.users[fused] = (self.users.pop(a) | self.users.pop(b)) - {a, b}
        for users in self.users.values():
            if users & {a, b}:
                users -= {a, b}
                users.add(fused)
        self.units = sorted([u for u in self.units if u is not a and u is not b] + [fused], key=lambda u: u.first)
        return fused


# ---------------------------------------------------------------------------------------------
# Legality


@dataclass(frozen=True)
class Fusable:
    """A legal pair, with the pointwise members that must run over a reduction's loops to share
    its kernel (Inductor's loop reordering after fusion, done where Inductor refuses)."""

    reindex: dict[buffer.ComputedOp, ks.Reindex]

    def rerun_by(self, a: Unit, b: Unit) -> list[buffer.ComputedOp]:
        """The members that fusing `a` and `b` re-runs (not already re-run in either)."""
        return [m for m in self.reindex if m not in a.reindex and m not in b.reindex]


def can_fuse(a: Unit, b: Unit, graph: FusionGraph, limits: FusionLimits = FusionLimits()) -> Refusal | Fusable:
    """Whether `a` and `b` may be one kernel (see the module docstring), and how; else why not."""
    if not (a.fusable and b.fusable):
        alone = a if not a.fusable else b
        return Refusal("extern", f"{alone.name} is a {alone.op.name if alone.op else 'node'}, not a kernel")
    if (refusal := _scatter_refusal(a, b)) is not None:
        return refusal
    if a.is_empty or b.is_empty:
        return Refusal("empty", f"{(a if a.is_empty else b).name} computes no elements: no kernel runs it")
    if len(a.members) + len(b.members) > limits.max_size:
        return Refusal("too large", f"{len(a.members)} + {len(b.members)} nodes > max_fusion_size {limits.max_size}")
    shape = ks.kernel_shape([*a.members, *b.members])
    if isinstance(shape, ks.Mismatch):
        return Refusal(shape.category, shape.reason)
    if (refusal := _contraction_refusal([*a.members, *b.members], shape)) is not None:
        return refusal
    if (between := graph.node_between(a, b)) is not None:
        return Refusal("cycle", f"{between.name} depends on one of {a.name}, {b.name} and feeds the other: "
                       "fusing would need it inside the kernel")
    placed = _placement(a, b, shape)
    if isinstance(placed, Refusal):
        return placed
    vertical = graph.depends(b, a) or graph.depends(a, b)
    if not vertical and shared_bytes(a, b, {}) == 0:
        return Refusal("no shared data", f"{a.name} and {b.name} touch no buffer at the same index")
    if not vertical and distance(a, b) > limits.max_distance:
        return Refusal("memory", f"{a.name} and {b.name} are more than {limits.max_distance} nodes apart: fusing "
                       "keeps their buffers alive in between")
    return Fusable(placed)


def _scatter_refusal(a: Unit, b: Unit) -> Refusal | None:
    """Why a pair with a scatter cannot be one kernel: only a contraction's kernel takes one, as
    an epilogue of its accumulator tile (`_contraction_refusal` checks the rest), and no member
    may read what the scatter adds into: its stores land in any lane."""
    scatters = [*a.scatters, *b.scatters]
    if not scatters:
        return None
    scatter, members = scatters[0], [*a.members, *b.members]
    if len(scatters) > 1 or not any(m.is_contraction for m in members):
        return Refusal("scatter", f"{scatter.buffer.data} stores at loaded positions: it runs as its own kernel, "
                       "or as a GEMM's epilogue")
    name, base = scatter.buffer.data, scatter.base_name
    for m in members:
        if m is scatter:
            continue
        if base in m.defined_names():
            return Refusal("scatter", f"{m.buffer.data} writes {base}, which {name} adds into: it is complete "
                           "before that kernel starts")
        if read := sorted({name, base} & set(m.referenced_names())):
            return Refusal("scatter", f"{m.buffer.data} reads {read[0]}, where {name} adds from any lane")
    return None


def _contraction_refusal(members: Sequence[buffer.BodyNode], shape: ks.KernelShape) -> Refusal | None:
    """Why a group holding a contraction cannot be its kernel: the GEMM's tiles run its
    epilogues, pointwise over [M, N], reading its result where each lane holds it."""
    dots = [m for m in members if m.is_contraction]
    if not dots:
        return None
    if len(dots) > 1:
        return Refusal("gemm", f"{dots[0].buffer.data} and {dots[1].buffer.data} are both contractions: one GEMM per kernel")
    dot = dots[0]
    read_by_dot = {load.buffer_name for load in _loads(dot)}
    for m in members:
        if m is dot:
            continue
        if m.is_reduction:
            return Refusal("gemm", f"{m.buffer.data} reduces: a contraction's kernel takes pointwise epilogues only")
        if m.buffer.data in read_by_dot:
            return Refusal("gemm", f"{dot.buffer.data} reads {m.buffer.data} in its K loop: prologues are not fused "
                           "(--inline folds one that is cheap to recompute)")
        if not equal(ks.node_numels(m)[0], shape.numel):
            return Refusal("gemm", f"{m.buffer.data} runs {expr_str(ks.node_numels(m)[0])} elements, not the "
                           f"contraction's {expr_str(shape.numel)} outputs")
        where, written = ks.coordinates(m, shape), ks.coordinates(dot, shape)
        for load in _loads(m):
            if load.buffer_name != dot.buffer.data or where is None or written is None:
                continue
            read = ks.in_kernel(load.index.expr, where, shape)
            if ks.access_mismatch(read, ks.in_kernel(dot.store_op().index.expr, written, shape)) is not None:
                return Refusal("gemm epilogue", f"{m.buffer.data} reads {dot.buffer.data} at {sympy.sstr(read)}: "
                               "another output tile than its lane's")
    return None


def distance(a: Unit, b: Unit) -> int:
    return max(abs(a.first - b.last), abs(b.first - a.last))


@dataclass(frozen=True)
class _Problem:
    category: str
    reason: str
    fix: tuple[buffer.ComputedOp, buffer.ComputedOp, sympy.Expr] | None  # (writer, reader, index)


def _placement(a: Unit, b: Unit, shape: ks.KernelShape) -> Refusal | dict[buffer.ComputedOp, ks.Reindex]:
    """Every member's lanes in the kernel, re-running pointwise members over a reduction's loops
    where that makes their values land where the reduction reads them."""
    reindex = {**a.reindex, **b.reindex}
    while (problem := _first_problem(a, b, shape, reindex)) is not None:
        fix = None
        if problem.fix and problem.fix[0] not in reindex:
            writer, reader, index = problem.fix
            fix = ks.reindex_to_reader(writer, reader, index, shape, reindex.get(reader))
        if fix is None:
            return Refusal(problem.category, problem.reason)
        reindex[problem.fix[0]] = fix  # type: ignore[index]
    return reindex


def _lanes(m: buffer.ComputedOp, shape: ks.KernelShape, reindex: dict[buffer.ComputedOp, ks.Reindex]
           ) -> dict[sympy.Basic, sympy.Expr] | None:
    return reindex[m].coordinates(shape) if m in reindex else ks.coordinates(m, shape)


def _loads(m: buffer.ComputedOp) -> list[buffer.LoadOp]:
    return [op for op in m.body.walk() if isinstance(op, buffer.LoadOp)]


def _first_problem(a: Unit, b: Unit, shape: ks.KernelShape, reindex: dict[buffer.ComputedOp, ks.Reindex]
                   ) -> _Problem | None:
    """A member whose loops do not fit the kernel, or a read of a buffer the other side writes
    that does not find the value in the reading lane."""
    members = [*a.members, *b.members]
    lanes = {m: _lanes(m, shape, reindex) for m in members}
    for m, where in reversed(lanes.items()):  # readers first: a writer re-runs in its reader's new order
        if where is None:
            readers = [(r, load) for r in members if lanes[r] is not None for load in _loads(r)
                       if load.buffer_name == m.buffer.data]
            fix = (m, readers[0][0], readers[0][1].index.expr) if readers else None
            loops = ", ".join(str(r) for r in m.range_exprs)
            return _Problem("different loop order", f"{m.buffer.data}'s loops [{loops}] do not split into the "
                            f"kernel's {shape.numel} x {shape.rnumel}", fix)
    stores = {m.buffer.data: m for m in members}  # within a side too: a re-run member moves
    for m in members:
        for load in _loads(m):
            if (w := stores.get(load.buffer_name)) is None:
                continue
            if load.indirect:
                return _Problem("indirect", f"{m.buffer.data} reads {load.buffer_name} at positions loaded from memory "
                                f"({expr_str(load.index.expr)}): any lane may need any element", None)
            read = ks.in_kernel(load.index.expr, lanes[m], shape)  # type: ignore[arg-type]
            write = ks.in_kernel(w.store_op().index.expr, lanes[w], shape)  # type: ignore[arg-type]
            if (kind := ks.access_mismatch(read, write)) is None:
                continue
            if _ignores_a_loop(m, load.index.expr):
                kind = "broadcast"
            fix = (w, m, load.index.expr)
            return _Problem(kind, f"{m.buffer.data} reads {load.buffer_name} at {sympy.sstr(read)} where "
                            f"{w.buffer.data} writes {sympy.sstr(write)} (X, R: the kernel's flat lanes)", fix)
    return None


def _ignores_a_loop(node: buffer.ComputedOp, index: sympy.Expr) -> bool:
    """The index does not move along some loop of the node: many lanes read one element."""
    used = {s.name for s in index.free_symbols}
    sizes = [*node.range_exprs, *node.reduction_range_exprs]
    names = sorted(node.index_symbols(), key=lambda n: (n.startswith("r"), n))
    return any(size != 1 and name not in used for name, size in zip(names, sizes))


# ---------------------------------------------------------------------------------------------
# Scores


def shared_bytes(a: Unit, b: Unit, layouts: dict[str, LayoutAttr]) -> int:
    """Inductor's `score_fusion_memory`: bytes of the deps both touch, index and sizes equal."""
    return sum(dep_bytes(d, layouts) for d in a.deps & b.deps)  # type: ignore[arg-type]


def fusion_score(a: Unit, b: Unit, layouts: dict[str, LayoutAttr],
                 rerun: Sequence[buffer.ComputedOp] = ()) -> tuple[int, int, int]:
    """`score_fusion`'s order: (same node type and memory shared, bytes shared, -distance). A
    member the fusion re-runs in its reader's order (`Fusable.rerun_by`) shares the bytes it
    writes: re-run, its write meets the read (Inductor scores a pair after reordering its loops)."""
    memory = shared_bytes(a, b, layouts)
    memory += sum(dep_bytes(d, layouts) for m in rerun for d in read_writes(m)[1] if isinstance(d, buffer.MemoryDepAttr))
    same_type = int(a.is_reduction == b.is_reduction and memory > 0)
    return same_type, memory, -distance(a, b)
