"""Turn a buffer.graph into Triton kernels and the host wrapper that launches them.

Each `buffer.fused` group, and each `buffer.computed` outside one, becomes one `triton.kernel`:
pointwise over `xnumel` = the product of its ranges, or, for a group holding a reduction, a
persistent (`triton_per_...`) or looped (`triton_red_...`) reduction kernel over `xnumel` kept and
`r0_numel` reduced elements (built by `passes/triton_reduction.py`, whose docstring gives its
rules; over a symbolic r0_numel that may fit one block, both, and the launch picks by size); the graph becomes `triton.wrapper @call` (Inductor's `TritonScheduling.codegen_node` +
`PythonWrapperCodegen`).

Before:
    buffer.graph @forward {
      buffer.input "arg0_1" #buffer.layout<[8, 64], [64, 1], f32>
      buffer.input "arg1_1" #buffer.layout<[64], [1], f32>
      buffer.computed "buf0" #buffer.layout<[8, 64], [64, 1], f32> ranges [8, 64] origins ["add"] {
        %0 = buffer.load @arg0_1[i1 + 64*i0] : f32
        %1 = buffer.load @arg1_1[i1] : f32
        %2 = arith.addf %0, %1 : f32
        buffer.store @buf0[i1 + 64*i0], %2 : f32 }
      buffer.output @buf0 }
After:
    triton.kernel @triton_poi_fused_add_0 pointwise(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 512 origins ["add"] configs [...] {
      triton.index x0 = ModularIndexing(xindex, 1, 64)
      %0 = triton.load %in_ptr0[xindex] mask xmask : f32
      %1 = triton.load %in_ptr1[x0] mask xmask evict_last : f32
      %2 = arith.addf %0, %1 : f32
      triton.store %out_ptr0[xindex], %2 mask xmask : f32 }
    triton.wrapper @call {
      triton.input "arg0_1" #buffer.layout<[8, 64], [64, 1], f32>
      triton.input "arg1_1" #buffer.layout<[64], [1], f32>
      triton.alloc "buf0" #buffer.layout<[8, 64], [64, 1], f32>
      triton.launch @triton_poi_fused_add_0(@arg0_1, @arg1_1, @buf0) xnumel 512
      triton.return @buf0 }

Rules (Inductor's, `reference/inductor-rules.md` section 6):
- Index symbols: `xindex` is split into one symbol per dimension of size > 1, innermost first
  (`x0 = xindex % 64`, `x1 = xindex // 64`; the outermost needs no modulo; one dimension is
  `xindex` itself); a node's `i_k` is replaced by its dimension's symbol, size-1 dims by 0.
  An index that walks the dims contiguously (`x0 + 64*x1`) is written `xindex`, as Inductor's
  merged loops do, so Triton sees unit stride and vectorizes; the per-dim symbols remain for
  the accesses that need them (broadcasts, transposes). Reduction kernels keep every dim named.
- 2-D tiling (`select_tiling_2d`, Inductor's `candidate_tilings`): a pointwise kernel with an
  access that is not coalesced along xindex but unit-stride along an outer dim (a transpose)
  splits its ranges into outer dims -> `ynumel`/`yindex` ([YBLOCK, 1]) and inner dims ->
  `xnumel`/`xindex` ([1, XBLOCK]); both groups are named and merged as above (`y0`, `yindex`);
  loads and stores carry `ymask`/`xmask` for the tile dims their index uses; configs are
  Inductor's 2-D list (32x32, 64x64, 256x16, 16x256, bs x 1, 1 x bs; x by y), only 32x32
  without autotuning. Kernels whose accesses are all coalesced along xindex stay 1-D.
- Masks: every load and store carries `xmask` unless xnumel is 1 or a multiple of the largest
  XBLOCK (`Target.max_xblock`, 4096); a load with its own mask also gets `other=0`. Loads that
  broadcast (use fewer elements than xnumel) or are not coalesced (no unit stride along xindex)
  get `evict_last`; so does a 2-D tile's transposed load (unit stride along yindex only).
- Pointers: `in_ptr0, in_ptr1, ...` for buffers read, `out_ptr0, ...` for buffers written, each in
  order of first use; a view is read through its root storage (its index already has the offset).
  A buffer written and read only inside one kernel, and not a graph output, is neither stored nor
  allocated; a read of a value stored earlier in the same kernel reuses it.
- Names: `triton_poi_fused_<sorted unique origins joined by _>_<n>`, n counting distinct kernels;
  a kernel identical to an earlier one (all but name and origins) is not emitted again: its
  launch names the earlier kernel (Inductor's `src_to_kernel`).
- Configs (`analysis/launch.py`): Inductor's `pointwise` heuristic: `bs = max(256, min(numel //
  128, 1024))`, configs (bs, 256 elements/warp) and (bs // 2, 64 elements/warp), adjusted by
  `triton_config`; one config with `autotune-pointwise=false`, and for a scatter (its atomic adds
  cannot be re-run to time a config).
- Wrapper: inputs, then in graph order `triton.alloc` + `triton.launch` per kernel,
  `triton.extern`, `triton.view`; `triton.free` after a buffer's last use (not inputs, not
  outputs); `triton.return` the outputs.

Options: `autotune-pointwise=true` (above); `persistent-reduction-threshold=1024`, the largest
r0_numel a persistent kernel takes (a symbolic one: at run time) (Inductor's bound for INNER reductions; it uses 64 for
the other hints, mlc for OUTER ones only); `num-sms=132` sets the SM count of the `Target` the launch
heuristics size for (from it the reduction hint decides whether an output is wide enough for
DEFAULT configs); `tile-2d=true`, 2-D tiles for pointwise kernels with a transposed access
(false: every pointwise kernel is 1-D); `check-indices=false`, true makes each position loaded
from memory assert its bounds on the device (a kernel compiled in Triton's debug mode; the
backend sets it under `MLC_DEBUG=1`).

Loads and stores at loaded positions (`indirect(%k)`, see `sym`) keep `ind0, ...` in their
index, which the emitter replaces by the position's tile; a loaded position may come from any
lane, so such an access takes every mask of its place in the kernel. A `buffer.scatter` is a
pointwise kernel over its source's points that stores (or `tl.atomic_add`s) into its base's
storage: nothing is allocated for it, kernels reading it read the base, and the wrapper names
it (a `triton.view` of the base) only where an extern or the output needs the name.

Fails when: a fused group's members iterate incompatible sizes, a reduced value would have to
feed a second reduction loop, or a body op has no Triton form (each names the node).
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import sympy
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType, ModuleOp, StringAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.printer import Printer
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from mlc.dialects import buffer, loops, triton
from mlc.dialects.buffer_layout import LayoutAttr
from mlc.dialects.sym import CeilDiv, FloorDiv, ModularIndexing, equal, expr_str, symbol
from mlc.analysis.flat_index import simplify_index
from mlc.analysis.launch import (
    H100, Target, hinted, index_bits, pointwise_configs, pointwise_configs_2d, size_hint,
)
from mlc.passes.stages import check_stage
from mlc.passes.pipeline import option

XINDEX = symbol("xindex")
YINDEX = symbol("yindex")
MIN_TILE = 32  # a 2-D tiling needs both tile groups at least this large (Inductor's "good size")


# ---------------------------------------------------------------------------------------------
# Kernel names


def kernel_base_name(kind: str, origins: Sequence[str]) -> str:
    """`triton_poi_fused_add_mul` (the counter suffix is added by the caller)."""
    category = {"pointwise": "poi", "reduction": "red", "persistent_reduction": "per"}[kind]
    names = sorted({re.sub(r"\W", "_", o) for o in origins})
    return "_".join([f"triton_{category}_fused", *names])


# ---------------------------------------------------------------------------------------------
# One kernel


def dimension_indices(ranges: Sequence[sympy.Expr], base: sympy.Symbol = XINDEX) -> list[sympy.Expr]:
    """Each dimension's index as a function of xindex (or `base`, e.g. r0_index; dims of size 1 get 0)."""
    sized = [k for k, r in enumerate(ranges) if r != 1]
    out: list[sympy.Expr] = [sympy.Integer(0)] * len(ranges)
    divisor: sympy.Expr = sympy.Integer(1)
    for k in reversed(sized):
        if len(sized) == 1:
            out[k] = base
        elif k == sized[0]:
            out[k] = FloorDiv(base, divisor)
        else:
            out[k] = ModularIndexing(base, divisor, ranges[k])
        divisor = divisor * ranges[k]
    return out


