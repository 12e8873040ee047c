"""The ops of a `buffer` node's body: `buffer.load`, `buffer.store`, `buffer.reduce`.

Part of the `buffer` dialect (registered by `mlc.dialects.buffer`, which re-exports them). A body
belongs to a `buffer.computed` or a `buffer.scatter`; its index expressions use that node's
index variables (`i0, ...`, `r0_0, ...`), size symbols, and the access's own loaded positions
(`ind0, ...`, see `sym`).
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy
from xdsl.dialects.builtin import IndexType, StringAttr, SymbolRefAttr, i1
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

from mlc.dialects.loops import parse_store_mode, reduction_index_names, verify_index_symbols, verify_store_mode
from mlc.dialects.loops_reduce import ReduceBase
from mlc.dialects.sym import ExprAttr, parse_access, print_access

def enclosing_node(op: Operation) -> Operation | None:
    """The buffer.computed or buffer.scatter whose body holds `op` (the node says which index
    symbols exist)."""
    parent = op.parent_op()
    return parent if parent is not None and callable(getattr(parent, "index_symbols", None)) else None


def _verify_index(op: Operation, index: sympy.Expr, indirect: int = 0) -> None:
    owner = enclosing_node(op)
    if owner is None:
        raise VerifyException(f"{op.name} must be inside buffer.computed")
    verify_index_symbols(op, [index], owner.index_symbols(), indirect)  # type: ignore[attr-defined]


def _parse_access(parser: Parser) -> tuple[str, sympy.Expr, list[SSAValue]]:
    """`@name[index] indirect(...)?`."""
    name = parser.parse_symbol_name().data
    return name, *parse_access(parser)


@irdl_op_definition
class LoadOp(IRDLOperation):
    """Read a buffer at a flat index: `%0 = buffer.load @buf4[i1 + 64*i0] : f32`.

    With `mask %m` (an i1), lanes where the mask is false read 0 and touch no memory; with
    `indirect(%k)` the index names loaded positions (`768*ind0 + i1`, see `sym`)."""

    name = "buffer.load"
    buffer = prop_def(SymbolRefAttr)
    index = prop_def(ExprAttr)
    mask = opt_operand_def()
    indirect = var_operand_def(IndexType)
    result = result_def()
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        buffer: str,
        index: sympy.Expr,
        result_type: Attribute,
        mask: SSAValue | None = None,
        indirect: Sequence[SSAValue] = (),
    ):
        super().__init__(
            operands=[[mask] if mask is not None else [], list(indirect)],
            properties={"buffer": SymbolRefAttr(buffer), "index": ExprAttr(index)},
            result_types=[result_type],
        )

    @property
    def buffer_name(self) -> str:
        return self.buffer.root_reference.data

    def verify_(self) -> None:
        _verify_index(self, self.index.expr, len(self.indirect))

    def print(self, printer: Printer) -> None:
        printer.print_string(f" @{self.buffer_name}")
        print_access(printer, self.index.expr, self.indirect)
        if self.mask is not None:
            printer.print_string(" mask ")
            printer.print_ssa_value(self.mask)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> LoadOp:
        name, index, indirect = _parse_access(parser)
        mask = parser.parse_operand(i1) if parser.parse_optional_keyword("mask") else None
        parser.parse_punctuation(":")
        return cls(name, index, parser.parse_type(), mask, indirect)


@irdl_op_definition
class StoreOp(IRDLOperation):
    """Write this node's value: `buffer.store @buf5[i1 + 64*i0], %9 : f32`; ends a body.

    A scatter's store is at loaded positions, and where positions can repeat it adds
    atomically: `buffer.store @buf5[i1 + 16*ind0] indirect(%k), %9 atomic_add : f32`."""

    name = "buffer.store"
    buffer = prop_def(SymbolRefAttr)
    index = prop_def(ExprAttr)
    value = operand_def()
    indirect = var_operand_def(IndexType)
    mode = opt_prop_def(StringAttr)
    traits = traits_def(IsTerminator())

    def __init__(
        self, buffer: str, index: sympy.Expr, value: SSAValue, indirect: Sequence[SSAValue] = (), mode: str | None = None
    ):
        props: dict[str, Attribute] = {"buffer": SymbolRefAttr(buffer), "index": ExprAttr(index)}
        if mode is not None:
            props["mode"] = StringAttr(mode)
        super().__init__(operands=[value, list(indirect)], properties=props)

    @property
    def buffer_name(self) -> str:
        return self.buffer.root_reference.data

    @property
    def store_mode(self) -> str | None:
        return self.mode.data if self.mode is not None else None

    def verify_(self) -> None:
        _verify_index(self, self.index.expr, len(self.indirect))
        verify_store_mode(self, self.store_mode)
        owner = enclosing_node(self)
        if getattr(owner, "is_reduction", False):
            reduction_vars = set(reduction_index_names(len(owner.reduction_range_exprs)))  # type: ignore[union-attr]
            used = {s.name for s in self.index.expr.free_symbols}
            if used & reduction_vars:
                raise VerifyException(
                    "buffer.store: a reduction's store index cannot use reduction variables"
                )

    def print(self, printer: Printer) -> None:
        printer.print_string(f" @{self.buffer_name}")
        print_access(printer, self.index.expr, self.indirect)
        printer.print_string(", ")
        printer.print_ssa_value(self.value)
        if self.mode is not None:
            printer.print_string(f" {self.mode.data}")
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)

    @classmethod
    def parse(cls, parser: Parser) -> StoreOp:
        name, index, indirect = _parse_access(parser)
        parser.parse_punctuation(",")
        value = parser.parse_unresolved_operand()
        mode = parse_store_mode(parser)
        parser.parse_punctuation(":")
        return cls(name, index, parser.resolve_operand(value, parser.parse_type()), indirect, mode)


@irdl_op_definition
class ReduceOp(ReduceBase):
    """A reduction in a `buffer.computed` body: `%r = buffer.reduce sum %v : f32 -> f32`."""

    name = "buffer.reduce"
