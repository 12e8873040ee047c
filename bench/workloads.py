"""bench/run.py's workloads: each a top-level function (Dynamo caches per code object) and a
builder that makes its inputs on a device, at GPU sizes or tiny odd ones (`quick`).

    case = MODELS["softmax"](device, quick=False)   # a Case: fn, inputs, shape, dtype, tolerances

Not part of the mlc package: see bench/README.md."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

@dataclass
class Case:
    """One model instantiated on a device: what to call, with what, and how to judge it."""

    fn: Callable[..., Any]
    inputs: list[torch.Tensor]
    shape: str
    dtype: torch.dtype
    atol: float | None = None  # None: the dtype's default (TOLERANCES)
    rtol: float | None = None
    extra_bytes: int = 0  # parameters read besides `inputs`


TOLERANCES = {
    torch.float32: (1e-5, 1e-5),  # transcendental functions differ by an ulp between libraries
    torch.float16: (1e-2, 1e-2),  # eager rounds after every op, fused kernels once
    torch.bfloat16: (2e-2, 2e-2),
}


class MLP(nn.Module):
    """Seed 000's network: Linear 32→64, four Linear 64→64, gelu."""

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


# Each model is a top-level function (its own code object: Dynamo caches per code object).
def pointwise_chain_fn(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return F.gelu(x * w + b)


def bias_relu_fn(x: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.relu(x + b)


def transpose_add_fn(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x.t() + y


def cat3_fn(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    return torch.cat([a, b, c], dim=1)


def softmax_fn(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=-1)


def layer_norm_fn(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return F.layer_norm(x, x.shape[-1:], w, b, eps=1e-5)


def log_softmax_fn(x: torch.Tensor) -> torch.Tensor:
    return torch.log_softmax(x, dim=-1)


def rms_norm_fn(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """RMSNorm as models write it by hand (Llama's): no fused op to call."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w


def sum_rows_fn(x: torch.Tensor) -> torch.Tensor:
    return x.sum(dim=-1)


def fp16_chain_fn(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.sigmoid(x * 0.5 + y) * x - torch.tanh(y)


def launches_fn(*xs: torch.Tensor) -> tuple[torch.Tensor, ...]:
    return tuple(torch.sin(x) for x in xs)  # nothing shared: one kernel each


def sum_columns_fn(x: torch.Tensor) -> torch.Tensor:
    return x.sum(dim=0)


def channel_stats_fn(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.var_mean(x, dim=(0, 2, 3))


def cross_entropy_fn(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.cross_entropy(logits, target)


def seed_toy_fn(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Seed 001's ToyModule: add, reshape, matmul, sum, sigmoid."""
    z = x + y
    u = torch.reshape(z, (z.shape[1], z.shape[0]))
    return torch.sigmoid(torch.sum(torch.matmul(x, u), 1))


def conv_bias_fn(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Seed 002: conv2d with a bias over an unbatched image."""
    return F.conv2d(x, w, b)


def gelu_erf_fn(x: torch.Tensor) -> torch.Tensor:
    """gelu written out with erf: a long elementwise chain."""
    return 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))


def swiglu_fn(x: torch.Tensor) -> torch.Tensor:
    a, b = x.chunk(2, dim=-1)
    return F.silu(a) * b


def attention_fn(x: torch.Tensor, w_qkv: torch.Tensor, w_out: torch.Tensor) -> torch.Tensor:
    """A self-attention block written with matmuls and softmax (extern matmuls, fused rest)."""
    batch, seq, dim = x.shape
    heads = 12
    q, k, v = (x @ w_qkv).view(batch, seq, 3, heads, dim // heads).permute(2, 0, 3, 1, 4)
    scores = torch.softmax(q @ k.transpose(-1, -2) * (dim // heads) ** -0.5, dim=-1)
    return (scores @ v).transpose(1, 2).reshape(batch, seq, dim) @ w_out


def _randn(*shape: int, device: torch.device, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.randn(*shape, device=device, dtype=dtype)


def _pointwise_chain(device: torch.device, quick: bool) -> Case:
    n = 64 if quick else 4096
    x, w, b = _randn(n, n, device=device), _randn(n, device=device), _randn(n, device=device)
    return Case(pointwise_chain_fn, [x, w, b], f"[{n},{n}]*[{n}]+[{n}]", torch.float32)


def _mlp(device: torch.device, quick: bool) -> Case:
    batch = 64 if quick else 8192
    model = MLP().to(device).eval()
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    # mm is cuBLAS (eager) vs Triton/cuBLAS (Inductor): sums in a different order.
    return Case(model, [_randn(batch, 32, device=device)], f"[{batch},32] -> 64 x5", torch.float32,
                atol=1e-4, rtol=1e-4, extra_bytes=params)


def _bias_relu(device: torch.device, quick: bool) -> Case:
    rows, cols = (64, 32) if quick else (8192, 4096)
    x, b = _randn(rows, cols, device=device), _randn(cols, device=device)
    return Case(bias_relu_fn, [x, b], f"[{rows},{cols}]+[{cols}]", torch.float32)


def _transpose_add(device: torch.device, quick: bool) -> Case:
    n = 64 if quick else 4096
    x, y = _randn(n, n, device=device), _randn(n, n, device=device)
    return Case(transpose_add_fn, [x, y], f"[{n},{n}].t()+[{n},{n}]", torch.float32)


def _cat3(device: torch.device, quick: bool) -> Case:
    rows, cols = (32, (16, 32, 16)) if quick else (4096, (1024, 2048, 1024))
    parts = [_randn(rows, c, device=device) for c in cols]
    return Case(cat3_fn, parts, f"cat([{rows},{cols[0]}],[{rows},{cols[1]}],[{rows},{cols[2]}], 1)", torch.float32)


def _softmax(device: torch.device, quick: bool) -> Case:
    rows, cols = (32, 64) if quick else (4096, 4096)
    return Case(softmax_fn, [_randn(rows, cols, device=device)], f"[{rows},{cols}] dim=-1", torch.float32)


def _layer_norm(device: torch.device, quick: bool) -> Case:
    rows, cols = (32, 64) if quick else (4096, 4096)
    x, w, b = _randn(rows, cols, device=device), _randn(cols, device=device), _randn(cols, device=device)
    return Case(layer_norm_fn, [x, w, b], f"[{rows},{cols}] over {cols}", torch.float32, atol=1e-4, rtol=1e-4)


def _rows(quick: bool, rows: int, cols: int) -> tuple[int, int]:
    return (32, 64) if quick else (rows, cols)


def _softmax_1024(device: torch.device, quick: bool) -> Case:
    rows, cols = _rows(quick, 8192, 1024)
    return Case(softmax_fn, [_randn(rows, cols, device=device)], f"[{rows},{cols}] dim=-1", torch.float32)


def _softmax_32768(device: torch.device, quick: bool) -> Case:
    rows, cols = _rows(quick, 256, 32768)
    return Case(softmax_fn, [_randn(rows, cols, device=device)], f"[{rows},{cols}] dim=-1", torch.float32)


def _log_softmax(device: torch.device, quick: bool) -> Case:
    rows, cols = _rows(quick, 8192, 1024)
    return Case(log_softmax_fn, [_randn(rows, cols, device=device)], f"[{rows},{cols}] dim=-1", torch.float32,
                atol=1e-4, rtol=1e-4)


def _layer_norm_1024(device: torch.device, quick: bool) -> Case:
    rows, cols = _rows(quick, 8192, 1024)
    x, w, b = _randn(rows, cols, device=device), _randn(cols, device=device), _randn(cols, device=device)
    return Case(layer_norm_fn, [x, w, b], f"[{rows},{cols}] over {cols}", torch.float32, atol=1e-4, rtol=1e-4)


def _rms_norm(device: torch.device, quick: bool) -> Case:
    rows, cols = _rows(quick, 8192, 4096)
    x, w = _randn(rows, cols, device=device), _randn(cols, device=device)
    return Case(rms_norm_fn, [x, w], f"[{rows},{cols}] over {cols}", torch.float32, atol=1e-4, rtol=1e-4)


def _sum_rows(device: torch.device, quick: bool) -> Case:
    rows, cols = (32, 64) if quick else (4096, 4096)
    # A different summation order: error grows with sqrt(cols).
    return Case(sum_rows_fn, [_randn(rows, cols, device=device)], f"[{rows},{cols}] dim=-1", torch.float32,
                atol=1e-4, rtol=1e-4)


def _sum_columns(device: torch.device, quick: bool) -> Case:
    rows, cols = (64, 32) if quick else (8192, 4096)
    return Case(sum_columns_fn, [_randn(rows, cols, device=device)], f"[{rows},{cols}] dim=0", torch.float32,
                atol=1e-3, rtol=1e-4)


def _channel_stats(device: torch.device, quick: bool) -> Case:
    n, c, h, w = (2, 4, 6, 6) if quick else (64, 64, 56, 56)
    return Case(channel_stats_fn, [_randn(n, c, h, w, device=device)], f"var_mean [{n},{c},{h},{w}] dims (0,2,3)",
                torch.float32, atol=1e-4, rtol=1e-4)


def _cross_entropy(device: torch.device, quick: bool) -> Case:
    rows, classes = (32, 100) if quick else (4096, 32000)
    target = torch.randint(0, classes, (rows,), device=device)
    return Case(cross_entropy_fn, [_randn(rows, classes, device=device), target], f"[{rows},{classes}] mean",
                torch.float32, atol=1e-4, rtol=1e-4)


def _fp16_chain(device: torch.device, quick: bool) -> Case:
    n = 64 if quick else 4096
    x, y = _randn(n, n, device=device, dtype=torch.float16), _randn(n, n, device=device, dtype=torch.float16)
    return Case(fp16_chain_fn, [x, y], f"[{n},{n}]", torch.float16)


LAUNCHES = 32  # kernels of the `launches` workload


def _launches(device: torch.device, quick: bool) -> Case:
    xs = [_randn(256 if quick else 4096, device=device) for _ in range(LAUNCHES)]
    return Case(launches_fn, xs, f"{LAUNCHES} x sin of [{xs[0].numel()}]", torch.float32)


def _seed_toy(device: torch.device, quick: bool) -> Case:
    n = 32 if quick else 512
    x, y = _randn(n, n, device=device), _randn(n, n, device=device)
    return Case(seed_toy_fn, [x, y], f"[{n},{n}] add, reshape, matmul, sum, sigmoid", torch.float32,
                atol=1e-4, rtol=1e-4)


def _conv_bias(device: torch.device, quick: bool) -> Case:
    h, w = (12, 10) if quick else (90, 80)
    x, weight, b = _randn(10, h, w, device=device), _randn(10, 10, 3, 3, device=device), _randn(10, device=device)
    return Case(conv_bias_fn, [x, weight, b], f"conv2d [10,{h},{w}] * [10,10,3,3] + bias", torch.float32,
                atol=1e-4, rtol=1e-4)


def _gelu_erf(device: torch.device, quick: bool) -> Case:
    rows, cols = _rows(quick, 16384, 1024)
    return Case(gelu_erf_fn, [_randn(rows, cols, device=device)], f"[{rows},{cols}]", torch.float32)


def _swiglu_bf16(device: torch.device, quick: bool) -> Case:
    rows, cols = _rows(quick, 8192, 8192)
    x = _randn(rows, cols, device=device, dtype=torch.bfloat16)
    return Case(swiglu_fn, [x], f"silu(a) * b of [{rows},{cols}] halves", torch.bfloat16)


def _attention(device: torch.device, quick: bool) -> Case:
    batch, seq, dim = (2, 16, 96) if quick else (8, 512, 768)
    x = _randn(batch, seq, dim, device=device)
    w_qkv, w_out = _randn(dim, 3 * dim, device=device) * dim**-0.5, _randn(dim, dim, device=device) * dim**-0.5
    return Case(attention_fn, [x, w_qkv, w_out], f"[{batch},{seq},{dim}], 12 heads", torch.float32,
                atol=1e-4, rtol=1e-4)


MODELS: dict[str, Callable[[torch.device, bool], Case]] = {
    "seed_toy": _seed_toy,
    "conv_bias": _conv_bias,
    "gelu_erf": _gelu_erf,
    "swiglu_bf16": _swiglu_bf16,
    "attention": _attention,
    "pointwise_chain": _pointwise_chain,
    "mlp": _mlp,
    "bias_relu": _bias_relu,
    "transpose_add": _transpose_add,
    "cat3": _cat3,
    "softmax": _softmax,
    "softmax_1024": _softmax_1024,
    "softmax_32768": _softmax_32768,
    "log_softmax": _log_softmax,
    "layer_norm": _layer_norm,
    "layer_norm_1024": _layer_norm_1024,
    "rms_norm": _rms_norm,
    "sum_rows": _sum_rows,
    "sum_columns": _sum_columns,
    "channel_stats": _channel_stats,
    "cross_entropy": _cross_entropy,
    "fp16_chain": _fp16_chain,
    "launches": _launches,
}
