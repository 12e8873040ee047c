"""Every elementwise op family through torch.compile(backend="mlc"), against eager (8x64 f32)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

# name, fn, input range. Each op is its own lambda, so each is its own Dynamo code object.
UNARY = [
    ("neg", lambda x: -x, (-3, 3)),
    ("abs", lambda x: torch.abs(x), (-3, 3)),
    ("exp", lambda x: torch.exp(x), (-3, 3)),
    ("exp2", lambda x: torch.exp2(x), (-3, 3)),
    ("expm1", lambda x: torch.expm1(x), (-1, 1)),
    ("log", lambda x: torch.log(x), (0.1, 5)),
    ("log1p", lambda x: torch.log1p(x), (-0.5, 3)),
    ("log2", lambda x: torch.log2(x), (0.1, 5)),
    ("sqrt", lambda x: torch.sqrt(x), (0.0, 5)),
    ("rsqrt", lambda x: torch.rsqrt(x), (0.1, 5)),
    ("reciprocal", lambda x: torch.reciprocal(x), (0.5, 3)),
    ("pow_scalar", lambda x: torch.pow(x, 3), (-2, 2)),
    ("pow_fractional", lambda x: torch.pow(x, 2.5), (0.1, 3)),
    ("rpow", lambda x: torch.pow(2.0, x), (-3, 3)),
    ("sin", lambda x: torch.sin(x), (-3, 3)),
    ("cos", lambda x: torch.cos(x), (-3, 3)),
    ("tan", lambda x: torch.tan(x), (-1.2, 1.2)),
    ("tanh", lambda x: torch.tanh(x), (-3, 3)),
    ("sigmoid", lambda x: torch.sigmoid(x), (-5, 5)),
    ("erf", lambda x: torch.erf(x), (-3, 3)),
    ("relu", lambda x: torch.relu(x), (-3, 3)),
    ("gelu", lambda x: F.gelu(x), (-3, 3)),
    ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), (-3, 3)),
    ("silu", lambda x: F.silu(x), (-5, 5)),
    ("elu", lambda x: F.elu(x, alpha=0.7), (-3, 3)),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.1), (-3, 3)),
    ("hardtanh", lambda x: F.hardtanh(x, -1.5, 2.0), (-3, 3)),
    ("softplus", lambda x: F.softplus(x, beta=2.0, threshold=4.0), (-4, 4)),
    ("sign", lambda x: torch.sign(x), (-3, 3)),
    ("floor", lambda x: torch.floor(x), (-3, 3)),
    ("ceil", lambda x: torch.ceil(x), (-3, 3)),
    ("round", lambda x: torch.round(x * 2) / 2, (-3, 3)),  # halves: ties go to even
    ("trunc", lambda x: torch.trunc(x), (-3, 3)),
    ("clamp", lambda x: torch.clamp(x, -1.0, 0.5), (-3, 3)),
    ("clamp_min", lambda x: torch.clamp_min(x, 0.25), (-3, 3)),
]


@pytest.mark.parametrize("fn, bounds", [pytest.param(f, b, id=n) for n, f, b in UNARY])
def test_unary(check, make, fn, bounds):
    check(fn, make(8, 64, low=bounds[0], high=bounds[1]))


def test_unary_chain(check, make):
    """Many ops fused into one kernel, special values included."""
    x = make(8, 64)
    x[0, :4] = torch.tensor([0.0, -0.0, float("inf"), float("-inf")])
    check(lambda x: torch.tanh(torch.exp(-x.abs()) * 3 - 1).sigmoid() + torch.erf(x).cos(), x)


BINARY = [
    ("add_alpha", lambda x, y: torch.add(x, y, alpha=2.5)),
    ("sub_alpha", lambda x, y: torch.sub(x, y, alpha=0.5)),
    ("mul", lambda x, y: x * y),
    ("div", lambda x, y: x / y),
    ("div_floor", lambda x, y: torch.div(x, y, rounding_mode="floor")),
    ("div_trunc", lambda x, y: torch.div(x, y, rounding_mode="trunc")),
    ("pow", lambda x, y: torch.pow(x.abs() + 0.5, y)),
    ("maximum", lambda x, y: torch.maximum(x, y)),
    ("minimum", lambda x, y: torch.minimum(x, y)),
    ("where", lambda x, y: torch.where(x > y, x, y * 2)),
    ("rsub_scalar", lambda x, y: 1.5 - x + y * 0.25),
]


@pytest.mark.parametrize("fn", [pytest.param(f, id=n) for n, f in BINARY])
def test_binary(check, make, fn):
    x = make(8, 64)
    y = make(8, 64, low=0.5, high=3.0) * torch.where(make(8, 64) > 0, 1.0, -1.0)  # |y| >= 0.5
    check(fn, x, y)


def test_maximum_nan(check, make):
    """torch.maximum/minimum propagate NaN (tl.maximum would drop it)."""
    x, y = make(8, 64), make(8, 64)
    x[1, 3] = float("nan")
    y[2, 5] = float("nan")
    check(lambda x, y: (torch.maximum(x, y), torch.minimum(x, y)), x, y)


def test_integer_division(check, make):
    """Python/torch floor division on negative integers; C-style trunc division."""
    a = make(8, 64, dtype=torch.int64, low=-50, high=50)
    b = make(8, 64, dtype=torch.int64, low=1, high=7) * torch.where(make(8, 64) > 0, 1, -1)
    check(lambda a, b: (torch.div(a, b, rounding_mode="floor"), torch.div(a, b, rounding_mode="trunc"),
                        torch.remainder(a, b)), a, b)


def test_comparisons(check, make):
    x, y = make(8, 64), make(8, 64)
    y[:, :8] = x[:, :8]  # some equal elements
    check(lambda x, y: (x == y, x != y, x < y, x <= y, x > y, x >= y), x, y)


def test_logical(check, make):
    a, b = make(8, 64, dtype=torch.bool), make(8, 64, dtype=torch.bool)
    check(lambda a, b: (a & b, a | b, a ^ b, ~a, torch.logical_and(a, b), torch.logical_or(a, b),
                        torch.logical_xor(a, b), torch.logical_not(b)), a, b)


def test_logical_on_floats(check, make):
    x, y = make(8, 64), make(8, 64)
    x[0, :16] = 0.0
    check(lambda x, y: (torch.logical_and(x, y), torch.logical_not(x)), x, y)


def test_bitwise(check, make):
    a = make(8, 64, dtype=torch.int32, low=-1000, high=1000)
    b = make(8, 64, dtype=torch.int32, low=-1000, high=1000)
    check(lambda a, b: (a & b, a | b, a ^ b, ~a, torch.bitwise_left_shift(a, 3), a >> 2), a, b)


def test_casts(check, make):
    x = make(8, 64, low=-100, high=100)
    check(lambda x: (x.to(torch.int32), x.to(torch.int64) * 3, x.to(torch.float16),
                     (x > 0).to(torch.float32), x.to(torch.int8).to(torch.float32), x.to(torch.bool)), x)


def test_int_to_float(check, make):
    i = make(8, 64, dtype=torch.int64, low=-1000, high=1000)
    check(lambda i: (i.to(torch.float32) / 7, i.float() * 0.5 + i.to(torch.float64)), i)


def test_factories(check, make, device):
    x = make(8, 64)

    def fn(x):
        full = torch.full((8, 64), 2.5, device=x.device)
        ramp = torch.arange(64, device=x.device, dtype=torch.float32)
        steps = torch.arange(3, 67, 2, device=x.device)
        return x * full + ramp, steps * 2

    check(fn, x)


def test_like_factories(check, make):
    x = make(8, 64)
    check(lambda x: (torch.zeros_like(x) + x, torch.ones_like(x) * 3, torch.full_like(x, -0.5) - x,
                     torch.empty_like(x).fill_(7.0)), x)


def test_masked_fill(check, make):
    x = make(8, 64)
    check(lambda x: x.masked_fill(x < 0, -1.0) + x.masked_fill(x > 1, float("-inf")).exp(), x)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="2^31 elements: too slow for Triton's interpreter")
def test_positions_past_int32(device):
    """2^31 + 64 bytes: positions past int32 (the kernels index in 64 bits, `index_bits = 64`);
    with 32-bit positions the tail would wrap around to the start of the tensor."""
    n = 2**31 + 64
    x = torch.randint(0, 100, (n,), dtype=torch.uint8, device=device)
    x[-64:] = torch.arange(64, dtype=torch.uint8, device=device) + 100
    fn = torch.compile(lambda t: (t * 2 + 1, t.sum(dtype=torch.int64)), backend="mlc")
    doubled, total = fn(x)
    assert torch.equal(doubled[-64:], x[-64:] * 2 + 1)
    assert torch.equal(doubled, x * 2 + 1)
    assert total.item() == x.sum(dtype=torch.int64).item()
