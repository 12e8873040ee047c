"""What Triton's interpreter needs to run mlc's kernels as the GPU does (`TRITON_INTERPRET=1`).

`codegen/triton_helpers.py` imports this only under the interpreter:

* `InterpretedLibdevice`: libdevice's functions computed by numpy on the tiles' data (the
  interpreter cannot run libdevice's extern calls).
* `interpreter_debug`: the interpreter ignores `@triton.jit(debug=True)`; a launch of a kernel
  that checks its indices turns its builder's debug (and overflow checks) on for that launch.
* `patch_interpreter`: a loop up to a scalar argument (`range(0, r0_numel, R0_BLOCK)` over a
  symbolic size) works (`_patch_interpreter_index`); `tl.reduce` combines a tile's lanes as a
  tree, as the GPU does, not left to right (`_tree_reduce`); `tl.dot` of bfloat16 tiles
  multiplies their values, not their bits (`_patch_interpreter_bf16_dot`); integer arithmetic skips the
  overflow checks whose asserts the interpreter drops (`_skip_discarded_overflow_checks`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import triton.language as tl

@contextmanager
def interpreter_debug(debug: bool) -> Iterator[None]:
    """Triton's interpreter ignores `@triton.jit(debug=True)`: it runs `tl.device_assert` (and
    its int32 overflow checks) only while its builder's options say debug. Set them for one
    launch of a kernel that checks its indices, and put them back."""
    if not debug:
        yield
        return
    from triton.runtime import interpreter

    builder = interpreter.interpreter_builder
    saved = builder.options
    builder.options = dataclasses.replace(saved, debug=True, sanitize_overflow=True)
    try:
        yield
    finally:
        builder.options = saved


def _np_dtype(dtype: tl.dtype) -> np.dtype:
    from triton.runtime.interpreter import _get_np_dtype

    return _get_np_dtype(dtype)


class InterpretedLibdevice:
    """libdevice for Triton's interpreter: each function applies numpy to the tiles' data.

    Float inputs are computed in float64 and rounded once to the input's type, so results are
    at least as accurate as CUDA's libdevice. bfloat16 tiles (stored as raw uint16 by the
    interpreter) are not supported: kernels compute 16-bit floats in float32, as Inductor's do.
    """

    @staticmethod
    def _apply(np_fn, args, result: tl.dtype | None = None):
        from triton.runtime.interpreter import TensorHandle

        tiles = [a for a in args if isinstance(a, tl.core.tensor)]
        if not tiles:
            raise TypeError("libdevice call without a tensor argument")
        ref = tiles[0].dtype.scalar
        if ref == tl.bfloat16:
            raise TypeError("libdevice under the interpreter: compute bfloat16 in float32")
        data = []
        for a in args:
            value = a.handle.data if isinstance(a, tl.core.tensor) else np.asarray(a)
            if value.dtype.kind == "f":
                value = value.astype(np.float64)
            data.append(value)
        with np.errstate(all="ignore"):  # inf/nan results are values, as on the GPU
            out = np.asarray(np_fn(*data))
        dtype = result if result is not None else ref
        out = out.astype(_np_dtype(dtype))
        ty = tl.block_type(dtype, list(out.shape)) if out.shape else dtype
        return tl.core.tensor(TensorHandle(out, dtype), ty)

    def __getattr__(self, name: str):
        if name in _UNARY:
            return lambda x: self._apply(_UNARY[name], [x])
        if name in _BINARY:
            return lambda x, y: self._apply(_BINARY[name], [x, y])
        if name in _PREDICATES:
            return lambda x: self._apply(_PREDICATES[name], [x], tl.int1)
        raise AttributeError(f"libdevice.{name} is not available under Triton's interpreter")


def _erf(x):
    import math as _m

    return np.vectorize(_m.erf, otypes=[np.float64])(x)


def _lgamma(x):
    import math as _m

    return np.vectorize(lambda v: _m.lgamma(v) if np.isfinite(v) and v != 0 else np.inf, otypes=[np.float64])(x)


_UNARY = {
    "abs": np.abs, "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log,
    "log2": np.log2, "log10": np.log10, "log1p": np.log1p, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x), "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
    "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "erf": _erf, "lgamma": _lgamma, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
    "nearbyint": np.rint, "rint": np.rint, "round": np.round,
}
_BINARY = {
    "pow": np.power, "fmod": np.fmod, "atan2": np.arctan2, "hypot": np.hypot,
    "copysign": np.copysign, "nextafter": np.nextafter, "fmax": np.fmax, "fmin": np.fmin,
    "div_rn": np.divide,  # in float64, rounded once: the correctly rounded f32 quotient
}
_PREDICATES = {"isnan": np.isnan, "isinf": np.isinf, "isfinited": np.isfinite, "signbit": np.signbit}


def _patch_interpreter_index() -> None:
    """Triton's interpreter holds a scalar argument as a 1-element array and converts it to a
    Python int with `int(array)`, which numpy 2.4 refuses for arrays of one dim: a kernel
    looping `range(0, r0_numel, R0_BLOCK)` up to a symbolic size would fail. Convert through
    the array's one element instead."""
    from triton.runtime import interpreter

    patch = interpreter._patch_lang_tensor

    def patched(tensor, scope):
        patch(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.reshape(-1)[0]))

    interpreter._patch_lang_tensor = patched


