"""The `loops` dialect: unrealized computations, Inductor's `Pointwise` and `Reduction`.

Produced by `--lower-aten`, rewritten by `--inline`, consumed by `--realize`. A loops op is a
tensor value defined by a body that computes one element. The body's index variables are
implicit symbols: `i0, i1, ...` range over `ranges`, and for a reduction `r0_0, r0_1, ...` range
over `reduction_ranges` (Inductor's names). Loads read any tensor SSA value at logical indices
given as `sym` expressions, so views are re-indexing, never copies; scalar math is `arith`/`math`.

    %g = loops.pointwise [8, 64] origins ["gelu"] -> tensor<8x64xf32> {
      %0 = loops.load %x[i0, i1] : tensor<8x64xf32>
      %1 = arith.constant 0.5 : f32
      %2 = arith.mulf %0, %1 : f32
      loops.yield %2 : f32
    }
    %m = loops.reduction [3] over [9] -> tensor<3xf32> {
      %0 = loops.load %x[i0, r0_0] : tensor<3x9xf32>
      %1 = loops.reduce sum %0 : f32 -> f32
      %2 = arith.constant 9.0 : f32
      %3 = arith.divf %1, %2 : f32          // epilogue: mean, in the same node
      loops.yield %3 : f32
    }

A `mask` on a load (an i1 value) reads 0 where it is false, so `cat` and padding need no copy:
`%v = loops.load %b[i0, i1 - 32] mask %m : tensor<8x32xf32>`. A load at a position read from
memory (gather, embedding, `x[idx]`) names the position's value `ind0` and lists it as an
`index` operand made by `loops.indirect_index` (which wraps negative values):
`%v = loops.load %w[ind0, i1] indirect(%k) : tensor<50257x768xf32>`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import sympy
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    ArrayAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    BaseAttr,
    IRDLOperation,
    VarConstraint,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.irdl.declarative_assembly_format import (
    CustomDirective,
    ParsingState,
    PrintingState,
    TypeDirective,
    irdl_custom_directive,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

from mlc.dialects.access import (
    ACCESS_DIRECTIVES,
    AccessOp,
    IndexExprOp,
    IndirectIndexBase,
    MaskOperand,
    StoreModeMixin,
    mode_props,
)
from mlc.dialects.aten import ExternCallBase
from mlc.dialects.loops_reduce import DotBase, ReduceBase, verify_contraction
from mlc.dialects.sym import (
    ExprAttr,
    expr_str,
    exprs_of,
    indirect_names,
    is_size_symbol,
    verify_in_bounds,
)
from mlc.dialects.syntax import Origins, parse_type_list, print_type_list

# Marks an `arith.truncf` in a body as a rounding the program asked for (an explicit dtype
# conversion, eager rounds there), unlike the truncf of a stored value, which --inline drops
# when it fuses the value into its reader: `arith.truncf %x {explicit_rounding} : f32 to bf16`.
EXPLICIT_ROUNDING = "explicit_rounding"


def blame(op: Operation, message: str) -> VerifyException:
    """A container's verification failure that belongs to `op`: tools report it at `op`."""
    error = VerifyException(message)
    error.op = op  # type: ignore[attr-defined]
    return error


def index_names(rank: int) -> list[str]:
    return [f"i{k}" for k in range(rank)]


def reduction_index_names(rank: int) -> list[str]:
    return [f"r0_{k}" for k in range(rank)]


def _exprs_attr(exprs: Sequence[sympy.Expr | int]) -> ArrayAttr:
    return ArrayAttr([ExprAttr(sympy.Integer(e) if isinstance(e, int) else e) for e in exprs])


def origins_props(origins: Sequence[str]) -> dict[str, Attribute]:
    """The `origins` property of a node made in Python: sorted, once each (none when empty)."""
    return {"origins": ArrayAttr([StringAttr(o) for o in sorted(set(origins))])} if origins else {}


