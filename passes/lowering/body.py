"""Building a loops body: loads, constants, index values, casts, reduces and the final narrowing.

Ops take and give `Value`s (`value.py`: an SSA value with its torch dtype, in compute or
storage form). The scalar math in `scalar.py` takes and returns compute-form values; `finish`
casts and narrows the element a body yields to the result's storage type, so every fp16 op
rounds exactly once, at its yield.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import sympy
from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType, TensorType, UnitAttr, i1, i64
from xdsl.ir import Block, Operation, Region, SSAValue

from mlc.dialects.loops import (
    EXPLICIT_ROUNDING,
    IndexOp,
    IndirectIndexOp,
    LoadOp,
    PointwiseOp,
    ReduceOp,
    ReductionOp,
    YieldOp,
)
from mlc.dialects.sym import sizes_of, symbol
from mlc.passes.lowering.dtypes import (
    Operand,
    compute_type,
    dtype_of,
    int_bits,
    int_to_float,
    is_float,
    is_unsigned,
    result_type,
    storage_type,
)
from mlc.passes.lowering.indexing import broadcast_index
from mlc.passes.lowering.registry import Call, is_tensor, shape
from mlc.passes.lowering.scalar import ScalarMath
from mlc.passes.lowering.value import Value


def index_vars(rank: int) -> list[sympy.Symbol]:
    """The implicit loop indices i0, i1, ... of a body over `rank` ranges."""
    return [symbol(f"i{k}") for k in range(rank)]


def reduction_vars(rank: int) -> list[sympy.Symbol]:
    """The implicit reduction indices r0_0, r0_1, ... of a reduction body."""
    return [symbol(f"r0_{k}") for k in range(rank)]


# What each loops.reduce kind gives for a value of dtype d: the dtypes of its results.
def _reduce_dtypes(kind: str, dtype: str) -> list[str]:
    if kind in ("argmax", "argmin"):
        return ["int64"]
    if kind == "any":
        return ["bool"]
    if kind == "welford":
        return [dtype] * 3  # mean, m2, weight
    return [dtype]


class Body(ScalarMath):
    """One loops body under construction; ops are appended in program order."""

    def __init__(self, rank: int, reduction_rank: int = 0):
        self.block = Block()
        self.rank = rank
        self.reduction_rank = reduction_rank
        self._constants: dict[tuple[str, str, str], Value] = {}

    @property
    def vars(self) -> list[sympy.Symbol]:
        return index_vars(self.rank)

    @property
    def rvars(self) -> list[sympy.Symbol]:
        """r0_0, r0_1, ...: only in a reduction body."""
        return reduction_vars(self.reduction_rank)

    def emit(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0]

    # -- reading ------------------------------------------------------------------------------

    def load(
        self,
        tensor: SSAValue,
        indices: Sequence[sympy.Expr | int],
        mask: Value | None = None,
        widen: bool = True,
        indirect: Sequence[SSAValue] = (),
    ) -> Value:
        """`loops.load`; widened to compute form unless the caller only moves data. `indices`
        may name the `indirect` positions (from `indirect_index`) as ind0, ind1, ..."""
        dtype = dtype_of(tensor.type)
        assert dtype is not None, f"cannot load {tensor.type}"
        op = LoadOp(tensor, list(indices), mask.ssa if mask else None, indirect)
        loaded = Value(self.emit(op), dtype)
        return self.widen(loaded) if widen else loaded

    def indirect_index(self, v: Value, size: int) -> SSAValue:
        """The integer `v` as a position in a dim of `size` (negative counts from the end)."""
        assert not v.is_float and v.dtype != "bool", f"an index is an integer, got {v.dtype}"
        return self.emit(IndirectIndexOp(self.widen(v).ssa, size))

    def widen(self, v: Value) -> Value:
        """Storage form -> compute form (f16/bf16 -> f32 by extf, ui8 -> i8 by bitcast)."""
        target = compute_type(v.dtype)
        if v.ssa.type == target:
            return v
        if is_float(v.dtype):
            return Value(self.emit(arith.ExtFOp(v.ssa, target)), v.dtype)
        return Value(self.emit(arith.BitcastOp(v.ssa, target)), v.dtype)

    def index(self, expr: sympy.Expr | int) -> Value:
        """An index expression as an int64 value (`loops.index`)."""
        return Value(self.emit(IndexOp(sympy.Integer(expr) if isinstance(expr, int) else expr, i64)), "int64")

    def count(self, n: int | sympy.Expr, dtype: str) -> Value:
        """An element count as a `dtype` value: a constant, or a symbolic size's value at run
        time (`loops.index s1`, cast)."""
        if isinstance(n, int) or n.is_Integer:
            return self.constant(float(n) if is_float(dtype) else int(n), dtype)
        return self.cast(self.index(n), dtype)

    def constant(self, value: bool | int | float, dtype: str) -> Value:
        """A compute-form constant, made once per body."""
        key = (repr(value), type(value).__name__, dtype)  # repr keeps -0.0 apart from 0.0
        if key not in self._constants:
            typ = compute_type(dtype)
            if is_float(dtype):
                attr = FloatAttr(float(value), typ)
            elif dtype == "bool":
                attr = IntegerAttr(int(bool(value)), i1)
            else:
                assert isinstance(typ, IntegerType)
                attr = IntegerAttr(int(value), typ, truncate_bits=True)
            self._constants[key] = Value(self.emit(arith.ConstantOp(attr)), dtype)
        return self._constants[key]

    # -- converting ---------------------------------------------------------------------------

    def cast(self, v: Value, dtype: str) -> Value:
        """torch's `.to(dtype)` on one element: float->int truncates, anything->bool is `!= 0`."""
        if v.dtype == dtype:
            return v
        v = self.widen(v)
        src, dst = compute_type(v.dtype), compute_type(dtype)
        if dtype == "bool":
            zero = self.constant(0, v.dtype)
            return self.compare("ne", v, zero)
        if is_float(dtype):
            if v.is_float:
                ssa = v.ssa if src == dst else self._float_resize(v.ssa, dst)
            elif is_unsigned(v.dtype):
                ssa = self.emit(arith.UIToFPOp(v.ssa, dst))  # type: ignore[arg-type]
            else:
                ssa = self.emit(arith.SIToFPOp(v.ssa, dst))  # type: ignore[arg-type]
            return Value(ssa, dtype)
        assert isinstance(dst, IntegerType)
        if v.is_float:
            # Truncate towards zero; go through 64 bits so that narrow targets wrap as torch's
            # CPU conversion does instead of saturating or being undefined.
            wide = self.emit(arith.FPToSIOp(v.ssa, i64))
            return Value(wide if dst == i64 else self.emit(arith.TruncIOp(wide, dst)), dtype)
        return Value(self._int_resize(v, dst), dtype)

    def convert(self, v: Value, dtype: str) -> Value:
        """An explicit conversion (`_to_copy`): `cast`, then rounded to `dtype`'s precision where
        that is computed wider (f16/bf16 in f32), as eager's conversion rounds. Implicit
        promotions (`cast`) stay unrounded, as eager's opmath keeps them; dropping the rounding a
        program asked for made one value differ between two kernels that recompute it (a
        log_softmax over a size-1 dim gave -2e-8, not 0, on the GPU: mlc-fuzz seed 201318)."""
        out = self.cast(v, dtype)
        storage = storage_type(dtype)
        if v.dtype == dtype or not is_float(dtype) or storage == out.ssa.type:
            return out
        rounding = arith.TruncFOp(out.ssa, storage)
        rounding.attributes[EXPLICIT_ROUNDING] = UnitAttr()  # not folded away by --inline
        narrow = self.emit(rounding)
        return Value(self.emit(arith.ExtFOp(narrow, out.ssa.type)), dtype)  # type: ignore[arg-type]

    def _float_resize(self, ssa: SSAValue, dst: object) -> SSAValue:
        src_width = ssa.type.bitwidth  # type: ignore[attr-defined]
        dst_width = dst.bitwidth  # type: ignore[attr-defined]
        if dst_width > src_width:
            return self.emit(arith.ExtFOp(ssa, dst))  # type: ignore[arg-type]
        return self.emit(arith.TruncFOp(ssa, dst))  # type: ignore[arg-type]

    def _int_resize(self, v: Value, dst: IntegerType) -> SSAValue:
        src_bits, dst_bits = int_bits(v.dtype), dst.width.data
        if dst_bits == src_bits:
            return v.ssa
        if dst_bits < src_bits:
            return self.emit(arith.TruncIOp(v.ssa, dst))
        if is_unsigned(v.dtype):
            return self.emit(arith.ExtUIOp(v.ssa, dst))
        return self.emit(arith.ExtSIOp(v.ssa, dst))

    # -- reducing -------------------------------------------------------------------------------

    def reduce(self, kind: str, v: Value) -> list[Value]:
        """`loops.reduce kind v`: one value (welford: mean, m2, weight), of v's compute type
        (argmax/argmin: int64, any: bool). The caller widens first: f16/bf16 sum in f32."""
        assert kind != "any" or v.dtype == "bool", "any reduces bools (take truth() first)"
        dtypes = _reduce_dtypes(kind, v.dtype)
        types = [v.ssa.type if d == v.dtype else compute_type(d) for d in dtypes]
        op = ReduceOp(kind, v.ssa, types)
        self.block.add_op(op)
        return [Value(r, d) for r, d in zip(op.results, dtypes)]

    # -- yielding -------------------------------------------------------------------------------

    def stored(self, v: Value, dtype: str) -> SSAValue:
        """`v` as an element of a `dtype` tensor (cast, then narrowed to storage)."""
        v = self.cast(v, dtype)
        ssa, target = v.ssa, storage_type(dtype)
        if ssa.type != target:
            widened = ssa.owner
            if isinstance(widened, arith.ExtFOp) and widened.input.type == target:
                return widened.input  # already a `target` value (an explicit conversion's)
            if is_float(dtype):
                ssa = self.emit(arith.TruncFOp(ssa, target))
            else:
                ssa = self.emit(arith.BitcastOp(ssa, target))
        return ssa

    def finish(self, v: Value, dtype: str) -> None:
        """Yield `v` as an element of a `dtype` tensor (cast, then narrow to storage)."""
        self.block.add_op(YieldOp(self.stored(v, dtype)))

    def finish_all(self, values: Sequence[Value], dtypes: Sequence[str]) -> None:
        """Yield one element per result of a multi-result body."""
        ssas = [self.stored(v, d) for v, d in zip(values, dtypes)]
        self.block.add_op(YieldOp(*ssas))

    def drop_dead_ops(self) -> None:
        """Erase ops whose results nothing uses (a body is pure up to its yield)."""
        for op in reversed(list(self.block.ops)):
            if not isinstance(op, YieldOp) and op.results and not any(r.uses for r in op.results):
                op.detach()
                op.erase()


