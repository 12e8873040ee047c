#!/usr/bin/env python3
"""Dynamic sequence lengths: one mlc compile and one Inductor compile per model, against mlc's
static compile per length.

    python bench/dynamic.py                                    # GPT-2, Llama-style, BERT at 128, 200, 512
    python bench/dynamic.py --models gpt2 --lengths 128,200 --modes inference --doc docs/BENCHMARKS.md
    python bench/dynamic.py --quick --skip inductor            # tiny configs (CPU: Triton's interpreter)

For each model of `bench/models.py` with [batch, seq] inputs (same configs, bfloat16 on CUDA) and
each mode, mlc compiles the model once with `dynamic=True` (`--dynamic sequence`: `dynamic=None`
with `mark_dynamic` on the inputs' sequence dim, the rest static) and runs it at every length;
Inductor compiles a second copy with the same setting (`--skip inductor` leaves it out); a
third copy goes through mlc with `dynamic=False`, which Dynamo recompiles at each length. Each
length's row: the three wall-clock timings (ms per call in rounds of `--calls` back-to-back
calls, rounds alternating between the three compiles: median and min-max over `--rounds`;
`models.time_interleaved`), mlc-dynamic/Inductor-dynamic and mlc-dynamic/static, the GPU time
per call of each (the kernels' durations summed, from torch.profiler: far below the wall-clock
time means the host's launches bound the call), the peak memory of one call of each
(`models.peak_memory`), the relative error of each against eager (`bench/models.py`'s
judgement), and how many graphs Dynamo compiled for each dynamic compile over the lengths so
far (1: one compile serves every length; the JSON also counts mlc's backend compiles, a forward
or a forward and a backward per graph, as "dynamic compiles so far"). `--doc` writes the table,
the command and the machine as a section of docs/BENCHMARKS.md.
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


LABELS = ("dynamic", "inductor", "static")  # mlc dynamic, Inductor dynamic, mlc static: JSON keys' prefixes


def compiles(model: Any, args: argparse.Namespace) -> dict[str, Any]:
    """The model compiled three ways, each on its own copy: mlc with the dynamic setting, Inductor
    with the same (unless skipped), mlc with `dynamic=False` (Dynamo recompiles at each length)."""
    from mlc.frontend.backend import mlc_backend

    dynamic = True if args.dynamic == "all" else None  # None: the inputs' marked sequence dim only
    compiled = {"dynamic": torch.compile(copy.deepcopy(model), backend=mlc_backend, fullgraph=True, dynamic=dynamic)}
    if "inductor" not in args.skip:
        compiled["inductor"] = torch.compile(copy.deepcopy(model), fullgraph=True, dynamic=dynamic)
    compiled["static"] = torch.compile(copy.deepcopy(model), backend=mlc_backend, fullgraph=True, dynamic=False)
    return compiled


def first_call(row: dict[str, Any], label: str, compiled: Any, inputs: dict, mode: str,
               expected: dict, args: argparse.Namespace) -> Any:
    """Run `compiled` once (compiling it for this length where it must), compare with eager,
    warm it up, take its GPU ms and peak MB per call; fills `row` and returns the call to time."""
    from torch._dynamo.utils import counters

    graphs = counters["stats"]["unique_graphs"]
    start = time.perf_counter()
    results = models.step(compiled, inputs, mode)
    models._sync()
    row[f"{label} first call s"] = round(time.perf_counter() - start, 2)
    row[f"{label} graphs"] = counters["stats"]["unique_graphs"] - graphs  # Dynamo's, at this length
    row[f"{label} worst rel err"] = models.worst(models.rel_errors(results, expected))[0]
    del results
    call = lambda: models.step(compiled, inputs, mode)  # noqa: E731
    for _ in range(args.warmup):  # the autotuner's choices made, caches warm
        call()
    row[f"{label} peak MB"] = models.peak_memory(call)
    kernels = run.kernel_times(call)
    row[f"{label} gpu ms"] = sum(kernels.values()) if kernels is not None else None
    row[f"{label} kernels"] = kernels
    return call


def bench(name: str, mode: str, lengths: Sequence[int], args: argparse.Namespace, kinds: list[str]) -> list[dict]:
    """One row per length: the three compiles of `compiles` run, checked and timed together."""
    device = torch.device("cuda" if models.CUDA else "cpu")
    size = models.SIZES[name][1 if args.quick else 0]
    base = models.build(name, args.quick, models.Size(size.batch, max(lengths)), device, models.DTYPES[args.dtype])
    compiled = compiles(base.model, args)
    rows = []
    dynamic_compiles = 0
    graphs = dict.fromkeys(LABELS, 0)  # Dynamo's graphs of each compile, all lengths so far
    for seq in lengths:
        inputs = {k: v[:, :seq].contiguous() for k, v in base.inputs.items()}
        if args.dynamic != "all":
            for v in inputs.values():
                torch._dynamo.mark_dynamic(v, 1)
        expected = models.step(base.model, inputs, mode)
        row: dict[str, Any] = {"model": name, "mode": mode, "batch": size.batch, "seq": seq}
        calls = {}
        for label, model in compiled.items():
            compiles_before = len(kinds)
            try:
                calls[label] = first_call(row, label, model, inputs, mode, expected, args)
            except Exception as error:  # noqa: BLE001 (a cell saying so; mlc's failures end the model)
                if label != "inductor":
                    raise
                row["inductor error"] = run.one_line(error)
            if label == "dynamic":
                dynamic_compiles += len(kinds) - compiles_before
        del expected
        for label, timing in models.time_interleaved(calls, args.rounds, args.calls).items():
            row[f"{label} ms"] = timing.median
            row[f"{label} spread"] = f"{timing.min:.2f}-{timing.max:.2f}"
        for label in compiled:
            graphs[label] += row.get(f"{label} graphs", 0)
            row[f"{label} graphs so far"] = graphs[label]
        row["dynamic compiles so far"] = dynamic_compiles  # mlc's backend: forwards and backwards
        row["dynamic/static"] = round(row["dynamic ms"] / row["static ms"], 3)
        row["dynamic/inductor"] = round(row["dynamic ms"] / row["inductor ms"], 3) if "inductor ms" in row else None
        kernels = {label: row.pop(f"{label} kernels", None) for label in LABELS}
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


def _cell(row: dict, key: str, fmt: str) -> str:
    value = row.get(key)
    return "-" if value is None else format(value, fmt)


def _ms(row: dict, label: str) -> str:
    if f"{label} ms" not in row:
        return "failed" if row.get(f"{label} error") else "skipped"
    return f"{row[f'{label} ms']:.2f} ({row[f'{label} spread']})"


def _three(row: dict, suffix: str, fmt: str) -> str:
    """The three compiles' values of one measure: mlc dynamic / Inductor dynamic / mlc static."""
    return " / ".join(_cell(row, f"{label} {suffix}", fmt) for label in LABELS)


