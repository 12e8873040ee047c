"""The pieces of mlc's op syntax that xDSL's declarative assembly format has no directive for.

Each is a custom directive: an op lists it in `custom_directives` and writes
`custom<Name>($prop, ...)` in its `assembly_format`. Defined once here for every dialect:

    custom<Expr>($size)                 an index expression, printed bare    1000, i1 + 64*i0
    custom<ExprList>($ranges)           a list of them                       [8, 64]
    custom<Origins>($origins)           the aten ops a node comes from       origins ["add", "sum"]
    custom<ReductionKind>($kind)        a string printed as an identifier    sum
    custom<IndexSymbol>($var)           (likewise)                           x0
    custom<SymbolRef>($buffer)          a buffer or kernel reference         @buf1
    custom<SymbolRefs>($outputs)        buffer references                    @buf1, @buf2
    custom<AttrList>($layouts)          attributes, none printed when empty  #a, #b
    custom<TypeList>(type($outputs))    one type, or several in parentheses  f32, (f32, i64)
    custom<TypesOf>(ref($values), type($values))   a type per operand       f32, i64
    custom<FunctionTypeOf>(ref($tensors), type($tensors), type($outputs))   (f32, f32) -> f32
    custom<Operands>($values)           one or more operands                 %a, %b
    custom<CallArgs>($args, $kwargs)    an aten call's Python arguments      {args = [...], kwargs = {...}}
    custom<ExternArgs>($args, ...)      the same, and an extern node's own   {args = [...], fresh, origins = [...]}

Directives print their own leading space (xDSL's convention); a format glues one to what comes
before with ``, as in `$source `` custom<ExprList>($indices)` for `%x[i0, i1]`. A directive of
an optional property prints nothing when it is absent and can anchor an optional group:
`(`reduce` custom<ExprList>($reduction_ranges)^)?`. Parse errors point at the text they
reject, as the hand-written parsers these replace did.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, StringAttr, SymbolRefAttr
from xdsl.ir import Attribute
from xdsl.irdl import IRDLOperation
from xdsl.irdl.declarative_assembly_format import (
    AttributeVariable,
    CustomDirective,
    ParsingState,
    PrintingState,
    TypeDirective,
    VariadicOperandVariable,
    irdl_custom_directive,
)
from xdsl.parser import Parser
from xdsl.printer import Printer

from mlc.dialects.sym import ExprAttr, expr_str, parse_expr

# ---------------------------------------------------------------------------------------------
# One property each


class PropertyDirective(CustomDirective):
    """A directive of one property `attr` (declared by each subclass): printed by
    `print_value` (as an attribute unless a subclass prints it otherwise), nothing when an
    optional property is absent."""

    attr: AttributeVariable

    def print_value(self, printer: Printer, value: Attribute) -> None:
        printer.print_attribute(value)

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        if (value := self.attr.get(op)) is not None:
            state.print_whitespace(printer)
            self.print_value(printer, value)

    def is_present(self, op: IRDLOperation) -> bool:
        return self.attr.get(op) is not None

    def is_anchorable(self) -> bool:
        return self.attr.is_optional


@irdl_custom_directive
class Expr(PropertyDirective):
    """An `#sym.expr` printed bare: `i1 + 64*i0`."""

    attr: AttributeVariable

    def print_value(self, printer: Printer, value: Attribute) -> None:
        printer.print_string(expr_str(value.expr))  # type: ignore[attr-defined]

    def parse(self, parser: Parser, state: ParsingState) -> None:
        self.attr.set(state, ExprAttr(parse_expr(parser)))


def exprs_text(attr: Attribute) -> str:
    """`[e0, e1]` of an array of `#sym.expr`."""
    return "[" + ", ".join(expr_str(e.expr) for e in attr.data) + "]"  # type: ignore[attr-defined]


@irdl_custom_directive
class ExprList(PropertyDirective):
    """An array of `#sym.expr`: `[8, 64]`, `[i0, ind0]`."""

    attr: AttributeVariable

    def print_value(self, printer: Printer, value: Attribute) -> None:
        printer.print_string(exprs_text(value))

    def parse(self, parser: Parser, state: ParsingState) -> None:
        exprs = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, lambda: parse_expr(parser))
        self.attr.set(state, ArrayAttr([ExprAttr(e) for e in exprs]))


@irdl_custom_directive
class Origins(PropertyDirective):
    """` origins ["add", "sum"]`: the aten ops a node comes from, when there are any."""

    attr: AttributeVariable

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        origins = self.attr.get(op)
        if isinstance(origins, ArrayAttr) and origins.data:
            state.print_whitespace(printer)
            printer.print_string("origins [")
            printer.print_list(origins.data, printer.print_attribute)
            printer.print_string("]")

    def parse(self, parser: Parser, state: ParsingState) -> None:
        if parser.parse_optional_keyword("origins"):
            names = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_str_literal)
            self.attr.set(state, ArrayAttr([StringAttr(n) for n in names]))

    def is_optional_like(self) -> bool:
        return True


class Identifier(PropertyDirective):
    """A string printed as an identifier; each subclass names what it is (`WHAT`), for errors."""

    WHAT = ""

    def print_value(self, printer: Printer, value: Attribute) -> None:
        printer.print_string(value.data)  # type: ignore[attr-defined]

    def parse(self, parser: Parser, state: ParsingState) -> None:
        self.attr.set(state, StringAttr(parser.parse_identifier(f" ({self.WHAT})")))


@irdl_custom_directive
class ReductionKind(Identifier):
    """A reduction's kind: `sum`, `argmax`, `welford`."""

    attr: AttributeVariable
    WHAT = "reduction kind"


