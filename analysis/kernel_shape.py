"""The iteration space of one kernel: which groups of computed nodes one Triton kernel can run.

    shape = kernel_shape(members)         # KernelShape(numel, rnumel), or a Mismatch saying why not
    where = coordinates(node, shape)      # the node's loop variables over the kernel's flat X and R
    same_element(read, write)             # do two accesses meet at one element of one lane?

A kernel runs `numel` kept elements (`xindex`) by `rnumel` reduced ones (`r0_index`; 1 for a
pointwise kernel). Its members fit it as Inductor's `SIMDScheduling.can_fuse` requires:

* every reduction reduces `rnumel` elements for each of `numel` outputs;
* a pointwise member runs `numel` elements (it sees each row once: an epilogue of the reduced
  values) or `numel * rnumel` (each element of the rows) with its loops splitting at a loop
  boundary into the kept and the reduced part (`split_point`); one loop that straddles the
  boundary can be cut in two (`straddling_loop`: `--fuse` rewrites the node so, as Inductor's
  `split_iteration_ranges` does).

`--fuse` asks this module whether a group may be one kernel and `--convert-to-triton` builds the
kernel from the same answer, so the two cannot disagree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sympy

from mlc.analysis.flat_index import affine_strides, simplify_index
from mlc.dialects import buffer
from mlc.dialects.loops import index_names, reduction_index_names
from mlc.dialects.sym import FloorDiv, ModularIndexing, equal, expr_str, symbol

X = symbol("X")  # a kernel's flat kept index
R = symbol("R")  # its flat reduced index


def product(values: Sequence[sympy.Expr]) -> sympy.Expr:
    return sympy.Mul(*values) if values else sympy.Integer(1)


@dataclass(frozen=True)
class KernelShape:
    numel: sympy.Expr
    rnumel: sympy.Expr  # 1: a pointwise kernel

    @property
    def is_reduction(self) -> bool:
        return self.rnumel != 1


@dataclass(frozen=True)
class Mismatch:
    """Why members cannot share one kernel: `category` names the kind (Inductor's WhyNoFuse)."""

    category: str
    reason: str


def node_numels(node: buffer.ComputedOp) -> tuple[sympy.Expr, sympy.Expr]:
    return product(node.range_exprs), product(node.reduction_range_exprs) if node.is_reduction else sympy.Integer(1)


def split_point(ranges: Sequence[sympy.Expr], shape: KernelShape) -> int | None:
    """Where a pointwise member's ranges divide into (numel, rnumel), if they do."""
    for k in range(len(ranges) + 1):
        if equal(product(ranges[:k]), shape.numel) and equal(product(ranges[k:]), shape.rnumel):
            return k
    return None


def straddling_loop(ranges: Sequence[sympy.Expr], numel: sympy.Expr) -> tuple[int, int] | None:
    """(d, outer) when loop d of `ranges` can be cut into (outer, ranges[d] / outer) loops so
    that the loops before the cut run `numel` elements; None where no static cut does that."""
    before: sympy.Expr = sympy.Integer(1)
    for d, size in enumerate(ranges):
        ratio = sympy.cancel(numel / before)
        if ratio.is_Integer and size.is_Integer and 1 < int(ratio) < int(size) and int(size) % int(ratio) == 0:
            return d, int(ratio)
        before = before * size
    return None


def kernel_shape(members: Sequence[buffer.ComputedOp]) -> KernelShape | Mismatch:
    """The (numel, rnumel) that runs every member, or why there is none."""
    reductions = [m for m in members if m.is_reduction]
    if reductions:
        shape = KernelShape(*node_numels(reductions[0]))
        for m in reductions[1:]:
            n, r = node_numels(m)
            if not (equal(n, shape.numel) and equal(r, shape.rnumel)):
                return Mismatch("reduction sizes", f"{reductions[0].buffer.data} reduces {_shape(shape)}, "
                                f"{m.buffer.data} {expr_str(n)} x {expr_str(r)}")
    else:
        shape = KernelShape(node_numels(members[0])[0], sympy.Integer(1))
    for m in members:
        if m.is_reduction:
            continue
        numel = node_numels(m)[0]
        if equal(numel, shape.numel):
            continue
        if shape.is_reduction and equal(numel, shape.numel * shape.rnumel):
            continue  # its loops must still split so, or be re-run in a reduction's (`coordinates`)
        return Mismatch("different numel", f"{m.buffer.data} runs {expr_str(numel)} elements, the kernel "
                        f"{_shape(shape)}")
    return shape


def _shape(shape: KernelShape) -> str:
    return expr_str(shape.numel) + (f" x {expr_str(shape.rnumel)}" if shape.is_reduction else "")


def _flat_digits(variables: Sequence[sympy.Symbol], sizes: Sequence[sympy.Expr], flat: sympy.Symbol
                 ) -> dict[sympy.Basic, sympy.Expr]:
    """Row-major loops over `sizes` as digits of the flat index `flat`."""
    out: dict[sympy.Basic, sympy.Expr] = {}
    for k, (v, size) in enumerate(zip(variables, sizes)):
        inner = product(sizes[k + 1:])
        out[v] = ModularIndexing(flat, inner, size) if k else FloorDiv(flat, inner)
    return out


def coordinates(node: buffer.ComputedOp, shape: KernelShape) -> dict[sympy.Basic, sympy.Expr] | None:
    """The node's loop variables as expressions of the kernel's X (and R), a straddling loop
    (`straddling_loop`) read as cut in two; None when the node does not run in `shape`."""
    loops, variables = _loops(node)
    split = _kept_loops(node, shape)
    if split is not None:
        return _flat_digits(variables[:split], loops[:split], X) | _flat_digits(variables[split:], loops[split:], R)
    ranges, xs = node.range_exprs, variables
    cut = straddling_loop(ranges, shape.numel)
    if cut is None:
        return None
    d, outer = cut
    inner = ranges[d] / outer
    hi, lo = symbol("_hi"), symbol("_lo")  # loop d = outer x inner: its high digit in X, low in R
    where = _flat_digits([*xs[:d], hi], [*ranges[:d], sympy.Integer(outer)], X)
    where |= _flat_digits([lo, *xs[d + 1:]], [inner, *ranges[d + 1:]], R)
    where[xs[d]] = where.pop(hi) * inner + where.pop(lo)
    return where


@dataclass(frozen=True)
class Reindex:
    """A pointwise node run over another node's loops (Inductor's loop reindexing after
    fusion): the new `ranges` (kept loops, then the reduced ones: `split` of them kept) and each
    old loop variable as an expression of the new ones (`_n0, _n1, ...`)."""

    ranges: tuple[sympy.Expr, ...]
    split: int
    old: tuple[tuple[sympy.Symbol, sympy.Expr], ...]

    @property
    def variables(self) -> list[sympy.Symbol]:
        return [symbol(f"_n{k}") for k in range(len(self.ranges))]

    def coordinates(self, shape: KernelShape) -> dict[sympy.Basic, sympy.Expr]:
        new = self.variables
        where = _flat_digits(new[:self.split], self.ranges[:self.split], X)
        where |= _flat_digits(new[self.split:], self.ranges[self.split:], R)
        return {v: simplify_index(e.xreplace(where), {X: shape.numel, R: shape.rnumel}) for v, e in self.old}


def reindex_to_reader(writer: buffer.ComputedOp, reader: buffer.ComputedOp, index: sympy.Expr,
                      shape: KernelShape, reader_rerun: Reindex | None = None) -> Reindex | None:
    """`writer` re-run over `reader`'s loops so that each lane computes the element of writer's
    buffer that `reader` loads there at `index`: possible when the writer is pointwise and
    stores its elements in row-major order of its loops, `index` visits every element once
    (its strides over reader's loops are a permutation of a contiguous layout's), and the
    reader runs in `shape` without a cut loop. The reader is a reduction (a column sum of a
    pointwise) or a pointwise (a transposed copy of one), itself re-run (`reader_rerun`: the
    writer then runs over the reader's new loops, a chain of pointwise nodes into a reduction)."""
    if reader_rerun is not None:
        split, new_ranges = reader_rerun.split, list(reader_rerun.ranges)
        index = index.xreplace(dict(reader_rerun.old))
        reader_vars = reader_rerun.variables
    else:
        split = _kept_loops(reader, shape)
        new_ranges, reader_vars = _loops(reader)
    if writer.is_reduction or split is None:
        return None
    ranges = writer.range_exprs
    old = [symbol(n) for n in index_names(len(ranges))]
    row_major = sum((v * product(ranges[k + 1:]) for k, v in enumerate(old)), sympy.Integer(0))
    if not equal(writer.store_op().index.expr, row_major):
        return None
    new = [symbol(f"_n{k}") for k in range(len(new_ranges))]
    flat = sympy.expand(index.xreplace(dict(zip(reader_vars, new))))
    if not _visits_each_once(flat, new, new_ranges, product(ranges)):
        return None
    digits = _flat_digits(old, ranges, symbol("_flat"))
    extents = dict(zip(new, new_ranges))
    mapping = tuple((v, simplify_index(e.xreplace({symbol("_flat"): flat}), extents)) for v, e in digits.items())
    return Reindex(tuple(new_ranges), split, mapping)


def _loops(node: buffer.ComputedOp) -> tuple[list[sympy.Expr], list[sympy.Symbol]]:
    """The node's loop sizes and variables, kept ones then reduced ones."""
    kept, reduced = node.range_exprs, node.reduction_range_exprs
    return [*kept, *reduced], [symbol(n) for n in [*index_names(len(kept)), *reduction_index_names(len(reduced))]]


def _kept_loops(node: buffer.ComputedOp, shape: KernelShape) -> int | None:
    """How many of `node`'s loops (reduced ones last) run over the kernel's X, the rest over
    R; None where its loops do not divide so."""
    ranges = node.range_exprs
    if node.is_reduction or equal(product(ranges), shape.numel):
        return len(ranges)
    return split_point(ranges, shape)


def _visits_each_once(index: sympy.Expr, variables: Sequence[sympy.Symbol], sizes: Sequence[sympy.Expr],
                      numel: sympy.Expr) -> bool:
    """`index` over `sizes` is a bijection onto [0, numel): strides a contiguous layout's, permuted."""
    strided = affine_strides(index, list(variables))
    if strided is None or strided[0] != 0:
        return False
    pairs = [(stride, size) for stride, size in zip(strided[1], sizes) if size != 1]
    expected = sympy.Integer(1)
    while pairs:  # innermost first: the dim whose stride is the product of those inside it
        inner = next((p for p in pairs if equal(p[0], expected)), None)
        if inner is None:
            return False
        pairs.remove(inner)
        expected = expected * inner[1]
    return equal(expected, numel)


def in_kernel(index: sympy.Expr, where: dict[sympy.Basic, sympy.Expr], shape: KernelShape) -> sympy.Expr:
    """An index of a member, over the kernel's X and R."""
    return simplify_index(sympy.expand(index.xreplace(where)), {X: shape.numel, R: shape.rnumel})


def access_mismatch(read: sympy.Expr, write: sympy.Expr) -> str | None:
    """None when a read and a write (both over X, R) touch the same element for every lane; else
    the kind of difference: `broadcast` (the read uses fewer of the lane's coordinates),
    `different offset` (a constant apart: split QKV), `different loop order`."""
    difference = sympy.expand(read - write)
    if difference == 0:
        return None
    if difference.is_number:
        return "different offset"
    if read.free_symbols < write.free_symbols:
        return "broadcast"
    return "different loop order"
