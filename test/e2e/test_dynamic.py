"""Dynamic shapes: one mlc compile serves every size (`torch.compile(dynamic=True)`).

Sizes reach mlc as symbols (`s0`, `s1`): the kernels take them as arguments and mask by them,
the wrapper reads them from the inputs, and every decision that depends on a size takes the
variant that is right for all sizes (looped reductions, no split, 64-bit positions). Each
program runs at four sizes, odd ones included, against eager, and must compile once: one
forward graph (and one backward where it trains).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn.functional as F

ROWS_COLS = [(3, 17), (17, 130), (64, 5), (33, 64)]
DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


@pytest.fixture(autouse=True)
def _on_device() -> Any:
    with torch.device(DEVICE):  # every tensor and module these tests make, on the GPU when there is one
        yield


def compiles_once(fn: Callable[..., Any], inputs: Sequence[Sequence[torch.Tensor]], dump: Path,
                  grad: bool = False, tol: float = 1e-4) -> None:
    """`fn` through mlc with dynamic shapes matches eager on every set of inputs (forward and,
    with `grad`, every input's gradient), and mlc compiled one graph per kind."""
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="mlc", dynamic=True, fullgraph=True)
    for args in inputs:
        args = [a.detach().clone().requires_grad_(grad) for a in args]
        twins = [a.detach().clone().requires_grad_(grad) for a in args]
        out, expected = compiled(*args), fn(*twins)
        torch.testing.assert_close(out, expected, atol=tol, rtol=tol)
        if grad:
            out.sum().backward()
            expected.sum().backward()
            for a, t in zip(args, twins):
                torch.testing.assert_close(a.grad, t.grad, atol=tol, rtol=tol)
    kinds = sorted(p.name.split("_", 2)[2] for p in dump.glob("graph_*"))
    assert kinds == (["backward", "forward"] if grad else ["inference"]), kinds