def _verify_shape(op: Operation, ranges: Sequence[sympy.Expr], result: SSAValue) -> None:
    typ = result.type
    if not isinstance(typ, TensorType):
        raise VerifyException(f"{op.name}: result must be a tensor, got {typ}")
    shape = typ.get_shape()
    if len(shape) != len(ranges):
        raise VerifyException(
            f"{op.name}: result rank {len(shape)} does not match {len(ranges)} ranges"
        )
    for dim, size in zip(shape, ranges):
        if size.is_Integer and dim != -1 and dim != int(size):
            raise VerifyException(
                f"{op.name}: result shape {list(shape)} does not match ranges "
                f"[{', '.join(expr_str(r) for r in ranges)}]"
            )


@irdl_custom_directive
class TensorTypes(CustomDirective):
    """`tensor<8xf32>`, or `(tensor<8xf32>, tensor<8xi64>)`: a loops op's results, tensors."""

    types: TypeDirective

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        print_type_list(printer, self.types.get(op))

    def parse(self, parser: Parser, state: ParsingState) -> None:
        start = parser.pos
        types = parse_type_list(parser)
        if bad := next((t for t in types if not isinstance(t, TensorType)), None):
            parser.raise_error(f"a loops op's results are tensors, got {bad}", start, parser.pos)
        self.types.set(state, types)


@irdl_custom_directive
class TensorOf(CustomDirective):
    """`: tensor<8x64xf32>` after a load: the tensor read, whose element type is the result's."""

    source: TypeDirective
    result: TypeDirective

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        printer.print_attribute(self.source.get(op)[0])

    def parse(self, parser: Parser, state: ParsingState) -> None:
        typ = parser.parse_type()
        if not isinstance(typ, TensorType):
            parser.raise_error(f"loops.load reads a tensor, got {typ}")
        self.source.set(state, (typ,))
        self.result.set(state, (typ.element_type,))


class LoopsBodyOp(IRDLOperation):
    """Shared parts of pointwise and reduction: ranges, origins, one body block."""

    ranges = prop_def(ArrayAttr)
    origins = opt_prop_def(ArrayAttr)
    body = region_def("single_block")
    custom_directives = (Origins, TensorTypes, *ACCESS_DIRECTIVES)

    @property
    def range_exprs(self) -> list[sympy.Expr]:
        return exprs_of(self.ranges.data)

    @property
    def origin_names(self) -> list[str]:
        return [o.data for o in self.origins.data] if self.origins is not None else []

    def index_symbols(self) -> set[str]:
        return set(index_names(len(self.ranges)))

    def yield_op(self) -> YieldOp:
        last = self.body.block.last_op
        assert isinstance(last, YieldOp)
        return last

    def _verify_body(self) -> None:
        block = self.body.block
        if block.args:
            raise VerifyException(
                f"{self.name}: the body takes no block arguments (index variables are implicit)"
            )
        if not isinstance(block.last_op, YieldOp):
            raise VerifyException(f"{self.name}: body must end with loops.yield")


@irdl_op_definition
class PointwiseOp(LoopsBodyOp):
    """An elementwise computation over `ranges`; the body yields the element at i0, i1, ..."""

    name = "loops.pointwise"
    result = result_def(TensorType)
    assembly_format = (
        "custom<ExprList>($ranges) custom<Origins>($origins) `->` custom<TensorTypes>(type($result))"
        " $body attr-dict-with-keyword"
    )

    def __init__(
        self,
        ranges: Sequence[sympy.Expr | int],
        result_type: TensorType,
        body: Region,
        origins: Sequence[str] = (),
    ):
        props: dict[str, Attribute] = {"ranges": _exprs_attr(ranges), **origins_props(origins)}
        super().__init__(result_types=[result_type], properties=props, regions=[body])

    def verify_(self) -> None:
        self._verify_body()
        _verify_shape(self, self.range_exprs, self.result)
        (value,) = self.yield_op().values
        elem = self.result.type.element_type  # type: ignore[attr-defined]
        if value.type != elem:
            raise VerifyException(
                f"loops.pointwise: yielded {value.type} but the result element type is {elem}"
            )


