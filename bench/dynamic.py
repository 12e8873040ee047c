#!/usr/bin/env python3
"""Dynamic sequence lengths: one mlc compile per model against one static compile per length.

    python bench/dynamic.py                                    # GPT-2, Llama-style, BERT at 128, 200, 512
    python bench/dynamic.py --models gpt2 --lengths 128,200 --modes inference
    python bench/dynamic.py --quick                            # tiny configs (CPU: Triton's interpreter)

For each model of `bench/models.py` (same configs, bfloat16 on CUDA) and each mode, mlc compiles
the model once with `dynamic=True` (`--dynamic sequence`: with `mark_dynamic` on the inputs'
sequence dim, the rest static) and runs it at every length; a second copy is compiled with
`dynamic=False`, which Dynamo recompiles at each length. Each length's row: both wall-clock
timings (ms per call in rounds of `--calls` back-to-back calls, rounds alternating between the
two compiles: median and min-max over `--rounds`; `models.time_interleaved`), dynamic/static, the GPU time per call (the kernels' durations
summed, from torch.profiler: far below the wall-clock time means the host's launches bound the
call), the relative error of each against eager (`bench/models.py`'s judgement), and how many
graphs mlc compiled for the dynamic model in all (counted as the backend's compile calls: a
forward, or a forward and a backward, means one compile for every length).
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def _load_models() -> Any:
    spec = importlib.util.spec_from_file_location("mlc_bench_models", Path(__file__).with_name("models.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


models = _load_models()
run = models.run
torch = models.torch


def count_compiles() -> list[str]:
    """Wraps mlc's compile_graph: the returned list gets each compiled graph's kind."""
    from mlc.frontend import backend

    kinds: list[str] = []
    compile_graph = backend.compile_graph

    def counted(gm: Any, example_inputs: Any, kind: str = "forward", settings: Any = None) -> Any:
        kinds.append(kind)
        return compile_graph(gm, example_inputs, kind, settings)

    backend.compile_graph = counted
    return kinds


def bench(name: str, mode: str, lengths: Sequence[int], args: argparse.Namespace, kinds: list[str]) -> list[dict]:
    from mlc.frontend.backend import mlc_backend

    device = torch.device("cuda" if models.CUDA else "cpu")
    size = models.SIZES[name][1 if args.quick else 0]
    base = models.build(name, args.quick, models.Size(size.batch, max(lengths)), device, models.DTYPES[args.dtype])
    everything = args.dynamic == "all"  # dynamic=True; else only the sequence dim, marked on each input
    dynamic = torch.compile(copy.deepcopy(base.model), backend=mlc_backend, fullgraph=True,
                            dynamic=True if everything else None)
    static = torch.compile(copy.deepcopy(base.model), backend=mlc_backend, fullgraph=True, dynamic=False)
    rows = []
    dynamic_compiles = 0
    for seq in lengths:
        kernels: dict[str, dict[str, float] | None] = {}
        inputs = {k: v[:, :seq].contiguous() for k, v in base.inputs.items()}
        if not everything:
            for v in inputs.values():
                torch._dynamo.mark_dynamic(v, 1)
        expected = models.step(base.model, inputs, mode)
        row: dict[str, Any] = {"model": name, "mode": mode, "batch": size.batch, "seq": seq}
        calls = {}
        for label, compiled in (("dynamic", dynamic), ("static", static)):
            start, compiles = time.perf_counter(), len(kinds)
            results = models.step(compiled, inputs, mode)
            models._sync()
            if label == "dynamic":
                dynamic_compiles += len(kinds) - compiles
            row[f"{label} first call s"] = round(time.perf_counter() - start, 2)
            errors = models.rel_errors(results, expected)
            row[f"{label} worst rel err"] = models.worst(errors)[0]
            calls[label] = call = lambda compiled=compiled: models.step(compiled, inputs, mode)  # noqa: E731
            for _ in range(args.warmup):  # the autotuner's choices made, caches warm
                call()
            kernels[label] = run.kernel_times(call)
            row[f"{label} gpu ms"] = sum(kernels[label].values()) if kernels[label] is not None else None
        for label, timing in models.time_interleaved(calls, args.rounds, args.calls).items():
            row[f"{label} ms"] = timing.median
            row[f"{label} spread"] = f"{timing.min:.2f}-{timing.max:.2f}"
        row["dynamic compiles so far"] = dynamic_compiles
        row["dynamic/static"] = round(row["dynamic ms"] / row["static ms"], 3)
        print(json.dumps(row), flush=True)
        if args.profile and kernels["dynamic"] is not None and kernels["static"] is not None:
            print(kernel_differences(kernels["dynamic"], kernels["static"], args.profile), flush=True)
        rows.append(row)
    return rows


def kernel_differences(dynamic: dict[str, float], static: dict[str, float], count: int) -> str:
    """The `count` kernel names whose GPU ms per call differ most between the two compiles."""
    names = sorted(set(dynamic) | set(static), key=lambda n: -abs(dynamic.get(n, 0.0) - static.get(n, 0.0)))
    lines = [f"  {dynamic.get(n, 0.0):8.4f} {static.get(n, 0.0):8.4f}  {n[:100]}" for n in names[:count]]
    return "  dynamic  static (GPU ms per call; the kernels that differ most)\n" + "\n".join(lines)


def _gpu_ms(row: dict, label: str) -> str:
    return "-" if row.get(f"{label} gpu ms") is None else f"{row[f'{label} gpu ms']:.2f}"


def markdown(rows: Sequence[dict]) -> str:
    head = ("| model | mode | batch x seq | dynamic ms | static ms | dynamic/static | GPU ms dynamic / static "
            "| mlc graphs (dynamic, all lengths so far) | rel err dynamic / static |\n|---|---|---|---|---|---|---|---|---|\n")
    lines = [
        f"| {r['model']} | {r['mode']} | {r['batch']} x {r['seq']} | {r['dynamic ms']:.2f} ({r['dynamic spread']}) "
        f"| {r['static ms']:.2f} ({r['static spread']}) | {r['dynamic/static']:.2f} | {_gpu_ms(r, 'dynamic')} / {_gpu_ms(r, 'static')} "
        f"| {r['dynamic compiles so far']} | {r['dynamic worst rel err']:.1e} / {r['static worst rel err']:.1e} |"
        for r in rows
    ]
    return head + "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="gpt2,llama,bert")
    parser.add_argument("--modes", default="inference,training")
    parser.add_argument("--lengths", default="128,200,512")
    parser.add_argument("--dtype", default="bfloat16", choices=sorted(models.DTYPES))
    parser.add_argument("--quick", action="store_true", help="tiny configs and lengths 5,7,8")
    parser.add_argument("--dynamic", default="all", choices=["all", "sequence"],
                        help="all: dynamic=True (every size and float symbolic, as Dynamo makes them); "
                             "sequence: mark_dynamic on the inputs' sequence dim only")
    parser.add_argument("--warmup", type=int, default=10, help="calls of each compile before timing")
    parser.add_argument("--rounds", type=int, default=15, help="timed rounds, alternating dynamic and static")
    parser.add_argument("--calls", type=int, default=20, help="calls per round, back to back")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="after each length, the N kernels whose GPU time differs most between the compiles")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--markdown", type=Path)
    args = parser.parse_args(argv)
    run.import_mlc()
    kinds = count_compiles()
    lengths = [5, 7, 8] if args.quick else [int(n) for n in args.lengths.split(",")]
    rows = []
    for name in args.models.split(","):
        for mode in args.modes.split(","):
            torch._dynamo.reset()
            try:
                rows += bench(name, mode, lengths, args, kinds)
            except Exception as error:  # a model that fails is a line saying so
                print(f"{name} {mode}: failed: {run.one_line(error)}", file=sys.stderr, flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    table = markdown(rows)
    if args.markdown:
        args.markdown.write_text(table)
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
