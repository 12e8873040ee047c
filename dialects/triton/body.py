"""Per-lane kernel body ops: `triton.load`, `triton.store` (accesses through a kernel pointer),
`triton.expr` (an index as a tile) and `triton.indirect_index` (a loaded position)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import sympy
from xdsl.dialects.builtin import (
    AnyFloat,
    FloatAttr,
    FloatData,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    UnitAttr,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    result_def,
    traits_def,
)
from xdsl.irdl.declarative_assembly_format import (
    AttributeVariable,
    CustomDirective,
    ParsingState,
    PrintingState,
    TypeDirective,
    irdl_custom_directive,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from mlc.dialects.access import IndexExprOp, IndirectIndexBase, StoreModeMixin, mode_props
from mlc.dialects.sym import ExprAttr
from mlc.dialects.syntax import PropertyDirective
from mlc.dialects.triton.core import EVICTION_POLICIES, PtrType, mask_names_props
from mlc.dialects.triton.kernel import KernelBodyOp, MaskedBodyOp, PointerAccessOp

# ---------------------------------------------------------------------------------------------
# Syntax of loads: `other 0.0`, the eviction policy, and the pointee type


@irdl_custom_directive
class Other(PropertyDirective):
    """` other 0.0` (also `inf`, `-inf`, `nan`): what masked-off lanes of a load read. Parsed
    before the type that gives it its type: `LoadType` makes it a constant of that type."""

    attr: AttributeVariable

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        if (value := self.attr.get(op)) is None:
            return
        state.print_whitespace(printer)
        printer.print_string("other ")
        if isinstance(value, IntegerAttr):
            printer.print_string(str(value.value.data))
        elif not isinstance(value, FloatAttr):
            printer.print_attribute(value)
        elif math.isfinite(number := value.value.data):
            printer.print_float(number, value.type)  # type: ignore[arg-type]
        else:  # Python's spellings, not MLIR's hex bit patterns
            printer.print_string("nan" if math.isnan(number) else ("-inf" if number < 0 else "inf"))

    def parse(self, parser: Parser, state: ParsingState) -> None:
        if parser.parse_optional_keyword("other"):
            negative = parser.parse_optional_punctuation("-") is not None
            if parser.parse_optional_keyword("inf"):
                value: int | float = math.inf
            elif not negative and parser.parse_optional_keyword("nan"):
                value = math.nan
            else:
                value = parser.parse_number()
            value = -value if negative else value
            self.attr.set(state, IntAttr(value) if isinstance(value, int) else FloatData(value))

    def is_optional_like(self) -> bool:
        return True


@irdl_custom_directive
class Eviction(PropertyDirective):
    """` evict_last`: the load's cache eviction policy."""

    attr: AttributeVariable

    def print_value(self, printer: Printer, value: Attribute) -> None:
        printer.print_string(value.data)  # type: ignore[attr-defined]

    def parse(self, parser: Parser, state: ParsingState) -> None:
        if (policy := next((p for p in EVICTION_POLICIES if parser.parse_optional_keyword(p)), None)) is not None:
            self.attr.set(state, StringAttr(policy))

    def is_optional_like(self) -> bool:
        return True


@irdl_custom_directive
class Pointee(CustomDirective):
    """`: f32` after a store: the stored type, whose pointer the `ptr` operand is."""

    ptr: TypeDirective
    elem: TypeDirective

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        printer.print_attribute(self.elem.get(op)[0])

    def parse(self, parser: Parser, state: ParsingState) -> None:
        self._parse_elem(parser, state)

    def _parse_elem(self, parser: Parser, state: ParsingState) -> Attribute:
        elem = parser.parse_type()
        self.elem.set(state, (elem,))
        self.ptr.set(state, (PtrType(elem),))
        return elem


@irdl_custom_directive
class LoadType(Pointee):
    """`: f32` after a load: the loaded type, of the pointer and of `other`."""

    ptr: TypeDirective
    elem: TypeDirective
    other: AttributeVariable

    def parse(self, parser: Parser, state: ParsingState) -> None:
        elem = self._parse_elem(parser, state)
        raw = state.properties.get(self.other.name)
        if isinstance(raw, (IntAttr, FloatData)):
            value = raw.data
            if isinstance(elem, AnyFloat):
                state.properties[self.other.name] = FloatAttr(float(value), elem)
            elif isinstance(elem, IntegerType) and isinstance(value, int):
                state.properties[self.other.name] = IntegerAttr(value, elem)
            else:
                parser.raise_error(f"'other' {value} is not a {elem} constant")


# ---------------------------------------------------------------------------------------------
# Ops


