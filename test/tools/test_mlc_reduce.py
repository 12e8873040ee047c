"""mlc-reduce as a user meets it: a failing function shrinks to the op that fails, the error
stays the same (under mlc-opt too), and bad input is a clean error."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

import mlc
from mlc.tools.mlc_reduce import identity, run

INPUTS = Path(__file__).resolve().parent / "inputs"
DYNAMIC = INPUTS / "reduce_dynamic.mlir"
PIPELINE = "fold-addmm,lower-aten,inline,realize,split-reductions,reorder-loops,deps,fuse,convert-to-triton,online-softmax,cse"
ENV = {**os.environ, "TRITON_INTERPRET": "1"}


def tool(name: str, *argv: str | Path) -> subprocess.CompletedProcess[str]:
    """A console script (`mlc-reduce`, `mlc-opt`), run as its module (`python -m mlc.tools.mlc_reduce`)."""
    command = [sys.executable, "-m", f"mlc.tools.{name.replace('-', '_')}", *map(str, argv)]
    return subprocess.run(command, capture_output=True, text=True, env=ENV, timeout=300)


def ops(text: str) -> list[str]:
    """The op names of printed IR, in order (`%a = aten.exp ...` -> `aten.exp`), the module
    itself not counted (as mlc-reduce counts)."""
    names = []
    for line in text.splitlines():
        m = re.match(r"\s*(?:%[\w, %]+ = )?([a-z_]+\.[\w.]+)", line)
        if m and m.group(1) != "builtin.module" and not line.lstrip().startswith("//"):
            names.append(m.group(1))
    return names


def error_of(stderr: str) -> str:
    """The message of the first `file:line:col: error: message` line."""
    m = re.search(r"^\S+: error: (.*)$", stderr, re.M)
    assert m, stderr
    return m.group(1)


def test_reduces_to_the_failing_op(tmp_path: Path) -> None:
    original = tool("mlc-opt", DYNAMIC, "-p", PIPELINE)
    assert original.returncode == 1
    out = tmp_path / "reduced.mlir"
    reduced = tool("mlc-reduce", DYNAMIC, "-p", PIPELINE, "-o", out)
    assert reduced.returncode == 0, reduced.stderr
    before, after = ops(DYNAMIC.read_text()), ops(out.read_text())
    assert len(before) >= 15
    assert len(after) <= 4, out.read_text()
    assert "aten.sum.dim_IntList" in after and "tensor<?x32xf32>" in out.read_text()
    # The same error, from mlc-opt on the reduced file.
    again = tool("mlc-opt", out, "-p", PIPELINE)
    assert again.returncode == 1
    assert error_of(again.stderr) == error_of(original.stderr)
    # The summary: counts and the error kept.
    assert f"{len(before)} -> {len(after)} ops" in reduced.stderr
    assert re.search(r"\d+ candidates tried", reduced.stderr)
    assert f"error kept: {error_of(original.stderr)}" in reduced.stderr


def test_output_is_deterministic_and_a_fixed_point(tmp_path: Path) -> None:
    first = tool("mlc-reduce", DYNAMIC, "-p", "lower-aten")
    second = tool("mlc-reduce", DYNAMIC, "-p", "lower-aten")
    assert first.returncode == second.returncode == 0
    assert first.stdout == second.stdout
    out = tmp_path / "reduced.mlir"
    out.write_text(first.stdout)
    again = tool("mlc-reduce", out, "-p", "lower-aten")
    assert again.returncode == 0
    assert again.stdout == first.stdout  # nothing left to remove


def test_verbose_says_each_reduction() -> None:
    result = tool("mlc-reduce", DYNAMIC, "-p", "lower-aten", "-v")
    assert result.returncode == 0
    kept = [line for line in result.stderr.splitlines() if re.match(r"mlc-reduce: (erased|replaced|dropped)", line)]
    assert any("erased unused aten.exp" in line for line in kept)
    assert any("dropped result" in line for line in kept)


def test_an_input_that_does_not_fail_is_an_error(tmp_path: Path) -> None:
    static = tmp_path / "static.mlir"
    static.write_text(DYNAMIC.read_text().replace("?x32", "4x32"))
    result = tool("mlc-reduce", static, "-p", "lower-aten")
    assert result.returncode == 1
    assert "does not fail under 'lower-aten'" in result.stderr
    assert result.stdout == ""


def test_match_must_be_in_the_error() -> None:
    result = tool("mlc-reduce", DYNAMIC, "-p", "lower-aten", "--match", "no such words")
    assert result.returncode == 1
    assert 'does not contain "no such words"' in result.stderr


def test_bad_input_is_a_clean_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {\n  %0 = aten.exp %x : (tensor<8xf32>)\n}\n")
    result = tool("mlc-reduce", bad, "-p", "lower-aten")
    assert result.returncode == 1
    assert re.search(rf"^{re.escape(str(bad))}:\d+:\d+: error: ", result.stderr, re.M), result.stderr
    assert "Traceback" not in result.stderr
    for argv in ([tmp_path / "missing.mlir", "-p", "lower-aten"], [DYNAMIC, "-p", "no-such-pass"], [DYNAMIC]):
        result = tool("mlc-reduce", *argv)
        assert result.returncode == 1 and "error:" in result.stderr and "Traceback" not in result.stderr


def test_identity_ignores_what_shrinking_renames() -> None:
    a = 'fuse: buf3 at loc("mul") reads %12 (<Op object at 0x7f00aa>)'
    b = 'fuse: buf1 at loc("mul_2") reads %arg0 (<Op object at 0x7f11bb>)'
    assert identity(a) == identity(b)
    assert identity("dim 2 is out of range") != identity("dim 3 is out of range")


# ---------------------------------------------------------------------------------------------
# A pass that crashes: an internal error is reduced like a diagnostic (in-process, to register it)


@dataclass(frozen=True)
class CrashOnSigmoid(ModulePass):
    """Test pass: raises on aten.sigmoid, else on aten.tanh (sigmoid's error first)."""

    name = "test-crash-on-sigmoid"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        names = {o.name for o in op.walk()}
        for wanted in ("aten.sigmoid", "aten.tanh"):
            if wanted in names:
                raise RuntimeError(f"saw {wanted}")


@pytest.fixture
def crash_pass() -> Iterator[None]:
    """CrashOnSigmoid registered for one test only: the registry is shared by every test."""
    from mlc.passes.registry import PASSES

    mlc.register_pass(CrashOnSigmoid)
    yield
    del PASSES[CrashOnSigmoid.name]

CRASHING = """\
func.func @f(%x: tensor<8x64xf32>, %y: tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>) {
  %t = aten.tanh %x : (tensor<8x64xf32>) -> tensor<8x64xf32>
  %a = aten.add.Tensor %t, %y : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  %e = aten.exp %a : (tensor<8x64xf32>) -> tensor<8x64xf32>
  %m = aten.mul.Tensor %e, %x : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  %s = aten.sigmoid %m : (tensor<8x64xf32>) -> tensor<8x64xf32>
  %n = aten.neg %s : (tensor<8x64xf32>) -> tensor<8x64xf32>
  func.return %n, %e : tensor<8x64xf32>, tensor<8x64xf32>
}
"""


def reduce_in_process(tmp_path: Path, *argv: str) -> tuple[int, str, str]:
    path = tmp_path / "crash.mlir"
    path.write_text(CRASHING)
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = run([str(path), "-p", "test-crash-on-sigmoid", *argv])
    return code, out.getvalue(), err.getvalue()


def test_a_crash_keeps_its_pass_type_and_message(tmp_path: Path, crash_pass: None) -> None:
    code, out, err = reduce_in_process(tmp_path)
    assert code == 0, err
    assert "error kept: internal error in pass 'test-crash-on-sigmoid': RuntimeError: saw aten.sigmoid" in err
    # Removing the sigmoid would still crash (on the tanh), but with another message: kept.
    assert ops(out) == ["func.func", "aten.sigmoid", "func.return"], out


def test_match_accepts_any_error_containing_the_text(tmp_path: Path, crash_pass: None) -> None:
    code, out, err = reduce_in_process(tmp_path, "--match", "RuntimeError: saw aten")
    assert code == 0, err
    kept = [name for name in ops(out) if name.startswith("aten.")]
    assert len(kept) == 1 and kept[0] in ("aten.sigmoid", "aten.tanh"), out