def make_pointwise(
    call: Call,
    result_type: TensorType,
    fn: Callable[[Body], Value],
) -> PointwiseOp:
    """A `loops.pointwise` over the result's shape whose body is built by `fn`."""
    ranges = sizes_of(result_type)
    body = Body(len(ranges))
    dtype = dtype_of(result_type)
    assert dtype is not None
    body.finish(fn(body), dtype)
    body.drop_dead_ops()
    op = PointwiseOp(ranges, result_type, Region(body.block), origins=[call.origin])
    _locate(call, op)
    return op


def make_reduction(
    call: Call,
    ranges: Sequence[int],
    reduction_ranges: Sequence[int],
    result_types: Sequence[TensorType],
    fn: Callable[[Body], Sequence[Value]],
) -> ReductionOp:
    """A `loops.reduction` over `ranges` x `reduction_ranges` whose body is built by `fn`:
    it loads at `b.vars` and `b.rvars`, calls `b.reduce` (all reduces after all the values
    they reduce: the ops after the first reduce are the epilogue) and returns one value per
    result, which is cast and narrowed to that result's dtype."""
    body = Body(len(ranges), len(reduction_ranges))
    dtypes = [dtype_of(t) for t in result_types]
    assert None not in dtypes
    body.finish_all(fn(body), dtypes)  # type: ignore[arg-type]
    body.drop_dead_ops()
    op = ReductionOp(ranges, reduction_ranges, result_types, Region(body.block), origins=[call.origin])
    _locate(call, op)
    return op


