"""convert-to-triton: the decisions behind the kernels (configs, names, indices, pointers, wrapper)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import sympy
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import PassFailedException

from mlc.analysis.launch import has_constant_mask, pointwise_configs
from mlc.dialects import buffer, triton
from mlc.dialects.registry import make_context
from mlc.dialects.sym import FloorDiv, ModularIndexing, symbol
from mlc.passes.to_triton import ConvertToTritonPass, dimension_indices, kernel_base_name
from mlc.passes.registry import PASSES

XINDEX = symbol("xindex")

# The numpy interpreters next to this file (a plain module: test/ is not a package).
_spec = importlib.util.spec_from_file_location("triton_interp", Path(__file__).with_name("triton_interp.py"))
triton_interp = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(triton_interp)  # type: ignore[union-attr]


def configs(numel: int | sympy.Expr, autotune: bool = True) -> list[tuple[int, int]]:
    return [(c.block_sizes["XBLOCK"], c.num_warps.data) for c in pointwise_configs(sympy.sympify(numel), autotune)]


def convert(text: str, **options: object) -> ModuleOp:
    ctx = make_context()
    module = Parser(ctx, text, "test.mlir").parse_module()
    module.verify()
    ConvertToTritonPass(**options).apply(ctx, module)  # type: ignore[arg-type]
    module.verify()
    return module


def kernels(module: ModuleOp) -> list[triton.KernelOp]:
    return [op for op in module.body.block.ops if isinstance(op, triton.KernelOp)]


def wrapper(module: ModuleOp) -> triton.WrapperOp:
    (w,) = [op for op in module.body.block.ops if isinstance(op, triton.WrapperOp)]
    return w


def graph(*nodes: str, inputs: str = "", outputs: str = "@buf0") -> str:
    return f"buffer.graph @forward {{\n{inputs}\n{chr(10).join(nodes)}\nbuffer.output {outputs}\n}}"


L64 = "#buffer.layout<[64], [1], f32>"
IN_XY = f'buffer.input "x" {L64}\nbuffer.input "y" {L64}'


def node(name: str, body: str, origins: str = '["add"]', ranges: str = "[64]", layout: str = L64) -> str:
    return f'buffer.computed "{name}" {layout} ranges {ranges} origins {origins} {{\n{body}\n}}'


ADD = """%0 = buffer.load @{a}[i0] : f32
%1 = buffer.load @{b}[i0] : f32
%2 = arith.addf %0, %1 : f32
buffer.store @{out}[i0], %2 : f32"""


# ---------------------------------------------------------------------------------------------
# Launch configurations: Inductor's pointwise heuristic


@pytest.mark.parametrize(
    "numel, expected",
    [
        (2**20, [(1024, 4), (512, 8)]),  # the example of inductor-rules section 6
        (100_000, [(1024, 4), (512, 8)]),  # size hint 131072
        (512, [(256, 4), (128, 4)]),  # at least 4 warps from 128 elements on
        (1000, [(256, 4), (128, 4)]),
        (64, [(64, 1)]),  # both configs clamp to the size hint: benchmarked once
        (1, [(1, 1)]),
    ],
)
def test_pointwise_configs(numel: int, expected: list[tuple[int, int]]) -> None:
    assert configs(numel) == expected


def test_configs_without_autotuning_and_symbolic_numel() -> None:
    assert configs(2**20, autotune=False) == [(1024, 4)]
    # symbols: the configs of the size hint 8192 and of a large size, the autotuner picks per size
    assert configs(symbol("s0") * 64) == [(256, 4), (128, 4), (1024, 4), (512, 8)]
    assert configs(symbol("s0") * 64, autotune=False) == [(256, 4)]


@pytest.mark.parametrize("numel", [1, 3, 100, 4097, 2**16, 10**7])
def test_configs_are_powers_of_two(numel: int) -> None:
    for c in pointwise_configs(sympy.Integer(numel)):
        for v in (*c.block_sizes.values(), c.num_warps.data):
            assert v & (v - 1) == 0


# ---------------------------------------------------------------------------------------------
# Names, indices, masks


def test_kernel_names_sort_and_deduplicate_origins() -> None:
    assert kernel_base_name("pointwise", ["mul", "add", "mul"]) == "triton_poi_fused_add_mul"
    assert kernel_base_name("pointwise", []) == "triton_poi_fused"
    assert kernel_base_name("pointwise", ["_softmax", "add.Tensor"]) == "triton_poi_fused__softmax_add_Tensor"


def test_dimension_indices() -> None:
    n = [sympy.Integer(v) for v in (8, 1, 4, 16)]
    assert dimension_indices(n) == [FloorDiv(XINDEX, 64), 0, ModularIndexing(XINDEX, 16, 4), ModularIndexing(XINDEX, 1, 16)]
    assert dimension_indices([sympy.Integer(512)]) == [XINDEX]
    assert dimension_indices([sympy.Integer(1), sympy.Integer(7)]) == [0, XINDEX]
    s0 = symbol("s0")
    assert dimension_indices([s0, sympy.Integer(3)]) == [FloorDiv(XINDEX, 3), ModularIndexing(XINDEX, 1, 3)]


def test_constant_mask_only_when_every_block_divides_numel() -> None:
    assert has_constant_mask(sympy.Integer(4096)) and has_constant_mask(sympy.Integer(3 * 4096))
    assert has_constant_mask(sympy.Integer(1))
    assert not has_constant_mask(sympy.Integer(2048)) and not has_constant_mask(symbol("s0"))


# ---------------------------------------------------------------------------------------------
# The pass


def test_registered() -> None:
    assert PASSES["convert-to-triton"]() is ConvertToTritonPass
    assert list(PASSES)[-2:] == ["cse", "plan-buffers"]


def test_pointer_order_inputs_by_first_use_then_outputs() -> None:
    text = graph(
        node("buf0", ADD.format(a="y", b="x", out="buf0")),
        inputs=IN_XY,
    )
    (k,) = kernels(convert(text))
    assert k.arg_names == ["in_ptr0", "in_ptr1", "out_ptr0"]
    (launch,) = [op for op in wrapper(convert(text)).body.block.ops if isinstance(op, triton.LaunchOp)]
    assert launch.arg_names == ["y", "x", "buf0"]


def test_names_count_distinct_kernels_and_reuse_identical_ones() -> None:
    text = graph(
        node("buf0", ADD.format(a="x", b="y", out="buf0"), '["add"]'),
        node("buf1", ADD.format(a="buf0", b="y", out="buf1"), '["add_1", "mul"]'),
        node("buf2", ADD.format(a="x", b="x", out="buf2"), '["add"]'),
        inputs=IN_XY,
        outputs="@buf1, @buf2",
    )
    module = convert(text)
    names = [k.sym_name.data for k in kernels(module)]
    # buf1 is buf0's kernel with other buffers: reused; buf2 reads x twice: a new kernel.
    assert names == ["triton_poi_fused_add_0", "triton_poi_fused_add_1"]
    launches = [op.kernel_name for op in wrapper(module).body.block.ops if isinstance(op, triton.LaunchOp)]
    assert launches == ["triton_poi_fused_add_0", "triton_poi_fused_add_0", "triton_poi_fused_add_1"]


def test_deterministic_and_round_trips() -> None:
    text = graph(
        node("buf0", ADD.format(a="x", b="y", out="buf0")),
        node("buf1", ADD.format(a="buf0", b="x", out="buf1"), '["mul"]'),
        inputs=IN_XY,
        outputs="@buf1",
    )
    first, second = str(convert(text)), str(convert(text))
    assert first == second
    assert str(Parser(make_context(), first).parse_module()) == first


def test_fused_group_keeps_its_intermediate_in_registers() -> None:
    fused = "buffer.fused {\n" + node("buf0", ADD.format(a="x", b="y", out="buf0")) + "\n" + node(
        "buf1", ADD.format(a="buf0", b="buf0", out="buf1"), '["mul"]'
    ) + "\n}"
    module = convert(graph(fused, inputs=IN_XY, outputs="@buf1"))
    (k,) = kernels(module)
    assert k.sym_name.data == "triton_poi_fused_add_mul_0"
    assert k.arg_names == ["in_ptr0", "in_ptr1", "out_ptr0"]
    assert len([op for op in k.body.block.ops if isinstance(op, triton.LoadOp)]) == 2
    allocs = [op.buffer.data for op in wrapper(module).body.block.ops if isinstance(op, triton.AllocOp)]
    assert allocs == ["buf1"]


def test_fused_group_storing_an_output_still_stores_it() -> None:
    fused = "buffer.fused {\n" + node("buf0", ADD.format(a="x", b="y", out="buf0")) + "\n" + node(
        "buf1", ADD.format(a="buf0", b="x", out="buf1"), '["mul"]'
    ) + "\n}"
    (k,) = kernels(convert(graph(fused, inputs=IN_XY, outputs="@buf1, @buf0")))
    assert k.arg_names == ["in_ptr0", "in_ptr1", "out_ptr0", "out_ptr1"]


def test_frees_after_last_use_inputs_too_but_not_outputs() -> None:
    # y dies with its last read (a backward's saved activation is freed there); x is returned.
    text = graph(
        node("buf0", ADD.format(a="x", b="y", out="buf0")),
        node("buf1", ADD.format(a="buf0", b="x", out="buf1")),
        node("buf2", ADD.format(a="buf1", b="y", out="buf2")),
        inputs=IN_XY,
        outputs="@buf2, @x",
    )
    ops = [op for op in wrapper(convert(text)).body.block.ops]
    frees = [(i, op.freed) for i, op in enumerate(ops) if isinstance(op, triton.FreeOp)]
    kinds = [op.name.split(".")[1] for op in ops]
    assert kinds == ["input", "input", "alloc", "launch", "alloc", "launch", "free", "alloc", "launch", "free", "return"]
    assert [f for _, f in frees] == [["buf0"], ["y", "buf1"]]


def test_symbolic_sizes() -> None:
    layout = "#buffer.layout<[s0, 4], [4, 1], f32>"
    text = graph(
        node("buf0", ADD.format(a="x", b="x", out="buf0").replace("[i0]", "[i1 + 4*i0]"), ranges="[s0, 4]", layout=layout),
        inputs=f'buffer.input "x" {layout}',
    )
    (k,) = kernels(convert(text))
    assert str(k.xnumel.expr) == "4*s0"
    # A contiguous walk over [s0, 4] is one flat index: no per-dim symbols are needed.
    assert not [op for op in k.body.block.ops if isinstance(op, triton.IndexOp)]
    (load,) = [op for op in k.body.block.ops if isinstance(op, triton.LoadOp)]
    assert load.index.expr == XINDEX
    assert load.masks == ["xmask"]


@pytest.mark.parametrize(
    "text, message",
    [
        (
            graph(
                "buffer.fused {\n"
                'buffer.computed "buf0" #buffer.layout<[8], [1], f32> ranges [8] reduce [8] {\n'
                "%0 = buffer.load @x[r0_0 + 8*i0] : f32\n%1 = buffer.reduce sum %0 : f32 -> f32\n"
                "buffer.store @buf0[i0], %1 : f32\n}\n"
                + node("buf1", "%0 = arith.constant 1.0 : f32\nbuffer.store @buf1[i0], %0 : f32", ranges="[5]",
                       layout="#buffer.layout<[5], [1], f32>")
                + "\n}",
                inputs=f'buffer.input "x" {L64}',
                outputs="@buf0, @buf1",
            ),
            "'buf1' (5 elements) does not tile as 8 x 8 with the reduction it is fused with",
        ),
        (
            graph(
                "buffer.fused {\n"
                + node("buf0", ADD.format(a="x", b="y", out="buf0"))
                + "\n"
                + node("buf1", "%0 = arith.constant 1.0 : f32\nbuffer.store @buf1[i0], %0 : f32", ranges="[8]",
                       layout="#buffer.layout<[8], [1], f32>")
                + "\n}",
                inputs=IN_XY,
            ),
            "fused members iterate different numels: buf0 (64), buf1 (8)",
        ),
    ],
)
def test_unsupported_input_names_the_node(text: str, message: str) -> None:
    with pytest.raises(PassFailedException, match=message.replace("(", r"\(").replace(")", r"\)")):
        convert(text)


# ---------------------------------------------------------------------------------------------
# Numerics: running the kernels block by block gives the buffers the graph defines


LIT = Path(__file__).parents[1] / "lit" / "passes" / "convert-to-triton"


def _check_numerics(text: str, outputs_only: bool = False) -> None:
    ctx = make_context()
    module = Parser(ctx, text, "test.mlir").parse_module()
    (g,) = [op for op in module.body.block.ops if isinstance(op, buffer.GraphOp)]
    inputs = triton_interp.random_inputs(g)
    expected = triton_interp.run_buffer_graph(g, inputs)
    outputs = [op for op in g.body.block.ops if isinstance(op, buffer.OutputOp)][0].names
    ConvertToTritonPass().apply(ctx, module)
    for config in range(2):  # every config must compute the same
        got = triton_interp.run_triton(module, inputs, config)
        for name in outputs:
            np.testing.assert_allclose(got[name], expected[name], rtol=1e-6, err_msg=name)


# Golden tests of graphs this interpreter cannot run: index-bits.mlir's tensors have 2^31
# elements (test_elementwise.py::test_positions_past_int32 runs such a graph on a GPU);
# dynamic.mlir's sizes are symbols (test_dynamic.py::test_the_passes_goldens_program runs its
# program at four sizes through Triton's interpreter against eager); this interpreter has no
# GEMM (matmul kernels, buffer.dot): test/e2e/test_gemm.py runs them through Triton's
# interpreter against eager, at sizes that cross every tile threshold.
NOT_RUN_HERE = {"index-bits.mlir", "dynamic.mlir", "matmul.mlir", "matmul-measure.mlir"}


def _computes(path: Path) -> bool:
    """Golden tests of working graphs (not of errors, which --verify-diagnostics checks)."""
    return "--verify-diagnostics" not in path.read_text().splitlines()[0] and path.name not in NOT_RUN_HERE


@pytest.mark.parametrize("path", sorted(p for p in LIT.glob("*.mlir") if _computes(p)), ids=lambda p: p.name)
def test_lit_inputs_compute_the_same(path: Path) -> None:
    for case in path.read_text().split("// -----"):  # --split-input-file cases
        _check_numerics(case)


def test_fused_group_with_broadcast_and_odd_numel_computes_the_same() -> None:
    layout = "#buffer.layout<[3, 1, 37], [37, 37, 1], f32>"
    body = """%0 = buffer.load @x[i2 + 37*i0] : f32
