"""The `triton` dialect: GPU kernels at the level of `triton.language`, and the host wrapper.

Produced by `--convert-to-triton`, printed as a Python module by `mlc-translate --emit-python`.
A module holds `triton.kernel`s (one per fused group; Inductor's `@triton.jit` functions) and one
`triton.wrapper` (Inductor's `call(args)`): allocations, launches, extern calls, views, frees.

    triton.kernel @triton_poi_fused_gelu_0 pointwise(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 512 origins ["gelu"] configs [#triton.config<XBLOCK = 256, num_warps = 4, num_stages = 1>, #triton.config<XBLOCK = 128, num_warps = 4, num_stages = 1>] {
      triton.index x0 = ModularIndexing(xindex, 1, 64)
      triton.index x1 = FloorDiv(xindex, 64)
      %0 = triton.load %in_ptr0[x0 + 64*x1] mask xmask : f32
      %1 = arith.constant 5.000000e-01 : f32
      %2 = arith.mulf %0, %1 : f32
      %3 = math.erf %2 : f32
      triton.store %out_ptr0[x0 + 64*x1], %3 mask xmask : f32
    }
    triton.wrapper @call {
      triton.input "arg0_1" #buffer.layout<[8, 64], [64, 1], f32>
      triton.alloc "buf0" #buffer.layout<[8, 64], [64, 1], f32>
      triton.launch @triton_poi_fused_gelu_0(@arg0_1, @buf0) xnumel 512
      triton.extern "buf1" = "mm.default" {args = [@buf0, @buf2]} : #buffer.layout<[8, 8], [8, 1], f32>
      triton.view "buf2" = @buf0 #buffer.layout<[64, 8], [1, 64], f32>
      triton.free @buf0
      triton.return @buf1
    }

Kernel bodies are tile programs written with scalar types. Every value is a block of its type
whose shape the kernel kind implies -- `[XBLOCK]` in a `pointwise` kernel; in the reduction kinds
`[XBLOCK, R0_BLOCK]` where it varies along the reduction and `[XBLOCK, 1]` where it does not,
Triton broadcasting one against the other -- so `arith`/`math` ops are reused unchanged:
`%2 = arith.mulf %0, %1 : f32` is `tmp2 = tmp0 * tmp1`. The kernel defines, implicitly,
`xoffset = program_id(0) * XBLOCK`, `xindex = xoffset + arange(0, XBLOCK)` and
`xmask = xindex < xnumel`; a reduction kernel also `r0_index` (`[1, R0_BLOCK]`) and
`r0_mask = r0_index < r0_numel` -- a looped one only inside its `triton.rloop`, one R0_BLOCK
slice per step. A 2-D tiled pointwise kernel (`ynumel Y xnumel X`, Inductor's (y, x) tiling for
transposes) has [YBLOCK, XBLOCK] values and also defines `yoffset = program_id(1) * YBLOCK`,
`yindex = yoffset + arange(0, YBLOCK)[:, None]` and `ymask = yindex < ynumel`, with `xindex`
a `[None, :]` row; its configs set XBLOCK and YBLOCK and its grid is
`(cdiv(xnumel, XBLOCK), cdiv(ynumel, YBLOCK))`. `triton.index` names derived index symbols (`x0 = xindex % 64`,
`r0_0 = r0_index`); loads, stores and `triton.expr` use sym expressions over them. Block sizes
are not in the IR: `configs` are the launch configurations the runtime may autotune over
(XBLOCK, and R0_BLOCK for a looped reduction; a persistent one fixes R0_BLOCK =
next_pow2(r0_numel)); the grid is `(cdiv(xnumel, XBLOCK),)`.

Reductions (kinds sum, prod, max, min, argmax, argmin, any, welford, online_softmax):

    triton.kernel @triton_per_fused_add_sum_0 persistent_reduction(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 3 r0_numel 9 configs [...] {
      triton.index x0 = xindex
      triton.index r0_0 = r0_index
      %0 = triton.load %in_ptr0[r0_0 + 9*x0] mask r0_mask, xmask other 0.0 : f32
      %1 = triton.reduce sum %0 mask r0_mask, xmask : f32 -> f32       // [XBLOCK, 1]
      triton.store %out_ptr0[x0], %1 mask xmask : f32
    }
    triton.kernel @triton_red_fused_sum_1 reduction(...) xnumel 3 r0_numel 20000 configs [...] {
      triton.index x0 = xindex
      %zero = arith.constant 0.0 : f32
      %acc = triton.rloop iter_args(%a = %zero : f32) {                // for r0_offset in range(...)
        triton.index r0_0 = r0_index
        %0 = triton.load %in_ptr0[r0_0 + 20000*x0] mask r0_mask, xmask other 0.0 : f32
        %1 = triton.accumulate sum %0 into %a mask r0_mask, xmask : f32 -> f32
        triton.yield %1 : f32
      }
      %2 = triton.reduce sum %acc : f32 -> f32
      triton.store %out_ptr0[x0], %2 mask xmask : f32
    }

Invariants the verifier checks: kernel arguments are named `%<identifier>` pointers
(`!triton.ptr<dtype>`), unique; the body holds only triton body ops, `arith` and `math`; an index
symbol is defined once, from the implicit ones, size symbols (`s0`) or index symbols defined
earlier in an enclosing block, and used only after its definition; a load's result and a store's
value have the pointer's element type; mask names exist where they are used; `other` needs a
mask; configs set the block sizes of the kernel kind; reductions have the operand, accumulator
and result types of their kind, `triton.reduce` outside loops, `triton.accumulate` inside the one
`triton.rloop` of a looped kernel. In the wrapper: every buffer
name is defined once and referenced only after its definition and before it is freed; a launch
names a kernel of the module with one buffer per pointer, of the pointer's dtype, and the
kernel's numels; the wrapper ends with `triton.return`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import sympy
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    Signedness,
    SymbolRefAttr,
    AnyFloat,
    i1,
)
from xdsl.ir import Attribute, Block, Dialect, Operation, ParametrizedAttribute, Region, SSAValue, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import IsolatedFromAbove, IsTerminator, NoTerminator, Pure, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from mlc.dialects.buffer import ExternCall, LayoutAttr, ViewBase
from mlc.dialects.loops import is_size_symbol
from mlc.dialects.sym import ExprAttr, expr_str, free_symbol_names, parse_expr

KERNEL_KINDS = ("pointwise", "reduction", "persistent_reduction")
# Symbols and masks a kernel of each kind defines implicitly. A looped `reduction` kernel
# defines r0_index and r0_mask only inside its `triton.rloop` (one R0_BLOCK slice at a time).
_REDUCTION_INDICES, _REDUCTION_MASKS = ("xindex", "r0_index"), ("xmask", "r0_mask")
IMPLICIT_INDICES = {"pointwise": ("xindex",), "reduction": _REDUCTION_INDICES, "persistent_reduction": _REDUCTION_INDICES}
MASK_NAMES = {"pointwise": ("xmask",), "reduction": _REDUCTION_MASKS, "persistent_reduction": _REDUCTION_MASKS}
# Names the emitted Python defines itself; an index symbol may not shadow them.
# A 2-D tiled pointwise kernel (one with `ynumel`) also defines yindex ([YBLOCK, 1]) and ymask.
TILED_INDICES, TILED_MASKS = ("xindex", "yindex"), ("xmask", "ymask")
RESERVED = {"xoffset", "xindex", "xmask", "xnumel", "XBLOCK"} | {"yoffset", "yindex", "ymask", "ynumel", "YBLOCK"} | {
    "r0_offset", "r0_index", "r0_mask", "r0_numel", "R0_BLOCK", "r0_base"}
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


# ---------------------------------------------------------------------------------------------
# Kernels


def _print_names(printer: Printer, names: Sequence[str]) -> None:
    printer.print_string(", ".join(f"@{n}" for n in names))


def _parse_ref_list(parser: Parser) -> list[str]:
    """`@a, @b, ...` (possibly empty)."""
    names: list[str] = []
    if (first := parser.parse_optional_symbol_name()) is not None:
        names.append(first.data)
        while parser.parse_optional_punctuation(","):
            names.append(parser.parse_symbol_name().data)
    return names


def _refs(names: Sequence[str]) -> ArrayAttr:
    return ArrayAttr([SymbolRefAttr(n) for n in names])


def _ref_names(refs: ArrayAttr) -> list[str]:
    return [r.root_reference.data for r in refs.data]  # type: ignore[attr-defined]


def _print_numels(
    printer: Printer, xnumel: ExprAttr, r0_numel: ExprAttr | None, ynumel: ExprAttr | None = None
) -> None:
    if ynumel is not None:
        printer.print_string(f" ynumel {expr_str(ynumel.expr)}")
    printer.print_string(f" xnumel {expr_str(xnumel.expr)}")
    if r0_numel is not None:
        printer.print_string(f" r0_numel {expr_str(r0_numel.expr)}")


def _parse_numels(parser: Parser) -> tuple[ExprAttr, ExprAttr | None, ExprAttr | None]:
    """`[ynumel Y] xnumel X [r0_numel R]` -> (xnumel, r0_numel, ynumel)."""
    ynumel = ExprAttr(parse_expr(parser)) if parser.parse_optional_keyword("ynumel") else None
    parser.parse_keyword("xnumel")
    xnumel = ExprAttr(parse_expr(parser))
    r0_numel = ExprAttr(parse_expr(parser)) if parser.parse_optional_keyword("r0_numel") else None
    return xnumel, r0_numel, ynumel


@irdl_op_definition
class KernelOp(IRDLOperation):
    """A `@triton.jit` kernel: name, kind, pointer arguments, numels, origins, launch configs.

    The body is one block of tile ops (no terminator); the block arguments are the pointers,
    named as the kernel's Python parameters (`%in_ptr0`, `%out_ptr0`)."""

    name = "triton.kernel"
    sym_name = prop_def(StringAttr)
    kind = prop_def(StringAttr)
    xnumel = prop_def(ExprAttr)
    r0_numel = opt_prop_def(ExprAttr)
    ynumel = opt_prop_def(ExprAttr)  # a 2-D tiled pointwise kernel: rows (yindex) x xnumel columns
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
    ):
        props: dict[str, Attribute] = {"sym_name": StringAttr(name), "kind": StringAttr(kind), "xnumel": ExprAttr(xnumel)}
        if r0_numel is not None:
            props["r0_numel"] = ExprAttr(r0_numel)
        if ynumel is not None:
            props["ynumel"] = ExprAttr(ynumel)
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
    def is_tiled(self) -> bool:
        """A 2-D tiled pointwise kernel (`ynumel` set): grid (cdiv(xnumel, XBLOCK), cdiv(ynumel, YBLOCK))."""
        return self.ynumel is not None

    def verify_(self) -> None:
        kind = self.kernel_kind
        if kind not in KERNEL_KINDS:
            raise VerifyException(f"triton.kernel: unknown kind '{kind}' (expected one of {', '.join(KERNEL_KINDS)})")
        if (self.r0_numel is not None) != (kind != "pointwise"):
            raise VerifyException(f"triton.kernel: a {kind} kernel {'needs' if kind != 'pointwise' else 'takes no'} r0_numel")
        if self.ynumel is not None and kind != "pointwise":
            raise VerifyException(f"triton.kernel: only a pointwise kernel takes ynumel, not a {kind} kernel")
        seen: set[str] = set()
        for arg in self.body.block.args:
            if not isinstance(arg.type, PtrType):
                raise VerifyException(f"triton.kernel: arguments are !triton.ptr, got {arg.type}")
            if arg.name_hint is None or not _IDENT.match(arg.name_hint) or arg.name_hint in RESERVED:
                raise VerifyException("triton.kernel: arguments need a name usable in Python (%in_ptr0, %out_ptr0, ...)")
            if arg.name_hint in seen:
                raise VerifyException(f"triton.kernel: argument %{arg.name_hint} appears twice")
            seen.add(arg.name_hint)
        blocks = {"reduction": ["R0_BLOCK", "XBLOCK"]}.get(kind, ["XBLOCK", "YBLOCK"] if self.is_tiled else ["XBLOCK"])
        for c in self.config_list:
            if not isinstance(c, ConfigAttr):
                raise VerifyException(f"triton.kernel: configs are #triton.config, got {c}")
            if sorted(c.block_sizes) != blocks:
                raise VerifyException(
                    f"triton.kernel: a {kind} kernel's configs set {' and '.join(blocks)}, got {c}"
                )
        if kind == "persistent_reduction" and not (self.r0_numel is not None and self.r0_numel.expr.is_Integer):
            raise VerifyException(
                "triton.kernel: a persistent_reduction needs a static r0_numel (R0_BLOCK is its next power of two)"
            )
        for op in self.body.block.ops:
            dialect = op.name.split(".")[0]
            if dialect == "triton" and not isinstance(op, KernelBodyOp) or dialect not in ("triton", "arith", "math"):
                raise _blame(op, f"triton.kernel: {op.name} cannot appear in a kernel body")

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
        _print_numels(printer, self.xnumel, self.r0_numel, self.ynumel)
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
        xnumel, r0_numel, ynumel = _parse_numels(parser)
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
        op = cls(name, kind, xnumel.expr, body, r0, origins, configs, y)  # type: ignore[arg-type]
        if (attrs := parser.parse_optional_attr_dict_with_keyword()) is not None:
            op.attributes |= attrs.data
        return op


