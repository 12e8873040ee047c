"""bench/models.py works: `--quick --models llama --skip inductor` on CPU (Triton's interpreter);
so does bench/dynamic.py (`--quick --models gpt2`).

The script runs in a subprocess with no GPU visible, so this checks the script, never the GPU
numbers: both modes give a row, mlc's logits, loss and every gradient are within tolerance of
eager's, the timings have a spread, and the JSON and Markdown files are written.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "bench" / "models.py"


def test_quick_llama_on_cpu(tmp_path: Path) -> None:
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", TRITON_INTERPRET="1")
    env.pop("MLC_FALLBACK", None)
    out_json, out_md, out_doc = tmp_path / "models.json", tmp_path / "models.md", tmp_path / "BENCHMARKS.md"
    cmd = [sys.executable, str(MODELS), "--quick", "--models", "llama", "--skip", "inductor",
           "--warmup", "0", "--rounds", "2", "--calls", "1",
           "--json", str(out_json), "--markdown", str(out_md), "--doc", str(out_doc)]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]

    header = next(ln for ln in proc.stdout.splitlines() if ln.startswith("| model"))
    assert [c.strip() for c in header.strip("|").split("|")] == [
        "model", "mode", "shape", "eager ms", "inductor ms", "mlc ms", "mlc/inductor",
        "GPU ms mlc / ind", "peak MB eager / ind / mlc", "reserved MB eager / ind / mlc", "graphs mlc / ind",
        "compile s mlc / ind",
        "rel err mlc / ind / f32", "correct"]
    assert header in out_md.read_text()
    doc = out_doc.read_text()  # the section of this model list, saying which rows replay graphs
    assert "<!-- begin bench/models.py llama -->" in doc and header in doc
    assert "mlc replays CUDA graphs where its static graphs do by default" in doc

    report = json.loads(out_json.read_text())
    assert report["environment"]["dtype"] == "bfloat16" and report["environment"]["triton_interpret"] == "1"
    inference, training = report["rows"]
    assert (inference["mode"], training["mode"]) == ("inference", "training")
    for row in (inference, training):
        assert row["correct"] == "yes", row
        assert row["graphs"] == {"mlc": 1} and row["peak_mb"] == {}, row  # one graph; no CUDA memory on CPU
        assert row["errors"] == {"inductor": "skipped"}
        assert row["compile_s"]["mlc"] > 0
        for backend in ("eager", "mlc"):
            ms = row["ms"][backend]
            assert 0 < ms["min"] <= ms["median"] <= ms["max"] and ms["samples"] >= 2
    assert set(inference["rel_errors"]["mlc"]) == {"logits"}
    grads = [k for k in training["rel_errors"]["mlc"] if k.startswith("grad ")]
    assert {"loss", "logits", "grad model.embed_tokens.weight", "grad lm_head.weight"} <= set(training["rel_errors"]["mlc"])
    assert len(grads) == 12  # embeddings, 4 attention + 3 MLP projections, 2 norms, final norm, head
    assert max(training["rel_errors"]["mlc"].values()) < 2e-2


def test_quick_dynamic_lengths_on_cpu(tmp_path: Path) -> None:
    """bench/dynamic.py: one dynamic compile serves the three lengths, each row has both
    interleaved timings with a spread and errors within tolerance of eager's."""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", TRITON_INTERPRET="1", MLC_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("MLC_FALLBACK", None)
    out_json = tmp_path / "dynamic.json"
    cmd = [sys.executable, str(ROOT / "bench" / "dynamic.py"), "--quick", "--models", "gpt2", "--modes", "inference", "--skip", "inductor",
           "--rounds", "2", "--calls", "2", "--warmup", "1", "--json", str(out_json)]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = json.loads(out_json.read_text())
    assert [r["seq"] for r in rows] == [5, 7, 8] and rows[-1]["dynamic compiles so far"] == 1
    for row in rows:
        for label in ("dynamic", "static"):
            low, high = (float(v) for v in row[f"{label} spread"].split("-"))  # written to 2 decimals
            assert 0 < low and low - 0.005 <= row[f"{label} ms"] <= high + 0.005
            assert row[f"{label} worst rel err"] < 2e-2


def test_unknown_model_is_a_usage_error() -> None:
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", TRITON_INTERPRET="1")
    usage = subprocess.run([sys.executable, str(MODELS), "--models", "nope"], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=120)
    assert usage.returncode == 2 and "unknown model(s) nope" in usage.stderr


FAILING = """
import importlib.util, json, sys
from dataclasses import asdict
import torch
spec = importlib.util.spec_from_file_location("bench_models", sys.argv[1])
models = sys.modules["bench_models"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(models)

def broken_backend(gm, example_inputs):
    raise NotImplementedError("no rule for aten.frobnicate\\nmore detail")

args = models.parse_args(["--quick", "--models", "gpt2", "--modes", "inference", "--skip", "inductor", "--rounds", "2", "--calls", "1"])
(row,) = models.bench_model("gpt2", torch.device("cpu"), args, broken_backend)
print(json.dumps(asdict(row)))
print(models.markdown([row]))
"""


def test_mlc_failure_is_a_row_not_a_crash() -> None:
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", TRITON_INTERPRET="1")
    proc = subprocess.run([sys.executable, "-c", FAILING, str(MODELS)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    row = json.loads(proc.stdout.splitlines()[0])
    assert row["correct"] == "failed: NotImplementedError: no rule for aten.frobnicate"
    assert "mlc" not in row["ms"] and row["ms"]["eager"]["median"] > 0
    # mlc's cells empty; the last rel err is eager's own against float32, whatever it is
    assert re.search(r"\| failed \| - \| - / - \| - / - / - \| - / - / - \| - / - \| - / - \| - / - / \S+ \| "
                     r"failed: NotImplementedError: no rule for aten.frobnicate \|", proc.stdout), proc.stdout[-600:]


TOP_KERNELS = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("bench_models", sys.argv[1])
models = sys.modules["bench_models"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(models)
row = models.Row(model="gpt2", mode="training", gpu_ms={"mlc": 0.6},
                 kernel_ms={"mlc": {"triton_red_fused_sum_0": 0.4, "sm90_gemm": 0.15, "triton_poi_fused_add_1": 0.05}})
print(models.top_kernels(row, 2))
"""


def test_top_kernels_lists_the_longest_kernels_per_backend() -> None:
    proc = subprocess.run([sys.executable, "-c", TOP_KERNELS, str(MODELS)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.splitlines() == [
        "  mlc: 3 kernel names, 0.600 ms",
        "       0.400  triton_red_fused_sum_0",
        "       0.150  sm90_gemm",
    ]