def _locate(call: Call, op: Operation) -> None:
    # The FX node name follows every op the aten op became, for diagnostics and kernel names.
    for new in (op, *op.regions[0].block.ops):
        new.location = call.op.location


# ---------------------------------------------------------------------------------------------
# Elementwise ops: promotion, broadcasting loads, one body per op.

Arg = Any  # a tensor SSAValue, a Python scalar, or None for an absent optional argument


def promote(*args: Arg, kind: str = "default") -> str | None:
    """torch's result dtype for an elementwise op over `args` (Python scalars are weak).

    kind: "default", or "int_to_float" (div, exp, sqrt, ...: integers compute in float32).
    None when some tensor has a dtype mlc does not compute in (complex, float8, ...)."""
    operands = []
    for a in args:
        if a is None:
            continue
        if is_tensor(a):
            dtype = dtype_of(a.type)
            if dtype is None:
                return None
            operands.append(Operand(dtype, len(a.type.get_shape())))
        else:
            operands.append(Operand.of_scalar(a))
    result = result_type(operands)
    return int_to_float(result) if kind == "int_to_float" else result


def elementwise(
    call: Call,
    args: Sequence[Arg],
    dtypes: str | Sequence[str | None],
    fn: Callable[..., Value],
) -> list[Operation]:
    """One pointwise over the result shape: each tensor arg loaded with broadcasting and cast
    to its dtype in `dtypes` (one dtype for all, or per arg; None keeps the arg's own), each
    scalar made a constant of it; `fn(body, *values)` computes the element."""
    out_type = call.result_type
    out_shape = sizes_of(out_type)
    per_arg = [dtypes] * len(args) if isinstance(dtypes, str) else list(dtypes)

    def body(b: Body) -> Value:
        values = []
        for a, dtype in zip(args, per_arg):
            if a is None:
                values.append(None)
                continue
            if is_tensor(a):
                v = b.load(a, broadcast_index(b.vars, shape(a), out_shape))
            else:
                dt = dtype or Operand.of_scalar(a).dtype
                v = b.count(a, dt) if isinstance(a, sympy.Expr) else b.constant(a, dt)
            values.append(b.cast(v, dtype) if dtype else v)
        return fn(b, *values)

    return [make_pointwise(call, out_type, body)]


IndexFn = Callable[[list[sympy.Expr]], Sequence[sympy.Expr]]


def load_as_is(call: Call, source: SSAValue, index_fn: IndexFn, result: int = 0) -> PointwiseOp:
    """A view or copy: one raw load of `source` at `index_fn(i0, i1, ...)`, yielded unchanged."""
    out_type = call.results[result].type
    assert isinstance(out_type, TensorType)
    return make_pointwise(call, out_type, lambda b: b.load(source, index_fn(b.vars), widen=False))
