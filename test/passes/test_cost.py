"""The cost model (`mlc.analysis.cost`): known kernels, predicted times within bounds of the
model's arithmetic on a fixed target (round numbers, so each expectation is written out)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest
from xdsl.parser import Parser

from mlc.analysis.cost import Reread, Traffic, predict, predictions, report
from mlc.analysis.target import Target
from mlc.dialects.registry import make_context
from mlc.passes.pipeline import load_pipeline, run_pipeline

T = Target(num_sms=100, dram_bytes_per_s=1e12, kernel_s=1e-6, l2_bytes_per_s=4e12, fma_flops_per_s=50e12,
           tensor_flops_per_s=1000e12, l1_bytes=200 * 1024, round_trip_s=0.25e-6, combine_s=0.1e-6,
           source="a test target")


def parsed(text: str):
    return Parser(make_context(), text, "test.mlir").parse_module()


def pointwise_text(xnumel: int, xblock: int, loads: str, layouts: str, launch_args: str, index: str = "",
                   ops: str = "", result: str = "%0") -> str:
    """A pointwise kernel reading `loads` (`%in_ptr0[xindex]`-style, `;` between), then `ops`, and
    storing `result` into out_ptr0."""
    args = ", ".join(f"%in_ptr{i}: !triton.ptr<f32>" for i in range(len(loads.split(";"))))
    body = "\n".join(f"  %{i} = triton.load {load} mask xmask : f32" for i, load in enumerate(loads.split(";")))
    return f"""triton.kernel @k pointwise({args}, %out_ptr0: !triton.ptr<f32>) xnumel {xnumel} configs [#triton.config<XBLOCK = {xblock}, num_warps = 4, num_stages = 1>] {{
  triton.index x0 = ModularIndexing(xindex, 1, 1024)
  {index}
{body}
{ops}
  triton.store %out_ptr0[xindex], {result} mask xmask : f32
}}
triton.wrapper @call {{
{layouts}
  triton.launch @k({launch_args}) xnumel {xnumel}
  triton.return @out
}}"""


def pointwise(xnumel: int, xblock: int, loads: str, layouts: str, launch_args: str) -> list:
    return predictions(parsed(pointwise_text(xnumel, xblock, loads, layouts, launch_args)), T)


def test_a_copy_moves_its_bytes_once_at_the_targets_bandwidth():
    n = 2**26  # 256 MiB of f32
    (name, p), = pointwise(n, 1024, "%in_ptr0[xindex]", f'  triton.input "x" #buffer.layout<[{n}], [1], f32>\n'
                           f'  triton.alloc "out" #buffer.layout<[{n}], [1], f32>', "@x, @out")
    assert name == "k" and p.bound == "dram"
    assert p.traffic.dram_bytes == p.traffic.requested_bytes == 2 * 4 * n
    assert p.seconds == pytest.approx(1e-6 + 8 * n / 1e12)


def bias_add(n: int, target: Target = T):
    layouts = (f'  triton.input "x" #buffer.layout<[{n // 1024}, 1024], [1024, 1], f32>\n'
               '  triton.input "bias" #buffer.layout<[1024], [1], f32>\n'
               f'  triton.alloc "out" #buffer.layout<[{n // 1024}, 1024], [1024, 1], f32>')
    text = pointwise_text(n, 1024, "%in_ptr0[xindex];%in_ptr1[x0]", layouts, "@x, @bias, @out")
    (_, p), = predictions(parsed(text), target)
    return p


def test_a_broadcast_read_comes_from_dram_once_and_from_l2_once_per_sm_when_it_fits_l1():
    """The bias (4 KiB) stays in each SM's L1: L2 serves each SM's first read of it, DRAM the
    first of all (bias_relu on the H200: 1.62x over with every lane's read from L2)."""
    n = 2**24
    p = bias_add(n)
    assert p.traffic.dram_bytes == 4 * (n + 1024 + n)
    assert p.traffic.requested_bytes == 4 * 3 * n
    assert p.bound == "dram"
    assert p.seconds == pytest.approx(1e-6 + 4 * (2 * n + 1024) / 1e12 + 4 * 1024 * 99 / 4e12)


def test_a_broadcast_read_larger_than_l1_comes_from_l2_per_lane():
    n = 2**24
    p = bias_add(n, dataclasses.replace(T, l1_bytes=2048))
    assert p.seconds == pytest.approx(1e-6 + 4 * (2 * n + 1024) / 1e12 + 4 * (n - 1024) / 4e12)


def test_masked_lanes_ask_for_nothing_and_two_halves_of_a_buffer_both_come_from_dram():
    """A cat's inputs, each read where its mask holds: the lanes ask for each element once (not
    every lane for each input), so no L2 term; swiglu's two halves of one input add up."""
    n = 2**24
    text = f"""triton.kernel @cat pointwise(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel {n} configs [#triton.config<XBLOCK = 1024, num_warps = 4, num_stages = 1>] {{
  triton.index x0 = ModularIndexing(xindex, 1, 2048)
  triton.index x1 = FloorDiv(xindex, 2048)
  %0 = triton.expr x0 : i64
  %1 = arith.constant 1024 : i64
  %2 = arith.cmpi slt, %0, %1 : i64
  %3 = triton.load %in_ptr0[x0 + 1024*x1] mask %2 other 0.000000e+00 : f32
  %4 = arith.cmpi sge, %0, %1 : i64
  %5 = triton.load %in_ptr1[x0 + 1024*x1 - 1024] mask %4 other 0.000000e+00 : f32
  %6 = arith.select %2, %3, %5 : f32
  triton.store %out_ptr0[xindex], %6 : f32
}}
triton.wrapper @call {{
  triton.input "a" #buffer.layout<[{n // 2048}, 1024], [1024, 1], f32>
  triton.input "b" #buffer.layout<[{n // 2048}, 1024], [1024, 1], f32>
  triton.alloc "out" #buffer.layout<[{n // 2048}, 2048], [2048, 1], f32>
  triton.launch @cat(@a, @b, @out) xnumel {n}
  triton.return @out
}}"""
    (_, p), = predictions(parsed(text), T)
    assert p.traffic.dram_bytes == p.traffic.requested_bytes == 4 * 2 * n
    assert p.seconds == pytest.approx(1e-6 + 4 * 2 * n / 1e12)
    halves = (f'  triton.input "x" #buffer.layout<[{n // 1024}, 2048], [2048, 1], f32>\n'
              f'  triton.alloc "out" #buffer.layout<[{n // 1024}, 1024], [1024, 1], f32>')
    (_, p), = predictions(parsed(pointwise_text(n, 1024, "%in_ptr0[x0 + 2048*x1];%in_ptr1[1024 + x0 + 2048*x1]", halves,
                                                "@x, @x, @out", "triton.index x1 = FloorDiv(xindex, 1024)")), T)
    assert p.traffic.dram_bytes == 4 * 3 * n  # both halves of x, and out


GELU_ERF = """  %half = arith.constant 5.000000e-01 : f32
  %1 = arith.mulf %0, %half : f32
  %rsqrt2 = arith.constant 0.707106769 : f32
  %2 = arith.mulf %0, %rsqrt2 : f32
  %3 = math.erf %2 : f32
  %one = arith.constant 1.000000e+00 : f32
  %4 = arith.addf %3, %one : f32
  %5 = arith.mulf %1, %4 : f32"""


def test_a_pointwise_erf_counts_its_lane_ops_and_stays_bound_by_its_bytes():
    """gelu with erf: three multiplies and an add (1 each), the erf (4: a special function), and
    the helper's x0 = xindex % 1024 (4: a remainder), per element: 12 lane instructions, 0.48 ns
    an element at 25e12 a second against 8 bytes' 8 ns."""
    n = 2**26
    text = pointwise_text(n, 1024, "%in_ptr0[xindex]", f'  triton.input "x" #buffer.layout<[{n}], [1], f32>\n'
                          f'  triton.alloc "out" #buffer.layout<[{n}], [1], f32>', "@x, @out", ops=GELU_ERF, result="%5")
    (_, p), = predictions(parsed(text), T)
    assert p.traffic.lane_ops == (1 + 1 + 4 + 1 + 1 + 4) * n
    assert p.bound == "dram" and p.seconds == pytest.approx(1e-6 + 8 * n / 1e12)


def index_compare_reduction(rows: int, cols: int, hoisted: bool = False):
    """GPT-2's nll_loss backward as a looped reduction: per lane whether its class is the row's
    target and the target is not ignored (two i64 compares), both (andi), its gradient (a
    select), summed; one i64 a row read. `hoisted`: the ignore compare before the loop."""
    valid = "%valid = arith.cmpi ne, %target, %ignore : i64"
    text = f"""triton.kernel @nll_backward reduction(%in_ptr0: !triton.ptr<i64>, %out_ptr0: !triton.ptr<f32>) xnumel {rows} r0_numel {cols} configs [#triton.config<XBLOCK = 1, R0_BLOCK = 2048, num_warps = 16, num_stages = 1>] {{
  triton.index x0 = xindex
  %target = triton.load %in_ptr0[x0] : i64
  %ignore = arith.constant -100 : i64
  %zero = arith.constant 0.000000e+00 : f32
  %minus_one = arith.constant -1.000000e+00 : f32
  {valid if hoisted else ""}
  %0 = triton.rloop iter_args(%1 = %zero : f32) {{
    triton.index r0_1 = r0_index
    %2 = triton.expr r0_1 : i64
    %3 = arith.cmpi eq, %2, %target : i64
    {"" if hoisted else valid}
    %4 = arith.andi %3, %valid : i1
    %5 = arith.select %4, %minus_one, %zero : f32
    %6 = triton.accumulate sum %5 into %1 : f32 -> f32
    triton.yield %6 : f32
  }}
  %7 = triton.reduce sum %0 : f32 -> f32
  triton.store %out_ptr0[x0], %7 : f32
}}"""
    return row_reduction_prediction(text, f"[{rows}], [1], i64", rows, cols)


def test_a_looped_reduction_of_index_compares_is_bound_by_its_lane_instructions():
    """1000 rows of 100,000 classes (GPT-2's nll_loss backward: 27 us on the H200 for 24 KB of
    bytes): per lane two i64 compares (2 each), an andi, a select and the sum's add (1 each),
    at 25e12 lane instructions a second (the FMA rate in flops over 2), on every SM (1000
    programs)."""
    rows, cols = 1000, 100_000
    p = index_compare_reduction(rows, cols)
    assert p.traffic.lane_ops == (2 + 2 + 1 + 1 + 1) * rows * cols
    assert p.bound == "compute"
    assert p.seconds == pytest.approx(1e-6 + (2 + 2 + 1 + 1 + 1) * rows * cols / (50e12 / 2))


def test_a_looped_reductions_ops_outside_its_loop_run_once_per_row():
    """The ignore compare before the loop: 2 instructions a row, not a lane."""
    rows, cols = 1000, 100_000
    p = index_compare_reduction(rows, cols, hoisted=True)
    assert p.traffic.lane_ops == (2 + 1 + 1 + 1) * rows * cols + 2 * rows
    assert p.seconds == pytest.approx(1e-6 + ((2 + 1 + 1 + 1) * rows * cols + 2 * rows) / (50e12 / 2))


def test_a_kernel_of_fewer_programs_than_sms_draws_a_share_of_the_bandwidth():
    n = 8 * 1024  # 8 programs of 1024 on 100 SMs
    (_, p), = pointwise(n, 1024, "%in_ptr0[xindex]", f'  triton.input "x" #buffer.layout<[{n}], [1], f32>\n'
                        f'  triton.alloc "out" #buffer.layout<[{n}], [1], f32>', "@x, @out")
    assert p.traffic.programs == 8
    assert p.seconds == pytest.approx(1e-6 + 8 * n / (1e12 * 8 / 100))


def matmul_module(m: int, n: int, k: int, dtype: str, tf32: bool = False):
    text = f"""buffer.graph @mm {{
  buffer.input "x" #buffer.layout<[{m}, {k}], [{k}, 1], {dtype}>
  buffer.input "w" #buffer.layout<[{n}, {k}], [{k}, 1], {dtype}>
  buffer.fused {{
    buffer.computed "buf0" #buffer.layout<[{m}, {n}], [{n}, 1], {dtype}> ranges [{m}, {n}] reduce [{k}] origins ["mm"] {{
      %0 = buffer.load @x[r0_0 + {k}*i0] : {dtype}
      %1 = buffer.load @w[r0_0 + {k}*i1] : {dtype}
      %2 = buffer.dot %0, %1 : {dtype}, {dtype} -> f32
      {"%3 = arith.truncf %2 : f32 to " + dtype if dtype != "f32" else ""}
      buffer.store @buf0[i1 + {n}*i0], %{3 if dtype != "f32" else 2} : {dtype}
    }}
  }}
  buffer.output @buf0
}}"""
    module = parsed(text)
    run_pipeline(module, load_pipeline(f"convert-to-triton{{tf32={'true' if tf32 else 'false'}}}"), make_context())
    return module


def test_a_gemm_is_bound_by_the_tensor_cores_or_by_its_operand_tiles_from_l2():
    """Each program reads its rows of A and columns of B through L2: (1/BM + 1/BN) bytes per
    flop's worth, for any size; so the tensor cores bound it only where L2 keeps up."""
    m = n = k = 4096
    assert predictions(matmul_module(m, n, k, "bf16"), T)[0][1].bound == "l2"  # 4 TB/s: short of 15.6
    fast_l2 = dataclasses.replace(T, l2_bytes_per_s=40e12)
    (_, p), = predictions(matmul_module(m, n, k, "bf16"), fast_l2)
    assert p.bound == "compute" and p.traffic.flops == 2 * m * n * k
    tiles = p.traffic.programs  # whole tiles (4096 divides every block), over whole and partial waves
    waves = math.ceil(tiles / 100)
    assert p.traffic.tile_efficiency == 1.0
    assert p.seconds == pytest.approx(1e-6 + 2 * m * n * k / (1000e12 * tiles / (waves * 100)))


@pytest.mark.parametrize("tf32, peak", [(True, 500e12), (False, 50e12)])
def test_an_f32_gemm_runs_at_tf32_or_fma_speed_on_partial_tiles(tf32, peak):
    m, n, k = 37, 50, 2**16  # the tiles cover 64 x 64 for 37 x 50: a share of 1850 / 4096
    (_, p), = predictions(matmul_module(m, n, k, "f32", tf32), T)
    assert p.traffic.tile_efficiency == pytest.approx(m * n / (64 * 64))
    compute = 2 * m * n * k / (peak * p.traffic.tile_efficiency * (p.traffic.programs / 100))
    assert p.seconds >= 1e-6 + compute * (1 - 1e-9)


def reduction_prediction(rows: int, cols: int, warps: int = 8):
    """A persistent row sum of [rows, cols] f32, one row per program."""
    text = f"""triton.kernel @r persistent_reduction(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel {rows} r0_numel {cols} configs [#triton.config<XBLOCK = 1, num_warps = {warps}, num_stages = 1>] {{
  triton.index r0_1 = r0_index
  triton.index x0 = xindex
  %0 = triton.load %in_ptr0[r0_1 + {cols}*x0] mask r0_mask, xmask : f32
  %1 = triton.reduce sum %0 : f32 -> f32
  triton.store %out_ptr0[x0], %1 mask xmask : f32
}}"""
    return row_reduction_prediction(text, f"[{rows}, {cols}], [{cols}, 1], f32", rows, cols)


def row_reduction_prediction(kernel: str, input_layout: str, rows: int, cols: int):
    """The prediction of one launch of `kernel` (a reduction of `cols` per row, from one input of
    `input_layout`'s sizes, strides and dtype into one f32 per row)."""
    name = kernel.split("@", 1)[1].split(" ", 1)[0]
    text = f"""{kernel}
triton.wrapper @call {{
  triton.input "x" #buffer.layout<{input_layout}>
  triton.alloc "out" #buffer.layout<[{rows}], [1], f32>
  triton.launch @{name}(@x, @out) xnumel {rows} r0_numel {cols}
  triton.return @out
}}"""
    (_, p), = predictions(parsed(text), T)
    return p


def test_a_reduction_asks_for_every_row_element_and_its_row_values_once_per_row():
    rows, cols = 4096, 1024
    text = f"""triton.kernel @r persistent_reduction(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel {rows} r0_numel {cols} configs [#triton.config<XBLOCK = 1, num_warps = 8, num_stages = 1>] {{
  triton.index r0_1 = r0_index
  triton.index x0 = xindex
  %0 = triton.load %in_ptr0[r0_1 + {cols}*x0] mask r0_mask, xmask : f32
  %1 = triton.load %in_ptr1[x0] mask xmask : f32
  %2 = triton.reduce sum %0 : f32 -> f32
  %3 = arith.addf %2, %1 : f32
  triton.store %out_ptr0[x0], %3 mask xmask : f32
}}
triton.wrapper @call {{
  triton.input "x" #buffer.layout<[{rows}, {cols}], [{cols}, 1], f32>
  triton.input "b" #buffer.layout<[{rows}], [1], f32>
  triton.alloc "out" #buffer.layout<[{rows}], [1], f32>
  triton.launch @r(@x, @b, @out) xnumel {rows} r0_numel {cols}
  triton.return @out
}}"""
    (_, p), = predictions(parsed(text), T)
    assert p.traffic.programs == rows
    assert p.traffic.dram_bytes == p.traffic.requested_bytes == 4 * (rows * cols + rows + rows)


def test_the_bound_is_the_longest_term_and_an_empty_kernel_costs_its_launch():
    assert predict(Traffic("pointwise", 200, 0, 0), T) == pytest.approx(predict(Traffic("pointwise", 200, 0, 0), T))
    assert predict(Traffic("pointwise", 200, 0, 0), T).bound == "launch"
    assert predict(Traffic("pointwise", 200, 0, 0), T).seconds == 1e-6
    assert predict(Traffic("pointwise", 200, 10**6, 10**8, rereads=(Reread(10**8, 10**9, True),)), T).bound == "l2"
    assert predict(Traffic("pointwise", 200, 10**6, 10**8, rereads=(Reread(10**8, 10**3, True),)), T).bound == "dram"
    lanes = predict(Traffic("pointwise", 50, 10**6, 10**6, lane_ops=10**9), T)  # on half the SMs
    assert lanes.bound == "compute" and lanes.seconds == pytest.approx(1e-6 + 10**9 / (50e12 / 2 * 50 / 100))


def test_the_report_lists_every_launch_and_the_total_deterministically():
    module = matmul_module(256, 256, 128, "bf16")
    text = report(module, T)
    assert text == report(matmul_module(256, 256, 128, "bf16"), T)
    lines = text.splitlines()
    assert lines[0].startswith("predicted on a test target: us, bound")
    assert lines[1].endswith("triton_mm_fused_mm_0") and lines[-1].endswith("total")
    assert float(lines[-1].split()[0]) == pytest.approx(sum(float(line.split()[0]) for line in lines[1:-1]))


def test_a_calibrated_target_loads_over_the_defaults(tmp_path):
    path = tmp_path / "h200.json"
    path.write_text('{"dram_bytes_per_s": 4.1e12, "kernel_s": 2e-06, "source": "H200, 2026-11-29"}')
    target = Target.load(path)
    assert (target.dram_bytes_per_s, target.num_sms, target.source) == (4.1e12, 132, "H200, 2026-11-29")
    assert Target.load(path) == target and '"dram_bytes_per_s": 4100000000000.0' in target.dump()
    path.write_text('{"dram_GBps": 4100}')
    with pytest.raises(ValueError, match="not fields of Target: dram_GBps"):
        Target.load(path)


def test_symbolic_sizes_are_predicted_at_the_size_hint():
    """A graph of symbolic sizes (the lit test's softmax over s0 x s1 rows): each size at the
    launch heuristics' hint, a finite prediction for every launch."""
    lit = Path(__file__).resolve().parents[1] / "lit" / "passes" / "convert-to-triton" / "dynamic.mlir"
    module = parsed(lit.read_text().split("// -----")[0])
    run_pipeline(module, load_pipeline("convert-to-triton"), make_context())
    found = predictions(module, T)
    assert len(found) >= 2 and all(math.isfinite(p.seconds) and p.seconds > T.kernel_s for _, p in found)


def looped_softmax(rows: int, cols: int, r0_block: int = 2048):
    """Inductor's looped softmax: a pass for the row's max and sum, a second pass over the row."""
    text = f"""triton.kernel @softmax reduction(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel {rows} r0_numel {cols} configs [#triton.config<XBLOCK = 1, R0_BLOCK = {r0_block}, num_warps = 16, num_stages = 1>] {{
  triton.index x0 = xindex
  %0 = arith.constant 0xff800000 : f32
  %1 = arith.constant 0.000000e+00 : f32
  %2, %3 = triton.rloop iter_args(%4 = %0 : f32, %5 = %1 : f32) {{
    triton.index r0_0 = r0_index
    %6 = triton.load %in_ptr0[r0_0 + {cols}*x0] evict_last : f32
    %7, %8 = triton.accumulate online_softmax %6 into %4, %5 : f32 -> f32, f32
    triton.yield %7, %8 : f32, f32
  }}
  %9, %10 = triton.reduce online_softmax %2, %3 : f32, f32 -> f32, f32
  triton.rloop {{
    triton.index r0_0 = r0_index
    %11 = triton.load %in_ptr0[r0_0 + {cols}*x0] evict_first : f32
    %12 = arith.subf %11, %9 : f32
    %13 = math.exp %12 : f32
    %14 = arith.divf %13, %10 : f32
    triton.store %out_ptr0[r0_0 + {cols}*x0], %14 : f32
    triton.yield
  }}
}}
triton.wrapper @call {{
  triton.input "x" #buffer.layout<[{rows}, {cols}], [{cols}, 1], f32>
  triton.alloc "out" #buffer.layout<[{rows}, {cols}], [{cols}, 1], f32>
  triton.launch @softmax(@x, @out) xnumel {rows} r0_numel {cols}
  triton.return @out
}}"""
    (_, p), = predictions(parsed(text), T)
    return p


def test_a_second_pass_over_rows_that_fit_l1_costs_no_l2_and_one_that_does_not_adds_l2():
    """16 KiB rows, 4 programs resident per SM: 64 KiB stays in L1 (softmax [4096, 4096] on the
    H200: 1.50x over with the second pass from L2). 128 KiB rows, 3 resident: 384 KiB does not,
    and the second pass comes from L2 after the first (softmax [256, 32768])."""
    fits = looped_softmax(4096, 4096)
    assert fits.traffic.requested_bytes == 3 * 4 * 4096 * 4096 and fits.bound == "dram"
    assert fits.seconds == pytest.approx(1e-6 + 2 * 4 * 4096 * 4096 / 1e12)
    spills = looped_softmax(256, 32768)
    assert spills.seconds == pytest.approx(1e-6 + 2 * 4 * 256 * 32768 / 1e12 + 4 * 256 * 32768 / 4e12)


def test_one_program_looping_over_small_tiles_is_bound_by_its_round_trips():
    """One row of 6400 in tiles of 64: two loops of 100 iterations, each a round trip after the
    one `kernel_s` holds (as cross_entropy's second kernel: one program), and the online
    softmax's combine across warps after the first loop."""
    p = looped_softmax(1, 6400, r0_block=64)
    assert p.bound == "serial"
    assert p.seconds == pytest.approx(1e-6 + (2 * 100 - 1) * 0.25e-6 + 0.1e-6)
    assert looped_softmax(1, 64, r0_block=64).seconds == pytest.approx(1e-6 + 0.25e-6 + 0.1e-6)  # its bytes: 0.05 us


def test_a_few_programs_reducing_a_few_bytes_wait_for_their_combine():
    """A split reduction's second stage: 32 programs of 8 warps summing 64 partials each. Its
    bytes take 0.03 us at the 32 SMs' share of the bandwidth; the combine across warps after
    the load, 0.1 us, bounds it. 3200 rows of 4096 (4 rounds of 100 SMs x 8 programs: 1.15 us
    of round trips and combines) are bound by their 52 MB, the combines hidden."""
    few = reduction_prediction(32, 64, warps=8)
    assert few.traffic.combines == 1
    assert few.bound == "serial" and few.seconds == pytest.approx(1e-6 + 0.1e-6)
    many = reduction_prediction(3200, 4096, warps=8)
    assert many.bound == "dram" and many.seconds == pytest.approx(1e-6 + 3200 * (4096 + 1) * 4 / 1e12)


def test_a_gather_of_one_element_per_row_moves_a_sector_per_element_and_waits_for_its_index():
    """cross_entropy's loss: per row the logit of its class, from a [rows, classes] tensor; each
    loaded class is a DRAM sector of 32 bytes, and the load waits for the class's load."""
    rows, classes = 4096, 32000
    text = f"""triton.kernel @nll reduction(%in_ptr0: !triton.ptr<i64>, %in_ptr1: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 1 r0_numel {rows} configs [#triton.config<XBLOCK = 1, R0_BLOCK = 2048, num_warps = 16, num_stages = 1>] {{
  %0 = arith.constant 0.000000e+00 : f32
  %1 = triton.rloop iter_args(%2 = %0 : f32) {{
    triton.index r0_0 = r0_index
    %3 = triton.load %in_ptr0[r0_0] evict_first : i64
    %4 = triton.indirect_index %3 size {classes} : i64
    %5 = triton.load %in_ptr1[ind0 + {classes}*r0_0] indirect(%4) evict_first : f32
    %6 = triton.accumulate sum %5 into %2 : f32 -> f32
    triton.yield %6 : f32
  }}
  %7 = triton.reduce sum %1 : f32 -> f32
  triton.store %out_ptr0[0], %7 : f32
}}
triton.wrapper @call {{
  triton.input "target" #buffer.layout<[{rows}], [1], i64>
  triton.input "logits" #buffer.layout<[{rows}, {classes}], [{classes}, 1], f32>
  triton.alloc "out" #buffer.layout<[], [], f32>
  triton.launch @nll(@target, @logits, @out) xnumel 1 r0_numel {rows}
  triton.return @out
}}"""
    (_, p), = predictions(parsed(text), T)
    assert p.traffic.dram_bytes == 8 * rows + 32 * rows + 4
    assert p.traffic.round_trips == 2 * 2  # two iterations of a load and the load it indexes
    assert p.seconds == pytest.approx(1e-6 + (8 * rows + 32 * rows + 4) / (1e12 / 100))
