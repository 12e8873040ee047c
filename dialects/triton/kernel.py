"""`triton.kernel` and the bases of its body ops, with the ops that structure a body
(`triton.index`, a looped reduction's `triton.rloop` / `triton.yield`) and the kernel's check
of its accesses' static bounds. KernelOp, KernelBodyOp, IndexOp and RLoopOp refer to one
another, so they live together; the body ops of `body.py` and `reductions.py` build on
`KernelBodyOp`, `MaskedBodyOp` and `PointerAccessOp`, which the bounds check reads.

Static bounds: a kernel writes its indices over `triton.index` symbols; with their definitions
substituted an index is an expression of the implicit indices, which a launch runs over
[0, xnumel), [0, ynumel) and [0, r0_numel) (the named masks only cut off the lanes past those).
Where the numels are static, `reached_span` (the buffer dialect's check, `buffer_checks.py`,
uses it too) gives values the index certainly takes, so the kernel rejects an index certainly
negative: each pointer is at the start of its storage (a view is read through its root, with
the offset in the index). The wrapper checks each launch's buffers against the same spans
(`wrapper.py`). Accesses with a mask value (`mask %m`: a cat's, a split reduction's bound) and
at loaded positions (`ind0`) may go anywhere where masked off or as loaded, and are not checked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import sympy
from xdsl.dialects.builtin import ArrayAttr, IndexType, IntegerAttr, StringAttr
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import IsolatedFromAbove, IsTerminator, NoTerminator, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from mlc.analysis.flat_index import reached_span
from mlc.dialects.access import ACCESS_DIRECTIVES, FlatAccessOp, MaskOperand, StoreModeMixin
from mlc.dialects.sym import ExprAttr, expr_str, free_symbol_names, indirect_names, is_size_symbol, size_names_in, symbol
from mlc.dialects.syntax import IndexSymbol, Operands, ReductionKind, TypesOf
from mlc.dialects.triton.core import (
    _IDENT,
    IMPLICIT_INDICES,
    KERNEL_KINDS,
    MASK_NAMES,
    RESERVED,
    TILED_INDICES,
    TILED_MASKS,
    ConfigAttr,
    MaskNames,
    Masks,
    PtrType,
    _blame,
    _parse_numels,
    _print_numels,
)

# ---------------------------------------------------------------------------------------------
# Kernels


INDEX_BITS = "index_bits"  # kernel attribute: `index_bits = 64` when int32 positions would wrap


def r0_blocks_up_to(bound: int) -> list[int]:
    """The R0_BLOCKs (next_pow2(r0_numel)) a persistent kernel over r0_numel in [1, bound] takes."""
    return [2**k for k in range((bound - 1).bit_length() + 1)] if bound >= 1 else []


@irdl_op_definition
class KernelOp(IRDLOperation):
    """A `@triton.jit` kernel: name, kind, pointer arguments, numels, origins, launch configs.

    The body is one block of tile ops (no terminator); the block arguments are the pointers,
    named as the kernel's Python parameters (`%in_ptr0`, `%out_ptr0`). Its index arithmetic is
    32-bit unless the attribute `index_bits = 64` says otherwise (`analysis/launch.py:
    index_bits` decides: a kernel over 2^31 elements or touching a buffer that large)."""

    name = "triton.kernel"
    sym_name = prop_def(StringAttr)
    kind = prop_def(StringAttr)
    xnumel = prop_def(ExprAttr)
    r0_numel = opt_prop_def(ExprAttr)
    ynumel = opt_prop_def(ExprAttr)  # a 2-D tiled pointwise kernel: rows (yindex) x xnumel columns
    znumel = opt_prop_def(ExprAttr)  # a batched matmul kernel: its products (zindex)
    origins = opt_prop_def(ArrayAttr)
    configs = opt_prop_def(ArrayAttr)
    body = region_def("single_block")
    traits = traits_def(IsolatedFromAbove(), NoTerminator(), SymbolOpInterface())

    def __init__(
        self,
        name: str,
        kind: str,
        xnumel: sympy.Expr | int,
        body: Region,
        r0_numel: sympy.Expr | int | None = None,
        origins: Sequence[str] = (),
        configs: Sequence[ConfigAttr] = (),
        ynumel: sympy.Expr | int | None = None,
        znumel: sympy.Expr | int | None = None,
    ):
        props: dict[str, Attribute] = {"sym_name": StringAttr(name), "kind": StringAttr(kind), "xnumel": ExprAttr(xnumel)}
        if r0_numel is not None:
            props["r0_numel"] = ExprAttr(r0_numel)
        if ynumel is not None:
            props["ynumel"] = ExprAttr(ynumel)
        if znumel is not None:
            props["znumel"] = ExprAttr(znumel)
        if origins:
            props["origins"] = ArrayAttr([StringAttr(o) for o in origins])
        if configs:
            props["configs"] = ArrayAttr(list(configs))
        super().__init__(properties=props, regions=[body])

    @property
    def kernel_kind(self) -> str:
        return self.kind.data

    @property
    def arg_names(self) -> list[str]:
        return [a.name_hint or f"arg{i}" for i, a in enumerate(self.body.block.args)]

    @property
    def origin_names(self) -> list[str]:
        return [o.data for o in self.origins.data] if self.origins is not None else []  # type: ignore[attr-defined]

    @property
    def config_list(self) -> list[ConfigAttr]:
        return list(self.configs.data) if self.configs is not None else []  # type: ignore[arg-type]

    @property
    def index_bits(self) -> int:
        attr = self.attributes.get(INDEX_BITS)
        return attr.value.data if isinstance(attr, IntegerAttr) else 32

    @property
    def size_args(self) -> list[str]:
        """The sizes (`s0`, ...) the body's expressions use, by number: parameters of the
        kernel after its pointers, passed by the launch from the wrapper's bindings."""
        found = set().union(*(size_names_in(a) for op in self.body.walk() for a in op.properties.values()))
        return sorted(found, key=lambda n: int(n[1:]))

    @property
    def takes_r0_block(self) -> bool:
        """R0_BLOCK is a launch parameter, set by each config: a looped reduction's, and a
        persistent one's over a symbolic r0_numel (next_pow2(r0_numel), known at launch); a
        persistent kernel over a static r0_numel fixes it in its body."""
        return self.kernel_kind in ("reduction", "matmul") or (
            self.kernel_kind == "persistent_reduction" and self.r0_numel is not None and not self.r0_numel.expr.is_Integer
        )

    @property
    def pointers_added_into(self) -> list[int]:
        """The positions of the pointers its stores add into (`atomic_add`: a scatter's): running
        the kernel again adds again, so timing its configs saves and restores those buffers."""
        args = list(self.body.block.args)
        adds = [op for op in self.body.walk() if isinstance(op, StoreModeMixin) and op.store_mode is not None]
        return sorted({args.index(op.ptr) for op in adds if op.ptr in args})  # type: ignore[attr-defined]

    @property
    def is_tiled(self) -> bool:
        """A 2-D tiled kernel (`ynumel` set: pointwise, or matmul): grid (cdiv(xnumel, XBLOCK),
        cdiv(ynumel, YBLOCK))."""
        return self.ynumel is not None

    def verify_(self) -> None:
        kind = self.kernel_kind
        if kind not in KERNEL_KINDS:
            raise VerifyException(f"triton.kernel: unknown kind '{kind}' (expected one of {', '.join(KERNEL_KINDS)})")
        if (self.r0_numel is not None) != (kind != "pointwise"):
            raise VerifyException(f"triton.kernel: a {kind} kernel {'needs' if kind != 'pointwise' else 'takes no'} r0_numel")
        if (self.ynumel is not None) != (kind == "matmul") and kind != "pointwise":
            raise VerifyException(f"triton.kernel: a {kind} kernel {'needs' if kind == 'matmul' else 'takes no'} ynumel")
        if self.znumel is not None and kind != "matmul":
            raise VerifyException(f"triton.kernel: a {kind} kernel takes no znumel (only a batched matmul does)")
        seen: set[str] = set()
        for arg in self.body.block.args:
            if not isinstance(arg.type, PtrType):
                raise VerifyException(f"triton.kernel: arguments are !triton.ptr, got {arg.type}")
            if arg.name_hint is None or not _IDENT.match(arg.name_hint) or arg.name_hint in RESERVED:
                raise VerifyException("triton.kernel: arguments need a name usable in Python (%in_ptr0, %out_ptr0, ...)")
            if arg.name_hint in seen:
                raise VerifyException(f"triton.kernel: argument %{arg.name_hint} appears twice")
            seen.add(arg.name_hint)
        blocks = ["R0_BLOCK", "XBLOCK"] if self.takes_r0_block else ["XBLOCK", "YBLOCK"] if self.is_tiled else ["XBLOCK"]
        if kind == "matmul":
            blocks = ["R0_BLOCK", "XBLOCK", "YBLOCK"]
        for c in self.config_list:
            if not isinstance(c, ConfigAttr):
                raise VerifyException(f"triton.kernel: configs are #triton.config, got {c}")
            if sorted(c.block_sizes) != blocks:
                raise VerifyException(
                    f"triton.kernel: a {kind} kernel's configs set {' and '.join(blocks)}, got {c}"
                )
        if INDEX_BITS in self.attributes and self.index_bits not in (32, 64):
            raise VerifyException(f"triton.kernel: {INDEX_BITS} is 32 or 64, got {self.attributes[INDEX_BITS]}")
        for op in self.body.block.ops:
            dialect = op.name.split(".")[0]
            if dialect == "triton" and not isinstance(op, KernelBodyOp) or dialect not in ("triton", "arith", "math"):
                raise _blame(op, f"triton.kernel: {op.name} cannot appear in a kernel body")
        verify_kernel_in_bounds(self)

    # Hand-written: the header declares the pointers that are the body's block arguments.
    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string(f" {self.kernel_kind}(")
        for i, arg in enumerate(self.body.block.args):
            if i:
                printer.print_string(", ")
            printer.print_ssa_value(arg)
            printer.print_string(": ")
            printer.print_attribute(arg.type)
        printer.print_string(")")
        _print_numels(printer, self.xnumel, self.r0_numel, self.ynumel, self.znumel)
        if self.origins is not None:
            printer.print_string(" origins [")
            printer.print_list(self.origins.data, printer.print_attribute)
            printer.print_string("]")
        if self.configs is not None:
            printer.print_string(" configs [")
            printer.print_list(self.configs.data, printer.print_attribute)
            printer.print_string("]")
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False)
        if self.attributes:
            printer.print_op_attributes(self.attributes, print_keyword=True)

    @classmethod
    def parse(cls, parser: Parser) -> KernelOp:
        name = parser.parse_symbol_name().data
        kind = parser.parse_identifier("kernel kind")
        args = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_argument)
        xnumel, r0_numel, ynumel, znumel = _parse_numels(parser)
        origins: list[str] = []
        if parser.parse_optional_keyword("origins"):
            origins = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_str_literal)
        configs: list[Attribute] = []
        if parser.parse_optional_keyword("configs"):
            configs = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_attribute)
        body = parser.parse_region(args)
        if not body.blocks:
            body.add_block(Block(arg_types=[a.type for a in args]))
        r0 = None if r0_numel is None else r0_numel.expr
        y = None if ynumel is None else ynumel.expr
        z = None if znumel is None else znumel.expr
        op = cls(name, kind, xnumel.expr, body, r0, origins, configs, y, z)  # type: ignore[arg-type]
        if (attrs := parser.parse_optional_attr_dict_with_keyword()) is not None:
            op.attributes |= attrs.data
        return op


