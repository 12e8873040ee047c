"""A small reference interpreter for aten and loops IR, on torch tensors (tests only).

`run(module, inputs)` executes the first `func.func`: aten ops and `loops.extern` call
`torch.ops.aten` (aten ops through the arguments `--lower-aten` would give their extern, so
the unlowered module is its own reference); a `loops.pointwise` evaluates its body once for
all points at the same time: the index variables are integer tensors over the ranges (each
shaped to broadcast against the others), every scalar value a tensor that broadcasts to the
ranges' shape. A `loops.reduction` evaluates its prologue over ranges x reduction ranges,
each `loops.reduce` with the matching torch reduction over the flattened reduction dims
(welford in float64), and its epilogue on the reduced values.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import sympy
import torch
from xdsl.dialects import arith, func, math
from xdsl.dialects.arith import CMPF_COMPARISON_OPERATIONS, CMPI_COMPARISON_OPERATIONS
from xdsl.dialects.builtin import (
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue

from mlc.dialects.aten import AtenOp, CallOp
from mlc.dialects.loops import (
    ExternOp,
    IndexOp,
    IndirectIndexOp,
    LoadOp,
    PointwiseOp,
    ReduceOp,
    ReductionOp,
    ScatterOp,
    ScatterStoreOp,
    YieldOp,
)
from mlc.dialects.sym import FloorDiv, ModularIndexing
from mlc.dialects.values import DTYPE_NAMES
from mlc.passes.lowering.extern import extern
from mlc.passes.lowering.registry import make_call
from mlc.tools.mlc_run import torch_value


def torch_dtype(t: Attribute) -> torch.dtype:
    elem = t.element_type if isinstance(t, TensorType) else t
    return getattr(torch, DTYPE_NAMES[elem])


def _scalar_dtype(t: Attribute) -> torch.dtype:
    """Body values: signless i8 is int8 (uint8 data is bitcast into it)."""
    return torch_dtype(t)



# ---------------------------------------------------------------------------------------------
# Index expressions


def eval_expr(expr: sympy.Expr, env: dict[str, torch.Tensor]) -> torch.Tensor | int:
    if isinstance(expr, sympy.Integer):
        return int(expr)
    if isinstance(expr, sympy.Symbol):
        return env[expr.name]
    args = [eval_expr(a, env) for a in expr.args]
    if isinstance(expr, sympy.Add):
        return _fold(operator.add, args)
    if isinstance(expr, sympy.Mul):
        return _fold(operator.mul, args)
    if isinstance(expr, FloorDiv):
        return args[0] // args[1]
    if isinstance(expr, ModularIndexing):
        return (args[0] // args[1]) % args[2]
    if isinstance(expr, (sympy.Min, sympy.Max)):
        pick = torch.minimum if isinstance(expr, sympy.Min) else torch.maximum
        return _fold(lambda a, b: pick(torch.as_tensor(a), torch.as_tensor(b)), args)
    raise NotImplementedError(f"index expression {expr}")


def _fold(fn: Callable[[Any, Any], Any], args: Sequence[Any]) -> Any:
    out = args[0]
    for a in args[1:]:
        out = fn(out, a)
    return out


# ---------------------------------------------------------------------------------------------
# Scalar ops (on tensors of the ranges' shape)


def _unsigned(x: torch.Tensor) -> torch.Tensor:
    if x.dtype == torch.bool:
        return x.to(torch.uint8)
    if x.dtype == torch.int8:
        return x.view(torch.uint8)
    return x


def _from_unsigned(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    if dtype == torch.int8:
        return x.to(torch.uint8).view(torch.int8)
    return x.to(dtype)


_CMP = {
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge,
}

_UNARY: dict[type[Operation], Callable[[torch.Tensor], torch.Tensor]] = {
    math.ExpOp: torch.exp, math.Exp2Op: torch.exp2, math.ExpM1Op: torch.expm1, math.LogOp: torch.log,
    math.Log1pOp: torch.log1p, math.Log2Op: torch.log2, math.Log10Op: torch.log10, math.SqrtOp: torch.sqrt,
    math.RsqrtOp: torch.rsqrt, math.SinOp: torch.sin, math.CosOp: torch.cos, math.TanOp: torch.tan,
    math.TanhOp: torch.tanh, math.ErfOp: torch.erf, math.AbsFOp: torch.abs, math.AbsIOp: torch.abs,
    math.FloorOp: torch.floor, math.CeilOp: torch.ceil, math.RoundEvenOp: torch.round, math.TruncOp: torch.trunc,
    arith.NegfOp: torch.neg,
}

_BINARY: dict[type[Operation], Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    arith.AddfOp: torch.add, arith.SubfOp: torch.sub, arith.MulfOp: torch.mul, arith.DivfOp: torch.div,
    arith.MaximumfOp: torch.maximum, arith.MinimumfOp: torch.minimum, math.PowFOp: torch.pow,
    arith.AddiOp: torch.add, arith.SubiOp: torch.sub, arith.MuliOp: torch.mul,
    arith.DivSIOp: lambda a, b: torch.div(a, b, rounding_mode="trunc"),
    arith.FloorDivSIOp: lambda a, b: torch.div(a, b, rounding_mode="floor"),
    arith.RemSIOp: torch.fmod,
    arith.MaxSIOp: torch.maximum, arith.MinSIOp: torch.minimum,
    arith.AndIOp: operator.and_, arith.OrIOp: operator.or_, arith.XOrIOp: operator.xor,
}

_UNSIGNED_BINARY: dict[type[Operation], Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    arith.DivUIOp: lambda a, b: torch.div(a, b, rounding_mode="trunc"),
    arith.RemUIOp: torch.fmod,
    arith.MaxUIOp: torch.maximum,
    arith.MinUIOp: torch.minimum,
}


def eval_scalar_op(op: Operation, vals: list[torch.Tensor], shape: list[int]) -> torch.Tensor:
    out_type = op.results[0].type
    if isinstance(op, arith.ConstantOp):
        value = op.value
        assert isinstance(value, (IntegerAttr, FloatAttr))
        return torch.full(shape, value.value.data, dtype=_scalar_dtype(out_type))
    if type(op) in _UNARY:
        return _UNARY[type(op)](vals[0])
    if type(op) in _BINARY:
        return _BINARY[type(op)](vals[0], vals[1]).to(vals[0].dtype)
    if type(op) in _UNSIGNED_BINARY:
        out = _UNSIGNED_BINARY[type(op)](_unsigned(vals[0]), _unsigned(vals[1]))
        return _from_unsigned(out, vals[0].dtype)
    if isinstance(op, arith.CmpfOp):
        pred = CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
        a, b = vals
        nan = torch.isnan(a) | torch.isnan(b)
        if pred == "uno":
            return nan
        ordered = _CMP[{"oeq": "eq", "une": "ne"}.get(pred, pred[1:])](a, b)
        return ordered | nan if pred.startswith("u") else ordered & ~nan
    if isinstance(op, arith.CmpiOp):
        pred = CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
        a, b = vals
        if pred[0] == "u":
            a, b, pred = _unsigned(a), _unsigned(b), pred[1:]
        elif pred[0] == "s":
            pred = pred[1:]
        return _CMP[pred](a, b)
    if isinstance(op, arith.SelectOp):
        return torch.where(vals[0], vals[1], vals[2])
    return _eval_cast(op, vals[0])


def _eval_cast(op: Operation, x: torch.Tensor) -> torch.Tensor:
    target = _scalar_dtype(op.results[0].type)
    if isinstance(op, arith.BitcastOp):
        return x.view(target)
    if isinstance(op, (arith.ExtFOp, arith.TruncFOp, arith.SIToFPOp, arith.FPToSIOp, arith.ExtSIOp)):
        return x.to(target)
    if isinstance(op, arith.UIToFPOp):
        return _unsigned(x).to(target)
    if isinstance(op, arith.ExtUIOp):
        return _unsigned(x).to(target)
    if isinstance(op, arith.TruncIOp):
        if target == torch.bool:
            return (x & 1).to(torch.bool)
        return x.to(target)  # C conversion: wraps
    raise NotImplementedError(f"interpreter: {op.name}")


# ---------------------------------------------------------------------------------------------
# loops ops


def _grids(sizes: Sequence[int]) -> list[torch.Tensor]:
    """One integer tensor per loop variable, shaped to broadcast against the others: the k-th
    is arange(sizes[k]) along dim k (so values that ignore a variable stay small)."""
    out = []
    for k, n in enumerate(sizes):
        shape = [1] * len(sizes)
        shape[k] = n
        out.append(torch.arange(n).reshape(shape))
    return out


def _eval_body_op(
    inner: Operation,
    value: Callable[[SSAValue], torch.Tensor],
    index_env: dict[str, torch.Tensor],
    local: dict[SSAValue, torch.Tensor],
) -> None:
    """One non-terminator op of a loops body; values broadcast over the loop variables."""
    if isinstance(inner, LoadOp):
        local[inner.result] = _eval_load(inner, value, _with_positions(index_env, inner.indirect, value))
    elif isinstance(inner, IndexOp):
        env = _with_positions(index_env, inner.indirect, value)
        idx = torch.as_tensor(eval_expr(inner.expr.expr, env))
        local[inner.result] = idx.to(_scalar_dtype(inner.result.type))
    elif isinstance(inner, IndirectIndexOp):
        v = value(inner.value).to(torch.int64)
        local[inner.result] = torch.where(v < 0, v + int(inner.size.expr), v)
    else:
        local[inner.results[0]] = eval_scalar_op(inner, [value(o) for o in inner.operands], [])


def _with_positions(
    index_env: dict[str, torch.Tensor], indirect: Sequence[SSAValue], value: Callable[[SSAValue], torch.Tensor]
) -> dict[str, torch.Tensor]:
    """The loop variables and an access's loaded positions (`ind0`, ...)."""
    return index_env | {f"ind{k}": value(v) for k, v in enumerate(indirect)}


