"""Activation functions and their simple backwards, composed from arith/math.

Formulas follow torch's CPU kernels so that eager results are matched (gelu's erf form uses
x * 0.5 * (1 + erf(x / sqrt(2))); softplus returns x above the threshold; and so on). Integer
inputs keep their dtype where torch allows it (relu, hardtanh); the float-only functions
compute integers in float32.
"""

from __future__ import annotations

import math

from xdsl.ir import Operation

from mlc.passes.lowering.body import Body, Value, elementwise, promote
from mlc.passes.lowering.registry import Call, register

SQRT1_2 = math.sqrt(0.5)
GELU_TANH_BETA = math.sqrt(2.0 / math.pi)
GELU_TANH_KAPPA = 0.044715


def _c(b: Body, value: float, like: Value) -> Value:
    return b.constant(value, like.dtype)


@register("relu")
def relu(call: Call) -> list[Operation] | None:
    """max(x, 0): NaN stays NaN, as in torch."""
    dtype = promote(call["self"])
    if dtype is None:
        return None
    return elementwise(call, [call["self"]], dtype, lambda b, x: b.maximum(x, _c(b, 0, x)))


def _gelu(b: Body, x: Value, approximate: str) -> Value:
    half, one = _c(b, 0.5, x), _c(b, 1.0, x)
    if approximate == "tanh":
        cube = b.mul(b.mul(x, x), x)
        inner = b.mul(_c(b, GELU_TANH_BETA, x), b.add(x, b.mul(_c(b, GELU_TANH_KAPPA, x), cube)))
        return b.mul(b.mul(half, x), b.add(one, b.unary("tanh", inner)))
    cdf = b.add(one, b.unary("erf", b.mul(x, _c(b, SQRT1_2, x))))
    return b.mul(b.mul(x, half), cdf)


@register("gelu")
def gelu(call: Call) -> list[Operation] | None:
    dtype = promote(call["self"], kind="int_to_float")
    approximate = call["approximate"]
    if dtype is None or approximate not in ("none", "tanh"):
        return None
    return elementwise(call, [call["self"]], dtype, lambda b, x: _gelu(b, x, approximate))


@register("silu")
def silu(call: Call) -> list[Operation] | None:
    """x * sigmoid(x), written as x / (1 + exp(-x))."""
    dtype = promote(call["self"], kind="int_to_float")
    if dtype is None:
        return None

    def fn(b: Body, x: Value) -> Value:
        one = _c(b, 1.0, x)
        return b.truediv(x, b.add(one, b.unary("exp", b.neg(x))))

    return elementwise(call, [call["self"]], dtype, fn)


@register("mish")
def mish(call: Call) -> list[Operation] | None:
    """x * tanh(softplus(x))."""
    dtype = promote(call["self"], kind="int_to_float")
    if dtype is None:
        return None
    return elementwise(
        call, [call["self"]], dtype, lambda b, x: b.mul(x, b.unary("tanh", b.unary("log1p", b.unary("exp", x))))
    )


@register("elu")
def elu(call: Call) -> list[Operation] | None:
    """x > 0 ? scale * x : scale * alpha * expm1(x * input_scale)."""
    dtype = promote(call["self"], kind="int_to_float")
    alpha, scale, input_scale = call["alpha"], call["scale"], call["input_scale"]
    if dtype is None:
        return None

    def fn(b: Body, x: Value) -> Value:
        negative = b.mul(b.unary("expm1", b.mul(x, _c(b, input_scale, x))), _c(b, alpha * scale, x))
        positive = b.mul(x, _c(b, scale, x))
        return b.select(b.compare("gt", x, _c(b, 0, x)), positive, negative)

    return elementwise(call, [call["self"]], dtype, fn)


@register("leaky_relu")
def leaky_relu(call: Call) -> list[Operation] | None:
    dtype = promote(call["self"], kind="int_to_float")
    slope = call["negative_slope"]
    if dtype is None:
        return None

    def fn(b: Body, x: Value) -> Value:
        return b.select(b.compare("gt", x, _c(b, 0, x)), x, b.mul(x, _c(b, slope, x)))

    return elementwise(call, [call["self"]], dtype, fn)


@register("hardtanh")
def hardtanh(call: Call) -> list[Operation] | None:
    dtype = promote(call["self"])
    low, high = call["min_val"], call["max_val"]
    if dtype is None:
        return None
    return elementwise(call, [call["self"]], dtype, lambda b, x: b.minimum(b.maximum(x, _c(b, low, x)), _c(b, high, x)))


@register("softplus")
def softplus(call: Call) -> list[Operation] | None:
    """x * beta > threshold ? x : log1p(exp(x * beta)) / beta."""
    dtype = promote(call["self"], kind="int_to_float")
    beta, threshold = call["beta"], call["threshold"]
    if dtype is None:
        return None

    def fn(b: Body, x: Value) -> Value:
        scaled = b.mul(x, _c(b, beta, x))
        soft = b.truediv(b.unary("log1p", b.unary("exp", scaled)), _c(b, beta, x))
        return b.select(b.compare("gt", scaled, _c(b, threshold, x)), x, soft)

    return elementwise(call, [call["self"]], dtype, fn)


def _relu6_of_x_plus_3(b: Body, x: Value) -> Value:
    shifted = b.add(x, _c(b, 3.0, x))
    return b.minimum(b.maximum(shifted, _c(b, 0.0, x)), _c(b, 6.0, x))


@register("hardsigmoid", "hardswish")
def hard_activations(call: Call) -> list[Operation] | None:
    """hardsigmoid = relu6(x + 3) / 6; hardswish = x * relu6(x + 3) / 6."""
    dtype = promote(call["self"], kind="int_to_float")
    if dtype is None:
        return None
    swish = call.packet == "hardswish"

    def fn(b: Body, x: Value) -> Value:
        gate = _relu6_of_x_plus_3(b, x)
        return b.truediv(b.mul(x, gate) if swish else gate, _c(b, 6.0, x))

    return elementwise(call, [call["self"]], dtype, fn)


# -- backwards ----------------------------------------------------------------------------------


@register("threshold_backward")
def threshold_backward(call: Call) -> list[Operation] | None:
    """self <= threshold ? 0 : grad."""
    grad, x, threshold = call["grad_output"], call["self"], call["threshold"]
    dtype = promote(grad, x)
    if dtype is None:
        return None

    def fn(b: Body, g: Value, x: Value) -> Value:
        return b.select(b.compare("le", x, _c(b, threshold, x)), _c(b, 0, g), g)

    return elementwise(call, [grad, x], dtype, fn)


@register("sigmoid_backward", "tanh_backward")
def sigmoid_tanh_backward(call: Call) -> list[Operation] | None:
    """sigmoid: grad * y * (1 - y); tanh: grad * (1 - y * y), with y the forward output."""
    grad, y = call["grad_output"], call["output"]
    dtype = promote(grad, y)
    if dtype is None:
        return None
    sigmoid = call.packet == "sigmoid_backward"

    def fn(b: Body, g: Value, y: Value) -> Value:
        one = _c(b, 1.0, y)
        if sigmoid:
            return b.mul(g, b.mul(b.sub(one, y), y))
        return b.mul(g, b.sub(one, b.mul(y, y)))

    return elementwise(call, [grad, y], dtype, fn)
