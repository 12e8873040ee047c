"""Which loops values are materialized: the one decision `--inline` and `--realize` share.

Inductor decides this as side effects spread over lowering (`StorageBox.realize`,
`mark_reuse`, `has_exceeded_max_reads`, `GraphLowering.run_node`); here it is one function,
`realize_reason(op, uses, options)`, that returns why `op` must be stored, or None. Rules, in
the order they are tried (Inductor's GPU defaults):

  extern result                     always ("extern kernel 'addmm'")
  reduction                         always ("reduction")
  scatter                           always, and the copy of its input it writes into
                                    ("written in place by a scatter")
  graph output                      a func.return operand ("graph output")
  read by an extern kernel          extern inputs are tensors ("read by extern 'mm.default'")
  reordered copy viewed by externs  a view that reads every element of its source once (a
                                    clone, a transpose), which externs read through views that
                                    are a strided window on it but on nothing above it: stored
                                    once in its order, not copied per extern, and not folded
                                    into its readers ("reordered copy viewed by extern ...")
  viewed by a graph output          a pointwise a returned view reads through views eager also
                                    returns as views: the outputs are views of one buffer, as in
                                    eager (`y.t(), y[:, ::2]` alias each other; an expand keeps
                                    stride 0), not a copy each; also a free one (a `full`, a view)
  -- a pointwise with no loads (full, arange) or that is a single load (a view) is never
     realized by the rules below: consumers recompute it for free --
  viewed by an extern kernel        a view of it (a transpose) is an extern's input: stored in
                                    its own order, the extern reads the view (Inductor's
                                    ReinterpretView), instead of a copy in the view's order
                                    ("viewed by extern 'mm.default'"); also through a chain
                                    of views that composes to a strided window on it (an
                                    expand, then a view, before a bmm), so its other readers
                                    (a saved detach) read the same buffer ("... through views")
  padded operand of a contraction   a masked load (pad-mm's zero padding) a contraction reads:
                                    the GEMM reads it aligned, and cuBLAS stays a choice
  operand of a contraction reading  more than PROLOGUE_READ_RATIO (1.1) bytes per byte it writes
  more than it writes               (Inductor's prologue rule): folded in, a GEMM would recompute
                                    it and re-read its inputs for every tile of the other dim
  body too large                    ops > max(100, opcount-threshold) ("body has 120 > 100 ops")
  reused and large                  > 1 consumer, ops > opcount-threshold (30)
  reused and read-heavy             > 1 consumer, reads > reads-threshold (4)
  read-heavy (has_exceeded_max_reads, applied through realize_hint, so only with more than
  one non-constant read)            reads > acc-reads-threshold (8), or ops > opcount-threshold

`uses` are the distinct ops that consume `op` (a consumer loading it twice counts once, as an
FX node's users do), taken from the graph *before* inlining. The body is counted after its own
unrealized producers were inlined into it, as Inductor counts `inner_fn` through its loaders.

Counting follows Inductor's OpCounterCSE: the body is value-numbered, so ops = distinct
values among loads (by tensor, index and mask), constants (by value and type), `loops.index`
expressions and scalar ops (by name, operands and attributes); reads = distinct loads, and a
read is nontrivial when its index is not constant. Index variables of size-1 dims count as 0,
as in `Loops._index`. The seed-000 gelu body is 9 ops (1 load, 3 constants, 5 math) and 1 read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import sympy
from xdsl.dialects import func
from xdsl.ir import Block, Operation

from mlc.dialects.loops import ExternOp, LoadOp, LoopsBodyOp, PointwiseOp, ReductionOp, ScatterOp, YieldOp
from mlc.analysis.flat_index import affine_strides, simplify_index
from mlc.dialects.buffer_layout import contiguous_strides, element_bytes
from mlc.dialects.sym import symbol

# Inductor's recursion guard in run_node: a pointwise this large is stored whatever its uses.
MAX_INLINE_OPCOUNT = 100


@dataclass(frozen=True)
class RealizeOptions:
    """The thresholds of the decision (Inductor's `realize_*_threshold` GPU defaults)."""

    reads_threshold: int = 4
    acc_reads_threshold: int = 8
    opcount_threshold: int = 30

    def __post_init__(self) -> None:
        for name in ("reads_threshold", "acc_reads_threshold", "opcount_threshold"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name.replace('_', '-')} must be >= 0, got {getattr(self, name)}")


@dataclass(frozen=True)
class ThresholdOptions:
    """The thresholds as pass options: `--inline` and `--realize` inherit the same names and
    defaults, so one pipeline sets both alike (`inline{reads-threshold=1},realize{...}`)."""

    # Pass options (`mlc-opt --help` prints each field's "help", as passes/pipeline.py's `option` writes it).
    reads_threshold: int = field(default=4, metadata={
        "help": "a producer read by several consumers is stored when it reads more buffers than this"})
    acc_reads_threshold: int = field(default=8, metadata={
        "help": "a producer is stored, even with one consumer, when it reads more buffers than this"})
    opcount_threshold: int = field(default=30, metadata={
        "help": "a producer with more ops than this is stored when it is reused, not recomputed"})

    def __post_init__(self) -> None:
        self.options  # validates the thresholds (ValueError)

    @property
    def options(self) -> RealizeOptions:
        return RealizeOptions(self.reads_threshold, self.acc_reads_threshold, self.opcount_threshold)


@dataclass(frozen=True)
class OpCount:
    """Inductor's OpCountResult: distinct values, distinct loads, loads at non-constant indices."""

    num_ops: int
    num_reads: int
    nontrivial_reads: int


def _size_one_vars(op: LoopsBodyOp) -> dict[sympy.Symbol, sympy.Expr]:
    """Index variables of size-1 dims, which Inductor's `_index` replaces by 0."""
    out: dict[sympy.Symbol, sympy.Expr] = {}
    for k, size in enumerate(op.range_exprs):
        if size == 1:
            out[symbol(f"i{k}")] = sympy.Integer(0)
    if isinstance(op, ReductionOp):
        for k, size in enumerate(op.reduction_range_exprs):
            if size == 1:
                out[symbol(f"r0_{k}")] = sympy.Integer(0)
    return out


def count_ops(op: LoopsBodyOp) -> OpCount:
    """Value-number the body once, as OpCounterCSE does over one trace of inner_fn."""
    zeros = _size_one_vars(op)
    number: dict[object, int] = {}  # structural key -> value number
    value_number: dict[object, int] = {}  # SSAValue -> value number
    distinct_loads: set[object] = set()
    nontrivial = 0
    for body_op in op.body.block.ops:
        if isinstance(body_op, YieldOp):
            continue
        operands = tuple(value_number.get(v, -1) for v in body_op.operands)
        if isinstance(body_op, LoadOp):
            index = tuple(e.xreplace(zeros) for e in body_op.index_exprs)
            key: object = ("load", id(body_op.source), index, operands[1:])
            if key not in distinct_loads:
                distinct_loads.add(key)
                nontrivial += any(e.free_symbols for e in index)
        else:
            props = tuple(sorted((k, str(v)) for k, v in body_op.properties.items()))
            attrs = tuple(sorted((k, str(v)) for k, v in body_op.attributes.items()))
            key = (body_op.name, operands, props, attrs, tuple(str(r.type) for r in body_op.results))
        n = number.setdefault(key, len(number))
        for k, result in enumerate(body_op.results):
            value_number[result] = n if k == 0 else number.setdefault((key, k), len(number))
    return OpCount(len(number), len(distinct_loads), nontrivial)


PROLOGUE_READ_RATIO = 1.1
"""Inductor's prologue rule (`check_prologue_fusion_heuristics_fusable`): an operand computed
inside a GEMM may read at most 1.1x the bytes it would write stored (a cast up, a dequantizing
scale; not a downcast, nor a product of two tensors)."""


def prologue_read_ratio(op: PointwiseOp) -> float:
    """Bytes `op` reads per byte it writes: each distinct load weighs its element's bytes times
    the share of `op`'s elements it reads apart (a load broadcast along a dim of size d reads
    1/d of them; along a symbolic dim, none worth counting). An op of no elements reads none."""
    if any(size == 0 for size in op.range_exprs):
        return 0.0
    zeros = _size_one_vars(op)
    ranges = {symbol(f"i{k}"): size for k, size in enumerate(op.range_exprs) if size != 1}
    seen: set[object] = set()
    read = 0.0
    for load in loads(op):
        index = tuple(e.xreplace(zeros) for e in load.index_exprs)
        key = (id(load.source), index, tuple(id(v) for v in load.operands[1:]))
        if key in seen:
            continue
        seen.add(key)
        used = set().union(*(e.free_symbols for e in index)) if index else set()
        share = 1.0
        for var, size in ranges.items():
            if var not in used:
                share = share / int(size) if size.is_Integer else 0.0
        read += share * element_bytes(load.result.type)
    return read / element_bytes(op.body.block.last_op.operands[0].type)  # type: ignore[union-attr]


def loads(op: LoopsBodyOp) -> list[LoadOp]:
    """The body's loads, in program order."""
    return [o for o in op.body.walk() if isinstance(o, LoadOp)]


def is_view(op: Operation) -> bool:
    """A pointwise that only moves data: one unmasked load at a computed (not a loaded)
    position, yielded as is (Inductor's View)."""
    if not isinstance(op, PointwiseOp):
        return False
    body = list(op.body.block.ops)
    return (
        len(body) == 2
        and isinstance(body[0], LoadOp)
        and body[0].mask is None
        and not body[0].indirect
        and body[1].operands[0] is body[0].result
    )


def is_free_to_recompute(op: Operation) -> bool:
    """No loads (full, arange, constants) or a view: consumers always recompute it."""
    return isinstance(op, PointwiseOp) and (not loads(op) or is_view(op))


def _view_loads(op: Operation) -> list[tuple[PointwiseOp, LoadOp]]:
    """The views reading `op`'s result, each with its one load."""
    loads = [use.operation for r in op.results for use in r.uses if isinstance(use.operation, LoadOp)]
    return [(view, load) for load in loads if is_view(view := load.parent_op())]  # type: ignore[misc]


def viewer_through_views(
    op: PointwiseOp, uses: Sequence[Operation], within: tuple[Sequence[sympy.Expr], list[sympy.Expr]] | None = None,
    viewers: tuple[type[Operation], ...] = (ExternOp,),
) -> tuple[Operation, int] | None:
    """An extern (or another op of `viewers`: func.return) reading `op` through views, and how
    many (nearest first; among one depth, in the order of `uses`), or None.

    Through one view (a transpose before an mm) `op` is stored in its own order and the extern
    reads the view. Through a chain (an `expand` then a `view`: attention's probabilities before
    their bmm) only where the chain composes to a strided window on `op` stored row-major:
    inlined into the first view, `op` would be computed again by each of its other consumers (a
    saved `detach` of the probabilities: the same values written twice). A chain that is no
    window (a reshape of a transpose) would need a copy, so it does not count: its first view
    is stored instead, in the order the extern reads.

    `within` = (shape, index): judge every chain, the first view's too, as a window on another
    tensor stored row-major, whose element `index` (in `op`'s loop variables) `op` reads."""
    shape, position = within if within is not None else (op.range_exprs, None)
    strides = contiguous_strides(shape)
    first = [(u, list(u.body.block.first_op.index_exprs)) for u in uses if is_view(u)]  # type: ignore[union-attr]
    pending = [(view, index, 1, is_eager_alias(view)) for view, index in first]
    for view, index, depth, aliases in pending:  # breadth first: the list grows behind the loop
        for use in view.results[0].uses:
            if not isinstance(use.operation, viewers):
                continue
            if isinstance(use.operation, func.ReturnOp) and not aliases:
                continue  # eager returns a new tensor there (a clone, an amax over one element)
            if depth == 1 and within is None:
                return use.operation, depth
            at = index if position is None else _compose(position, index)
            flat = sum((st * e for st, e in zip(strides, at)), sympy.Integer(0))
            variables = [symbol(f"i{k}") for k in range(len(view.range_exprs))]
            if affine_strides(simplify_index(flat, dict(zip(variables, view.range_exprs))), variables):
                return use.operation, depth
        for outer, load in _view_loads(view):
            pending.append((outer, _compose(index, load.index_exprs), depth + 1, aliases and is_eager_alias(outer)))
    return None


# aten ops whose result is a view of their input in eager (the schema's `Tensor(a) -> Tensor(a)`),
# by the origin names lower-aten gives loops ops (the importer's `origin` tag, else the packet).
EAGER_VIEW_OPS = frozenset({
    "alias", "as_strided", "detach", "diagonal", "expand", "expand_as", "flatten", "movedim", "narrow",
    "permute", "reshape", "select", "slice", "split", "split_with_sizes", "squeeze", "swapaxes", "t",
    "transpose", "unbind", "unflatten", "unfold", "unsqueeze", "view", "view_as", "_reshape_alias",
    "_unsafe_view",
})


def is_eager_alias(op: Operation) -> bool:
    """A view (`is_view`) that eager's ops also return as a view: every op folded into it is an
    aliasing one, so a returned `y.t()` aliases `y`, and a returned `x.clone()` (one load
    too) is a new tensor."""
    return is_view(op) and all(o in EAGER_VIEW_OPS for o in op.origin_names)  # type: ignore[attr-defined]


def _compose(index: Sequence[sympy.Expr], inner: Sequence[sympy.Expr]) -> list[sympy.Expr]:
    """`index` (in loop variables i0, i1, ...) with each i_k replaced by `inner[k]`."""
    subst = {symbol(f"i{k}"): e for k, e in enumerate(inner)}
    return [e.xreplace(subst) for e in index]


def output_viewer(op: Operation, uses: Sequence[Operation]) -> int | None:
    """How many views away a graph output views `op` (a strided window, through views eager
    also returns as views), or None. Such a value is stored even where it is free to recompute
    (a `full`, itself a view): the outputs are views of it, aliasing each other as in eager."""
    if not isinstance(op, PointwiseOp):
        return None
    viewed = viewer_through_views(op, uses, viewers=(func.ReturnOp,))
    return None if viewed is None else viewed[1]


def is_reordered_copy(op: Operation) -> bool:
    """A view that reads every element of its source once: each index is one of its own loop
    variables, over a source dim of the same size (a clone, a transpose; not a slice, an
    expand or a reshape)."""
    if not is_view(op):
        return False
    load = op.body.block.first_op  # type: ignore[union-attr]
    source_shape = load.source.type.get_shape()  # type: ignore[attr-defined]
    ranges = op.range_exprs  # type: ignore[attr-defined]
    dims = {symbol(f"i{k}"): k for k in range(len(ranges))}
    seen: set[int] = set()
    for e, size in zip(load.index_exprs, source_shape):
        if e == 0 and size == 1:
            continue
        k = dims.get(e)
        if k is None or k in seen or ranges[k] != size:
            return False
        seen.add(k)
    return seen == {k for k, size in enumerate(ranges) if size != 1}


def _origin(op: PointwiseOp) -> tuple[Sequence[sympy.Expr], list[sympy.Expr]] | None:
    """The shape of the first op above `op`'s chain of views that is no view, and the index of
    it that `op`'s element reads; None where a size on the way is not static, or where that is
    no computed op (stored row-major): an extern's result or a graph input has its own strides
    (attention's output, [batch, seq, heads, dim] in memory), on which `--realize` finds
    windows the row-major order would not show."""
    index: list[sympy.Expr] = [symbol(f"i{k}") for k in range(len(op.range_exprs))]
    current: Operation | None = op
    shape: list[sympy.Expr] = []
    while current is not None and is_view(current):
        load = current.body.block.first_op  # type: ignore[union-attr]
        index = _compose(load.index_exprs, index)
        sizes = load.source.type.get_shape()
        if any(d < 0 for d in sizes):
            return None
        shape = [sympy.Integer(d) for d in sizes]
        current = load.source.owner if isinstance(load.source.owner, Operation) else None
    return (shape, index) if isinstance(current, LoopsBodyOp) else None


def reordered_copy_viewer(op: Operation, uses: Sequence[Operation]) -> ExternOp | None:
    """An extern that reads `op`, a reordered copy, through views that are a strided window on
    `op` but on nothing above it, where no reordered copy above it is such: then `op` is the
    layout the extern can view, and stored once, the externs read views of it. Attention's
    backward transposes q's gradient, clones it and views it as a matrix that one mm reads and
    another reads transposed: inlined, each would be handed its own copy (Inductor realizes the
    clone, a Pointwise its views reach an extern through)."""
    if not is_reordered_copy(op):
        return None
    viewed = viewer_through_views(op, uses)  # type: ignore[arg-type]
    origin = _origin(op)  # type: ignore[arg-type]
    if viewed is None or origin is None or viewer_through_views(op, uses, origin) is not None:  # type: ignore[arg-type]
        return None
    source = op.body.block.first_op.source.owner  # type: ignore[union-attr]
    if isinstance(source, Operation) and reordered_copy_viewer(source, list(_users(source))) is not None:
        return None
    assert isinstance(viewed[0], ExternOp)
    return viewed[0]


def _users(op: Operation) -> set[Operation]:
    """The ops of `op`'s block that use one of its results (an op inside a body: its node)."""
    block = op.parent_block()
    return {top_level_op(use.operation, block) for r in op.results for use in r.uses} if block else set()


def realize_reason(op: Operation, uses: Sequence[Operation], options: RealizeOptions) -> str | None:
    """Why `op` must be stored in a buffer, or None when consumers may recompute it."""
    if isinstance(op, ExternOp):
        return f"extern kernel '{op.overload.data}'"
    if isinstance(op, ReductionOp):
        return "reduction"
    if isinstance(op, ScatterOp):
        return "scatter (writes at loaded positions)"
    if any(isinstance(u, ScatterOp) and u.base.owner is op for u in uses):
        return "written in place by a scatter"
    if any(isinstance(u, func.ReturnOp) for u in uses):
        return "graph output"
    externs = [u for u in uses if isinstance(u, ExternOp)]
    if externs:
        return f"read by extern '{externs[0].overload.data}'"
    if (copy_viewer := reordered_copy_viewer(op, uses)) is not None:
        return f"reordered copy viewed by extern '{copy_viewer.overload.data}'"
    if (depth := output_viewer(op, uses)) is not None:
        return "viewed by a graph output" + (" through views" if depth > 1 else "")
    if not isinstance(op, PointwiseOp) or is_free_to_recompute(op):
        return None
    if (viewed := viewer_through_views(op, uses)) is not None:
        extern, depth = viewed
        return f"viewed by extern '{extern.overload.data}'" + (" through views" if depth > 1 else "")
    read_by_contraction = any(isinstance(u, ReductionOp) and u.dot_op() is not None for u in uses)
    if read_by_contraction and any(load.mask is not None for load in loads(op)):
        # pad-mm's zero padding: a GEMM reads it aligned, as cuBLAS would, and reading it does
        # not cost `gemm=measure`'s cuBLAS side a copy
        return "padded operand of a contraction"
    if read_by_contraction and (ratio := prologue_read_ratio(op)) > PROLOGUE_READ_RATIO:
        # folded into the GEMM, the operand is recomputed, its inputs re-read, for every tile of
        # the other dim: worth it only where that reads no more than the operand itself would
        return f"operand of a contraction reading {ratio:.2g}x the bytes it writes"
    count = count_ops(op)
    ops_limit = max(MAX_INLINE_OPCOUNT, options.opcount_threshold)
    if count.num_ops > ops_limit:
        return f"body has {count.num_ops} > {ops_limit} ops"
    if len(uses) > 1:
        if count.num_ops > options.opcount_threshold:
            return (
                f"reused by {len(uses)} consumers and body has "
                f"{count.num_ops} > {options.opcount_threshold} ops"
            )
        if count.num_reads > options.reads_threshold:
            return (
                f"reused by {len(uses)} consumers and reads "
                f"{count.num_reads} > {options.reads_threshold} times"
            )
    if count.nontrivial_reads > 1:
        if count.num_reads > options.acc_reads_threshold:
            return f"reads {count.num_reads} > {options.acc_reads_threshold} times"
        if count.num_ops > options.opcount_threshold:
            return f"body has {count.num_ops} > {options.opcount_threshold} ops"
    return None


def should_inline(op: Operation, uses: Sequence[Operation], options: RealizeOptions) -> bool:
    """Whether loads of `op` are replaced by its body: not realized, or free to recompute.

    A free op that is realized (a graph output, an extern's input) is still recomputed by its
    pointwise consumers, as Inductor's ComputedBuffer.make_loader does for zero-read buffers,
    except a reordered copy stored for the views externs read of it (`reordered_copy_viewer`):
    folded into those views, it would leave them no window to read."""
    if not isinstance(op, PointwiseOp):
        return False
    if is_free_to_recompute(op) and reordered_copy_viewer(op, uses) is None and output_viewer(op, uses) is None:
        return True
    return realize_reason(op, uses, options) is None


def top_level_op(op: Operation, block: Block) -> Operation:
    """The ancestor of `op` that sits directly in `block`."""
    while op.parent_block() is not block:
        parent = op.parent_op()
        assert parent is not None, f"{op.name} is not inside the block"
        op = parent
    return op


def consumers(block: Block) -> dict[Operation, list[Operation]]:
    """For each op of `block`, the distinct ops of `block` that use one of its results, in order."""
    position = {op: k for k, op in enumerate(block.ops)}
    return {op: sorted(_users(op), key=position.__getitem__) for op in block.ops}

