"""bench/distributed.py works: `--quick --parallel tp --skip inductor` on two CPU ranks (gloo,
Triton's interpreter), started by torchrun.

This checks the script, never the GPU numbers: the row has eager's and both mlc runs' times,
both mlc runs match eager's first step, and the two mlc runs compiled apart, one with
`overlap-comm` moving the collectives and one with it off (the dumps say so).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "distributed.py"


def test_quick_tensor_parallel_on_two_cpu_ranks(tmp_path: Path) -> None:
    dumps = tmp_path / "dump"
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", TRITON_INTERPRET="1", OMP_NUM_THREADS="1",
               MLC_DUMP_DIR=str(dumps), MLC_CACHE="0")
    env.pop("MLC_FALLBACK", None)
    out_json = tmp_path / "dist.json"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", str(SCRIPT),
           "--quick", "--parallel", "tp", "--skip", "inductor", "--warmup", "0", "--rounds", "1", "--steps", "1",
           "--json", str(out_json)]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]

    (row,) = json.loads(out_json.read_text())["rows"]
    assert row["parallelism"] == "tp"
    assert set(row["ms"]) == {"eager", "mlc", "mlc_no_overlap"}
    assert row["correct"] == {"mlc": "yes", "mlc_no_overlap": "yes"}
    assert all(err < 1e-4 for errs in row["rel_errors"].values() for err in errs.values()), row["rel_errors"]

    # Both ranks write the same graph names into one folder: a forward and a backward per mlc run.
    graphs = sorted(p.name for p in dumps.iterdir())
    assert len(graphs) == 4, graphs
    explained = [g for g in graphs if (dumps / g / "overlap.txt").exists()]
    assert len(explained) == 2, explained  # the run with overlap-comm on explains its moves
    assert "moves" in (dumps / explained[1] / "overlap.txt").read_text()  # the backward overlaps its all-reduces
