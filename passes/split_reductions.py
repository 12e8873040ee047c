"""Split a long reduction with few outputs into two reductions (Inductor's split reductions).

A reduction whose output is too small to fill the GPU (one row per thread block leaves most
SMs idle) is cut into `split` pieces: a partial reduction over `[*ranges, split]`, each piece
`ceil(rnumel / split)` long, into a new buffer, then a final reduction of the `split` partial
results that keeps the node's name, its epilogue and its store (Inductor's
`Reduction.create_multilayer`: two kernels).

Before (sum of 1,048,576 elements into one):
    buffer.computed "buf0" #buffer.layout<[], [], f32> ranges [] reduce [1048576] origins ["sum"] {
      %0 = buffer.load @x[r0_0] : f32
      %1 = buffer.reduce sum %0 : f32 -> f32
      buffer.store @buf0[0], %1 : f32 }
After (split 128, pieces of 8192):
    buffer.computed "buf1" #buffer.layout<[128], [1], f32> ranges [128] reduce [8192] origins ["sum"] {
      %0 = buffer.load @x[r0_0 + 8192*i0] : f32
      %1 = buffer.reduce sum %0 : f32 -> f32
      buffer.store @buf1[i0], %1 : f32 } attributes {hint = "inner"}
    buffer.computed "buf0" #buffer.layout<[], [], f32> ranges [] reduce [128] origins ["sum"] {
      %0 = buffer.load @buf1[r0_0] : f32
      %1 = buffer.reduce sum %0 : f32 -> f32
      buffer.store @buf0[0], %1 : f32 } attributes {hint = "inner"}

The partial buffer's dims are laid out in the order its body's loads walk memory (Inductor's
fill order of a flexible layout): a column sum's partials over [columns, split] are stored with
the columns innermost (strides [1, columns]), so that --reorder-loops runs them as [split,
columns] and neighbouring lanes read neighbouring columns. Both pieces carry the reduction's
hint as an attribute (`attributes {hint = "outer"}`; the final's by Inductor's second-step
rule, `analysis/launch.py: second_step_hint`), which convert-to-triton's configs follow: a
piece's own sizes would classify many partial rows as DEFAULT.

When rnumel is not a multiple of the piece length, the partial body computes the flat
position `p = piece*i_n + r0_0`, masks every load with `p < rnumel` and replaces the value it
reduces by the reduction's identity where that fails. The partial buffer is f32 when the
reduction's type is f16/bf16 (Inductor keeps the intermediate in f32); the final node
narrows the result before its epilogue. The partial buffer takes the next free `bufN`.

How many pieces (`analysis/launch.py: num_splits`, Inductor's `Reduction.num_splits` and
`InductorChoices.reduction_split_factor`): the reduction hint decides between the inner rule
(no split when numel >= 2 * num-sms or rnumel <= 8192; else each of a block's 256 threads
handles min..max elements, a divisor of rnumel preferred when one is close; mlc, unlike
Inductor, keeps the reduction whole from numel >= num-sms when a node reading its result reads
the reduced rows again, `rows_read_again`: a softmax then stays one kernel) and the outer one
(4 values per thread, 128 outputs per block); a DEFAULT hint (rnumel <= 32, or at least
64 * num-sms outputs, or no read that varies along the reduction) never splits.

Only nodes with one `buffer.reduce` of a kind that combines associatively are split: sum,
prod, max, min, any, and welford when the pieces tile the reduction exactly (a masked lane
would count in a piece's weight). A welford splits into partial welfords stored as each
piece's mean and m2, then Chan et al.'s combine of equal pieces with sums (`split_welford`):
the mean of the piece means in a node of its own, then m2 = sum of m2_k + piece * (mean_k -
mean)^2; var_mean's two nodes share their partials. argmax/argmin never are (Inductor does
not: positions would need the piece offsets). Skipped silently: such nodes, symbolic sizes,
nodes inside `buffer.fused` (run this pass before --fuse), and every node with
`enabled=false`.

Options:
  num-sms=132                  sets the Target's SM count (streaming multiprocessors; H100 SXM):
                               what "enough outputs to fill the GPU" and the piece sizes scale with
  min-elements-per-thread=32   the least work per thread worth a piece (Inductor: the warp size)
  max-elements-per-thread=512  the most work per thread before more pieces pay off (Inductor's)
  enabled=true                 false leaves every reduction whole (Inductor's
                               `split_reductions` switch), e.g. to compare the two forms

Fails when: an option is out of range (ValueError).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

import sympy
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    f32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from mlc.dialects import buffer, loops, triton
from mlc.dialects.buffer_layout import LayoutAttr, strides_in_order
from mlc.dialects.sym import FloorDiv, ModularIndexing, symbol
from mlc.analysis.flat_index import loop_strides, order_by_strides, simplify_index
from mlc.analysis.launch import HINT_ATTRIBUTE, Target, num_splits, product, second_step_hint
from mlc.passes.stages import check_stage
from mlc.passes.pipeline import option

SPLITTABLE = ("sum", "prod", "max", "min", "any", "welford")


def _split_candidate(node: buffer.ComputedOp) -> buffer.ReduceOp | None:
    """The node's one reduction, when the node can be split at all."""
    reduces = [op for op in node.body.block.ops if isinstance(op, buffer.ReduceOp)]
    if len(reduces) != 1 or reduces[0].kind not in SPLITTABLE:
        return None
    sizes = [*node.range_exprs, *node.reduction_range_exprs]
    return reduces[0] if all(s.is_Integer for s in sizes) else None