@irdl_custom_directive
class IndexSymbol(Identifier):
    """The index symbol a `triton.index` names: `x0`."""

    attr: AttributeVariable
    WHAT = "index symbol"


@irdl_custom_directive
class SymbolRef(PropertyDirective):
    """A reference to a buffer or kernel: `@buf0`."""

    attr: AttributeVariable

    def print_value(self, printer: Printer, value: Attribute) -> None:
        printer.print_attribute(value)

    def parse(self, parser: Parser, state: ParsingState) -> None:
        self.attr.set(state, SymbolRefAttr(parser.parse_symbol_name().data))


@irdl_custom_directive
class SymbolRefs(PropertyDirective):
    """An array of buffer references, `@buf1, @buf2` (nothing when empty)."""

    attr: AttributeVariable

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        refs = self.attr.get(op)
        if isinstance(refs, ArrayAttr) and refs.data:
            state.print_whitespace(printer)
            printer.print_list(refs.data, printer.print_attribute)

    def parse(self, parser: Parser, state: ParsingState) -> None:
        names: list[str] = []
        if (first := parser.parse_optional_symbol_name()) is not None:
            names.append(first.data)
            while parser.parse_optional_punctuation(","):
                names.append(parser.parse_symbol_name().data)
        self.attr.set(state, ArrayAttr([SymbolRefAttr(n) for n in names]))

    def is_optional_like(self) -> bool:
        return True


@irdl_custom_directive
class AttrList(PropertyDirective):
    """An array of attributes without brackets, `#a, #b`; present when not empty."""

    attr: AttributeVariable

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        printer.print_list(self.attr.get(op).data, printer.print_attribute)  # type: ignore[union-attr]

    def parse(self, parser: Parser, state: ParsingState) -> None:
        attrs = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_attribute)
        self.attr.set(state, ArrayAttr(attrs))

    def is_present(self, op: IRDLOperation) -> bool:
        return bool(self.attr.get(op).data)  # type: ignore[union-attr]

    def is_anchorable(self) -> bool:
        return True

    def set_empty(self, state: ParsingState) -> None:
        self.attr.set(state, ArrayAttr([]))


@irdl_custom_directive
class Operands(CustomDirective):
    """`%a, %b`: variadic operands of which there is at least one."""

    values: VariadicOperandVariable

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        printer.print_list(self.values.get(op), printer.print_ssa_value)

    def parse(self, parser: Parser, state: ParsingState) -> None:
        values = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_unresolved_operand)
        self.values.set(state, values)


# ---------------------------------------------------------------------------------------------
# Types


def print_type_list(printer: Printer, types: Sequence[Attribute]) -> None:
    """`t`, or `(t0, t1, ...)` for any other number of types."""
    if len(types) == 1:
        printer.print_attribute(types[0])
    else:
        printer.print_string("(")
        printer.print_list(types, printer.print_attribute)
        printer.print_string(")")