@irdl_op_definition
class ReductionOp(LoopsBodyOp):
    """Reductions over `reduction_ranges` for each point of `ranges`.

    The body runs per (i, r0_) point up to its `loops.reduce` ops (the prologue), which combine
    a value over all reduction indices; the ops after them (the epilogue: mean's division,
    var's correction) see only reduced values. Each yielded value is one result, so max.dim
    yields a max and an argmax of the same load, and var_mean a welford's mean and m2 / n."""

    name = "loops.reduction"
    reduction_ranges = prop_def(ArrayAttr)
    outputs = var_result_def(TensorType)
    assembly_format = (
        "custom<ExprList>($ranges) `over` custom<ExprList>($reduction_ranges) custom<Origins>($origins)"
        " `->` custom<TensorTypes>(type($outputs)) $body attr-dict-with-keyword"
    )

    def __init__(
        self,
        ranges: Sequence[sympy.Expr | int],
        reduction_ranges: Sequence[sympy.Expr | int],
        result_types: Sequence[TensorType],
        body: Region,
        origins: Sequence[str] = (),
    ):
        props: dict[str, Attribute] = {
            "ranges": _exprs_attr(ranges),
            "reduction_ranges": _exprs_attr(reduction_ranges),
            **origins_props(origins),
        }
        super().__init__(result_types=[list(result_types)], properties=props, regions=[body])

    @property
    def reduction_range_exprs(self) -> list[sympy.Expr]:
        return exprs_of(self.reduction_ranges.data)

    def reduce_ops(self) -> list[ReduceOp]:
        return [op for op in self.body.block.ops if isinstance(op, ReduceOp)]

    def dot_op(self) -> DotOp | None:
        """The contraction's `loops.dot`, if this reduction is one (the verifier allows one)."""
        return next((op for op in self.body.block.ops if isinstance(op, DotOp)), None)

    def index_symbols(self) -> set[str]:
        return super().index_symbols() | set(reduction_index_names(len(self.reduction_ranges)))

    def verify_(self) -> None:
        self._verify_body()
        dot = self.dot_op()
        if dot is not None:
            if self.reduce_ops() or sum(isinstance(op, DotOp) for op in self.body.block.ops) > 1:
                raise VerifyException("loops.reduction: a contraction has one loops.dot and no loops.reduce")
            verify_contraction(self, dot, len(self.ranges), len(self.reduction_ranges))
        elif not self.reduce_ops():
            raise VerifyException("loops.reduction: the body has no loops.reduce")
        values = self.yield_op().values
        if len(values) != len(self.outputs):
            raise VerifyException(
                f"loops.reduction: yields {len(values)} values for {len(self.outputs)} results"
            )
        for out, value in zip(self.outputs, values):
            _verify_shape(self, self.range_exprs, out)
            elem = out.type.element_type  # type: ignore[attr-defined]
            if value.type != elem:
                raise VerifyException(
                    f"loops.reduction: yielded {value.type} but the result element type is {elem}"
                )
        _verify_epilogue(self)