def _run_body(op: PointwiseOp | ScatterOp, env: dict[SSAValue, torch.Tensor]) -> tuple[
    Operation, list[int], dict[str, torch.Tensor], Callable[[SSAValue], torch.Tensor]
]:
    """Every op of a pointwise or scatter body before its terminator, for all points at once:
    (the terminator, the ranges, the index variables, the values)."""
    shape = [int(r) for r in op.range_exprs]
    index_env = {f"i{k}": g for k, g in enumerate(_grids(shape))}
    local: dict[SSAValue, torch.Tensor] = {}

    def value(v: SSAValue) -> torch.Tensor:
        return local[v] if v in local else env[v]

    *inner, last = op.body.block.ops
    for body_op in inner:
        _eval_body_op(body_op, value, index_env, local)
    return last, shape, index_env, value


def eval_pointwise(op: PointwiseOp, env: dict[SSAValue, torch.Tensor]) -> torch.Tensor:
    last, shape, _, value = _run_body(op, env)
    assert isinstance(last, YieldOp), "pointwise body without yield"
    return value(last.values[0]).to(torch_dtype(op.result.type)).expand(shape).clone()


def eval_scatter(op: ScatterOp, env: dict[SSAValue, torch.Tensor]) -> torch.Tensor:
    """The base, with the body's value at every point of the ranges put (or added) where the
    terminator says."""
    last, shape, index_env, value = _run_body(op, env)
    assert isinstance(last, ScatterStoreOp), "scatter body without loops.scatter_store"
    at_env = _with_positions(index_env, last.indirect, value)
    at = [torch.as_tensor(eval_expr(e, at_env)).expand(shape).reshape(-1) for e in last.index_exprs]
    values = value(last.value).to(torch_dtype(op.result.type)).expand(shape).reshape(-1)
    return env[op.base].clone().index_put_(tuple(at), values, accumulate=op.store_mode == "atomic_add")


