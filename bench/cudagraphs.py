"""How a model's training steps replay CUDA graphs under mlc: per compiled graph, how its calls
ran and its recordings (pool, position in it, outputs in pool memory, inputs its capture freed,
storages it took from earlier recordings), and the step's memory (`bench/models.py`'s measures).

    python3 bench/cudagraphs.py --models gpt2,llama [--steps 6] [--no-graphs]

GPU only (CUDA graphs); every graph is asked to replay (`MLC_CUDAGRAPHS=1`; `--no-graphs`:
none, `MLC_CUDAGRAPHS=0`, the same measures to compare with). A graph recorded twice, or run
normally ("busy"), is where a step holds what a replay would overwrite.

Memory, besides `bench/models.py`'s peak and reserved measures of one step: the most the
caching allocator reserved while the model was built and stepped (its parameters included; a
model per process for a number to compare, since what an earlier model left cached counts), and
between steps each pool's segments, MB in total and allocated: the default pool's and the CUDA
graph pools' (what a replay writes, and what is free there between replays).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="gpt2", help=f"comma-separated, from: {','.join(models.SIZES)}")
    parser.add_argument("--steps", type=int, default=6, help="training steps before the measured one (default 6)")
    parser.add_argument("--no-graphs", action="store_true", help="no graph replays (MLC_CUDAGRAPHS=0): to compare")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("bench/cudagraphs.py: CUDA graphs need a GPU", file=sys.stderr)
        return 1
    os.environ["MLC_CUDAGRAPHS"] = "0" if args.no_graphs else "1"
    models.run.import_mlc()
    for name in args.models.split(","):
        print("\n".join(probe(name, args.steps)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
