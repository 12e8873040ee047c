"""mlc-opt as a user meets it: round-trips, clean errors on bad input, flags, the embedding API."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

import mlc
from mlc.tools.mlc_opt import SPLIT_MARKER, run

LIT = Path(__file__).resolve().parents[1] / "lit"
SAMPLE = LIT / "dialects" / "buffer" / "roundtrip.mlir"


def mlc_opt(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    """Run mlc-opt in-process (fast); any exception escaping `run` fails the test."""
    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code = run(list(argv))
    finally:
        sys.stdin = old_stdin
    return code, out.getvalue(), err.getvalue()


def valid_chunks() -> list[tuple[str, str]]:
    """Every `// -----` chunk of every lit test that is valid IR on its own."""
    chunks = []
    for path in sorted(LIT.rglob("*.mlir")):
        for k, chunk in enumerate(path.read_text().split(SPLIT_MARKER)):
            if "expected-error" in chunk or "op" not in chunk:
                continue
            chunks.append((f"{path.relative_to(LIT)}#{k}", chunk))
    return chunks


@pytest.mark.parametrize("name,text", valid_chunks(), ids=[n for n, _ in valid_chunks()])
def test_every_lit_input_round_trips(name: str, text: str) -> None:
    code, first, err = mlc_opt(stdin=text)
    if code != 0:
        pytest.skip(f"not valid IR on its own: {err.splitlines()[0] if err else ''}")
    code, second, err = mlc_opt(stdin=first)
    assert code == 0, err
    assert second == first
    code, generic, _ = mlc_opt("--print-op-generic", stdin=text)
    code, from_generic, err = mlc_opt(stdin=generic)
    assert from_generic == first, err


def test_truncated_input_is_a_clean_error() -> None:
    text = SAMPLE.read_text()
    # Every cut point inside the IR (past the RUN/comment header, which alone is an empty module)
    # must give status 1 and a message.
    start = next(i for i in range(len(text)) if text.startswith("buffer.graph", i) and
                 not text[text.rfind("\n", 0, i) + 1 : i].lstrip().startswith("//")) + 1
    for cut in range(start, len(text) - 2, 7):
        code, _, err = mlc_opt(stdin=text[:cut])
        assert code == 1, f"cut at {cut} was accepted"
        assert "error:" in err and "internal error" not in err, err


def test_corrupted_input_is_a_clean_error() -> None:
    text = SAMPLE.read_text()
    start = text.index("buffer.graph")
    junks = ("}", "%", "@", "[", "<<", "-", "0x", "\x00")
    for k, pos in enumerate(range(start, len(text), 13)):
        for junk in (junks[k % len(junks)], junks[(k + 3) % len(junks)]):  # every junk, spread over the positions
            code, _, err = mlc_opt(stdin=text[:pos] + junk + text[pos + 1 :])
            assert "internal error" not in err, f"{junk!r} at {pos}: {err}"
            assert code in (0, 1)
            if code == 1:
                assert "error:" in err


def test_an_unclosed_long_string_literal_is_a_quick_error() -> None:
    """xDSL's string-literal regex backtracked exponentially in the literal's length."""
    import time

    start = time.perf_counter()
    code, _, err = mlc_opt(stdin='buffer.graph @g {\n  buffer.extern "buf0" = "convolution_backward_overrideable.default\n}\n')
    assert code == 1 and "error:" in err
    assert time.perf_counter() - start < 5


def test_errors_name_file_line_col(tmp_path: Path) -> None:
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f(%x: tensor<8xf32>) {\n  %0 = aten.neg %x : (tensor<8xf32>) -> tensor<9xf32>\n  func.return\n}\n")
    code, _, err = mlc_opt(str(bad))
    assert code == 1
    assert err.startswith(f"{bad}:2:3: error: aten.neg: result shape [9]")


def test_unknown_pass_and_flag_exit_1() -> None:
    assert mlc_opt("-p", "no-such-pass", stdin="")[0] == 1
    proc = subprocess.run([sys.executable, "-m", "mlc.tools.mlc_opt", "--no-such-flag"],
                          capture_output=True, text=True)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr


def test_a_pass_flag_before_the_input_file_takes_no_options(tmp_path: Path) -> None:
    """`mlc-opt --lower-aten FILE`: the file is the input, not the flag's options."""
    source = tmp_path / "neg.mlir"
    source.write_text("func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {\n"
                      "  %0 = aten.neg %x : (tensor<8xf32>) -> tensor<8xf32>\n  func.return %0 : tensor<8xf32>\n}\n")
    code, out, err = mlc_opt("--lower-aten", str(source), "--inline")
    assert code == 0, err
    assert "loops.pointwise [8]" in out and "aten.neg" not in out