class KernelBodyOp(IRDLOperation):
    """An op of a kernel body; its index expressions may use the kernel's index symbols."""

    custom_directives = (IndexSymbol, ReductionKind, Operands, TypesOf, Masks, MaskNames, *ACCESS_DIRECTIVES)

    def kernel(self) -> KernelOp:
        parent = self.parent_op()
        while parent is not None and not isinstance(parent, KernelOp):
            parent = parent.parent_op()  # reduction loops will nest body ops in regions
        if parent is None:
            raise VerifyException(f"{self.name} must be inside triton.kernel")
        return parent

    def in_rloop(self) -> bool:
        parent = self.parent_op()
        while parent is not None and not isinstance(parent, KernelOp):
            if isinstance(parent, RLoopOp):
                return True
            parent = parent.parent_op()
        return False

    def implicit_indices(self, kernel: KernelOp) -> tuple[str, ...]:
        """`xindex`, and `r0_index` where a reduction slice is defined (not outside a looped
        kernel's rloop); a matmul kernel's `yindex`, `xindex` (and a batched one's `zindex`), and
        in its rloop the K slice."""
        if kernel.kernel_kind == "reduction" and not self.in_rloop():
            return ("xindex",)
        if kernel.kernel_kind == "matmul":
            batch = ("zindex",) if kernel.znumel is not None else ()
            return (*(IMPLICIT_INDICES["matmul"] if self.in_rloop() else TILED_INDICES), *batch)
        if kernel.is_tiled:
            return TILED_INDICES
        return IMPLICIT_INDICES.get(kernel.kernel_kind, ())

    def valid_masks(self, kernel: KernelOp) -> tuple[str, ...]:
        if kernel.kernel_kind == "reduction" and not self.in_rloop():
            return ("xmask",)
        if kernel.kernel_kind == "matmul":
            return MASK_NAMES["matmul"] if self.in_rloop() else TILED_MASKS
        if kernel.is_tiled:
            return TILED_MASKS
        return MASK_NAMES.get(kernel.kernel_kind, ())

    def _verify_symbols(self, exprs: Sequence[sympy.Expr]) -> KernelOp:
        """Every symbol is implicit here, a size symbol, or a triton.index earlier in this
        block or an enclosing one (an index defined inside an rloop ends with it)."""
        kernel = self.kernel()
        allowed = set(self.implicit_indices(kernel))
        current: Operation | None = self
        while current is not None and current is not kernel:
            block = current.parent_block()
            if block is None:
                break
            for op in block.ops:
                if op is current:
                    break
                if isinstance(op, IndexOp):
                    allowed.add(op.var.data)
            current = block.parent_op()
        allowed |= indirect_names(len(getattr(self, "indirect", ())))
        for e in exprs:
            for name in sorted(free_symbol_names(e)):
                if name not in allowed and not is_size_symbol(name):
                    raise VerifyException(
                        f"{self.name}: index symbol '{name}' is not defined here "
                        f"(available: {', '.join(sorted(allowed))})"
                    )
        return kernel


