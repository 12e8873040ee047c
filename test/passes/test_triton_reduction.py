"""Reduction kernels: hints, configs, split factors, and numerics through the numpy interpreters
(every launch config of every kernel computes what the buffer graph defines)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import sympy
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import PassFailedException

from mlc.analysis.launch import (
    DEFAULT,
    INNER,
    OUTER,
    num_splits,
    persistent_r0_blocks,
    persistent_reduction_configs,
    persistent_reduction_configs_up_to,
    persistent_up_to_limit,
    reduction_configs,
    reduction_hint,
    split_factor,
)
from mlc.dialects import buffer, triton
from mlc.dialects.registry import make_context
from mlc.passes.to_triton import ConvertToTritonPass
from mlc.passes.registry import PASSES
from mlc.passes.split_reductions import SplitReductionsPass


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


triton_interp, rg = _load("triton_interp"), _load("reduction_graphs")


def parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text, "test.mlir").parse_module()
    module.verify()
    return module


def the_node(text: str) -> buffer.ComputedOp:
    return next(op for op in parse(text).walk() if isinstance(op, buffer.ComputedOp))


def convert(text: str, **options: object) -> ModuleOp:
    module = parse(text)
    ConvertToTritonPass(**options).apply(make_context(), module)  # type: ignore[arg-type]
    module.verify()
    return module


def kernels(module: ModuleOp) -> list[triton.KernelOp]:
    return [op for op in module.body.block.ops if isinstance(op, triton.KernelOp)]


def blocks(configs: list[triton.ConfigAttr]) -> list[tuple]:
    return [(*c.block_sizes.values(), c.num_warps.data) for c in configs]


# ---------------------------------------------------------------------------------------------
# Hints, configs and split factors (Inductor's numbers)


@pytest.mark.parametrize(
    "shape, dims, hint",
    [
        ([3, 9], [1], DEFAULT),  # rnumel <= 32
        ([1000], [0], INNER),  # a single output
        ([64, 100], [1], INNER),  # unit stride along the reduction
        ([100, 64], [0], OUTER),  # x.sum(0): stride 64
        ([8448, 100], [1], DEFAULT),  # >= 64 outputs per SM
        ([3, 4, 50], [0, 2], INNER),  # r0_1 has stride 1
    ],
)
def test_reduction_hint(shape: list[int], dims: list[int], hint: str) -> None:
    assert reduction_hint(the_node(rg.reduction_graph("sum", shape, dims))) == hint


def test_persistent_configs() -> None:
    # Seed 001 (3 x 9): only XBLOCK 1 fits under the x size hint 4; 2 warps at least.
    assert blocks(persistent_reduction_configs(sympy.Integer(3), 9, DEFAULT)) == [(1, 2)]
    # x * R0_BLOCK <= 4096 and XBLOCK <= the x size hint.
    assert blocks(persistent_reduction_configs(sympy.Integer(1000), 100, DEFAULT)) == [(1, 2), (8, 8), (32, 8)]
    # OUTER keeps the largest; INNER rows of >= 256 with >= 1024 rows: Inductor's 1 warp a row
    # (XBLOCK up to 1024 // R0_BLOCK), then one row a program, 16 elements a thread.
    assert blocks(persistent_reduction_configs(sympy.Integer(1000), 100, OUTER)) == [(32, 8)]
    assert blocks(persistent_reduction_configs(sympy.Integer(4096), 512, INNER)) == [(2, 1), (1, 1)]
    assert blocks(persistent_reduction_configs(sympy.Integer(8192), 1024, INNER)) == [(1, 1), (1, 2)]
    assert blocks(persistent_reduction_configs(sympy.Symbol("s0", positive=True, integer=True), 1024, INNER)) == [(1, 1)]
    assert blocks(persistent_reduction_configs(sympy.Integer(64), 512, INNER)) == [(1, 4)]


def test_looped_configs() -> None:
    # INNER: the contiguous config, XBLOCK 1 past 2048, R0_BLOCK 2048, warps R0_BLOCK // 128;
    # over rows of >= 8192 in at most 4 rows an SM, LONG_ROW_TUNING's wider slices too (32 warps
    # below Inductor's 8192 bound; R0_BLOCK dividing r0_numel where a power of two >= 256 does).
    assert blocks(reduction_configs(sympy.Integer(5000), sympy.Integer(20000), INNER)) == [(1, 2048, 16)]
    assert blocks(reduction_configs(sympy.Integer(3), sympy.Integer(7000), INNER)) == [(1, 2048, 16)]
    long_rows = [(1, 2048, 16), (1, 4096, 16), (1, 8192, 32)]
    assert blocks(reduction_configs(sympy.Integer(3), sympy.Integer(20000), INNER)) == long_rows
    assert blocks(reduction_configs(sympy.Integer(528), sympy.Integer(32768), INNER)) == long_rows
    assert blocks(reduction_configs(sympy.Integer(529), sympy.Integer(32768), INNER)) == long_rows[:1]
    assert blocks(reduction_configs(sympy.Integer(64), sympy.Integer(12288), INNER))[1:] == [(1, 4096, 16), (1, 4096, 32)]
    assert blocks(reduction_configs(sympy.Integer(32), sympy.Integer(2048), OUTER)) == [(2, 64, 2)]
    # OUTER over more than 1024 static columns: outer_config_opt's 16 x 32, then OUTER_TUNING's
    # wider tiles, timed beside it (Llama's RMSNorm weight gradient: 32768 x 128).
    outer = reduction_configs(sympy.Integer(32768), sympy.Integer(128), OUTER, num_loads=5)
    assert blocks(outer) == [(16, 32, 4), (64, 64, 4), (64, 128, 8)]
    assert blocks(reduction_configs(sympy.Integer(32768), sympy.Integer(128), OUTER, num_dynamic=1))[1:] == []
    # DEFAULT: contiguous, outer, tiny (= contiguous here: benchmarked once), 64x64, 8x512, 64x4.
    default = reduction_configs(sympy.Integer(10000), sympy.Integer(5000), DEFAULT)
    assert blocks(default) == [(1, 2048, 16), (16, 32, 4), (64, 64, 16), (8, 512, 16), (64, 4, 8)]
    # Register intensive (x >= 1024 and >= 10 loads + reductions): R0_BLOCK at most 1024.
    assert blocks(reduction_configs(sympy.Integer(2048), sympy.Integer(20000), INNER, 9, 1)) == [(1, 1024, 8)]


@pytest.mark.parametrize(
    "rnumel, numel, inner, split",
    [
        (2**20, 1, True, 128),  # 32 elements per thread
        (8192, 1, True, 1),  # short enough
        (8193, 1, True, 2),
        (100000, 263, True, 4),  # 125 elements per thread: a divisor of 100000 near the target
        (100000, 264, True, 1),  # 2 outputs per SM
        (65536, 64, False, 512),  # outer: 4 values per thread
        (100000, 8447, False, 50),
    ],
)
def test_split_factor(rnumel: int, numel: int, inner: bool, split: int) -> None:
    assert split_factor(rnumel, numel, inner) == split


def test_argmax_and_default_hints_do_not_split() -> None:
    assert num_splits(the_node(rg.reduction_graph("sum", [8448, 100000], [1]))) == (DEFAULT, 1)
    assert num_splits(the_node(rg.reduction_graph("sum", [1, 2**20], [1])))[1] == 128


def test_split_reductions_is_registered_before_convert_to_triton() -> None:
    names = list(PASSES)
    assert names.index("split-reductions") < names.index("deps") < names.index("convert-to-triton")
    assert PASSES["split-reductions"]() is SplitReductionsPass
    with pytest.raises(ValueError, match="min-elements-per-thread"):
        SplitReductionsPass(min_elements_per_thread=600)


# ---------------------------------------------------------------------------------------------
# Kernel structure


def test_persistent_iff_static_and_at_most_the_threshold() -> None:
    assert kernels(convert(rg.reduction_graph("sum", [3, 1024], [1])))[0].kernel_kind == "persistent_reduction"
    assert kernels(convert(rg.reduction_graph("sum", [3, 1025], [1])))[0].kernel_kind == "reduction"
    looped = convert(rg.reduction_graph("sum", [3, 9], [1]), persistent_reduction_threshold=8)
    assert kernels(looped)[0].sym_name.data == "triton_red_fused_sum_0"


def test_a_symbolic_r0_numel_is_persistent_up_to_the_bound() -> None:
    """Over a symbolic r0_numel a persistent kernel runs up to the bound (64 along a strided
    dim), unless r0_numel exceeds it at every size; its configs cover every R0_BLOCK it may take."""
    s0, s1 = sympy.Symbol("s0"), sympy.Symbol("s1")
    assert persistent_up_to_limit(s0, 1024, INNER) == 1024 and persistent_up_to_limit(s0, 1024, OUTER) == 64
    assert persistent_up_to_limit(s0 * s1, 1000, DEFAULT) == 1000
    assert persistent_up_to_limit(sympy.Integer(100), 1024) is None  # static: decided at compile time
    assert persistent_up_to_limit(1024 * s0 + 1, 1024) is None  # above the bound at every size
    assert persistent_up_to_limit(s0 + 1023, 1024) == 1024  # s0 = 1 fits
    assert persistent_r0_blocks(1024) == persistent_r0_blocks(1000) == [2**k for k in range(11)]
    assert persistent_r0_blocks(1) == [1]
    configs = persistent_reduction_configs_up_to(8 * s0, 64, OUTER)
    assert sorted({c.block_sizes["R0_BLOCK"] for c in configs}) == persistent_r0_blocks(64)
    for c in configs:
        assert c.block_sizes["XBLOCK"] * c.block_sizes["R0_BLOCK"] <= 4096 or c.block_sizes["XBLOCK"] == 1


def test_the_store_of_a_reduction_has_xmask_only() -> None:
    # rows of 1500: looped, XBLOCK 2, which does not divide 5 rows
    (k,) = kernels(convert(rg.reduction_graph("max", [5, 1500], [1])))
    (store,) = [op for op in k.walk() if isinstance(op, triton.StoreOp)]
    assert store.masks == ["xmask"] and store.parent_op() is k


def test_masks_are_constant_where_every_config_block_divides() -> None:
    # 3 rows of 3000, one config XBLOCK 1 (R0_BLOCK 2048 masked); 512 pieces of 25088 = 2^9 * 49
    # take R0_BLOCK 512: nothing masked.
    (k,) = kernels(convert(rg.reduction_graph("max", [3, 3000], [1])))
    assert {tuple(op.masks) for op in k.walk() if isinstance(op, (triton.LoadOp, triton.StoreOp))} == {("r0_mask",), ()}
    (k,) = kernels(convert(rg.reduction_graph("sum", [512, 25088], [1])))
    assert [c.block_sizes for c in k.configs] == [{"XBLOCK": 1, "R0_BLOCK": 512}]
    assert all(not op.masks for op in k.walk() if isinstance(op, (triton.LoadOp, triton.StoreOp, triton.AccumulateOp)))


# softmax's denominator over rows of 2000: sum(exp(x - buf0)), buf0 the rows' max.
SOFTMAX_DENOMINATOR = """buffer.computed "buf1" #buffer.layout<[2], [1], f32> ranges [2] reduce [2000] origins ["sum"] {
  %0 = buffer.load @x[r0_0 + 2000*i0] : f32
  %1 = buffer.load @buf0[i0] : f32
  %2 = arith.subf %0, %1 : f32
  %3 = math.exp %2 : f32
  %4 = buffer.reduce sum %3 : f32 -> f32
  buffer.store @buf1[i0], %4 : f32
}"""


def test_a_reduced_value_feeding_a_reduction_runs_a_second_loop() -> None:
    # softmax's denominator: sum(exp(x - max(x))) -- a reduced value feeds a reduction: loop 1
    # accumulates the max, loop 2 re-reads x and accumulates exp(x - max).
    first = rg.reduction_node("buf0", "max", [2, 2000], [1])
    second = SOFTMAX_DENOMINATOR
    text = rg.graph([f"buffer.fused {{\n{first}\n{second}\n}}"], [2, 2000], outputs=["buf1"])
    (k,) = kernels(convert(text))
    loops = [op for op in k.body.block.ops if isinstance(op, triton.RLoopOp)]
    assert k.kernel_kind == "reduction" and len(loops) == 2
    assert all(sum(isinstance(op, triton.LoadOp) for op in loop.walk()) >= 1 for loop in loops)
    _check(text)
    # The same group as a persistent kernel (rows of 200) is one kernel, buf0 in registers.
    small = text.replace("2000", "200")
    (k,) = kernels(convert(small))
    assert k.kernel_kind == "persistent_reduction" and k.arg_names == ["in_ptr0", "out_ptr0"]
    _check(small)


def test_a_later_loop_recomputes_what_it_reads() -> None:
    # softmax beside a mean (as GPU fuzz seed 201727's log_softmax): the mean's load of x and the
    # denominator's are one op (same mask, `other`, eviction); loop 1 runs it, loop 2 runs a
    # clone, and loop 3 must run its own clone of the load under x - max, not read loop 2's.
    mean = rg.reduction_node("buf3", "sum", [2, 2000], [1])
    first = rg.reduction_node("buf0", "max", [2, 2000], [1])
    second = SOFTMAX_DENOMINATOR
    epilogue = """buffer.computed "buf2" #buffer.layout<[2, 2000], [2000, 1], f32> ranges [2, 2000] origins ["sub"] {
  %0 = buffer.load @x[i1 + 2000*i0] : f32
  %1 = buffer.load @buf0[i0] : f32
  %2 = arith.subf %0, %1 : f32
  %3 = math.exp %2 : f32
  %4 = buffer.load @buf1[i0] : f32
  %5 = arith.divf %3, %4 : f32
  buffer.store @buf2[i1 + 2000*i0], %5 : f32
}"""
    text = rg.graph([f"buffer.fused {{\n{first}\n{mean}\n{second}\n{epilogue}\n}}"], [2, 2000],
                    outputs=["buf2", "buf3"])
    (k,) = kernels(convert(text))  # verifies: no loop reads another loop's values
    loops = [op for op in k.body.block.ops if isinstance(op, triton.RLoopOp)]
    assert len(loops) == 3 and all(any(isinstance(op, triton.LoadOp) for op in loop.walk()) for loop in loops)
    _check(text)


def test_fused_reductions_must_share_numels() -> None:
    text = rg.graph(
        ["buffer.fused {\n" + rg.reduction_node("buf0", "sum", [4, 9], [1]) + "\n"
         + rg.reduction_node("buf1", "sum", [4, 9], [0]) + "\n}"],
        [4, 9], outputs=["buf0", "buf1"],
    )
    with pytest.raises(PassFailedException, match=r"fused reductions iterate different \(numel, r0_numel\)"):
        convert(text)


# ---------------------------------------------------------------------------------------------
# Numerics: the numpy interpreters, every config


def _check(text: str, **options: object) -> None:
    module = parse(text)
    (g,) = [op for op in module.body.block.ops if isinstance(op, buffer.GraphOp)]
    inputs = triton_interp.random_inputs(g, seed=1)
    inputs["x"][::7] = inputs["x"][3]  # repeated values: ties for argmax/argmin
    expected = triton_interp.run_buffer_graph(g, inputs)
    outputs = [op for op in g.body.block.ops if isinstance(op, buffer.OutputOp)][0].names
    ConvertToTritonPass(**options).apply(make_context(), module)  # type: ignore[arg-type]
    module.verify()
    count = max(len(k.config_list) for k in kernels(module))
    for config in range(count):
        got = triton_interp.run_triton(module, inputs, config)
        for name in outputs:
            np.testing.assert_allclose(got[name], expected[name], rtol=1e-9, atol=1e-9, err_msg=f"{name} config {config}")


KINDS = ["sum", "prod", "max", "min", "argmax", "argmin", "welford"]
WELFORD_VAR = "%c = arith.constant 1.0 : f32\n%d = arith.subf %w, %c : f32\n%out = arith.divf %m2, %d : f32"


@pytest.mark.parametrize("looped", [False, True], ids=["persistent", "looped"])
@pytest.mark.parametrize("kind", KINDS)
def test_kinds(kind: str, looped: bool) -> None:
    epilogue = WELFORD_VAR if kind == "welford" else ""
    # 5 rows of 37 (masked tails everywhere); looped: forced, R0_BLOCK slices of 2 .. 64.
    text = rg.reduction_graph(kind, [5, 37], [1], epilogue=epilogue)
    _check(text, persistent_reduction_threshold=0 if looped else 1024)


def test_any() -> None:
    prologue = "%z = arith.constant 0.5 : f32\n%v = arith.cmpf ogt, %x, %z : f32"
    for threshold in (0, 1024):
        _check(rg.reduction_graph("any", [6, 5], [1], prologue=prologue, value="i1"), persistent_reduction_threshold=threshold)


@pytest.mark.parametrize(
    "shape, dims",
    [([37, 6], [0]), ([3, 4, 5], [0, 2]), ([2, 3000], [1]), ([1500, 3], [0]), ([4, 3, 2], [1]), ([64], [0])],
    ids=["column", "two-dims", "long-row", "long-column", "middle", "all"],
)
def test_layouts(shape: list[int], dims: list[int]) -> None:
    _check(rg.reduction_graph("sum", shape, dims))
    _check(rg.reduction_graph("argmax", shape, dims))


def test_epilogue_and_fused_pointwise() -> None:
    # mean plus a fused sigmoid of it, and a full-size pointwise producer in the same group.
    producer = """buffer.computed "buf2" #buffer.layout<[6, 300], [300, 1], f32> ranges [6, 300] origins ["mul"] {
  %0 = buffer.load @x[i1 + 300*i0] : f32
  %1 = arith.mulf %0, %0 : f32
  buffer.store @buf2[i1 + 300*i0], %1 : f32
}"""
    mean = rg.reduction_node(
        "buf0", "sum", [6, 300], [1], epilogue="%n = arith.constant 300.0 : f32\n%out = arith.divf %r, %n : f32"
    ).replace("@x[", "@buf2[")
    sigmoid = """buffer.computed "buf1" #buffer.layout<[6], [1], f32> ranges [6] origins ["sigmoid"] {
  %0 = buffer.load @buf0[i0] : f32
  %1 = arith.negf %0 : f32
  %2 = math.exp %1 : f32
  %3 = arith.constant 1.0 : f32
  %4 = arith.addf %2, %3 : f32
  %5 = arith.divf %3, %4 : f32
  buffer.store @buf1[i0], %5 : f32
}"""
    text = rg.graph([f"buffer.fused {{\n{producer}\n{mean}\n{sigmoid}\n}}"], [6, 300], outputs=["buf1", "buf2"])
    for threshold in (0, 1024):
        (k,) = kernels(convert(text, persistent_reduction_threshold=threshold))
        assert k.sym_name.data.endswith("fused_mul_sigmoid_sum_0")
        _check(text, persistent_reduction_threshold=threshold)


SCALED_SUM = """buffer.computed "buf4" #buffer.layout<[2], [1], f32> ranges [2] reduce [9000] origins ["sum"] {
  %b = buffer.load @x[i0] : f32
  %x = buffer.load @x[r0_0 + 9000*i0] : f32
  %v = arith.mulf %x, %b : f32
  %r = buffer.reduce sum %v : f32 -> f32
  %out = arith.addf %r, %b : f32
  buffer.store @buf4[i0], %out : f32
}"""


def test_split_reductions_compute_the_same() -> None:
    # A mean (epilogue), a masked max (9001 = 2 pieces of 4501), two reduced dimensions, and a
    # load used both before and after the reduction.
    text = rg.graph(
        [rg.reduction_node("buf0", "sum", [2, 9000], [1], epilogue="%n = arith.constant 9000.0 : f32\n%out = arith.divf %r, %n : f32"),
         rg.reduction_node("buf1", "max", [9001], [0]),
         rg.reduction_node("buf3", "sum", [3, 5000], [0, 1]),
         SCALED_SUM],
        [2, 9000], outputs=["buf0", "buf1", "buf3", "buf4"],
    ).replace('buffer.input "x" #buffer.layout<[2, 9000], [9000, 1], f32>', 'buffer.input "x" #buffer.layout<[18000], [1], f32>')
    module = parse(text)
    (g,) = [op for op in module.body.block.ops if isinstance(op, buffer.GraphOp)]
    inputs = triton_interp.random_inputs(g)
    expected = triton_interp.run_buffer_graph(g, inputs)
    SplitReductionsPass().apply(make_context(), module)
    module.verify()
    names = [n.buffer.data for n in g.nodes() if isinstance(n, buffer.ComputedOp)]
    # Each partial (the next free bufN) before its final reduction.
    assert names == ["buf5", "buf0", "buf6", "buf1", "buf7", "buf3", "buf8", "buf4"]
    split = triton_interp.run_buffer_graph(g, inputs)
    ConvertToTritonPass().apply(make_context(), module)
    got = triton_interp.run_triton(module, inputs)
    for name in ("buf0", "buf1", "buf3", "buf4"):
        np.testing.assert_allclose(split[name], expected[name], rtol=1e-12)
        np.testing.assert_allclose(got[name], expected[name], rtol=1e-12)
