"""Dtype mixes (f16, bf16, integers, bool), several outputs, 0-d inputs, against eager."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["f16", "bf16"])
def test_half_arithmetic(check, make, dtype):
    x, y = make(8, 64, dtype=dtype), make(8, 64, dtype=dtype)
    check(lambda x, y: (x * y + x, x / (y.abs() + 1), -x, torch.maximum(x, y), x > y), x, y)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["f16", "bf16"])
def test_half_math(check, make, dtype):
    x = make(8, 64, dtype=dtype)
    check(lambda x: (F.gelu(x), torch.tanh(x), torch.exp(x).sqrt(), torch.sigmoid(x)), x)


def test_half_float_promotion(check, make):
    h, f = make(8, 64, dtype=torch.float16), make(8, 64)
    check(lambda h, f: (h + f, h.to(torch.bfloat16) * 2, f.to(torch.bfloat16).to(torch.float16)), h, f)


def test_integer_arithmetic(check, make):
    a = make(8, 64, dtype=torch.int32, low=-100, high=100)
    b = make(8, 64, dtype=torch.int64, low=-100, high=100)
    check(lambda a, b: (a + b, a * 3 - b, torch.abs(a), torch.maximum(a, b.int()), -b, a // 7), a, b)


def test_int_float_promotion(check, make):
    i, x = make(8, 64, dtype=torch.int64, low=-10, high=10), make(8, 64)
    check(lambda i, x: (i + x, i * 0.5, i / 4, torch.true_divide(i, i.abs() + 1)), i, x)


def test_uint8(check, make):
    u = make(8, 64, dtype=torch.uint8, low=0, high=255)
    check(lambda u: (u + 7, u // 3, u.to(torch.float32) / 255, u > 128), u)


def test_bool_arithmetic(check, make):
    m, x = make(8, 64, dtype=torch.bool), make(8, 64)
    check(lambda m, x: (m.to(torch.float32) * x, torch.where(m, x, 0.0), m + m, ~m, m.int() * 3), m, x)


def test_several_outputs(check, make):
    x, y = make(8, 64), make(8, 64)
    check(lambda x, y: (x + y, x * y, torch.sin(x), x - 1, y), x, y)


def test_zero_dim_input(check, make):
    x, s = make(8, 64), make(low=0.5, high=2.0)
    assert s.dim() == 0
    check(lambda x, s: (x * s + s, s.exp()), x, s)


def test_python_scalar_input(check, make):
    x = make(8, 64)
    check(lambda x, alpha: x * alpha + 1, x, 0.75)


def test_complex_values_between_externs(check, check_grad, make):
    """Complex tensors (fft, view_as_complex, polar) pass through the graph between extern
    calls, and real kernels read what comes back out of them; the importer refused complex
    dtypes. No lowering computes in complex: `abs` of a complex tensor is an extern too."""
    x = make(4, 16)
    check(lambda x: torch.fft.rfft(x * 2).abs() + 1, x, atol=1e-4, rtol=1e-4)
    check(lambda x: torch.view_as_real(torch.view_as_complex(x.reshape(4, 8, 2)) * 2), x)
    check_grad(lambda x: torch.fft.fft(x).real.sin(), make(4, 16, grad=True), atol=1e-4, rtol=1e-4)