class MaskedBodyOp(KernelBodyOp):
    """A body op with named masks (`mask xmask, r0_mask`): loads, stores, indirect indices,
    reductions."""

    mask_names = opt_prop_def(ArrayAttr)

    @property
    def masks(self) -> list[str]:
        return [n.data for n in self.mask_names.data] if self.mask_names is not None else []  # type: ignore[attr-defined]

    def verify_masks(self, kernel: KernelOp) -> None:
        """Each named mask exists where this op is (a looped kernel's r0_mask only in its rloop)."""
        valid = self.valid_masks(kernel)
        where = " outside its triton.rloop" if kernel.kernel_kind == "reduction" and valid == ("xmask",) else ""
        for name in self.masks:
            if name not in valid:
                raise VerifyException(
                    f"{self.name}: unknown mask '{name}' in a {kernel.kernel_kind} kernel{where} "
                    f"(known: {', '.join(valid)})"
                )


class PointerAccessOp(MaskOperand, FlatAccessOp, MaskedBodyOp):
    """A load or store through a kernel pointer, `%in_ptr0[x0 + 64*x1]` (an access, see
    `mlc.dialects.access`); each subclass declares its `ptr` operand first."""

    def verify_pointer(self, elem: Attribute, what: str) -> None:
        """The pointer points to `elem`s (the loaded or stored type, named by `what`)."""
        ptr = self.ptr  # type: ignore[attr-defined]
        if not isinstance(ptr.type, PtrType):
            raise VerifyException(f"{self.name}: expected a !triton.ptr, got {ptr.type}")
        if ptr.type.pointee != elem:
            raise VerifyException(f"{self.name}: {what} {elem} does not match the pointer's {ptr.type.pointee}")


