"""Per-lane kernel body ops: `triton.load`, `triton.store`, `triton.expr`, and the mask helpers
they share with the reductions."""

from __future__ import annotations

import math
from collections.abc import Sequence

import sympy
from xdsl.dialects.builtin import (
    ArrayAttr,
    FloatAttr,
    IndexType,
    UnitAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    AnyFloat,
    i1,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
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
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from mlc.dialects.loops import parse_indirect_index, parse_store_mode, print_indirect_index, verify_indirect_size, verify_store_mode
from mlc.dialects.sym import ExprAttr, expr_str, parse_access, parse_expr, parse_indirect, print_access, print_indirect
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


class MaskedBodyOp(KernelBodyOp):
    """A body op with named masks (`mask xmask, r0_mask`): loads, stores, indirect indices."""

    mask_names = opt_prop_def(ArrayAttr)

    @property
    def masks(self) -> list[str]:
        return [n.data for n in self.mask_names.data] if self.mask_names is not None else []  # type: ignore[attr-defined]


@irdl_op_definition
class LoadOp(MaskedBodyOp):
    """`%v = triton.load %in_ptr0[x0 + 64*x1] mask xmask, %m other 0.0 evict_last : f32`.

    `tl.load(in_ptr0 + (x0 + 64*x1), xmask & tmp3, other=0.0, eviction_policy='evict_last')`:
    lanes where a mask is false read `other` (undefined without it) and touch no memory. With
    `indirect(%k)`, `ind0` in the index is the tile %k (`in_ptr1 + (x0 + 768*tmp4)`)."""

    name = "triton.load"
    ptr = operand_def(PtrType)
    mask = opt_operand_def(i1)
    indirect = var_operand_def(IndexType)
    index = prop_def(ExprAttr)
    other = opt_prop_def(Attribute)
    eviction_policy = opt_prop_def(StringAttr)
    result = result_def()
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        ptr: SSAValue,
        index: sympy.Expr | int,
        mask_names: Sequence[str] = (),
        mask: SSAValue | None = None,
        other: Attribute | None = None,
        eviction_policy: str | None = None,
        indirect: Sequence[SSAValue] = (),
    ):
        props: dict[str, Attribute] = {"index": ExprAttr(index), **_mask_names_attr(mask_names)}
        if other is not None:
            props["other"] = other
        if eviction_policy is not None:
            props["eviction_policy"] = StringAttr(eviction_policy)
        elem = ptr.type.pointee if isinstance(ptr.type, PtrType) else ptr.type
        operands = [ptr, [mask] if mask is not None else [], list(indirect)]
        super().__init__(operands=operands, properties=props, result_types=[elem])

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
        print_access(printer, self.index.expr, self.indirect)
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
        index, indirect = parse_access(parser)
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
        return cls(ptr_value, index, names, mask, other_attr, policy, indirect)


@irdl_op_definition
class StoreOp(MaskedBodyOp):
    """`triton.store %out_ptr0[x0 + 64*x1], %v mask xmask : f32` (`tl.store(out_ptr0 + (...), tmp5, xmask)`);
    `triton.store %out_ptr0[x0 + 768*ind0] indirect(%k), %v atomic_add mask xmask : f32` is
    `tl.atomic_add(out_ptr0 + (x0 + 768*tmp4), tmp5, xmask, sem='relaxed')`."""

    name = "triton.store"
    ptr = operand_def(PtrType)
    value = operand_def()
    mask = opt_operand_def(i1)
    indirect = var_operand_def(IndexType)
    index = prop_def(ExprAttr)
    mode = opt_prop_def(StringAttr)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        ptr: SSAValue,
        index: sympy.Expr | int,
        value: SSAValue,
        mask_names: Sequence[str] = (),
        mask: SSAValue | None = None,
        indirect: Sequence[SSAValue] = (),
        mode: str | None = None,
    ):
        props: dict[str, Attribute] = {"index": ExprAttr(index), **_mask_names_attr(mask_names)}
        if mode is not None:
            props["mode"] = StringAttr(mode)
        super().__init__(
            operands=[ptr, value, [mask] if mask is not None else [], list(indirect)], properties=props
        )

    @property
    def store_mode(self) -> str | None:
        return self.mode.data if self.mode is not None else None

    def verify_(self) -> None:
        kernel = self._verify_symbols([self.index.expr])
        _verify_pointer(self, self.ptr, self.value.type, "stored type")
        _verify_mask(self, kernel, self.mask_names)
        verify_store_mode(self, self.store_mode)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.ptr)
        print_access(printer, self.index.expr, self.indirect)
        printer.print_string(", ")
        printer.print_ssa_value(self.value)
        if self.mode is not None:
            printer.print_string(f" {self.mode.data}")
        _print_mask(printer, self.mask_names, self.mask)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)

    @classmethod
    def parse(cls, parser: Parser) -> StoreOp:
        ptr = parser.parse_unresolved_operand()
        index, indirect = parse_access(parser)
        parser.parse_punctuation(",")
        value = parser.parse_unresolved_operand()
        mode = parse_store_mode(parser)
        names, mask = _parse_mask(parser)
        parser.parse_punctuation(":")
        elem = parser.parse_type()
        return cls(
            parser.resolve_operand(ptr, PtrType(elem)), index, parser.resolve_operand(value, elem), names, mask,
            indirect, mode,
        )


