"""Elementwise arithmetic, comparisons, logic and float functions.

Each rule computes torch's promoted dtype, then builds one `loops.pointwise` whose body loads
every tensor operand with broadcasting. A rule returns None for a case it does not lower
(float remainder, integer pow with a tensor exponent, dtypes mlc does not compute in), which
makes the op an extern call, as Inductor falls back to aten for the same cases.
"""

from __future__ import annotations

from xdsl.ir import Operation

from mlc.passes.lowering.body import Body, Value, elementwise, load_as_is, promote
from mlc.passes.lowering.dtypes import is_float
from mlc.passes.lowering.registry import Call, is_tensor, register
from mlc.passes.lowering.scalar import UNARY_FLOAT


def identity(call: Call) -> list[Operation]:
    """A copy of `self` (clone, and float-only ops applied to integers)."""
    return [load_as_is(call, call["self"], lambda index: index)]


# -- add, sub, mul, div ---------------------------------------------------------------------------


def _scaled(b: Body, v: Value, alpha: bool | int | float) -> Value:
    return v if alpha == 1 else b.mul(v, b.constant(alpha, v.dtype))


@register("add.Tensor", "add.Scalar", "sub.Tensor", "sub.Scalar")
def add_sub(call: Call) -> list[Operation] | None:
    x, y, alpha = call["self"], call["other"], call["alpha"]
    dtype = promote(x, y)
    if dtype is None:
        return None
    sub = call.packet == "sub"
    return elementwise(call, [x, y], dtype, lambda b, x, y: (b.sub if sub else b.add)(x, _scaled(b, y, alpha)))


@register("rsub.Tensor", "rsub.Scalar")
def rsub(call: Call) -> list[Operation] | None:
    x, y, alpha = call["self"], call["other"], call["alpha"]
    dtype = promote(x, y)
    if dtype is None:
        return None
    return elementwise(call, [x, y], dtype, lambda b, x, y: b.sub(y, _scaled(b, x, alpha)))


@register("mul.Tensor", "mul.Scalar")
def mul(call: Call) -> list[Operation] | None:
    x, y = call["self"], call["other"]
    dtype = promote(x, y)
    return None if dtype is None else elementwise(call, [x, y], dtype, Body.mul)


@register("div.Tensor", "div.Scalar", "true_divide.Tensor", "div.Tensor_mode", "div.Scalar_mode", "floor_divide")
def div(call: Call) -> list[Operation] | None:
    x, y = call["self"], call["other"]
    mode = "floor" if call.packet == "floor_divide" else call.args.get("rounding_mode")
    if mode is None:
        dtype = promote(x, y, kind="int_to_float")
        return None if dtype is None else elementwise(call, [x, y], dtype, Body.truediv)
    dtype = promote(x, y)  # rounding divisions keep integer dtypes
    if dtype is None:
        return None
    return elementwise(call, [x, y], dtype, Body.floordiv if mode == "floor" else Body.truncdiv)


@register("remainder.Tensor", "remainder.Scalar", "fmod.Tensor", "fmod.Scalar")
def remainder(call: Call) -> list[Operation] | None:
    x, y = call["self"], call["other"]
    dtype = promote(x, y)
    if dtype is None or is_float(dtype) or dtype == "bool":
        return None  # arith has no float remainder; aten computes it exactly
    fn = Body.int_remainder if call.packet == "remainder" else Body.int_fmod
    return elementwise(call, [x, y], dtype, fn)


# -- unary ------------------------------------------------------------------------------------


@register("neg", "abs")
def neg_abs(call: Call) -> list[Operation] | None:
    dtype = promote(call["self"])
    if dtype is None:
        return None
    return elementwise(call, [call["self"]], dtype, Body.neg if call.packet == "neg" else Body.abs)


_FLOAT_FUNCTIONS = (
    "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh", "erf",
)
assert set(_FLOAT_FUNCTIONS) <= set(UNARY_FLOAT)


@register(*_FLOAT_FUNCTIONS)
def float_function(call: Call) -> list[Operation] | None:
    """exp, log, sqrt, sin, ...: integers and bools are computed as float32."""
    dtype = promote(call["self"], kind="int_to_float")
    if dtype is None:
        return None
    return elementwise(call, [call["self"]], dtype, lambda b, x: b.unary(call.packet, x))


@register("floor", "ceil", "round", "trunc")
def rounding(call: Call) -> list[Operation] | None:
    dtype = promote(call["self"])
    if dtype is None:
        return None
    if not is_float(dtype):
        return identity(call)  # integers are already whole
    return elementwise(call, [call["self"]], dtype, lambda b, x: b.unary(call.packet, x))


@register("reciprocal", "sigmoid")
def reciprocal_sigmoid(call: Call) -> list[Operation] | None:
    dtype = promote(call["self"], kind="int_to_float")
    if dtype is None:
        return None
    return elementwise(call, [call["self"]], dtype, Body.reciprocal if call.packet == "reciprocal" else Body.sigmoid)


@register("sign")
def sign(call: Call) -> list[Operation] | None:
    dtype = promote(call["self"])
    if dtype is None:
        return None
    return identity(call) if dtype == "bool" else elementwise(call, [call["self"]], dtype, Body.sign)


