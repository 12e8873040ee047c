"""fold-addmm on imported graphs: which adds of an mm fold, and that the backend with the pass
first in its pipeline still matches eager, forward and backward (Triton's interpreter without
a GPU, as in test/e2e)."""

from __future__ import annotations

import os

import torch

if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"  # read when triton.jit runs: before mlc's runtime loads

from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.fx.experimental.proxy_tensor import make_fx  # noqa: E402

import mlc  # noqa: E402
from mlc.frontend.importer import import_graph  # noqa: E402
from mlc.passes.registry import DEFAULT_PIPELINE  # noqa: E402

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
TOL = {"atol": 1e-4, "rtol": 1e-4}


@pytest.fixture(autouse=True)
def _seed() -> None:
    assert DEFAULT_PIPELINE.startswith("cse-aten,fold-addmm,")  # the backend's pipeline folds first (after cse-aten)
    torch.manual_seed(0)


def rand(*shape: int, grad: bool = False) -> torch.Tensor:
    return torch.randn(*shape, device=DEVICE).requires_grad_(grad)


def ops_after_fold(fn: Callable[..., torch.Tensor], *args: torch.Tensor) -> list[str]:
    """The aten ops of `fn`'s graph (traced with no decompositions) after fold-addmm."""
    module = import_graph(make_fx(fn, decomposition_table={})(*args)).module
    mlc.run_passes(module, "fold-addmm")
    return [op.name for op in module.walk() if op.name.startswith("aten.")]


CASES = {
    # name: (program, inputs, whether the add folds)
    "two_products": (lambda g1, w1, g2, w2: g1 @ w1 + g2 @ w2, [(8, 32), (32, 64), (8, 16), (16, 64)], True),
    "bias_returned": (lambda a, b, bias: a @ b + bias, [(8, 32), (32, 64), (64,)], True),
    "bias_into_relu": (lambda a, b, bias: torch.relu(a @ b + bias), [(8, 32), (32, 64), (64,)], False),
    "alpha_two": (lambda a, b, c: torch.add(a @ b, c, alpha=2), [(8, 32), (32, 64), (8, 64)], False),
}


@pytest.mark.parametrize("name", CASES)
def test_fold_matches_eager(name: str) -> None:
    fn, shapes, folds = CASES[name]
    args = [rand(*s) for s in shapes]
    names = ops_after_fold(fn, *args)
    assert ("aten.addmm" in names) == folds, names
    assert ("aten.add.Tensor" in names) != folds, names
    gm = make_fx(fn, decomposition_table={})(*args)
    torch.testing.assert_close(mlc.compile_fx(gm, args)(*args), fn(*args), **TOL)


def swiglu(x: torch.Tensor, w1: torch.Tensor, w3: torch.Tensor) -> torch.Tensor:
    return F.silu(x @ w1.t()) * (x @ w3.t())


def qkv(x: torch.Tensor, wq: torch.Tensor, wk: torch.Tensor, wv: torch.Tensor) -> torch.Tensor:
    return torch.tanh(x @ wq.t()) * torch.sigmoid(x @ wk.t()) * (x @ wv.t())


@pytest.mark.parametrize("fn, n_weights", [(swiglu, 2), (qkv, 3)], ids=["swiglu", "qkv"])
def test_input_grad_of_shared_input(fn: Callable[..., torch.Tensor], n_weights: int, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """x feeds several Linear layers: x.grad sums their products, which fold into addmms."""
    monkeypatch.setenv("MLC_DUMP_DIR", str(tmp_path))
    torch._dynamo.reset()
    x, *ws = [rand(8, 32, grad=True)] + [rand(64, 32, grad=True) for _ in range(n_weights)]
    eager_in = [t.detach().clone().requires_grad_() for t in (x, *ws)]
    mlc_in = [t.detach().clone().requires_grad_() for t in (x, *ws)]
    expected = fn(*eager_in)
    actual = torch.compile(fn, backend="mlc", fullgraph=True, dynamic=False)(*mlc_in)
    torch.testing.assert_close(actual, expected, **TOL)
    expected.sum().backward()
    actual.sum().backward()
    for e, a in zip(eager_in, mlc_in):
        torch.testing.assert_close(a.grad, e.grad, **TOL)
    folded = [p.read_text().count("aten.addmm") for p in tmp_path.glob("graph_*/[0-9][0-9]-fold-addmm.mlir")]
    assert sum(folded) == n_weights - 1, folded  # x.grad: n products, n - 1 adds
