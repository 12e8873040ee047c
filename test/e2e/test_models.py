"""Seed 000's MLP, and training: forward and backward graphs both compiled by mlc."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn


class MLP(nn.Module):
    """The network of seed 000: Linear 32→64, four Linear 64→64, gelu."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 64)
        self.fc3 = nn.Linear(64, 64)
        self.fc4 = nn.Linear(64, 64)
        self.fc5 = nn.Linear(64, 64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.fc1(x)
        x = self.fc2(x)
        x = self.fc3(x)
        x = self.fc4(x)
        x = self.fc5(x)
        return F.gelu(x)


def test_mlp_inference(compile, device):
    model = MLP().to(device)
    x = torch.randn(8, 32, device=device)
    with torch.no_grad():
        expected = model(x)
        actual = compile(model)(x)
    torch.testing.assert_close(actual, expected, atol=1e-5, rtol=1e-5)


def test_mlp_training(compile, device):
    """One SGD step through mlc matches eager: loss, every parameter's gradient."""
    torch.manual_seed(1)
    eager = MLP().to(device)
    compiled_model = MLP().to(device)
    compiled_model.load_state_dict(eager.state_dict())
    x = torch.randn(8, 32, device=device)
    target = torch.randn(8, 64, device=device)

    def step(model, run):
        loss = ((run(x) - target) ** 2).mean()
        loss.backward()
        return loss

    expected = step(eager, eager)
    actual = step(compiled_model, compile(compiled_model))
    torch.testing.assert_close(actual, expected, atol=1e-5, rtol=1e-5)
    for (name, p), q in zip(eager.named_parameters(), compiled_model.parameters()):
        torch.testing.assert_close(q.grad, p.grad, atol=1e-5, rtol=1e-5, msg=lambda m: f"{name}: {m}")


# Programs with a backward pass: each input requires grad; `.sum().backward()` through mlc.
BACKWARD = [
    ("gelu", lambda x: F.gelu(x), [(8, 64)]),
    ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), [(8, 64)]),
    ("silu", lambda x: F.silu(x), [(8, 64)]),
    ("sigmoid_tanh", lambda x: torch.sigmoid(x) * torch.tanh(x), [(8, 64)]),
    ("exp_log", lambda x: torch.log(torch.exp(x) + 1.0), [(8, 64)]),
    ("mul_div", lambda x, y: x * y / (y * y + 1), [(8, 64), (8, 64)]),
    ("bias_broadcast", lambda x, b: torch.relu(x + b), [(8, 64), (64,)]),
    ("leaky_relu_clamp", lambda x: torch.clamp(F.leaky_relu(x, 0.2), -0.5, 1.0), [(8, 64)]),
    ("softplus_pow", lambda x: F.softplus(x) ** 2, [(8, 64)]),
    ("views", lambda x: x.view(8, 8, 8).permute(2, 0, 1).reshape(8, 64) * x, [(8, 64)]),
    ("cat_slice", lambda x, y: torch.cat([x[:, ::2], y.sin()], dim=1) * 2, [(8, 64), (8, 32)]),
    ("where_maximum", lambda x, y: torch.where(x > 0, torch.maximum(x, y), y.exp()), [(8, 64), (8, 64)]),
    ("linear_gelu", lambda x, w, b: F.gelu(F.linear(x, w, b)), [(8, 32), (64, 32), (64,)]),
]


@pytest.mark.parametrize("fn, shapes", [pytest.param(f, s, id=n) for n, f, s in BACKWARD])
def test_backward(check_grad, make, fn, shapes):
    check_grad(fn, *[make(*s, low=-2.0, high=2.0, grad=True) for s in shapes])


def test_backward_mixed_requires_grad(check_grad, make):
    """Only some inputs need gradients; the backward graph gets None for the others."""
    x, y = make(8, 64, grad=True), make(8, 64)
    check_grad(lambda x, y: (x * y).tanh() + y, x, y)
