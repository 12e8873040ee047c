"""mlc-import end to end: .pt2 files, FILE.py:NAME with --shape, and its one-line errors."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from xdsl.parser import Parser

from mlc.dialects.registry import make_context
from mlc.tools import mlc_import
from mlc.tools.mlc_import import UsageError, parse_shape

_SCRIPT = shutil.which("mlc-import", path=str(Path(sys.executable).parent))
COMMAND = [_SCRIPT] if _SCRIPT else [sys.executable, "-m", "mlc.tools.mlc_import"]

MODULE_PY = textwrap.dedent(
    """
    import torch

    def f(x, b, n):
        return torch.nn.functional.gelu(x + b), n.sum()

    @torch.library.custom_op("mlc_test::twice", mutates_args=())
    def twice(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    @twice.register_fake
    def _(x):
        return torch.empty_like(x)

    def custom(x):
        return twice(x)

    def data_dependent(x):
        return x if x.sum() > 0 else -x
    """
)


def mlc_import_run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*COMMAND, *args], capture_output=True, text=True, timeout=120)


def assert_one_line_error(proc: subprocess.CompletedProcess[str], message: str) -> None:
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("mlc-import")]
    assert lines == [lines[0]] and lines[0].startswith("mlc-import: error: ")
    assert message in lines[0]


@pytest.fixture
def module_py(tmp_path: Path) -> Path:
    path = tmp_path / "model.py"
    path.write_text(MODULE_PY)
    return path


def test_pt2(tmp_path: Path):
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU())
    path = tmp_path / "mlp.pt2"
    torch.export.save(torch.export.export(model, (torch.randn(8, 32),)), str(path))
    proc = mlc_import_run(str(path))
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert 'func.func @forward(%p_0_weight: tensor<64x32xf32> loc("p_0_weight")' in text
    assert "aten.addmm" in text and 'attributes {origin = "gelu"}' in text
    assert 'loc("mul_2")' in text
    Parser(make_context(), text).parse_module().verify()


def test_function_with_shapes(tmp_path: Path, module_py: Path):
    out = tmp_path / "out.mlir"
    proc = mlc_import_run(
        f"{module_py}:f", "--shape", "8x32:f32", "--shape", "32", "--shape", "4:i64", "-o", str(out)
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    text = out.read_text()
    assert (
        'func.func @forward(%x: tensor<8x32xf32> loc("x"), %b: tensor<32xf32> loc("b"), '
        '%n: tensor<4xi64> loc("n")) -> (tensor<8x32xf32>, tensor<i64>)'
    ) in text
    assert "aten.erf" in text and "aten.sum %n" in text
    Parser(make_context(), text).parse_module().verify()


def test_custom_op_is_a_call_in_its_namespace(module_py: Path):
    """A custom op (no lowering can know it) imports as an `aten.call` that keeps its
    namespace; lower-aten makes it an extern call."""
    proc = mlc_import_run(f"{module_py}:custom", "--shape", "4")
    assert proc.returncode == 0, proc.stderr
    assert 'aten.call "mlc_test::twice"' in proc.stdout


def test_export_failure(module_py: Path):
    # torch prints log lines and graph dumps before raising: only the error line is shown.
    proc = mlc_import_run(f"{module_py}:data_dependent", "--shape", "4")
    assert_one_line_error(proc, "torch.export failed: GuardOnDataDependentSymNode")
    assert proc.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "args, message",
    [
        (["missing.pt2"], "missing.pt2: no such file"),
        (["model.py:f", "--shape", "8by32"], "bad --shape '8by32'"),
        (["model.py:f", "--shape", "8:f8"], "unknown dtype 'f8'"),
        (["model.py"], "name the function to import"),
        ([], "the following arguments are required: input"),
    ],
)
def test_usage_errors(module_py: Path, args: list[str], message: str):
    proc = subprocess.run(
        [*COMMAND, *args], capture_output=True, text=True, timeout=120, cwd=module_py.parent
    )
    assert_one_line_error(proc, message)


# In-process: the error paths that need torch, without paying for its import again.


def test_missing_name_and_bad_pt2(
    tmp_path: Path, module_py: Path, capsys: pytest.CaptureFixture[str]
):
    assert mlc_import.main([f"{module_py}:nothing"]) == 1
    assert "no function or module named 'nothing'" in capsys.readouterr().err
    bad = tmp_path / "bad.pt2"
    bad.write_text("not a zip")
    assert mlc_import.main([str(bad)]) == 1
    assert "bad.pt2: not a torch.export program" in capsys.readouterr().err


def test_internal_error_traceback_only_with_debug(
    module_py: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
):
    def boom(*args, **kwargs):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr("mlc.frontend.export.import_exported", boom)
    argv = [f"{module_py}:f", "--shape", "8x32", "--shape", "32", "--shape", "4:i64"]
    assert mlc_import.main(argv) == 1
    err = capsys.readouterr().err
    assert (
        err
        == "mlc-import: error: internal error: RuntimeError: boom (--debug shows the traceback)\n"
    )
    assert mlc_import.main([*argv, "--debug"]) == 1
    assert "Traceback" in capsys.readouterr().err


def test_parse_shape():
    assert parse_shape("8x32:f32") == ([8, 32], "float32")
    assert parse_shape("4") == ([4], "float32")
    assert parse_shape(":bf16") == ([], "bfloat16")
    assert parse_shape("scalar:i1") == ([], "bool")
    assert parse_shape("2x3:u8") == ([2, 3], "uint8")
    with pytest.raises(UsageError):
        parse_shape("8x:f32")
