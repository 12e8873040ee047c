"""Normalizations built of reductions: softmax, log_softmax, logsumexp, layer_norm, and the
softmax backwards.

With mlc's decomposition table these mostly arrive decomposed (`_softmax` into amax, sub,
exp, sum, div; `native_layer_norm` into var_mean and elementwise ops; batch and group norm,
rms_norm, normalize, `_log_softmax_backward_data`, `native_layer_norm_backward` likewise),
and the pieces lower through reductions.py. `_softmax_backward_data` is kept by the table (as
Inductor keeps it) and lowered here; the rest are lowered here too so that graphs traced
without the table (torch.export's default, hand-written IR) need no extern.

Each becomes its statistics as reductions over the normalized dims with keepdim (stored in
float32 for float16/bfloat16 inputs, the dtype torch's decompositions compute them in) and
one pointwise that loads them at `Axes.stat_index` -- the same ops, in the same order, as
the decomposition, so `--inline` and `--realize` see the same graph either way:

    _softmax(x)              m = max(x); s = sum(exp(x - m)); exp(x - m) / s
    _log_softmax(x)          m = max(x); s = sum(exp(x - m)); (x - m) - log(s)
    logsumexp(x)             m = max(x), m' = |m| == inf ? 0 : m; log(sum(exp(x - m'))) + m'
    native_layer_norm(x)     mean, rstd = welford(x) -> (mean, rsqrt(m2 / n + eps));
                             (x - mean) * rstd * w + b
    _softmax_backward_data   s = sum(g * y); g * y - y * s
    _log_softmax_backward_data  s = sum(g); g - exp(y) * s
"""

from __future__ import annotations

import math
from collections.abc import Callable

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from mlc.dialects.sym import tensor_type
from mlc.passes.lowering.body import Body, Value, make_pointwise
from mlc.passes.lowering.dtypes import dtype_of, is_float, storage_type
from mlc.passes.lowering.indexing import broadcast_index
from mlc.passes.lowering.reducer import Axes, Index, first, reduce_over, results_of
from mlc.passes.lowering.registry import Call, Lowered, register, shape


def upcast(dtype: str) -> str:
    """The dtype statistics of a `dtype` tensor are kept in (torch's opmath type)."""
    return "float32" if dtype in ("float16", "bfloat16") else dtype


def stat_type(axes: Axes, dtype: str) -> TensorType:
    """A keepdim-shaped statistic of `dtype`."""
    return tensor_type(storage_type(dtype), axes.kept_ranges)


Loader = Callable[[Body, Index], Value]


def _loader(tensor: SSAValue, dtype: str) -> Loader:
    """A function loading `tensor` at an index, in `dtype`."""
    return lambda b, index: b.cast(b.load(tensor, index), dtype)


def _axes(shape_: list[int], dims: list[int] | int, keepdim: bool) -> Axes | None:
    try:
        return Axes.of(shape_, dims, keepdim)
    except ValueError:
        return None


def _stat(call: Call, axes: Axes, kind: str, dtype: str, prologue: Loader) -> tuple[list[Operation], SSAValue] | None:
    """One keepdim statistic of `kind` over `axes` (a reduction, or a pointwise when small)."""
    keep = Axes(axes.shape, axes.dims, True)
    ops = reduce_over(call, keep, [kind], lambda b, index: [prologue(b, index)], first, [stat_type(keep, dtype)])
    if ops is None:
        return None
    return ops, results_of(ops)[0]


# -- softmax, log_softmax ---------------------------------------------------------------------


@register("_softmax", "_log_softmax")
def softmax(call: Call) -> Lowered | None:
    x, out = call["self"], dtype_of(call.result_type)
    if out is None or not is_float(out) or dtype_of(x.type) is None:
        return None
    acc = upcast(out)
    axes = _axes(shape(x), call["dim"], True)
    if axes is None:
        return None
    load_x = _loader(x, acc)
    maxed = _stat(call, axes, "max", acc, load_x)
    if maxed is None:
        return None
    max_ops, m = maxed

    def shifted(b: Body, index: Index) -> Value:
        return b.sub(load_x(b, index), b.load(m, axes.stat_index(index)))

    summed = _stat(call, axes, "sum", acc, lambda b, index: b.unary("exp", shifted(b, index)))
    if summed is None:
        return None
    sum_ops, s = summed

    def fn(b: Body) -> Value:
        z, total = shifted(b, b.vars), b.load(s, axes.stat_index(b.vars))
        if call.packet == "_softmax":
            return b.truediv(b.unary("exp", z), total)
        return b.sub(z, b.unary("log", total))

    out_op = make_pointwise(call, call.result_type, fn)
    return Lowered([*max_ops, *sum_ops, out_op], [out_op.result])