def _strides(index: sympy.Expr, variables: Sequence[sympy.Symbol]) -> list[sympy.Expr]:
    """The index's step along each variable from the origin (exact for affine indices)."""
    zero = {v: 0 for v in variables}
    base = index.xreplace(zero)
    return [sympy.expand(index.xreplace({**zero, v: 1}) - base) for v in variables]


def select_tiling_2d(ranges: Sequence[sympy.Expr], indices: Sequence[tuple[sympy.Expr, bool]]) -> int | None:
    """Where to split `ranges` into y (outer dims) and x (inner dims) tiles, or None for 1-D.

    Why: a 1-D kernel walks xindex along the innermost dimension, so an access that is unit-stride
    along an outer dimension (a transposed read) strides through memory across lanes. Tiling
    [YBLOCK, XBLOCK] makes both kinds coalesced inside a tile (Inductor's `candidate_tilings`):
    every access `(index, is_write)` unit-stride along some dimension k proposes the split after k
    and scores the elements it touches, doubled for a write and for each group of a good size.
    The best total wins when it reaches numel. Stays 1-D when every access is already coalesced
    along xindex (unit stride or broadcast along the innermost dimension), or when either group
    is smaller than MIN_TILE (a tile that small gains nothing). Symbolic sizes count at the
    size hint (`launch.hinted`); a symbolic stride is never 1 (sizes 0 and 1 are specialised)."""
    ranges = [sympy.sympify(r) for r in ranges]
    sized = [k for k, r in enumerate(ranges) if r != 1]
    if len(sized) < 2:
        return None
    variables = [symbol(f"i{k}") for k in range(len(ranges))]
    numel = hinted(sympy.Mul(*ranges))
    strides = [([_strides(index, variables)[k] for k in sized], write) for index, write in indices]
    if all(st[-1] in (0, 1) for st, _ in strides):
        return None  # coalesced along xindex already
    scores: dict[int, int] = {}
    for st, write in strides:
        if 1 not in st[:-1]:
            continue
        split = st.index(1) + 1
        if all(s == 0 for s in st[split:]):
            continue  # broadcast along every inner dim: not a real split
        groups = [hinted(sympy.Mul(*[ranges[k] for k in sized[:split]])), hinted(sympy.Mul(*[ranges[k] for k in sized[split:]]))]
        if min(groups) < MIN_TILE:
            continue
        score = hinted(sympy.Mul(*[ranges[k] for k, s in zip(sized, st) if s != 0]))
        score *= 2 if write else 1
        for g in groups:
            score *= 2 if g % 32 == 0 else 1
        if score >= numel:
            scores[split] = scores.get(split, 0) + score
    if not scores:
        return None
    best = max(scores.items(), key=lambda kv: (kv[1], -kv[0]))[0]
    return sized[best - 1] + 1  # split position in `ranges` (size-1 dims go with y)