class KernelBodyOp(IRDLOperation):
    """An op of a kernel body; its index expressions may use the kernel's index symbols."""

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
        kernel's rloop)."""
        if kernel.kernel_kind == "reduction" and not self.in_rloop():
            return ("xindex",)
        if kernel.is_tiled:
            return TILED_INDICES
        return IMPLICIT_INDICES.get(kernel.kernel_kind, ())

    def valid_masks(self, kernel: KernelOp) -> tuple[str, ...]:
        if kernel.kernel_kind == "reduction" and not self.in_rloop():
            return ("xmask",)
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
        for e in exprs:
            for name in sorted(free_symbol_names(e)):
                if name not in allowed and not is_size_symbol(name):
                    raise VerifyException(
                        f"{self.name}: index symbol '{name}' is not defined here "
                        f"(available: {', '.join(sorted(allowed))})"
                    )
        return kernel


@irdl_op_definition
class IndexOp(KernelBodyOp):
    """Name an index symbol: `triton.index x0 = ModularIndexing(xindex, 1, 64)` (`x0 = xindex % 64`)."""

    name = "triton.index"
    var = prop_def(StringAttr)
    expr = prop_def(ExprAttr)

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

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.var.data} = {expr_str(self.expr.expr)}")

    @classmethod
    def parse(cls, parser: Parser) -> IndexOp:
        var = parser.parse_identifier("index symbol")
        parser.parse_punctuation("=")
        return cls(var, parse_expr(parser))


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


