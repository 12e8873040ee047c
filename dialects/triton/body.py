"""Per-lane kernel body ops: `triton.load`, `triton.store`, `triton.expr`, and the mask helpers
they share with the reductions."""

from __future__ import annotations

import math
from collections.abc import Sequence

import sympy
from xdsl.dialects.builtin import (
    ArrayAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    AnyFloat,
    i1,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from mlc.dialects.sym import ExprAttr, expr_str, parse_expr
from mlc.dialects.triton.core import EVICTION_POLICIES, PtrType
from mlc.dialects.triton.kernel import KernelBodyOp, KernelOp

def _print_mask(printer: Printer, names: ArrayAttr | None, value: SSAValue | None) -> None:
    parts = [n.data for n in names.data] if names is not None else []  # type: ignore[attr-defined]
    if not parts and value is None:
        return
    printer.print_string(" mask " + ", ".join(parts))
    if value is not None:
        printer.print_string(", " if parts else "")
        printer.print_ssa_value(value)


def _parse_mask(parser: Parser) -> tuple[list[str], SSAValue | None]:
    """`mask xmask`, `mask %m`, `mask xmask, %m`: all must hold (Python `xmask & tmp3`)."""
    names: list[str] = []
    value: SSAValue | None = None
    if not parser.parse_optional_keyword("mask"):
        return names, value
    while True:
        if (operand := parser.parse_optional_unresolved_operand()) is not None:
            value = parser.resolve_operand(operand, i1)
            break  # the SSA mask comes last
        names.append(parser.parse_identifier("mask name"))
        if not parser.parse_optional_punctuation(","):
            break
    return names, value


def _verify_mask(op: KernelBodyOp, kernel: KernelOp, names: ArrayAttr | None) -> None:
    valid = op.valid_masks(kernel)
    where = " outside its triton.rloop" if kernel.kernel_kind == "reduction" and valid == ("xmask",) else ""
    for n in names.data if names is not None else []:
        if n.data not in valid:  # type: ignore[attr-defined]
            raise VerifyException(
                f"{op.name}: unknown mask '{n.data}' in a {kernel.kernel_kind} kernel{where} "  # type: ignore[attr-defined]
                f"(known: {', '.join(valid)})"
            )


def _verify_pointer(op: Operation, ptr: SSAValue, elem: Attribute, what: str) -> None:
    if not isinstance(ptr.type, PtrType):
        raise VerifyException(f"{op.name}: expected a !triton.ptr, got {ptr.type}")
    if ptr.type.pointee != elem:
        raise VerifyException(f"{op.name}: {what} {elem} does not match the pointer's {ptr.type.pointee}")


def _mask_names_attr(names: Sequence[str]) -> dict[str, Attribute]:
    return {"mask_names": ArrayAttr([StringAttr(n) for n in names])} if names else {}


def _parse_other(parser: Parser) -> int | float:
    """A number, or `inf`, `-inf`, `nan`."""
    negative = parser.parse_optional_punctuation("-") is not None
    if parser.parse_optional_keyword("inf"):
        return -math.inf if negative else math.inf
    if not negative and parser.parse_optional_keyword("nan"):
        return math.nan
    value = parser.parse_number()
    return -value if negative else value


@irdl_op_definition
class LoadOp(KernelBodyOp):
    """`%v = triton.load %in_ptr0[x0 + 64*x1] mask xmask, %m other 0.0 evict_last : f32`.

    `tl.load(in_ptr0 + (x0 + 64*x1), xmask & tmp3, other=0.0, eviction_policy='evict_last')`:
    lanes where a mask is false read `other` (undefined without it) and touch no memory."""

    name = "triton.load"
    ptr = operand_def(PtrType)
    mask = opt_operand_def(i1)
    index = prop_def(ExprAttr)
    mask_names = opt_prop_def(ArrayAttr)
    other = opt_prop_def(Attribute)
    eviction_policy = opt_prop_def(StringAttr)
    result = result_def()
    traits = traits_def(Pure())

    def __init__(
        self,
        ptr: SSAValue,
        index: sympy.Expr | int,
        mask_names: Sequence[str] = (),
        mask: SSAValue | None = None,
        other: Attribute | None = None,
        eviction_policy: str | None = None,
    ):
        props: dict[str, Attribute] = {"index": ExprAttr(index), **_mask_names_attr(mask_names)}
        if other is not None:
            props["other"] = other
        if eviction_policy is not None:
            props["eviction_policy"] = StringAttr(eviction_policy)
        elem = ptr.type.pointee if isinstance(ptr.type, PtrType) else ptr.type
        super().__init__(operands=[ptr, [mask] if mask is not None else []], properties=props, result_types=[elem])

    @property
    def masks(self) -> list[str]:
        return [n.data for n in self.mask_names.data] if self.mask_names is not None else []  # type: ignore[attr-defined]

    def verify_(self) -> None:
        kernel = self._verify_symbols([self.index.expr])
        _verify_pointer(self, self.ptr, self.result.type, "result type")
        _verify_mask(self, kernel, self.mask_names)
        if self.other is not None:
            if not self.masks and self.mask is None:
                raise VerifyException("triton.load: 'other' needs a mask")
            if not isinstance(self.other, (IntegerAttr, FloatAttr)) or self.other.type != self.result.type:
                raise VerifyException(f"triton.load: 'other' must be a {self.result.type} constant")
        if self.eviction_policy is not None and self.eviction_policy.data not in EVICTION_POLICIES:
            raise VerifyException(f"triton.load: unknown eviction policy '{self.eviction_policy.data}'")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.ptr)
        printer.print_string(f"[{expr_str(self.index.expr)}]")
        _print_mask(printer, self.mask_names, self.mask)
        if isinstance(self.other, IntegerAttr):
            printer.print_string(f" other {self.other.value.data}")
        elif isinstance(self.other, FloatAttr):
            value = self.other.value.data
            printer.print_string(" other ")
            if math.isfinite(value):
                printer.print_float(value, self.other.type)  # type: ignore[arg-type]
            else:  # the Python spellings, not MLIR's hex bit patterns
                printer.print_string("nan" if math.isnan(value) else ("-inf" if value < 0 else "inf"))
        elif self.other is not None:
            printer.print_string(" other ")
            printer.print_attribute(self.other)
        if self.eviction_policy is not None:
            printer.print_string(f" {self.eviction_policy.data}")
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> LoadOp:
        ptr = parser.parse_unresolved_operand()
        parser.parse_punctuation("[")
        index = parse_expr(parser)
        parser.parse_punctuation("]")
        names, mask = _parse_mask(parser)
        other: int | float | None = None
        if parser.parse_optional_keyword("other"):
            other = _parse_other(parser)
        policy = next((p for p in EVICTION_POLICIES if parser.parse_optional_keyword(p)), None)
        parser.parse_punctuation(":")
        elem = parser.parse_type()
        other_attr: Attribute | None = None
        if other is not None:
            if isinstance(elem, AnyFloat):
                other_attr = FloatAttr(float(other), elem)
            elif isinstance(elem, IntegerType) and isinstance(other, int):
                other_attr = IntegerAttr(other, elem)
            else:
                parser.raise_error(f"'other' {other} is not a {elem} constant")
        ptr_value = parser.resolve_operand(ptr, PtrType(elem))
        return cls(ptr_value, index, names, mask, other_attr, policy)


