"""Reduction kernels (`triton_per_...`, `triton_red_...`): a group holding reductions.

A group holding a reduction becomes one kernel over `xnumel` kept elements (the product of its
ranges) and `r0_numel` reduced ones (the product of its reduce ranges). x tiles are
`[XBLOCK, 1]`, r tiles `[1, R0_BLOCK]`; each kept dimension gets an index symbol over xindex
(`x0 = xindex`) and each reduced one over r0_index (`r0_0 = ModularIndexing(r0_index, 1, 9)`).

* Persistent (`triton_per_...`, kind `persistent_reduction`) when r0_numel is static and at
  most `persistent_threshold` (1024, Inductor's threshold for INNER reductions; 64 for OUTER
  ones, as Inductor's: `analysis/launch.py: use_persistent_reduction`): one
  R0_BLOCK = next_pow2(r0_numel) slice holds the whole row; `triton.reduce` reduces it.
* Both over a symbolic r0_numel, unless it exceeds the bound at every size
  (`persistent_up_to_limit`): the launch runs the persistent kernel up to the bound and the
  looped one above it, as a static compile at each size would (Inductor always loops there).
  The persistent kernel takes R0_BLOCK at launch; its configs are those of each power of two
  up to the bound, R0_BLOCK in each (`persistent_reduction_configs_up_to`).
* Looped (`triton_red_...`, kind `reduction`) otherwise: a `triton.rloop` over R0_BLOCK slices
  carries accumulators that `triton.accumulate` updates lane by lane; `triton.reduce` combines
  the lanes after the loop. Ops that do not vary along r0 and come before any reduction (x-only
  loads, constants, accumulator inits) are hoisted before the loop; the epilogue (ops on
  reduced values) and the store of the result follow it.
* Masks: `r0_mask` on what uses a reduction index, `xmask` on what uses a kept one, each
  dropped where constant (`launch.constant_masks`): where every XBLOCK of the kernel's configs
  divides xnumel, and every R0_BLOCK r0_numel (a persistent kernel's R0_BLOCK is
  next_pow2(r0_numel)). The configs are chosen from a first build (they count its loads); a
  kernel they make maskless is built again without the masks. A masked load that uses r0 reads
  `other` = the identity of the reduction it feeds (0.0 otherwise); `triton.reduce` and
  `triton.accumulate` ignore masked lanes in any case.
* Welford: looped kernels carry (mean, m2, weight) accumulators; persistent ones use Inductor's
  two-pass fallback: sum -> mean = sum / r0_numel, then the sum of squared deviations.
* fp16/bf16 values are reduced in f32 (`arith.extf` first, `arith.truncf` of the result).
* Eviction: broadcast and uncoalesced loads `evict_last`; other loads of the reduction
  `evict_first`, or `evict_last` when the buffer is read again later in the kernel.
* Fused groups: reductions of one (xnumel, r0_numel), pointwise members over xnumel (run on
  the reduced columns) or over xnumel * r0_numel (split into (x, r0) at a dimension boundary).
  A reduced value feeding another reduction runs in the loop after the one that reduced it
  (one loop per level of reductions the group chains); a load a later loop needs again is run
  again there.

Configs come from `analysis/launch.py` (`runtime/triton_heuristics.py`):
`persistent_reduction_configs` (XBLOCK in 1, 8, 32, 128 with XBLOCK * R0_BLOCK <= 4096, narrowed
by the reduction hint; R0_BLOCK is fixed, not in the configs) and `reduction_configs`
(contiguous / outer / tiny / three fixed shapes, chosen by the hint), for the pass's `Target`;
the hint is `launch.kernel_hint`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import sympy
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    BFloat16Type,
    Float16Type,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    f32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import PassFailedException

from mlc.analysis.kernel_shape import KernelShape, split_point
from mlc.analysis.launch import (
    Target,
    constant_masks,
    kernel_access_hint,
    kernel_hint,
    persistent_reduction_configs,
    persistent_reduction_configs_up_to,
    persistent_up_to_limit,
    product,
    reduction_configs,
    use_persistent_reduction,
)
from mlc.dialects import buffer, triton
from mlc.dialects.buffer_layout import LayoutAttr
from mlc.dialects.sym import equal, expr_str, is_size_symbol, symbol
from mlc.passes.to_triton.builder import XINDEX, GroupKernels, IndexRegistry, KernelBuilder, index_length, zero_of

R0_INDEX = symbol("r0_index")
INT64_MAX = 2**63 - 1


def _is_half(t: Attribute) -> bool:
    return isinstance(t, (Float16Type, BFloat16Type))


def _number(value: int | float, t: Attribute) -> Attribute:
    if isinstance(t, AnyFloat):
        return FloatAttr(float(value), t)  # type: ignore[arg-type]
    return IntegerAttr(int(value), t)  # type: ignore[arg-type]


def _constant(value: int | float, t: Attribute) -> arith.ConstantOp:
    return arith.ConstantOp(_number(value, t))


def _result_types(kind: str, t: Attribute) -> list[Attribute]:
    if kind in ("argmax", "argmin"):
        return [i64]
    return [t] * 3 if kind == "welford" else [t]


def _reduction_feeds(node: buffer.ComputedOp) -> dict[SSAValue, set[str]]:
    """For each value of the body, the kinds of the reductions it flows into."""
    feeds: dict[SSAValue, set[str]] = {}
    for op in reversed(list(node.body.block.ops)):
        kinds: set[str] = set()
        if isinstance(op, buffer.ReduceOp):
            kinds.add(op.kind)
        for result in op.results:
            kinds |= feeds.get(result, set())
        for operand in op.operands:
            feeds.setdefault(operand, set()).update(kinds)
    return feeds


@dataclass
class RLoop:
    """One loop of a looped kernel: its accumulators, and the ops it must run (`roots`: the
    accumulations and stores of its level; what they need is found at build time)."""

    block: Block = field(default_factory=Block)  # its arguments are the accumulators
    inits: list[SSAValue] = field(default_factory=list)
    yields: list[SSAValue] = field(default_factory=list)
    finals: Block = field(default_factory=Block)  # stand-ins for the loop's results
    roots: list[Operation] = field(default_factory=list)


@dataclass
class ReductionKernelBuilder(KernelBuilder):
    """A KernelBuilder for a group holding reductions: x and r0 index symbols, per-symbol masks,
    reductions, and (looped) the placement of each op before, in or after the loop."""

    rnumel: sympy.Expr = sympy.Integer(1)
    merge_contiguous_dims = False
    persistent: bool = True
    r_vars: IndexRegistry = field(default_factory=dict)
    # Looped: ops that do not vary along r0, by level (0: before the first loop; k: after loop
    # k - 1), and the ops that do, in creation order, each run in the loops that need it.
    segments: dict[int, list[Operation]] = field(default_factory=dict)
    varying_ops: list[Operation] = field(default_factory=list)
    loops: dict[int, RLoop] = field(default_factory=dict)  # level -> the loop of that level
    varies: set[SSAValue] = field(default_factory=set)  # values that vary along r0
    reduced: dict[tuple[str, SSAValue], list[SSAValue]] = field(default_factory=dict)  # (kind, value) -> results
    level: dict[SSAValue, int] = field(default_factory=dict)  # how many reductions a value is past
    feeds: dict[SSAValue, set[str]] = field(default_factory=dict)
    reads_left: Counter = field(default_factory=Counter)  # loads of each buffer still to convert
    in_reduction: bool = False
    rereads: dict[Operation, list[Operation]] = field(default_factory=dict)  # a load -> its runs, loop by loop
    # The XBLOCKs and R0_BLOCKs of the kernel's configs, once chosen: a mask is constant when
    # every block divides its size. Empty: decided by the Target's largest blocks.
    x_blocks: tuple[int, ...] = ()
    r_blocks: tuple[int, ...] = ()

    @property
    def x_names(self) -> set[str]:
        return {name for name, _ in self.index_vars.values()}

    @property
    def r_names(self) -> set[str]:
        return {name for name, _ in self.r_vars.values()}

    def masks_for(self, uses_x: bool, uses_r: bool) -> list[str]:
        x_constant, r_constant = constant_masks(
            self.numel, self.rnumel, self.persistent, self.x_blocks, self.r_blocks, self.target
        )
        return [*(["r0_mask"] if uses_r and not r_constant else []), *(["xmask"] if uses_x and not x_constant else [])]

    def definitions(self) -> list[tuple[str, sympy.Expr]]:
        return [*self.index_vars.values(), *self.r_vars.values()]

    def flat_ranges(self) -> dict[sympy.Symbol, sympy.Expr]:
        return {XINDEX: self.numel, R0_INDEX: self.rnumel}

    def _uses(self, index: sympy.Expr) -> tuple[bool, bool]:
        names = {s.name for s in index.free_symbols}
        return bool(names & self.x_names), bool(names & self.r_names)

    # -- members -------------------------------------------------------------------------------

    def count_reads(self, members: Sequence[buffer.ComputedOp]) -> None:
        for m in members:
            reads = {(op.buffer_name, op.index.expr) for op in m.body.walk() if isinstance(op, buffer.LoadOp)}
            self.reads_left.update(self.roots.get(name, name) for name, _ in reads)

    def add_member(self, node: buffer.ComputedOp) -> None:
        ranges, rranges = node.range_exprs, node.reduction_range_exprs
        xvars = [symbol(f"i{k}") for k in range(len(ranges))]
        if node.is_reduction:
            subst = self.name_dims(ranges, xvars)
            rvars = [symbol(f"r0_{k}") for k in range(len(rranges))]
            subst |= self.name_dims(rranges, rvars, R0_INDEX, "r0_", self.r_vars)
        elif equal(product(ranges), self.numel):
            subst = self.name_dims(ranges, xvars)
        else:
            split = split_point(ranges, KernelShape(self.numel, self.rnumel))
            if split is None:
                raise PassFailedException(
                    f"convert-to-triton: '{node.buffer.data}' ({expr_str(product(ranges))} elements) does not tile as "
                    f"{expr_str(self.numel)} x {expr_str(self.rnumel)} with the reduction it is fused with"
                )
            subst = self.name_dims(ranges[:split], xvars[:split])
            subst |= self.name_dims(ranges[split:], xvars[split:], R0_INDEX, "r0_", self.r_vars)
        self.feeds = _reduction_feeds(node)
        self.in_reduction = node.is_reduction
        values: dict[SSAValue, SSAValue] = {}
        seen: set[tuple[str, sympy.Expr]] = set()
        for op in node.body.block.ops:
            if isinstance(op, buffer.LoadOp) and (op.buffer_name, op.index.expr) not in seen:
                seen.add((op.buffer_name, op.index.expr))
                self.reads_left[self.roots.get(op.buffer_name, op.buffer_name)] -= 1
            self.convert_op(node, op, subst, values)

    # -- loads and stores ----------------------------------------------------------------------

    def load_masks(self, index: sympy.Expr, indirect: Sequence[SSAValue] = ()) -> list[str]:
        """The masks of the dims the index walks; a loaded position may come from any x lane,
        and from any r lane where it varies along the reduction."""
        uses_x, uses_r = self._uses(index)
        if indirect:
            uses_x, uses_r = True, uses_r or any(v in self.varies for v in indirect)
        return self.masks_for(uses_x, uses_r)

    def load_other(self, op: buffer.LoadOp, index: sympy.Expr, masks: list[str]) -> Attribute | None:
        """A masked buffer.load reads 0; a masked load along r0 reads the identity of the
        reduction it feeds (one identity for all of them, else 0)."""
        if op.mask is not None:
            return zero_of(op.result.type)
        if not masks or not (self._uses(index)[1] or "r0_mask" in masks):
            return None
        t = op.result.type
        identities = {triton.reduction_identity(k, t) for k in self.feeds.get(op.result, set())}
        if len(identities) != 1:
            return zero_of(t)
        return _number(identities.pop(), t)

    def eviction(self, node: buffer.ComputedOp, name: str, index: sympy.Expr) -> str | None:
        uses_x, uses_r = self._uses(index)
        if not (self.in_reduction or uses_r):
            return super().eviction(node, name, index)
        if self._is_broadcast_2d(index) or not self._has_unit_stride(index):
            return "evict_last"
        return "evict_last" if uses_r and self.reads_left[name] > 0 else "evict_first"

    def _is_broadcast_2d(self, index: sympy.Expr) -> bool:
        names = {s.name for s in index.free_symbols}
        for numel, registry in ((self.numel, self.index_vars), (self.rnumel, self.r_vars)):
            covered: sympy.Expr = sympy.Integer(1)
            for var, expr in registry.values():
                if var in names:
                    covered = covered * index_length(expr, numel)
            if not equal(numel, covered):
                return True
        return False

    def _has_unit_stride(self, index: sympy.Expr) -> bool:
        """Some index symbol moves the address by exactly one element (Inductor's is_coalesced)."""
        symbols = sorted((s for s in index.free_symbols if not is_size_symbol(s.name)), key=lambda s: s.name)
        zero = {s: sympy.Integer(0) for s in symbols}
        base = index.xreplace(zero)  # xreplace: a structural substitution, far cheaper than subs
        for s in symbols:
            step = index.xreplace({**zero, s: sympy.Integer(1)}) - base
            if not step.is_Integer or int(step) == 1:
                return True
        return False

    # -- reductions ----------------------------------------------------------------------------

    def reduce(self, node: buffer.ComputedOp, op: buffer.ReduceOp, values: dict[SSAValue, SSAValue]) -> None:
        kind = op.kind
        value = values[op.value]
        if _is_half(value.type):  # reduce 16-bit floats in f32 (Inductor's upcast)
            value = self.append(arith.ExtFOp(value, f32)).results[0]
        masks = self.masks_for(True, True)
        if (kind, value) in self.reduced:  # fused nodes reducing one value (var_mean's mean
            results = self.reduced[(kind, value)]  # and m2 pieces): one accumulator
        elif self.persistent and kind == "welford":
            results = self._welford_two_pass(value, masks)
        elif self.persistent:
            types = _result_types(kind, value.type)
            results = list(self.append(triton.ReduceOp(kind, [value], types, masks)).results)
        else:
            results = self._looped(kind, value, masks)
        self.reduced[(kind, value)] = results
        for old, new in zip(op.results, results):
            if new.type != old.type:  # back to the reduction's own type (f16 from f32)
                new = self.append(arith.TruncFOp(new, old.type)).results[0]
            values[old] = new

    def _welford_two_pass(self, value: SSAValue, masks: list[str]) -> list[SSAValue]:
        """Inductor's welford_reduce_fallback: mean = sum / n, m2 = sum((v - mean)^2), weight = n."""
        t = value.type
        total = self.append(triton.ReduceOp("sum", [value], [t], masks)).results[0]
        if self.rnumel.is_Integer:
            count = self.append(_constant(int(self.rnumel), t)).results[0]
        else:  # a symbolic r0_numel: the kernel's sizes give it
            n = self.append(triton.ExprOp(self.rnumel, i64)).results[0]
            count = self.append(arith.SIToFPOp(n, t)).results[0]
        mean = self.append(arith.DivfOp(total, count)).results[0]
        delta = self.append(arith.SubfOp(value, mean)).results[0]
        square = self.append(arith.MulfOp(delta, delta)).results[0]
        m2 = self.append(triton.ReduceOp("sum", [square], [t], masks)).results[0]
        return [mean, m2, count]

    def _looped(self, kind: str, value: SSAValue, masks: list[str]) -> list[SSAValue]:
        """Accumulators (inits before the loops), one triton.accumulate in the loop of the
        value's level, triton.reduce after that loop."""
        t = value.type
        if kind in ("argmax", "argmin"):
            inits = [(triton.reduction_identity(kind, t), t), (INT64_MAX, i64)]
        elif kind == "welford":
            inits = [(0.0, t)] * 3
        else:
            inits = [(triton.reduction_identity(kind, t), t)]
        level = self.level.get(value, 0)
        loop = self.loops.setdefault(level, RLoop())
        accs = []
        for init, typ in inits:
            loop.inits.append(self.append(_constant(init, typ)).results[0])
            accs.append(loop.block.insert_arg(typ, len(loop.block.args)))
        step = self.append(triton.AccumulateOp(kind, value, accs, masks))
        loop.yields.extend(step.results)
        finals = [loop.finals.insert_arg(a.type, len(loop.finals.args)) for a in accs]
        for f in finals:
            self.level[f] = level
        return list(self.append(triton.ReduceOp(kind, finals, _result_types(kind, t))).results)

    # -- placement -----------------------------------------------------------------------------

    def place(self, new: Operation) -> None:
        level = max((self.level.get(o, 0) for o in new.operands), default=0)
        if isinstance(new, triton.ReduceOp):
            varies, level = False, level + 1
        elif isinstance(new, triton.AccumulateOp):
            varies = True
        else:
            index = new.properties.get("index") or new.properties.get("expr")
            uses_r = isinstance(index, triton.ExprAttr) and self._uses(index.expr)[1]
            varies = uses_r or any(o in self.varies for o in new.operands)
        for result in new.results:
            self.level[result] = level
            if varies:
                self.varies.add(result)
        if self.persistent:
            self.ops.append(new)
        elif not varies:
            self.segments.setdefault(level, []).append(new)
        else:
            self.varying_ops.append(new)
            if isinstance(new, (triton.AccumulateOp, triton.StoreOp)):
                self.loops.setdefault(level, RLoop()).roots.append(new)

    def _loop_body(self, loop: RLoop, emitted: set[Operation]) -> tuple[list[Operation], dict[SSAValue, SSAValue]]:
        """The varying ops `loop` needs, in creation order: an op a previous loop already runs
        is run again here (a clone: values along r0 do not outlive their loop)."""
        varying = set(self.varying_ops)
        needed: set[Operation] = set()
        stack = list(loop.roots)
        while stack:
            op = stack.pop()
            if op in needed:
                continue
            needed.add(op)
            stack += [o.owner for o in op.operands if isinstance(o.owner, Operation) and o.owner in varying]
        body: list[Operation] = []
        mapping: dict[SSAValue, SSAValue] = {}
        for op in self.varying_ops:
            if op not in needed:
                continue
            # Originals keep their operands (the closure above walks them); an op that ran in an
            # earlier loop, or reads a value this loop recomputes, runs here as a clone.
            if op in emitted or any(o in mapping for o in op.operands):
                copy = op.clone(value_mapper=mapping)
                mapping.update(zip(op.results, copy.results))
                if op in emitted and isinstance(op, triton.LoadOp):
                    _read_again(op, copy, self.rereads)
                op = copy
            else:
                emitted.add(op)
            body.append(op)
        return body, mapping

    def _rloop(self, loop: RLoop, emitted: set[Operation]) -> triton.RLoopOp:
        """The `triton.rloop` of `loop`: the r0 index symbols, the ops it runs, its yields; its
        results take the place of the stand-ins the ops after it read."""
        body, mapping = self._loop_body(loop, emitted)
        yields = triton.YieldOp([mapping.get(v, v) for v in loop.yields])
        loop.block.add_ops([*self.used_definitions(self.r_vars), *body, yields])
        rloop = triton.RLoopOp(loop.inits, Region(loop.block))
        for stand_in, result in zip(loop.finals.args, rloop.results):
            stand_in.replace_all_uses_with(result)
        return rloop

    # -- the kernel ----------------------------------------------------------------------------

    def body_ops(self) -> list[Operation]:
        """Persistent: the index symbols, then the ops. Looped: the x symbols, then by level the
        ops that do not vary along r0 and the loop of that level."""
        ops: list[Operation] = [*self.used_definitions(self.index_vars)]
        if self.persistent:
            return [*ops, *self.used_definitions(self.r_vars), *self.ops]
        emitted: set[Operation] = set()
        for level in range(max([*self.segments, *self.loops], default=0) + 1):
            ops += self.segments.get(level, [])
            if (loop := self.loops.get(level)) is not None:
                ops.append(self._rloop(loop, emitted))
        return ops

    def kernel_op(
        self, name: str, body: Region, origins: Sequence[str], configs: Sequence[triton.ConfigAttr]
    ) -> triton.KernelOp:
        kind = "persistent_reduction" if self.persistent else "reduction"
        return triton.KernelOp(name, kind, self.numel, body, self.rnumel, origins, configs)


def _read_again(load: Operation, copy: Operation, rereads: dict[Operation, list[Operation]]) -> None:
    """`copy` runs `load` again in a later loop: every earlier run keeps its lines in L2
    (evict_last, as Inductor's first loop does), the last run has the policy the load was
    given (what its last reader decided)."""
    runs = rereads.setdefault(load, [load])
    last = runs[-1].properties.get("eviction_policy")  # the latest run holds the load's own policy
    for run in runs:
        run.properties["eviction_policy"] = StringAttr("evict_last")
    if last is None:
        copy.properties.pop("eviction_policy", None)
    else:
        copy.properties["eviction_policy"] = last
    runs.append(copy)


# ---------------------------------------------------------------------------------------------
# One group


def build_reduction_kernels(
    members: Sequence[buffer.ComputedOp],
    layouts: dict[str, LayoutAttr],
    roots: dict[str, str],
    local: set[str],
    persistent_threshold: int,
    target: Target,
    check_indices: bool = False,
) -> GroupKernels:
    """The kernel(s) of a group holding reductions: persistent or looped by
    `use_persistent_reduction`; over a symbolic r0_numel, both where `persistent_up_to_limit`
    says a persistent kernel may fit."""
    reductions = [m for m in members if m.is_reduction]
    numel, rnumel = product(reductions[0].range_exprs), product(reductions[0].reduction_range_exprs)
    for m in reductions[1:]:
        n, r = product(m.range_exprs), product(m.reduction_range_exprs)
        if not equal(n, numel) or not equal(r, rnumel):
            raise PassFailedException(
                f"convert-to-triton: fused reductions iterate different (numel, r0_numel): {reductions[0].buffer.data} "
                f"({expr_str(numel)}, {expr_str(rnumel)}), {m.buffer.data} ({expr_str(n)}, {expr_str(r)})"
            )
    group = _Group(members, layouts, roots, local, numel, rnumel, kernel_hint(members, target), target, check_indices)
    limit = persistent_up_to_limit(rnumel, persistent_threshold, kernel_access_hint(members))
    if limit is not None:
        persistent, args = group.kernel(persistent=True, limit=limit)
        looped, looped_args = group.kernel(persistent=False)
        if looped_args != args:
            raise PassFailedException(
                f"convert-to-triton: the persistent and looped kernels of {reductions[0].buffer.data} take different "
                f"buffers: {args} and {looped_args}"
            )
        return GroupKernels([persistent, looped], args, numel, rnumel, persistent_max=limit)
    kernel, args = group.kernel(use_persistent_reduction(rnumel, persistent_threshold, group.hint))
    return GroupKernels([kernel], args, numel, rnumel)


@dataclass
class _Group:
    """A group holding reductions, as its kernels see it."""

    members: Sequence[buffer.ComputedOp]
    layouts: dict[str, LayoutAttr]
    roots: dict[str, str]
    local: set[str]
    numel: sympy.Expr
    rnumel: sympy.Expr
    hint: str
    target: Target
    check_indices: bool

    def kernel(self, persistent: bool, limit: int | None = None) -> tuple[triton.KernelOp, list[str]]:
        """One kernel of the group with its configs, and its launch arguments; `limit`: a
        persistent kernel over a symbolic r0_numel of at most this."""
        numel, rnumel, hint, target = self.numel, self.rnumel, self.hint, self.target
        if persistent:  # the configs do not depend on the body: build once, for their blocks
            configs = (persistent_reduction_configs_up_to(numel, limit, hint, target) if limit is not None
                       else persistent_reduction_configs(numel, int(rnumel), hint, target))
            builder, kernel = self._build(persistent, tuple(c.block_sizes["XBLOCK"] for c in configs))
        else:
            builder, kernel = self._build(persistent)
            ops = list(kernel.body.walk())
            loads = sum(isinstance(op, triton.LoadOp) for op in ops)
            reduces = sum(isinstance(op, triton.ReduceOp) for op in ops)
            dynamic = len({s for s in (numel.free_symbols | rnumel.free_symbols)})
            configs = reduction_configs(numel, rnumel, hint, loads, reduces, dynamic, target)
            # The configs are known now; where their blocks make a mask constant that the Target's
            # largest blocks did not, build again without it (the counts above do not depend on masks).
            x_blocks = tuple(c.block_sizes["XBLOCK"] for c in configs)
            r_blocks = tuple(c.block_sizes["R0_BLOCK"] for c in configs)
            if constant_masks(numel, rnumel, False, x_blocks, r_blocks, target) != constant_masks(
                numel, rnumel, False, target=target
            ):
                builder, kernel = self._build(persistent, x_blocks, r_blocks)
        kernel.properties["configs"] = ArrayAttr(configs)
        return kernel, builder.launch_args()

    def _build(
        self, persistent: bool, x_blocks: tuple[int, ...] = (), r_blocks: tuple[int, ...] = ()
    ) -> tuple[ReductionKernelBuilder, triton.KernelOp]:
        builder = ReductionKernelBuilder(
            self.numel, self.layouts, self.roots, self.local, rnumel=self.rnumel, persistent=persistent,
            target=self.target, check_indices=self.check_indices, x_blocks=x_blocks, r_blocks=r_blocks,
        )
        builder.count_reads(self.members)
        for m in self.members:
            builder.add_member(m)
        return builder, builder.build("", sorted({o for m in self.members for o in m.origin_names}), [])
