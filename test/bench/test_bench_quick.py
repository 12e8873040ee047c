"""bench/run.py works: `--quick --models pointwise_chain` on CPU (Triton's interpreter).

The harness runs in a subprocess with no GPU visible (CUDA_VISIBLE_DEVICES=""), so this checks
the script itself, never the GPU numbers: it must finish, print the table, write JSON and
Markdown, and find mlc's output equal to eager's.
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
RUN = ROOT / "bench" / "run.py"


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="needs triton (its interpreter runs mlc's kernels)")
def test_quick_pointwise_chain_on_cpu(tmp_path: Path) -> None:
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", TRITON_INTERPRET="1")
    env.pop("MLC_FALLBACK", None)
    out_json, out_md = tmp_path / "bench.json", tmp_path / "bench.md"
    out_doc = tmp_path / "BENCHMARKS.md"
    out_doc.write_text("# Benchmarks\n\n<!-- begin bench/run.py -->\nstale\n<!-- end bench/run.py -->\n\nkept\n")
    cmd = [sys.executable, str(RUN), "--quick", "--models", "pointwise_chain", "--rep", "20",
           "--json", str(out_json), "--markdown", str(out_md), "--doc", str(out_doc)]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]

    lines = proc.stdout.splitlines()
    header = next(ln for ln in lines if ln.startswith("| model"))
    assert [c.strip() for c in header.strip("|").split("|")][:8] == [
        "model", "shape", "dtype", "eager ms", "inductor ms", "mlc ms", "mlc/inductor", "mlc GB/s"]
    assert any(ln.startswith("| pointwise_chain |") for ln in lines)
    assert header in out_md.read_text()
    # --doc replaces its own section of the document and keeps the rest
    doc = out_doc.read_text()
    assert header in doc and "stale" not in doc and doc.endswith("kept\n") and doc.count("<!-- begin bench/run.py -->") == 1
    assert "bench/run.py --quick --models pointwise_chain" in doc

    report = json.loads(out_json.read_text())
    assert report["environment"]["triton_interpret"] == "1"
    (row,) = report["rows"]
    assert row["model"] == "pointwise_chain" and row["dtype"] == "float32"
    assert row["correct"] == "yes", row
    assert row["mlc_ms"] > 0 and row["eager_ms"] > 0 and row["bytes"] == 4 * (64 * 64 * 2 + 64 * 2)
    # each round's time, in order: the median and range the table shows come from them
    rounds = row["round_ms"]["mlc"]
    assert len(rounds) == 9 and row["mlc_ms"] == pytest.approx(statistics.median(rounds))
    assert row["mlc_range"] == [min(rounds), max(rounds)]
    assert row["mlc_gbps"] == pytest.approx(row["bytes"] / (row["mlc_ms"] * 1e-3) / 1e9)
    # the reference transfer of the same bytes, timed in the same rounds
    assert row["copy_ms"] > 0 and row["copy_gbps"] == pytest.approx(row["bytes"] / (row["copy_ms"] * 1e-3) / 1e9)
    assert row["mlc_compile_s"] > 0
    assert row["mlc_host_us"] is None  # the host's work per call is only told apart on a GPU
    # Inductor compiles on CPU too where a C++ compiler is present; otherwise a reason is given.
    assert row["inductor_ms"] is not None or row["errors"].get("inductor")


HOST_US = """
import importlib.util, sys, time
import torch
spec = importlib.util.spec_from_file_location("bench_run", sys.argv[1])
run = sys.modules["bench_run"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(run)
synced = []
run.CUDA, torch.cuda.synchronize = True, lambda: synced.append(1)
calls = []
print(run.host_us(lambda: (calls.append(1), time.sleep(0.002)), calls=5), len(calls), len(synced))
"""


def test_host_us_times_each_call_from_an_idle_gpu() -> None:
    """`host_us` waits for the GPU before each call and times the call alone: a call that
    spends 2 ms on the host measures 2 ms (the GPU's waits, stubbed here, are left out)."""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", TRITON_INTERPRET="1")
    proc = subprocess.run([sys.executable, "-c", HOST_US, str(RUN)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    us, calls, synced = proc.stdout.split()
    assert 2000 <= float(us) < 4000 and calls == "5" and synced == "6"


FAILING = """
import importlib.util, json, sys
from dataclasses import asdict
import torch
spec = importlib.util.spec_from_file_location("bench_run", sys.argv[1])
run = sys.modules["bench_run"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(run)

def broken_backend(gm, example_inputs):
    raise NotImplementedError("no rule for aten.frobnicate\\nmore detail")

args = run.parse_args(["--quick", "--models", "bias_relu", "--skip", "inductor"])
row = run.bench_model("bias_relu", torch.device("cpu"), args, broken_backend)
print(json.dumps(asdict(row)))
print(run.markdown([row]))
"""


def test_failures_are_rows_not_crashes() -> None:
    """A model mlc cannot compile is a row saying "failed: <one-line reason>"; eager still runs."""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", TRITON_INTERPRET="1")
    proc = subprocess.run([sys.executable, "-c", FAILING, str(RUN)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    row = json.loads(proc.stdout.splitlines()[0])
    assert row["correct"] == "failed: NotImplementedError: no rule for aten.frobnicate"
    assert row["mlc_ms"] is None and row["eager_ms"] > 0 and row["errors"]["inductor"] == "skipped"
    assert "| failed | - | - | - | - | - / - | - | - | - | failed: NotImplementedError: no rule for aten.frobnicate |" \
        in proc.stdout

    usage = subprocess.run([sys.executable, str(RUN), "--models", "nope"], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=120)
    assert usage.returncode == 2 and "unknown model(s) nope" in usage.stderr


PER_LAUNCH = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("bench_run", sys.argv[1])
run = sys.modules["bench_run"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(run)
one = run.Row(model="gelu_erf", inductor_host_us=40.0, mlc_host_us=30.0)
many = run.Row(model="launches", inductor_host_us=40.0 + 31 * 6.0, mlc_host_us=30.0 + 31 * 3.5)
print(run.host_us_per_launch([one, many]), run.host_us_per_launch([one]))
case = run.MODELS["launches"](run.torch.device("cpu"), True)
print(len(case.inputs), len(case.fn(*case.inputs)))
"""


def test_host_us_per_launch_is_the_launches_row_over_one_kernels() -> None:
    """The host µs of one more launch: `launches` (32 kernels) against `gelu_erf` (one), per
    backend with both rows' host times; the guards and the wrapper cancel."""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", TRITON_INTERPRET="1")
    proc = subprocess.run([sys.executable, "-c", PER_LAUNCH, str(RUN)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.splitlines() == ["{'inductor': 6.0, 'mlc': 3.5} {}", "32 32"]
