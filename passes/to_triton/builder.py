"""The machinery every kind of kernel is built with: one group's bodies into one kernel body.

A `KernelBuilder` takes the `buffer.computed` members of a group one by one (`add_member`) and
converts each body op into the kernel's ops; `build` returns the `triton.kernel`. Every kind of
kernel (`pointwise.py`, `reduction.py`) is a subclass deciding its index symbols, masks,
eviction and where each op goes; what they share is here:

- Index symbols: `xindex` is split into one symbol per dimension of size > 1, innermost first
  (`x0 = xindex % 64`, `x1 = xindex // 64`; the outermost needs no modulo; one dimension is
  `xindex` itself: `dimension_indices`); a node's `i_k` is replaced by its dimension's symbol,
  size-1 dims by 0, with names shared by the members. An index that walks the dims contiguously
  (`x0 + 64*x1`) is written `xindex`, as Inductor's merged loops do, so Triton sees unit stride
  and vectorizes (unless the builder keeps every dim named: `merge_contiguous_dims`); the
  kernel defines only the symbols its ops use.
- Pointers: `in_ptr0, in_ptr1, ...` for buffers read, `out_ptr0, ...` for buffers written, each in
  order of first use; a view is read through its root storage (its index already has the offset).
  A buffer written and read only inside one kernel (`local`) is not stored; a read of a value
  stored earlier in the same kernel reuses it (after a check that it names the same element).
- Loads and stores at loaded positions (`indirect(%k)`, see `sym`) keep `ind0, ...` in their
  index, which the emitter replaces by the position's tile; such an access takes every mask
  of its place in the kernel (a loaded position may come from any lane).
- Eviction (the default, a subclass refines it): loads that broadcast (use fewer elements than
  the kernel's lanes) or are not coalesced (no unit stride along xindex) get `evict_last`.
- CSE: one op per distinct computation (one `tl.load` of an address whatever eviction each
  member asked for: the later reader's wins).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import sympy
from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import PassFailedException

from mlc.analysis.flat_index import simplify_index
from mlc.analysis.launch import H100, Target
from mlc.dialects import buffer, loops, triton
from mlc.dialects.buffer_layout import LayoutAttr
from mlc.dialects.sym import CeilDiv, FloorDiv, ModularIndexing, equal, expr_str, symbol

XINDEX = symbol("xindex")

# An index symbol's registry: the definition's text -> (the symbol's name, its definition).
IndexRegistry = dict[str, tuple[str, sympy.Expr]]


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


def index_length(definition: sympy.Expr, numel: sympy.Expr) -> sympy.Expr:
    """How many values an index symbol defined as `definition` takes over a flat index of `numel`."""
    if isinstance(definition, ModularIndexing):
        return definition.args[2]
    if isinstance(definition, FloorDiv):
        return CeilDiv(numel, definition.args[1])
    return numel


def step_along(index: sympy.Expr, base: sympy.Symbol, others: Sequence[sympy.Symbol]) -> sympy.Expr:
    """How far `index` moves when `base` goes from 0 to 1, the `others` at 0."""
    zeros = {other: 0 for other in others}
    return sympy.sympify(index.subs({**zeros, base: 1}) - index.subs({**zeros, base: 0}))


def zero_of(typ: Attribute) -> Attribute:
    """The constant 0 of an integer or float type."""
    return IntegerAttr(0, typ) if isinstance(typ, IntegerType) else FloatAttr(0.0, typ)  # type: ignore[arg-type]


@dataclass
class GroupKernels:
    """What runs one group: `kernels[0]`, or, for a symbolic r0_numel that a persistent kernel
    may take, that kernel up to `persistent_max` and the looped `kernels[1]` above; every kernel
    takes `args` and is launched over these sizes (unnamed kernels: the pass names them)."""

    kernels: list[triton.KernelOp]
    args: list[str]
    numel: sympy.Expr
    rnumel: sympy.Expr | None = None
    ynumel: sympy.Expr | None = None
    persistent_max: int | None = None
    znumel: sympy.Expr | None = None  # a batched GEMM's products


@dataclass
class KernelBuilder(ABC):
    """Builds one kernel body from the members of a group; records the pointers it needs."""

    numel: sympy.Expr
    layouts: dict[str, LayoutAttr]
    roots: dict[str, str]  # view name -> root storage name
    local: set[str]  # buffers written here that need no store
    scratch: Block = field(default_factory=Block)  # holds the pointers until build() orders them
    ops: list[Operation] = field(default_factory=list)
    index_vars: IndexRegistry = field(default_factory=dict)  # the symbols over xindex
    used_vars: set[str] = field(default_factory=set)
    reads: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    pointers: dict[tuple[str, str], SSAValue] = field(default_factory=dict)  # (role, buffer) -> arg
    stored: dict[str, tuple[sympy.Expr, SSAValue]] = field(default_factory=dict)
    cse: dict[tuple, Operation] = field(default_factory=dict)  # pure op's key -> first such op
    target: Target = H100  # the largest blocks, which decide whether a mask is constant
    check_indices: bool = False  # assert that loaded positions are in bounds (debug)

    # `x0 + 64*x1` -> `xindex`; a reduction kernel decides masks per index name, so it keeps
    # every dimension named.
    merge_contiguous_dims: ClassVar[bool] = True

    # -- what a kind of kernel decides ---------------------------------------------------------

    @abstractmethod
    def add_member(self, node: buffer.ComputedOp) -> None:
        """Convert `node`'s body into this kernel (`convert_op` per op, after naming its dims)."""

    @abstractmethod
    def load_masks(self, index: sympy.Expr, indirect: Sequence[SSAValue] = ()) -> list[str]:
        """The tile masks an access at `index` needs."""

    @abstractmethod
    def body_ops(self) -> list[Operation]:
        """The kernel's body, after its pointer arguments: index definitions and ops."""

    @abstractmethod
    def kernel_op(
        self, name: str, body: Region, origins: Sequence[str], configs: Sequence[triton.ConfigAttr]
    ) -> triton.KernelOp:
        """The `triton.kernel` of this kind over `body`."""

    def definitions(self) -> list[tuple[str, sympy.Expr]]:
        """Every index symbol the kernel names, with its definition over the flat lane indices."""
        return list(self.index_vars.values())

    def flat_ranges(self) -> dict[sympy.Symbol, sympy.Expr]:
        """The kernel's flat lane indices and their extents."""
        return {XINDEX: self.numel}

    def lane_trees(self) -> list[tuple[sympy.Symbol, sympy.Expr, IndexRegistry]]:
        """The flat lane indices whose elements an access may cover: (index, extent, its symbols)."""
        return [(XINDEX, self.numel, self.index_vars)]

    def store_masks(self, index: sympy.Expr, indirect: Sequence[SSAValue] = ()) -> list[str]:
        return self.load_masks(index, indirect)

    def load_other(self, op: buffer.LoadOp, index: sympy.Expr, masks: list[str]) -> Attribute | None:
        """What a masked-off lane reads: 0 for a load with its own mask."""
        return zero_of(op.result.type) if op.mask is not None else None

    def eviction(self, node: buffer.ComputedOp, name: str, index: sympy.Expr) -> str | None:
        return "evict_last" if self.is_broadcast(index) or self.is_strided(index) else None

    def reduce(self, node: buffer.ComputedOp, op: buffer.ReduceOp, values: dict[SSAValue, SSAValue]) -> None:
        raise PassFailedException(f"convert-to-triton: '{node.buffer.data}': buffer.reduce in a pointwise kernel")

    def place(self, new: Operation) -> None:
        """Put a new op in the body (a reduction kernel chooses before, in or after its loop)."""
        self.ops.append(new)

    # -- index symbols -------------------------------------------------------------------------

    def name_dims(
        self, ranges: Sequence[sympy.Expr], variables: Sequence[sympy.Symbol], base: sympy.Symbol = XINDEX,
        prefix: str = "x", registry: IndexRegistry | None = None,
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

    def used_definitions(self, registry: IndexRegistry) -> list[triton.IndexOp]:
        """`triton.index` ops for the symbols of `registry` the kernel uses, in naming order."""
        return [triton.IndexOp(name, expr) for name, expr in registry.values() if name in self.used_vars]

    def flat_form(self, index: sympy.Expr) -> sympy.Expr:
        """`index` over the flat lane indices (each index symbol replaced by its definition)."""
        defs = {symbol(name): expr for name, expr in self.definitions()}
        return index.xreplace(defs)

    def same_element(self, a: sympy.Expr, b: sympy.Expr) -> bool:
        """Two indices of this kernel name the same element in every lane (`x0 + 64*x1` and
        `xindex` do): compared over the flat lane indices."""
        ranges = self.flat_ranges()
        return equal(simplify_index(self.flat_form(a), ranges), simplify_index(self.flat_form(b), ranges))

    def is_broadcast(self, index: sympy.Expr) -> bool:
        """Fewer distinct elements than the kernel's lanes (Inductor's is_broadcasted)."""
        names = {s.name for s in index.free_symbols}
        total: sympy.Expr = sympy.Integer(1)
        lengths: sympy.Expr = sympy.Integer(1)
        for base, numel, registry in self.lane_trees():
            total = total * numel
            if base.name in names:  # a merged index walks every element of its tree
                lengths = lengths * numel
                continue
            for name, expr in set(registry.values()):
                if name in names:
                    lengths = lengths * index_length(expr, numel)
        return not equal(total, lengths)

    def is_strided(self, index: sympy.Expr) -> bool:
        """A known step other than 1 along xindex: lanes touch more cache lines than they fill
        and later programs read those lines again. A symbolic stride counts as unit."""
        step = step_along(self.flat_form(index), XINDEX, [])
        return step != 1 and bool(step.is_Integer)

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
        flat = simplify_index(self.flat_form(index), ranges)
        if flat.has(FloorDiv, ModularIndexing) or flat.free_symbols - set(ranges):
            return index
        return flat

    # -- body ops ------------------------------------------------------------------------------

    def convert_op(
        self, node: buffer.ComputedOp, op: Operation, subst: dict[sympy.Symbol, sympy.Expr],
        values: dict[SSAValue, SSAValue],
    ) -> None:
        """Convert one op of `node`'s body (`subst`: its loop variables -> index symbols;
        `values`: its values -> the kernel's)."""
        if isinstance(op, buffer.LoadOp):
            new = self._load(node, op, subst, values)
            if new is None:
                return
        elif isinstance(op, buffer.StoreOp):
            new = self._store(op, subst, values)
            if new is None:
                return
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
        kept = self.append(new)
        for old, result in zip(op.results, kept.results):
            values[old] = result

    def _load(
        self, node: buffer.ComputedOp, op: buffer.LoadOp, subst: dict[sympy.Symbol, sympy.Expr],
        values: dict[SSAValue, SSAValue],
    ) -> Operation | None:
        """A `triton.load`, or None where the value is in registers already (stored by a member)."""
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
                values[op.result] = value
                return None
            zero = self.append(arith.ConstantOp(zero_of(op.result.type)))  # masked off: reads 0
            values[op.result] = self.append(arith.SelectOp(values[op.mask], value, zero.results[0])).results[0]
            return None
        mask = values[op.mask] if op.mask is not None else None
        indirect = [values[v] for v in op.indirect]
        masks = self.load_masks(index, indirect)
        other = self.load_other(op, index, masks)
        policy = self.eviction(node, name, index)
        return triton.LoadOp(self._pointer("in_ptr", name), index, masks, mask, other, policy, indirect)

    def _store(
        self, op: buffer.StoreOp, subst: dict[sympy.Symbol, sympy.Expr], values: dict[SSAValue, SSAValue]
    ) -> Operation | None:
        """A `triton.store`, or None for a buffer the kernel keeps in registers."""
        index = self._index(op.index.expr, subst)
        indirect = [values[v] for v in op.indirect]
        if not indirect:  # a scatter's value is not where a later read could find it
            self.stored[op.buffer_name] = (index, values[op.value])
        if op.buffer_name in self.local:
            return None
        masks = self.store_masks(index, indirect)
        ptr = self._pointer("out_ptr", self.roots.get(op.buffer_name, op.buffer_name))
        return triton.StoreOp(ptr, index, values[op.value], masks, None, indirect, op.store_mode)

    def _pointer(self, role: str, name: str) -> SSAValue:
        if (role, name) not in self.pointers:
            names = self.reads if role == "in_ptr" else self.writes
            names.append(name)
            dtype = self.layouts[name].dtype
            arg = self.scratch.insert_arg(triton.PtrType(dtype), len(self.scratch.args))  # type: ignore[arg-type]
            arg.name_hint = f"{role}{len(names) - 1}"
            self.pointers[(role, name)] = arg
        return self.pointers[(role, name)]

    def append(self, new: Operation) -> Operation:
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

    # -- the kernel ----------------------------------------------------------------------------

    def build(self, name: str, origins: Sequence[str], configs: Sequence[triton.ConfigAttr]) -> triton.KernelOp:
        """The kernel: the pointers as arguments, inputs then outputs (each in first-use order),
        then `body_ops`."""
        order = [("in_ptr", n) for n in self.reads] + [("out_ptr", n) for n in self.writes]
        block = Block(arg_types=[self.pointers[key].type for key in order])
        for key, arg in zip(order, block.args):
            arg.name_hint = self.pointers[key].name_hint
            self.pointers[key].replace_all_uses_with(arg)
        block.add_ops(self.body_ops())
        return self.kernel_op(name, Region(block), origins, configs)

    def launch_args(self) -> list[str]:
        """The buffers a launch passes, in the order of the kernel's pointer arguments."""
        return [*self.reads, *self.writes]
