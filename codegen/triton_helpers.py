"""What generated modules import besides torch and triton: the device, libdevice, helpers.

`mlc-translate --emit-python` output imports its names from here (`DEVICE`, `libdevice`,
`maximum`, `to_bfloat16`, ...), and so stays the same text on every machine: what differs
between the GPU and Triton's interpreter is decided here, once, at import.

* `DEVICE` is where `call` allocates: `cuda` when a GPU is present, else `cpu`.
* Without a GPU the kernels run under Triton's interpreter. `TRITON_INTERPRET` is read when a
  function is decorated with `@triton.jit`, so it is set here, before this module defines its
  own jit helpers and before any generated module is loaded.
* `libdevice` is `triton.language.extra.libdevice` on the GPU (the compiler maps it to CUDA's
  libdevice). The interpreter cannot run libdevice's extern calls, so there it is a namespace
  of the same functions computed by numpy on the tile's data.
* `maximum`/`minimum` propagate NaN as torch does (`tl.maximum` does not), as Inductor's
  `triton_helpers` do; `floor_div_integer`/`ceil_div_integer` round as their names say
  (Triton's `//` truncates); `to_bfloat16` rounds to nearest even under the interpreter too.
* `ensure_layout` gives an extern call's result the layout the IR fixed for it.
"""

from __future__ import annotations

import os

import torch

if not torch.cuda.is_available():
    # The only way Triton kernels run without a GPU; must precede every @triton.jit.
    os.environ["TRITON_INTERPRET"] = "1"

import numpy as np  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
INTERPRETING = os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def _np_dtype(dtype: tl.dtype) -> np.dtype:
    from triton.runtime.interpreter import _get_np_dtype

    return _get_np_dtype(dtype)


class _InterpretedLibdevice:
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
}
_PREDICATES = {"isnan": np.isnan, "isinf": np.isinf, "isfinited": np.isfinite, "signbit": np.signbit}


if INTERPRETING:
    libdevice = _InterpretedLibdevice()
else:
    from triton.language.extra import libdevice  # noqa: F401


@triton.jit
def maximum(a, b):
    """torch.maximum: NaN wins (tl.maximum would return the other operand)."""
    mask = a > b
    if a.dtype.is_floating():
        mask |= a != a
    return tl.where(mask, a, b)


@triton.jit
def minimum(a, b):
    """torch.minimum: NaN wins."""
    mask = a < b
    if a.dtype.is_floating():
        mask |= a != a
    return tl.where(mask, a, b)


@triton.jit
def floor_div_integer(a, b):
    """Python's `//` on integers (Triton's `//` truncates towards zero)."""
    quot = a // b
    rem = a % b
    return tl.where((rem != 0) & ((rem < 0) != (b < 0)), quot - 1, quot)


@triton.jit
def ceil_div_integer(a, b):
    """Integer division rounding towards plus infinity."""
    quot = a // b
    rem = a % b
    return tl.where((rem != 0) & ((rem < 0) == (b < 0)), quot + 1, quot)


def ensure_layout(t: torch.Tensor, size: tuple, stride: tuple, offset: int = 0) -> torch.Tensor:
    """`t` with exactly this size, stride and storage offset: itself when it has them (the usual
    case), else a copy. Kernels index extern results with the layout the IR fixed for them."""
    if tuple(t.shape) == tuple(size) and t.storage_offset() == offset and all(
        st == want or n == 1 for n, st, want in zip(size, t.stride(), stride)
    ):
        return t
    out = torch.empty_strided(size, stride, dtype=t.dtype, device=t.device)
    if offset:
        raise ValueError("ensure_layout: cannot copy into a layout with a storage offset")
    out.copy_(t)
    return out


if INTERPRETING:

    @triton.jit
    def to_bfloat16(x):
        """float32 -> bfloat16, rounding to nearest even. The interpreter's own conversion
        truncates, so round with integer arithmetic (exact, and the same on every machine)."""
        bits = x.to(tl.uint32, bitcast=True)
        bits = bits + (((bits >> 16) & 1) + 0x7FFF)
        rounded = (bits >> 16).to(tl.uint16)
        rounded = tl.where(x != x, 0x7FC0, rounded).to(tl.uint16)  # NaN stays a (quiet) NaN
        return rounded.to(tl.bfloat16, bitcast=True)

else:

    @triton.jit
    def to_bfloat16(x):
        """float32 -> bfloat16, rounding to nearest even (the GPU's conversion)."""
        return x.to(tl.bfloat16)