@irdl_op_definition
class ScatterOp(StoreModeMixin, LoopsBodyOp):
    """`base` with the body's values stored at the positions its terminator names (Inductor's
    Scatter): index_put, scatter, index_add, the backward of embedding.

        %g = loops.scatter %zeros [12, 16] atomic_add origins ["embedding_dense_backward"] -> tensor<50x16xf32> {
          %0 = loops.load %ids[i0] : tensor<12xi64>
          %1 = loops.indirect_index %0 size 50 : i64
          %2 = loops.load %grad[i0, i1] : tensor<12x16xf32>
          loops.scatter_store [ind0, i1] indirect(%1), %2 : f32
        }

    The body runs once per point of `ranges` (the source's shape); with `atomic_add` values
    landing on one element add up (in any order), without it one of them stays. The result is
    always stored (`--realize` copies `base` into a buffer the scatter then writes)."""

    name = "loops.scatter"
    T: ClassVar = VarConstraint("T", BaseAttr(TensorType))
    base = operand_def(T)
    result = result_def(T)
    assembly_format = (
        "$base custom<ExprList>($ranges) custom<StoreMode>($mode) custom<Origins>($origins)"
        " `->` custom<TensorTypes>(type($result)) $body attr-dict-with-keyword"
    )

    def __init__(
        self,
        base: SSAValue,
        ranges: Sequence[sympy.Expr | int],
        body: Region,
        mode: str | None = None,
        origins: Sequence[str] = (),
    ):
        props: dict[str, Attribute] = {"ranges": _exprs_attr(ranges), **mode_props(mode), **origins_props(origins)}
        super().__init__(operands=[base], result_types=[base.type], properties=props, regions=[body])

    def store(self) -> ScatterStoreOp:
        last = self.body.block.last_op
        assert isinstance(last, ScatterStoreOp)
        return last

    def verify_(self) -> None:
        if self.body.block.args:
            raise VerifyException("loops.scatter: the body takes no block arguments (index variables are implicit)")
        last = self.body.block.last_op
        if not isinstance(last, ScatterStoreOp):
            raise VerifyException("loops.scatter: body must end with loops.scatter_store")
        self.verify_store_mode()
        typ = self.result.type
        if len(last.indices) != len(typ.get_shape()):  # type: ignore[attr-defined]
            raise blame(last, f"loops.scatter_store: {len(last.indices)} indices for a rank-{len(typ.get_shape())} result")  # type: ignore[attr-defined]
        if last.value.type != typ.element_type:  # type: ignore[attr-defined]
            raise blame(last, f"loops.scatter_store: stores {last.value.type} into {typ}")


class IndicesAccessOp(AccessOp):
    """A loops access: one logical index per dim of its tensor, `[i0, ind0]`."""

    indices = prop_def(ArrayAttr)

    @property
    def index_exprs(self) -> list[sympy.Expr]:
        return exprs_of(self.indices.data)


@irdl_op_definition
class ScatterStoreOp(IndicesAccessOp):
    """Ends a loops.scatter body: where the value goes, `loops.scatter_store [ind0, i1] indirect(%k), %v : f32`."""

    name = "loops.scatter_store"
    value = operand_def()
    traits = lazy_traits_def(lambda: (IsTerminator(),))
    assembly_format = "custom<ExprList>($indices) custom<Indirect>($indirect) `,` $value `:` type($value) attr-dict"

    def __init__(self, indices: Sequence[sympy.Expr | int], value: SSAValue, indirect: Sequence[SSAValue] = ()):
        super().__init__(operands=[value, list(indirect)], properties={"indices": _exprs_attr(indices)})

    def verify_(self) -> None:
        owner = self.parent_op()
        if not isinstance(owner, ScatterOp):
            raise VerifyException("loops.scatter_store must end a loops.scatter")
        verify_index_symbols(self, self.index_exprs, owner.index_symbols(), len(self.indirect))


def _verify_epilogue(op: ReductionOp) -> None:
    """After the first reduce, no op may use a value that varies with the reduction indices."""
    reduction_vars = set(reduction_index_names(len(op.reduction_ranges)))
    varying: set[SSAValue] = set()
    after_reduce = False
    for inner in op.body.block.ops:
        if isinstance(inner, (ReduceOp, DotOp)):
            after_reduce = True  # its results are per-i: not varying
            continue
        exprs = inner.index_exprs if isinstance(inner, (LoadOp, IndexOp)) else []
        uses_r = any(s.name in reduction_vars for e in exprs for s in e.free_symbols)
        if not (uses_r or any(o in varying for o in inner.operands)):
            continue
        if after_reduce:
            raise blame(
                inner,
                f"loops.reduction: {inner.name} after the reduction uses a value that varies "
                "with the reduction indices",
            )
        varying.update(inner.results)