def has_constant_mask(numel: sympy.Expr, target: Target = H100) -> bool:
    """No xmask needed: every XBLOCK divides xnumel (TritonKernel._has_constant_mask)."""
    return bool(numel.is_Integer and (int(numel) == 1 or int(numel) % target.max_xblock == 0))


def has_constant_mask_y(numel: sympy.Expr, target: Target = H100) -> bool:
    """No ymask needed: every YBLOCK (at most target.max_yblock) divides ynumel."""
    return bool(numel.is_Integer and (int(numel) == 1 or int(numel) % target.max_yblock == 0))


@dataclass
class KernelBuilder:
    """Builds one kernel body from the members of a group; records the pointers it needs."""

    numel: sympy.Expr
    layouts: dict[str, LayoutAttr]
    roots: dict[str, str]  # view name -> root storage name
    local: set[str]  # buffers written here that need no store
    scratch: Block = field(default_factory=Block)  # holds the pointers until build() orders them
    ops: list[Operation] = field(default_factory=list)
    index_vars: dict[str, tuple[str, sympy.Expr]] = field(default_factory=dict)  # expr text -> (name, expr)
    used_vars: set[str] = field(default_factory=set)
    reads: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    pointers: dict[tuple[str, str], SSAValue] = field(default_factory=dict)  # (role, buffer) -> arg
    stored: dict[str, tuple[sympy.Expr, SSAValue]] = field(default_factory=dict)
    cse: dict[tuple, Operation] = field(default_factory=dict)  # pure op's key -> first such op
    # 2-D tiling (select_tiling_2d): ranges[:split] walk yindex (numel = ynumel), the rest xindex.
    split: int | None = None
    ynumel: sympy.Expr | None = None
    y_vars: dict[str, tuple[str, sympy.Expr]] = field(default_factory=dict)
    target: Target = H100  # the largest blocks, which decide whether a mask is constant
    check_indices: bool = False  # assert that loaded positions are in bounds (debug)

    @property
    def masks(self) -> list[str]:
        return [] if has_constant_mask(self.numel, self.target) else ["xmask"]

    def tiled_masks(self, index: sympy.Expr) -> list[str]:
        """In a 2-D kernel: ymask and/or xmask, for the tile dims the index varies along."""
        full = self._xindex_form(index)
        masks = []
        if YINDEX in full.free_symbols and not has_constant_mask_y(self.ynumel, self.target):  # type: ignore[arg-type]
            masks.append("ymask")
        if XINDEX in full.free_symbols and not has_constant_mask(self.numel, self.target):
            masks.append("xmask")
        return masks

    def add_member(self, node: buffer.ComputedOp) -> None:
        if node.is_reduction:
            raise PassFailedException(f"convert-to-triton: reduction '{node.buffer.data}' in a pointwise kernel")
        ranges = node.range_exprs
        variables = [symbol(f"i{k}") for k in range(len(ranges))]
        if self.split is not None:
            p = self.split
            subst = self.name_dims(ranges[:p], variables[:p], YINDEX, "y", self.y_vars)
            subst |= self.name_dims(ranges[p:], variables[p:])
        else:
            subst = self.name_dims(ranges, variables)
        values: dict[SSAValue, SSAValue] = {}
        for op in node.body.block.ops:
            self._convert(node, op, subst, values)

    def name_dims(
        self, ranges: Sequence[sympy.Expr], variables: Sequence[sympy.Symbol], base: sympy.Symbol = XINDEX,
        prefix: str = "x", registry: dict[str, tuple[str, sympy.Expr]] | None = None,
    ) -> dict[sympy.Symbol, sympy.Expr]:
        """Map a node's loop variables to index symbols over `base`: every dimension named
        innermost first (x0 is the fastest-moving index), names shared by members."""
        registry = self.index_vars if registry is None else registry
        subst: dict[sympy.Symbol, sympy.Expr] = {}
        for var, expr in reversed(list(zip(variables, dimension_indices(ranges, base)))):
            if expr != 0:
                key = expr_str(expr)
                if key not in registry:
                    registry[key] = (f"{prefix}{len(registry)}", expr)
                subst[var] = symbol(registry[key][0])
            else:
                subst[var] = sympy.Integer(0)
        return subst

    # Hooks a reduction kernel overrides: masks, `other` and eviction of loads, masks of stores.
    def load_masks(self, index: sympy.Expr, indirect: Sequence[SSAValue] = ()) -> list[str]:
        """The tile masks an access needs: those of the dims its index walks; a loaded position
        may come from any lane, so an indirect access takes them all."""
        if self.split is None:
            return self.masks
        return self.tiled_masks(index + XINDEX + YINDEX if indirect else index)

    def store_masks(self, index: sympy.Expr, indirect: Sequence[SSAValue] = ()) -> list[str]:
        return self.load_masks(index, indirect)

    def load_other(self, op: buffer.LoadOp, index: sympy.Expr, masks: list[str]) -> Attribute | None:
        return _zero(op.result.type) if op.mask is not None else None

    def eviction(self, node: buffer.ComputedOp, name: str, index: sympy.Expr) -> str | None:
        return "evict_last" if self._is_broadcast(index) or self._is_strided(index) else None

    # A reduction kernel decides masks per index name, so it keeps every dimension named.
    merge_contiguous_dims = True

    def _index(self, expr: sympy.Expr, subst: dict[sympy.Symbol, sympy.Expr]) -> sympy.Expr:
        out = expr.xreplace(subst)
        if self.merge_contiguous_dims:
            out = self._contiguous(out)
        self.used_vars.update(s.name for s in out.free_symbols)
        return out

    def _contiguous(self, index: sympy.Expr) -> sympy.Expr:
        """`x0 + 64*x1` -> `xindex` when the dims it walks are contiguous (Inductor merges such
        dims): a plain affine index lets Triton prove contiguity and vectorize the access."""
        ranges = self.flat_ranges()
        flat = simplify_index(self._xindex_form(index), ranges)
        if flat.has(FloorDiv, ModularIndexing) or flat.free_symbols - set(ranges):
            return index
        return flat

    def _pointer(self, role: str, name: str) -> SSAValue:
        if (role, name) not in self.pointers:
            names = self.reads if role == "in_ptr" else self.writes
            names.append(name)
            dtype = self.layouts[name].dtype
            arg = self.scratch.insert_arg(triton.PtrType(dtype), len(self.scratch.args))  # type: ignore[arg-type]
            arg.name_hint = f"{role}{len(names) - 1}"
            self.pointers[(role, name)] = arg
        return self.pointers[(role, name)]

    def _convert(self, node: buffer.ComputedOp, op: Operation, subst: dict, values: dict[SSAValue, SSAValue]) -> None:
        if isinstance(op, buffer.LoadOp):
            name = self.roots.get(op.buffer_name, op.buffer_name)
            index = self._index(op.index.expr, subst)
            if name in self.stored:
                stored_index, value = self.stored[name]
                if not self.same_element(stored_index, index):
                    raise PassFailedException(
                        f"convert-to-triton: '{node.buffer.data}' reads {name} at {expr_str(index)} but this kernel "
                        f"writes it at {expr_str(stored_index)}"
                    )
                if op.mask is None:
                    values[op.result] = value  # the value is already in registers
                    return
                zero = self._append(arith.ConstantOp(_zero(op.result.type)))  # masked off: reads 0
                values[op.result] = self._append(arith.SelectOp(values[op.mask], value, zero.results[0])).results[0]
                return
            mask = values[op.mask] if op.mask is not None else None
            indirect = [values[v] for v in op.indirect]
            masks = self.load_masks(index, indirect)
            other = self.load_other(op, index, masks)
            policy = self.eviction(node, name, index)
            new = triton.LoadOp(self._pointer("in_ptr", name), index, masks, mask, other, policy, indirect)
        elif isinstance(op, buffer.StoreOp):
            index = self._index(op.index.expr, subst)
            indirect = [values[v] for v in op.indirect]
            if not indirect:  # a scatter's value is not where a later read could find it
                self.stored[op.buffer_name] = (index, values[op.value])
            if op.buffer_name in self.local:
                return
            masks = self.store_masks(index, indirect)
            ptr = self._pointer("out_ptr", self.roots.get(op.buffer_name, op.buffer_name))
            new = triton.StoreOp(ptr, index, values[op.value], masks, None, indirect, op.store_mode)
        elif isinstance(op, loops.IndirectIndexOp):
            value = values[op.value]
            masks = self.load_masks(sympy.Integer(0), [value])
            new = triton.IndirectIndexOp(value, op.size.expr, masks, self.check_indices)
        elif isinstance(op, buffer.ReduceOp):
            self.reduce(node, op, values)
            return
        elif isinstance(op, loops.IndexOp):
            new = triton.ExprOp(self._index(op.expr.expr, subst), op.result.type, [values[v] for v in op.indirect])
        elif op.dialect_name() in ("arith", "math") and not op.regions:
            new = op.clone(value_mapper=values)
        else:
            error = PassFailedException(f"convert-to-triton: '{node.buffer.data}': {op.name} has no Triton form")
            error.op = op  # type: ignore[attr-defined]  # tools point at op's position
            raise error
        kept = self._append(new)
        for old, result in zip(op.results, kept.results):
            values[old] = result

    def reduce(self, node: buffer.ComputedOp, op: buffer.ReduceOp, values: dict[SSAValue, SSAValue]) -> None:
        raise PassFailedException(f"convert-to-triton: '{node.buffer.data}': buffer.reduce in a pointwise kernel")

    def _append(self, new: Operation) -> Operation:
        """Add `new` to the body and return it, or the equal op already there (Inductor's CSE:
        one tl.load / constant / expression per distinct computation)."""
        if new.results:
            # Two loads of one address are one value whatever eviction each member chose.
            props = sorted((k, v) for k, v in new.properties.items() if k != "eviction_policy")
            key = (new.name, tuple(new.operands), tuple(props), tuple(sorted(new.attributes.items())),
                   tuple(new.result_types))
            if (first := self.cse.get(key)) is not None:
                if "eviction_policy" in new.properties:  # the later reader's view of what is left
                    first.properties["eviction_policy"] = new.properties["eviction_policy"]
                elif isinstance(first, triton.LoadOp):
                    first.properties.pop("eviction_policy", None)
                new.erase(safe_erase=False)
                return first
            self.cse[key] = new
        self.place(new)
        return new

    def place(self, new: Operation) -> None:
        """Put a new op in the body (a reduction kernel chooses before, in or after its loop)."""
        self.ops.append(new)

    def _xindex_form(self, index: sympy.Expr) -> sympy.Expr:
        defs = {symbol(name): expr for name, expr in [*self.index_vars.values(), *self.y_vars.values()]}
        return index.xreplace(defs)

    def flat_ranges(self) -> dict[sympy.Symbol, sympy.Expr]:
        """The kernel's flat lane indices and their extents."""
        return {XINDEX: self.numel} if self.ynumel is None else {XINDEX: self.numel, YINDEX: self.ynumel}

    def same_element(self, a: sympy.Expr, b: sympy.Expr) -> bool:
        """Two indices of this kernel name the same element in every lane (`x0 + 64*x1` and
        `xindex` do): compared over the flat lane indices."""
        ranges = self.flat_ranges()
        return equal(simplify_index(self._flat_form(a), ranges), simplify_index(self._flat_form(b), ranges))

    def _flat_form(self, index: sympy.Expr) -> sympy.Expr:
        return self._xindex_form(index)

    def _is_broadcast(self, index: sympy.Expr) -> bool:
        """Fewer distinct elements than the kernel's numel (Inductor's is_broadcasted)."""
        names = {s.name for s in index.free_symbols}
        total: sympy.Expr = self.numel
        lengths: sympy.Expr = sympy.Integer(1)
        trees = [(XINDEX, self.numel, self.index_vars)]
        if self.ynumel is not None:
            total = self.numel * self.ynumel
            trees.append((YINDEX, self.ynumel, self.y_vars))
        for base, numel, registry in trees:
            if base.name in names:  # a merged index walks every element of its tree
                lengths = lengths * numel
                continue
            for name, expr in set(registry.values()):
                if name in names:
                    lengths = lengths * _length(expr, numel)
        return not equal(total, lengths)

    def _is_strided(self, index: sympy.Expr) -> bool:
        """No unit stride along xindex, so lanes touch more cache lines than they fill and later
        programs read those lines again: a strided 1-D read, or in a 2-D tile a read with no unit
        stride at all, or the transposed one (unit stride along yindex only: a tile reads YBLOCK
        elements of each line, 64 bytes of a bf16 32x32 tile, and the tile next along y the rest;
        Inductor's code for that kernel keeps it in L2 too; H100, BERT's [4, 512, 768] bf16 key
        transposed and scaled into f32: 7.4 -> 5.7 us). A symbolic stride counts as unit."""
        full = self._xindex_form(index)
        x_step = _step(full, XINDEX, [YINDEX])
        if x_step == 1:
            return False
        if self.ynumel is None:
            return x_step.is_Integer
        y_step = _step(full, YINDEX, [XINDEX])
        return y_step == 1 or (x_step.is_Integer and y_step.is_Integer)

    def build(self, name: str, origins: Sequence[str], configs: Sequence[triton.ConfigAttr]) -> triton.KernelOp:
        # Pointers were made in first-use order; the signature lists inputs, then outputs.
        order = [("in_ptr", n) for n in self.reads] + [("out_ptr", n) for n in self.writes]
        block = Block(arg_types=[self.pointers[key].type for key in order])
        for key, arg in zip(order, block.args):
            arg.name_hint = self.pointers[key].name_hint
            self.pointers[key].replace_all_uses_with(arg)
        defs = [*sorted(self.y_vars.values(), key=lambda v: int(v[0][1:])),
                *sorted(self.index_vars.values(), key=lambda v: int(v[0][1:]))]
        block.add_ops(triton.IndexOp(var, expr) for var, expr in defs if var in self.used_vars)
        block.add_ops(self.ops)
        return triton.KernelOp(
            name, "pointwise", self.numel, Region(block), origins=origins, configs=configs, ynumel=self.ynumel
        )

    def launch_args(self) -> list[str]:
        return [*self.reads, *self.writes]