def eval_reduction(op: ReductionOp, env: dict[SSAValue, torch.Tensor]) -> list[torch.Tensor]:
    """All points at once: the prologue over ranges x reduction ranges, each loops.reduce over
    the trailing (reduction) dims flattened row-major, kept as size-1 dims so that the
    epilogue still broadcasts; the yielded values lose them."""
    shape = [int(r) for r in op.range_exprs]
    rshape = [int(r) for r in op.reduction_range_exprs]
    grids = _grids(shape + rshape)
    index_env = {f"i{k}": g for k, g in enumerate(grids[: len(shape)])}
    index_env |= {f"r0_{k}": g for k, g in enumerate(grids[len(shape) :])}
    full = shape + rshape
    kept = shape + [1] * len(rshape)
    local: dict[SSAValue, torch.Tensor] = {}

    def value(v: SSAValue) -> torch.Tensor:
        return local[v] if v in local else env[v]

    for inner in op.body.block.ops:
        if isinstance(inner, YieldOp):
            outs = []
            for v, res in zip(inner.values, op.outputs):
                out = value(v).to(torch_dtype(res.type))
                outs.append(out.expand(kept).reshape(shape).clone())
            return outs
        if isinstance(inner, ReduceOp):
            rows = value(inner.value).expand(full).reshape(shape + [-1])
            for result, reduced in zip(inner.results, _reduce(inner.kind, rows)):
                local[result] = reduced.reshape(kept).to(_scalar_dtype(result.type))
            continue
        _eval_body_op(inner, value, index_env, local)
    raise AssertionError("reduction body without yield")


