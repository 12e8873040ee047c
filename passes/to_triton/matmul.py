"""GEMM kernels (`triton_mm_...`): a contraction and its fused epilogues as one tiled `tl.dot` kernel.

A group holding a contraction (`buffer.dot`, ranges [M, N] over [K]) runs as a `matmul` kernel:
one program per [YBLOCK, XBLOCK] tile of the output, `yindex` walking M and `xindex` walking N,
and a `triton.rloop` over K in R0_BLOCK steps that loads a tile of A (the dot's lhs, indexed
by yindex and r0_index) and of B (its rhs, by r0_index_t and xindex) and accumulates their
product; after the loop the epilogue (the contraction's own ops after its dot, then each fused
pointwise member) runs on the accumulator tile and stores it.

    %acc = triton.rloop iter_args(%a = %zero : f32) {
      %0 = triton.load %in_ptr0[r0_index + 96*yindex] mask r0_mask other 0.0 : bf16
      %1 = triton.load %in_ptr1[r0_index_t + 96*xindex] mask r0_mask_t other 0.0 : bf16
      %2 = triton.dot %0, %1 into %a ieee : bf16, bf16 -> f32
      triton.yield %2 : f32
    }
    %3 = triton.load %in_ptr2[xindex] : bf16
    ...
    triton.store %out_ptr0[xindex + 128*yindex], %7 : bf16

A batched contraction ([B, M, N] over [K]: bmm, baddbmm) is the same kernel over `znumel` B
products: each program computes one tile of product `zindex` (the grid's z), which indexes its
loads and stores like any other symbol.

A grouped contraction (`_grouped_mm`: B read at each row's group, `row_groups`) loads the rows'
groups once, before the loop, and hands them to the loop (`triton.rloop groups(%g)`), which
runs once per group among the tile's rows with B's tile read at the group; A's rows are
always masked (by their group, in a tile that straddles two). Ops of an operand's chain that K
does not move (a gathered row's position) are hoisted before the loop.

A scatter epilogue (`buffer.scatter` reading the product at its lane: a mixture of experts'
weighted combine) adds each lane's value into its base at the loaded row, a `triton.store ...
atomic_add` of the tile; the launch restores the base while the autotuner times the configs.

Each member's loop variables are read off the kernel's flat lanes (`kernel_shape.coordinates`)
with the flat output index X = N*yindex + xindex (+ M*N*zindex), so an epilogue whose loops
reorder-loops merged reads the same elements. Masks: ymask, xmask, r0_mask, r0_mask_t where the configs'
blocks do not all divide M, N, K; a masked load reads 0, and an operand computed from loads
(an inlined prologue) is zeroed past K by the dot's own masks. Configs: `launch.matmul_configs`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import sympy
from xdsl.dialects import arith
from xdsl.dialects.builtin import ArrayAttr, Float32Type, SymbolRefAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import PassFailedException

from mlc.analysis import kernel_shape as ks
from mlc.analysis.flat_index import affine_strides, simplify_index
from mlc.analysis.launch import blocks_divide, matmul_configs
from mlc.dialects import buffer, triton
from mlc.dialects.buffer_layout import LayoutAttr, element_bytes
from mlc.dialects.loops_reduce import defining_ops, row_groups
from mlc.dialects.sym import ExprAttr, symbol
from mlc.passes.to_triton.builder import XINDEX, GroupKernels, KernelBuilder, zero_of

YINDEX, ZINDEX, R0_INDEX, R0_INDEX_T = symbol("yindex"), symbol("zindex"), symbol("r0_index"), symbol("r0_index_t")
_MASK_OF = {"yindex": "ymask", "xindex": "xmask", "r0_index": "r0_mask", "r0_index_t": "r0_mask_t"}


@dataclass
class MatmulKernelBuilder(KernelBuilder):
    """A KernelBuilder for a matmul kernel: `numel` = N columns, `ynumel` = M rows, `rnumel` = K;
    a batched one's `znumel` = B products (None: not batched)."""

    ynumel: sympy.Expr = sympy.Integer(1)
    znumel: sympy.Expr | None = None
    rnumel: sympy.Expr = sympy.Integer(1)
    constant_masks: frozenset[str] = frozenset()  # the masks every config's blocks make constant
    precision: str = "ieee"
    # The K loop: its ops (`place` puts them there while `in_loop`), their CSE table, the
    # accumulator's init before it and its block argument in it, and the rloop once closed.
    loop_ops: list[Operation] = field(default_factory=list)
    loop_cse: dict[tuple, Operation] = field(default_factory=dict)
    in_loop: bool = False
    hoisted: list[Operation] = field(default_factory=list)  # ops of the K loop's members that K does not move
    groups: SSAValue | None = None  # a grouped product's group of each row (`row_groups`)
    init: Operation | None = None
    loop_block: Block = field(default_factory=lambda: Block(arg_types=[Float32Type()]))
    rloop: triton.RLoopOp | None = None

    merge_contiguous_dims = False

    # -- index symbols ---------------------------------------------------------------------------

    def flat_ranges(self) -> dict[sympy.Symbol, sympy.Expr]:
        batch = {} if self.znumel is None else {ZINDEX: self.znumel}
        return {**batch, YINDEX: self.ynumel, XINDEX: self.numel, R0_INDEX: self.rnumel, R0_INDEX_T: self.rnumel}

    def lane_trees(self):  # noqa: ANN201 (no eviction hints in a GEMM: nothing asks)
        return []

    def _index(self, expr: sympy.Expr, subst: dict[sympy.Symbol, sympy.Expr]) -> sympy.Expr:
        """`expr` over the tile's indices; one of size 1 is 0 (M = 1: every row reads row 0,
        and only row 0 is stored)."""
        ranges = self.flat_ranges()
        ones = {s: sympy.Integer(0) for s, size in ranges.items() if size == 1}
        return simplify_index(sympy.expand(expr.xreplace(subst).xreplace(ones)), ranges)

    def coordinates(self, node: buffer.ComputedOp, k_index: sympy.Symbol) -> dict[sympy.Basic, sympy.Expr]:
        """The node's loop variables over (zindex,) yindex, xindex and the K index of the tile it
        loads: the contraction's own i0, i1 (i2), r0_0 directly, an epilogue's through the flat
        output index X = M*N*zindex + N*yindex + xindex (its loops may be merged)."""
        tile = [YINDEX, XINDEX] if self.znumel is None else [ZINDEX, YINDEX, XINDEX]
        if node.is_contraction:
            return {**{symbol(f"i{d}"): v for d, v in enumerate(tile)}, symbol("r0_0"): k_index}
        outputs = self.ynumel * self.numel
        shape = ks.KernelShape(outputs * (self.znumel or 1), self.rnumel)
        where = ks.coordinates(node, shape)
        if where is None:
            raise PassFailedException(f"convert-to-triton: '{node.buffer.data}' does not run over the GEMM's outputs")
        flat = self.numel * YINDEX + XINDEX + (0 if self.znumel is None else outputs * ZINDEX)
        lanes = {ks.X: flat, ks.R: k_index}
        return {v: self._index(e, lanes) for v, e in where.items()}

    # -- members -----------------------------------------------------------------------------------

    def add_member(self, node: buffer.ComputedOp) -> None:
        dot = node.dot_op()
        if dot is None:
            if node.is_reduction:
                raise PassFailedException(f"convert-to-triton: reduction '{node.buffer.data}' in a GEMM's kernel")
            self._convert(node, list(node.body.block.ops), self.coordinates(node, R0_INDEX), {})
            return
        lhs, rhs = defining_ops(dot.lhs), defining_ops(dot.rhs)
        values: dict[SSAValue, SSAValue] = {}
        grouping: set[Operation] = set()  # a grouped product's ops giving each row's group
        for group in row_groups(dot, len(node.range_exprs)):
            grouping |= defining_ops(group.results[0])
            start = len(self.ops)
            self._convert(node, [op for op in node.body.block.ops if op in grouping], self.coordinates(node, R0_INDEX), values)
            self.hoisted += self.ops[start:]  # before the loop, which runs once per group (even for M = 1,
            del self.ops[start:]  # where the load is of a scalar, which stays where it is used otherwise)
            self.groups = values[group.results[0]]
        self._start_loop()
        self._convert(node, [op for op in node.body.block.ops if op in lhs], self.coordinates(node, R0_INDEX), values)
        self._convert(node, [op for op in node.body.block.ops if op in rhs - grouping], self.coordinates(node, R0_INDEX_T),
                      values)
        masks = [mask for mask, v in (("r0_mask", dot.lhs), ("r0_mask_t", dot.rhs))
                 if mask not in self.constant_masks and not _masked_load(values[v], mask)]
        step = triton.DotOp(values[dot.lhs], values[dot.rhs], self.loop_block.args[0], masks, self.precision)
        self.loop_ops.append(step)
        self.in_loop = False
        values[dot.result] = self._end_loop(step.result)
        after = [op for op in node.body.block.ops if op not in lhs and op not in rhs and op is not dot]
        self._convert(node, after, self.coordinates(node, R0_INDEX), values)

    def _convert(self, node: buffer.ComputedOp, ops: Sequence[Operation], subst: dict, values: dict) -> None:
        for op in ops:
            self.convert_op(node, op, subst, values)

    def _start_loop(self) -> None:
        if self.init is not None:
            raise PassFailedException("convert-to-triton: two contractions in one GEMM kernel")
        self.init = arith.ConstantOp(zero_of(Float32Type()))
        self.in_loop = True

    def _end_loop(self, last: SSAValue) -> SSAValue:
        """Close the K loop, yielding `last`; its result is the accumulated tile."""
        self.loop_block.add_ops([*self.loop_ops, triton.YieldOp([last])])
        assert self.init is not None
        self.rloop = triton.RLoopOp([self.init.results[0]], Region(self.loop_block), self.groups)
        return self.rloop.results[0]

    def place(self, new: Operation) -> None:
        (self.loop_ops if self.in_loop else self.ops).append(new)

    def append(self, new: Operation) -> Operation:
        """As the builder's, with one table per side of the loop (a value of the loop does not
        outlive it). An op of an operand's chain that K does not move (a gathered row's
        position, `idx[yindex]`) runs once, before the loop."""
        if not self.in_loop:
            return super().append(new)
        if self._loop_invariant(new):
            self.in_loop = False
            try:
                kept = super().append(new)
            finally:
                self.in_loop = True
            if kept is new:
                self.ops.remove(new)
                self.hoisted.append(new)
            return kept
        outer, self.cse = self.cse, self.loop_cse
        try:
            return super().append(new)
        finally:
            self.loop_cse, self.cse = self.cse, outer

    def _loop_invariant(self, new: Operation) -> bool:
        if isinstance(new, triton.DotOp) or any(o.owner in self.loop_ops or o in self.loop_block.args
                                                for o in new.operands):
            return False
        names = set(getattr(new, "masks", ()))
        for attr in new.properties.values():
            if isinstance(attr, ExprAttr):
                names |= {s.name for s in attr.expr.free_symbols}
        if isinstance(new, triton.LoadOp) and not new.indirect and not names & {"yindex", "xindex", "zindex"}:
            return False  # a scalar: the emitter shapes it where it is used
        return not names & {"r0_index", "r0_index_t", "r0_mask", "r0_mask_t"}

    # -- masks -------------------------------------------------------------------------------------

    def load_masks(self, index: sympy.Expr, indirect: Sequence[SSAValue] = ()) -> list[str]:
        """The masks of the index's own symbols, and those the loaded positions were read
        under: a gathered row of A (`x[idx] @ w`) is masked by the rows' mask, and its tile
        keeps A's shape, [YBLOCK, R0_BLOCK]."""
        names = {s.name for s in index.free_symbols}
        inherited = set().union(*(_masks_under(v) for v in indirect if v is not self.groups))
        return [m for k, m in _MASK_OF.items()
                if (k in names or m in inherited) and m not in self.constant_masks]

    def store_masks(self, index: sympy.Expr, indirect: Sequence[SSAValue] = ()) -> list[str]:
        """Every tile mask that is not constant: a lane past M or N stores nothing, even where
        its index does not move along that side (M = 1)."""
        return [m for m in ("ymask", "xmask") if m not in self.constant_masks]

    def load_other(self, op: buffer.LoadOp, index: sympy.Expr, masks: list[str]) -> Attribute | None:
        return zero_of(op.result.type) if masks or op.mask is not None else None

    def eviction(self, node: buffer.ComputedOp, name: str, index: sympy.Expr) -> str | None:
        return None

    # -- the kernel --------------------------------------------------------------------------------

    def body_ops(self) -> list[Operation]:
        if self.init is None or self.rloop is None:
            raise PassFailedException("convert-to-triton: a GEMM kernel without its contraction")
        return [self.init, *self.hoisted, self.rloop, *self.ops]

    def kernel_op(
        self, name: str, body: Region, origins: Sequence[str], configs: Sequence[triton.ConfigAttr]
    ) -> triton.KernelOp:
        return triton.KernelOp(name, "matmul", self.numel, body, self.rnumel, origins, configs, self.ynumel, self.znumel)