def rows_read_again(node: buffer.ComputedOp, reads: dict[buffer.BodyNode, set[str]]) -> bool:
    """Whether a node that reads the reduction's result also reads what the reduction read (a
    softmax's sum of exp(x - max) reads x and the max): `num_splits` keeps such rows whole.
    `reads`: the buffers each node of the graph loads."""
    name, read = node.buffer.data, reads[node]
    return any(other is not node and name in r and r & read for other, r in reads.items())


def _next_free(names: set[str]) -> str:
    numbers = [int(m.group(1)) for n in names if (m := re.fullmatch(r"buf(\d+)", n))]
    return f"buf{max(numbers, default=-1) + 1}"


def _constant(value: int | float, t: Attribute) -> arith.ConstantOp:
    if isinstance(t, IntegerType):
        return arith.ConstantOp(IntegerAttr(int(value), t))
    return arith.ConstantOp(FloatAttr(float(value), t))  # type: ignore[arg-type]


def _unflatten(flat: sympy.Expr, sizes: list[sympy.Expr]) -> list[sympy.Expr]:
    """The row-major indices into `sizes` of the flat position `flat`."""
    out: list[sympy.Expr] = []
    stride: sympy.Expr = sympy.Integer(1)
    for k in reversed(range(len(sizes))):
        out.append(FloorDiv(flat, stride) if k == 0 else ModularIndexing(flat, stride, sizes[k]))
        stride = stride * sizes[k]
    return out[::-1]


def _erase_dead(block: Block) -> None:
    """Drop ops whose results nobody uses (the store, a terminator, stays)."""
    changed = True
    while changed:
        changed = False
        for op in reversed(list(block.ops)):
            if op.results and not any(r.uses for r in op.results):
                block.erase_op(op)
                changed = True


def _intermediate_type(t: Attribute) -> Attribute:
    return f32 if isinstance(t, (Float16Type, BFloat16Type)) else t


def _fill_strides(block: Block, variables: list[sympy.Symbol], sizes: list[sympy.Expr]) -> list[sympy.Expr]:
    """The partial buffer's strides: its dims laid out in the order the body's loads walk
    memory (Inductor's fill order of a flexible layout, from its reads), so that the partial
    kernel's fastest lanes read and write consecutive addresses. A column sum's partials over
    [columns, split] are stored split-major, not column-major with the split innermost."""
    rows = []
    for op in block.ops:
        if isinstance(op, buffer.LoadOp) and (strides := loop_strides(op.index.expr, variables)) is not None:
            if all(st.is_Integer for st in strides):
                rows.append([int(st) for st in strides])
    return strides_in_order(sizes, order_by_strides(rows, sizes) if rows else list(range(len(sizes))))


