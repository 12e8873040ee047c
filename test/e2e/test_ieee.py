"""Eager's answer to the last bit on IEEE corner values: signed zeros, infinities and NaN through
every unary op, reductions over one-element and empty dims, and size-0 tensors in backward.

`torch.testing.assert_close` calls -0.0 and 0.0 equal, so `assert_same` also compares the sign
of every zero. Each test compiles one graph holding all its ops (they fuse into a few kernels),
so the whole class costs a handful of compiles per dtype.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

SPECIALS = [0.0, -0.0, float("inf"), -float("inf"), float("nan"), 1.0, -1.0, 0.5, -0.5, 3.0, -3.0]
DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64]

# Ops whose eager answer on these values is the same on every path of eager's CPU kernels (the
# vectorised body and the scalar tail): where eager disagrees with itself (maximum of
# float64 ±0, gelu(inf), lerp's fma) there is no one answer to match.
UNARY = {
    "neg": lambda x: -x,
    "abs": torch.abs,
    "relu": torch.relu,
    "relu6": F.relu6,
    "clamp_min": lambda x: x.clamp_min(0),
    "clamp": lambda x: x.clamp(-1, 1),
    "hardtanh": F.hardtanh,
    "leaky_relu": F.leaky_relu,
    "where_neg": lambda x: torch.where(x > 0, x, -x),
    "sub_from_zero": lambda x: 0 - x,
    "mul_neg_one": lambda x: x * -1,
    "sqrt": torch.sqrt,
    "sin": torch.sin,
    "tan": torch.tan,
    "tanh": torch.tanh,
    "asinh": torch.asinh,
    "atan": torch.atan,
    "erf": torch.erf,
    "expm1": torch.expm1,
    "log1p": torch.log1p,
    "trunc": torch.trunc,
    "floor": torch.floor,
    "ceil": torch.ceil,
    "round": torch.round,
    "sign": torch.sign,
    "reciprocal": torch.reciprocal,
    "silu": F.silu,
    "elu": F.elu,
    "square": torch.square,
    "copysign": lambda x: torch.copysign(torch.ones_like(x), x),
    "neg_of_neg": lambda x: -(-x),
}


# max(-0.0, 0.0) is a tie: mlc keeps the first operand, as eager's CPU kernels do (relu(-0.0) is
# -0.0, and Inductor's GPU kernels agree); eager's CUDA kernels take fmax's +0.0 instead.
ZERO_TIES = {"relu", "relu6", "clamp_min"}


def assert_same(actual: torch.Tensor, expected: torch.Tensor, name: str, tol: float = 1e-5) -> None:
    """Equal values (NaN where eager has NaN), and zeros of eager's sign."""
    assert actual.shape == expected.shape and actual.dtype == expected.dtype, name
    a, e = actual.double(), expected.double()
    close = torch.isclose(a, e, rtol=tol, atol=tol, equal_nan=True)
    zeros = (a == 0) & (e == 0)
    same_sign = ~zeros | (torch.signbit(a) == torch.signbit(e))
    bad = ~(close & same_sign)
    assert not bad.any(), f"{name}: at {bad.nonzero().flatten().tolist()}: {a[bad].tolist()} vs eager {e[bad].tolist()}"


def _tol(dtype: torch.dtype) -> float:
    return 1e-2 if dtype in (torch.float16, torch.bfloat16) else 1e-5


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_unary_ops_keep_signed_zeros_and_non_finite_values(compile, device, dtype):
    def fn(x):
        return {name: op(x) for name, op in UNARY.items()}

    x = torch.tensor(SPECIALS, dtype=dtype, device=device)
    expected, actual = fn(x), compile(fn)(x)
    for name in UNARY:
        if device.type == "cuda" and name in ZERO_TIES:
            torch.testing.assert_close(actual[name], expected[name], equal_nan=True)  # not the zero's sign
            continue
        assert_same(actual[name], expected[name], f"{name} {dtype}", _tol(dtype))


def _rows(n: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """Rows of n: all -0.0, all +0.0, and one special value among random ones per row."""
    rows = [torch.full((n,), -0.0), torch.zeros(n)]
    for s in SPECIALS:
        row = torch.randn(n)
        row[n // 2] = s
        rows.append(row)
    return torch.stack(rows).to(device=device, dtype=dtype)


REDUCTIONS = {
    "sum": lambda x: x.sum(-1),
    "mean": lambda x: x.mean(-1),
    "prod": lambda x: x.prod(-1),
    "amax": lambda x: x.amax(-1),
    "amin": lambda x: x.amin(-1),
    "var0": lambda x: x.var(-1, correction=0),
    "var1": lambda x: x.var(-1),
    "std0": lambda x: x.std(-1, correction=0),
    "var_mean0": lambda x: torch.var_mean(x, -1, correction=0)[0],
    "nansum": lambda x: x.nansum(-1),
    "logsumexp": lambda x: x.logsumexp(-1),
}


# 1: no reduction left (a pointwise copy); 2: unrolled; 64: a reduction kernel with no masked lane.
@pytest.mark.parametrize("n", [1, 2, 64])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
def test_reductions_over_short_rows_of_corner_values(compile, device, dtype, n):
    def fn(x):
        return {name: op(x) for name, op in REDUCTIONS.items()}

    x = _rows(n, dtype, device)
    expected, actual = fn(x), compile(fn)(x)
    for name in REDUCTIONS:
        if name == "prod" and n == 64:
            continue  # a product of 64 randn values with an inf: inf or NaN by the order it underflows
        assert_same(actual[name], expected[name], f"{name} over {n} {dtype}", _tol(dtype))


def test_variance_of_one_non_finite_element_is_nan(compile, device):
    x = torch.tensor([[1.0], [float("inf")], [-float("inf")], [float("nan")]], device=device)
    for correction in (0, 1):
        actual = compile(lambda x: x.var(-1, correction=correction))(x)
        assert_same(actual, x.var(-1, correction=correction), f"var correction={correction}")


def test_size_zero_tensors_forward_and_backward(compile, device):
    def fn(x):
        return (x.mean(-1), x.prod(-1), x.sum(0), x.logsumexp(-1), x.exp() + 1, x.sum(), x.nansum(-1),
                F.pad(x, (1, 0), value=2.5))  # the pad reads x only where it is masked off

    x = torch.randn(3, 0, device=device, requires_grad=True)
    x_ref = x.detach().clone().requires_grad_()
    actual, expected = compile(fn)(x), fn(x_ref)
    for k, (a, e) in enumerate(zip(actual, expected)):
        assert_same(a.detach(), e.detach(), f"output {k}")
    sum((a * (k + 1)).sum() for k, a in enumerate(actual)).backward()
    sum((e * (k + 1)).sum() for k, e in enumerate(expected)).backward()
    assert x.grad is not None and x.grad.shape == (3, 0)
    torch.testing.assert_close(x.grad, x_ref.grad)