@register("logsumexp")
def logsumexp(call: Call) -> Lowered | None:
    x, out = call["self"], dtype_of(call.result_type)
    if out is None or not is_float(out) or dtype_of(x.type) is None:
        return None
    acc = upcast(out)
    axes = _axes(shape(x), call["dim"], call["keepdim"])
    if axes is None or axes.ranges != shape(call.results[0]):
        return None
    load_x = _loader(x, acc)
    maxed = _stat(call, axes, "max", acc, load_x)
    if maxed is None:
        return None
    max_ops, m = maxed

    def safe_max(b: Body, stat_index: Index) -> Value:
        """The max with infinities replaced by 0, so that a row of -inf gives -inf, not NaN."""
        v = b.load(m, stat_index)
        infinite = b.compare("eq", b.abs(v), b.constant(math.inf, acc))
        return b.select(infinite, b.constant(0.0, acc), v)

    def exp_shifted(b: Body, index: Index) -> list[Value]:
        return [b.unary("exp", b.sub(load_x(b, index), safe_max(b, axes.stat_index(index))))]

    sum_type = tensor_type(storage_type(acc), axes.ranges)
    sum_ops = reduce_over(call, axes, ["sum"], exp_shifted, first, [sum_type])
    if sum_ops is None:
        return None
    (s,) = results_of(sum_ops)

    def fn(b: Body) -> Value:
        return b.add(b.unary("log", b.load(s, b.vars)), safe_max(b, axes.result_stat_index(b.vars)))

    out_op = make_pointwise(call, call.result_type, fn)
    return Lowered([*max_ops, *sum_ops, out_op], [out_op.result])


# -- layer_norm -------------------------------------------------------------------------------


@register("native_layer_norm")
def native_layer_norm(call: Call) -> Lowered | None:
    """(out, mean, rstd): one welford with two results (mean, rsqrt(var + eps)), then one
    pointwise (x - mean) * rstd * weight + bias."""
    x, weight, bias, eps = call["input"], call["weight"], call["bias"], float(call["eps"])
    xs, out = shape(x), dtype_of(call.result_type)
    k = len(call["normalized_shape"])
    if out is None or not is_float(out) or k == 0 or k > len(xs):
        return None
    axes = Axes.of(xs, list(range(len(xs) - k, len(xs))), True)
    stat_types = [call.results[1].type, call.results[2].type]
    if any(shape(r) != axes.ranges for r in call.results[1:]):
        return None
    acc = upcast(out)
    load_x = _loader(x, acc)
    n = axes.numel

    def epilogue(b: Body, red: list[list[Value]]) -> list[Value]:
        mean_, m2, _ = red[0]
        var = b.truediv(m2, b.count(n, m2.dtype))
        return [mean_, b.unary("rsqrt", b.add(var, b.const_like(eps, var)))]

    stats = reduce_over(call, axes, ["welford"], lambda b, index: [load_x(b, index)], epilogue, stat_types)  # type: ignore[arg-type]
    if stats is None:
        return None
    mean_v, rstd_v = results_of(stats)

    def fn(b: Body) -> Value:
        index = b.vars
        stat_index = axes.stat_index(index)
        centered = b.sub(load_x(b, index), b.cast(b.load(mean_v, stat_index), acc))
        y = b.mul(centered, b.cast(b.load(rstd_v, stat_index), acc))
        trailing = index[len(xs) - k :]
        if weight is not None:
            y = b.mul(y, b.cast(b.load(weight, broadcast_index(trailing, shape(weight), xs[len(xs) - k :])), acc))
        if bias is not None:
            y = b.add(y, b.cast(b.load(bias, broadcast_index(trailing, shape(bias), xs[len(xs) - k :])), acc))
        return y

    out_op = make_pointwise(call, call.result_type, fn)
    return Lowered([*stats, out_op], [out_op.result, mean_v, rstd_v])


# -- softmax backwards ------------------------------------------------------------------------


def _softmax_grad(call: Call, log: bool) -> Lowered | None:
    g, y, out = call["grad_output"], call["output"], dtype_of(call.result_type)
    gd, yd = dtype_of(g.type), dtype_of(y.type)
    if out is None or gd is None or yd is None or not is_float(gd):
        return None
    if shape(g) != shape(y) or shape(g) != shape(call.results[0]):
        return None
    acc = upcast(gd)
    axes = _axes(shape(g), call["dim"], True)
    if axes is None:
        return None
    load_g, load_y = _loader(g, acc), _loader(y, acc)
    if log:
        summed = _stat(call, axes, "sum", acc, load_g)
    else:
        summed = _stat(call, axes, "sum", acc, lambda b, index: b.mul(load_g(b, index), load_y(b, index)))
    if summed is None:
        return None
    sum_ops, s = summed

    def fn(b: Body) -> Value:
        index = b.vars
        gv, yv, sv = load_g(b, index), load_y(b, index), b.load(s, axes.stat_index(index))
        if log:
            return b.sub(gv, b.mul(b.unary("exp", yv), sv))
        return b.sub(b.mul(gv, yv), b.mul(yv, sv))

    out_op = make_pointwise(call, call.result_type, fn)
    return Lowered([*sum_ops, out_op], [out_op.result])


@register("_softmax_backward_data")
def softmax_backward(call: Call) -> Lowered | None:
    """g * y - y * sum(g * y) (Inductor's decomposition), in the grad's opmath dtype."""
    return _softmax_grad(call, log=False)


@register("_log_softmax_backward_data")
def log_softmax_backward(call: Call) -> Lowered | None:
    """g - exp(y) * sum(g)."""
    return _softmax_grad(call, log=True)

