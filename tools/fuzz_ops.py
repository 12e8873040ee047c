"""The ops the fuzzer (tools/fuzz.py) writes programs with: how each prints and how it runs.

Every entry is an `OpDef`: `render(args, params)` gives the Python expression (the program
prints as source), `fn(*tensors, **params)` computes it (the program runs from its data
structure, no source is evaluated), and `exactness` says whether eager and mlc give the same
bits when the inputs are the same bits:

  EXACT       views, selections, comparisons, max/min, rounding: exact for every dtype
  F32_EXACT   add/sub/neg/abs and casts: exact when the result is float32, an integer or a bool
              (a float16/bfloat16 result is rounded after every op in eager, not inside an mlc
              kernel)
  INEXACT     everything else (transcendentals, division, reductions that accumulate)

Ops whose result jumps when an input moves by one ulp (floor, sign, comparisons, argmax, casts
to integers, rounding divisions) are `DISCONTINUOUS`: the generator applies them to exact
values only, so a one-ulp difference between eager and mlc never becomes a wrong integer.

Only ops that mlc lowers (passes/lowering/*.py, or that mlc's decomposition table turns into
lowered ops) are listed: an unsupported op is never generated.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

EXACT, F32_EXACT, INEXACT = "exact", "f32_exact", "inexact"


@dataclass(frozen=True)
class OpDef:
    """One op of the catalogue (see the module docstring)."""

    name: str
    render: Callable[[Sequence[str], dict[str, Any]], str]
    fn: Callable[..., torch.Tensor]
    exactness: str = INEXACT


OPS: dict[str, OpDef] = {}

DISCONTINUOUS = {
    "floor", "ceil", "round", "trunc", "sign", "div_mode", "remainder", "fmod", "compare", "compare_scalar",
    "argmax", "argmin", "max_dim_indices", "min_dim_indices", "to_int", "to_bool", "any", "all",
}
"""Ops applied to exact values only (see the module docstring)."""

EXTREMA = {"amax", "amin", "max_all", "max_dim_values", "min_dim_values"}
"""Reductions whose gradient goes to the position of the extremum: in programs with a backward
they take exact values only (a one-ulp difference, or float16 ties, would move it)."""


SIGN_UNSETTLED = {
    "sum", "mean", "nansum", "var", "std", "var_mean", "logsumexp", "vector_norm", "softmax", "log_softmax",
    "normalize", "layer_norm", "rms_norm", "group_norm", "batch_norm", "cross_entropy", "cross_entropy_soft",
    "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "index_put", "index_add", "scatter_add",
    "amax", "amin", "max_all", "max_dim_values", "min_dim_values", "maximum", "minimum", "clamp", "relu", "hardtanh",
    "matmul",
}
"""Ops after which the sign of a zero is the implementation's choice, not the values': a sum
starts from +0 or from its first element (eager: +0; a sum of -0s is then +0; a GEMM's
accumulator starts from +0, BLAS's product of K = 1 is the -0 itself), a max or min
of -0 and +0 keeps either, a norm subtracts a mean summed either way. Zeros computed through
them are compared by value only (tools/fuzz_check.py `zero_sign_problem`)."""


def lit(value: Any) -> str:
    """A parameter value as Python source (dtypes as `torch.float16`, floats with repr,
    `float('nan')` and `float('inf')` for the floats whose repr is no Python)."""
    if isinstance(value, torch.dtype):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return f"float('{value}')"
    return repr(value)


def template(text: str) -> Callable[[Sequence[str], dict[str, Any]], str]:
    """A renderer from a format string: `{0}`, `{1}` are the arguments, `{name}` a parameter."""

    def render(args: Sequence[str], params: dict[str, Any]) -> str:
        return text.format(*args, **{k: lit(v) for k, v in params.items()})

    return render


def define(name: str, text: str | Callable[[Sequence[str], dict[str, Any]], str], fn: Callable[..., Any],
           exactness: str = INEXACT) -> None:
    OPS[name] = OpDef(name, template(text) if isinstance(text, str) else text, fn, exactness)


# -- pointwise: unary -------------------------------------------------------------------------

UNARY_FLOAT = {
    # name: (domain low, domain high) of the input for finite values with finite gradients
    "exp": (-30.0, 8.0), "exp2": (-30.0, 10.0), "expm1": (-30.0, 8.0), "log": (0.05, None),
    "log1p": (-0.9, None), "log2": (0.05, None), "log10": (0.05, None), "sqrt": (0.01, None),
    "rsqrt": (0.05, None), "sin": (-50.0, 50.0), "cos": (-50.0, 50.0), "tan": (-1.3, 1.3),
    "tanh": (None, None), "erf": (None, None), "sigmoid": (None, None), "reciprocal": (0.1, None),
}
for _name in UNARY_FLOAT:
    define(_name, f"torch.{_name}({{0}})", getattr(torch, _name))

define("neg", "-{0}", torch.neg, F32_EXACT)
define("abs", "{0}.abs()", torch.abs, EXACT)
define("relu", "torch.relu({0})", torch.relu, EXACT)
define("square", "{0} * {0}", lambda x: x * x)
define("floor", "torch.floor({0})", torch.floor, EXACT)
define("ceil", "torch.ceil({0})", torch.ceil, EXACT)
define("round", "torch.round({0})", torch.round, EXACT)
define("trunc", "torch.trunc({0})", torch.trunc, EXACT)
define("sign", "torch.sign({0})", torch.sign, EXACT)
define("gelu", "F.gelu({0}, approximate={approximate})", lambda x, approximate: F.gelu(x, approximate=approximate))
define("silu", "F.silu({0})", F.silu)
define("mish", "F.mish({0})", F.mish)
define("elu", "F.elu({0}, alpha={alpha})", lambda x, alpha: F.elu(x, alpha=alpha))
define("leaky_relu", "F.leaky_relu({0}, {slope})", lambda x, slope: F.leaky_relu(x, slope))
define("hardtanh", "F.hardtanh({0}, {lo}, {hi})", lambda x, lo, hi: F.hardtanh(x, lo, hi), EXACT)
define("softplus", "F.softplus({0}, beta={beta}, threshold={threshold})",
       lambda x, beta, threshold: F.softplus(x, beta=beta, threshold=threshold))
define("hardsigmoid", "F.hardsigmoid({0})", F.hardsigmoid)
define("hardswish", "F.hardswish({0})", F.hardswish)
define("clamp", "{0}.clamp({lo}, {hi})", lambda x, lo, hi: x.clamp(lo, hi), EXACT)
define("pow_scalar", "{0} ** {exponent}", lambda x, exponent: x ** exponent)
define("rpow", "{base} ** {0}", lambda x, base: base ** x)
define("isnan", "torch.isnan({0})", torch.isnan, EXACT)
define("logical_not", "torch.logical_not({0})", torch.logical_not, EXACT)
define("bitwise_not", "~{0}", torch.bitwise_not, EXACT)

# scalar arithmetic (also the generator's guards, which bring values into an op's domain)
define("add_scalar", "{0} + {c}", lambda x, c: x + c, F32_EXACT)
define("rsub_scalar", "{c} - {0}", lambda x, c: c - x, F32_EXACT)
define("mul_scalar", "{0} * {c}", lambda x, c: x * c)
define("div_scalar", "{0} / {c}", lambda x, c: x / c)
define("abs_add", "{0}.abs() + {c}", lambda x, c: x.abs() + c, F32_EXACT)
define("sigmoid_affine", "torch.sigmoid({0}) * {a} + {b}", lambda x, a, b: torch.sigmoid(x) * a + b)
define("tanh_affine", "torch.tanh({0}) * {a} + {b}", lambda x, a, b: torch.tanh(x) * a + b)

# -- pointwise: binary and ternary ------------------------------------------------------------

define("add", "{0} + {1}", torch.add, F32_EXACT)
define("sub", "{0} - {1}", torch.sub, F32_EXACT)
define("add_alpha", "torch.add({0}, {1}, alpha={alpha})", lambda a, b, alpha: torch.add(a, b, alpha=alpha))
define("mul", "{0} * {1}", torch.mul)
define("div", "{0} / {1}", torch.div)
define("div_mode", "torch.div({0}, {1}, rounding_mode={mode})", lambda a, b, mode: torch.div(a, b, rounding_mode=mode),
       EXACT)
define("remainder", "torch.remainder({0}, {1})", torch.remainder, EXACT)
define("fmod", "torch.fmod({0}, {1})", torch.fmod, EXACT)
define("pow", "torch.pow({0}, {1})", torch.pow)
define("maximum", "torch.maximum({0}, {1})", torch.maximum, EXACT)
define("minimum", "torch.minimum({0}, {1})", torch.minimum, EXACT)
define("where", "torch.where({0}, {1}, {2})", torch.where, EXACT)
define("masked_fill", "{0}.masked_fill({1}, {value})", lambda x, m, value: x.masked_fill(m, value), EXACT)
define("lerp", "torch.lerp({0}, {1}, {weight})", lambda a, b, weight: torch.lerp(a, b, weight))
define("addcmul", "torch.addcmul({0}, {1}, {2}, value={value})",
       lambda a, b, c, value: torch.addcmul(a, b, c, value=value))
define("logical", lambda args, p: f"torch.logical_{p['kind']}({args[0]}, {args[1]})", lambda a, b, kind: getattr(torch, f"logical_{kind}")(a, b), EXACT)


def _render_bitwise(args: Sequence[str], p: dict[str, Any]) -> str:
    return f"{args[0]} {p['sym']} {args[1]}"


define("bitwise", _render_bitwise, lambda a, b, sym: a & b if sym == "&" else a | b if sym == "|" else a ^ b, EXACT)


_COMPARE = {"==": torch.eq, "!=": torch.ne, "<": torch.lt, "<=": torch.le, ">": torch.gt, ">=": torch.ge}


def _render_compare(args: Sequence[str], p: dict[str, Any]) -> str:
    return f"{args[0]} {p['sym']} {args[1]}"


def _render_compare_scalar(args: Sequence[str], p: dict[str, Any]) -> str:
    return f"{args[0]} {p['sym']} {lit(p['c'])}"


define("compare", _render_compare, lambda a, b, sym: _COMPARE[sym](a, b), EXACT)
define("compare_scalar", _render_compare_scalar, lambda a, sym, c: _COMPARE[sym](a, c), EXACT)

# -- casts and creation -----------------------------------------------------------------------

define("to", "{0}.to({dtype})", lambda x, dtype: x.to(dtype), F32_EXACT)
define("to_int", "{0}.to({dtype})", lambda x, dtype: x.to(dtype), EXACT)
define("to_bool", "{0}.bool()", lambda x: x.bool(), EXACT)
define("full_like", "torch.full_like({0}, {value})", lambda x, value: torch.full_like(x, value), EXACT)
define("ones_like", "torch.ones_like({0})", torch.ones_like, EXACT)
define("arange_add", "{0} + torch.arange({n}, device={0}.device)", lambda x, n: x + torch.arange(n, device=x.device),
       F32_EXACT)

# -- views and data movement ------------------------------------------------------------------


def _slice_key(dim: int, start: int | None, stop: int | None, step: int) -> tuple[slice, ...]:
    return (slice(None),) * dim + (slice(start, stop, step),)


def _render_slice(args: Sequence[str], p: dict[str, Any]) -> str:
    start = "" if p["start"] is None else str(p["start"])
    stop = "" if p["stop"] is None else str(p["stop"])
    step = "" if p["step"] == 1 else f":{p['step']}"
    return f"{args[0]}[{':, ' * p['dim']}{start}:{stop}{step}]"


define("permute", "{0}.permute({perm})", lambda x, perm: x.permute(perm), EXACT)
define("transpose", "{0}.transpose({d0}, {d1})", lambda x, d0, d1: x.transpose(d0, d1), EXACT)
define("slice", _render_slice, lambda x, dim, start, stop, step: x[_slice_key(dim, start, stop, step)], EXACT)
define("select", "{0}.select({dim}, {index})", lambda x, dim, index: x.select(dim, index), EXACT)
define("expand", "{0}.expand({sizes})", lambda x, sizes: x.expand(sizes), EXACT)
define("squeeze", "{0}.squeeze({dim})", lambda x, dim: x.squeeze(dim), EXACT)
define("unsqueeze", "{0}.unsqueeze({dim})", lambda x, dim: x.unsqueeze(dim), EXACT)
define("flip", "{0}.flip({dims})", lambda x, dims: x.flip(dims), EXACT)
define("reshape", "{0}.reshape({shape})", lambda x, shape: x.reshape(shape), EXACT)
define("contiguous", "{0}.contiguous()", lambda x: x.contiguous(), EXACT)
define("split_get", "torch.split({0}, {size}, dim={dim})[{k}]", lambda x, size, dim, k: torch.split(x, size, dim)[k],
       EXACT)
define("unbind_get", "{0}.unbind({dim})[{k}]", lambda x, dim, k: x.unbind(dim)[k], EXACT)
define("cat", lambda args, p: f"torch.cat([{', '.join(args)}], dim={p['dim']})",
       lambda *xs, dim: torch.cat(list(xs), dim=dim), EXACT)
define("pad", "F.pad({0}, {pads}, value={value})", lambda x, pads, value: F.pad(x, pads, value=value), EXACT)

# -- indexing: loads and adds at positions read from memory ----------------------------------


def _render_index(args: Sequence[str], p: dict[str, Any]) -> str:
    return f"{args[0]}[{':, ' * p['dim']}{args[1]}]"


define("index", _render_index, lambda x, i, dim: x[(slice(None),) * dim + (i,)], EXACT)
define("index_select", "{0}.index_select({dim}, {1})", lambda x, i, dim: x.index_select(dim, i), EXACT)
define("gather", "torch.gather({0}, {dim}, {1})", lambda x, i, dim: torch.gather(x, dim, i), EXACT)
define("embedding", "F.embedding({1}, {0})", lambda w, i: F.embedding(i, w), EXACT)
define("matmul", "{0} @ {1}", torch.matmul)  # a GEMM (mlc-fuzz --gemm triton: mlc's own, epilogues fused)
define("index_put", "{0}.index_put(({1},), {2}, accumulate=True)",
       lambda x, i, v: x.index_put((i,), v, accumulate=True))
define("index_add", "{0}.index_add({dim}, {1}, {2})", lambda x, i, v, dim: x.index_add(dim, i, v))
define("scatter_add", "{0}.scatter_add({dim}, {1}, {2})", lambda x, i, v, dim: x.scatter_add(dim, i, v))

# -- reductions -------------------------------------------------------------------------------


def _reduction(method: str, extra: Sequence[str] = ()) -> Callable[[Sequence[str], dict[str, Any]], str]:
    """`x.method()` for a full reduction (dim None), else `x.method(dim, keepdim=k, extra...)`."""

    def render(args: Sequence[str], p: dict[str, Any]) -> str:
        rest = "".join(f", {k}={lit(p[k])}" for k in extra if p.get(k) is not None)
        if p["dim"] is None:
            return f"{args[0]}.{method}({rest.lstrip(', ')})"
        return f"{args[0]}.{method}({lit(p['dim'])}, keepdim={lit(p['keepdim'])}{rest})"

    return render


def _reduce_fn(method: str, extra: Sequence[str] = ()) -> Callable[..., torch.Tensor]:
    def fn(x: torch.Tensor, dim: Any, keepdim: bool, **kw: Any) -> torch.Tensor:
        kwargs = {k: kw[k] for k in extra if kw.get(k) is not None}
        if dim is None:
            return getattr(x, method)(**kwargs)
        return getattr(x, method)(dim, keepdim=keepdim, **kwargs)

    return fn


for _method, _extra, _exactness in [
    ("sum", ("dtype",), INEXACT), ("prod", (), INEXACT), ("amax", (), EXACT), ("amin", (), EXACT),
    ("argmax", (), EXACT), ("argmin", (), EXACT), ("any", (), EXACT), ("all", (), EXACT), ("mean", (), INEXACT),
    ("var", ("correction",), INEXACT), ("std", ("correction",), INEXACT), ("nansum", (), INEXACT),
]:
    define(_method, _reduction(_method, _extra), _reduce_fn(_method, _extra), _exactness)

define("logsumexp", "torch.logsumexp({0}, {dim}, keepdim={keepdim})",
       lambda x, dim, keepdim: torch.logsumexp(x, dim, keepdim=keepdim))
define("max_dim_values", "{0}.max({dim}, keepdim={keepdim}).values",
       lambda x, dim, keepdim: x.max(dim, keepdim=keepdim).values, EXACT)
define("max_dim_indices", "{0}.max({dim}, keepdim={keepdim}).indices",
       lambda x, dim, keepdim: x.max(dim, keepdim=keepdim).indices, EXACT)
define("min_dim_values", "{0}.min({dim}, keepdim={keepdim}).values",
       lambda x, dim, keepdim: x.min(dim, keepdim=keepdim).values, EXACT)
define("min_dim_indices", "{0}.min({dim}, keepdim={keepdim}).indices",
       lambda x, dim, keepdim: x.min(dim, keepdim=keepdim).indices, EXACT)
define("max_all", "{0}.max()", lambda x: x.max(), EXACT)
define("var_mean", "torch.var_mean({0}, {dim}, correction={correction}, keepdim={keepdim})[{k}]",
       lambda x, dim, correction, keepdim, k: torch.var_mean(x, dim, correction=correction, keepdim=keepdim)[k])
define("vector_norm", "torch.linalg.vector_norm({0}, {ord}, dim={dim}, keepdim={keepdim})",
       lambda x, ord, dim, keepdim: torch.linalg.vector_norm(x, ord, dim=dim, keepdim=keepdim))

# -- normalizations and losses ----------------------------------------------------------------

define("softmax", "torch.softmax({0}, {dim})", lambda x, dim: torch.softmax(x, dim))
define("log_softmax", "torch.log_softmax({0}, {dim})", lambda x, dim: torch.log_softmax(x, dim))
define("normalize", "F.normalize({0}, dim={dim})", lambda x, dim: F.normalize(x, dim=dim))


def _render_affine_norm(call: str) -> Callable[[Sequence[str], dict[str, Any]], str]:
    """`F.layer_norm(x, shape, w, b, eps=...)` with `None` for a missing weight or bias."""

    def render(args: Sequence[str], p: dict[str, Any]) -> str:
        w = args[1] if p["weight"] else "None"
        b = args[1 + p["weight"]] if p["bias"] else "None"
        return f"F.{call}({args[0]}, {lit(p['arg'])}, {w}, {b}, eps={lit(p['eps'])})"

    return render


def _affine_args(xs: Sequence[torch.Tensor], weight: bool, bias: bool) -> tuple[Any, Any]:
    w = xs[1] if weight else None
    b = xs[1 + weight] if bias else None
    return w, b


define("layer_norm", _render_affine_norm("layer_norm"),
       lambda *xs, arg, weight, bias, eps: F.layer_norm(xs[0], arg, *_affine_args(xs, weight, bias), eps=eps))
define("group_norm", _render_affine_norm("group_norm"),
       lambda *xs, arg, weight, bias, eps: F.group_norm(xs[0], arg, *_affine_args(xs, weight, bias), eps=eps))


def _render_rms_norm(args: Sequence[str], p: dict[str, Any]) -> str:
    w = args[1] if p["weight"] else "None"
    return f"F.rms_norm({args[0]}, {lit(p['arg'])}, {w}, eps={lit(p['eps'])})"


define("rms_norm", _render_rms_norm,
       lambda *xs, arg, weight, eps: F.rms_norm(xs[0], arg, xs[1] if weight else None, eps=eps))


def _render_batch_norm(args: Sequence[str], p: dict[str, Any]) -> str:
    stats = f"{args[1]}, {args[2]}" if not p["training"] else "None, None"
    rest = args[1 if p["training"] else 3:]
    w = rest[0] if p["weight"] else "None"
    b = rest[p["weight"]] if p["bias"] else "None"
    return f"F.batch_norm({args[0]}, {stats}, {w}, {b}, training={p['training']}, eps={lit(p['eps'])})"


def _batch_norm(*xs: torch.Tensor, training: bool, weight: bool, bias: bool, eps: float) -> torch.Tensor:
    mean, var = (None, None) if training else (xs[1], xs[2])
    rest = xs[1 if training else 3:]
    w = rest[0] if weight else None
    b = rest[weight] if bias else None
    return F.batch_norm(xs[0], mean, var, w, b, training=training, eps=eps)


define("batch_norm", _render_batch_norm, _batch_norm)
define("cross_entropy", "F.cross_entropy({0}, {1}, reduction={reduction}, ignore_index={ignore_index})",
       lambda x, t, reduction, ignore_index: F.cross_entropy(x, t, reduction=reduction, ignore_index=ignore_index))
define("cross_entropy_soft", "F.cross_entropy({0}, {1}, reduction={reduction})",
       lambda x, t, reduction: F.cross_entropy(x, t, reduction=reduction))
define("nll_loss", "F.nll_loss({0}, {1}, reduction={reduction}, ignore_index={ignore_index})",
       lambda x, t, reduction, ignore_index: F.nll_loss(x, t, reduction=reduction, ignore_index=ignore_index))
define("mse_loss", "F.mse_loss({0}, {1}, reduction={reduction})",
       lambda a, b, reduction: F.mse_loss(a, b, reduction=reduction))
define("l1_loss", "F.l1_loss({0}, {1}, reduction={reduction})", lambda a, b, reduction: F.l1_loss(a, b, reduction=reduction))
define("smooth_l1_loss", "F.smooth_l1_loss({0}, {1}, reduction={reduction}, beta={beta})",
       lambda a, b, reduction, beta: F.smooth_l1_loss(a, b, reduction=reduction, beta=beta))


def apply(name: str, args: Sequence[torch.Tensor], params: dict[str, Any]) -> torch.Tensor:
    """Run op `name` on tensors with its parameters."""
    return OPS[name].fn(*args, **params)


def render(name: str, args: Sequence[str], params: dict[str, Any]) -> str:
    """The Python expression of op `name` over the named arguments."""
    return OPS[name].render(args, params)