# ---------------------------------------------------------------------------------------------
# Reductions
#
# In `persistent_reduction` and `reduction` kernels, values are [XBLOCK, R0_BLOCK] tiles where
# they vary along the reduction (they use r0_index) and [XBLOCK, 1] columns where they do not;
# Triton broadcasts one against the other. `triton.reduce` turns a tile into a column.


def reduction_identity(kind: str, typ: Attribute) -> int | float:
    """The value that leaves a reduction of `kind` unchanged, in `typ` (what masked lanes hold)."""
    if kind in ("sum", "welford", "any"):
        return 0.0 if isinstance(typ, AnyFloat) else 0
    if kind == "prod":
        return 1.0 if isinstance(typ, AnyFloat) else 1
    low = kind in ("max", "argmax")  # the smallest value, so that any other one wins
    if isinstance(typ, AnyFloat):
        return -math.inf if low else math.inf
    assert isinstance(typ, IntegerType)
    width = typ.width.data
    if width == 1 or typ.signedness.data == Signedness.UNSIGNED:
        return 0 if low else (1 << width) - 1
    return -(1 << (width - 1)) if low else (1 << (width - 1)) - 1


def _print_types(printer: Printer, types: Sequence[Attribute]) -> None:
    printer.print_list(types, printer.print_attribute)