@irdl_op_definition
class ReduceOp(ReduceBase):
    """A reduction in a `loops.reduction` body: `%r = loops.reduce sum %v : f32 -> f32`."""

    name = "loops.reduce"

    def verify_(self) -> None:
        super().verify_()
        if not isinstance(self.parent_op(), ReductionOp):
            raise VerifyException("loops.reduce must be directly inside loops.reduction")


@irdl_op_definition
class DotOp(DotBase):
    """A contraction in a `loops.reduction` body: `%c = loops.dot %a, %b : bf16, bf16 -> f32`."""

    name = "loops.dot"

    def verify_(self) -> None:
        super().verify_()
        if not isinstance(self.parent_op(), ReductionOp):
            raise VerifyException("loops.dot must be directly inside loops.reduction")


def enclosing_loops(op: Operation) -> LoopsBodyOp | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, LoopsBodyOp):
        parent = parent.parent_op()
    return parent


def verify_index_symbols(op: Operation, exprs: Sequence[sympy.Expr], allowed: set[str], indirect: int = 0) -> None:
    """Index expressions may use the enclosing op's index variables, size symbols and the
    access's own `indirect` operands (`ind0`, ...) only."""
    allowed = allowed | indirect_names(indirect)
    for e in exprs:
        for s in sorted(e.free_symbols, key=lambda s: s.name):
            if s.name not in allowed and not is_size_symbol(s.name):
                raise VerifyException(
                    f"{op.name}: index variable '{s.name}' is out of range here "
                    f"(available: {', '.join(sorted(allowed)) or 'none'})"
                )


def index_extents(op: LoopsBodyOp) -> dict[sympy.Symbol, sympy.Expr]:
    """Each index variable of `op` (i0, ..., r0_0, ...) and the number of values it takes."""
    names = index_names(len(op.ranges))
    extents = op.range_exprs
    if isinstance(op, ReductionOp):
        names += reduction_index_names(len(op.reduction_ranges))
        extents = extents + op.reduction_range_exprs
    return {sympy.Symbol(n, integer=True, nonnegative=True): e for n, e in zip(names, extents)}


def masked_off_value(typ: Attribute) -> arith.ConstantOp:
    """What a masked-off load reads: 0 of the element type (also any load of a tensor with no
    elements, which only runs masked off)."""
    if isinstance(typ, IntegerType):
        return arith.ConstantOp(IntegerAttr(0, typ))
    return arith.ConstantOp(FloatAttr(0.0, typ))  # type: ignore[arg-type]


@irdl_op_definition
class LoadOp(MaskOperand, IndicesAccessOp):
    """Read one element of a tensor value at logical indices (one expression per dimension)."""

    name = "loops.load"
    source = operand_def(TensorType)
    result = result_def()
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$source `` custom<ExprList>($indices) custom<Indirect>($indirect) custom<Mask>($mask)"
        " `:` custom<TensorOf>(type($source), type($result)) attr-dict"
    )
    custom_directives = (TensorOf, *ACCESS_DIRECTIVES)

    def __init__(
        self,
        source: SSAValue,
        indices: Sequence[sympy.Expr | int],
        mask: SSAValue | None = None,
        indirect: Sequence[SSAValue] = (),
    ):
        super().__init__(
            operands=[source, [mask] if mask is not None else [], list(indirect)],
            properties={"indices": _exprs_attr(indices)},
            result_types=[source.type.element_type],  # type: ignore[attr-defined]
        )

    def verify_(self) -> None:
        typ = self.source.type
        rank = len(typ.get_shape())  # type: ignore[attr-defined]
        if len(self.indices) != rank:
            raise VerifyException(
                f"loops.load: {len(self.indices)} indices for a rank-{rank} tensor"
            )
        if self.result.type != typ.element_type:  # type: ignore[attr-defined]
            raise VerifyException(
                f"loops.load: result type {self.result.type} is not the element type of {typ}"
            )
        owner = enclosing_loops(self)
        if owner is None:
            raise VerifyException("loops.load must be inside loops.pointwise or loops.reduction")
        verify_index_symbols(self, self.index_exprs, owner.index_symbols(), len(self.indirect))
        if self.mask is None:  # a masked load (cat, padding) may index outside where masked off
            verify_in_bounds(self, self.index_exprs, list(typ.get_shape()), index_extents(owner))  # type: ignore[attr-defined]