%1 = buffer.load @b[i2] : f32
%2 = arith.mulf %0, %1 : f32
buffer.store @buf0[i2 + 37*i0], %2 : f32"""
    body2 = """%0 = buffer.load @buf0[i2 + 37*i0] : f32
%1 = buffer.load @x[36 - i2 + 37*i0] : f32
%2 = arith.subf %0, %1 : f32
buffer.store @buf1[i2 + 37*i0], %2 : f32"""
    fused = "buffer.fused {\n" + node("buf0", body, ranges="[3, 1, 37]", layout=layout) + "\n" + node(
        "buf1", body2, '["sub"]', ranges="[3, 1, 37]", layout=layout) + "\n}"
    _check_numerics(graph(fused, inputs=f'buffer.input "x" {layout}\nbuffer.input "b" #buffer.layout<[37], [1], f32>',
                          outputs="@buf1"))


def test_masked_load_reads_zero_where_its_mask_is_false() -> None:
    # constant_pad_nd(x, [4, 4]): the padding comes from the load's other=0, not from a select.
    layout = "#buffer.layout<[8, 72], [72, 1], f32>"
    body = """%0 = loops.index i1 : i64
%1 = arith.constant 4 : i64
%2 = arith.cmpi sge, %0, %1 : i64
%3 = arith.constant 68 : i64
%4 = arith.cmpi slt, %0, %3 : i64
%5 = arith.andi %2, %4 : i1
%6 = buffer.load @x[i1 - 4 + 64*i0] mask %5 : f32
buffer.store @buf0[i1 + 72*i0], %6 : f32"""
    text = graph(node("buf0", body, '["constant_pad_nd"]', ranges="[8, 72]", layout=layout),
                 inputs='buffer.input "x" #buffer.layout<[8, 64], [64, 1], f32>')
    (load,) = [op for op in kernels(convert(text))[0].body.block.ops if isinstance(op, triton.LoadOp)]
    assert load.masks == ["xmask"] and load.mask is not None and load.other.value.data == 0.0
    _check_numerics(text)


def test_fused_read_of_a_stored_value() -> None:
    masked = """%0 = loops.index i0 : i64
