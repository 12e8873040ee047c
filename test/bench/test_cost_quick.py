"""bench/cost.py works without a GPU: `report --quick` predicts every kernel mlc compiles for a
workload (the measured column stays empty), and `calibrate` says it needs a GPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COST = ROOT / "bench" / "cost.py"
ENV = dict(os.environ, CUDA_VISIBLE_DEVICES="", TRITON_INTERPRET="1")


def test_report_predicts_every_kernel_of_a_workload(tmp_path: Path) -> None:
    out = tmp_path / "cost.json"
    proc = subprocess.run([sys.executable, str(COST), "report", "--quick", "--models", "softmax,pointwise_chain",
                           "--training", "gpt2", "--json", str(out)], cwd=ROOT, env=ENV, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = json.loads(out.read_text())["rows"]
    workloads = [r for r in rows if r["model"] != "gpt2 training"]
    assert {(r["model"], r["kind"]) for r in workloads} == {("softmax", "persistent_reduction"),
                                                            ("pointwise_chain", "pointwise")}
    # the tiny softmax waits for its two combines across warps (max, sum: 0.5 us each on the
    # datasheet target), longer than its few KB take; the pointwise chain for its bytes
    assert {r["model"]: r["bound"] for r in workloads} == {"softmax": "serial", "pointwise_chain": "dram"}
    assert all(r["predicted_us"] > 0 and r["measured_us"] is None for r in rows)
    # each launch's traffic, for fitting the model offline
    assert all(r["launches"] and all(t["programs"] >= 1 and t["dram_bytes"] > 0 for t in r["launches"]) for r in rows)
    assert "| softmax | triton_per_fused__softmax_0 | persistent_reduction | serial |" in proc.stdout
    # the training step: its forward's and its backward's kernels, reductions among them (layer norms)
    training = {r["kind"] for r in rows if r["model"] == "gpt2 training"}
    assert "pointwise" in training and training & {"reduction", "persistent_reduction"}, training


def test_calibrate_needs_a_gpu(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(COST), "calibrate", "--out", str(tmp_path / "t.json")],
                          cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "needs a GPU" in proc.stderr and not (tmp_path / "t.json").exists()
