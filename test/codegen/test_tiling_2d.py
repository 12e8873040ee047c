"""2-D tiled pointwise kernels (convert-to-triton with analysis/launch.py's select_tiling_2d) run through Triton.

Without a GPU the kernels run under Triton's interpreter on CPU: a transposed add at odd sizes
(masked edges along both tile dims), in f16, with a bias read along one tile dim only (a row
of pointers, masked by xmask alone), and a 3-D permute. Every config of the kernel is run.
"""

from __future__ import annotations

import os

import torch

if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"  # before anything imports triton

import pytest  # noqa: E402
import sympy  # noqa: E402

from mlc.analysis.launch import pointwise_configs_2d, select_tiling_2d  # noqa: E402
from mlc.codegen.emit_python import emit_python  # noqa: E402
from mlc.codegen.runtime import load_module  # noqa: E402
from mlc.dialects import triton  # noqa: E402
from mlc.dialects.registry import make_context  # noqa: E402
from mlc.dialects.sym import symbol  # noqa: E402
from mlc.passes.to_triton import ConvertToTritonPass  # noqa: E402
from mlc.tools.diagnostics import Source, parse_source  # noqa: E402

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
DTYPES = {torch.float32: "f32", torch.float16: "f16"}
i0, i1, i2 = symbol("i0"), symbol("i1"), symbol("i2")


def convert(text: str, **options: object):
    ctx = make_context()
    module = parse_source(ctx, Source("test.mlir", text))
    ConvertToTritonPass(**options).apply(ctx, module)  # type: ignore[arg-type]
    module.verify()
    return module


def kernel_of(module) -> triton.KernelOp:
    (k,) = [op for op in module.body.block.ops if isinstance(op, triton.KernelOp)]
    return k