%1 = arith.constant 32 : i64
%2 = arith.cmpi slt, %0, %1 : i64
%3 = buffer.load @buf0[i0] mask %2 : f32
buffer.store @buf1[i0], %3 : f32"""
    fused = "buffer.fused {\n" + node("buf0", ADD.format(a="x", b="y", out="buf0")) + "\n" + node("buf1", masked) + "\n}"
    text = graph(fused, inputs=IN_XY, outputs="@buf1")
    (k,) = kernels(convert(text))
    assert [op.name for op in k.body.block.ops].count("arith.select") == 1  # masked off: 0, not the value
    _check_numerics(text)
    shifted = fused.replace("@buf0[i0] mask %2", "@buf0[63 - i0] mask %2")
    with pytest.raises(PassFailedException, match="'buf1' reads buf0 at 63 - xindex but this kernel writes it at xindex"):
        convert(graph(shifted, inputs=IN_XY, outputs="@buf1"))


def test_zero_size_node_is_allocated_without_a_kernel() -> None:
    """A computed node of 0 elements (the detach of an empty cholesky_inverse result) needs no
    kernel: its index decomposition divided by the zero-size dims (ZeroDivisionError)."""
    module = convert(
        """
builtin.module {
  buffer.graph @forward {
    buffer.input "x" #buffer.layout<[0, 0], [0, 1], f32>
    buffer.computed "buf1" #buffer.layout<[0, 0], [0, 1], f32> ranges [0, 0] origins ["detach"] {
      %0 = buffer.load @x[i1] : f32
      buffer.store @buf1[i1], %0 : f32
    }
    buffer.output @buf1
  }
}
"""
    )
    ops = list(module.walk())
    assert not any(isinstance(op, (triton.KernelOp, triton.LaunchOp)) for op in ops)
    assert [op.buffer.data for op in ops if isinstance(op, triton.AllocOp)] == ["buf1"]