def _masks_under(value: SSAValue) -> set[str]:
    """The tile masks of the ops `value` is computed from (a loaded position's load)."""
    return {m for op in defining_ops(value) if isinstance(op, triton.MaskedBodyOp) for m in op.masks}


def _masked_load(value: SSAValue, mask: str) -> bool:
    """`value` is a load that reads 0 where `mask` is off (an index along K that simplified
    away, K = 1 say, leaves the load unmasked: the dot masks it)."""
    return isinstance(value.owner, triton.LoadOp) and mask in value.owner.masks


def tile_loads(value: SSAValue) -> list[buffer.LoadOp]:
    """The loads whose values make up an operand's tile (its own and a prologue's reads), not
    those that only say where to read (a gather's row positions, a grouped product's groups):
    a load's operands are positions and masks, so the walk stops at each load."""
    loads: list[buffer.LoadOp] = []
    seen: set[Operation] = set()
    pending = [value]
    while pending:
        owner = pending.pop().owner
        if not isinstance(owner, Operation) or owner in seen:
            continue
        seen.add(owner)
        if isinstance(owner, buffer.LoadOp):
            loads.append(owner)
        else:
            pending.extend(owner.operands)
    return loads


def build_matmul_kernel(
    members: Sequence[buffer.ComputedOp],
    layouts: dict[str, LayoutAttr],
    roots: dict[str, str],
    local: set[str],
    tf32: bool = False,
    autotune: bool = True,
    check_indices: bool = False,
) -> GroupKernels:
    """The kernel of a group holding a contraction, with its configs."""
    dot = next(m for m in members if m.is_contraction)
    *batch, m, n = dot.range_exprs
    k = dot.reduction_range_exprs[0]
    contraction = dot.dot_op()
    assert contraction is not None
    operand = contraction.lhs.type
    # The tiles' shared memory holds what the loop loads: an inlined prologue's wider reads (a
    # bf16 operand cast from f32) take more of it than the operand's type says.
    loaded = [load.result.type for value in (contraction.lhs, contraction.rhs) for load in tile_loads(value)]
    configs = matmul_configs(m, n, k, max(map(element_bytes, [operand, *loaded])), autotune)
    blocks = {name: [c.block_sizes[b] for c in configs] for name, b in
              (("ymask", "YBLOCK"), ("xmask", "XBLOCK"), ("r0_mask", "R0_BLOCK"), ("r0_mask_t", "R0_BLOCK"))}
    sizes = {"ymask": m, "xmask": n, "r0_mask": k, "r0_mask_t": k}
    constant = frozenset(name for name, size in sizes.items() if blocks_divide(size, blocks[name]))
    if row_groups(contraction, len(dot.range_exprs)):  # A's rows are masked by their group too (0 past it)
        constant -= {"ymask"}
    precision = "tf32" if tf32 and isinstance(operand, Float32Type) else "ieee"
    znumel = batch[0] if batch else None
    builder = MatmulKernelBuilder(n, layouts, roots, local, check_indices=check_indices, ynumel=m, rnumel=k,
                                  znumel=znumel, constant_masks=constant, precision=precision)
    for member in [dot, *(x for x in members if x is not dot)]:
        builder.add_member(member)
    kernel = builder.build("", sorted({o for x in members for o in x.origin_names}), [])
    kernel.properties["configs"] = ArrayAttr(configs)
    return GroupKernels([kernel], builder.launch_args(), n, k, m, znumel=znumel)