def _step(index: sympy.Expr, base: sympy.Symbol, others: Sequence[sympy.Symbol]) -> sympy.Expr:
    """How far `index` moves when `base` goes from 0 to 1, the `others` at 0."""
    zeros = {other: 0 for other in others}
    return sympy.sympify(index.subs({**zeros, base: 1}) - index.subs({**zeros, base: 0}))


def _length(expr: sympy.Expr, numel: sympy.Expr) -> sympy.Expr:
    """How many values an index symbol's definition takes over xindex."""
    if isinstance(expr, ModularIndexing):
        return expr.args[2]
    if isinstance(expr, FloorDiv):
        return CeilDiv(numel, expr.args[1])
    return numel


def _zero(typ: Attribute) -> Attribute:
    return IntegerAttr(0, typ) if isinstance(typ, IntegerType) else FloatAttr(0.0, typ)  # type: ignore[arg-type]


def kernel_key(kernel: triton.KernelOp) -> str:
    """The kernel's text without its name and origins: equal keys are the same kernel. (Printed
    with the two swapped out for the moment, not from a clone: cloning the body cost as much as
    printing it.)"""
    kept = dict(kernel.properties)
    kernel.properties["sym_name"] = StringAttr("kernel")
    kernel.properties.pop("origins", None)
    out = io.StringIO()
    try:
        Printer(stream=out).print_op(kernel)
    finally:
        kernel.properties.clear()
        kernel.properties.update(kept)
    return out.getvalue()


