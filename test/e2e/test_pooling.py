"""Max pooling in mlc's own kernels, forward and backward (`mlc.frontend.decompositions`): the
window's maximum with its int8 offset, the indices recomputed from the offsets, the backward
gathered from the windows that can hold each position. The cases cross what the decomposition
distinguishes: overlapping windows (a position in up to ceil(k/s)^2 of them) and disjoint ones,
padding (positions outside the input never win), ceil_mode's partial windows, non-square
windows, windows of -inf and NaN, 3-d input, and a channels-last image."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F


@pytest.mark.parametrize(
    "shape, kernel, stride, padding, ceil_mode",
    [
        ((2, 3, 13, 11), 3, 2, 1, False),  # ResNet's stem pool, odd sizes
        ((2, 3, 9, 9), 2, 2, 0, True),  # disjoint windows, a partial last window
        ((3, 10, 7), (3, 2), (2, 1), (1, 0), True),  # non-square, 3-d
        ((1, 2, 8, 8), 2, 3, 0, False),  # gaps between windows
    ],
    ids=["stem", "ceil", "rect", "gaps"],
)
def test_max_pool_forward_and_backward(check_grad, make, shape, kernel, stride, padding, ceil_mode):
    x = make(*shape, grad=True)
    pooled = F.max_pool2d(x.detach(), kernel, stride, padding, ceil_mode=ceil_mode)
    weight = make(*pooled.shape)  # every window's gradient its own, not a count of hits

    def pool(x):
        values, indices = F.max_pool2d(x, kernel, stride, padding, ceil_mode=ceil_mode, return_indices=True)
        return values * weight, indices

    check_grad(pool, x)


def test_max_pool_of_minus_infinity_and_nan(make):
    """A window of -inf takes its first position inside the input (never the padding), a NaN
    wins its window, as aten's kernels do; the gradient goes where the indices say."""
    x = make(1, 2, 6, 6)
    x[0, 0, :2, :2] = float("-inf")
    x[0, 1, 3, 4] = float("nan")
    weight = make(1, 2, 3, 3)

    def pool(x):
        values, indices = F.max_pool2d(x, 3, 2, 1, return_indices=True)
        return values, indices, (torch.where(values.isnan(), 0, values) * weight).sum()

    def run(fn):
        leaf = x.clone().requires_grad_(True)
        values, indices, loss = fn(leaf)
        loss.backward()
        return values, indices, leaf.grad

    expected = run(pool)
    assert expected[0][0, 0, 0, 0] == float("-inf") and expected[0][0, 1].isnan().any()
    actual = run(torch.compile(pool, backend="mlc", fullgraph=True, dynamic=False))
    for a, e in zip(actual, expected):
        torch.testing.assert_close(a, e, equal_nan=True)


def test_a_channels_last_stem_trains(device):
    """Convolution, batch norm, ReLU and pool as ResNet's stem: the pool reads and its backward
    writes channels-last tensors."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 7, 2, 3, bias=False), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
        torch.nn.MaxPool2d(3, 2, 1), torch.nn.Conv2d(8, 4, 1),
    ).to(device)
    x = torch.randn(2, 3, 30, 30, device=device).to(memory_format=torch.channels_last)
    weight = torch.randn(2, 4, 8, 8, device=device)

    def grads(m):
        for p in model.parameters():
            p.grad = None
        out = m(x)
        (out * weight).sum().backward()
        return out, {n: p.grad.clone() for n, p in model.named_parameters()}

    expected, expected_grads = grads(model)
    actual, actual_grads = grads(torch.compile(model, backend="mlc", fullgraph=True, dynamic=False))
    torch.testing.assert_close(actual, expected, atol=1e-4, rtol=1e-4)
    for name, grad in expected_grads.items():
        torch.testing.assert_close(actual_grads[name], grad, atol=1e-4, rtol=1e-4, msg=name)


def test_max_pool_of_symbolic_sizes(make):
    """One dynamic compile for two image sizes: a pool of symbolic sizes is aten's call."""
    compiled = torch.compile(lambda x: F.max_pool2d(x, 3, 2, 1) * 2, backend="mlc", fullgraph=True, dynamic=True)
    for size in (9, 14):
        x = make(2, 3, size, size + 1, grad=True)
        expected_x = x.detach().clone().requires_grad_(True)
        expected = F.max_pool2d(expected_x, 3, 2, 1) * 2
        actual = compiled(x)
        torch.testing.assert_close(actual, expected)
        weight = make(*expected.shape)
        (actual * weight).sum().backward()
        (expected * weight).sum().backward()
        torch.testing.assert_close(x.grad, expected_x.grad)