def run_all_configs(module, inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    """The output under each of the kernel's configs (the interpreter takes the first one)."""
    kernel = kernel_of(module)
    mod = load_module(emit_python(module))
    name = f"{kernel.sym_name.data}_configs"
    outs = []
    for config in getattr(mod, name):
        setattr(mod, name, (config,))
        (out,) = mod.call(list(inputs))
        outs.append(out)
    return outs


def transposed_add(m: int, n: int, dtype: str, bias: bool = False) -> str:
    """out[m, n] = x.t() + y (+ b[n]) with x stored [n, m]."""
    b_in = f'buffer.input "arg2_1" #buffer.layout<[{n}], [1], {dtype}>' if bias else ""
    b_body = (f"%3 = buffer.load @arg2_1[i1] : {dtype}\n    %4 = arith.addf %2, %3 : {dtype}" if bias
              else f"%4 = arith.addf %2, %2 : {dtype}")
    return f"""
buffer.graph @forward {{
  buffer.input "arg0_1" #buffer.layout<[{n}, {m}], [{m}, 1], {dtype}>
  buffer.input "arg1_1" #buffer.layout<[{m}, {n}], [{n}, 1], {dtype}>
  {b_in}
  buffer.computed "buf0" #buffer.layout<[{m}, {n}], [{n}, 1], {dtype}> ranges [{m}, {n}] origins ["add"] {{
    %0 = buffer.load @arg0_1[i0 + {m}*i1] : {dtype}
    %1 = buffer.load @arg1_1[i1 + {n}*i0] : {dtype}
    %2 = arith.addf %0, %1 : {dtype}
    {b_body}
    buffer.store @buf0[i1 + {n}*i0], %4 : {dtype}
  }}
  buffer.output @buf0
}}"""


@pytest.mark.parametrize("m, n", [(64, 32), (67, 45), (33, 130)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_transposed_add(m: int, n: int, dtype: torch.dtype) -> None:
    module = convert(transposed_add(m, n, DTYPES[dtype]))
    kernel = kernel_of(module)
    assert kernel.is_tiled and int(kernel.ynumel.expr) == m and int(kernel.xnumel.expr) == n  # type: ignore[union-attr]
    x = torch.randn(n, m, device=DEVICE, dtype=dtype)
    y = torch.randn(m, n, device=DEVICE, dtype=dtype)
    expected = (x.t() + y) + (x.t() + y)
    for out in run_all_configs(module, [x, y]):
        torch.testing.assert_close(out, expected)


def test_bias_along_one_tile_dim() -> None:
    module = convert(transposed_add(67, 45, "f32", bias=True))
    text = str(kernel_of(module))
    assert "ynumel 67 xnumel 45" in text and "%in_ptr2[xindex] mask xmask evict_last" in text
    x, y, b = torch.randn(45, 67, device=DEVICE), torch.randn(67, 45, device=DEVICE), torch.randn(45, device=DEVICE)
    for out in run_all_configs(module, [x, y, b]):
        torch.testing.assert_close(out, x.t() + y + b)


def test_permute_3d() -> None:
    """x.permute(2, 0, 1) on [33, 40, 35]: unit stride along the outer output dim -> y 35, x 33*40."""
    text = """
buffer.graph @forward {
  buffer.input "arg0_1" #buffer.layout<[33, 40, 35], [1400, 35, 1], f16>
  buffer.computed "buf0" #buffer.layout<[35, 33, 40], [1320, 40, 1], f16> ranges [35, 33, 40] origins ["permute"] {
    %0 = buffer.load @arg0_1[i0 + 35*i2 + 1400*i1] : f16
    buffer.store @buf0[i2 + 40*i1 + 1320*i0], %0 : f16
  }
  buffer.output @buf0
}"""
    module = convert(text)
    kernel = kernel_of(module)
    assert kernel.is_tiled and int(kernel.ynumel.expr) == 35 and int(kernel.xnumel.expr) == 1320  # type: ignore[union-attr]
    x = torch.randn(33, 40, 35, device=DEVICE, dtype=torch.float16)
    for out in run_all_configs(module, [x]):
        assert torch.equal(out, x.permute(2, 0, 1))
    assert not kernel_of(convert(text, tile_2d=False)).is_tiled


def test_select_tiling_2d() -> None:
    transposed = [(i0 + 64 * i1, False), (i1 + 32 * i0, True)]
    assert select_tiling_2d([64, 32], transposed) == 1
    assert select_tiling_2d([64, 32], [(i1 + 32 * i0, False), (i1, False), (i1 + 32 * i0, True)]) is None  # coalesced
    assert select_tiling_2d([8, 64], [(i0 + 8 * i1, False), (i1 + 64 * i0, True)]) is None  # y group too small
    assert select_tiling_2d([64, 1, 32], [(i0 + 64 * i2, False), (i2 + 32 * i0, True)]) == 1  # size-1 dim
    s0, s1 = sympy.Symbol("s0"), sympy.Symbol("s1")
    assert select_tiling_2d([s0, 32], transposed) == 1  # a symbolic size counts at its hint
    assert select_tiling_2d([s0, s1], [(i0 + s0 * i1, False), (i1 + s1 * i0, True)]) == 1
    assert select_tiling_2d([s0, 8], [(i0 + s0 * i1, False), (i1 + 8 * i0, True)]) is None  # x group too small


def symbolic_transposed_add() -> str:
    """transposed_add over [s0, s1]: the sizes come first, as Dynamo passes them."""
    text = transposed_add(0, 0, "f32").replace("[0, 0], [0, 1]", "[s1, s0], [s0, 1]", 1)
    text = text.replace("[0, 0], [0, 1]", "[s0, s1], [s1, 1]").replace("ranges [0, 0]", "ranges [s0, s1]")
    text = text.replace("i0 + 0*i1", "i0 + s0*i1").replace("i1 + 0*i0", "i1 + s1*i0")
    return text.replace("buffer.graph @forward {", 'buffer.graph @forward {\n  buffer.size_input "s0_in" <s0>\n  buffer.size_input "s1_in" <s1>')


@pytest.mark.parametrize("m, n", [(67, 45), (33, 130), (2, 300)])
def test_transposed_add_over_symbolic_sizes(m: int, n: int) -> None:
    module = convert(symbolic_transposed_add())
    kernel = kernel_of(module)
    assert kernel.is_tiled and str(kernel.ynumel.expr) == "s0" and str(kernel.xnumel.expr) == "s1"  # type: ignore[union-attr]
    x, y = torch.randn(n, m, device=DEVICE), torch.randn(m, n, device=DEVICE)
    for out in run_all_configs(module, [m, n, x, y]):
        torch.testing.assert_close(out, (x.t() + y) * 2)


def test_y_programs_past_the_grid_limit_wrap_into_z(monkeypatch: pytest.MonkeyPatch) -> None:
    """A symbolic ynumel may need more y programs than CUDA allows: they wrap into the grid's z
    dimension and the kernel counts them back (here with the limit lowered to 2 programs)."""
    from mlc.codegen import triton_helpers

    monkeypatch.setattr(triton_helpers, "MAX_GRID_Y", 2)
    module = convert(symbolic_transposed_add())
    assert "tl.program_id(2) * tl.num_programs(1)" in emit_python(module)
    m, n = 200, 37  # 200 rows: 7 y programs of YBLOCK 32 -> grid y 2, z 4 (the last one masked off)
    assert triton_helpers._grid({"XBLOCK": 32, "YBLOCK": 32}, n, m) == (2, 2, 4)
    x, y = torch.randn(n, m, device=DEVICE), torch.randn(m, n, device=DEVICE)
    for out in run_all_configs(module, [m, n, x, y]):
        torch.testing.assert_close(out, (x.t() + y) * 2)


def test_configs_2d() -> None:
    sizes = [(c.block_sizes["YBLOCK"], c.block_sizes["XBLOCK"], c.num_warps.data) for c in pointwise_configs_2d(4096, 4096)]
    assert sizes == [(32, 32, 4), (64, 64, 8), (16, 256, 8), (256, 16, 8), (1, 1024, 4), (1024, 1, 4)]
    assert [c.block_sizes for c in pointwise_configs_2d(4096, 4096, autotune=False)] == [{"YBLOCK": 32, "XBLOCK": 32}]
    for c in pointwise_configs_2d(67, 45):  # clamped to the size hints (128 x 64)
        assert c.block_sizes["YBLOCK"] <= 128 and c.block_sizes["XBLOCK"] <= 64
    for c in pointwise_configs_2d(2**24, 64):  # the y grid stays within 65535
        assert -(-2**24 // c.block_sizes["YBLOCK"]) <= 65535