# ---------------------------------------------------------------------------------------------
# The pass


def _group_members(node: buffer.BufferNode) -> list[buffer.ComputedOp] | None:
    """The computed nodes one kernel runs, or None for a node that is not a kernel."""
    if isinstance(node, buffer.ComputedOp):
        return [node]
    if isinstance(node, buffer.FusedOp):
        members = node.members()
        for m in members:
            if not isinstance(m, buffer.ComputedOp):
                raise PassFailedException(
                    f"convert-to-triton: buffer.fused holds {m.name}; only buffer.computed can fuse"
                )
        return members  # type: ignore[return-value]
    return None


def _named_by_host(graph: buffer.GraphOp) -> set[str]:
    """Buffers the wrapper itself passes around: extern arguments, view sources, outputs."""
    names: set[str] = set()
    for op in graph.body.block.ops:
        if isinstance(op, (buffer.ExternOp, buffer.ViewOp)):
            names.update(op.referenced_names())
        elif isinstance(op, buffer.OutputOp):
            names.update(op.names)
    return names


def _readers(graph: buffer.GraphOp) -> dict[str, set[int]]:
    """For each buffer, the top-level node positions that read it (the output counts as -1)."""
    readers: dict[str, set[int]] = {}
    for pos, op in enumerate(graph.body.block.ops):
        if isinstance(op, buffer.BufferNode):
            for name in op.referenced_names():
                readers.setdefault(name, set()).add(pos)
        elif isinstance(op, buffer.OutputOp):
            for name in op.names:
                readers.setdefault(name, set()).add(-1)
    return readers


