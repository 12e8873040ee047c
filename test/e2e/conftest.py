"""End-to-end tests: programs through `torch.compile(fn, backend="mlc")`, checked against eager.

Without a GPU the generated Triton kernels run under Triton's interpreter on CPU tensors;
`TRITON_INTERPRET` is read when a function is decorated with `@triton.jit`, so it is set here,
before any test module (or mlc's runtime) can import triton. With a GPU the same tests run the
kernels on CUDA (`MLC_TEST_DEVICE=cuda`, or automatically when CUDA is available).

Helpers are fixtures (`check`, `check_grad`, `device`, `make`) because conftest modules are not
importable under `--import-mode=importlib`.
"""

from __future__ import annotations

import os

import torch

if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"

from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import pytest  # noqa: E402

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)


def compile_mlc(fn: Callable[..., Any]) -> Callable[..., Any]:
    # fullgraph: the whole program goes to mlc (no graph break runs a piece eagerly);
    # dynamic=False: a re-specialisation never reaches mlc as a symbolic-shape graph.
    return torch.compile(fn, backend="mlc", fullgraph=True, dynamic=False)


def _tolerances(outputs: Any, atol: float | None, rtol: float | None) -> dict[str, float]:
    if atol is not None or rtol is not None:
        return {"atol": atol if atol is not None else 1e-5, "rtol": rtol if rtol is not None else 1.3e-6}
    leaves = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    dtypes = {t.dtype for t in leaves if isinstance(t, torch.Tensor)}
    if dtypes & {torch.float16, torch.bfloat16}:
        # Eager rounds to 16 bits after every op; a fused kernel may keep float32 in between.
        return {"atol": 1e-2, "rtol": 1e-2}
    # float32 transcendental functions differ by an ulp or two between numpy, libdevice and ATen.
    return {"atol": 1e-5, "rtol": 1e-5}


def _check(fn: Callable[..., Any], *args: Any, atol: float | None = None, rtol: float | None = None) -> Any:
    expected = fn(*args)
    actual = compile_mlc(fn)(*args)
    torch.testing.assert_close(actual, expected, equal_nan=True, **_tolerances(expected, atol, rtol))
    return actual


def _check_grad(fn: Callable[..., Any], *args: Any, atol: float | None = None, rtol: float | None = None) -> None:
    """Forward and `.sum().backward()` through mlc match eager: outputs and every input's grad."""

    def fresh() -> list[Any]:
        return [
            a.detach().clone().requires_grad_(a.requires_grad) if isinstance(a, torch.Tensor) else a
            for a in args
        ]

    def run(f: Callable[..., Any], inputs: list[Any]) -> Any:
        out = f(*inputs)
        leaves = out if isinstance(out, (list, tuple)) else [out]
        sum(o.float().sum() * (k + 1) for k, o in enumerate(leaves)).backward()
        return out

    eager_in, mlc_in = fresh(), fresh()
    expected = run(fn, eager_in)
    actual = run(compile_mlc(fn), mlc_in)
    tol = _tolerances(expected, atol, rtol)
    torch.testing.assert_close(actual, expected, **tol)
    for e, a in zip(eager_in, mlc_in):
        if isinstance(e, torch.Tensor) and e.requires_grad:
            assert a.grad is not None, "no gradient reached an input through the mlc graph"
            torch.testing.assert_close(a.grad, e.grad, **tol)


@pytest.fixture
def device() -> torch.device:
    return DEVICE


@pytest.fixture
def check() -> Callable[..., Any]:
    """`check(fn, *args, atol=..., rtol=...)`: compile with mlc, run, compare with eager."""
    return _check


@pytest.fixture
def check_grad() -> Callable[..., Any]:
    """`check_grad(fn, *args)`: also backward through mlc; compare input gradients."""
    return _check_grad


@pytest.fixture
def compile() -> Callable[..., Any]:
    return compile_mlc


@pytest.fixture
def make() -> Callable[..., torch.Tensor]:
    """`make(*shape, dtype=..., low=..., high=..., grad=False)`: a random tensor on the test device."""

    def make(*shape: int, dtype: torch.dtype = torch.float32, low: float = -3.0, high: float = 3.0,
             grad: bool = False) -> torch.Tensor:
        if dtype == torch.bool:
            t = torch.rand(shape, device=DEVICE) > 0.5
        elif dtype.is_floating_point:
            t = (torch.rand(shape, device=DEVICE) * (high - low) + low).to(dtype)
        else:
            t = torch.randint(int(low), int(high) + 1, shape, device=DEVICE, dtype=dtype)
        return t.requires_grad_(grad)

    return make