@irdl_op_definition
class LoadOp(PointerAccessOp):
    """`%v = triton.load %in_ptr0[x0 + 64*x1] mask xmask, %m other 0.0 evict_last : f32`.

    `tl.load(in_ptr0 + (x0 + 64*x1), xmask & tmp3, other=0.0, eviction_policy='evict_last')`:
    lanes where a mask is false read `other` (undefined without it) and touch no memory. With
    `indirect(%k)`, `ind0` in the index is the tile %k (`in_ptr1 + (x0 + 768*tmp4)`)."""

    name = "triton.load"
    ptr = operand_def(PtrType)
    other = opt_prop_def(Attribute)
    eviction_policy = opt_prop_def(StringAttr)
    result = result_def()
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$ptr `` custom<Index>($index) custom<Indirect>($indirect) custom<Masks>($mask_names, $mask)"
        " custom<Other>($other) custom<Eviction>($eviction_policy)"
        " `:` custom<LoadType>(type($ptr), type($result), ref($other)) attr-dict"
    )
    custom_directives = (Other, Eviction, LoadType, *MaskedBodyOp.custom_directives)

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
        props: dict[str, Attribute] = {"index": ExprAttr(index), **mask_names_props(mask_names)}
        if other is not None:
            props["other"] = other
        if eviction_policy is not None:
            props["eviction_policy"] = StringAttr(eviction_policy)
        elem = ptr.type.pointee if isinstance(ptr.type, PtrType) else ptr.type
        operands = [ptr, [mask] if mask is not None else [], list(indirect)]
        super().__init__(operands=operands, properties=props, result_types=[elem])

    def verify_(self) -> None:
        kernel = self._verify_symbols([self.index.expr])
        self.verify_pointer(self.result.type, "result type")
        self.verify_masks(kernel)
        if self.other is not None:
            if not self.masks and self.mask is None:
                raise VerifyException("triton.load: 'other' needs a mask")
            if not isinstance(self.other, (IntegerAttr, FloatAttr)) or self.other.type != self.result.type:
                raise VerifyException(f"triton.load: 'other' must be a {self.result.type} constant")
        if self.eviction_policy is not None and self.eviction_policy.data not in EVICTION_POLICIES:
            raise VerifyException(f"triton.load: unknown eviction policy '{self.eviction_policy.data}'")


@irdl_op_definition
class StoreOp(StoreModeMixin, PointerAccessOp):
    """`triton.store %out_ptr0[x0 + 64*x1], %v mask xmask : f32` (`tl.store(out_ptr0 + (...), tmp5, xmask)`);
    `triton.store %out_ptr0[x0 + 768*ind0] indirect(%k), %v atomic_add mask xmask : f32` is
    `tl.atomic_add(out_ptr0 + (x0 + 768*tmp4), tmp5, xmask, sem='relaxed')`."""

    name = "triton.store"
    ptr = operand_def(PtrType)
    value = operand_def()
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$ptr `` custom<Index>($index) custom<Indirect>($indirect) `,` $value custom<StoreMode>($mode)"
        " custom<Masks>($mask_names, $mask) `:` custom<Pointee>(type($ptr), type($value)) attr-dict"
    )
    custom_directives = (Pointee, *MaskedBodyOp.custom_directives)

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
        props: dict[str, Attribute] = {"index": ExprAttr(index), **mode_props(mode), **mask_names_props(mask_names)}
        super().__init__(
            operands=[ptr, value, [mask] if mask is not None else [], list(indirect)], properties=props
        )

    def verify_(self) -> None:
        kernel = self._verify_symbols([self.index.expr])
        self.verify_pointer(self.value.type, "stored type")
        self.verify_masks(kernel)
        self.verify_store_mode()


@irdl_op_definition
class IndirectIndexOp(IndirectIndexBase, MaskedBodyOp):
    """`%k = triton.indirect_index %t size 1000 mask xmask check : i64`: a loaded position, with
    negative values counted from the end (`tmp4 = tl.where(tmp3 < 0, tmp3 + 1000, tmp3)`); with
    `check`, `tl.device_assert(((0 <= tmp4) & (tmp4 < 1000)) | ~xmask, ...)` where the masks
    hold (a kernel compiled in Triton's debug mode; a no-op otherwise)."""

    name = "triton.indirect_index"
    check = opt_prop_def(UnitAttr)
    traits = traits_def(Pure())
    assembly_format = (
        "$value `size` custom<Expr>($size) custom<MaskNames>($mask_names) (`check` $check^)?"
        " `:` custom<PositionType>(type($value)) attr-dict"
    )
    custom_directives = MaskedBodyOp.custom_directives

    def __init__(self, value: SSAValue, size: sympy.Expr | int, mask_names: Sequence[str] = (), check: bool = False):
        props: dict[str, Attribute] = {"size": ExprAttr(size), **mask_names_props(mask_names)}
        if check:
            props["check"] = UnitAttr()
        super().__init__(operands=[value], properties=props, result_types=[IndexType()])

    def verify_(self) -> None:
        kernel = self._verify_symbols([self.size.expr])
        self.verify_masks(kernel)
        self.verify_size()


@irdl_op_definition
class ExprOp(IndexExprOp, KernelBodyOp):
    """An index as a tile value: `%i = triton.expr x0 + 64*x1 : i64` (Inductor's `index_expr`)."""

    name = "triton.expr"
    traits = traits_def(Pure())

    def __init__(self, expr: sympy.Expr | int, result_type: Attribute, indirect: Sequence[SSAValue] = ()):
        super().__init__(operands=[list(indirect)], properties={"expr": ExprAttr(expr)}, result_types=[result_type])

    def verify_(self) -> None:
        self._verify_symbols(self.index_exprs)
