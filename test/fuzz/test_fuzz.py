"""The differential fuzzer (tools/fuzz.py, fuzz_check.py, mlc_fuzz.py): a fixed set of generated
programs through mlc against eager, and the generator's and shrinker's own properties.

`test_programs` runs SEEDS programs (tensors of at most 20,000 elements, at most 6
statements, half with backward, about 30% edge programs: tools/fuzz_edge.py) in batches, so a
failure names its seeds and prints each
program; reproduce one with `mlc-fuzz --seed S --count 1 --max-numel 20000 --max-stmts 6
--shrink`. Under Triton's interpreter a program takes about 0.35 s (mostly Dynamo and
AOTAutograd; measured on 2 idle cores), so SEEDS is what fits in about 2 minutes of `make test`.
"""

from __future__ import annotations

import os

import torch

if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"

import random  # noqa: E402
import warnings  # noqa: E402

import pytest  # noqa: E402

from mlc.tools import mlc_fuzz  # noqa: E402
from mlc.tools.fuzz import generate  # noqa: E402
from mlc.tools.fuzz_edge import edge_plan  # noqa: E402
from mlc.tools.fuzz_check import (  # noqa: E402
    Outcome,
    _compare_zero_signs,
    _input_source,
    _value_hash,
    aliasing,
    check_program,
    compare,
    layout_problem,
    special_values,
    zero_sign_problem,
    float64_run,
    rounding_noise,
    eager_values,
    interpreter_speedups,
    pytest_case,
    shrink,
)
from mlc.tools.fuzz_ops import OPS  # noqa: E402
from mlc.tools.fuzz_program import Input, Program, Stmt  # noqa: E402

SEEDS = 300
MATMUL_SEEDS = 12
BATCH = 10
SMALL = {"max_numel": 20_000, "max_stmts": 6}