@dataclass(frozen=True)
class ConvertToTritonPass(ModulePass):
    """Lower buffer.graph to triton.kernel (one per group) and the triton.wrapper that runs them."""

    name = "convert-to-triton"
    ACCEPTS: ClassVar[tuple[str, ...]] = ("buffer",)

    autotune_pointwise: bool = option(True, "two configs per pointwise kernel for the runtime to time; false: one")
    persistent_reduction_threshold: int = option(1024, "the largest r0_numel a persistent (one-block) reduction takes")
    num_sms: int = option(132, "streaming multiprocessors (H100 SXM: 132) the launch heuristics size for")
    tile_2d: bool = option(True, "2-D (y, x) tiles for pointwise kernels with a transposed access; false: all 1-D")
    check_indices: bool = option(False, "positions loaded from memory assert their bounds on the device (MLC_DEBUG=1)")

    def __post_init__(self) -> None:
        if self.persistent_reduction_threshold < 0 or self.num_sms < 1:
            raise ValueError("convert-to-triton: persistent-reduction-threshold must be >= 0 and num-sms >= 1")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_stage(self, op)
        graphs = [g for g in op.body.block.ops if isinstance(g, buffer.GraphOp)]
        if len(graphs) > 1:
            raise PassFailedException("convert-to-triton: expected one buffer.graph per module")
        target = Target(num_sms=self.num_sms)
        for graph in graphs:
            kernels, wrapper = self.convert(graph, target)
            Rewriter.insert_op([*kernels, wrapper], InsertPoint.before(graph))
            Rewriter.erase_op(graph)

    def convert(self, graph: buffer.GraphOp, target: Target = H100) -> tuple[list[triton.KernelOp], triton.WrapperOp]:
        layouts: dict[str, LayoutAttr] = {}
        roots: dict[str, str] = {}
        readers = _readers(graph)
        kernels: dict[str, triton.KernelOp] = {}  # key -> kernel, in emission order
        body: list[triton.WrapperBodyOp] = []
        host_names = _named_by_host(graph)
        for pos, node in enumerate(graph.body.block.ops):
            if isinstance(node, buffer.InputOp):
                layouts[node.buffer.data] = node.layout
                body.append(triton.InputOp(node.buffer.data, node.layout))
            elif isinstance(node, buffer.SizeInputOp):
                body.append(triton.SizeInputOp(node.buffer.data, node.size.expr))
            elif isinstance(node, buffer.ExternOp):
                for name, layout in zip(node.defined_names(), node.layouts.data):
                    layouts[name] = layout  # type: ignore[assignment]
                kwargs = node.kwargs.data if node.kwargs is not None else None
                args = node.args.data
                extern = triton.ExternOp(node.result_names(), list(node.layouts.data), node.overload.data, args, kwargs,  # type: ignore[arg-type]
                                         fresh=node.fresh is not None)
                body.append(extern)
            elif isinstance(node, buffer.ViewOp):
                layouts[node.buffer.data] = node.layout
                source = node.source.root_reference.data
                roots[node.buffer.data] = roots.get(source, source)
                body.append(triton.ViewOp(node.buffer.data, source, node.layout))
            elif isinstance(node, buffer.ScatterOp):
                roots[node.buffer.data] = roots.get(node.base_name, node.base_name)  # it writes the base
                body.extend(self._kernel(node, [node], pos, layouts, roots, readers, kernels, target))
                if node.buffer.data in host_names:  # kernels read the base itself
                    body.append(triton.ViewOp(node.buffer.data, node.base_name, node.layout))
            elif (members := _group_members(node)) is not None:
                body.extend(self._kernel(node, members, pos, layouts, roots, readers, kernels, target))
            elif isinstance(node, buffer.OutputOp):
                body.append(triton.ReturnOp(node.names))
        inputs = {o.buffer.data for o in body if isinstance(o, triton.GRAPH_INPUTS)}
        return list(kernels.values()), triton.WrapperOp("call", Region(Block(_with_frees(body, inputs))))

    def _kernel(
        self,
        node: buffer.BufferNode,
        members: list[buffer.ComputedOp],
        pos: int,
        layouts: dict[str, LayoutAttr],
        roots: dict[str, str],
        readers: dict[str, set[int]],
        kernels: dict[str, triton.KernelOp],
        target: Target,
    ) -> list[triton.WrapperBodyOp]:
        for m in members:
            layouts[m.buffer.data] = m.layout
        if all(m.layout.is_empty for m in members):
            # Zero-size results (an empty tensor): allocated, nothing to compute, no kernel.
            return [triton.AllocOp(m.buffer.data, m.layout) for m in members]
        written = {m.buffer.data for m in members}
        # Written and read only inside this kernel (and not an output): keep it in registers.
        local = {n for n in written if len(members) > 1 and readers.get(n, set()) <= {pos}}
        origins = sorted({o for m in members for o in m.origin_names})
        rnumel: sympy.Expr | None = None
        ynumel: sympy.Expr | None = None
        persistent_max: int | None = None
        if any(m.is_reduction for m in members):
            from mlc.passes.triton_reduction import build_reduction_kernels  # it builds on this module

            built = build_reduction_kernels(
                members, layouts, roots, local, self.persistent_reduction_threshold, target, self.check_indices
            )
            variants, args, numel, rnumel, persistent_max = (
                built.kernels, built.args, built.numel, built.rnumel, built.persistent_max
            )
        else:
            numels = [sympy.Mul(*m.range_exprs) for m in members]
            if any(not equal(n, numels[0]) for n in numels[1:]):
                names = ", ".join(f"{m.buffer.data} ({expr_str(n)})" for m, n in zip(members, numels))
                raise PassFailedException(f"convert-to-triton: fused members iterate different numels: {names}")
            builder = KernelBuilder(numels[0], layouts, roots, local, target=target, check_indices=self.check_indices)
            scatters = any(isinstance(m, buffer.ScatterOp) for m in members)
            split = self._tiling(members, roots, local) if self.tile_2d and not scatters else None
            if split is not None:
                ranges = members[0].range_exprs
                builder.split, builder.numel = split, sympy.Mul(*ranges[split:])
                builder.ynumel = sympy.Mul(*ranges[:split])
            for m in members:
                builder.add_member(m)
            if builder.ynumel is not None:
                configs = pointwise_configs_2d(
                    size_hint(builder.ynumel), size_hint(builder.numel), self.autotune_pointwise, target
                )
            else:  # a scatter adds into memory: it cannot be re-run to time configs
                configs = pointwise_configs(builder.numel, self.autotune_pointwise and not scatters, target)
            variants, args, numel = [builder.build("", origins, configs)], builder.launch_args(), builder.numel
            ynumel = builder.ynumel
        touched = {n for m in members for n in (*m.referenced_names(), *m.defined_names())}
        storages = [layouts[r] for r in sorted({roots.get(n, n) for n in touched}) if r in layouts]
        wide = index_bits(numel * (rnumel or 1) * (ynumel or 1), storages) == 64
        names = []
        for kernel in variants:
            if wide:
                kernel.attributes[triton.INDEX_BITS] = IntegerAttr(64, 64)
            key = kernel_key(kernel)
            if key not in kernels:
                kernel.properties["sym_name"] = StringAttr(f"{kernel_base_name(kernel.kernel_kind, origins)}_{len(kernels)}")
                kernels[key] = kernel
            names.append(kernels[key].sym_name.data)
        allocs = [triton.AllocOp(m.buffer.data, m.layout) for m in members
                  if m.buffer.data not in local and not isinstance(m, buffer.ScatterOp)]
        looped = (names[1], persistent_max) if persistent_max is not None else None
        return [*allocs, triton.LaunchOp(names[0], args, numel, rnumel, ynumel, looped)]

    @staticmethod
    def _tiling(members: list[buffer.ComputedOp], roots: dict[str, str], local: set[str]) -> int | None:
        """The 2-D split of a pointwise group (select_tiling_2d over every load and store of
        memory); None when members iterate different shapes."""
        ranges = members[0].range_exprs
        if any(list(m.range_exprs) != list(ranges) for m in members[1:]):
            return None
        accesses: list[tuple[sympy.Expr, bool]] = []
        for m in members:
            for op in m.body.block.ops:
                if isinstance(op, buffer.LoadOp) and roots.get(op.buffer_name, op.buffer_name) not in local:
                    accesses.append((op.index.expr, False))
                elif isinstance(op, buffer.StoreOp) and op.buffer_name not in local:
                    accesses.append((op.index.expr, True))
        return select_tiling_2d(ranges, accesses)


def _with_frees(body: list[triton.WrapperBodyOp], keep: set[str]) -> list[triton.WrapperBodyOp]:
    """Insert `triton.free` after each buffer's last use (never inputs or outputs)."""
    outputs = set(body[-1].referenced_names()) if isinstance(body[-1], triton.ReturnOp) else set()
    last_use: dict[str, int] = {}
    for pos, op in enumerate(body):
        for name in [*op.defined_names(), *op.referenced_names()]:
            last_use[name] = pos
    dying_at: dict[int, list[str]] = {}
    for name, last in last_use.items():
        if name not in keep and name not in outputs:
            dying_at.setdefault(last, []).append(name)
    out: list[triton.WrapperBodyOp] = []
    for pos, op in enumerate(body):
        out.append(op)
        if pos in dying_at and not isinstance(op, triton.ReturnOp):
            out.append(triton.FreeOp(dying_at[pos]))
    return out
