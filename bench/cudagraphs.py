"""How a model's training steps replay CUDA graphs under mlc: per compiled graph, how its calls
ran and its recordings (pool, position in it, outputs in pool memory, inputs its capture freed,
storages it took from earlier recordings), and the step's memory (`bench/models.py`'s measures).

    python3 bench/cudagraphs.py --models gpt2,llama [--steps 6] [--no-graphs]
    python3 bench/cudagraphs.py --compare --models gpt2,llama,bert,resnet50,moe

GPU only (CUDA graphs); every graph is asked to replay (`MLC_CUDAGRAPHS=1`; `--no-graphs`:
none, `MLC_CUDAGRAPHS=0`, the same measures to compare with). A graph recorded twice, or run
normally ("busy"), is where a step holds what a replay would overwrite.

Memory, besides `bench/models.py`'s peak and reserved measures of one step: the most the
caching allocator reserved while the model was built and stepped (its parameters included; a
model per process for a number to compare, since what an earlier model left cached counts), and
between steps each pool's segments, MB in total and allocated: the default pool's and the CUDA
graph pools' (what a replay writes, and what is free there between replays).

`--compare` runs each model twice, with graphs and without, each in a process of its own, and
prints the most each reserved and their ratio against issue 47's bar (graphs within 10% of
mlc's own memory without them).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def _load_models() -> Any:
    """bench/models.py (the workloads and the memory measures) as a module."""
    spec = importlib.util.spec_from_file_location("mlc_bench_models", Path(__file__).with_name("models.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


models = _load_models()
torch = models.torch


def default_and_graphs(pools: dict[tuple[int, int], tuple[int, int]]) -> dict[str, tuple[int, int]]:
    """`models.pool_segments()` as two: the default pool's bytes in segments and allocated, and
    the CUDA graph pools' together."""
    out = {"default": (0, 0), "graphs": (0, 0)}
    for pool, (total, allocated) in pools.items():
        which = "default" if pool == models.DEFAULT_POOL else "graphs"
        out[which] = (out[which][0] + total, out[which][1] + allocated)
    return out


def probe(name: str, steps: int) -> list[str]:
    from mlc.frontend import cudagraphs
    from mlc.frontend.backend import mlc_backend

    before = set(cudagraphs.CALLS)
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    torch.manual_seed(0)
    workload = models.build(name, False, models.SIZES[name][0], torch.device("cuda"), torch.bfloat16)
    workload.model.train(workload.train_mode)
    compiled = torch.compile(workload.model, backend=mlc_backend, fullgraph=workload.fullgraph, dynamic=False)
    step = models.Step(compiled, workload.inputs, "training")
    for _ in range(steps):
        step()
    models.drop_gradients(compiled)
    torch.cuda.synchronize()
    most = torch.cuda.max_memory_reserved() / 2**20
    between = ", ".join(f"{pool} pool {total / 2**20:.0f} / {allocated / 2**20:.0f}"
                        for pool, (total, allocated) in default_and_graphs(models.pool_segments()).items())
    pooled = sum(models.graph_pools().values())
    peak = models.peak_memory(step, pooled)
    models.drop_gradients(compiled)
    reserved = models.reserved_memory(step, pooled)
    made = sorted(set(cudagraphs.CALLS) - before, key=lambda g: g.name)
    lines = [f"{name}: peak {peak:.0f} MB, reserved {reserved:.0f} MB, pools {pooled / 2**20:.0f} MB; "
             f"reserved at most {most:.0f} MB over {steps} steps; between steps (MB total / allocated): {between}"]
    pools: dict[int, int] = {}
    for graph in made:
        lines.append(f"  {graph.name}: {dict(graph.calls)}" + (f", not captured: {graph.reason}" if graph.reason else ""))
        for r in graph.recordings:
            taken = sum(len(storages) for storages in r.free_at_capture.values())
            lines.append(f"    pool {pools.setdefault(id(r.pool), len(pools))} position {r.position}: "
                         f"{len(r.pooled.addresses)} output storages, {len(r.consumed)} inputs freed by its "
                         f"capture, {taken} earlier storages free at its capture")
    return lines


MEMORY_BAR = 1.10  # issue 47: peak memory with graphs within 10% of mlc's own without them


def reserved_at_most(output: str) -> float | None:
    """The MB a `probe` line says the allocator reserved at most (None: no such line)."""
    found = re.search(r"reserved at most (\d+) MB", output)
    return None if found is None else float(found.group(1))


def compared(rows: dict[str, tuple[float | None, float | None]]) -> list[str]:
    """A Markdown table of each model's reserved MB at most without and with graphs, the ratio,
    and whether it meets `MEMORY_BAR` ("-" where a run gave no number)."""
    lines = ["| model | no graphs MB | graphs MB | graphs / no graphs | within 10% |", "|---|---|---|---|---|"]
    for name, (without, with_) in rows.items():
        ratio = with_ / without if without and with_ else None
        cells = ["-" if v is None else f"{v:.0f}" for v in (without, with_)]
        verdict = "-" if ratio is None else "yes" if ratio <= MEMORY_BAR else "no"
        lines.append(f"| {name} | {cells[0]} | {cells[1]} | {'-' if ratio is None else f'{ratio:.3f}'} | {verdict} |")
    return lines


def compare(names: Sequence[str], steps: int) -> list[str]:
    """Each model with and without graphs, a process each (what one left cached would count)."""
    rows = {}
    for name in names:
        runs = []
        for flag in ("--no-graphs", None):
            cmd = [sys.executable, __file__, "--models", name, "--steps", str(steps), *filter(None, [flag])]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            sys.stdout.write(proc.stdout)
            if proc.returncode:
                sys.stderr.write(proc.stderr[-2000:])
            runs.append(reserved_at_most(proc.stdout))
        rows[name] = (runs[0], runs[1])
    return compared(rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="gpt2", help=f"comma-separated, from: {','.join(models.SIZES)}")
    parser.add_argument("--steps", type=int, default=6, help="training steps before the measured one (default 6)")
    parser.add_argument("--no-graphs", action="store_true", help="no graph replays (MLC_CUDAGRAPHS=0): to compare")
    parser.add_argument("--compare", action="store_true",
                        help="each model with and without graphs, a process each: reserved MB at most, side by side")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("bench/cudagraphs.py: CUDA graphs need a GPU", file=sys.stderr)
        return 1
    if args.compare:
        print("\n".join(compare(args.models.split(","), args.steps)))
        return 0
    os.environ["MLC_CUDAGRAPHS"] = "0" if args.no_graphs else "1"
    models.run.import_mlc()
    for name in args.models.split(","):
        print("\n".join(probe(name, args.steps)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