@irdl_op_definition
class IndexOp(IndexExprOp):
    """An index expression as a value (Inductor's `ops.index_expr`), e.g. for arange; one
    inlined at a loaded position names it as loads do (`loops.index ind0 indirect(%k) : i64`)."""

    name = "loops.index"
    traits = traits_def(Pure())

    def __init__(self, expr: sympy.Expr | int, result_type: Attribute = i64, indirect: Sequence[SSAValue] = ()):
        super().__init__(operands=[list(indirect)], properties={"expr": ExprAttr(expr)}, result_types=[result_type])

    def verify_(self) -> None:
        owner = enclosing_loops(self)
        allowed = owner.index_symbols() if owner is not None else _buffer_index_symbols(self)
        verify_index_symbols(self, self.index_exprs, allowed, len(self.indirect))


@irdl_op_definition
class IndirectIndexOp(IndirectIndexBase):
    """A loaded integer as a position in a dim of `size` (Inductor's `ops.indirect_indexing`):
    `%k = loops.indirect_index %t size 1000 : i64`. Negative values count from the end, as in
    `x[-1]`; `--convert-to-triton="check-indices=true"` asserts 0 <= %k < size on the device.
    The result is an `index` that loads and stores name as `ind<k>` (see `sym`)."""

    name = "loops.indirect_index"
    traits = traits_def(Pure())
    assembly_format = "$value `size` custom<Expr>($size) `:` custom<PositionType>(type($value)) attr-dict"

    def __init__(self, value: SSAValue, size: sympy.Expr | int):
        super().__init__(operands=[value], properties={"size": ExprAttr(size)}, result_types=[IndexType()])

    def verify_(self) -> None:
        self.verify_size()


def _buffer_index_symbols(op: Operation) -> set[str]:
    """loops.index may also sit in a buffer.computed body; that op says which symbols exist."""
    parent = op.parent_op()
    while parent is not None:
        symbols = getattr(parent, "index_symbols", None)
        if callable(symbols):
            return symbols()
        parent = parent.parent_op()
    raise VerifyException("loops.index must be inside a loops or buffer body")


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends a loops body with the element it computes."""

    name = "loops.yield"
    values = var_operand_def()
    traits = lazy_traits_def(lambda: (IsTerminator(),))
    assembly_format = "$values `:` type($values) attr-dict"

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[list(values)])

    def verify_(self) -> None:
        if isinstance(self.parent_op(), PointwiseOp) and len(self.values) != 1:
            raise VerifyException(f"loops.yield: a pointwise yields one value, got {len(self.values)}")


@irdl_op_definition
class ExternOp(ExternCallBase):
    """A tensor computed by an aten call at run time (mm, convolution, ops without a lowering).

        %0 = loops.extern "mm" (%a, %b) {args = [#aten.tensor, #aten.tensor]} : (tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>

    The overload is spelled as in `aten.call` (`packet` or `packet.overload`); `--realize`
    makes it a `buffer.extern` and realizes its inputs."""

    name = "loops.extern"


Loops = Dialect(
    "loops",
    [PointwiseOp, ReductionOp, ScatterOp, ReduceOp, DotOp, LoadOp, IndexOp, IndirectIndexOp, YieldOp, ScatterStoreOp, ExternOp],
    [],
)
