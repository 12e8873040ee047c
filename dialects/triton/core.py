"""Constants, types and attributes of the `triton` dialect, and the syntax its ops share: the
numels of a kernel or launch (`ynumel 8 xnumel 64 r0_numel 9`) and masks (`mask xmask, %m`,
`custom<Masks>` in an op's assembly format)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    IntAttr,
    IntegerType,
    StringAttr,
    SymbolRefAttr,
    AnyFloat,
)
from xdsl.ir import Attribute, Operation, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import IRDLOperation, irdl_attr_definition
from xdsl.irdl.declarative_assembly_format import (
    AttributeVariable,
    CustomDirective,
    OptionalOperandVariable,
    ParsingState,
    PrintingState,
    irdl_custom_directive,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from mlc.dialects.sym import ExprAttr, expr_str, parse_expr

KERNEL_KINDS = ("pointwise", "reduction", "persistent_reduction", "matmul")
# Symbols and masks a kernel of each kind defines implicitly. A looped `reduction` kernel
# defines r0_index and r0_mask only inside its `triton.rloop` (one R0_BLOCK slice at a time).
_REDUCTION_INDICES, _REDUCTION_MASKS = ("xindex", "r0_index"), ("xmask", "r0_mask")
# A `matmul` kernel's tile is [YBLOCK, 1] rows (M) by [1, XBLOCK] columns (N); inside its rloop
# the K slice is r0_index ([1, R0_BLOCK], the columns of an A tile) and r0_index_t ([R0_BLOCK, 1],
# the rows of a B tile), with r0_mask and r0_mask_t. A batched one (`znumel`: its products) also
# defines zindex, the product its program computes (a scalar: one per program, never masked).
_MATMUL_LOOP_INDICES, _MATMUL_LOOP_MASKS = ("r0_index", "r0_index_t"), ("r0_mask", "r0_mask_t")
IMPLICIT_INDICES = {"pointwise": ("xindex",), "reduction": _REDUCTION_INDICES, "persistent_reduction": _REDUCTION_INDICES,
                    "matmul": ("yindex", "xindex", *_MATMUL_LOOP_INDICES)}
MASK_NAMES = {"pointwise": ("xmask",), "reduction": _REDUCTION_MASKS, "persistent_reduction": _REDUCTION_MASKS,
              "matmul": ("ymask", "xmask", *_MATMUL_LOOP_MASKS)}
# Names the emitted Python defines itself; an index symbol may not shadow them.
# A 2-D tiled pointwise kernel (one with `ynumel`) also defines yindex ([YBLOCK, 1]) and ymask.
TILED_INDICES, TILED_MASKS = ("xindex", "yindex"), ("xmask", "ymask")
RESERVED = {"xoffset", "xindex", "xmask", "xnumel", "XBLOCK"} | {"yoffset", "yindex", "ymask", "ynumel", "YBLOCK"} | {
    "zindex", "znumel"} | {
    "r0_offset", "r0_index", "r0_mask", "r0_numel", "R0_BLOCK", "r0_base", "r0_index_t", "r0_mask_t"}
# Reductions: kinds, and how many accumulators a looped reduction of each kind carries.
REDUCE_KINDS = ("sum", "prod", "max", "min", "argmax", "argmin", "any", "welford", "online_softmax")
ACCUMULATORS = {"argmax": 2, "argmin": 2, "welford": 3, "online_softmax": 2}  # others: 1
BLOCK_NAMES = ("XBLOCK", "YBLOCK", "R0_BLOCK")
EVICTION_POLICIES = ("evict_first", "evict_last")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _blame(op: Operation, message: str) -> VerifyException:
    """A verifier error about a child op; tools point at `e.op` (the container is reported otherwise)."""
    error = VerifyException(message)
    error.op = op  # type: ignore[attr-defined]
    return error


def _refs(names: Sequence[str]) -> ArrayAttr:
    return ArrayAttr([SymbolRefAttr(n) for n in names])


def _ref_names(refs: ArrayAttr) -> list[str]:
    return [r.root_reference.data for r in refs.data]  # type: ignore[attr-defined]


def _print_numels(
    printer: Printer, xnumel: ExprAttr, r0_numel: ExprAttr | None, ynumel: ExprAttr | None = None,
    znumel: ExprAttr | None = None,
) -> None:
    if znumel is not None:
        printer.print_string(f" znumel {expr_str(znumel.expr)}")
    if ynumel is not None:
        printer.print_string(f" ynumel {expr_str(ynumel.expr)}")
    printer.print_string(f" xnumel {expr_str(xnumel.expr)}")
    if r0_numel is not None:
        printer.print_string(f" r0_numel {expr_str(r0_numel.expr)}")


def _parse_numels(parser: Parser) -> tuple[ExprAttr, ExprAttr | None, ExprAttr | None, ExprAttr | None]:
    """`[znumel Z] [ynumel Y] xnumel X [r0_numel R]` -> (xnumel, r0_numel, ynumel, znumel)."""
    znumel = ExprAttr(parse_expr(parser)) if parser.parse_optional_keyword("znumel") else None
    ynumel = ExprAttr(parse_expr(parser)) if parser.parse_optional_keyword("ynumel") else None
    parser.parse_keyword("xnumel")
    xnumel = ExprAttr(parse_expr(parser))
    r0_numel = ExprAttr(parse_expr(parser)) if parser.parse_optional_keyword("r0_numel") else None
    return xnumel, r0_numel, ynumel, znumel


def mask_names_props(names: Sequence[str]) -> dict[str, Attribute]:
    """The `mask_names` property of a body op made in Python (none without masks)."""
    return {"mask_names": ArrayAttr([StringAttr(n) for n in names])} if names else {}


def _parse_mask_names(
    parser: Parser, state: ParsingState, names: AttributeVariable, value: OptionalOperandVariable | None
) -> None:
    """`mask xmask, r0_mask` and, where `value` is given, an SSA mask last: `mask xmask, %m`."""
    found: list[str] = []
    operand = None
    if parser.parse_optional_keyword("mask"):
        while True:
            if value is not None and (operand := parser.parse_optional_unresolved_operand()) is not None:
                break  # the SSA mask comes last
            found.append(parser.parse_identifier(" (mask name)"))
            if not parser.parse_optional_punctuation(","):
                break
    if found:
        names.set(state, ArrayAttr([StringAttr(n) for n in found]))
    if value is not None:
        value.set(state, operand)


def _print_masks(printer: Printer, state: PrintingState, names: Attribute | None, value: SSAValue | None) -> None:
    parts = [n.data for n in names.data] if isinstance(names, ArrayAttr) else []  # type: ignore[attr-defined]
    if not parts and value is None:
        return
    state.print_whitespace(printer)
    printer.print_string("mask " + ", ".join(parts))
    if value is not None:
        printer.print_string(", " if parts else "")
        printer.print_ssa_value(value)


@irdl_custom_directive
class Masks(CustomDirective):
    """` mask xmask, r0_mask, %m`: named masks and an i1 value; all must hold (`xmask & tmp3`)."""

    names: AttributeVariable
    value: OptionalOperandVariable

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        _print_masks(printer, state, self.names.get(op), self.value.get(op))

    def parse(self, parser: Parser, state: ParsingState) -> None:
        _parse_mask_names(parser, state, self.names, self.value)


@irdl_custom_directive
class MaskNames(CustomDirective):
    """` mask r0_mask, xmask`: named masks only (reductions, indirect indices)."""

    names: AttributeVariable

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        _print_masks(printer, state, self.names.get(op), None)

    def parse(self, parser: Parser, state: ParsingState) -> None:
        _parse_mask_names(parser, state, self.names, None)


# ---------------------------------------------------------------------------------------------
# Types and attributes


@irdl_attr_definition
class PtrType(ParametrizedAttribute, TypeAttribute):
    """`!triton.ptr<f32>`: a kernel argument pointing at a buffer of that element type."""

    name = "triton.ptr"
    pointee: TypeAttribute

    def verify(self) -> None:
        if not isinstance(self.pointee, (IntegerType, AnyFloat)):
            raise VerifyException(f"!triton.ptr: pointee must be an integer or float type, got {self.pointee}")


@irdl_attr_definition
class ConfigAttr(ParametrizedAttribute):
    """`#triton.config<XBLOCK = 1024, num_warps = 4, num_stages = 1>`: one launch configuration
    (triton.Config): block sizes (powers of two) then warps and pipeline stages."""

    name = "triton.config"
    blocks: DictionaryAttr
    num_warps: IntAttr
    num_stages: IntAttr

    def __init__(self, blocks: dict[str, int], num_warps: int, num_stages: int = 1):
        sizes = DictionaryAttr({k: IntAttr(v) for k, v in blocks.items()})
        super().__init__(sizes, IntAttr(num_warps), IntAttr(num_stages))

    @property
    def block_sizes(self) -> dict[str, int]:
        return {k: v.data for k, v in self.blocks.data.items()}  # type: ignore[attr-defined]

    def verify(self) -> None:
        for key, value in self.blocks.data.items():
            if key not in BLOCK_NAMES:
                raise VerifyException(
                    f"#triton.config: unknown block size '{key}' (expected one of {', '.join(BLOCK_NAMES)})"
                )
            if not isinstance(value, IntAttr) or value.data < 1 or value.data & (value.data - 1):
                raise VerifyException(f"#triton.config: {key} must be a power of two, got {value}")
        warps = self.num_warps.data
        if warps < 1 or warps & (warps - 1) or warps > 32:
            raise VerifyException(f"#triton.config: num_warps must be a power of two <= 32, got {warps}")
        if self.num_stages.data < 1:
            raise VerifyException(f"#triton.config: num_stages must be positive, got {self.num_stages.data}")

    def print_parameters(self, printer: Printer) -> None:
        items = [f"{k} = {v}" for k, v in self.block_sizes.items()]
        items += [f"num_warps = {self.num_warps.data}", f"num_stages = {self.num_stages.data}"]
        printer.print_string("<" + ", ".join(items) + ">")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        def item() -> tuple[str, int]:
            key = parser.parse_identifier("config key")
            parser.parse_punctuation("=")
            return key, parser.parse_integer(allow_boolean=False, allow_negative=False)

        pos = parser.pos
        items = parser.parse_comma_separated_list(parser.Delimiter.ANGLE, item)
        values = dict(items)
        if len(values) != len(items) or "num_warps" not in values or "num_stages" not in values:
            parser.raise_error("#triton.config needs distinct keys, num_warps and num_stages", pos, parser.pos)
        warps, stages = values.pop("num_warps"), values.pop("num_stages")
        try:
            return list(cls(values, warps, stages).parameters)
        except VerifyException as e:  # report it at the attribute, with a position
            parser.raise_error(str(e), pos, parser.pos)