@pytest.fixture
def dump(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MLC_DUMP_DIR", str(tmp_path))
    return tmp_path


def rows(*, vector: bool = True) -> list[list[torch.Tensor]]:
    return [[torch.randn(r, c), torch.randn(c)] if vector else [torch.randn(r, c)] for r, c in ROWS_COLS]


PROGRAMS: dict[str, Callable[..., Any]] = {
    "gelu_bias": lambda x, b: F.gelu(x + b),
    "sum_rows": lambda x, b: (x * b).sum(1),
    "sum_columns": lambda x, b: (x * b).sum(0),
    "softmax": lambda x, b: torch.softmax(x + b, -1),
    "layer_norm": lambda x, b: F.layer_norm(x, x.shape[-1:], b, b),
    "mean_var": lambda x, b: (x - x.mean(-1, keepdim=True)) * b + torch.var(x, 0),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_forward(name: str, dump: Path) -> None:
    compiles_once(PROGRAMS[name], rows(), dump)


# Lengths on both sides of each persistent bound: 1024 for rows, 64 for columns (OUTER).
ACROSS_BOUNDS = [(3, 1500), (17, 1024), (5, 1025), (33, 700), (64, 40), (130, 65)]


@pytest.mark.parametrize("name", PROGRAMS)
def test_persistent_up_to_the_bound_looped_above(name: str, dump: Path) -> None:
    """A reduction over a symbolic length runs a persistent kernel (R0_BLOCK chosen at launch)
    up to the bound and a looped one above it; every length matches eager."""
    inputs = [[torch.randn(r, c), torch.randn(c)] for r, c in ACROSS_BOUNDS]
    compiles_once(PROGRAMS[name], inputs, dump)
    [source] = [p.read_text() for p in dump.glob("graph_*_inference/module.py")]
    if name != "gelu_bias":
        assert re.search(r"if s\d <= (1024|64):", source), source
        assert "def triton_per_" in source and "def triton_red_" in source


VIEWS: dict[str, Callable[..., Any]] = {
    "reshape": lambda x: (x.view(-1) * 2).view(x.shape[0], -1).sum(1),
    "transpose": lambda x: x.t().contiguous() + 1,
    "cat": lambda x: torch.cat([x, x * 2], 0) + 1,
    "slice": lambda x: x[1:, :3] * 2,
}


@pytest.mark.parametrize("name", VIEWS)
def test_views(name: str, dump: Path) -> None:
    compiles_once(VIEWS[name], rows(vector=False), dump)


def test_the_passes_goldens_program(dump: Path) -> None:
    """The program of the symbolic lit goldens (test/lit/passes/*/dynamic.mlir): a view to rows
    of 32, a bias and relu, the view back to [s0, s1, 32], a softmax and a sum over s1."""

    def fn(x: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        z = (x.view(-1, 32) + b).relu().view(x.shape[0], x.shape[1], 32)
        return torch.softmax(z, -1), z.sum(1)

    compiles_once(fn, [[torch.randn(n, m, 32), torch.randn(32)] for n, m in [(3, 5), (4, 7), (9, 2), (5, 33)]], dump)


def test_broadcasting_over_two_dynamic_sizes(dump: Path) -> None:
    inputs = [[torch.randn(r, c), torch.randn(k)] for (r, c), k in zip(ROWS_COLS, [4, 11, 5, 3])]
    compiles_once(lambda x, y: x[:, None, :] * y[None, :, None], inputs, dump)


@pytest.mark.parametrize("name", ["gelu", "softmax", "layer_norm"])
def test_backward(name: str, dump: Path) -> None:
    fn = {"gelu": F.gelu, "softmax": lambda x: torch.softmax(x, -1),
          "layer_norm": lambda x: F.layer_norm(x, x.shape[-1:])}[name]
    compiles_once(fn, rows(vector=False), dump, grad=True)


class Block(torch.nn.Module):
    """A pre-norm transformer block: attention and an MLP, both residual."""

    def __init__(self, dim: int = 32, heads: int = 2):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = torch.nn.LayerNorm(dim), torch.nn.LayerNorm(dim)
        self.qkv, self.proj = torch.nn.Linear(dim, 3 * dim), torch.nn.Linear(dim, dim)
        self.up, self.down = torch.nn.Linear(dim, 4 * dim), torch.nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


def test_transformer_block_trains_at_every_batch_and_length(dump: Path) -> None:
    torch.manual_seed(0)
    block = Block()
    eager = Block()
    eager.load_state_dict(block.state_dict())
    compiled = torch.compile(block, backend="mlc", dynamic=True, fullgraph=True)
    torch._dynamo.reset()
    for batch, seq in [(2, 7), (3, 16), (5, 33), (4, 9)]:
        x = torch.randn(batch, seq, 32)
        out, expected = compiled(x), eager(x)
        torch.testing.assert_close(out, expected, atol=1e-4, rtol=1e-4)
        out.square().mean().backward()
        expected.square().mean().backward()
        for (name, p), q in zip(block.named_parameters(), eager.parameters()):
            torch.testing.assert_close(p.grad, q.grad, atol=1e-4, rtol=1e-4, msg=name)
            p.grad, q.grad = None, None
    kinds = sorted(p.name.split("_", 2)[2] for p in dump.glob("graph_*"))
    assert kinds == ["backward", "forward"], kinds


def test_a_number_dynamo_passes_as_a_tensor_is_checked_at_each_call(dump: Path) -> None:
    """Under dynamic=True a LayerNorm's eps reaches mlc as a tensor read with `.item()`: mlc
    compiles with the traced value and sizes symbolic, and a call with another eps (Dynamo
    does not guard on it) is not run with the traced one."""
    torch._dynamo.reset()
    norm = torch.nn.LayerNorm(8).requires_grad_(False)
    compiled = torch.compile(norm, backend="mlc", dynamic=True, fullgraph=True)
    for rows in (3, 5, 9):
        x = torch.randn(rows, 8)
        torch.testing.assert_close(compiled(x), norm(x), atol=1e-5, rtol=1e-5)
    assert len(list(dump.glob("graph_*"))) == 1
    norm.eps = 0.5
    x = torch.randn(4, 8)
    torch.testing.assert_close(compiled(x), norm(x), atol=1e-5, rtol=1e-5)


def _graphs(dump: Path) -> list[str]:
    """The dumped graphs' aten IR, in compile order."""
    return [(p / "00-aten.mlir").read_text() for p in sorted(dump.glob("graph_*"), key=lambda p: int(p.name.split("_")[1]))]


def _run_rows(compiled: Callable[..., Any], fn: Callable[..., Any], row_counts: Sequence[int],
              mark: bool = False) -> None:
    for n in row_counts:
        x, b = torch.randn(n, 24), torch.randn(24)
        if mark:
            torch._dynamo.mark_dynamic(x, 0)
        torch.testing.assert_close(compiled(x, b), fn(x, b), atol=1e-5, rtol=1e-5)


def test_mark_dynamic_compiles_once_with_a_symbolic_dim(dump: Path) -> None:
    """`mark_dynamic(x, 0)` without `dynamic=True`: one graph, its rows a symbol, the
    columns static."""
    torch._dynamo.reset()
    fn = PROGRAMS["softmax"]
    _run_rows(torch.compile(fn, backend="mlc", fullgraph=True), fn, [3, 17, 64, 33], mark=True)
    graphs = _graphs(dump)
    assert len(graphs) == 1 and "tensor<?x24xf32, #sym.sizes<[s0, 24]>>" in graphs[0], graphs


def test_automatic_dynamic_recompiles_once_then_serves_every_size(dump: Path) -> None:
    """Dynamo's default: the first size is compiled static; a second size recompiles the graph
    with that dim symbolic, and that graph serves every later size."""
    torch._dynamo.reset()
    fn = PROGRAMS["layer_norm"]
    _run_rows(torch.compile(fn, backend="mlc", fullgraph=True), fn, [3, 17, 64, 33, 130])
    graphs = _graphs(dump)
    assert len(graphs) == 2, [g[:200] for g in graphs]
    assert "#sym.sizes" not in graphs[0] and "tensor<?x24xf32, #sym.sizes<[s0, 24]>>" in graphs[1]


def test_sizes_one_is_specialised_as_dynamo_does(dump: Path) -> None:
    """Dynamo never makes a size-1 dim symbolic (it broadcasts): a call with one row compiles a
    graph of its own, and both graphs keep matching eager."""
    torch._dynamo.reset()
    fn = PROGRAMS["sum_columns"]
    _run_rows(torch.compile(fn, backend="mlc", dynamic=True, fullgraph=True), fn, [3, 17, 1, 5])
    graphs = _graphs(dump)
    assert len(graphs) == 2 and "tensor<?x?xf32, #sym.sizes<[s0, s1]>>" in graphs[0], graphs
    assert "tensor<1x?xf32, #sym.sizes<[1, s0]>>" in graphs[1], graphs  # one row; columns still symbolic
