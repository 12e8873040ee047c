"""What each node of a `buffer.graph` reads and writes: Inductor's `dependencies.py`.

    reads, writes = read_writes(node)        # lists of #buffer.memory / star / weak attributes
    users = buffer_users(graph)              # buffer name -> the nodes that read it

This module is the one place that answers "what does this node read and write": fuse (through
`analysis/fusion.py`), overlap-comm and emit-dot ask it, from the IR as it is; nothing is cached
in the IR. `--deps` prints its answer as `reads` / `writes` attributes, for tests only.

A `buffer.computed` reads and writes `MemoryDep`s: the buffer, the flat index of one load (or of
the store) and the loop sizes it runs over. The index is *canonical*, so that two nodes touching
the same elements print the same dep whatever their loops are called: the node's loop variables
(`i0, i1, ...`, then the reduction's `r0_0, ...`) are simplified against that one index the way
Inductor's `_simplify_loops` does (size-1 loops dropped; neighbours merged where the index and
the contiguous order both step by the inner size), then renamed `c0, c1, ...`:

    load @buf0[i2 + 78*i1 + 6864*i0] over [10, 88, 78]   ->  #buffer.memory<"buf0", c0, {c0: 68640}>
    load @bias[i0] over [10, 88, 78] (a broadcast)        ->  #buffer.memory<"bias", c0, {c0: 10}>

The bias read steps by 1 along the first loop and not at all along the others, so the first
cannot merge with them; the merged [6864] is then dropped, as trailing loops the index does
not use are (Inductor's `drop_unused_symbols`; seed 002, from an older Inductor, still shows
`size=(10, 6864)`): a reduction's write and its reader's read are then the same dep.

A `buffer.extern` reads every buffer it is passed as a `StarDep` (the whole buffer, at indices
not known statically) and writes its results as `StarDep`s; a `buffer.view` reads its source
whole; a `buffer.scatter` reads its base whole and writes its buffer whole (at loaded
positions), besides the MemoryDeps of its loads. A load at loaded positions keeps them in its
index (`ind0 + 64*c0`), as Inductor's indirect MemoryDeps do. Mutation is not in the IR (an
extern that mutates an input writes a new buffer, a scatter writes a copy made for it alone),
so no `WeakDep` arises yet. A collective is two externs, a start and a wait: these StarDeps are
all that orders it (`analysis/collectives.py`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence

import sympy
from xdsl.ir import Attribute

from mlc.analysis.flat_index import loop_strides
from mlc.dialects import buffer
from mlc.dialects.loops import index_names, reduction_index_names
from mlc.dialects.sym import equal, symbol

CANONICAL_PREFIX = "c"


def simplify_loops(sizes: Sequence[sympy.Expr], strides: Sequence[Sequence[sympy.Expr]]) -> list[list[int]]:
    """Groups of consecutive loop positions that can run as one loop, outermost first.

    `strides[k][d]` is how far access k's index moves per step of loop d. Size-1 loops are
    dropped; loop d merges into its inner neighbour e when every access moves by
    strides[e] * sizes[e] along d (Inductor's `_simplify_loops`)."""
    groups: list[list[int]] = []
    for d in reversed(range(len(sizes))):
        if sizes[d] == 1:
            continue
        if groups:
            inner = groups[-1]
            span = sympy.Mul(*(sizes[e] for e in inner))
            if all(equal(s[d], s[inner[-1]] * span) for s in strides):
                inner.insert(0, d)
                continue
        groups.append([d])
    return list(reversed(groups))


def loop_groups(sizes: Sequence[sympy.Expr], variables: Sequence[sympy.Symbol],
                indices: Sequence[sympy.Expr]) -> list[list[int]]:
    """`simplify_loops` for loops walked by every expression of `indices` and by the contiguous
    order. A loop an index uses other than affinely (a view's FloorDiv) merges with nothing."""
    strides, blocked = [], set()
    for index in indices:
        s = loop_strides(index, variables)
        if s is None:
            blocked |= {d for d, v in enumerate(variables) if v in index.free_symbols}
        else:
            strides.append(s)
    strides.append([sympy.Mul(*sizes[d + 1:]) for d in range(len(sizes))])
    groups: list[list[int]] = []
    for run in _runs(len(sizes), blocked):
        merged = simplify_loops([sizes[d] for d in run], [[s[d] for d in run] for s in strides])
        groups += [[run[g] for g in group] for group in merged]
    return groups


def _runs(n: int, blocked: set[int]) -> list[list[int]]:
    """Positions 0..n-1 cut into runs that may merge: a blocked position is a run of its own."""
    runs: list[list[int]] = [[]]
    for d in range(n):
        if d in blocked:
            runs += [[d], []]
        else:
            runs[-1].append(d)
    return [r for r in runs if r]


def merged_variables(variables: Sequence[sympy.Symbol], groups: Sequence[Sequence[int]],
                     new: Sequence[sympy.Expr]) -> dict[sympy.Basic, sympy.Expr]:
    """The substitution that runs an index over merged loops: each group's innermost variable
    becomes its new variable, the group's other variables and dropped (size-1) ones become 0.
    Exact for an index the group was merged for: its strides along the group line up."""
    replacement: dict[sympy.Basic, sympy.Expr] = {v: sympy.Integer(0) for v in variables}
    for group, v in zip(groups, new):
        replacement[variables[group[-1]]] = v
    return replacement


def canonical_dep(name: str, index: sympy.Expr, ranges: Sequence[tuple[str, sympy.Expr]]) -> buffer.MemoryDepAttr:
    """The `MemoryDep` of reading or writing `name` at `index` over the loops `ranges`."""
    return _canonical_dep(name, index, tuple(ranges))


@functools.lru_cache(maxsize=1 << 16)
def _canonical_dep(name: str, index: sympy.Expr, ranges: tuple[tuple[str, sympy.Expr], ...]) -> buffer.MemoryDepAttr:
    """`canonical_dep`, memoized: a pure function of its arguments (the attribute is immutable),
    asked again for the same loads by fuse's graph and its fusability checks."""
    variables = [symbol(n) for n, _ in ranges]
    sizes = [sympy.sympify(s) for _, s in ranges]
    groups = loop_groups(sizes, variables, [index])
    new = [symbol(f"{CANONICAL_PREFIX}{k}") for k in range(len(groups))]
    canonical = sympy.expand(index.xreplace(merged_variables(variables, groups, new)))
    new_ranges = [(c.name, sympy.Mul(*(sizes[d] for d in group))) for c, group in zip(new, groups)]
    # Trailing loops the index does not use are dropped (Inductor's drop_unused_symbols): a
    # reduction's store and its pointwise reader then name the same dep.
    while new_ranges and symbol(new_ranges[-1][0]) not in canonical.free_symbols:
        new_ranges.pop()
    return buffer.MemoryDepAttr(name, canonical, new_ranges)


def loop_ranges(node: buffer.BodyNode) -> list[tuple[str, sympy.Expr]]:
    """The node's loop variables with their sizes: pointwise ones, then reduction ones."""
    sizes, reduction = node.range_exprs, node.reduction_range_exprs
    return [*zip(index_names(len(sizes)), sizes), *zip(reduction_index_names(len(reduction)), reduction)]


def read_writes(node: Attribute | buffer.BufferNode) -> tuple[list[Attribute], list[Attribute]]:
    """(reads, writes) of one graph node, each in a deterministic order without repeats."""
    if isinstance(node, buffer.BodyNode):
        ranges = loop_ranges(node)
        loads = [op for op in node.body.walk() if isinstance(op, buffer.LoadOp)]
        reads = [canonical_dep(op.buffer_name, op.index.expr, ranges) for op in loads]
        if isinstance(node, buffer.ScatterOp):  # writes anywhere in the base it takes over
            star = buffer.StarDepAttr(buffer.StringAttr(node.buffer.data))
            return _unique([buffer.StarDepAttr(buffer.StringAttr(node.base_name)), *reads]), [star]
        store = node.store_op()
        return _unique(reads), [canonical_dep(store.buffer_name, store.index.expr, ranges)]
    if isinstance(node, buffer.FusedOp):
        reads, writes = [], []
        for member in node.members():
            r, w = read_writes(member)
            reads += r
            writes += w
        return _unique(reads), _unique(writes)
    reads = [buffer.StarDepAttr(buffer.StringAttr(n)) for n in node.referenced_names()]  # type: ignore[union-attr]
    writes = [buffer.StarDepAttr(buffer.StringAttr(n)) for n in node.defined_names()]  # type: ignore[union-attr]
    return _unique(reads), _unique(writes)


def _unique(deps: Iterable[Attribute]) -> list[Attribute]:
    return list(dict.fromkeys(deps))


def dep_buffer(dep: Attribute) -> str:
    """The buffer a dep is about."""
    assert isinstance(dep, (buffer.MemoryDepAttr, buffer.StarDepAttr, buffer.WeakDepAttr))
    return dep.buffer.data


def buffer_users(graph: buffer.GraphOp) -> dict[str, list[buffer.BufferNode]]:
    """Buffer name -> the nodes reading it, in program order (Inductor's `compute_dependencies`)."""
    users: dict[str, list[buffer.BufferNode]] = {}
    for node in graph.body.block.ops:
        if isinstance(node, buffer.BufferNode) and not isinstance(node, buffer.GRAPH_INPUTS):
            for dep in read_writes(node)[0]:
                readers = users.setdefault(dep_buffer(dep), [])
                if node not in readers:
                    readers.append(node)
    return users