# ---------------------------------------------------------------------------------------------
# The same work unfused: cuBLAS, then the epilogue as its own kernel


@dataclass
class Unfused:
    """A GEMM group's work without its fused kernel: `prologues` computing the operands that are
    not plain strided reads into buffers of their own (each a pointwise kernel), `views` of the
    others as the contraction reads them, and the `call` of aten's mm (or addmm) writing
    `product`, then the group's `members` with the contraction made a pointwise that reads the
    product and runs its epilogue. Where the epilogue is only a bias add and the store, the call
    writes the group's output itself (`out=`) and `members` is empty: cuBLAS does it all."""

    prologues: list[buffer.ComputedOp]
    views: list[triton.ViewOp]
    call: triton.ExternOp
    product: str
    product_layout: LayoutAttr
    members: list[buffer.ComputedOp]


def group_ends(node: buffer.ComputedOp, producers: dict[str, buffer.ComputedOp]) -> str | None:
    """The groups' ends (`offs`) a grouped product's row groups were counted from: the buffer
    `lower-aten` made its group of each row from, a sum over [G] of `offs[r0_0] <= i0`; None
    where the groups come from anything else."""
    dot = node.dot_op()
    positions = [] if dot is None else row_groups(dot, len(node.range_exprs))
    if len(positions) != 1 or not isinstance(load := positions[0].value.owner, buffer.LoadOp):
        return None
    counted = producers.get(load.buffer_name)
    if counted is None or not counted.is_reduction or counted.reduction_range_exprs != [positions[0].size.expr]:
        return None
    ops = list(counted.body.block.ops)
    reads = [op for op in ops if isinstance(op, buffer.LoadOp)]
    at_most = arith.CMPI_COMPARISON_OPERATIONS.index("sle")
    counts = any(isinstance(op, arith.CmpiOp) and op.predicate.value.data == at_most for op in ops)
    sums = any(isinstance(op, buffer.ReduceOp) and op.reduction_type.data == "sum" for op in ops)
    if len(reads) != 1 or reads[0].index.expr != symbol("r0_0") or not (counts and sums):
        return None
    return reads[0].buffer_name