def _parse_types(parser: Parser) -> list[Attribute]:
    return parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)


def _parse_mask_names(parser: Parser) -> list[str]:
    names: list[str] = []
    if parser.parse_optional_keyword("mask"):
        names.append(parser.parse_identifier("mask name"))
        while parser.parse_optional_punctuation(","):
            names.append(parser.parse_identifier("mask name"))
    return names


def _verify_kind_types(op: Operation, kind: str, value: Attribute, results: Sequence[Attribute], accumulators: bool) -> None:
    """Result (or accumulator) types a reduction of `kind` over `value` elements has."""
    if kind not in REDUCE_KINDS:
        raise VerifyException(f"{op.name}: unknown reduction kind '{kind}' (expected one of {', '.join(REDUCE_KINDS)})")
    if kind in ("argmax", "argmin"):
        expected: list[Attribute] = [value, IntegerType(64)] if accumulators else [IntegerType(64)]
    elif kind in ("welford", "online_softmax"):
        if not isinstance(value, AnyFloat):
            raise VerifyException(f"{op.name}: {kind} needs float values, got {value}")
        expected = [value] * ACCUMULATORS[kind]
    elif kind == "any":
        if value != i1:
            raise VerifyException(f"{op.name}: any reduces i1 values, got {value}")
        expected = [i1]
    else:
        expected = [value]
    if list(results) != expected:
        what = "accumulators" if accumulators else "results"
        raise VerifyException(
            f"{op.name}: {kind} of {value} has {what} ({', '.join(map(str, expected))}), got ({', '.join(map(str, results))})"
        )


