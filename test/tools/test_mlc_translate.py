"""mlc-translate as a user meets it: files and stdin, -o, one-line positioned errors, --debug."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from mlc.tools.mlc_translate import run

GELU = Path(__file__).resolve().parents[1] / "lit" / "codegen" / "emit-python" / "gelu.mlir"


def translate(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code = run(list(argv))
    except SystemExit as e:  # argparse errors
        code = int(e.code or 0)
    finally:
        sys.stdin = old_stdin
    return code, out.getvalue(), err.getvalue()


def test_file_and_stdin_agree(tmp_path):
    code, from_file, err = translate("--emit-python", str(GELU))
    assert code == 0 and err == ""
    assert "def triton_poi_fused_gelu_0(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):" in from_file
    code, from_stdin, _ = translate("--emit-python", stdin=GELU.read_text())
    assert code == 0 and from_stdin == from_file
    out = tmp_path / "module.py"
    assert translate("--emit-python", str(GELU), "-o", str(out))[0] == 0
    assert out.read_text() == from_file
    compile(from_file, "module.py", "exec")  # valid Python


def test_parse_error_is_positioned():
    code, out, err = translate("--emit-python", stdin="triton.wrapper @call {\n  triton.bogus\n}\n")
    assert code == 1 and out == ""
    first = err.splitlines()[0]
    assert re.match(r"<stdin>:\d+:\d+: error: .*triton.bogus", first) and "Traceback" not in err


def test_verifier_error_is_positioned(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text("triton.wrapper @call {\n  triton.return @nope\n}\n")
    code, _, err = translate("--emit-python", str(bad))
    assert code == 1
    assert err.splitlines()[0] == f"{bad}:2:3: error: triton.return: buffer 'nope' is not defined before this use"


def test_emit_error_is_positioned():
    text = (
        "triton.kernel @k pointwise(%in_ptr0: !triton.ptr<i32>, %out_ptr0: !triton.ptr<i32>) xnumel 8 {\n"
        "  %0 = triton.load %in_ptr0[xindex] mask xmask : i32\n"
        "  %1 = math.ctlz %0 : i32\n"
        "  triton.store %out_ptr0[xindex], %1 mask xmask : i32\n"
        "}\n"
        "triton.wrapper @call {\n  triton.return\n}\n"
    )
    code, _, err = translate("--emit-python", stdin=text)
    assert code == 1
    assert err.splitlines()[0] == "<stdin>:3:3: error: math.ctlz: emit-python cannot print math.ctlz in a kernel"


def test_missing_file_and_flags():
    code, _, err = translate("--emit-python", "/nonexistent.mlir")
    assert code == 1 and err.startswith("mlc-translate: error: cannot read /nonexistent.mlir")
    code, _, err = translate(str(GELU))  # no target
    assert code == 1 and "--emit-python" in err


SCRIPT = shutil.which("mlc-translate", path=str(Path(sys.executable).parent)) or shutil.which("mlc-translate")


@pytest.mark.skipif(SCRIPT is None, reason="console script not installed (pip install -e .)")
def test_console_script():
    result = subprocess.run([SCRIPT, "--emit-python", str(GELU)], capture_output=True, text=True)
    assert result.returncode == 0 and "@triton.jit" in result.stdout


def test_unwritable_output_and_empty_input_are_clean_errors() -> None:
    code, out, err = translate("--emit-python", str(GELU), "-o", "/nonexistent-dir/module.py")
    assert code == 1 and err == "mlc-translate: error: cannot write /nonexistent-dir/module.py: No such file or directory\n"
    code, out, err = translate("--emit-python", stdin="")
    assert code == 1 and "emit-python expects one triton.wrapper, found 0" in err and out == ""


def test_emit_dot_needs_buffer_ir() -> None:
    code, out, err = translate("--emit-dot", str(GELU))
    assert code == 1 and out == "" and "emit-dot expects buffer IR (a buffer.graph), found none" in err
    code, _, err = translate("--emit-dot", "--emit-python", str(GELU))
    assert code == 1 and "not allowed with argument" in err


def _mlc_opt(passes: str, text: str) -> str:
    from mlc.tools.mlc_opt import run as mlc_opt

    out, old_stdin = io.StringIO(), sys.stdin
    sys.stdin = io.StringIO(text)
    try:
        with redirect_stdout(out), redirect_stderr(io.StringIO()):
            assert mlc_opt(["-p", passes]) == 0
    finally:
        sys.stdin = old_stdin
    return out.getvalue()


@pytest.mark.parametrize("passes", ["deps", "deps,fuse{explain=true}"])
def test_emit_dot_draws_one_cluster_per_kernel(passes: str) -> None:
    """As many clusters as --convert-to-triton makes kernels (two unfused, one fused), and
    Graphviz reads the picture where `dot` is installed."""
    text = (Path(__file__).resolve().parents[1] / "lit" / "codegen" / "emit-dot" / "fused.mlir").read_text()
    graph = _mlc_opt(passes, text)
    code, dot, err = translate("--emit-dot", stdin=graph)
    assert code == 0, err
    kernels = _mlc_opt("convert-to-triton", graph).count("triton.kernel @")
    assert dot.count('subgraph "cluster_') == kernels == (1 if "fuse" in passes else 2)
    if shutil.which("dot"):
        svg = subprocess.run(["dot", "-Tsvg"], input=dot, text=True, capture_output=True, timeout=60)
        assert svg.returncode == 0 and "<svg" in svg.stdout, svg.stderr