@irdl_op_definition
class IndirectIndexOp(MaskedBodyOp):
    """`%k = triton.indirect_index %t size 1000 mask xmask check : i64`: a loaded position, with
    negative values counted from the end (`tmp4 = tl.where(tmp3 < 0, tmp3 + 1000, tmp3)`); with
    `check`, `tl.device_assert(((0 <= tmp4) & (tmp4 < 1000)) | ~xmask, ...)` where the masks
    hold (a kernel compiled in Triton's debug mode; a no-op otherwise)."""

    name = "triton.indirect_index"
    value = operand_def(IntegerType)
    size = prop_def(ExprAttr)
    check = opt_prop_def(UnitAttr)
    result = result_def(IndexType)
    traits = traits_def(Pure())

    def __init__(self, value: SSAValue, size: sympy.Expr | int, mask_names: Sequence[str] = (), check: bool = False):
        props: dict[str, Attribute] = {"size": ExprAttr(size), **_mask_names_attr(mask_names)}
        if check:
            props["check"] = UnitAttr()
        super().__init__(operands=[value], properties=props, result_types=[IndexType()])

    def verify_(self) -> None:
        kernel = self._verify_symbols([self.size.expr])
        _verify_mask(self, kernel, self.mask_names)
        verify_indirect_size(self, self.size.expr)

    def print(self, printer: Printer) -> None:
        def masks_and_check() -> None:
            _print_mask(printer, self.mask_names, None)
            printer.print_string(" check" if self.check is not None else "")

        print_indirect_index(printer, self.value, self.size.expr, masks_and_check)

    @classmethod
    def parse(cls, parser: Parser) -> IndirectIndexOp:
        def masks_and_check() -> tuple[list[str], bool]:
            return _parse_mask(parser)[0], parser.parse_optional_keyword("check") is not None

        value, size, (names, check) = parse_indirect_index(parser, masks_and_check)
        return cls(value, size, names, check)


@irdl_op_definition
class ExprOp(KernelBodyOp):
    """An index as a tile value: `%i = triton.expr x0 + 64*x1 : i64` (Inductor's `index_expr`)."""

    name = "triton.expr"
    expr = prop_def(ExprAttr)
    indirect = var_operand_def(IndexType)
    result = result_def(IntegerType)
    traits = traits_def(Pure())

    def __init__(self, expr: sympy.Expr | int, result_type: Attribute, indirect: Sequence[SSAValue] = ()):
        super().__init__(operands=[list(indirect)], properties={"expr": ExprAttr(expr)}, result_types=[result_type])

    def verify_(self) -> None:
        self._verify_symbols([self.expr.expr])

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {expr_str(self.expr.expr)}")
        print_indirect(printer, self.indirect)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> ExprOp:
        expr = parse_expr(parser)
        indirect = parse_indirect(parser)
        parser.parse_punctuation(":")
        return cls(expr, parser.parse_type(), indirect)