@irdl_op_definition
class StoreOp(KernelBodyOp):
    """`triton.store %out_ptr0[x0 + 64*x1], %v mask xmask : f32` (`tl.store(out_ptr0 + (...), tmp5, xmask)`)."""

    name = "triton.store"
    ptr = operand_def(PtrType)
    value = operand_def()
    mask = opt_operand_def(i1)
    index = prop_def(ExprAttr)
    mask_names = opt_prop_def(ArrayAttr)

    def __init__(
        self,
        ptr: SSAValue,
        index: sympy.Expr | int,
        value: SSAValue,
        mask_names: Sequence[str] = (),
        mask: SSAValue | None = None,
    ):
        super().__init__(
            operands=[ptr, value, [mask] if mask is not None else []],
            properties={"index": ExprAttr(index), **_mask_names_attr(mask_names)},
        )

    @property
    def masks(self) -> list[str]:
        return [n.data for n in self.mask_names.data] if self.mask_names is not None else []  # type: ignore[attr-defined]

    def verify_(self) -> None:
        kernel = self._verify_symbols([self.index.expr])
        _verify_pointer(self, self.ptr, self.value.type, "stored type")
        _verify_mask(self, kernel, self.mask_names)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.ptr)
        printer.print_string(f"[{expr_str(self.index.expr)}], ")
        printer.print_ssa_value(self.value)
        _print_mask(printer, self.mask_names, self.mask)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)

    @classmethod
    def parse(cls, parser: Parser) -> StoreOp:
        ptr = parser.parse_unresolved_operand()
        parser.parse_punctuation("[")
        index = parse_expr(parser)
        parser.parse_punctuation("]")
        parser.parse_punctuation(",")
        value = parser.parse_unresolved_operand()
        names, mask = _parse_mask(parser)
        parser.parse_punctuation(":")
        elem = parser.parse_type()
        return cls(parser.resolve_operand(ptr, PtrType(elem)), index, parser.resolve_operand(value, elem), names, mask)


@irdl_op_definition
class ExprOp(KernelBodyOp):
    """An index as a tile value: `%i = triton.expr x0 + 64*x1 : i64` (Inductor's `index_expr`)."""

    name = "triton.expr"
    expr = prop_def(ExprAttr)
    result = result_def(IntegerType)
    traits = traits_def(Pure())

    def __init__(self, expr: sympy.Expr | int, result_type: Attribute):
        super().__init__(properties={"expr": ExprAttr(expr)}, result_types=[result_type])

    def verify_(self) -> None:
        self._verify_symbols([self.expr.expr])

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {expr_str(self.expr.expr)} : ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> ExprOp:
        expr = parse_expr(parser)
        parser.parse_punctuation(":")
        return cls(expr, parser.parse_type())