def unfused(members: Sequence[buffer.ComputedOp], roots: dict[str, str], ends: str | None = None) -> Unfused | None:
    """The group as cuBLAS plus pointwise kernels: an operand computed in the K loop (a
    prologue: a cast, a reshape of a transpose) is first stored by its own kernel. A grouped
    product's is torch's `_grouped_mm` of A, B's [G, K, N] and the groups' `ends` (`group_ends`),
    into a fresh product (it has no `out=`) that the epilogue's kernel reads; None where B
    is not a strided read at the group."""
    node = next(m for m in members if m.is_contraction)
    dot = node.dot_op()
    assert dot is not None
    *batch, m, n = node.range_exprs
    k = node.reduction_range_exprs[0]
    *z, i, j = (symbol(f"i{d}") for d in range(len(node.range_exprs)))
    r0 = symbol("r0_0")
    name = node.buffer.data
    operands: list[triton.ViewOp | buffer.ComputedOp] = []
    groups = row_groups(dot, len(node.range_exprs))
    rhs: tuple[list[sympy.Expr], list[sympy.Expr]] = ([*z, r0, j], [*batch, k, n])
    if groups:  # B's matrix of each row's group: the view of all G
        rhs = ([symbol("ind0"), r0, j], [groups[0].size.expr, k, n])
    for value, variables, sizes, suffix in ((dot.lhs, [*z, i, r0], [*batch, m, k], "lhs"),
                                            (dot.rhs, *rhs, "rhs")):
        operand = _operand_view(value, variables, sizes, f"{name}_{suffix}", roots, loaded=bool(groups) and suffix == "rhs")
        if operand is None and groups and suffix == "rhs":
            return None
        operands.append(operand or _prologue(node, value, variables, sizes, f"{name}_{suffix}"))
    prologues = [o for o in operands if isinstance(o, buffer.ComputedOp)]
    views = [o for o in operands if isinstance(o, triton.ViewOp)]
    dtype = dot.lhs.type
    product, layout = f"{name}_mm", LayoutAttr([*batch, m, n], None, dtype)
    args = [SymbolRefAttr(o.buffer.data) for o in operands]
    mm = "bmm.default" if batch else "mm.default"
    if groups:
        assert ends is not None
        if any(isinstance(o, triton.ViewOp) and 1 not in o.layout.strides[-2:] for o in operands):
            return None  # torch's CUDA kernel reads each operand along one of its last two dims
        call = triton.ExternOp([product], [layout], "_grouped_mm.default", [*args, SymbolRefAttr(ends)], fresh=True)
        return _epilogue_after(node, dot, members, prologues, views, call, product, layout)
    if len(members) == 1 and (direct := _cublas_epilogue(node, dot, layout, roots)) is not None:
        bias = [direct] if isinstance(direct, triton.ViewOp) else []
        call = triton.ExternOp([product], [layout], "addmm.default" if bias else mm,
                               [SymbolRefAttr(v.buffer.data) for v in bias] + args, {"out": SymbolRefAttr(name)})
        return Unfused(prologues, [*views, *bias], call, product, layout, [])
    call = triton.ExternOp([product], [layout], mm, args, fresh=True)
    return _epilogue_after(node, dot, members, prologues, views, call, product, layout)