@register("isnan", "isinf")
def isnan_isinf(call: Call) -> list[Operation] | None:
    dtype = promote(call["self"])
    if dtype is None:
        return None

    def fn(b: Body, x: Value) -> Value:
        if not x.is_float:
            return b.constant(False, "bool")  # integers are never NaN or infinite
        if call.packet == "isnan":
            return b.isnan(x)
        return b.compare("eq", b.abs(x), b.constant(float("inf"), x.dtype))

    return elementwise(call, [call["self"]], dtype, fn)


# -- pow --------------------------------------------------------------------------------------


def _int_power(b: Body, x: Value, n: int) -> Value:
    """x**n by repeated squaring (Inductor's pow_recursive); negative n on floats only."""
    if n < 0:
        return _int_power(b, b.reciprocal(x), -n)
    if n == 0:
        return b.const_like(1, x)
    if n == 1:
        return x
    half = _int_power(b, x, n // 2)
    square = b.mul(half, half)
    return b.mul(square, x) if n % 2 else square


@register("pow.Tensor_Scalar", "pow.Tensor_Tensor", "pow.Scalar")
def pow_(call: Call) -> list[Operation] | None:
    base, exponent = call["self"], call["exponent"]
    dtype = promote(base, exponent)
    if dtype is None:
        return None
    if isinstance(exponent, float) and exponent.is_integer():
        exponent = int(exponent)
    if isinstance(exponent, int) and not isinstance(exponent, bool) and is_tensor(base):
        small = -32 < exponent < 32 and (is_float(dtype) or exponent >= 0)
        if small or (not is_float(dtype) and exponent >= 0):
            return elementwise(call, [base], dtype, lambda b, x: _int_power(b, x, exponent))
    if exponent == 0.5 and is_tensor(base) and is_float(dtype):
        return elementwise(call, [base], dtype, lambda b, x: b.unary("sqrt", x))
    if not is_float(dtype):
        return None  # integer pow with a tensor exponent: aten computes it
    if not is_tensor(base) and base == 2:
        return elementwise(call, [exponent], dtype, lambda b, y: b.unary("exp2", y))
    return elementwise(call, [base, exponent], dtype, Body.powf)


# -- comparisons, min/max, where, clamp ----------------------------------------------------------


@register(*(f"{c}.{k}" for c in ("eq", "ne", "lt", "le", "gt", "ge") for k in ("Tensor", "Scalar")))
def compare(call: Call) -> list[Operation] | None:
    x, y = call["self"], call["other"]
    dtype = promote(x, y)
    if dtype is None:
        return None
    return elementwise(call, [x, y], dtype, lambda b, x, y: b.compare(call.packet, x, y))


@register("maximum", "minimum")
def maximum_minimum(call: Call) -> list[Operation] | None:
    x, y = call["self"], call["other"]
    dtype = promote(x, y)
    if dtype is None:
        return None
    return elementwise(call, [x, y], dtype, Body.maximum if call.packet == "maximum" else Body.minimum)


@register("where.self")
def where(call: Call) -> list[Operation] | None:
    cond, x, y = call["condition"], call["self"], call["other"]
    dtype = promote(x, y)
    if dtype is None:
        return None
    return elementwise(call, [cond, x, y], ["bool", dtype, dtype], lambda b, c, x, y: b.select(c, x, y))


def _clamp(b: Body, x: Value, low: Value | None, high: Value | None) -> Value:
    """min(max(x, low), high): maximumf/minimumf keep NaN inputs NaN, as torch.clamp does."""
    if low is not None:
        x = b.maximum(x, low)
    if high is not None:
        x = b.minimum(x, high)
    return x


@register("clamp", "clamp.Tensor", "clamp_min", "clamp_max")
def clamp(call: Call) -> list[Operation] | None:
    x, low, high = call["self"], call.args.get("min"), call.args.get("max")
    dtype = promote(x, low, high)
    if dtype is None:
        return None
    return elementwise(call, [x, low, high], dtype, _clamp)


# -- logic ------------------------------------------------------------------------------------


@register("logical_and", "logical_or", "logical_xor")
def logical(call: Call) -> list[Operation] | None:
    x, y = call["self"], call["other"]
    if promote(x, y) is None:
        return None
    how = call.packet.removeprefix("logical_")
    fn = {"and": Body.logical_and, "or": Body.logical_or, "xor": Body.logical_xor}[how]
    return elementwise(call, [x, y], [None, None], fn)


@register("logical_not")
def logical_not(call: Call) -> list[Operation] | None:
    if promote(call["self"]) is None:
        return None
    return elementwise(call, [call["self"]], [None], Body.logical_not)


@register(*(f"bitwise_{h}.{k}" for h in ("and", "or", "xor") for k in ("Tensor", "Scalar")))
def bitwise(call: Call) -> list[Operation] | None:
    x, y = call["self"], call["other"]
    dtype = promote(x, y)
    if dtype is None or is_float(dtype):
        return None
    how = call.packet.removeprefix("bitwise_")
    return elementwise(call, [x, y], dtype, lambda b, x, y: b.bitwise(how, x, y))


@register("bitwise_not")
def bitwise_not(call: Call) -> list[Operation] | None:
    dtype = promote(call["self"])
    if dtype is None or is_float(dtype):
        return None
    return elementwise(call, [call["self"]], dtype, Body.bitwise_not)

