"""Accesses, defined once for loops, buffer and triton: loads and stores, index expressions as
values, and loaded positions.

Every level reads and writes memory the same way: a target (a tensor value, `@buffer`, or a
kernel pointer), index expressions in brackets, the `index` operands its loaded positions
`ind0, ind1, ...` name, a mask, and for stores a mode:

    %v = loops.load %x[i0, ind0] indirect(%k) mask %m : tensor<8x50xf32>
    %v = buffer.load @buf4[i1 + 64*ind0] indirect(%k) mask %m : f32
    buffer.store @buf5[i1 + 16*ind0] indirect(%k), %9 atomic_add : f32
    %v = triton.load %in_ptr0[x0 + 768*ind0] indirect(%k) mask xmask : f32

The base classes hold the operands and properties of those pieces (`AccessOp`: `indirect`;
`FlatAccessOp`: one flat `index`; `BufferRefMixin`: `@buffer`; `MaskOperand`: `mask %m`;
`StoreModeMixin`: `atomic_add`), and the custom directives here print and parse them
(`custom<Index>`, `custom<Indirect>`, `custom<Mask>`, `custom<StoreMode>`). Two more shapes
repeat across dialects: an index expression as a value (`loops.index`, `triton.expr`:
`IndexExprOp`) and a loaded integer made a position (`loops.indirect_index`,
`triton.indirect_index`: `IndirectIndexBase`).

Operand order follows the Python bases: a leaf op's own operands (target, stored value) come
first, then `mask`, then `indirect`, so a leaf lists `MaskOperand` before the access base.
"""

from __future__ import annotations

import sympy
from xdsl.dialects.builtin import IndexType, IntegerType, StringAttr, SymbolRefAttr, i1
from xdsl.ir import Attribute
from xdsl.irdl import (
    IRDLOperation,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
)
from xdsl.irdl.declarative_assembly_format import (
    AttributeVariable,
    CustomDirective,
    OptionalOperandVariable,
    ParsingState,
    PrintingState,
    TypeDirective,
    VariadicOperandVariable,
    irdl_custom_directive,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from mlc.dialects.sym import ExprAttr, expr_str, parse_expr
from mlc.dialects.syntax import Expr, ExprList, PropertyDirective, SymbolRef

STORE_MODES = ("atomic_add",)

# ---------------------------------------------------------------------------------------------
# Directives


@irdl_custom_directive
class Index(PropertyDirective):
    """One flat index in brackets: `[i1 + 64*i0]`."""

    attr: AttributeVariable

    def print_value(self, printer: Printer, value: Attribute) -> None:
        printer.print_string(f"[{expr_str(value.expr)}]")  # type: ignore[attr-defined]

    def parse(self, parser: Parser, state: ParsingState) -> None:
        parser.parse_punctuation("[")
        index = parse_expr(parser)
        parser.parse_punctuation("]")
        self.attr.set(state, ExprAttr(index))


@irdl_custom_directive
class Indirect(CustomDirective):
    """` indirect(%a, %b)`: the `index` operands `ind0, ind1` name (nothing when none)."""

    values: VariadicOperandVariable

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        if values := self.values.get(op):
            state.print_whitespace(printer)
            printer.print_string("indirect(")
            printer.print_list(values, printer.print_ssa_value)
            printer.print_string(")")

    def parse(self, parser: Parser, state: ParsingState) -> None:
        values = []
        if parser.parse_optional_keyword("indirect"):
            values = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_unresolved_operand)
        self.values.set(state, values)

    def is_optional_like(self) -> bool:
        return True


@irdl_custom_directive
class Mask(CustomDirective):
    """` mask %m`: an i1 value; where it is false the access touches no memory."""

    value: OptionalOperandVariable

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        if (value := self.value.get(op)) is not None:
            state.print_whitespace(printer)
            printer.print_string("mask ")
            printer.print_ssa_value(value)

    def parse(self, parser: Parser, state: ParsingState) -> None:
        value = None
        if parser.parse_optional_keyword("mask"):
            value = parser.parse_unresolved_operand("Expected an operand.")
        self.value.set(state, value)

    def is_optional_like(self) -> bool:
        return True


@irdl_custom_directive
class StoreMode(PropertyDirective):
    """` atomic_add`: how a store combines with what is there (nothing: it replaces it)."""

    attr: AttributeVariable

    def print_value(self, printer: Printer, value: Attribute) -> None:
        printer.print_string(value.data)  # type: ignore[attr-defined]

    def parse(self, parser: Parser, state: ParsingState) -> None:
        if (mode := next((m for m in STORE_MODES if parser.parse_optional_keyword(m)), None)) is not None:
            self.attr.set(state, StringAttr(mode))

    def is_optional_like(self) -> bool:
        return True