def _epilogue_after(node: buffer.ComputedOp, dot: buffer.DotOp, members: Sequence[buffer.ComputedOp],
                    prologues: list[buffer.ComputedOp], views: list[triton.ViewOp], call: triton.ExternOp,
                    product: str, layout: LayoutAttr) -> Unfused:
    """The extern `call` writing `product`, then the members with the contraction a pointwise
    reading the product and running its epilogue."""
    *z, i, j = (symbol(f"i{d}") for d in range(len(node.range_exprs)))
    name, dtype = node.buffer.data, dot.lhs.type
    block = Block()
    read = buffer.LoadOp(product, layout.flat_index([*z, i, j]), dtype)
    block.add_op(read)
    value = read.result
    if dtype != dot.result.type:
        widen = arith.ExtFOp(value, dot.result.type)
        block.add_op(widen)
        value = widen.result
    chains = defining_ops(dot.lhs) | defining_ops(dot.rhs)
    mapping: dict[SSAValue, SSAValue] = {dot.result: value}
    for op in node.body.block.ops:
        if op not in chains and op is not dot:
            block.add_op(op.clone(value_mapper=mapping))
    pointwise = buffer.ComputedOp(name, node.layout, node.range_exprs, Region(block), origins=node.origin_names)
    rest = [pointwise if x is node else x for x in members]
    return Unfused(prologues, views, call, product, layout, rest)  # type: ignore[arg-type]