@irdl_op_definition
class ReduceOp(KernelBodyOp):
    """Reduce along R0: `%r = triton.reduce sum %v mask r0_mask, xmask : f32 -> f32`.

    `tl.sum(tl.where(r0_mask & xmask, v, 0.0), 1)[:, None]`: lanes where a mask is false take
    the kind's identity (0, 1, -inf, inf, False), so they cannot change the result, which is an
    [XBLOCK, 1] column (keepdim, as Inductor). argmax/argmin give the i64 position of the first
    extreme value (ties go to the lowest index; NaN counts as the extreme), positions being
    r0_index in a persistent kernel or an explicit index tile:
    `%i = triton.reduce argmax %vals, %idxs : f32, i64 -> i64` (a looped kernel's accumulators).
    welford combines (mean, m2, weight) tiles into (mean, m2, weight) columns (Chan et al.):
    `%m, %m2, %w = triton.reduce welford %a, %b, %c : f32, f32, f32 -> f32, f32, f32`.
    online_softmax combines (max, sum of exp(v - max)) accumulators into the row's max and
    sum(exp(v - max)), rescaling each lane's sum to the row's max (Milakov & Gimelshein).
    In a looped `reduction` kernel it follows the triton.rloop, on its accumulators."""

    name = "triton.reduce"
    kind = prop_def(StringAttr)
    values = var_operand_def()
    mask_names = opt_prop_def(ArrayAttr)
    outputs = var_result_def()

    def __init__(self, kind: str, values: Sequence[SSAValue], result_types: Sequence[Attribute], mask_names: Sequence[str] = ()):
        super().__init__(
            operands=[list(values)],
            properties={"kind": StringAttr(kind), **_mask_names_attr(mask_names)},
            result_types=[list(result_types)],
        )

    @property
    def reduction_kind(self) -> str:
        return self.kind.data

    @property
    def masks(self) -> list[str]:
        return [n.data for n in self.mask_names.data] if self.mask_names is not None else []  # type: ignore[attr-defined]

    @property
    def explicit_index(self) -> bool:
        """argmax/argmin with an index tile operand (else positions are r0_index)."""
        return self.reduction_kind in ("argmax", "argmin") and len(self.values) == 2

    def verify_(self) -> None:
        kernel = self.kernel()
        if kernel.kernel_kind == "pointwise":
            raise VerifyException("triton.reduce: a pointwise kernel has no reduction dimension")
        if self.in_rloop():
            raise VerifyException("triton.reduce: reduce after the triton.rloop; inside it, use triton.accumulate")
        kind = self.reduction_kind
        types = [v.type for v in self.values]
        counts = {"welford": (3,), "online_softmax": (2,), "argmax": (1, 2), "argmin": (1, 2)}.get(kind, (1,))
        if len(types) not in counts:
            raise VerifyException(f"triton.reduce: {kind} takes {' or '.join(map(str, counts))} operand(s), got {len(types)}")
        if kind in ("argmax", "argmin"):
            if len(types) == 1 and kernel.kernel_kind == "reduction":
                raise VerifyException(f"triton.reduce: {kind} after a loop needs the index accumulator")
            if len(types) == 2 and not isinstance(types[1], IntegerType):
                raise VerifyException(f"triton.reduce: {kind} positions are integers, got {types[1]}")
        if kind == "welford" and len(set(types)) != 1:
            raise VerifyException("triton.reduce: welford's mean, m2 and weight have one type")
        if kind == "online_softmax" and (kernel.kernel_kind != "reduction" or self.masks or len(set(types)) != 1):
            raise VerifyException(
                "triton.reduce: online_softmax combines a looped kernel's (max, sum) accumulators, of one type, unmasked"
            )
        _verify_kind_types(self, kind, types[0], [r.type for r in self.results], accumulators=False)
        _verify_mask(self, kernel, self.mask_names)

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.reduction_kind} ")
        printer.print_list(self.values, printer.print_ssa_value)
        _print_mask(printer, self.mask_names, None)
        printer.print_string(" : ")
        _print_types(printer, [v.type for v in self.values])
        printer.print_string(" -> ")
        _print_types(printer, [r.type for r in self.results])

    @classmethod
    def parse(cls, parser: Parser) -> ReduceOp:
        kind = parser.parse_identifier("reduction kind")
        values = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_unresolved_operand)
        masks = _parse_mask_names(parser)
        parser.parse_punctuation(":")
        pos = parser.pos
        types = _parse_types(parser)
        if len(types) != len(values):
            parser.raise_error(f"expected {len(values)} operand types, got {len(types)}", pos, parser.pos)
        parser.parse_punctuation("->")
        results = _parse_types(parser)
        return cls(kind, [parser.resolve_operand(v, t) for v, t in zip(values, types)], results, masks)


