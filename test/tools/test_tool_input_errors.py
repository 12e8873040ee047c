"""Bad input to mlc's command-line tools: one `error:` line naming the input or flag, status 1,
never an internal error (issue 43)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from mlc.tools import mlc_opt, mlc_reduce, mlc_run, mlc_translate

RUNS: dict[str, tuple[Callable[[list[str]], int], list[str]]] = {
    "mlc-opt": (mlc_opt.run, []),
    "mlc-run": (mlc_run.run, []),
    "mlc-translate": (mlc_translate.run, ["--emit-python"]),
    "mlc-reduce": (mlc_reduce.run, ["-p", "lower-aten"]),
}


def in_process(tool: str, *argv: str) -> tuple[int, str]:
    """The tool's `run` on `argv`: its status and stderr (an exception escaping it fails the test)."""
    run, flags = RUNS[tool]
    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        code = run([*flags, *argv])
    return code, err.getvalue()


def command(tool: str, *argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TRITON_INTERPRET="1", CUDA_VISIBLE_DEVICES="")
    return subprocess.run([sys.executable, "-m", f"mlc.tools.{tool.replace('-', '_')}", *argv],
                          capture_output=True, text=True, env=env, timeout=600, cwd=cwd)


def one_error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert "internal error" not in stderr and "Traceback" not in stderr, stderr
    return lines[0]


@pytest.mark.parametrize("tool", list(RUNS))
@pytest.mark.parametrize("first", ["\x00", "$$$", "\x01"])
def test_an_invalid_first_byte_is_a_positioned_error(tool: str, first: str, tmp_path: Path) -> None:
    path = tmp_path / "f.mlir"
    path.write_text(first + "func.func @f() {\n  func.return\n}\n")
    code, err = in_process(tool, str(path))
    assert code == 1
    assert one_error_line(err).startswith(f"{path}:1:1: error: Unexpected character: "), err


def _neg(type_: str) -> str:
    return (f"func.func @f(%x: {type_}) -> {type_} {{\n  %0 = aten.neg %x : ({type_}) -> {type_}\n"
            f"  func.return %0 : {type_}\n}}\n")


def test_mlc_run_refuses_an_input_beyond_int64(tmp_path: Path) -> None:
    path = tmp_path / "huge.mlir"
    path.write_text(_neg("tensor<99999999999999999999xf32>"))
    r = command("mlc-run", str(path))
    assert r.returncode == 1
    assert one_error_line(r.stderr) == (f"{path}: error: input 'x' ([99999999999999999999] float32) is too large: "
                                        "it spans 99999999999999999999 elements, more than a tensor can hold (2**63-1)")


def test_mlc_run_names_a_dtype_it_cannot_make_inputs_of(tmp_path: Path) -> None:
    path = tmp_path / "f8.mlir"
    path.write_text(_neg("tensor<8xf8E4M3FN>"))
    r = command("mlc-run", str(path))
    assert r.returncode == 1
    assert one_error_line(r.stderr).startswith(f"{path}: error: input 'x' is f8E4M3FN: mlc-run cannot make random "
                                               "inputs of that dtype (it makes float32, ")


@pytest.mark.parametrize("argv, message", [
    (["--seed", "1e23"], "argument --seed: expected an integer from 0 to 2**64-1, got '1e23'"),
    (["--seed", str(10**23)], f"argument --seed: expected an integer from 0 to 2**64-1, got '{10**23}'"),
    (["--atol", "-1"], "argument --atol: expected a number >= 0, got '-1'"),
    (["--rtol", "nan"], "argument --rtol: expected a number >= 0, got 'nan'"),
    (["--int-range", f"0:{10**23}"], f"argument --int-range: expected LO:HI within int64, got '0:{10**23}'"),
])
def test_mlc_run_bad_flag_values_are_usage_errors(argv: list[str], message: str) -> None:
    stderr = io.StringIO()
    with redirect_stderr(stderr), pytest.raises(SystemExit) as exit_:
        mlc_run.build_arg_parser().parse_args(["f.mlir", *argv])
    assert exit_.value.code == 1
    assert stderr.getvalue().splitlines()[-1] == f"mlc-run: error: {message}"


MODEL_PY = textwrap.dedent(
    """
    import torch

    class Scale(torch.nn.Module):
        def __init__(self, factor):
            super().__init__()
            self.factor = factor

        def forward(self, x):
            return x * self.factor

    def add_one(x):
        return x + 1
    """
)


def test_mlc_import_of_a_class_that_needs_arguments_says_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text(MODEL_PY)
    r = command("mlc-import", "model.py:Scale", "--shape", "4", cwd=tmp_path)
    assert r.returncode == 1
    assert one_error_line(r.stderr) == (
        "mlc-import: error: model.py: class Scale needs constructor arguments (factor); name an instance instead "
        "(model = Scale(...) in the file, then model.py:model), or a function that builds and calls it, "
        "or import a torch.export .pt2")


def test_mlc_import_of_a_huge_shape_allocates_nothing(tmp_path: Path) -> None:
    """100000x100000 f32 is 40 GB: the example inputs are fake tensors, shapes without memory."""
    (tmp_path / "model.py").write_text(MODEL_PY)
    r = command("mlc-import", "model.py:add_one", "--shape", "100000x100000", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "aten.add.Scalar %x {other = 1 : i64} : (tensor<100000x100000xf32>)" in r.stdout
