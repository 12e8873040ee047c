"""--reorder-loops inside the backend's pipeline: programs whose loops merge, are reordered
by stride (or must not be) match eager, forward and backward; the default pipeline runs it
before fusion, the tests here without fusion so that each node's loops are seen alone."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

PIPELINE = "lower-aten,inline,realize,split-reductions,reorder-loops,convert-to-triton"


@pytest.fixture(autouse=True)
def _with_reorder_loops(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLC_PIPELINE", PIPELINE)


def test_bias_add_after_convolution(check_grad, device):
    """Seed 002: [1, 10, 88, 78] + bias[10, 1, 1] runs as [10, 6864]."""
    x = torch.randn(1, 3, 92, 82, device=device, requires_grad=True)
    w = torch.randn(10, 3, 5, 5, device=device, requires_grad=True)
    b = torch.randn(10, device=device, requires_grad=True)
    check_grad(lambda x, w, b: torch.relu(F.conv2d(x, w) + b.view(10, 1, 1)), x, w, b, atol=1e-3, rtol=1e-4)


@pytest.mark.parametrize("shape", [(4, 1, 33, 7), (2, 3, 5, 1025), (1, 1, 1, 70000)])
def test_reductions_over_merged_and_kept_dims(check_grad, device, shape):
    x = torch.randn(*shape, device=device, requires_grad=True)
    check_grad(lambda x: (x.sum((2, 3), keepdim=True) * x).amax(1) + x.transpose(1, 3).exp().mean(), x,
               atol=1e-3, rtol=1e-4)


def test_norms_and_softmax(check_grad, device):
    x = torch.randn(4, 3, 10, 50, device=device, requires_grad=True)
    w = torch.randn(50, device=device, requires_grad=True)
    check_grad(lambda x, w: F.layer_norm(x, (50,), w) + torch.softmax(x, 1) + torch.log_softmax(x, -1), x, w,
               atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (3, 16, 7, 9), (1, 5, 1, 33)])
def test_channels_last_elementwise(check_grad, device, shape):
    """Channels-last inputs: the loops run in memory order [N, H, W, C] (by stride)."""
    x = torch.randn(*shape, device=device).to(memory_format=torch.channels_last).requires_grad_()
    b = torch.randn(shape[1], device=device, requires_grad=True)
    check_grad(lambda x, b: torch.sigmoid(x * 2 + b.view(-1, 1, 1)) * x, x, b, atol=1e-5, rtol=1e-5)


def test_channels_last_outputs_keep_their_strides(compile, device):
    x = torch.randn(2, 8, 5, 6, device=device).to(memory_format=torch.channels_last)
    out = compile(lambda x: torch.relu(x) + 1)(x)
    assert out.stride() == (x + 1).stride()
    torch.testing.assert_close(out, torch.relu(x) + 1)


@pytest.mark.parametrize("shape", [(37, 70), (16, 200), (300, 129)])
def test_transposed_add_runs_in_the_majority_order(check_grad, compile, device, shape):
    """x.t() + y: the column-major store and the load of x outvote y, so the loops run with
    i0 innermost; 2-D tiles where both sides reach 32 (1-D for 16 rows), odd sizes masked."""
    x = torch.randn(shape[1], shape[0], device=device, requires_grad=True)
    y = torch.randn(*shape, device=device, requires_grad=True)
    check_grad(lambda x, y: torch.tanh(x.t() + y) * 2, x, y, atol=1e-5, rtol=1e-5)
    out = compile(lambda x, y: x.t() + y)(x.detach(), y.detach())
    assert out.stride() == (x.t() + y).stride()