@irdl_op_definition
class AccumulateOp(KernelBodyOp):
    """One step of a looped reduction, inside `triton.rloop`:
    `%n = triton.accumulate sum %v into %acc mask r0_mask, xmask : f32 -> f32`.

    Lane by lane, where every mask holds the accumulator takes combine(acc, v), elsewhere it
    keeps acc (`tl.where(r0_mask & xmask, acc + v, acc)`). argmax/argmin carry (value, i64
    index) accumulators and take r0_index as the value's position, keeping the first on ties;
    welford carries (mean, m2, weight) and adds one sample per lane (Inductor's
    `welford_reduce`); online_softmax carries (max, sum of exp(v - max)), rescaling the sum
    when the max grows. The results are the new accumulators, of the accumulators' types."""

    name = "triton.accumulate"
    kind = prop_def(StringAttr)
    value = operand_def()
    accumulators = var_operand_def()
    mask_names = opt_prop_def(ArrayAttr)
    outputs = var_result_def()
    traits = traits_def(Pure())

    def __init__(self, kind: str, value: SSAValue, accumulators: Sequence[SSAValue], mask_names: Sequence[str] = ()):
        super().__init__(
            operands=[value, list(accumulators)],
            properties={"kind": StringAttr(kind), **_mask_names_attr(mask_names)},
            result_types=[[a.type for a in accumulators]],
        )

    @property
    def reduction_kind(self) -> str:
        return self.kind.data

    @property
    def masks(self) -> list[str]:
        return [n.data for n in self.mask_names.data] if self.mask_names is not None else []  # type: ignore[attr-defined]

    def verify_(self) -> None:
        kernel = self.kernel()
        if not self.in_rloop():
            raise VerifyException("triton.accumulate must be inside triton.rloop")
        accs = [a.type for a in self.accumulators]
        _verify_kind_types(self, self.reduction_kind, self.value.type, accs, accumulators=True)
        if [r.type for r in self.results] != accs:
            raise VerifyException("triton.accumulate: results are the new accumulators, of their types")
        _verify_mask(self, kernel, self.mask_names)

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.reduction_kind} ")
        printer.print_ssa_value(self.value)
        printer.print_string(" into ")
        printer.print_list(self.accumulators, printer.print_ssa_value)
        _print_mask(printer, self.mask_names, None)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)
        printer.print_string(" -> ")
        _print_types(printer, [a.type for a in self.accumulators])

    @classmethod
    def parse(cls, parser: Parser) -> AccumulateOp:
        kind = parser.parse_identifier("reduction kind")
        value = parser.parse_unresolved_operand()
        parser.parse_keyword("into")
        accs = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_unresolved_operand)
        masks = _parse_mask_names(parser)
        parser.parse_punctuation(":")
        value_type = parser.parse_type()
        parser.parse_punctuation("->")
        pos = parser.pos
        types = _parse_types(parser)
        if len(types) != len(accs):
            parser.raise_error(f"expected {len(accs)} accumulator types, got {len(types)}", pos, parser.pos)
        accumulators = [parser.resolve_operand(a, t) for a, t in zip(accs, types)]
        return cls(kind, parser.resolve_operand(value, value_type), accumulators, masks)


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
    accumulators, `triton.yield` gives their next values and the results are their last ones."""

    name = "triton.rloop"
    inits = var_operand_def()
    outputs = var_result_def()
    body = region_def("single_block")

    def __init__(self, inits: Sequence[SSAValue], body: Region):
        super().__init__(operands=[list(inits)], result_types=[[v.type for v in inits]], regions=[body])

    def verify_(self) -> None:
        kernel = self.kernel()
        if kernel.kernel_kind != "reduction":
            raise VerifyException(f"triton.rloop: only a looped reduction kernel has one, not a {kernel.kernel_kind} kernel")
        if self.parent_op() is not kernel:
            raise VerifyException("triton.rloop: loops do not nest; it belongs in the kernel body")
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

    def print(self, printer: Printer) -> None:
        block = self.body.block
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
        return cls(inits, body)


@irdl_op_definition
class YieldOp(KernelBodyOp):
    """`triton.yield %n, %ni : f32, i64`: the accumulators' next values; ends a triton.rloop."""

    name = "triton.yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator())

    def __init__(self, values: Sequence[SSAValue]):
        super().__init__(operands=[list(values)])

    def verify_(self) -> None:
        if not isinstance(self.parent_op(), RLoopOp):
            raise VerifyException("triton.yield must end a triton.rloop")

    def print(self, printer: Printer) -> None:
        if self.values:
            printer.print_string(" ")
            printer.print_list(self.values, printer.print_ssa_value)
            printer.print_string(" : ")
            _print_types(printer, [v.type for v in self.values])

    @classmethod
    def parse(cls, parser: Parser) -> YieldOp:
        values = []
        if (first := parser.parse_optional_unresolved_operand()) is not None:
            values = [first]
            while parser.parse_optional_punctuation(","):
                values.append(parser.parse_unresolved_operand())
            parser.parse_punctuation(":")
            types = _parse_types(parser)
            if len(types) != len(values):
                parser.raise_error(f"expected {len(values)} types, got {len(types)}")
            return cls([parser.resolve_operand(v, t) for v, t in zip(values, types)])
        return cls([])


# ---------------------------------------------------------------------------------------------
# The host wrapper


class WrapperBodyOp(IRDLOperation):
    """An op of `triton.wrapper`'s body: defines, references and frees named buffers."""

    def defined_names(self) -> list[str]:
        return []

    def referenced_names(self) -> list[str]:
        return []

    def layout_of(self, name: str) -> LayoutAttr | None:
        return None


class _NamedLayoutOp(WrapperBodyOp):
    buffer = prop_def(StringAttr)
    layout = prop_def(LayoutAttr)
    assembly_format = "$buffer qualified($layout) attr-dict"

    def __init__(self, name: str, layout: LayoutAttr):
        super().__init__(properties={"buffer": StringAttr(name), "layout": layout})

    def defined_names(self) -> list[str]:
        return [self.buffer.data]

    def layout_of(self, name: str) -> LayoutAttr | None:
        return self.layout


