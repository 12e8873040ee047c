"""mlc-run as a user meets it: the command (run as its module), under Triton's interpreter.

Aten IR from the lit tests runs and `--check`s against eager; the same graph compiled by hand
to buffer and triton IR (with `mlc-opt`) checks against it through `--reference` and prints the
same outputs; a kernel with one arith op changed fails the check; errors are one positioned
line and status 1.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

TEST = Path(__file__).resolve().parents[1]
GELU = TEST / "lit" / "passes" / "lower-aten" / "gelu.mlir"
REDUCTIONS = TEST / "lit" / "passes" / "lower-aten" / "reductions.mlir"
INPUTS = Path(__file__).resolve().parent / "inputs"
TO_BUFFER = "fold-addmm,lower-aten,inline,realize"
TO_TRITON = "fold-addmm,lower-aten,inline,realize,split-reductions,reorder-loops,deps,fuse,convert-to-triton"


def _command(name: str) -> list[str]:
    """A console script run as its module (`mlc-run` -> `python -m mlc.tools.mlc_run`), so the
    tests need no installed scripts."""
    return [sys.executable, "-m", f"mlc.tools.{name.replace('-', '_')}"]


def tool(name: str, *argv: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TRITON_INTERPRET="1", CUDA_VISIBLE_DEVICES="")
    return subprocess.run([*_command(name), *argv], input=stdin, capture_output=True, text=True, env=env, timeout=600)


def outputs(stdout: str) -> list[str]:
    """The `output k name: shape dtype stats` lines of a report."""
    return [line for line in stdout.splitlines() if line.startswith("output ")]


@pytest.fixture(scope="module")
def staged(tmp_path_factory) -> dict[str, Path]:
    """gelu.mlir compiled by mlc-opt to buffer IR and to triton IR."""
    out = tmp_path_factory.mktemp("staged")
    files = {}
    for stage, pipeline in (("buffer", TO_BUFFER), ("triton", TO_TRITON)):
        files[stage] = out / f"gelu.{stage}.mlir"
        r = tool("mlc-opt", str(GELU), "-p", pipeline, "-o", str(files[stage]))
        assert r.returncode == 0, r.stderr
    return files


def test_check_passes_on_aten_input():
    r = tool("mlc-run", str(GELU), "--check")
    assert r.returncode == 0, r.stderr
    assert "aten IR; passes: cse-aten,fold-addmm,pad-mm,lower-aten," in r.stdout
    assert re.search(r"^input \S+: \[8, 64\] float32$", r.stdout, re.M)
    [line] = outputs(r.stdout)
    assert re.fullmatch(r"output 0 \S+: \[8, 64\] float32  sum=\S+ mean=\S+ min=\S+ max=\S+", line)
    assert "check output 0: ok" in r.stdout and "check: passed: 1 of 1" in r.stdout
    assert r.stderr == ""


def test_check_every_chunk_of_a_split_file():
    r = tool("mlc-run", str(REDUCTIONS), "--split-input-file", "--check")
    assert r.returncode == 0, r.stderr
    chunks = REDUCTIONS.read_text().count("\n// -----\n") + 1
    assert r.stdout.count("check: passed") == chunks > 1
    assert "MISMATCH" not in r.stdout


@pytest.mark.parametrize("stage", ["buffer", "triton"])
def test_later_stage_checks_against_reference(staged, stage):
    aten = tool("mlc-run", str(GELU))
    r = tool("mlc-run", str(staged[stage]), "--check", "--reference", str(GELU))
    assert r.returncode == 0, r.stderr
    assert f"{stage} IR; passes: " in r.stdout and "fold-addmm" not in r.stdout  # only the rest ran
    assert "check: passed: 1 of 1" in r.stdout
    assert outputs(r.stdout) == outputs(aten.stdout)  # same seed, same inputs, same values


@pytest.mark.parametrize("stage", ["buffer", "triton"])
def test_wrong_kernel_fails_the_check(staged, stage, tmp_path):
    text = staged[stage].read_text()
    assert text.count("arith.addf") == 1
    wrong = tmp_path / f"wrong.{stage}.mlir"
    wrong.write_text(text.replace("arith.addf", "arith.subf"))
    r = tool("mlc-run", str(wrong), "--check", "--reference", str(GELU))
    assert r.returncode == 1
    assert re.search(r"check output 0: MISMATCH with PyTorch eager: .*Greatest absolute difference: \S+", r.stdout)
    assert "check: FAILED: 0 of 1" in r.stdout
    assert f"mlc-run: error: {wrong}: outputs differ from PyTorch eager" in r.stderr
    assert "Traceback" not in r.stderr


def test_strided_input_layout():
    """An input the IR declares transposed is made so: the right indexing passes, the wrong fails."""
    buffer_ir = INPUTS / "transposed_add.mlir"
    reference = str(INPUTS / "transposed_add.aten.mlir")
    r = tool("mlc-run", str(buffer_ir), "--check", "--reference", reference)
    assert r.returncode == 0, r.stderr
    assert "input x: [4, 8] float32 strides [1, 4]" in r.stdout
    wrong = buffer_ir.read_text().replace("@x[i0 + 4*i1]", "@x[4*i0 + i1]")
    assert wrong != buffer_ir.read_text()
    r = tool("mlc-run", "--check", "--reference", reference, stdin=wrong)  # from stdin
    assert r.returncode == 1 and "MISMATCH" in r.stdout


def test_seed_changes_the_inputs():
    a, b, c = (tool("mlc-run", str(GELU), "--seed", s) for s in ("1", "1", "2"))
    assert a.returncode == b.returncode == c.returncode == 0
    assert outputs(a.stdout) == outputs(b.stdout) != outputs(c.stdout)


def test_check_of_later_stage_needs_reference(staged):
    r = tool("mlc-run", str(staged["triton"]), "--check")
    assert r.returncode == 1
    assert r.stderr.strip() == ("mlc-run: error: --check needs the aten IR this triton IR was compiled from: "
                                "pass it as --reference ATEN.mlir")
    r = tool("mlc-run", str(staged["triton"]), "--check", "--reference", str(staged["buffer"]))
    assert r.returncode == 1 and "--reference must be aten IR" in r.stderr


def test_bench_under_the_interpreter():
    r = tool("mlc-run", str(GELU), "--bench")
    assert r.returncode == 0, r.stderr
    assert re.search(r"^bench: \S+ ms wall clock per call under Triton's interpreter", r.stdout, re.M)


def test_errors_are_positioned(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
                   "  %0 = aten.bogus %x : (tensor<4xf32>) -> tensor<4xf32>\n"
                   "  func.return %0 : tensor<4xf32>\n}\n")
    r = tool("mlc-run", str(bad), "--check")
    assert r.returncode == 1 and r.stdout == ""
    assert re.match(rf"{re.escape(str(bad))}:2:\d+: error: .*aten.bogus", r.stderr) and "Traceback" not in r.stderr

    unnamed = tmp_path / "unnamed.mlir"  # a pass fails: positioned as in mlc-opt
    unnamed.write_text("func.func @f(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {\n"
                       "  %0 = aten.exp %x : (tensor<?x8xf32>) -> tensor<?x8xf32>\n"
                       "  func.return %0 : tensor<?x8xf32>\n}\n")
    r = tool("mlc-run", str(unnamed))
    assert r.returncode == 1
    assert r.stderr.startswith(f"{unnamed}:2:3: error: lower-aten: aten.exp") and "Traceback" not in r.stderr

    r = tool("mlc-run", str(tmp_path / "missing.mlir"))
    assert r.returncode == 1 and r.stderr.startswith(f"mlc-run: error: cannot read {tmp_path / 'missing.mlir'}")
    r = tool("mlc-run", str(GELU), "-p", "no-such-pass")
    assert r.returncode == 1 and "mlc-run: error: bad pipeline 'no-such-pass'" in r.stderr