def _reduce(kind: str, rows: torch.Tensor) -> list[torch.Tensor]:
    """loops.reduce over the last dim of `rows` (the flattened reduction ranges)."""
    if kind == "sum":
        return [rows.sum(-1, dtype=rows.dtype)]
    if kind == "prod":
        return [rows.prod(-1, dtype=rows.dtype)]
    if kind == "max":
        return [rows.amax(-1)]  # NaN-propagating, signed for integers
    if kind == "min":
        return [rows.amin(-1)]
    if kind == "argmax":
        return [rows.argmax(-1)]  # the first of equal values; NaN is the largest
    if kind == "argmin":
        return [rows.argmin(-1)]
    if kind == "any":
        return [rows.any(-1)]
    if kind == "welford":
        wide = rows.double()
        mean = wide.mean(-1)
        m2 = ((wide - mean.unsqueeze(-1)) ** 2).sum(-1)
        weight = torch.full_like(mean, rows.shape[-1])
        return [mean, m2, weight]
    raise NotImplementedError(f"interpreter: loops.reduce {kind}")


def _eval_load(op: LoadOp, value: Callable[[SSAValue], torch.Tensor], index_env: dict[str, torch.Tensor]) -> torch.Tensor:
    src = value(op.source)
    mask = value(op.mask) if op.mask is not None else torch.ones((), dtype=torch.bool)
    indices = []
    for dim, expr in enumerate(op.index_exprs):
        idx = torch.as_tensor(eval_expr(expr, index_env))
        inside = (idx >= 0) & (idx < src.shape[dim])
        assert bool((inside | ~mask).all()), f"load out of bounds in dim {dim}: {expr}"
        indices.append(torch.where(mask, idx, 0))
    loaded = src[tuple(indices)] if indices else src
    return torch.where(mask, loaded, torch.zeros((), dtype=src.dtype))


# ---------------------------------------------------------------------------------------------
# Calls


def call_aten(op: ExternOp, operands: list[torch.Tensor]) -> list[torch.Tensor]:
    packet, overload = op.overload.data.split(".")
    fn = getattr(getattr(torch.ops.aten, packet), overload)
    it = iter(operands)
    args = torch_value(op.args, it)
    kwargs = torch_value(op.kwargs, it) if op.kwargs is not None else {}
    out = fn(*args, **kwargs)
    return list(out) if isinstance(out, (tuple, list)) else [out]


def run(module: ModuleOp, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    fn = next(o for o in module.walk() if isinstance(o, func.FuncOp))
    env: dict[SSAValue, torch.Tensor] = dict(zip(fn.body.block.args, inputs))
    for op in fn.body.block.ops:
        if isinstance(op, func.ReturnOp):
            return [env[v] for v in op.arguments]
        if isinstance(op, PointwiseOp):
            env[op.result] = eval_pointwise(op, env)
            continue
        if isinstance(op, ReductionOp):
            for result, out in zip(op.outputs, eval_reduction(op, env)):
                env[result] = out
            continue
        if isinstance(op, ScatterOp):
            env[op.result] = eval_scatter(op, env)
            continue
        if isinstance(op, ExternOp):
            outs = call_aten(op, [env[o] for o in op.operands])
        elif isinstance(op, (AtenOp, CallOp)):
            ext = extern(make_call(op))[0]
            ext.drop_all_references()  # a detached helper: leave no uses behind in the IR
            outs = call_aten(ext, [env[o] for o in op.operands])
        else:
            raise NotImplementedError(f"interpreter: {op.name}")
        for result, out in zip(op.results, outs):
            _check_type(op, result, out)
            env[result] = out.contiguous()
    raise AssertionError("function without return")


def _check_type(op: Operation, result: SSAValue, out: torch.Tensor) -> None:
    """The IR's declared type must be what torch computes (catches bad hand-written tests)."""
    typ = result.type
    assert isinstance(typ, TensorType)
    assert list(out.shape) == list(typ.get_shape()), f"{op.name}: torch gives shape {list(out.shape)}, IR says {typ}"
    assert out.dtype == torch_dtype(typ), f"{op.name}: torch gives {out.dtype}, IR says {typ}"