@pytest.mark.parametrize("first", range(0, SEEDS, BATCH), ids=lambda s: f"seeds_{s}_{s + BATCH - 1}")
def test_programs(first: int) -> None:
    failures = []
    with interpreter_speedups(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(first, first + BATCH):
            program = generate(seed, **SMALL)
            outcome = check_program(program)
            if outcome.failed:
                failures.append(f"seed {seed}: {outcome.kind}: {outcome.detail[:500]}\n{program.source()}")
    assert not failures, "\n\n".join(failures)


def test_programs_with_triton_gemms(monkeypatch) -> None:
    """The first MATMUL_SEEDS programs (of the small ones) that start with a matrix product,
    through mlc's own GEMM kernels (`MLC_GEMM=triton`, `mlc-fuzz --gemm triton`): the statements
    after the product are candidates for its kernel's epilogue, a guard before it for its
    operand's prologue."""
    monkeypatch.setenv("MLC_GEMM", "triton")
    programs = (generate(seed, **SMALL) for seed in range(SEEDS, 10 * SEEDS))
    chosen = [p for p in programs if any(s.op == "matmul" for s in p.stmts)][:MATMUL_SEEDS]
    failures = []
    with interpreter_speedups(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for program in chosen:
            outcome = check_program(program)
            if outcome.failed:
                failures.append(f"seed {program.seed}: {outcome.kind}: {outcome.detail[:500]}\n{program.source()}")
    assert len(chosen) == MATMUL_SEEDS and not failures, "\n\n".join(failures)


def test_speedups_launch_two_dimensional_tiles() -> None:
    """The largest-tile launcher takes `launch`'s arguments as they are, a 2-D tiled kernel's
    `ynumel` too (a transposed read: `x.t() + y`)."""
    x, y = torch.randn(64, 48), torch.randn(48, 64)
    torch._dynamo.reset()
    with interpreter_speedups():
        out = torch.compile(lambda x, y: x.t() + y, backend="mlc")(x, y)
    torch.testing.assert_close(out, x.t() + y)


# -- the generator ----------------------------------------------------------------------------


def test_generator_is_deterministic_by_seed() -> None:
    for seed in (0, 7, 123):
        a, b = generate(seed), generate(seed)
        assert a == b and a.source() == b.source()
        for x, y in zip(a.make_inputs(), b.make_inputs()):
            assert torch.equal(x.isnan(), y.isnan()) and torch.equal(x.nan_to_num(), y.nan_to_num())
    assert len({generate(s).source() for s in range(20)}) == 20


def test_generator_leaves_global_random_state_alone() -> None:
    random.seed(5)
    torch.manual_seed(5)
    expected = (random.random(), torch.rand(1))
    random.seed(5)
    torch.manual_seed(5)
    generate(11)
    assert (random.random(), torch.rand(1)) == expected


def test_programs_are_valid_and_print_as_source() -> None:
    """Eager runs every program to finite floats (but edge programs of non-finite inputs); the
    printed source computes the same."""
    namespace = {"torch": torch, "F": torch.nn.functional}
    used = set()
    for seed in range(60):
        program = generate(seed, **SMALL)
        used |= {s.op for s in program.stmts}
        inputs = program.make_inputs()
        outputs = program(*inputs)
        plan = edge_plan(seed)
        for out in outputs:
            assert plan and plan.non_finite or not out.dtype.is_floating_point or torch.isfinite(out).all(), \
                (seed, program.source())
        exec(program.source("g"), namespace)  # the program's own generated text
        for a, b in zip(namespace["g"](*inputs), outputs):
            assert torch.equal(a, b) or (a.isnan() == b.isnan()).all(), program.source()
    assert len(used) > 60, sorted(set(OPS) - used)


def test_shapes_cross_the_passes_thresholds() -> None:
    """Across seeds: unrolled (< 8), persistent (<= 1024), looped and split-sized reductions,
    2-D tile sizes, size-1 dims, rows of over 20,000 elements, all within max_numel."""
    dims = set()
    for seed in range(300):
        for i in generate(seed).inputs:
            assert torch.Size(i.shape).numel() <= 400_000
            dims.update(i.shape)
    assert {1, 3, 5, 7} <= dims
    assert any(d > 8192 for d in dims) and any(1024 < d <= 8192 for d in dims)
    assert any(d > 20_000 for d in dims) and {32, 33, 31} & dims


# -- the checker and the shrinker -------------------------------------------------------------


def test_compare_tolerances() -> None:
    x = torch.linspace(-3, 3, 100)
    assert compare(x * (1 + 1e-6), x, "out") is None
    assert "differ" in compare(x * 1.01, x, "out")
    half = x.half()
    assert compare(half * (1 + 4e-3), half, "out") is None
    nan = torch.tensor([1.0, float("nan")])
    assert compare(nan.clone(), nan, "out") is None
    assert "differ" in compare(torch.tensor([1.0, 2.0]), nan, "out")
    assert "differ" in compare(torch.tensor([0, 1]), torch.tensor([0, 2]), "out")
    # Where eager overflowed (NaN) but float64 did not, eager's value is no reference; where
    # float64 is NaN as well, mlc must be NaN too.
    eager, wide = torch.tensor([float("nan"), float("nan")]), torch.tensor([10.5, float("nan")])
    assert compare(torch.tensor([0.0, float("nan")]), eager, "out", widened=wide) is None
    assert "differ" in compare(torch.tensor([0.0, 1.0]), eager, "out", widened=wide)


def _fake_failure(program: Program) -> Outcome:
    """Fails (like a miscompiled div) whenever the program still divides."""
    return Outcome("mismatch", "forward") if any(s.op == "div" for s in program.stmts) else Outcome("ok")


def test_shrinker_keeps_the_failure_and_removes_the_rest() -> None:
    x0 = Input("x0", (64, 300), torch.float32, -3.0, 3.0, True, 1)
    x1 = Input("x1", (64, 1), torch.float32, 0.5, 2.0, True, 2)
    stmts = (
        Stmt("t0", "exp", ("x0",), (), torch.float32),
        Stmt("t1", "abs_add", ("x1",), (("c", 0.5),), torch.float32),
        Stmt("t2", "div", ("t0", "t1"), (), torch.float32),
        Stmt("t3", "sum", ("t2",), (("dim", 1), ("dtype", None), ("keepdim", False)), torch.float32),
        Stmt("t4", "relu", ("x0",), (), torch.float32),
    )
    program = Program(9, (x0, x1), stmts, ("t3", "t4"))
    small = shrink(program, _fake_failure(program), check=_fake_failure)
    assert [s.op for s in small.stmts] == ["div"]
    assert all(d <= 2 for i in small.inputs for d in i.shape)
    assert not small.backward and eager_values(small) is not None
    case = pytest_case(small, Outcome("mismatch", "forward", "output 0 differs"))
    assert case.startswith("def test_fuzz_seed_9(check, device):") and " / " in case
    namespace = {"torch": torch, "F": torch.nn.functional}
    exec(case, namespace)  # the case is valid Python defining the test


def test_shrinker_leaves_a_passing_program_alone() -> None:
    program = generate(3, **SMALL)
    assert shrink(program, Outcome("mismatch", "forward"), check=lambda p: Outcome("ok")) == program


def test_cli_runs_and_summarizes(capsys: pytest.CaptureFixture[str]) -> None:
    assert mlc_fuzz.main(["--seed", "2", "--count", "2", "--max-numel", "2000", "--max-stmts", "3"]) == 0
    out = capsys.readouterr().out
    assert "programs: 2" in out and "wrong numbers: 0 forward, 0 gradients" in out


def test_rounding_noise_is_wide_only_where_rounding_decides() -> None:
    """The Monte Carlo arithmetic estimate: a batch norm's weight gradient over a constant
    channel cancels to zero, so rounding alone decides it (eager's own error is within the
    estimate); exp of the same weight is well-conditioned, its margin a few ulps of float32."""
    x = Input("x0", (4, 2, 300), torch.float32, 2 / 3, 2 / 3, False, 1)
    w = Input("x1", (2,), torch.float32, 0.5, 2.0, True, 2)
    stmts = (
        Stmt("t0", "batch_norm", ("x0", "x1"), (("training", True), ("weight", True), ("bias", False), ("eps", 1e-6)),
             torch.float32),
        Stmt("t1", "exp", ("x1",), (), torch.float32),
    )
    program = Program(5, (x, w), stmts, ("t0", "t1"))
    cpu = torch.device("cpu")
    eager_in = program.make_inputs(cpu)
    out = program(*eager_in)
    (out[0].sum() + 2 * out[1].sum()).backward()  # check_program's loss
    wide = float64_run(program, cpu, backward=True)
    noise = rounding_noise(program, wide, backward=True)
    eager_error = (eager_in[1].grad.double() - wide[1][1].grad).abs()
    assert (noise[1][1].grad >= eager_error / 4).all() and noise[1][1].grad.max() > 1e-4
    exp_margin = noise[0][1] / wide[0][1].abs()
    assert (exp_margin < 8 * 2.0**-24).all()
    # A wrong value stays wrong: 1% off where the margin is a few ulps.
    assert "differ" in compare(wide[0][1].float() * 1.01, wide[0][1].float(), "out", widened=wide[0][1],
                               noise=noise[0][1])


def test_rounding_noise_moves_equal_values_together() -> None:
    """Rounding is a function of the value: seed 201994 rounds a log_softmax of 12,000 small
    integers (40 distinct values) to float16, and the logsumexp of it is 1.3e-3 from float64's 0
    in every compiler that sums in float32 (eager's float16 kernel happens to give 0). Per-element
    independent noise averages the 12,000 roundings away; per-value noise does not."""
    assert check_program(generate(201994)).kind == "ok"
    t = torch.tensor([1.5, 1.5, -2.25, 1.5], dtype=torch.float64)
    u = _value_hash(t, 7)
    assert u[0] == u[1] == u[3] != u[2] and ((u >= 0) & (u < 1)).all()


# -- edge programs (tools/fuzz_edge.py) -------------------------------------------------------


def test_edge_programs_leave_the_other_seeds_alone() -> None:
    """The edge features come from a stream of their own: a seed that is no edge program gives
    the program it gives with no edge programs at all."""
    ordinary = [s for s in range(40) if edge_plan(s) is None]
    assert 10 < len(ordinary) < 40
    for seed in ordinary:
        assert generate(seed, **SMALL) == generate(seed, **SMALL, edge_fraction=0.0)
    assert all(edge_plan(s, 0.0) is None for s in range(40))


def _edge_programs(count: int) -> list[Program]:
    return [generate(seed, **SMALL, edge_fraction=1.0) for seed in range(count)]


def test_edge_programs_have_each_feature() -> None:
    """Over 60 seeds: inputs holding -0.0, inf and NaN; inputs and values with a size-0 dim,
    0-d inputs; an output that is a strided view and one that is a stride-0 expand of another
    output; a reduction over a size-0 dim."""
    programs = _edge_programs(60)
    inputs = [t for p in programs for t in p.make_inputs()]
    floats = [t for t in inputs if t.dtype.is_floating_point]
    assert any(((t == 0) & t.signbit()).any() for t in floats)
    assert any(t.isnan().any() for t in floats) and any(t.isinf().any() for t in floats)
    assert any(0 in t.shape for t in inputs) and any(t.dim() == 0 for t in inputs)
    viewing = [p for p in programs if any(s.op == "expand" and s.out in p.outputs for s in p.stmts)]
    assert any(aliasing(p(*p.make_inputs())) for p in viewing)
    assert any(0 in v.shape and s.op in ("sum", "mean", "prod", "nansum", "logsumexp")
               for p in programs if (values := eager_values(p)) for s in p.stmts for v in [values[s.args[0]]])


def test_special_inputs_print_as_source() -> None:
    """An input with special values prints (pytest_case) as lines computing the same tensor."""
    x = Input("x0", (5, 7), torch.float16, -3.0, 3.0, False, 41, (0.0, -0.0, float("inf"), float("nan")), 0.5)
    namespace = {"torch": torch, "device": torch.device("cpu")}
    exec("\n".join(line.strip() for line in _input_source(x).splitlines()), namespace)  # pytest_case indents them
    made, printed = x.make(), namespace["x0"]
    assert torch.equal(made.isnan(), printed.isnan()) and torch.equal(made.signbit(), printed.signbit())
    assert torch.equal(made.nan_to_num(), printed.nan_to_num()) and made.isnan().any() and made.isinf().any()
    assert [repr(v) for v in special_values(made)[0]] == ["-0.0", "inf", "nan"]  # NaN is no NaN's equal


def test_checker_flags_a_zero_of_the_wrong_sign() -> None:
    eager = torch.tensor([-0.0, 0.0, 1.0])
    assert zero_sign_problem(eager.clone(), eager, "out") is None
    assert "wrong sign" in zero_sign_problem(torch.tensor([0.0, 0.0, 1.0]), eager, "out")
    # a zero float64 does not compute (rounding made it) may have either sign
    rounded = torch.tensor([-1e-30, 0.0, 1.0])
    assert zero_sign_problem(torch.tensor([0.0, 0.0, 1.0]), eager, "out", widened=rounded) is None


def test_checker_flags_lost_aliasing_and_materialised_expands() -> None:
    y = torch.arange(12.0).reshape(3, 4)
    eager = (y, y.t(), y[:, ::2], y.unsqueeze(0).expand(3, -1, -1))
    assert layout_problem([t for t in eager], eager) is None
    copies = [t.clone() for t in eager]  # the values, but four buffers (a contiguous expand)
    assert layout_problem(copies, eager)[0] == "aliasing"
    broadcast = torch.ones(4).expand(3, 4)  # one output, a broadcast: the expand stays stride 0
    assert layout_problem([broadcast.contiguous()], [broadcast])[0] == "strides"


def test_zero_signs_are_compared_where_no_op_leaves_them_open() -> None:
    """`-x` over signed zeros, as a compiler writing it `0 - x` computes it: a zero-sign
    mismatch. A sum over a size-1 dim of the same zeros, as a compiler starting the sum from its
    first element computes it: -0 where eager (starting from +0) gives +0; a sum leaves the sign
    open, so its zeros are compared by value only."""
    x = Input("x0", (8, 1), torch.float32, 0.0, 0.0, False, 3, (0.0, -0.0), 0.5)
    neg = Stmt("t0", "neg", ("x0",), (), torch.float32)
    summed = Stmt("t1", "sum", ("t0",), (("dim", -1), ("dtype", None), ("keepdim", True)), torch.float32)
    for stmts, kind in (((neg,), "mismatch"), ((neg, summed), "ok")):
        program = Program(1, (x,), stmts, (stmts[-1].out,))
        inputs = program.make_inputs()
        expected = list(program(*inputs))
        wrong = [0 - inputs[0]] if len(stmts) == 1 else [-inputs[0]]
        assert zero_sign_problem(wrong[0], expected[0], "out") is not None
        wide = float64_run(program, torch.device("cpu"), backward=False)
        assert _compare_zero_signs(program, (wrong, inputs), (expected, inputs), wide).kind == kind
