"""bench/gemm.py works: `--quick --models linear_gelu` on CPU (Triton's interpreter).

The harness runs in a subprocess with no GPU visible (CUDA_VISIBLE_DEVICES=""), Inductor's two
backends skipped (their C++ compiles are slow), so this checks the script itself, never the GPU
numbers: it must finish, print the header and the row, find mlc's output equal to eager's, and
write its section of the document, JSON and Markdown.
"""

from __future__ import annotations

import importlib.util
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GEMM = ROOT / "bench" / "gemm.py"


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="needs triton (its interpreter runs mlc's kernels)")
def test_quick_linear_gelu_on_cpu(tmp_path: Path) -> None:
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", TRITON_INTERPRET="1")
    env.pop("MLC_FALLBACK", None)
    out_json, out_md, out_doc = tmp_path / "gemm.json", tmp_path / "gemm.md", tmp_path / "BENCHMARKS.md"
    out_doc.write_text("# Benchmarks\n\n<!-- begin bench/gemm.py -->\nstale\n<!-- end bench/gemm.py -->\n\nkept\n")
    cmd = [sys.executable, str(GEMM), "--quick", "--models", "linear_gelu", "--skip", "inductor,inductor-max-autotune",
           "--rep", "20", "--repeats", "3", "--json", str(out_json), "--markdown", str(out_md), "--doc", str(out_doc)]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]

    lines = proc.stdout.splitlines()
    header = next(ln for ln in lines if ln.startswith("| model"))
    cells = [c.strip() for c in header.strip("|").split("|")]
    assert cells[:10] == ["model", "shape (M, N, K)", "dtype", "eager ms", "inductor ms", "inductor-max-autotune ms",
                          "mlc ms", "mlc-triton-gemm ms", "mlc-auto ms", "mlc-tg / ind-ma"]
    assert cells[-1] == "correct ind / ind-ma / mlc / mlc-tg / mlc-auto"
    row_line = next(ln for ln in lines if ln.startswith("| linear_gelu |"))
    row_cells = [c.strip() for c in row_line.strip("|").split("|")]
    assert row_cells[1:3] == ["(67, 48, 40)", "float32"]
    assert row_cells[4] == row_cells[5] == "skipped"
    assert row_cells[-1] == "skipped / skipped / yes / yes / yes"
    assert row_cells[11].startswith("- / - / - / -")  # no % of a card's peak on CPU
    assert header in out_md.read_text()
    # --doc replaces its own section of the document and keeps the rest
    doc = out_doc.read_text()
    assert header in doc and row_line in doc and "stale" not in doc and doc.endswith("kept\n")
    assert doc.count("<!-- begin bench/gemm.py -->") == 1 and "bench/gemm.py --quick --models linear_gelu" in doc

    report = json.loads(out_json.read_text())
    assert report["environment"]["triton_interpret"] == "1"
    (row,) = report["rows"]
    assert row["correct"]["mlc"] == "yes", row
    assert row["flops"] == 2 * 67 * 48 * 40 and row["mode"] == "forward"
    rounds = row["round_ms"]["mlc"]
    assert len(rounds) == 3 and row["ms"]["mlc"] == pytest.approx(statistics.median(rounds))
    assert row["range"]["mlc"] == [min(rounds), max(rounds)]
    assert row["tflops"]["mlc"] == pytest.approx(row["flops"] / (row["ms"]["mlc"] * 1e-3) / 1e12)
    assert row["compile_s"]["mlc"] > 0 and row["peak_mb"] == {} and row["peak_pct"] == {}
    assert row["errors"]["inductor"] == "skipped" and row["errors"]["inductor-max-autotune"] == "skipped"
    assert row["correct"]["mlc-triton-gemm"] == row["correct"]["mlc-auto"] == "yes", row


NO_GEMM_OPTION = """
import importlib.util, json, sys
from dataclasses import asdict
import torch
spec = importlib.util.spec_from_file_location("bench_gemm", sys.argv[1])
gemm = sys.modules["bench_gemm"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gemm)
gemm.run.import_mlc()
from mlc.frontend.backend import mlc_backend

def old_backend(gm, example_inputs, **kwargs):  # an mlc from before the `gemm` option
    if kwargs.get("options"):
        raise ValueError("mlc: unknown option 'gemm'\\nmore detail")
    return mlc_backend(gm, example_inputs, **kwargs)

args = gemm.parse_args(["--quick", "--models", "mm_fp32", "--skip", "inductor,inductor-max-autotune",
                        "--rep", "5", "--repeats", "2"])
with torch.no_grad():
    row = gemm.bench_row("mm_fp32", torch.device("cpu"), args, old_backend)
print(json.dumps(asdict(row)))
print(gemm.markdown([row]))
"""


def test_a_backend_that_fails_is_a_cell_not_a_crash() -> None:
    """Without the `gemm` option, mlc-triton-gemm's cell says "failed: <one-line reason>"; the rest run."""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", TRITON_INTERPRET="1")
    proc = subprocess.run([sys.executable, "-c", NO_GEMM_OPTION, str(GEMM)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    row = json.loads(proc.stdout.splitlines()[0])
    assert row["errors"]["mlc-triton-gemm"] == "ValueError: mlc: unknown option 'gemm'"
    assert row["correct"] == {"mlc": "yes"} and row["ms"]["mlc"] > 0 and "mlc-triton-gemm" not in row["ms"]
    failed = "failed: ValueError: mlc: unknown option 'gemm'"
    assert f"| {failed} | {failed} | - |" in proc.stdout  # mlc-triton-gemm, mlc-auto, then the ratio
    assert "/ yes / failed / failed |" in proc.stdout

    usage = subprocess.run([sys.executable, str(GEMM), "--skip", "eager"], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=120)
    assert usage.returncode == 2 and "eager is the reference" in usage.stderr