class IntegerTypeDirective(CustomDirective):
    """An integer type (an error at the type otherwise, worded by each subclass's `MESSAGE`)."""

    type: TypeDirective
    MESSAGE = "expected an integer type, got {}"

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        printer.print_attribute(self.type.get(op)[0])

    def parse(self, parser: Parser, state: ParsingState) -> None:
        start = parser.pos
        typ = parser.parse_type()
        if not isinstance(typ, IntegerType):
            parser.raise_error(self.MESSAGE.format(typ), start, parser.pos)
        self.type.set(state, (typ,))


@irdl_custom_directive
class PositionType(IntegerTypeDirective):
    """The type of a loaded value made a position: `i64`."""

    type: TypeDirective
    MESSAGE = "an indirect index is an integer, got {}"


@irdl_custom_directive
class IndexValueType(IntegerTypeDirective):
    """The type of an index expression as a value: `i64`."""

    type: TypeDirective
    MESSAGE = "an index expression's value is an integer, got {}"


ACCESS_DIRECTIVES = (Expr, ExprList, Index, Indirect, Mask, StoreMode, PositionType, IndexValueType)

# ---------------------------------------------------------------------------------------------
# Base classes


class AccessOp(IRDLOperation):
    """A load or store at index expressions; `ind<k>` in them is the k-th `indirect` operand.
    Each access gives its expressions as `index_exprs` (one flat index, or one per dim)."""

    indirect = var_operand_def(IndexType)
    custom_directives = (*ACCESS_DIRECTIVES, SymbolRef)


class FlatAccessOp(AccessOp):
    """An access at one flat index into storage: `[i1 + 64*i0]` (buffer and triton)."""

    index = prop_def(ExprAttr)

    @property
    def index_exprs(self) -> list[sympy.Expr]:
        return [self.index.expr]


class MaskOperand(IRDLOperation):
    """`mask %m`: lanes where the i1 `mask` is false touch no memory (a load reads 0 there)."""

    mask = opt_operand_def(i1)


class StoreModeMixin(IRDLOperation):
    """`atomic_add`: values stored to one element add up (in any order); without a mode one
    of them stays. Shared by loops.scatter, buffer.store and triton.store."""

    mode = opt_prop_def(StringAttr)

    @property
    def store_mode(self) -> str | None:
        return self.mode.data if self.mode is not None else None

    def verify_store_mode(self) -> None:
        if self.store_mode is not None and self.store_mode not in STORE_MODES:
            raise VerifyException(
                f"{self.name}: unknown store mode '{self.store_mode}' (known: {', '.join(STORE_MODES)})"
            )


class BufferRefMixin(IRDLOperation):
    """An access whose target is a named buffer, `@buf4`."""

    buffer = prop_def(SymbolRefAttr)

    @property
    def buffer_name(self) -> str:
        return self.buffer.root_reference.data


def mode_props(mode: str | None) -> dict[str, Attribute]:
    """The `mode` property of a store made in Python (none for a plain store)."""
    return {} if mode is None else {"mode": StringAttr(mode)}


class IndexExprOp(IRDLOperation):
    """An index expression as a value (Inductor's `ops.index_expr`), `i1 + 64*i0 : i64`; one at
    loaded positions names them as loads do, `ind0 indirect(%k) : i64`. Shared by `loops.index`
    and `triton.expr`, which differ in where their symbols come from."""

    expr = prop_def(ExprAttr)
    indirect = var_operand_def(IndexType)
    result = result_def(IntegerType)
    custom_directives = ACCESS_DIRECTIVES
    assembly_format = (
        "custom<Expr>($expr) custom<Indirect>($indirect) `:` custom<IndexValueType>(type($result)) attr-dict"
    )

    @property
    def index_exprs(self) -> list[sympy.Expr]:
        return [self.expr.expr]


class IndirectIndexBase(IRDLOperation):
    """A loaded integer as a position in a dim of `size` (Inductor's `ops.indirect_indexing`),
    `%t size 1000 : i64`; negative values count from the end, as in `x[-1]`. The result is an
    `index` that accesses list in `indirect(...)` and name `ind<k>`. Shared by
    `loops.indirect_index` and `triton.indirect_index`, which adds masks and a device check."""

    value = operand_def(IntegerType)
    size = prop_def(ExprAttr)
    result = result_def(IndexType)
    custom_directives = ACCESS_DIRECTIVES

    def verify_size(self) -> None:
        size = self.size.expr
        if size.is_Integer and int(size) <= 0:
            raise VerifyException(f"{self.name}: size must be positive, got {int(size)}")