def _piece_body(node: buffer.ComputedOp, reduce: buffer.ReduceOp, split: int) -> tuple[Block, SSAValue, SSAValue | None]:
    """The node's body up to `reduce`, over (i..., piece index) x r0_0: the block, the value
    it reduces, and the mask of the lanes inside rnumel (None when the pieces tile it)."""
    ranges, rranges = node.range_exprs, node.reduction_range_exprs
    rnumel = int(product(rranges))
    piece = -(-rnumel // split)
    split_var, r0 = symbol(f"i{len(ranges)}"), symbol("r0_0")
    flat = piece * split_var + r0
    olds = [symbol(f"r0_{k}") for k in range(len(rranges))]
    subst = dict(zip(olds, _unflatten(flat, rranges)))
    extents = {symbol(f"i{k}"): r for k, r in enumerate(ranges)}
    extents |= {split_var: sympy.Integer(split), r0: sympy.Integer(piece)}

    def reindex(expr: sympy.Expr) -> sympy.Expr:
        return simplify_index(expr.xreplace(subst), extents)

    block = Block()
    values: dict[SSAValue, SSAValue] = {}
    mask: SSAValue | None = None
    if piece * split != rnumel:
        position = loops.IndexOp(flat, i64)
        bound = _constant(rnumel, i64)
        inside = arith.CmpiOp(position.result, bound.result, "slt")
        block.add_ops([position, bound, inside])
        mask = inside.result
    for op in node.body.block.ops:
        if op is reduce:
            break
        if isinstance(op, buffer.LoadOp):
            load_mask = mask
            if op.mask is not None and mask is not None:
                both = arith.AndIOp(values[op.mask], mask)
                block.add_op(both)
                load_mask = both.result
            elif op.mask is not None:
                load_mask = values[op.mask]
            indirect = [values[v] for v in op.indirect]
            new: Operation = buffer.LoadOp(op.buffer_name, reindex(op.index.expr), op.result.type, load_mask, indirect)
        elif isinstance(op, loops.IndexOp):
            new = loops.IndexOp(reindex(op.expr.expr), op.result.type, [values[v] for v in op.indirect])
        else:
            new = op.clone(value_mapper=values)
        block.add_op(new)
        values.update(zip(op.results, new.results))
    return block, values[reduce.value], mask


def _widened(block: Block, value: SSAValue, mid: Attribute) -> SSAValue:
    if value.type == mid:
        return value
    widened = arith.ExtFOp(value, mid)
    block.add_op(widened)
    return widened.result


def _partial_layout(block: Block, ranges: list[sympy.Expr], split: int, mid: Attribute) -> LayoutAttr:
    sizes = [*ranges, sympy.Integer(split)]
    return LayoutAttr(sizes, _fill_strides(block, [symbol(f"i{k}") for k in range(len(sizes))], sizes), mid)


def split_node(node: buffer.ComputedOp, reduce: buffer.ReduceOp, split: int, name: str) -> list[buffer.ComputedOp]:
    """[partial, final] for `node` cut into `split` pieces, the partial result stored as `name`."""
    ranges, rranges = node.range_exprs, node.reduction_range_exprs
    rnumel = int(product(rranges))
    piece = -(-rnumel // split)
    kind, t = reduce.kind, reduce.results[0].type
    mid = _intermediate_type(t)
    r0 = symbol("r0_0")
    block, value, mask = _piece_body(node, reduce, split)
    if mask is not None:  # lanes past rnumel reduce the identity
        identity = _constant(triton.reduction_identity(kind, value.type), value.type)
        chosen = arith.SelectOp(mask, value, identity.result)
        block.add_ops([identity, chosen])
        value = chosen.result
    value = _widened(block, value, mid)
    partial_reduce = buffer.ReduceOp(kind, value, [mid])
    partial_layout = _partial_layout(block, ranges, split, mid)
    partial_index = partial_layout.flat_index([symbol(f"i{k}") for k in range(len(ranges) + 1)])
    block.add_ops([partial_reduce, buffer.StoreOp(name, partial_index, partial_reduce.results[0])])
    _erase_dead(block)
    partial = buffer.ComputedOp(name, partial_layout, [*ranges, split], Region(block), [piece], node.origin_names)

    # The final reduction: the split partial results, then the node's epilogue and store.
    final_block = Block()
    load = buffer.LoadOp(name, partial_layout.flat_index([*(symbol(f"i{k}") for k in range(len(ranges))), r0]), mid)
    final_reduce = buffer.ReduceOp(kind, load.result, [mid])
    final_block.add_ops([load, final_reduce])
    return [partial, _final_node(node, reduce, final_block, [final_reduce.results[0]], split)]


def _final_node(node: buffer.ComputedOp, reduce: buffer.ReduceOp, block: Block, combined: Sequence[SSAValue],
                split: int) -> buffer.ComputedOp:
    """`node` as the reduction of its `split` partials: `block` computes the combined value of
    each of `reduce`'s results (in the partials' type), which are narrowed to `reduce`'s types,
    then the node's epilogue and store follow, under the node's name and layout."""
    values: dict[SSAValue, SSAValue] = {}
    for result, value in zip(reduce.results, combined):
        if value.type != result.type:
            narrowed = arith.TruncFOp(value, result.type)
            block.add_op(narrowed)
            value = narrowed.result
        values[result] = value
    for op in node.body.block.ops:  # the prologue is cloned too, and dropped: nothing uses it now
        if op is not reduce:
            new = op.clone(value_mapper=values)
            block.add_op(new)
            values.update(zip(op.results, new.results))
    _erase_dead(block)
    return buffer.ComputedOp(node.buffer.data, node.layout, node.range_exprs, Region(block), [split], node.origin_names)


def _adopt(candidate: buffer.ComputedOp, shared: list[buffer.ComputedOp], fresh: Callable[[], str]) -> tuple[str, bool]:
    """The name of a partial node equal to `candidate` (same sizes, layout and body) among
    `shared`, else a fresh one given to `candidate`, which joins `shared`; and whether it is new.
    var_mean's two nodes (var and mean) reduce one welford: their partials are computed once."""
    store = next(op for op in candidate.body.block.ops if isinstance(op, buffer.StoreOp))

    def name(n: str) -> None:
        candidate.properties["buffer"] = StringAttr(n)
        store.properties["buffer"] = SymbolRefAttr(n)

    for existing in shared:
        name(existing.buffer.data)
        if (existing.layout == candidate.layout and existing.ranges == candidate.ranges
                and existing.reduction_ranges == candidate.reduction_ranges
                and existing.body.is_structurally_equivalent(candidate.body)):
            return existing.buffer.data, False
    name(fresh())
    shared.append(candidate)
    return candidate.buffer.data, True


def split_welford(node: buffer.ComputedOp, reduce: buffer.ReduceOp, split: int, fresh: Callable[[], str],
                  shared: list[buffer.ComputedOp]) -> list[buffer.ComputedOp]:
    """A welford node cut into `split` pieces of equal length (rnumel a multiple of `split`):
    partial welfords of each piece, stored as its mean and, when the node uses m2, its m2 (two
    nodes over one iteration space, which --fuse runs as one kernel), then Chan et al.'s
    combine of equal pieces: mean = the average of the piece means; m2 = the sum over pieces
    of m2_k + piece * (mean_k - mean)^2, each deviation taken from the combined mean (no
    cancellation between large sums); weight = rnumel. The combine of m2 reads the mean from
    its own node; --fuse puts both in one persistent kernel. `fresh` names new buffers; partials
    equal to one in `shared` (from another node of the same welford) are read, not made again."""
    ranges, rnumel = node.range_exprs, int(product(node.reduction_range_exprs))
    piece = rnumel // split
    t = reduce.results[0].type
    mid = _intermediate_type(t)
    uses_m2 = bool(reduce.results[1].uses)
    ivars = [symbol(f"i{k}") for k in range(len(ranges))]
    r0 = symbol("r0_0")

    partials: list[tuple[str, LayoutAttr]] = []
    nodes: list[buffer.ComputedOp] = []
    for component in (0, 1) if uses_m2 else (0,):
        block, value, mask = _piece_body(node, reduce, split)
        assert mask is None, "welford pieces tile the reduction"
        welford = buffer.ReduceOp("welford", _widened(block, value, mid), [mid, mid, mid])
        layout = _partial_layout(block, ranges, split, mid)
        block.add_ops([welford, buffer.StoreOp("partial", layout.flat_index([*ivars, symbol(f"i{len(ranges)}")]),
                                               welford.results[component])])
        _erase_dead(block)
        candidate = buffer.ComputedOp("partial", layout, [*ranges, split], Region(block), [piece], node.origin_names)
        name, new = _adopt(candidate, shared, fresh)
        partials.append((name, layout))
        if new:
            nodes.append(candidate)

    def load_partial(block: Block, partial: tuple[str, LayoutAttr]) -> SSAValue:
        load = buffer.LoadOp(partial[0], partial[1].flat_index([*ivars, r0]), mid)
        block.add_op(load)
        return load.result

    def mean_of_pieces(block: Block) -> SSAValue:
        total = buffer.ReduceOp("sum", load_partial(block, partials[0]), [mid])
        count = _constant(split, mid)
        mean = arith.DivfOp(total.results[0], count.result)
        block.add_ops([total, count, mean])
        return mean.result

    final_block = Block()
    if uses_m2:  # the combined mean in a node of its own, read by the m2 combine
        mean_block = Block()
        mean_layout = LayoutAttr(list(ranges), None, mid)
        mean_name = fresh()
        mean_block.add_op(buffer.StoreOp(mean_name, mean_layout.flat_index(ivars), mean_of_pieces(mean_block)))
        nodes.append(buffer.ComputedOp(mean_name, mean_layout, ranges, Region(mean_block), [split], node.origin_names))
        mean_load = buffer.LoadOp(mean_name, mean_layout.flat_index(ivars), mid)
        final_block.add_op(mean_load)
        mean = mean_load.result
        piece_mean, piece_m2 = load_partial(final_block, partials[0]), load_partial(final_block, partials[1])
        deviation = arith.SubfOp(piece_mean, mean)
        squared = arith.MulfOp(deviation.result, deviation.result)
        length = _constant(piece, mid)
        weighted = arith.MulfOp(squared.result, length.result)
        term = arith.AddfOp(piece_m2, weighted.result)
        m2 = buffer.ReduceOp("sum", term.result, [mid])
        final_block.add_ops([deviation, squared, length, weighted, term, m2])
        combined = [mean, m2.results[0]]
    else:
        combined = [mean_of_pieces(final_block)]
    weight = _constant(rnumel, mid)
    final_block.add_op(weight)
    combined.append(weight.result)
    return [*nodes, _final_node(node, reduce, final_block, combined, split)]


@dataclass(frozen=True)
class SplitReductionsPass(ModulePass):
    """Split long reductions with few outputs into a partial and a final reduction (two kernels)."""

    name = "split-reductions"
    ACCEPTS: ClassVar[tuple[str, ...]] = ("buffer",)

    num_sms: int = option(132, "streaming multiprocessors of the GPU the split sizes are for (H100 SXM: 132)")
    min_elements_per_thread: int = option(32, "the least work per thread worth a piece")
    max_elements_per_thread: int = option(512, "the most work per thread before more pieces pay off")
    enabled: bool = option(True, "false leaves every reduction whole")

    def __post_init__(self) -> None:
        if self.num_sms < 1:
            raise ValueError(f"split-reductions: num-sms must be positive, got {self.num_sms}")
        if not 1 <= self.min_elements_per_thread <= self.max_elements_per_thread:
            raise ValueError(
                "split-reductions: need 1 <= min-elements-per-thread <= max-elements-per-thread, got "
                f"{self.min_elements_per_thread} and {self.max_elements_per_thread}"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_stage(self, op)
        if not self.enabled:
            return
        target = Target(num_sms=self.num_sms)
        for graph in [g for g in op.body.block.ops if isinstance(g, buffer.GraphOp)]:
            names = {n for node in graph.nodes() for n in node.defined_names()}
            shared: list[buffer.ComputedOp] = []  # welford partials, for the graph's other nodes
            reads = {n: set(n.referenced_names()) for n in graph.nodes() if isinstance(n, buffer.BodyNode)}
            for node in [n for n in graph.nodes() if isinstance(n, buffer.ComputedOp) and n.is_reduction]:
                if (reduce := _split_candidate(node)) is None:
                    continue
                hint, split = num_splits(node, target, self.min_elements_per_thread, self.max_elements_per_thread,
                                         rows_read_again(node, reads))
                if split <= 1:
                    continue
                if reduce.kind == "welford" and int(product(node.reduction_range_exprs)) % split:
                    continue  # a masked lane would count in the piece's weight

                def fresh() -> str:
                    names.add(name := _next_free(names))
                    return name

                if reduce.kind == "welford":
                    pieces = split_welford(node, reduce, split, fresh, shared)
                else:
                    pieces = split_node(node, reduce, split, fresh())
                # The pieces keep the reduction's hint (re-deriving it from a piece's sizes
                # would give DEFAULT to the many partial rows of a column sum).
                numel = int(product(node.range_exprs))
                for piece in pieces:
                    first = len(piece.range_exprs) > len(node.range_exprs)
                    piece.attributes[HINT_ATTRIBUTE] = StringAttr(hint if first else second_step_hint(split, numel, hint))
                Rewriter.insert_op(pieces, InsertPoint.before(node))
                Rewriter.erase_op(node)