def _prologue(node: buffer.ComputedOp, value: SSAValue, variables: list[sympy.Symbol], sizes: list[sympy.Expr],
              name: str) -> buffer.ComputedOp:
    """A pointwise over the operand's own dims ([B,] M, K or [B,] K, N), storing row major into
    `name` what the contraction's body computes for `value` in its K loop: the ops that compute
    it, with K's variable r0_0 renamed to the operand dim's loop variable."""
    loop_variables = [symbol(f"i{d}") for d in range(len(sizes))]
    k_position = variables.index(symbol("r0_0"))
    rename = {symbol("r0_0"): loop_variables[k_position]}
    chain = defining_ops(value)
    mapping: dict[SSAValue, SSAValue] = {}
    block = Block()
    for op in node.body.block.ops:
        if op in chain:
            copy = op.clone(value_mapper=mapping)
            for key, attr in list(copy.properties.items()):
                if isinstance(attr, ExprAttr):
                    copy.properties[key] = ExprAttr(attr.expr.xreplace(rename))
            block.add_op(copy)
    layout = LayoutAttr(sizes, None, value.type)
    block.add_op(buffer.StoreOp(name, layout.flat_index(loop_variables), mapping.get(value, value)))
    return buffer.ComputedOp(name, layout, sizes, Region(block), origins=node.origin_names)