HEAD = ["model", "mode", "batch x seq", "mlc dynamic ms", "Inductor dynamic ms", "mlc static ms",
        "mlc dyn / ind dyn", "mlc dyn / static", "GPU ms mlc dyn / ind dyn / static",
        "peak MB mlc dyn / ind dyn / static", "graphs so far mlc dyn / ind dyn",
        "rel err mlc dyn / ind dyn / static"]


def markdown(rows: Sequence[dict]) -> str:
    lines = ["| " + " | ".join(HEAD) + " |", "|" + "|".join("---" for _ in HEAD) + "|"]
    for r in rows:
        cells = [r["model"], r["mode"], f"{r['batch']} x {r['seq']}", _ms(r, "dynamic"), _ms(r, "inductor"),
                 _ms(r, "static"), _cell(r, "dynamic/inductor", ".2f"), _cell(r, "dynamic/static", ".2f"),
                 _three(r, "gpu ms", ".2f"), _three(r, "peak MB", ".0f"),
                 f"{_cell(r, 'dynamic graphs so far', 'd')} / {_cell(r, 'inductor graphs so far', 'd')}",
                 _three(r, "worst rel err", ".1e")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


SECTION = """## Dynamic shapes: one compile for every sequence length

`{command}`

{device}, torch {torch}, triton {triton}, transformers {transformers}, {dtype}; {time}. Each
model is compiled once by mlc and once by Inductor{inductor} with `{setting}`, and by mlc with
`dynamic=False` (recompiled by Dynamo at each length); the three run at every length, timed in
the same rounds. *ms*: wall time per call in {rounds} rounds of {calls} back-to-back calls, the
rounds alternating between the compiles; median and min-max over rounds. *mlc dyn / ind dyn*,
*mlc dyn / static*: the medians' ratios (below 1: mlc's dynamic compile is faster). *GPU ms*:
the kernels' durations per call summed (torch.profiler; far below the wall time, the host's
launches bound the call). *peak MB*: what one call holds at its peak above what was allocated
before it (`bench/models.py`'s `peak_memory`; a call replayed from a CUDA graph allocates
nothing; `-` without CUDA). *graphs so far*: the graphs Dynamo compiled for each dynamic
compile over the lengths so far (1: one graph serves every length). *rel err*: the worst
tensor's relative error norm against eager (logits; in training also the loss and every
gradient).

{table}
"""


SEQUENCE_MODELS = [name for name in models.SIZES if name != "resnet50"]  # inputs of [batch, seq]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="gpt2,llama,bert",
                        help=f"comma-separated, from: {','.join(SEQUENCE_MODELS)}")
    parser.add_argument("--modes", default="inference,training")
    parser.add_argument("--lengths", default="128,200,512")
    parser.add_argument("--dtype", default="bfloat16", choices=sorted(models.DTYPES))
    parser.add_argument("--quick", action="store_true", help="tiny configs and lengths 5,7,8")
    parser.add_argument("--dynamic", default="all", choices=["all", "sequence"],
                        help="all: dynamic=True (every size and float symbolic, as Dynamo makes them); "
                             "sequence: mark_dynamic on the inputs' sequence dim only (mlc's and Inductor's alike)")
    parser.add_argument("--skip", default="", choices=["", "inductor"],
                        help="inductor: leave Inductor's dynamic compile out (on CPU it compiles C++: slow)")
    parser.add_argument("--warmup", type=int, default=10, help="calls of each compile before timing")
    parser.add_argument("--rounds", type=int, default=15, help="timed rounds, alternating the compiles")
    parser.add_argument("--calls", type=int, default=20, help="calls per round, back to back")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="after each length, the N kernels whose GPU time differs most between mlc's compiles")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--markdown", type=Path)
    parser.add_argument("--doc", type=Path, help="write the table, the command and the machine as a section of "
                                                 "this document (docs/BENCHMARKS.md)")
    args = parser.parse_args(argv)
    args.models = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = [m for m in args.models if m not in SEQUENCE_MODELS]
    if unknown:
        parser.error(f"unknown model(s) {','.join(unknown)}; known: {','.join(SEQUENCE_MODELS)}")
    args.modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    return args


def write_doc(path: Path, table: str, args: argparse.Namespace, argv: Sequence[str] | None) -> None:
    """The table as the section of `path` for this model list, modes and dynamic setting."""
    import transformers

    env = run.machine(torch.device("cuda" if models.CUDA else "cpu"), args)
    command = "python3 bench/dynamic.py " + " ".join(sys.argv[1:] if argv is None else argv)
    setting = "dynamic=True" if args.dynamic == "all" else "mark_dynamic on the sequence dim"
    key = f"bench/dynamic.py {','.join(args.models)} {','.join(args.modes)}"
    key += " --dynamic sequence" if args.dynamic == "sequence" else ""
    run.write_section(path, key, SECTION.format(**env, command=command, transformers=transformers.__version__,
                                                dtype=args.dtype, setting=setting, rounds=args.rounds,
                                                inductor=" (not in this run)" if "inductor" in args.skip else "",
                                                calls=args.calls, table=table))


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    run.import_mlc()
    kinds = count_compiles()
    lengths = [5, 7, 8] if args.quick else [int(n) for n in args.lengths.split(",")]
    rows = []
    for name in args.models:
        for mode in args.modes:
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
    if args.doc:
        write_doc(args.doc, table, args, argv)
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