@irdl_op_definition
class IndexOp(KernelBodyOp):
    """Name an index symbol: `triton.index x0 = ModularIndexing(xindex, 1, 64)` (`x0 = xindex % 64`)."""

    name = "triton.index"
    var = prop_def(StringAttr)
    expr = prop_def(ExprAttr)
    assembly_format = "custom<IndexSymbol>($var) `=` custom<Expr>($expr) attr-dict"

    def __init__(self, var: str, expr: sympy.Expr | int):
        super().__init__(properties={"var": StringAttr(var), "expr": ExprAttr(expr)})

    def verify_(self) -> None:
        var = self.var.data
        if not _IDENT.match(var) or var in RESERVED or is_size_symbol(var):
            raise VerifyException(f"triton.index: '{var}' cannot name an index symbol")
        self._verify_symbols([self.expr.expr])
        # Visible here: what comes before in this block and before each enclosing op (a loop's
        # body names its own r0 symbols; the next loop names them again).
        op: Operation | None = self
        while op is not None and not isinstance(op, KernelOp):
            previous = op.prev_op
            while previous is not None:
                if isinstance(previous, IndexOp) and previous.var.data == var:
                    raise VerifyException(f"triton.index: '{var}' is defined twice")
                previous = previous.prev_op
            op = op.parent_op()