@irdl_op_definition
class InputOp(_NamedLayoutOp):
    """A graph input, in argument order: `triton.input "arg0_1" #buffer.layout<...>` (the
    emitter unpacks `args` in this order and may `assert_size_stride` it)."""

    name = "triton.input"


@irdl_op_definition
class AllocOp(_NamedLayoutOp):
    """`triton.alloc "buf0" #buffer.layout<[8, 64], [64, 1], f32>`: `buf0 = empty_strided(...)`."""

    name = "triton.alloc"


@irdl_op_definition
class LaunchOp(WrapperBodyOp):
    """`triton.launch @triton_poi_fused_gelu_0(@arg0_1, @buf0) xnumel 512`: one buffer per
    kernel pointer, in order; `kernel.run(arg0_1, buf0, 512, ...)`, grid `cdiv(xnumel, XBLOCK)`."""

    name = "triton.launch"
    kernel = prop_def(SymbolRefAttr)
    args = prop_def(ArrayAttr)
    xnumel = prop_def(ExprAttr)
    r0_numel = opt_prop_def(ExprAttr)
    ynumel = opt_prop_def(ExprAttr)

    def __init__(
        self, kernel: str, args: Sequence[str], xnumel: sympy.Expr | int, r0_numel: sympy.Expr | int | None = None,
        ynumel: sympy.Expr | int | None = None,
    ):
        props: dict[str, Attribute] = {"kernel": SymbolRefAttr(kernel), "args": _refs(args), "xnumel": ExprAttr(xnumel)}
        if r0_numel is not None:
            props["r0_numel"] = ExprAttr(r0_numel)
        if ynumel is not None:
            props["ynumel"] = ExprAttr(ynumel)
        super().__init__(properties=props)

    @property
    def kernel_name(self) -> str:
        return self.kernel.root_reference.data

    @property
    def arg_names(self) -> list[str]:
        return _ref_names(self.args)

    def referenced_names(self) -> list[str]:
        return self.arg_names

    def lookup_kernel(self) -> KernelOp | None:
        wrapper = self.parent_op()
        module = wrapper.parent_op() if wrapper is not None else None
        if module is None:
            return None
        for op in module.regions[0].block.ops:
            if isinstance(op, KernelOp) and op.sym_name.data == self.kernel_name:
                return op
        return None

    def verify_(self) -> None:
        kernel = self.lookup_kernel()
        if kernel is None:
            raise VerifyException(f"triton.launch: no triton.kernel @{self.kernel_name} in this module")
        ptrs = kernel.body.block.args
        if len(ptrs) != len(self.args):
            raise VerifyException(
                f"triton.launch: @{self.kernel_name} takes {len(ptrs)} pointers, got {len(self.args)} buffers"
            )
        pairs = ((self.xnumel, kernel.xnumel, "xnumel"), (self.r0_numel, kernel.r0_numel, "r0_numel"),
                 (self.ynumel, kernel.ynumel, "ynumel"))
        for mine, theirs, what in pairs:
            if (mine is None) != (theirs is None) or (
                mine is not None and theirs is not None and not theirs.expr.free_symbols and mine.expr != theirs.expr
            ):
                raise VerifyException(f"triton.launch: {what} does not match @{self.kernel_name}'s")

    def print(self, printer: Printer) -> None:
        printer.print_string(f" @{self.kernel_name}(")
        _print_names(printer, self.arg_names)
        printer.print_string(")")
        _print_numels(printer, self.xnumel, self.r0_numel, self.ynumel)

    @classmethod
    def parse(cls, parser: Parser) -> LaunchOp:
        kernel = parser.parse_symbol_name().data
        parser.parse_punctuation("(")
        args = _parse_ref_list(parser)
        parser.parse_punctuation(")")
        xnumel, r0_numel, ynumel = _parse_numels(parser)
        r0 = None if r0_numel is None else r0_numel.expr
        return cls(kernel, args, xnumel.expr, r0, None if ynumel is None else ynumel.expr)


@irdl_op_definition
class ExternOp(ExternCall, WrapperBodyOp):
    """`triton.extern "buf1" = "mm.default" {args = [@buf0, @arg1_1]} : #buffer.layout<...>`:
    an aten call at run time (`@name` = a buffer) defining its result buffers with these layouts
    (the emitter may call an `out=` variant into an `empty_strided`, or restride the result)."""

    name = "triton.extern"

    def referenced_names(self) -> list[str]:
        return list(ExternCall.referenced_names(self))


@irdl_op_definition
class ViewOp(ViewBase, WrapperBodyOp):
    """`triton.view "buf3" = @buf0 #buffer.layout<...>`: `reinterpret_tensor(buf0, size, stride, offset)`."""

    name = "triton.view"


