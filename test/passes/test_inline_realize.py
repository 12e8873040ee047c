"""--inline and --realize: the shared decision, op counting, naming, flat indices, masked-load
inlining (checked numerically with the loops interpreter), failures and determinism."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import fields
from io import StringIO
from pathlib import Path

import pytest
import sympy
import torch
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import PassFailedException

from mlc.dialects import buffer
from mlc.dialects.loops import LoopsBodyOp
from mlc.dialects.registry import make_context
from mlc.dialects.sym import FloorDiv, ModularIndexing, expr_from_str, expr_str, symbol
from mlc.analysis.flat_index import affine_strides, nonnegative, simplify_index
from mlc.analysis.realization import OpCount, RealizeOptions, consumers, count_ops, realize_reason
from mlc.passes.inline import InlinePass
from mlc.passes.realize import RealizePass
from mlc.passes.registry import PASSES, parse_pipeline
from mlc.test.passes import loops_interp as interp

ROOT = Path(__file__).resolve().parents[2]
SEED_000 = ROOT / "test/lit/passes/realize/seed_000_gelu.mlir"
i0, i1 = symbol("i0"), symbol("i1")


def parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def run(text: str, spec: str) -> ModuleOp:
    module = parse(text)
    parse_pipeline(spec).apply(make_context(), module)
    module.verify()
    return module


def show(module: ModuleOp) -> str:
    out = StringIO()
    Printer(stream=out).print_op(module)
    return out.getvalue()


def by_origin(module: ModuleOp) -> dict[str, LoopsBodyOp]:
    return {op.origin_names[0]: op for op in module.walk() if isinstance(op, LoopsBodyOp) and op.origins}


def producer(reads: int = 1, ops: int = 1, users: int = 1, trivial: bool = False) -> str:
    """A func whose producer "p" has `reads` loads and `ops` ops in all, read by `users` ops."""
    idx = "0" if trivial else "i0"
    body, acc = [], None
    for k in range(reads):
        body.append(f"%l{k} = loops.load %a{k}[{idx}] : tensor<8xf32>")
        if acc is not None:
            body.append(f"%s{k} = arith.addf %{acc}, %l{k} : f32")
        acc = f"s{k}" if acc is not None else f"l{k}"
    for k in range(ops - (2 * reads - 1)):
        body.append(f"%e{k} = math.exp %{acc} : f32")
        acc = f"e{k}"
    args = ", ".join(f"%a{k}: tensor<8xf32>" for k in range(reads))
    types = ", ".join(["tensor<8xf32>"] * users)
    text = [f"func.func @f({args}) -> ({types}) {{",
            '%p = loops.pointwise [8] origins ["p"] -> tensor<8xf32> {', *body, f"loops.yield %{acc} : f32", "}"]
    for u in range(users):
        text += [f'%c{u} = loops.pointwise [8] origins ["c{u}"] -> tensor<8xf32> {{',
                 "%0 = loops.load %p[i0] : tensor<8xf32>", "%1 = arith.negf %0 : f32", "loops.yield %1 : f32", "}"]
    text.append(f"func.return {', '.join(f'%c{u}' for u in range(users))} : {types}")
    return "\n".join(text + ["}"])


def reason_of_p(text: str, **options: int) -> str | None:
    """realize_reason for "p" in `text` as written (no inlining), with the given thresholds."""
    module = parse(text)
    block = next(o for o in module.walk() if isinstance(o, func.FuncOp)).body.block
    p = by_origin(module)["p"]
    return realize_reason(p, consumers(block)[p], RealizeOptions(**options))


# ---------------------------------------------------------------------------------------------
# The decision


@pytest.mark.parametrize(
    "reads, ops, users, options, reason",
    [
        (2, 3, 1, {}, None),
        (5, 9, 3, {}, "reused by 3 consumers and reads 5 > 4 times"),
        (4, 7, 3, {}, None),
        (1, 31, 2, {}, "reused by 2 consumers and body has 31 > 30 ops"),
        (1, 30, 2, {}, None),
        (2, 34, 1, {}, "body has 34 > 30 ops"),  # has_exceeded_max_reads via a large inner fn
        (1, 34, 1, {}, None),  # ... but realize_hint wants more than one nontrivial read
        (9, 17, 1, {}, "reads 9 > 8 times"),
        (8, 15, 1, {}, None),
        (9, 17, 1, {"acc_reads_threshold": 9}, None),
        (1, 101, 1, {}, "body has 101 > 100 ops"),  # Inductor's recursion guard, any uses
        (1, 100, 1, {}, None),
        (1, 101, 1, {"opcount_threshold": 120}, None),  # the guard is max(100, threshold)
        (3, 5, 1, {"acc_reads_threshold": 2}, "reads 3 > 2 times"),
        (3, 5, 2, {"reads_threshold": 2}, "reused by 2 consumers and reads 3 > 2 times"),
    ],
)
def test_reason_thresholds(reads: int, ops: int, users: int, options: dict[str, int], reason: str | None) -> None:
    assert reason_of_p(producer(reads, ops, users), **options) == reason


def test_constant_index_reads_are_not_nontrivial() -> None:
    assert reason_of_p(producer(9, 17, 1, trivial=True)) is None


def test_always_realized_reasons() -> None:
    module = parse("""
    func.func @f(%x: tensor<8x4xf32>, %w: tensor<4x4xf32>) -> (tensor<8x4xf32>, tensor<8xf32>) {
      %r = loops.pointwise [8, 4] origins ["relu"] -> tensor<8x4xf32> {
        %0 = loops.load %x[i0, i1] : tensor<8x4xf32>
        %1 = math.absf %0 : f32
        loops.yield %1 : f32 }
      %m = loops.extern "mm.default" (%r, %w) {args = [#aten.tensor, #aten.tensor]} : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
      %s = loops.reduction [8] over [4] origins ["sum"] -> tensor<8xf32> {
        %0 = loops.load %m[i0, r0_0] : tensor<8x4xf32>
        %1 = loops.reduce sum %0 : f32 -> f32
        loops.yield %1 : f32 }
      %z = loops.pointwise [8, 4] origins ["full"] -> tensor<8x4xf32> {
        %0 = arith.constant 1.0 : f32
        loops.yield %0 : f32 }
      %v = loops.pointwise [4, 8] origins ["view"] -> tensor<4x8xf32> {
        %0 = loops.load %x[i1, i0] : tensor<8x4xf32>
        loops.yield %0 : f32 }
      %o = loops.pointwise [8, 4] origins ["out"] -> tensor<8x4xf32> {
        %0 = loops.load %z[i0, i1] : tensor<8x4xf32>
        %1 = loops.load %v[i1, i0] : tensor<4x8xf32>
        %2 = loops.load %z[0, i1] : tensor<8x4xf32>
        %3 = loops.load %v[0, i0] : tensor<4x8xf32>
        %4 = arith.addf %0, %1 : f32
        %5 = arith.addf %2, %3 : f32
        %6 = arith.addf %4, %5 : f32
        loops.yield %6 : f32 }
      func.return %o, %s : tensor<8x4xf32>, tensor<8xf32>
    }""")
    block = next(o for o in module.walk() if isinstance(o, func.FuncOp)).body.block
    uses = consumers(block)
    reasons = {op.name if not isinstance(op, LoopsBodyOp) else op.origin_names[0]:
               realize_reason(op, uses[op], RealizeOptions(0, 0, 0)) for op in block.ops}
    assert reasons == {
        "relu": "read by extern 'mm.default'",
        "loops.extern": "extern kernel 'mm.default'",
        "sum": "reduction",
        "full": None,  # no loads: recomputed, even with every threshold at 0
        "view": None,  # a single load (a view): re-indexed, never stored for reuse
        "out": "graph output",
        "func.return": None,
    }


def test_count_ops_seed_gelu() -> None:
    """Seed 000's tmp0..tmp9 after CSE: 1 load (tmp0 = tmp3), 3 constants, 5 math ops."""
    module = run(SEED_000.read_text(), "inline")
    assert count_ops(by_origin(module)["gelu"]) == OpCount(num_ops=9, num_reads=1, nontrivial_reads=1)


def test_count_ops_cse_and_size_one_dims() -> None:
    """Equal constants count once; a size-1 dim's index variable is 0, as Inductor's _index."""
    module = parse("""
    func.func @f(%x: tensor<8x1xf32>) -> tensor<8x1xf32> {
      %p = loops.pointwise [8, 1] origins ["p"] -> tensor<8x1xf32> {
        %0 = loops.load %x[i0, i1] : tensor<8x1xf32>
        %1 = loops.load %x[i0, 0] : tensor<8x1xf32>
        %2 = arith.constant 2.0 : f32
        %3 = arith.constant 2.0 : f32
        %4 = arith.mulf %0, %2 : f32
        %5 = arith.mulf %1, %3 : f32
        %6 = arith.addf %4, %5 : f32
        loops.yield %6 : f32 }
      func.return %p : tensor<8x1xf32>
    }""")
    assert count_ops(by_origin(module)["p"]) == OpCount(num_ops=4, num_reads=1, nontrivial_reads=1)


def test_options_same_names_and_validated() -> None:
    thresholds = {f.name: f.default for f in fields(RealizeOptions)}
    for cls in (InlinePass, RealizePass):
        assert {f.name: f.default for f in fields(cls) if f.name in thresholds} == thresholds
    assert list(PASSES).index("inline") < list(PASSES).index("realize")
    with pytest.raises(ValueError, match="reads-threshold must be >= 0"):
        parse_pipeline("inline{reads-threshold=-1}")
    with pytest.raises(ValueError, match="opcount-threshold"):
        RealizePass(opcount_threshold=-2)


# ---------------------------------------------------------------------------------------------
# Realization: names, layouts, flat indices


def test_naming_order() -> None:
    module = run("""
    func.func @f(%x: tensor<8xf32>, %y: tensor<8xf32> loc("primals_2"), %42: tensor<8xf32>) -> (tensor<8xf32>, tensor<f32>, tensor<8xf32>) {
      %a = loops.pointwise [8] origins ["a"] -> tensor<8xf32> {
        %0 = loops.load %x[i0] : tensor<8xf32>
        %1 = math.exp %0 : f32
        loops.yield %1 : f32 }
      %e = loops.extern "cumsum.default" (%a) {args = [#aten.tensor, 0 : i64]} : (tensor<8xf32>) -> tensor<8xf32>
      %s = loops.reduction [] over [8] origins ["s"] -> tensor<f32> {
        %0 = loops.load %e[r0_0] : tensor<8xf32>
        %1 = loops.reduce sum %0 : f32 -> f32
        loops.yield %1 : f32 }
      func.return %a, %s, %y : tensor<8xf32>, tensor<f32>, tensor<8xf32>
    }""", "inline,realize")
    graph = next(o for o in module.walk() if isinstance(o, buffer.GraphOp))
    names = [n for node in graph.nodes() for n in node.defined_names()]
    assert names == ["x", "primals_2", "arg2", "buf0", "buf1", "buf2"]
    output = graph.body.block.last_op
    assert isinstance(output, buffer.OutputOp) and output.names == ["buf0", "buf2", "primals_2"]


@pytest.mark.parametrize(
    "shape, index, expected",
    [
        ("64x32", "i1, i0", "i0 + 32*i1"),  # permute
        ("64", "i1", "i1"),  # broadcast over dim 0
        ("1x64", "0, i1", "i1"),  # expand of a size-1 dim
        ("2x4x64", "FloorDiv(i0, 4), ModularIndexing(i0, 1, 4), i1", "i1 + 64*i0"),  # reshape [8,64]
        ("8x66", "i0, 2 + i1", "2 + i1 + 66*i0"),  # slice
        ("8x64x2", "i0, i1, 1", "1 + 2*i1 + 128*i0"),  # select
    ],
)
def test_flat_index_of_views(shape: str, index: str, expected: str) -> None:
    text = f"""
    func.func @f(%x: tensor<{shape}xf32>) -> tensor<8x64xf32> {{
      %v = loops.pointwise [8, 64] -> tensor<8x64xf32> {{
        %0 = loops.load %x[{index}] : tensor<{shape}xf32>
        %1 = math.exp %0 : f32
        loops.yield %1 : f32 }}
      func.return %v : tensor<8x64xf32>
    }}"""
    load = next(o for o in run(text, "inline,realize").walk() if isinstance(o, buffer.LoadOp))
    assert str(load.index.text.data) == expected


def test_simplify_index() -> None:
    ranges = {i0: sympy.Integer(512), i1: sympy.Integer(64)}
    assert simplify_index(64 * FloorDiv(i0, 64) + ModularIndexing(i0, 1, 64), ranges) == i0
    assert simplify_index(ModularIndexing(i1, 1, 64) + 64 * FloorDiv(i1, 64), ranges) == i1
    assert simplify_index(FloorDiv(i1, 128), ranges) == 0
    kept = ModularIndexing(i0, 1, 64)  # i0 reaches 511: the modulus matters
    assert simplify_index(kept, ranges) == kept


def test_affine_strides() -> None:
    assert affine_strides(i0 + 32 * i1, [i0, i1]) == (0, [1, 32])
    assert affine_strides(4 + 64 * i0, [i0, i1]) == (4, [64, 0])
    assert affine_strides(ModularIndexing(i0, 1, 4) + 4 * i1, [i0, i1]) is None
    assert affine_strides(64 - i0, [i0]) is None  # a flip: no non-negative stride


def test_simplify_index_over_symbolic_ranges() -> None:
    """BERT's attention scores under dynamic shapes, [s0, 12, s1, s1] viewed flat and back: the
    digits of a flat index over symbolic extents fold away as they do over integers (before,
    the multiples pulled out of a FloorDiv stayed a quotient `(...)/s1**2` that no printer takes)."""
    s1, i2, r = symbol("s1"), symbol("i2"), symbol("r0_0")
    ranges = {i0: symbol("s0"), i1: sympy.Integer(12), i2: s1, r: s1}
    flat = 12 * i0 * s1**2 + i1 * s1**2 + i2 * s1 + r
    index = s1**2 * FloorDiv(flat, s1**2) + s1 * ModularIndexing(flat, s1, s1) + ModularIndexing(flat, 1, s1)
    simplified = expr_from_str(expr_str(simplify_index(index, ranges)))  # printable
    assert sympy.expand(simplified - flat) == 0
    assert simplify_index(FloorDiv(i2 * s1 + r, s1**2), ranges) == 0  # i2*s1 + r < s1**2
    kept = FloorDiv(i2 * s1 + r, s1**2 - 1)  # s1**2 - 1 is not past every i2*s1 + r
    assert simplify_index(kept, ranges) == kept


def test_nonnegative_sizes() -> None:
    s0, s1 = symbol("s0"), symbol("s1")
    assert nonnegative(s1**2 - s1) and nonnegative(s0 * s1 - 1) and nonnegative(FloorDiv(s1, 32))
    assert not nonnegative(s1 - 2)  # s1 may be 1
    assert not nonnegative(i0)  # an index is not a size


def test_affine_strides_of_sizes() -> None:
    s0, s1 = symbol("s0"), symbol("s1")
    assert affine_strides(s1 * 64 * i0 + 64 * i1 + s1, [i0, i1]) == (s1, [64 * s1, 64])
    assert affine_strides((s1 - 2) * i0, [i0]) is None  # not provably non-negative


def test_symbolic_ranges_get_symbolic_layouts() -> None:
    """A size symbol (dynamic shapes) gives a layout whose sizes and strides are expressions."""
    text = """
    func.func @f(%n: !sym.int<s0>, %m: !sym.int<s1>, %x: tensor<?x?xf32, #sym.sizes<[s0, s1]>>) -> tensor<?x?xf32, #sym.sizes<[s0, s1]>> {
      %y = loops.pointwise [s0, s1] origins ["neg"] -> tensor<?x?xf32, #sym.sizes<[s0, s1]>> {
        %0 = loops.load %x[i0, i1] : tensor<?x?xf32, #sym.sizes<[s0, s1]>>
        %1 = arith.negf %0 : f32
        loops.yield %1 : f32 } loc("neg")
      func.return %y : tensor<?x?xf32, #sym.sizes<[s0, s1]>>
    }"""
    out = show(run(text, "realize"))
    assert 'buffer.size_input "n" <s0>' in out and 'buffer.size_input "m" <s1>' in out
    assert 'buffer.computed "buf0" #buffer.layout<[s0, s1], [s1, 1], f32> ranges [s0, s1]' in out
    assert "buffer.store @buf0[i1 + i0*s1]" in out


# ---------------------------------------------------------------------------------------------
# Inlining keeps the values: compare with the loops interpreter


def check_inline_numerics(text: str) -> ModuleOp:
    before = parse(text)
    inlined = run(text, "inline")
    gen = torch.Generator().manual_seed(0)
    fn = next(o for o in before.walk() if isinstance(o, func.FuncOp))
    inputs = [torch.randn(list(a.type.get_shape()), generator=gen) for a in fn.body.block.args]
    for want, got in zip(interp.run(before, inputs), interp.run(inlined, inputs)):
        torch.testing.assert_close(got, want)
    return inlined


def test_masked_load_inlining_selects_zero() -> None:
    """Zero padding of exp(x): masked-off lanes must be 0, not exp(0) = 1."""
    inlined = check_inline_numerics("""
    func.func @pad(%x: tensor<8xf32>) -> tensor<12xf32> {
      %e = loops.pointwise [8] origins ["exp"] -> tensor<8xf32> {
        %0 = loops.load %x[i0] : tensor<8xf32>
        %1 = math.exp %0 : f32
        loops.yield %1 : f32 }
      %p = loops.pointwise [12] origins ["pad"] -> tensor<12xf32> {
        %i = loops.index i0 : i64
        %c2 = arith.constant 2 : i64
        %c10 = arith.constant 10 : i64
        %lo = arith.cmpi sge, %i, %c2 : i64
        %hi = arith.cmpi slt, %i, %c10 : i64
        %in = arith.andi %lo, %hi : i1
        %0 = loops.load %e[i0 - 2] mask %in : tensor<8xf32>
        loops.yield %0 : f32 }
      func.return %p : tensor<12xf32>
    }""")
    assert list(by_origin(inlined)) == ["exp"]  # one op left, with both origins
    assert "arith.select" in show(inlined)


def test_transposed_chain_inlining_keeps_values() -> None:
    check_inline_numerics("""
    func.func @chain(%x: tensor<4x6xf32>, %b: tensor<4xf32>) -> tensor<6x4xf32> {
      %t = loops.pointwise [6, 4] origins ["permute"] -> tensor<6x4xf32> {
        %0 = loops.load %x[i1, i0] : tensor<4x6xf32>
        %1 = loops.index i0 : i64
        %2 = arith.sitofp %1 : i64 to f32
        %3 = arith.addf %0, %2 : f32
        loops.yield %3 : f32 }
      %u = loops.pointwise [4, 6] origins ["permute"] -> tensor<4x6xf32> {
        %0 = loops.load %t[i1, i0] : tensor<6x4xf32>
        %1 = loops.load %b[i0] : tensor<4xf32>
        %2 = arith.mulf %0, %1 : f32
        loops.yield %2 : f32 }
      %w = loops.pointwise [6, 4] origins ["add"] -> tensor<6x4xf32> {
        %0 = loops.load %u[i1, i0] : tensor<4x6xf32>
        %1 = loops.load %t[i0, i1] : tensor<6x4xf32>
        %2 = arith.addf %0, %1 : f32
        loops.yield %2 : f32 }
      func.return %w : tensor<6x4xf32>
    }""")


# ---------------------------------------------------------------------------------------------
# Determinism


def test_output_is_byte_identical_across_processes() -> None:
    """Two mlc-opt runs with different hash seeds print the same bytes."""
    outputs = []
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        cmd = [sys.executable, "-m", "mlc.tools.mlc_opt", str(SEED_000), "-p", "inline,realize{explain=true}"]
        outputs.append(subprocess.run(cmd, env=env, capture_output=True, check=True).stdout)
    assert outputs[0] == outputs[1] and b'buffer.computed "buf5"' in outputs[0]


# ---------------------------------------------------------------------------------------------
# f16/bf16: no rounding between fused ops (unless emulate-precision-casts)

F16_CHAIN = """
func.func @f(%x: tensor<8x64x{t}>, %w: tensor<64x{t}>, %y: tensor<8x64x{t}>) -> tensor<16x64x{t}> {{
  %0 = aten.mul.Tensor %x, %w : (tensor<8x64x{t}>, tensor<64x{t}>) -> tensor<8x64x{t}>
  %1 = aten.exp %0 : (tensor<8x64x{t}>) -> tensor<8x64x{t}>
  %2 = aten.add.Scalar %1 {{other = 1.000000e+00 : f64}} : (tensor<8x64x{t}>) -> tensor<8x64x{t}>
  %3 = aten.neg %y : (tensor<8x64x{t}>) -> tensor<8x64x{t}>
  %4 = aten.cat [%2, %3] : (tensor<8x64x{t}>, tensor<8x64x{t}>) -> tensor<16x64x{t}>
  %5 = aten.sigmoid %4 : (tensor<16x64x{t}>) -> tensor<16x64x{t}>
  func.return %5 : tensor<16x64x{t}>
}}"""


def _f16_chain_inputs(dtype: torch.dtype) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    return [torch.randn(shape, generator=gen).to(dtype) for shape in ([8, 64], [64], [8, 64])]


def _casts(module: ModuleOp) -> tuple[int, int]:
    body = [o for o in module.walk() if type(o).__name__ in ("ExtFOp", "TruncFOp")]
    return sum(o.name == "arith.extf" for o in body), sum(o.name == "arith.truncf" for o in body)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_low_precision_chain_rounds_once(dtype: torch.dtype) -> None:
    """Fused, the chain computes in f32 and rounds once at the store, as Inductor's kernel:
    exactly the f32 computation from the same inputs, narrowed at the end (and not eager)."""
    text = F16_CHAIN.format(t={torch.float16: "f16", torch.bfloat16: "bf16"}[dtype])
    inputs = _f16_chain_inputs(dtype)
    fused = run(text, "lower-aten,inline")
    assert _casts(fused) == (3, 1)  # one extf per load, one truncf before the yield
    x, w, y = (t.float() for t in inputs)
    want = torch.sigmoid(torch.cat([torch.exp(x * w) + 1, -y])).to(dtype)
    (got,) = interp.run(fused, inputs)
    assert got.dtype == dtype
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    (eager,) = interp.run(parse(text), inputs)  # aten ops: rounds after every op
    assert not torch.equal(got, eager)
    torch.testing.assert_close(got, eager)  # ... within the dtype's tolerance


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_emulate_precision_casts_rounds_like_eager(dtype: torch.dtype) -> None:
    text = F16_CHAIN.format(t={torch.float16: "f16", torch.bfloat16: "bf16"}[dtype])
    inputs = _f16_chain_inputs(dtype)
    emulated = run(text, "lower-aten,inline{emulate-precision-casts=true}")
    assert _casts(emulated)[1] > 1
    (got,) = interp.run(emulated, inputs)
    (eager,) = interp.run(parse(text), inputs)
    torch.testing.assert_close(got, eager, rtol=0, atol=0)


def test_explicit_half_round_trip_rounds() -> None:
    """x.half().float() ** 2 rounds to f16 in the fused kernel, as eager does (Inductor's
    to_dtype would cast to the compute type and not round); emulate-precision-casts too."""
    text = """
    func.func @f(%x: tensor<64xf32>) -> tensor<64xf32> {
      %0 = aten._to_copy %x {dtype = f16} : (tensor<64xf32>) -> tensor<64xf16>
      %1 = aten._to_copy %0 {dtype = f32} : (tensor<64xf16>) -> tensor<64xf32>
      %2 = aten.mul.Tensor %1, %1 : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
      func.return %2 : tensor<64xf32>
    }"""
    x = torch.randn(64, generator=torch.Generator().manual_seed(1))
    rounded = x.half().float()
    fused = run(text, "lower-aten,inline")
    assert _casts(fused) == (2, 2)  # one rounding per load of the inlined conversion
    torch.testing.assert_close(interp.run(fused, [x])[0], rounded * rounded, rtol=0, atol=0)
    emulated = run(text, "lower-aten,inline{emulate-precision-casts=true}")
    torch.testing.assert_close(interp.run(emulated, [x])[0], rounded * rounded, rtol=0, atol=0)


def test_digits_with_symbolic_coefficients_merge() -> None:
    """GPT-2's addmm result, [s0*s1, 32] viewed as [s0, s1, 32]: the row digits have the
    symbolic weight 32*s1 and merge back to the flat index (it was a copy kernel)."""
    s0, s1, x = symbol("s0"), symbol("s1"), symbol("x")
    index = ModularIndexing(x, 1, 32) + 32 * ModularIndexing(x, 32, s1) + 32 * s1 * FloorDiv(x, 32 * s1)
    assert simplify_index(index, {x: 32 * s0 * s1}) == x