def _cublas_epilogue(node: buffer.ComputedOp, dot: buffer.DotOp, product: LayoutAttr,
                     roots: dict[str, str]) -> triton.ViewOp | bool | None:
    """Whether cuBLAS does the contraction's whole epilogue, writing its output as mm does (the
    `product` layout: row major, the operands' dtype): True where the epilogue is only the
    store (mm, bmm), the view of the bias where it adds one, rounding once (addmm); None where
    it does more."""
    variables = [symbol(f"i{d}") for d in range(len(node.range_exprs))]
    if node.layout != product:
        return None
    chains = defining_ops(dot.lhs) | defining_ops(dot.rhs)
    kinds: dict[SSAValue, str] = {dot.result: "acc"}  # what each value is: the product, the bias, or their sum
    bias: buffer.LoadOp | None = None
    for op in node.body.block.ops:
        if op in chains or op is dot:
            continue
        if isinstance(op, buffer.LoadOp) and bias is None and op.mask is None and not op.indirect:
            bias, kinds[op.result] = op, "bias"
        elif isinstance(op, (arith.ExtFOp, arith.TruncFOp)) and op.input in kinds:
            kinds[op.result] = kinds[op.input]
        elif isinstance(op, arith.AddfOp) and {kinds.get(op.lhs), kinds.get(op.rhs)} == {"acc", "bias"}:
            kinds[op.result] = "acc+bias"
        elif isinstance(op, buffer.StoreOp) and op.buffer_name == node.buffer.data and op.mode is None and not op.indirect:
            done = kinds.get(op.value) == ("acc+bias" if bias else "acc") and op.value.type == dot.lhs.type
            ranges = dict(zip(variables, node.range_exprs))
            if not done or simplify_index(op.index.expr - product.flat_index(variables), ranges) != 0:
                return None
        else:
            return None
    if bias is None:
        return True
    if len(variables) != 2:  # baddbmm's bias: the epilogue kernel adds it
        return None
    (m, n), (i0, i1) = node.range_exprs, variables
    strided = affine_strides(bias.index.expr, [i0, i1])
    if strided is None or bias.result.type != dot.lhs.type:
        return None
    offset, (s0, s1) = strided
    source = roots.get(bias.buffer_name, bias.buffer_name)
    row = LayoutAttr([n], [s1], bias.result.type, offset) if s0 == 0 else LayoutAttr([m, n], [s0, s1], bias.result.type, offset)
    return triton.ViewOp(f"{node.buffer.data}_bias", source, row)


def _operand_view(value: SSAValue, variables: list[sympy.Symbol], sizes: list[sympy.Expr], name: str,
                  roots: dict[str, str], loaded: bool = False) -> triton.ViewOp | None:
    """The operand as a strided view of its buffer, if a plain load; `loaded`: at one loaded
    position (`ind0`, among `variables`: a grouped product's B at the row's group)."""
    load = value.owner
    if not isinstance(load, buffer.LoadOp) or load.mask is not None or len(load.indirect) != int(loaded):
        return None
    strided = affine_strides(load.index.expr, variables)
    if strided is None:
        return None
    offset, strides = strided
    source = roots.get(load.buffer_name, load.buffer_name)
    return triton.ViewOp(name, source, LayoutAttr(sizes, strides, value.type, offset))