def parse_type_list(parser: Parser) -> list[Attribute]:
    """The syntax of `print_type_list`."""
    if parser.parse_optional_punctuation("("):
        types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        parser.parse_punctuation(")")
        return types
    return [parser.parse_type()]


@irdl_custom_directive
class TypeList(CustomDirective):
    """`f32`, or `(f32, i64)`: the result types of a reduction."""

    types: TypeDirective

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        print_type_list(printer, self.types.get(op))

    def parse(self, parser: Parser, state: ParsingState) -> None:
        self.types.set(state, parse_type_list(parser))


def parse_types_of(
    parser: Parser, state: ParsingState, operands: VariadicOperandVariable, what: str
) -> list[Attribute]:
    """`t0, t1, ...`: one type per operand already parsed (an error at the types otherwise)."""
    start = parser.pos
    types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
    expected = len(state.operands[operands.index] or ())
    if len(types) != expected:
        parser.raise_error(f"expected {expected} {what} types, got {len(types)}", start, parser.pos)
    return types


@irdl_custom_directive
class TypesOf(CustomDirective):
    """`f32, i64`: the types of variadic operands, one each."""

    operands: VariadicOperandVariable
    types: TypeDirective

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        printer.print_list(self.types.get(op), printer.print_attribute)

    def parse(self, parser: Parser, state: ParsingState) -> None:
        self.types.set(state, parse_types_of(parser, state, self.operands, "operand"))

    def set_empty(self, state: ParsingState) -> None:
        self.types.set(state, ())


@irdl_custom_directive
class FunctionTypeOf(CustomDirective):
    """`(tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>`: a call's operand and result types."""

    operands: VariadicOperandVariable
    operand_types: TypeDirective
    result_types: TypeDirective

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        printer.print_function_type(self.operand_types.get(op), self.result_types.get(op))

    def parse(self, parser: Parser, state: ParsingState) -> None:
        start = parser.pos
        function_type = parser.parse_function_type()
        inputs, expected = function_type.inputs.data, len(state.operands[self.operands.index] or ())
        if len(inputs) != expected:
            parser.raise_error(f"expected {expected} operand types, got {len(inputs)}", start, parser.pos)
        self.operand_types.set(state, inputs)
        self.result_types.set(state, function_type.outputs.data)


# ---------------------------------------------------------------------------------------------
# Extern calls' arguments


class PropertyDict(CustomDirective):
    """Properties written as one dictionary, `{args = [...], kwargs = {...}}`, each under its
    own name, in the order of the subclass's fields; `args` is required."""

    def _variables(self) -> list[AttributeVariable]:
        return [getattr(self, f.name) for f in dataclasses.fields(self)]  # type: ignore[arg-type]

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        values = {v.name: value for v in self._variables() if (value := v.get(op)) is not None}
        state.print_whitespace(printer)
        printer.print_attr_dict(values)

    def parse(self, parser: Parser, state: ParsingState) -> None:
        name, start = state.op_type.name, parser.pos
        values = parser.parse_optional_attr_dict()
        if not isinstance(values.get("args"), ArrayAttr):
            parser.raise_error(f"{name} needs {{args = [...]}}", start, parser.pos)
        variables = {v.name: v for v in self._variables()}
        if unknown := sorted(set(values) - set(variables)):
            parser.raise_error(f"{name}: unknown property {unknown[0]!r}", start, parser.pos)
        for key, value in values.items():
            variables[key].set(state, value)


@irdl_custom_directive
class CallArgs(PropertyDict):
    """`{args = [#aten.tensor, 8 : i64], kwargs = {...}}`: an aten call's Python arguments."""

    args: AttributeVariable
    kwargs: AttributeVariable


@irdl_custom_directive
class ExternArgs(PropertyDict):
    """`{args = [@buf0, 1 : i64], kwargs = {...}, fresh, out, origins = [...]}`: an extern node's
    call arguments, whether it returns new tensors or writes into them, and where it comes from."""

    args: AttributeVariable
    kwargs: AttributeVariable
    fresh: AttributeVariable
    out: AttributeVariable
    origins: AttributeVariable