def _enclosing_rloop(value: SSAValue) -> Operation | None:
    """The triton.rloop whose body defines `value`, if any."""
    block = value.owner if isinstance(value.owner, Block) else value.owner.parent_block()
    op = block.parent_op() if block is not None else None
    while op is not None and not isinstance(op, (RLoopOp, KernelOp)):
        op = op.parent_op()
    return op if isinstance(op, RLoopOp) else None


@irdl_op_definition
class RLoopOp(KernelBodyOp):
    """The loop of a looped `reduction` kernel over R0 in R0_BLOCK steps, with accumulators
    carried from one step to the next (scf.for's iter_args):

        %acc = triton.rloop iter_args(%a = %zero : f32) {
          triton.index r0_0 = r0_index
          %v = triton.load %in_ptr0[r0_0 + 20000*x0] mask r0_mask, xmask other 0.0 evict_first : f32
          %n = triton.accumulate sum %v into %a mask r0_mask, xmask : f32 -> f32
          triton.yield %n : f32
        }
        %s = triton.reduce sum %acc : f32 -> f32

    `for r0_offset in range(0, r0_numel, R0_BLOCK)`, with `r0_index = r0_offset + r0_base` and
    `r0_mask = r0_index < r0_numel` defined inside. Each accumulator starts as an
    [XBLOCK, R0_BLOCK] tile filled with its init operand; the body's block arguments are the
    accumulators, `triton.yield` gives their next values and the results are their last ones.

    A grouped product's K loop (`triton.rloop groups(%g) iter_args(...)`, a matmul kernel's
    only) runs once per group among the tile's rows, `%g` giving each row's group: in the
    body `%g` is the group (a scalar, which B's loads index), and the dot takes the rows of
    that group alone."""

    name = "triton.rloop"
    inits = var_operand_def()
    groups = opt_operand_def(IndexType)
    outputs = var_result_def()
    body = region_def("single_block")
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(self, inits: Sequence[SSAValue], body: Region, groups: SSAValue | None = None):
        super().__init__(operands=[list(inits), [groups] if groups is not None else []],
                         result_types=[[v.type for v in inits]], regions=[body])

    def verify_(self) -> None:
        kernel = self.kernel()
        if kernel.kernel_kind not in ("reduction", "matmul"):
            raise VerifyException(f"triton.rloop: only a looped reduction or a matmul kernel has one, not a {kernel.kernel_kind} kernel")
        if self.parent_op() is not kernel:
            raise VerifyException("triton.rloop: loops do not nest; it belongs in the kernel body")
        if self.groups is not None and kernel.kernel_kind != "matmul":
            raise VerifyException("triton.rloop: only a matmul kernel's loop runs over groups of rows")
        block = self.body.block
        types = [v.type for v in self.inits]
        if [a.type for a in block.args] != types:
            raise VerifyException("triton.rloop: the body's arguments are the accumulators, of the init types")
        last = block.last_op
        if not isinstance(last, YieldOp):
            raise VerifyException("triton.rloop: the body must end with triton.yield")
        if [v.type for v in last.values] != types:
            raise VerifyException("triton.rloop: triton.yield must give one value per accumulator, of its type")
        for op in block.ops:
            dialect = op.name.split(".")[0]
            if dialect == "triton" and not isinstance(op, KernelBodyOp) or dialect not in ("triton", "arith", "math"):
                raise _blame(op, f"triton.rloop: {op.name} cannot appear in a reduction loop")
            for operand in op.operands:
                loop = _enclosing_rloop(operand)
                if loop is not None and loop is not self:
                    raise _blame(op, "triton.rloop: uses a value of another reduction loop (values along r0 "
                                 "do not outlive their loop: recompute it here)")

    # Hand-written: `iter_args(%a = %init : t)` binds the body's block arguments to the inits.
    def print(self, printer: Printer) -> None:
        block = self.body.block
        if self.groups is not None:
            printer.print_string(" groups(")
            printer.print_ssa_value(self.groups)
            printer.print_string(")")
        if block.args:
            printer.print_string(" iter_args(")
            for i, (arg, init) in enumerate(zip(block.args, self.inits)):
                if i:
                    printer.print_string(", ")
                printer.print_ssa_value(arg)
                printer.print_string(" = ")
                printer.print_ssa_value(init)
                printer.print_string(" : ")
                printer.print_attribute(init.type)
            printer.print_string(")")
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    @classmethod
    def parse(cls, parser: Parser) -> RLoopOp:
        args: list[Parser.Argument] = []
        inits: list[SSAValue] = []
        groups = None
        if parser.parse_optional_keyword("groups"):
            parser.parse_punctuation("(")
            groups = parser.resolve_operand(parser.parse_unresolved_operand(), IndexType())
            parser.parse_punctuation(")")
        if parser.parse_optional_keyword("iter_args"):

            def item() -> None:
                arg = parser.parse_argument(expect_type=False)
                parser.parse_punctuation("=")
                init = parser.parse_unresolved_operand()
                parser.parse_punctuation(":")
                typ = parser.parse_type()
                args.append(arg.resolve(typ))
                inits.append(parser.resolve_operand(init, typ))

            parser.parse_comma_separated_list(parser.Delimiter.PAREN, item)
        body = parser.parse_region(args)
        return cls(inits, body, groups)