@pytest.mark.parametrize("spec", ["lower-aten{/x=1}", "lower-aten{", "lower-aten{a=}"])
def test_a_malformed_pipeline_is_one_line_and_status_1(spec: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "mlc.tools.mlc_opt", "-p", spec],
                          input="", capture_output=True, text=True)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("mlc-opt: error: pass-pipeline:1:") and proc.stderr.count("\n") == 1


def test_missing_file() -> None:
    code, _, err = mlc_opt("/no/such/file.mlir")
    assert code == 1 and "cannot read" in err


def test_split_input_file_keeps_line_numbers() -> None:
    text = "func.func @a() {\n  func.return\n}\n// -----\nfunc.func @b() {\n  %0 = aten.neg : () -> ()\n}\n"
    code, out, err = mlc_opt("--split-input-file", stdin=text)
    assert code == 1
    assert "<stdin>:6:" in err
    assert "func.func @a()" in out


def test_verify_diagnostics_reports_missing_and_unexpected() -> None:
    good = "func.func @f(%x: tensor<8xf32>) {\n  // expected-error@+1 {{result shape}}\n  %0 = aten.neg %x : (tensor<8xf32>) -> tensor<9xf32>\n  func.return\n}\n"
    assert mlc_opt("--verify-diagnostics", stdin=good)[0] == 0
    wrong = good.replace("result shape", "something else")
    code, _, err = mlc_opt("--verify-diagnostics", stdin=wrong)
    assert code == 1 and "was not produced" in err and "unexpected error" in err


def test_output_file(tmp_path: Path) -> None:
    out = tmp_path / "out.mlir"
    code, stdout, _ = mlc_opt(str(SAMPLE), "-o", str(out))
    assert code == 0 and stdout == "" and "buffer.graph @forward" in out.read_text()


def test_output_is_deterministic() -> None:
    assert mlc_opt(str(SAMPLE))[1] == mlc_opt(str(SAMPLE))[1]


def test_embedding_api_and_own_pass() -> None:
    from dataclasses import dataclass

    from xdsl.passes import ModulePass

    from mlc.dialects.buffer import ComputedOp

    @mlc.register_pass
    @dataclass(frozen=True)
    class TagComputed(ModulePass):
        """Tag every computed buffer (a test pass)."""

        name = "test-tag-computed"

        def apply(self, ctx, op) -> None:  # type: ignore[no-untyped-def]
            from xdsl.dialects.builtin import UnitAttr

            for node in op.walk():
                if isinstance(node, ComputedOp):
                    node.attributes["tagged"] = UnitAttr()

    from mlc.passes.registry import PASSES

    try:
        module = mlc.parse_module(SAMPLE.read_text(), "sample.mlir")
        mlc.run_passes(module, "test-tag-computed")
        assert str(module).count("tagged") == sum(isinstance(o, ComputedOp) for o in module.walk()) == 3
        code, out, _ = mlc_opt(str(SAMPLE), "-p", "test-tag-computed")
        assert code == 0 and "tagged" in out
    finally:
        PASSES.pop("test-tag-computed")  # the registry is process-wide: leave it as found


def test_parse_error_from_api() -> None:
    from mlc.tools.diagnostics import CompileError

    with pytest.raises(CompileError) as info:
        mlc.parse_module("func.func @f( {", "x.mlir")
    assert info.value.diagnostic.line == 1 and info.value.diagnostic.file == "x.mlir"


def test_startup_is_fast() -> None:
    import time

    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "mlc.tools.mlc_opt", "--help"], check=True, capture_output=True)
    assert time.perf_counter() - start < 3.0  # well under a second on a quiet machine; CI is noisy
    proc = subprocess.run(
        [sys.executable, "-c", "import mlc.tools.mlc_opt, mlc.passes.registry as r, sys;"
         "[r.PASSES[p]() for p in r.PASSES];"
         "print(any(m in sys.modules for m in ('torch', 'triton')))"],
        capture_output=True, text=True, check=True,
    )
    assert proc.stdout.strip() == "False", "mlc-opt must not import torch or triton"


def test_pass_flags_with_and_without_options() -> None:
    from mlc.passes.registry import PASSES

    name = next(iter(PASSES))
    assert mlc_opt(str(SAMPLE), "-p", "") [0] == 0
    code, _, err = mlc_opt(f"--{name}", stdin="builtin.module {\n}\n")
    assert "not found in expected arguments" not in err, err
    code, _, err = mlc_opt(f"--{name}=no-such-option=1", stdin="builtin.module {\n}\n")
    assert code == 1 and "no-such-option" in err