def _tree_reduce(op, tiles: tuple) -> list:
    """`tl.reduce` with a combine function under Triton's interpreter, in the GPU's order: a
    tree. The interpreter's own `ReduceOps.generic_reduce` folds the axis left to right, one
    element per combine call, so a sum's rounding error grows with the axis (each lane's partial
    of a 2048-lane row added to one running total: the float32 mean of 4097 values near 1e4 was
    1.4e-2 off, eager 7.6e-4, issue 43), and a 2048-lane tile took 2048 calls. The GPU combines
    lanes pairwise (shuffles within a warp, then across warps), as this does: log2(n) calls on
    whole tiles. Each level combines the axis's first half (first operands) with its second,
    so a combine keeping the first of equal values (maximum, max_with_index) keeps the first.
    `op`: the interpreter's `ReduceOps` (axis, combine_fn, keep_dims) this replaces the method of."""
    original_axis = op.axis
    tiles, axis = op.unravel(tiles, op.axis)
    dtypes = [t.dtype for t in tiles]
    data = [t.handle.data for t in tiles]
    while data[0].shape[axis] > 1:
        data = _combine_halves(op, data, dtypes, axis)
    return [op.to_tensor(_reduced_shape(d, axis, original_axis, op.keep_dims), ty) for d, ty in zip(data, dtypes)]


def _combine_halves(op, data: list, dtypes: list, axis: int) -> list:
    """One level of `_tree_reduce`: element k of the axis combined with element k + n // 2; an
    odd axis's last element is carried to the next level as it is."""
    n = data[0].shape[axis]
    pieces = [np.split(d, [n // 2, n // 2 * 2], axis=axis) for d in data]
    first = [op.to_tensor(p[0], ty) for p, ty in zip(pieces, dtypes)]
    second = [op.to_tensor(p[1], ty) for p, ty in zip(pieces, dtypes)]
    combined = op.combine_fn.fn(*first, *second)
    combined = combined if isinstance(combined, tuple) else (combined,)
    return [np.concatenate([c.handle.data.astype(p[0].dtype), p[2]], axis=axis) for c, p in zip(combined, pieces)]


def _reduced_shape(data: np.ndarray, axis: int, original_axis: int | None, keep_dims: bool):
    """The reduced tile (length 1 along `axis`) in the shape `tl.reduce` returns: the axis kept
    or dropped; with no axis (the tile flattened), a scalar or all dims of size 1."""
    if original_axis is None:
        return data.reshape((1,) * data.ndim) if keep_dims else data.item()
    return data if keep_dims else np.squeeze(data, axis)


def _patch_interpreter_reduce() -> None:
    from triton.runtime import interpreter

    interpreter.ReduceOps.generic_reduce = _tree_reduce


def _skip_discarded_overflow_checks() -> None:
    """The interpreter's options ask Triton to check every int32 `+`, `-` and `*` for overflow:
    each is computed again in int64 and compared with int32's range, and then `device_assert`
    drops the result, as it does everything when the options' `debug` is off (and on the GPU).
    Half of an interpreted kernel's time went into these discarded checks (a fuzz batch: 4.4 of
    9.2 s); skip them where they would be dropped."""
    from triton.runtime import interpreter

    options = interpreter.interpreter_builder.options
    if not options.debug:
        interpreter.interpreter_builder.options = dataclasses.replace(options, sanitize_overflow=False)


def _patch_interpreter_bf16_dot() -> None:
    """The interpreter keeps bfloat16 tiles as their raw 16 bits and `tl.dot` multiplied those
    as integers (a [16, 16] product off by 1e10); a GEMM kernel's bf16 tiles are widened to
    f32 first (exact: bf16 is f32's upper half), as the tensor cores multiply them."""
    from triton.runtime import interpreter

    create_dot = interpreter.InterpreterBuilder.create_dot

    def widened(tile):
        if tile.dtype.scalar != tl.bfloat16:
            return tile
        bits = tile.data.astype(np.uint32) << 16
        return interpreter.TensorHandle(bits.view(np.float32), tl.float32)

    def patched(self, a, b, d, input_precision, max_num_imprecise_acc):
        return create_dot(self, widened(a), widened(b), d, input_precision, max_num_imprecise_acc)

    interpreter.InterpreterBuilder.create_dot = patched


def patch_interpreter() -> None:
    """Everything above, once, when the generated modules run under the interpreter."""
    _patch_interpreter_index()
    _patch_interpreter_reduce()
    _patch_interpreter_bf16_dot()
    _skip_discarded_overflow_checks()
