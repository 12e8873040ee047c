"""Reductions: sum, prod, amax/amin, max/min (with indices), argmax/argmin, any/all, mean,
var/std/var_mean -- each one `Reducer` (see reducer.py for the forms it takes).

The result dtype is read from the op's result type (the importer records what torch chose:
sum/prod of integers and bools give int64, `dtype=` casts before reducing, any/all keep
uint8 as uint8 and give bool otherwise, mean/var keep the float dtype). Values are widened
to the result's compute type before the reduce, so float16/bfloat16 accumulate in f32 and
are narrowed once, when the epilogue's value is yielded.

Choices:
  * all = not any(not x): one boolean kind (`any`) for downstream to implement, the same IR
    as the decomposition table gives for `all` (which it decomposes that way), and no
    question of what min over i1 means (as a signed 1-bit integer, true is -1, so a signed
    min over i1 would be `any`).
  * max/min/argmax/argmin of uint8 and bool reduce the value widened to int32 (signed
    comparisons give the unsigned order), and narrow the value back in the epilogue.
  * mean = sum / n and var = m2 / max(0, n - correction) with n the static reduction numel,
    in the epilogue (Inductor's `var_mean_welford_`); std = sqrt(var); var_mean yields
    (var, mean) from one welford.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import sympy
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from mlc.passes.lowering.body import Body, Value
from mlc.passes.lowering.dtypes import dtype_of, is_float, is_unsigned
from mlc.passes.lowering.reducer import Axes, first, reduce_over
from mlc.passes.lowering.registry import Call, register, shape

Epilogue = Callable[[Body, list[list[Value]]], Sequence[Value]]


def axes_of(call: Call, x: SSAValue, dims: Sequence[int] | int | None, keepdim: bool, empty_means_all: bool = True) -> Axes | None:
    """The reduction's axes, or None when they are out of range or do not give the op's
    result shape (the op then stays an extern call, which reports what is wrong)."""
    try:
        axes = Axes.of(shape(x), dims, bool(keepdim), empty_means_all)
    except ValueError:
        return None
    if any(axes.ranges != shape(r) for r in call.results):
        return None
    return axes


def reduce_tensor(
    call: Call,
    x: SSAValue,
    axes: Axes,
    kinds: list[str],
    prologue: Callable[[Body, Value], Sequence[Value]],
    epilogue: Epilogue,
    result_types: Sequence[TensorType] | None = None,
) -> list[Operation] | None:
    """A reduction of `x` over `axes`: `prologue(b, element)` gives the values `kinds`
    reduce, `epilogue(b, reduced)` one value per result (the op's results by default)."""
    types = list(result_types) if result_types is not None else [r.type for r in call.results]
    return reduce_over(call, axes, kinds, lambda b, index: prologue(b, b.load(x, index)), epilogue, types)  # type: ignore[arg-type]


def _result_dtype(call: Call, k: int = 0) -> str | None:
    return dtype_of(call.results[k].type)


# -- sum, prod --------------------------------------------------------------------------------


@register("sum.dim_IntList", "sum", "prod", "prod.dim_int")
def sum_prod(call: Call) -> list[Operation] | None:
    x, out = call["self"], _result_dtype(call)
    axes = axes_of(call, x, call.args.get("dim"), call.get("keepdim", False))
    if out is None or axes is None:
        return None
    kind = call.packet
    if out == "bool":
        if kind == "prod":
            return None  # prod(dtype=bool) is all(); never produced by torch's frontends
        return reduce_tensor(call, x, axes, ["any"], lambda b, v: [b.truth(v)], first)
    return reduce_tensor(call, x, axes, [kind], lambda b, v: [b.cast(v, out)], first)


# -- max, min ---------------------------------------------------------------------------------


def _ordered(b: Body, v: Value) -> Value:
    """A value whose signed order is torch's order of v (uint8 and bool widen to int32)."""
    return b.cast(v, "int32") if is_unsigned(v.dtype) else v


@register("amax", "amin")
def amax_amin(call: Call) -> list[Operation] | None:
    x = call["self"]
    axes = axes_of(call, x, call["dim"], call["keepdim"])
    if axes is None:
        return None
    kind = "max" if call.packet == "amax" else "min"
    return reduce_tensor(call, x, axes, [kind], lambda b, v: [_ordered(b, v)], first)


@register("max", "min")
def max_min_all(call: Call) -> list[Operation] | None:
    x = call["self"]
    axes = axes_of(call, x, None, False)
    if axes is None:
        return None
    return reduce_tensor(call, x, axes, [call.packet], lambda b, v: [_ordered(b, v)], first)


@register("max.dim", "min.dim")
def max_min_dim(call: Call) -> list[Operation] | None:
    """One reduction with two results: the extreme and its (first) index, from one load."""
    x = call["self"]
    axes = axes_of(call, x, call["dim"], call["keepdim"])
    if axes is None:
        return None
    kind = call.packet

    def prologue(b: Body, v: Value) -> list[Value]:
        v = _ordered(b, v)
        return [v, v]

    return reduce_tensor(
        call, x, axes, [kind, "arg" + kind], prologue, lambda b, red: [red[0][0], red[1][0]]
    )


@register("argmax", "argmin")
def argmax_argmin(call: Call) -> list[Operation] | None:
    """dim=None: the position in the row-major flattening of the whole tensor."""
    x = call["self"]
    axes = axes_of(call, x, call["dim"], call["keepdim"])
    if axes is None:
        return None
    return reduce_tensor(call, x, axes, [call.packet], lambda b, v: [_ordered(b, v)], first)


# -- any, all ---------------------------------------------------------------------------------


@register("any.dim", "any.dims", "any")
def any_(call: Call) -> list[Operation] | None:
    x = call["self"]
    # any.dims(dim=[]) reduces nothing (each element's truth); dim=None reduces everything.
    axes = axes_of(call, x, call.args.get("dim"), call.get("keepdim", False), empty_means_all=False)
    if axes is None:
        return None
    return reduce_tensor(call, x, axes, ["any"], lambda b, v: [b.truth(v)], first)


@register("all.dim", "all")
def all_(call: Call) -> list[Operation] | None:
    """not any(not x) (see the module docstring)."""
    x = call["self"]
    axes = axes_of(call, x, call.args.get("dim"), call.get("keepdim", False))
    if axes is None:
        return None
    return reduce_tensor(
        call, x, axes, ["any"], lambda b, v: [b.logical_not(v)], lambda b, red: [b.logical_not(red[0][0])]
    )


# -- mean, var, std ---------------------------------------------------------------------------


@register("mean.dim", "mean")
def mean(call: Call) -> list[Operation] | None:
    x, out = call["self"], _result_dtype(call)
    axes = axes_of(call, x, call.args.get("dim"), call.get("keepdim", False))
    if out is None or axes is None or not is_float(out):
        return None
    n = axes.numel

    def epilogue(b: Body, red: list[list[Value]]) -> list[Value]:
        (total,) = red[0]
        return [b.truediv(total, b.count(n, out))]

    return reduce_tensor(call, x, axes, ["sum"], lambda b, v: [b.cast(v, out)], epilogue)


def variance_epilogue(b: Body, m2: Value, n: int | sympy.Expr, correction: float) -> Value:
    """m2 / max(0, n - correction): NaN or inf when there are too few elements, as in torch."""
    if isinstance(n, int):
        return b.truediv(m2, b.const_like(max(0.0, n - correction), m2))
    dof = b.sub(b.count(n, m2.dtype), b.const_like(correction, m2))
    return b.truediv(m2, b.maximum(dof, b.const_like(0.0, m2)))


@register("var.correction", "std.correction", "var_mean.correction")
def var_std(call: Call) -> list[Operation] | None:
    x, out = call["self"], _result_dtype(call)
    axes = axes_of(call, x, call.args.get("dim"), call["keepdim"])
    if out is None or axes is None or not is_float(out) or dtype_of(x.type) != out:
        return None
    correction = call.args.get("correction")
    correction = 1.0 if correction is None else float(correction)
    n = axes.numel

    def epilogue(b: Body, red: list[list[Value]]) -> list[Value]:
        mean_, m2, _ = red[0]
        var = variance_epilogue(b, m2, n, correction)
        if call.packet == "std":
            return [b.unary("sqrt", var)]
        if call.packet == "var_mean":
            return [var, mean_]
        return [var]

    return reduce_tensor(call, x, axes, ["welford"], lambda b, v: [b.cast(v, out)], epilogue)