def test_a_bare_option_means_true_in_every_driver() -> None:
    """`fuse{explain}` in -p, `--fuse=explain` and mlc.run_passes: MLIR's bare flag option."""
    from mlc.passes.pipeline import Remark
    from mlc.passes.registry import parse_pipeline

    path = LIT / "passes" / "fuse" / "refusals-offset-memory.mlir"
    for argv in (["-p", "fuse{explain}"], ["--fuse=explain"], ["-p", "fuse{max-rounds=3 explain}"]):
        code, _, err = mlc_opt(str(path), "--split-input-file", *argv)
        assert code == 0 and "remark: [fuse] refused buf0 + buf1" in err, (argv, err)
    seen: list[Remark] = []
    text = path.read_text().split(SPLIT_MARKER)[0]
    mlc.run_passes(mlc.parse_module(text, "shift.mlir"), "fuse{explain}", on_remark=seen.append)
    assert seen
    (convert,) = parse_pipeline("convert-to-triton{check-indices tile-2d=false}").passes
    assert (convert.check_indices, convert.tile_2d) == (True, False)


def test_a_list_option_keeps_its_commas_on_a_pass_flag() -> None:
    """`--lower-aten="fallback=gelu,cat"` is `lower-aten{fallback=gelu,cat}`, not two options."""
    text = "func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {\n  %0 = aten.neg %x : (tensor<8xf32>) -> tensor<8xf32>\n  func.return %0 : tensor<8xf32>\n}\n"
    code, out, err = mlc_opt("--lower-aten=fallback=neg,cat", stdin=text)
    assert code == 0 and 'loops.extern "neg.default"' in out, err


@pytest.mark.parametrize("spec, message", [
    ("fuse{explain=1}", "option 'explain' of pass 'fuse' expects a boolean (true/false), got '1'"),
    ("convert-to-triton{check_indices=3}",
     "option 'check-indices' of pass 'convert-to-triton' expects a boolean (true/false), got '3'"),
    ("realize{reads-threshold=true}", "option 'reads-threshold' of pass 'realize' expects an integer, got 'true'"),
    ("fuse{max-rounds}", "option 'max-rounds' of pass 'fuse' expects an integer, got no value"),
    ("fuse{max-rounds=1,2}", "option 'max-rounds' of pass 'fuse' expects an integer, got '1,2'"),
    ("realize{bogus=1}", "pass 'realize' has no option 'bogus' (its options: reads-threshold, acc-reads-threshold, "
                         "opcount-threshold, explain, keep-padded-outputs)"),
    ("deps{explain}", "pass 'deps' has no option 'explain' (its options: none)"),
    ("inline{reads-threshold=-1}", "pass 'inline': reads-threshold must be >= 0"),
    ("no-such-pass", "unknown pass 'no-such-pass'"),
])
def test_option_errors_name_the_pass_and_the_option_in_words(spec: str, message: str) -> None:
    from mlc.passes.registry import PipelineError

    code, _, err = mlc_opt("-p", spec, stdin="")
    assert code == 1 and err.startswith(f"mlc-opt: error: {message}") and err.count("\n") == 1, err
    with pytest.raises(PipelineError, match=re.escape(message)):
        mlc.run_passes(mlc.parse_module(""), spec)


@pytest.mark.parametrize("annotation", [
    "// expected-error @+1 {{result shape}",  # unclosed
    "// expected-error@+x {{result shape}}",
    "// expected-error: result shape",
    "// expected-remark {{result shape}}",  # only errors are checked
])
def test_a_malformed_annotation_is_an_error(annotation: str) -> None:
    text = ("func.func @f(%x: tensor<8xf32>) {\n  // expected-error@+1 {{result shape}}\n"
            "  %0 = aten.neg %x : (tensor<8xf32>) -> tensor<9xf32>\n  " + annotation + "\n  func.return\n}\n")
    code, _, err = mlc_opt("--verify-diagnostics", stdin=text)
    assert code == 1 and err.startswith("<stdin>:4:6: error: malformed annotation 'expected-"), err


