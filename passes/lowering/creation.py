"""Copies, casts, fills and ranges: ops whose element is a load, a constant or an index.

The result dtype is read from the op's result type (the importer records what torch chose,
including a `dtype=None` default), so these rules need no promotion of their own.
"""

from __future__ import annotations

from xdsl.ir import Operation

from mlc.passes.lowering.body import Body, Value, elementwise, load_as_is, make_pointwise
from mlc.passes.lowering.dtypes import dtype_of, is_float
from mlc.passes.lowering.registry import Call, is_tensor, register


def _result_dtype(call: Call) -> str | None:
    return dtype_of(call.result_type)


@register("clone", "alias", "lift_fresh_copy")
def copy(call: Call) -> list[Operation] | None:
    return [load_as_is(call, call["self"], lambda index: index)]


@register("_to_copy")
def to_copy(call: Call) -> list[Operation] | None:
    """A dtype cast (device, layout and memory format are realize's business)."""
    src, dst = dtype_of(call["self"].type), _result_dtype(call)
    if src is None or dst is None:
        return None
    if src == dst:
        return copy(call)
    return elementwise(call, [call["self"]], [None], lambda b, x: b.convert(x, dst))


def _fill(call: Call, value: bool | int | float) -> list[Operation] | None:
    dtype = _result_dtype(call)
    if dtype is None:
        return None
    return [make_pointwise(call, call.result_type, lambda b: b.constant(value, dtype))]


@register("full", "full_like", "fill.Scalar")
def full(call: Call) -> list[Operation] | None:
    value = call["fill_value"] if "fill_value" in call.args else call["value"]
    return _fill(call, value)


@register("scalar_tensor")
def scalar_tensor(call: Call) -> list[Operation] | None:
    return _fill(call, call["s"])


@register("zeros_like", "empty_like")
def zeros_like(call: Call) -> list[Operation] | None:
    """empty_like is filled with zeros: any content is correct, zeros are deterministic."""
    return _fill(call, 0)


@register("ones_like")
def ones_like(call: Call) -> list[Operation] | None:
    return _fill(call, 1)


@register("arange", "arange.start", "arange.start_step")
def arange(call: Call) -> list[Operation] | None:
    """start + step * i0: an exact index expression for integers; for float start or step the
    arithmetic is done in float64 and rounded once, as torch's CPU kernel does."""
    dtype = _result_dtype(call)
    start, step = call.args.get("start", 0), call.args.get("step", 1)
    if dtype is None or any(isinstance(v, (bool, str)) or v is None for v in (start, step)):
        return None

    def fn(b: Body) -> Value:
        (i0,) = b.vars
        if isinstance(start, int) and isinstance(step, int):
            return b.index(step * i0 + start)
        position = b.cast(b.index(i0), "float64")
        scaled = b.mul(position, b.constant(float(step), "float64"))
        return b.add(scaled, b.constant(float(start), "float64"))

    return [make_pointwise(call, call.result_type, fn)]


@register("masked_fill.Scalar", "masked_fill.Tensor")
def masked_fill(call: Call) -> list[Operation] | None:
    """mask ? value : self, with value converted to self's dtype."""
    x, mask, value = call["self"], call["mask"], call["value"]
    dtype = dtype_of(x.type)
    if dtype is None or (is_tensor(value) and dtype_of(value.type) is None):
        return None
    if not is_tensor(value) and not is_float(dtype) and isinstance(value, float):
        return None  # torch refuses to fill an integer tensor with a float; leave it to aten
    return elementwise(call, [mask, value, x], ["bool", dtype, dtype], lambda b, m, v, x: b.select(m, v, x))