@irdl_op_definition
class YieldOp(KernelBodyOp):
    """`triton.yield %n, %ni : f32, i64`: the accumulators' next values; ends a triton.rloop."""

    name = "triton.yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator())
    assembly_format = "($values^ `:` custom<TypesOf>(ref($values), type($values)))? attr-dict"

    def __init__(self, values: Sequence[SSAValue]):
        super().__init__(operands=[list(values)])

    def verify_(self) -> None:
        if not isinstance(self.parent_op(), RLoopOp):
            raise VerifyException("triton.yield must end a triton.rloop")


# ---------------------------------------------------------------------------------------------
# Static bounds of the kernel's accesses (see the module docstring)

Span = tuple[int, int]


@dataclass(frozen=True)
class Access:
    """A load or store with no mask value, and values its index certainly takes."""

    op: PointerAccessOp
    span: Span

    @property
    def pointer(self) -> BlockArgument:
        ptr = self.op.ptr  # type: ignore[attr-defined]
        assert isinstance(ptr, BlockArgument)  # a kernel's pointers are its arguments
        return ptr

    def describe(self) -> str:
        """`stores %out_ptr0[r0_0 + 64*x0] at 0 to 1023`."""
        verb = "loads" if self.op.results else "stores"
        return f"{verb} %{self.pointer.name_hint}[{expr_str(self.op.index.expr)}] at {self.span[0]} to {self.span[1]}"


def kernel_accesses(kernel: KernelOp) -> list[Access]:
    """The kernel's checkable accesses: static spans over its numels."""
    numels = {"xindex": kernel.xnumel, "yindex": kernel.ynumel, "zindex": kernel.znumel, "r0_index": kernel.r0_numel,
              "r0_index_t": kernel.r0_numel}
    ranges = {symbol(name): numel.expr for name, numel in numels.items() if numel is not None}
    accesses: list[Access] = []
    _collect_accesses(kernel.body.block, {}, ranges, accesses)
    return accesses


def _collect_accesses(
    block: Block, definitions: Mapping[sympy.Symbol, sympy.Expr], ranges: Mapping[sympy.Symbol, sympy.Expr],
    accesses: list[Access],
) -> None:
    definitions = dict(definitions)  # a loop's index symbols end with it
    for op in block.ops:
        if isinstance(op, IndexOp):
            definitions[symbol(op.var.data)] = op.expr.expr.xreplace(definitions)
        elif isinstance(op, RLoopOp):
            _collect_accesses(op.body.block, definitions, ranges, accesses)
        elif isinstance(op, PointerAccessOp) and op.mask is None and isinstance(op.ptr, BlockArgument):  # type: ignore[attr-defined]
            span = reached_span(op.index.expr.xreplace(definitions), ranges)
            if span is not None:
                accesses.append(Access(op, span))


def verify_kernel_in_bounds(kernel: KernelOp) -> None:
    """No access certainly indexes before the start of its pointer's storage."""
    for access in kernel_accesses(kernel):
        if access.span[0] < 0:
            raise _blame(access.op, f"{access.op.name}: {access.describe()}, before the start of its storage")
