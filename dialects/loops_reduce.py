"""The reduce op's definition `loops.reduce` and `buffer.reduce` share: `ReduceBase`.

Part of the `loops` dialect (`loops.reduce` itself, which must sit directly in a
`loops.reduction`, is defined in `mlc.dialects.loops`; `buffer.reduce` in
`mlc.dialects.buffer_body`). Holds the reduction kinds (`REDUCTION_TYPES`), the check of a
kind's results (`verify_reduce`: argmax/argmin give i64, any gives i1, welford three results)
and the `t` or `(t0, t1, ...)` syntax of result types, which `loops.reduction` prints too.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import StringAttr, i1, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation, operand_def, prop_def, var_result_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

REDUCTION_TYPES = ("sum", "prod", "max", "min", "argmax", "argmin", "any", "welford")


def parse_type_list(parser: Parser) -> list[Attribute]:
    """`t` or `(t0, t1, ...)`."""
    if parser.parse_optional_punctuation("("):
        types = [parser.parse_type()]
        while parser.parse_optional_punctuation(","):
            types.append(parser.parse_type())
        parser.parse_punctuation(")")
        return types
    return [parser.parse_type()]


def print_type_list(printer: Printer, types: Sequence[Attribute]) -> None:
    if len(types) == 1:
        printer.print_attribute(types[0])
    else:
        printer.print_string("(")
        printer.print_list(types, printer.print_attribute)
        printer.print_string(")")


class ReduceBase(IRDLOperation):
    """`%r = <dialect>.reduce <kind> %v : T -> T'`: combine a value over all reduction indices.

    argmax/argmin give i64 positions in the flattened reduction ranges (the first on ties, as
    PyTorch); welford gives (mean, m2, weight); any gives i1. `loops.reduce` and `buffer.reduce`
    share this definition."""

    reduction_type = prop_def(StringAttr)
    value = operand_def()
    outputs = var_result_def()

    def __init__(self, kind: str, value: SSAValue, result_types: Sequence[Attribute]):
        super().__init__(
            operands=[value],
            properties={"reduction_type": StringAttr(kind)},
            result_types=[list(result_types)],
        )

    @property
    def kind(self) -> str:
        return self.reduction_type.data

    def verify_(self) -> None:
        verify_reduce(self)

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.kind} ")
        printer.print_ssa_value(self.value)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)
        printer.print_string(" -> ")
        print_type_list(printer, [r.type for r in self.results])

    @classmethod
    def parse(cls, parser: Parser):  # type: ignore[no-untyped-def]
        kind = parser.parse_identifier("reduction type")
        value = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        value_type = parser.parse_type()
        parser.parse_punctuation("->")
        return cls(kind, parser.resolve_operand(value, value_type), parse_type_list(parser))


def verify_reduce(op: ReduceBase) -> None:
    """Shared by loops.reduce and buffer.reduce: a known kind with its number and types of results."""
    kind = op.reduction_type.data  # type: ignore[attr-defined]
    if kind not in REDUCTION_TYPES:
        raise VerifyException(
            f"{op.name}: unknown reduction type '{kind}' (expected one of {', '.join(REDUCTION_TYPES)})"
        )
    expected = 3 if kind == "welford" else 1
    if len(op.results) != expected:
        raise VerifyException(f"{op.name}: {kind} has {expected} result(s), got {len(op.results)}")
    if kind in ("argmax", "argmin") and op.results[0].type != i64:
        raise VerifyException(f"{op.name}: {kind} results are i64 indices")
    if kind == "any" and op.results[0].type != i1:
        raise VerifyException(f"{op.name}: any gives i1")
    if kind in ("sum", "prod", "max", "min") and op.results[0].type != op.operands[0].type:
        raise VerifyException(
            f"{op.name}: {kind} of {op.operands[0].type} cannot give {op.results[0].type}"
        )