@irdl_op_definition
class FreeOp(WrapperBodyOp):
    """`triton.free @buf0, @buf2`: `del buf0, buf2` after their last use."""

    name = "triton.free"
    names = prop_def(ArrayAttr)

    def __init__(self, names: Sequence[str]):
        super().__init__(properties={"names": _refs(names)})

    @property
    def freed(self) -> list[str]:
        return _ref_names(self.names)

    def referenced_names(self) -> list[str]:
        return self.freed

    def verify_(self) -> None:
        if not self.names.data:
            raise VerifyException("triton.free: nothing to free")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        _print_names(printer, self.freed)

    @classmethod
    def parse(cls, parser: Parser) -> FreeOp:
        return cls(_parse_ref_list(parser))


@irdl_op_definition
class ReturnOp(WrapperBodyOp):
    """`triton.return @buf5, @arg0_1`: the graph outputs, in order; ends the wrapper."""

    name = "triton.return"
    outputs = prop_def(ArrayAttr)
    traits = traits_def(IsTerminator())

    def __init__(self, names: Sequence[str]):
        super().__init__(properties={"outputs": _refs(names)})

    @property
    def output_names(self) -> list[str]:
        return _ref_names(self.outputs)

    def referenced_names(self) -> list[str]:
        return self.output_names

    def print(self, printer: Printer) -> None:
        if self.outputs.data:
            printer.print_string(" ")
            _print_names(printer, self.output_names)

    @classmethod
    def parse(cls, parser: Parser) -> ReturnOp:
        return cls(_parse_ref_list(parser))


@irdl_op_definition
class WrapperOp(IRDLOperation):
    """The host function `call(args)`: inputs, allocations, launches, extern calls, views, frees,
    in program order, ending with `triton.return`."""

    name = "triton.wrapper"
    sym_name = prop_def(StringAttr)
    body = region_def("single_block")
    traits = traits_def(IsolatedFromAbove(), SymbolOpInterface())

    def __init__(self, name: str, body: Region):
        super().__init__(properties={"sym_name": StringAttr(name)}, regions=[body])

    def input_names(self) -> list[str]:
        return [op.buffer.data for op in self.body.block.ops if isinstance(op, InputOp)]

    def output_names(self) -> list[str]:
        last = self.body.block.last_op
        return last.output_names if isinstance(last, ReturnOp) else []

    def layouts(self) -> dict[str, LayoutAttr]:
        """Every buffer name the wrapper defines, with its layout."""
        out: dict[str, LayoutAttr] = {}
        for op in self.body.block.ops:
            if isinstance(op, WrapperBodyOp):
                for name in op.defined_names():
                    out[name] = op.layout_of(name)  # type: ignore[assignment]
        return out

    def verify_(self) -> None:
        if self.body.block.args:
            raise VerifyException("triton.wrapper: the body takes no block arguments")
        if not isinstance(self.body.block.last_op, ReturnOp):
            raise VerifyException("triton.wrapper must end with triton.return")
        live: dict[str, LayoutAttr | None] = {}
        dead: set[str] = set()
        past_inputs = False
        for op in self.body.block.ops:
            if not isinstance(op, WrapperBodyOp):
                raise _blame(op, f"triton.wrapper: {op.name} cannot appear in the wrapper")
            if isinstance(op, InputOp) and past_inputs:
                raise _blame(op, "triton.input: inputs come first in the wrapper")
            past_inputs = past_inputs or not isinstance(op, InputOp)
            for ref in op.referenced_names():
                if ref not in live:
                    why = "already freed" if ref in dead else "not defined before this use"
                    raise _blame(op, f"{op.name}: buffer '{ref}' is {why}")
            if isinstance(op, LaunchOp) and (kernel := op.lookup_kernel()) is not None:
                for arg, ptr in zip(op.arg_names, kernel.body.block.args):
                    layout = live[arg]
                    dtype = layout.dtype if layout is not None else None
                    if isinstance(ptr.type, PtrType) and dtype is not None and ptr.type.pointee != dtype:
                        raise _blame(
                            op,
                            f"triton.launch: buffer '{arg}' holds {dtype} but %{ptr.name_hint} of "
                            f"@{op.kernel_name} points to {ptr.type.pointee}",
                        )
            if isinstance(op, FreeOp):
                for name in op.freed:
                    dead.add(name)
                    del live[name]
            for name in op.defined_names():
                if name in live or name in dead:
                    raise _blame(op, f"{op.name}: buffer '{name}' is defined twice")
                live[name] = op.layout_of(name)  # type: ignore[assignment]

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)

    @classmethod
    def parse(cls, parser: Parser) -> WrapperOp:
        name = parser.parse_symbol_name().data
        return cls(name, parser.parse_region())


Triton = Dialect(
    "triton",
    [KernelOp, IndexOp, LoadOp, StoreOp, ExprOp, ReduceOp, AccumulateOp, RLoopOp, YieldOp]
    + [WrapperOp, InputOp, AllocOp, LaunchOp, ExternOp, ViewOp, FreeOp, ReturnOp],
    [PtrType, ConfigAttr],
)
