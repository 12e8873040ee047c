"""Reduction kernels end to end: buffer graph -> --convert-to-triton -> emit-python -> Triton
(the interpreter on CPU, the GPU where there is one), against torch. argmax/argmin must give
torch's index exactly (the first one on ties, the first NaN); the rest within dtype tolerance."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import torch

if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"  # before anything imports triton

import pytest  # noqa: E402
from xdsl.parser import Parser  # noqa: E402

from mlc.codegen.emit_python import emit_python  # noqa: E402
from mlc.codegen.runtime import load_call  # noqa: E402
from mlc.dialects.registry import make_context  # noqa: E402
from mlc.passes.to_triton import ConvertToTritonPass  # noqa: E402
from mlc.passes.split_reductions import SplitReductionsPass  # noqa: E402

_spec = importlib.util.spec_from_file_location("reduction_graphs", Path(__file__).parents[1] / "passes" / "reduction_graphs.py")
rg = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(rg)  # type: ignore[union-attr]

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
VAR = "%c = arith.constant 1.0 : f32\n%d = arith.subf %w, %c : f32\n%out = arith.divf %m2, %d : f32"
WIDEN = "%v = arith.extf %x : f16 to f32"
NARROW = "%out = arith.truncf %r : f32 to f16"


def run(text: str, inputs: list[torch.Tensor], split: bool = False) -> list[torch.Tensor]:
    ctx = make_context()
    module = Parser(ctx, text, "test.mlir").parse_module()
    if split:
        SplitReductionsPass().apply(ctx, module)
    ConvertToTritonPass().apply(ctx, module)
    module.verify()
    return list(load_call(emit_python(module))(list(inputs)))


def reduce_x(kind: str, x: torch.Tensor, dims: list[int], **node: str) -> torch.Tensor:
    (out,) = run(rg.reduction_graph(kind, list(x.shape), dims, **node), [x])
    return out


def randn(*shape: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(DEVICE)


@pytest.mark.parametrize("shape", [[3, 9], [2, 20000]], ids=["persistent", "looped"])
def test_sum_prod_amax_amin(shape: list[int]) -> None:
    x = randn(*shape)
    torch.testing.assert_close(reduce_x("sum", x, [1]), x.sum(1), rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(reduce_x("max", x, [1]), x.amax(1))
    torch.testing.assert_close(reduce_x("min", x, [1]), x.amin(1))
    y = 1 + 0.001 * x
    torch.testing.assert_close(reduce_x("prod", y, [1]), y.prod(1), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape", [[6, 50], [3, 20000]], ids=["persistent", "looped"])
def test_argmax_argmin_ties_give_the_first_index(shape: list[int]) -> None:
    x = torch.randint(0, 4, shape, generator=torch.Generator().manual_seed(1)).float().to(DEVICE)  # many ties
    assert torch.equal(reduce_x("argmax", x, [1]), x.argmax(1))
    assert torch.equal(reduce_x("argmin", x, [1]), x.argmin(1))
    x[0, 7] = x[0, 11] = float("nan")  # NaN wins, the first one
    x[1, 5] = float("-inf")
    assert torch.equal(reduce_x("argmax", x, [1]), x.argmax(1))
    assert torch.equal(reduce_x("argmin", x, [1]), x.argmin(1))
    assert torch.equal(reduce_x("max", x, [1]).isnan(), x.amax(1).isnan())


@pytest.mark.parametrize("shape", [[6, 40], [2, 20000]], ids=["persistent", "looped"])
def test_any(shape: list[int]) -> None:
    x = randn(*shape)
    x[0] = -1.0
    x[1, -1] = 5.0  # only the last element
    got = reduce_x("any", x, [1], prologue="%z = arith.constant 3.0 : f32\n%v = arith.cmpf ogt, %x, %z : f32", value="i1")
    assert torch.equal(got, (x > 3.0).any(1))


@pytest.mark.parametrize("shape", [[5, 100], [3, 20000]], ids=["persistent", "looped"])
def test_welford_mean_and_var(shape: list[int]) -> None:
    x = randn(*shape) * 3 + 10
    nodes = [rg.reduction_node("buf0", "welford", shape, [1]), rg.reduction_node("buf1", "welford", shape, [1], epilogue=VAR)]
    mean, var = run(rg.graph(nodes, shape, outputs=["buf0", "buf1"]), [x])
    torch.testing.assert_close(mean, x.mean(1), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(var, x.var(1), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape", [[300, 37], [1500, 20]], ids=["persistent", "looped"])
def test_columns(shape: list[int]) -> None:
    x = randn(*shape)
    torch.testing.assert_close(reduce_x("sum", x, [0]), x.sum(0), rtol=1e-5, atol=1e-4)
    assert torch.equal(reduce_x("argmin", x, [0]), x.argmin(0))


def test_several_reduced_dimensions() -> None:
    x = randn(3, 4, 50)
    torch.testing.assert_close(reduce_x("sum", x, [0, 2]), x.sum((0, 2)), rtol=1e-5, atol=1e-4)
    flat = x.permute(1, 0, 2).reshape(4, -1)  # argmax positions run over the flattened (0, 2)
    assert torch.equal(reduce_x("argmax", x, [0, 2]), flat.argmax(1))


@pytest.mark.parametrize("shape", [[4, 300], [4, 3000]], ids=["persistent", "looped"])
def test_half_inputs_accumulate_in_f32(shape: list[int]) -> None:
    x = randn(*shape).half()
    got = reduce_x("sum", x, [1], dtype="f16", prologue=WIDEN, value="f32", epilogue=NARROW, out_dtype="f16")
    assert got.dtype == torch.float16
    torch.testing.assert_close(got, x.sum(1), rtol=2e-3, atol=2e-2)


def test_integer_sum() -> None:
    x = torch.randint(-1000, 1000, (5, 2000), dtype=torch.int32, generator=torch.Generator().manual_seed(2)).to(DEVICE)
    got = reduce_x("sum", x, [1], dtype="i32", prologue="%v = arith.extsi %x : i32 to i64", value="i64")
    assert got.dtype == torch.int64 and torch.equal(got, x.sum(1))


def test_split_reductions() -> None:
    # 20000 elements into one (3 masked pieces, then their sum), and a split f16 amax.
    x = randn(20000)
    text = rg.reduction_graph("sum", [20000], [0])
    torch.testing.assert_close(run(text, [x], split=True)[0], x.sum(), rtol=1e-5, atol=1e-3)
    h = (x * 4).half()
    text = rg.reduction_graph("max", [20000], [0], dtype="f16")
    assert torch.equal(run(text, [h], split=True)[0], h.amax())