def test_one_runner_names_the_failing_pass_for_every_driver(break_store_pass) -> None:
    """mlc.run_passes, mlc-opt and the backend run pipelines with passes/pipeline.py: a pass
    that raises, or leaves IR that does not verify, is named, and which of the two it was."""
    from dataclasses import dataclass

    from xdsl.passes import ModulePass

    from mlc.passes.pipeline import PassFailed

    @mlc.register_pass
    @dataclass(frozen=True)
    class Raise(ModulePass):
        """Fail (a test pass)."""

        name = "test-raise"

        def apply(self, ctx, op) -> None:  # type: ignore[no-untyped-def]
            raise RuntimeError("boom")

    from mlc.passes.registry import PASSES

    try:
        module = mlc.parse_module(SAMPLE.read_text(), "sample.mlir")
        with pytest.raises(PassFailed) as info:
            mlc.run_passes(module, "test-break-store")
        assert (info.value.pass_name, info.value.in_verify) == ("test-break-store", True)
        assert "renamed" in str(info.value.cause) or "unknown buffer" in str(info.value.cause)
        with pytest.raises(PassFailed) as info:
            mlc.run_passes(module, "test-raise")
        assert (info.value.pass_name, info.value.in_verify) == ("test-raise", False)
        code, _, err = mlc_opt(str(SAMPLE), "-p", "test-break-store")
        assert code == 1 and "roundtrip.mlir:21:3: error:" in err  # file:line:col of the node
        assert "error: after pass 'test-break-store': buffer.computed" in err
        code, _, err = mlc_opt(str(SAMPLE), "-p", "test-raise")
        assert code == 1 and "pass 'test-raise'" in err and "Traceback" not in err
    finally:
        PASSES.pop("test-raise")


def test_remarks_reach_the_pipeline_that_asked() -> None:
    """A pass's `remark(op, ...)` goes to the running pipeline's on_remark with the pass's name;
    mlc-opt prints it at the op's file:line:col; outside a pipeline it is dropped."""
    from mlc.passes.pipeline import Remark, remark

    path = LIT / "passes" / "fuse" / "refusals-offset-memory.mlir"
    text = path.read_text().split(SPLIT_MARKER)[0]
    seen: list[Remark] = []
    module = mlc.parse_module(text, "shift.mlir")
    mlc.run_passes(module, "fuse{explain=true}", on_remark=seen.append)
    assert [(r.pass_name, r.op.name) for r in seen] == [("fuse", "buffer.computed"), ("fuse", "buffer.graph")]
    assert seen[0].message.startswith("refused buf0 + buf1: [different offset]")
    assert seen[1].message == "refusals: different offset: 1"
    mlc.run_passes(mlc.parse_module(text, "shift.mlir"), "fuse{explain=true}")  # no sink: nothing to do
    remark(module, "outside any pipeline")  # dropped, no error
    code, out, err = mlc_opt(str(path), "--split-input-file", "--fuse=explain")
    assert code == 0 and out
    assert "refusals-offset-memory.mlir:25:3: remark: [fuse] refused buf0 + buf1: [different offset]" in err
    code, _, err = mlc_opt(str(path), "--split-input-file", "--fuse")
    assert code == 0 and err == ""  # nothing explained, nothing said


def test_timing_reports_every_pass_and_sums_to_the_total(tmp_path: Path) -> None:
    path = LIT / "passes" / "realize" / "output-strides.mlir"
    code, out, err = mlc_opt(str(path), "--split-input-file", "-p", "realize,convert-to-triton", "--timing")
    assert code == 0 and "triton.kernel" in out
    rows = [line.split(")", 1) for line in err.splitlines() if line.strip().endswith(tuple(
        ["realize", "realize (verify)", "convert-to-triton", "convert-to-triton (verify)", "Total"]))]
    names = [name.strip() for _, name in rows]
    assert names == ["realize", "realize (verify)", "convert-to-triton", "convert-to-triton (verify)", "Total"]
    seconds = [float(head.split("(")[0]) for head, _ in rows]
    assert abs(sum(seconds[:-1]) - seconds[-1]) < 5e-4  # rounding of the printed rows
    total = float(next(line for line in err.splitlines() if "Total Execution Time" in line).split()[-2])
    assert abs(total - seconds[-1]) < 1e-4


@pytest.mark.parametrize("text", ["", "\n\n", "// a comment, no ops\n"])
def test_an_input_without_ops_is_an_empty_module(text: str) -> None:
    code, out, err = mlc_opt("-p", "lower-aten,inline,realize", stdin=text)
    assert (code, err) == (0, "") and out == "builtin.module {\n}\n"


def test_an_unwritable_output_is_a_clean_error() -> None:
    code, out, err = mlc_opt(str(SAMPLE), "-o", "/nonexistent-dir/out.mlir")
    assert code == 1 and err == "mlc-opt: error: cannot write /nonexistent-dir/out.mlir: No such file or directory\n"


def test_help_says_what_every_pass_option_means() -> None:
    from dataclasses import fields

    from mlc.passes.registry import PASSES
    from mlc.tools.mlc_opt import build_arg_parser

    text = build_arg_parser().format_help()
    for name, load in PASSES.items():
        for f in fields(load()):
            assert f.metadata.get("help"), f"{name}: option {f.name} has no help"
            option = f.name.replace("_", "-")
            assert any(line.strip().startswith(f"{option}=") and f.metadata["help"] in line
                       for line in text.splitlines()), option
