#!/usr/bin/env python3
"""mlc against eager and Inductor, side by side in one process on one device, one table.

    python bench/run.py                                 # every model, GPU shapes
    python bench/run.py --models softmax,layer_norm --json out.json --markdown out.md
    python bench/run.py --quick                         # tiny shapes (CPU: Triton's interpreter)

For each model the harness compiles `torch.compile(m, backend=mlc_backend)` (mlc's backend
callable, so no entry point is needed), `torch.compile(m)` (Inductor) and runs eager; checks
mlc's (and Inductor's) output against eager with the dtype's tolerance; times each with
`triton.testing.do_bench` (median ms; on CPU a wall-clock median instead) in `--repeats` rounds
that interleave the backends, and reports the median round with the range of all; the
effective bandwidth (inputs + outputs moved once) and, on CUDA, the kernels launched per call
(torch.profiler). A model that fails to compile or run is a row saying "failed: <reason>",
never a crash. Not part of the mlc package: see bench/README.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

CUDA = torch.cuda.is_available()
if not CUDA:
    # mlc's kernels are Triton kernels: without a GPU they can only run under Triton's
    # interpreter, which is read when a kernel is decorated, so before anything imports them.
    os.environ["TRITON_INTERPRET"] = "1"
    # CPU numbers are a sanity check only; one thread keeps them from measuring contention.
    torch.set_num_threads(1)
# A graph mlc cannot compile must show up as a failure, not as eager timings under mlc's name.
os.environ.pop("MLC_FALLBACK", None)

ROOT = Path(__file__).resolve().parents[1]


def import_mlc() -> Any:
    """`import mlc`; when it is not installed, load the repository root as the package."""
    try:
        import mlc

        return mlc
    except ImportError:
        spec = importlib.util.spec_from_file_location(
            "mlc", ROOT / "__init__.py", submodule_search_locations=[str(ROOT)]
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["mlc"] = module
        spec.loader.exec_module(module)
        return module


# ---------------------------------------------------------------------------------------------
# Models: bench/workloads.py


def _load_workloads() -> Any:
    spec = importlib.util.spec_from_file_location("bench_workloads", Path(__file__).with_name("workloads.py"))
    assert spec is not None and spec.loader is not None
    module = sys.modules["bench_workloads"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


workloads = _load_workloads()
Case, TOLERANCES, MODELS, LAUNCHES = workloads.Case, workloads.TOLERANCES, workloads.MODELS, workloads.LAUNCHES


# ---------------------------------------------------------------------------------------------
# Measuring


@dataclass
class Row:
    model: str
    shape: str = ""
    dtype: str = ""
    bytes: int | None = None
    eager_ms: float | None = None
    inductor_ms: float | None = None
    mlc_ms: float | None = None
    eager_range: tuple[float, float] | None = None  # fastest and slowest of the rounds' medians
    inductor_range: tuple[float, float] | None = None
    mlc_range: tuple[float, float] | None = None
    mlc_over_inductor: float | None = None
    eager_gbps: float | None = None
    inductor_gbps: float | None = None
    mlc_gbps: float | None = None
    eager_kernels: float | None = None
    inductor_kernels: float | None = None
    mlc_kernels: float | None = None
    # host microseconds per call, started on an idle GPU (`host_us`), the median of the rounds'
    eager_host_us: float | None = None
    inductor_host_us: float | None = None
    mlc_host_us: float | None = None
    # `y.copy_(x)` moving the row's bytes, timed in the same rounds: what a transfer of that size
    # reaches (a short one pays a launch and a ramp that 256 MB hide)
    copy_ms: float | None = None
    copy_range: tuple[float, float] | None = None
    copy_gbps: float | None = None
    inductor_compile_s: float | None = None  # the first call: Dynamo, the compiler, autotuning, the run
    mlc_compile_s: float | None = None
    correct: str = ""  # "yes", "mismatch: ...", or "failed: ..." (mlc against eager)
    inductor_correct: str = ""
    errors: dict[str, str] = field(default_factory=dict)  # backend -> one-line reason
    round_ms: dict[str, list[float]] = field(default_factory=dict)  # backend -> each round's ms, in order


def one_line(error: BaseException, limit: int = 160) -> str:
    """The first informative line of an exception (Dynamo wraps backend errors: unwrapped)."""
    while getattr(error, "inner_exception", None) is not None:  # BackendCompilerFailed
        error = error.inner_exception  # type: ignore[attr-defined]
    lines = [ln.strip() for ln in str(error).splitlines() if ln.strip()]
    lines = [ln for ln in lines if not ln.startswith(("backend=", "Set TORCH", "You can suppress"))]
    text = f"{type(error).__name__}: {lines[0] if lines else ''}".strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


def time_ms(fn: Callable[[], Any], warmup: int, rep: int, cudagraph: bool = False) -> float:
    """Median milliseconds of one call; with `cudagraph`, of its kernels replayed from a CUDA
    graph, which leaves out the host's work (guards, wrapper, launches) between them."""
    if CUDA:
        import triton.testing

        if cudagraph:
            return float(triton.testing.do_bench_cudagraph(fn, rep=rep, return_mode="median"))
        return float(triton.testing.do_bench(fn, warmup=warmup, rep=rep, return_mode="median"))
    # CPU: wall clock; the warmup/rep budgets (ms) bound the number of calls, at least 3.
    fn()
    times: list[float] = []
    deadline = time.perf_counter() + rep / 1e3
    while len(times) < 3 or (time.perf_counter() < deadline and len(times) < 1000):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def host_us(fn: Callable[[], Any], calls: int = 50) -> float | None:
    """Median host microseconds of one call started with the GPU idle, so that nothing makes the
    host wait: its own work per call (Dynamo's guards, the wrapper, allocations, launches). A
    whole call's time includes it where it is longer than the GPU's work between two calls. None
    off the GPU, where the call computes on the host."""
    if not CUDA:
        return None
    times = []
    for _ in range(calls):
        torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e6)
    torch.cuda.synchronize()
    return statistics.median(times)


def _kernel_events(fn: Callable[[], Any], calls: int) -> list[Any]:
    """torch.profiler's GPU kernel events of `calls` calls of `fn` after one unprofiled call
    (memcpy/memset excluded)."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    return [e for e in prof.events()
            if e.device_type == DeviceType.CUDA and not e.name.startswith(("Memcpy", "Memset", "[memory]"))]


def count_kernels(fn: Callable[[], Any], calls: int = 3) -> float | None:
    """GPU kernels launched per call (memcpy/memset excluded); None where it cannot be known."""
    return len(_kernel_events(fn, calls)) / calls if CUDA else None


def kernel_times(fn: Callable[[], Any], calls: int = 3) -> dict[str, float] | None:
    """GPU milliseconds per call of each kernel name (summed over its launches; memcpy/memset
    excluded); None where it cannot be known. Their sum against the wall-clock time says
    whether a call is bound by the GPU or by the host's launches."""
    if not CUDA:
        return None
    times: dict[str, float] = {}
    for e in _kernel_events(fn, calls):
        times[e.name] = times.get(e.name, 0.0) + e.time_range.elapsed_us() / 1e3 / calls
    return times


def copy_bandwidth(args: argparse.Namespace, megabytes: int = 256) -> float | None:
    """GB/s of `y.copy_(x)` (read + write) for `megabytes`, timed as the models are: the
    ceiling a memory-bound kernel is measured against ("% of copy")."""
    if not CUDA:
        return None
    x = torch.empty(megabytes * 2**20 // 4, device="cuda")
    y = torch.empty_like(x)
    ms = statistics.median(time_ms(lambda: y.copy_(x), args.warmup, args.rep, args.cudagraph) for _ in range(3))
    return 2 * x.numel() * 4 / (ms * 1e-3) / 1e9


def _same_size_copy(nbytes: int, device: torch.device) -> Callable[[], Any]:
    """`y.copy_(x)` reading and writing `nbytes` in all (the row's reference transfer)."""
    x = torch.empty(max(1, nbytes // 8), device=device)
    y = torch.empty_like(x)
    return lambda: y.copy_(x)


def nbytes(value: Any) -> int:
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if isinstance(value, (list, tuple)):
        return sum(nbytes(v) for v in value)
    return 0


def check(actual: Any, expected: Any, case: Case) -> str:
    default_atol, default_rtol = TOLERANCES.get(case.dtype, (1e-5, 1e-5))
    atol = case.atol if case.atol is not None else default_atol
    rtol = case.rtol if case.rtol is not None else default_rtol
    try:
        torch.testing.assert_close(actual, expected, atol=atol, rtol=rtol, equal_nan=True)
    except AssertionError as error:
        lines = [ln.strip() for ln in str(error).splitlines() if ln.strip()]
        detail = "; ".join(ln for ln in lines if ln.startswith(("Mismatched", "Greatest")) or "mismatch" in ln.lower())
        return f"mismatch: {detail or (lines[0] if lines else 'values differ')}"
    return "yes"


def compilers(mlc_backend: Callable[..., Any], reduce_overhead: bool = False
              ) -> dict[str, Callable[[Callable[..., Any]], Callable[..., Any]]]:
    """The three ways a workload runs; `reduce_overhead`: both compilers replay CUDA graphs
    (Inductor's `mode="reduce-overhead"`, mlc's `MLC_CUDAGRAPHS=1`, set by `main`)."""
    mode = "reduce-overhead" if reduce_overhead else None
    return {
        "eager": lambda fn: fn,
        "inductor": lambda fn: torch.compile(fn, fullgraph=True, dynamic=False, mode=mode),
        "mlc": lambda fn: torch.compile(fn, backend=mlc_backend, fullgraph=True, dynamic=False),
    }


def _record_failure(row: Row, backend: str, error: BaseException, verbose: bool) -> None:
    row.errors[backend] = one_line(error)
    if verbose:
        traceback.print_exc()
    if backend == "mlc":
        row.correct = f"failed: {row.errors[backend]}"
    elif backend == "inductor":
        row.inductor_correct = f"failed: {row.errors[backend]}"
    torch._dynamo.reset()


def bench_model(name: str, device: torch.device, args: argparse.Namespace, mlc_backend: Callable[..., Any]) -> Row:
    row = Row(model=name)
    torch._dynamo.reset()
    torch.manual_seed(0)
    try:
        case = MODELS[name](device, args.quick)
    except Exception as error:  # noqa: BLE001 (a row, never a crash)
        row.errors["setup"] = one_line(error)
        row.correct = f"failed: {row.errors['setup']}"
        return row
    row.shape, row.dtype = case.shape, str(case.dtype).removeprefix("torch.")
    expected = case.fn(*case.inputs)
    row.bytes = nbytes(case.inputs) + case.extra_bytes + nbytes(expected)

    calls: dict[str, Callable[[], Any]] = {}
    for backend, compile_fn in compilers(mlc_backend, args.reduce_overhead).items():
        if backend in args.skip:
            row.errors[backend] = "skipped"
            continue
        try:
            compiled = compile_fn(case.fn)
            start = time.perf_counter()
            out = compiled(*case.inputs)  # compiles on the first call
            if CUDA:
                torch.cuda.synchronize()
            if backend != "eager":
                setattr(row, f"{backend}_compile_s", time.perf_counter() - start)
            verdict = "yes" if backend == "eager" else check(out, expected, case)
            calls[backend] = lambda compiled=compiled: compiled(*case.inputs)  # type: ignore[misc]
            setattr(row, f"{backend}_kernels", count_kernels(calls[backend]) if args.kernels else None)
        except Exception as error:  # noqa: BLE001
            _record_failure(row, backend, error, args.verbose)
            continue
        if backend == "mlc":
            row.correct = verdict
        elif backend == "inductor":
            row.inductor_correct = verdict
    if calls:
        calls["copy"] = _same_size_copy(row.bytes, device)
    # Rounds interleave the backends, so a drift of the clock or a neighbour's load hits all alike;
    # the row keeps the median of the rounds' medians and their range.
    samples: dict[str, list[float]] = {backend: [] for backend in calls}
    host: dict[str, list[float]] = {backend: [] for backend in calls}
    for _ in range(args.repeats):
        for backend, call in calls.items():
            try:
                samples[backend].append(time_ms(call, args.warmup, args.rep, args.cudagraph))
                if backend != "copy" and not args.cudagraph and (us := host_us(call)) is not None:
                    host[backend].append(us)
            except Exception as error:  # noqa: BLE001
                _record_failure(row, backend, error, args.verbose)
    for backend, times in samples.items():
        if not times or backend in row.errors:
            continue
        row.round_ms[backend] = times
        ms = statistics.median(times)
        setattr(row, f"{backend}_ms", ms)
        setattr(row, f"{backend}_range", (min(times), max(times)))
        setattr(row, f"{backend}_gbps", row.bytes / (ms * 1e-3) / 1e9 if ms > 0 else None)
        if host[backend]:
            setattr(row, f"{backend}_host_us", statistics.median(host[backend]))
    if row.mlc_ms is not None and row.inductor_ms:
        row.mlc_over_inductor = row.mlc_ms / row.inductor_ms
    del case, expected
    if CUDA:
        torch.cuda.empty_cache()
    return row


# ---------------------------------------------------------------------------------------------
# Reporting


def host_us_per_launch(rows: Sequence[Row]) -> dict[str, float]:
    """Per backend, the host µs one more kernel launch costs: the `launches` row (LAUNCHES
    kernels) against `gelu_erf` (one), per call, over the kernels between them; the rest of a
    call's host time (guards, the wrapper) cancels. Empty without both rows' host times."""
    by_name = {r.model: r for r in rows}
    many, one = by_name.get("launches"), by_name.get("gelu_erf")
    if many is None or one is None:
        return {}
    out = {}
    for backend in ("eager", "inductor", "mlc"):
        a, b = getattr(many, f"{backend}_host_us"), getattr(one, f"{backend}_host_us")
        if a is not None and b is not None:
            out[backend] = (a - b) / (LAUNCHES - 1)
    return out


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _ms(row: Row, backend: str) -> str:
    value = getattr(row, f"{backend}_ms")
    spread = getattr(row, f"{backend}_range")
    if value is not None:
        return f"{value:.3f}" + (f" ({spread[0]:.3f}–{spread[1]:.3f})" if spread and spread[0] != spread[1] else "")
    error = row.errors.get(backend)
    return "skipped" if error == "skipped" else ("failed" if error else "-")


def _gbps(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}" if value >= 100 else f"{value:.3g}"


def _kernels(row: Row) -> str:
    if row.mlc_kernels is None and row.inductor_kernels is None:
        return "-"
    return f"{_num(row.mlc_kernels, 0)} / {_num(row.inductor_kernels, 0)}"


def _host(row: Row) -> str:
    values = [row.eager_host_us, row.inductor_host_us, row.mlc_host_us]
    return "-" if all(v is None for v in values) else " / ".join(_num(v, 0) for v in values)


def _percent(value: float | None, of: float | None) -> str:
    return "-" if value is None or not of else f"{100 * value / of:.0f}%"


def _compile(row: Row) -> str:
    if row.mlc_compile_s is None and row.inductor_compile_s is None:
        return "-"
    return f"{_num(row.mlc_compile_s, 1)} / {_num(row.inductor_compile_s, 1)}"


def markdown(rows: Sequence[Row], copy_gbps: float | None = None) -> str:
    head = ["model", "shape", "dtype", "eager ms", "inductor ms", "mlc ms", "mlc/inductor", "mlc GB/s",
            "inductor GB/s", "mlc % copy", "% same-size copy mlc/ind", "kernels mlc/ind", "host µs eager/ind/mlc",
            "compile s mlc/ind", "correct"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in rows:
        cells = [r.model, f"`{r.shape}`" if r.shape else "", r.dtype, _ms(r, "eager"), _ms(r, "inductor"),
                 _ms(r, "mlc"), _num(r.mlc_over_inductor, 2), _gbps(r.mlc_gbps), _gbps(r.inductor_gbps),
                 _percent(r.mlc_gbps, copy_gbps),
                 f"{_percent(r.mlc_gbps, r.copy_gbps)} / {_percent(r.inductor_gbps, r.copy_gbps)}",
                 _kernels(r), _host(r), _compile(r), r.correct.replace("|", "\\|")]
        lines.append("| " + " | ".join(cells) + " |")
    notes = [f"- {r.model} {backend}: {error}" for r in rows for backend, error in r.errors.items()
             if error != "skipped" and not (backend == "mlc" and r.correct.startswith("failed"))]
    notes += [f"- {r.model} inductor: {r.inductor_correct}" for r in rows if r.inductor_correct.startswith("mismatch")]
    if notes:
        lines += ["", "Other failures:", *notes]
    return "\n".join(lines)


WORKLOADS_SECTION = """## Workloads: {title}

`{command}`

{device}, torch {torch}, triton {triton}, Python {python}; {time}. Timer: {timer}, the median
of {repeats} rounds that interleave the backends, the rounds' range in parentheses. Copy
bandwidth in the same run (`y.copy_(x)` of 256 MB, read + write): {copy} GB/s.

*mlc/inductor* below 1 is mlc faster; *GB/s* counts every input, parameter and output once (the
least a kernel must move); *% copy* is mlc's GB/s against the copy bandwidth; *% same-size copy*
is each compiler's GB/s against a `y.copy_(x)` moving the row's bytes, timed in the same rounds:
what a transfer of that size reaches (a short one pays a launch and a ramp that 256 MB hide),
above 100% where it beats the copy; *kernels* are GPU
kernels per call (torch.profiler; cuBLAS and cuDNN kernels count); *compile s* is the first
call's wall time (Dynamo, the compiler, Triton compilation, autotuning and one run); *correct*
is mlc's output against eager. The seeds' graphs: `mlp` (seed 000), `seed_toy` (001),
`conv_bias` (002). *host µs* is each one's work on the host per call (Dynamo's guards, the
wrapper, allocations, launches), timed from an idle GPU, the median of the rounds'. do_bench
zeroes 256 MB before each call (~85 us on an H100) while the host prepares the next, so a whole
call's time includes the host's work only where it (with do_bench's own) outlasts that and the
kernels: in a round where the host runs slow, a call with a long host path comes out slower.
The workloads run under `torch.no_grad()`, so mlc's calls replay CUDA graphs as its static
inference graphs do by default, except a call of one Triton kernel, launched as it is;
Inductor's default launches each kernel. With `--cudagraph` the calls' kernels are replayed
from a CUDA graph: the kernels alone. With
`--reduce-overhead` whole calls are timed, but both compilers replay their own CUDA graphs
(Inductor's `mode="reduce-overhead"`, mlc's `MLC_CUDAGRAPHS=1`); eager launches as usual.

{table}
"""

DOC_TITLE = """# Benchmarks

mlc against eager PyTorch and Inductor on one GPU (`bench/distributed.py`: on several), all
three in one process (one per GPU). Each section is written by the command it shows (run on the
GPU machine, set up as `bench/README.md` says) and replaced when that command runs again; do not
edit it by hand.
"""


def write_section(path: Path, key: str, body: str) -> None:
    """Put `body` into the document at `path` between the markers of `key`, replacing what was
    there (the document is created with its title when missing)."""
    begin, end = f"<!-- begin {key} -->", f"<!-- end {key} -->"
    text = path.read_text() if path.exists() else DOC_TITLE
    block = f"{begin}\n{body.rstrip()}\n{end}"
    if begin in text and end in text:
        text = text[: text.index(begin)] + block + text[text.index(end) + len(end):]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def machine(device: torch.device, args: argparse.Namespace) -> dict[str, Any]:
    """What a run's numbers were taken on (bench/models.py shares this)."""
    import triton

    return {
        "device": torch.cuda.get_device_name(device) if CUDA else f"cpu ({platform.processor() or platform.machine()})",
        "torch": torch.__version__,
        "triton": triton.__version__,
        "python": platform.python_version(),
        "triton_interpret": os.environ.get("TRITON_INTERPRET", "0"),
        "quick": args.quick,
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def environment(device: torch.device, args: argparse.Namespace) -> dict[str, Any]:
    """The machine and this script's timer."""
    timer = "triton.testing.do_bench_cudagraph median" if args.cudagraph else "triton.testing.do_bench median"
    return {**machine(device, args), "warmup_ms": args.warmup, "rep_ms": args.rep, "repeats": args.repeats,
            "timer": timer if CUDA else "wall-clock median"}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="all", help=f"comma-separated, from: {','.join(MODELS)} (default all)")
    parser.add_argument("--quick", action="store_true", help="tiny shapes (a sanity check; what CPU runs use)")
    parser.add_argument("--json", type=Path, help="write the rows and the environment as JSON here")
    parser.add_argument("--markdown", type=Path, help="write the Markdown table here too")
    parser.add_argument("--doc", type=Path,
                        help="write the table, the command and the machine as a section of this document (docs/BENCHMARKS.md)")
    parser.add_argument("--warmup", type=int, default=25, help="do_bench warmup, ms (default 25)")
    parser.add_argument("--rep", type=int, default=100, help="do_bench repetition time, ms (default 100)")
    # 9: on the H100 machine a round of a compiled call is at times slowed by its host (a
    # slower host at that moment): often the first after a compile, up to 3 of 5 in a row
    parser.add_argument("--repeats", type=int, default=9,
                        help="timing rounds, the backends interleaved; the row reports their median and range (default 9)")
    parser.add_argument("--cudagraph", action="store_true",
                        help="time the kernels replayed from a CUDA graph (do_bench_cudagraph): no host overhead")
    parser.add_argument("--reduce-overhead", action="store_true",
                        help="both compilers replay CUDA graphs: Inductor's mode=reduce-overhead, mlc's MLC_CUDAGRAPHS=1")
    parser.add_argument("--skip", default="", help="backends not to run: eager,inductor,mlc")
    parser.add_argument("--no-cudagraphs", action="store_true",
                        help="mlc launches every kernel (MLC_CUDAGRAPHS=0), as Inductor's default does: the host "
                             "µs column is then the launch path's, and `launches` against `gelu_erf` (one kernel) "
                             "gives the host µs per launch")
    parser.add_argument("--no-kernels", dest="kernels", action="store_false",
                        help="do not count kernels per call (torch.profiler; CUDA only)")
    parser.add_argument("--verbose", action="store_true", help="print tracebacks of failures")
    args = parser.parse_args(argv)
    names = list(MODELS) if args.models == "all" else [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = [m for m in names if m not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {','.join(unknown)}; known: {','.join(MODELS)}")
    args.models = names
    args.skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    if not CUDA and not args.quick:
        print("no CUDA device: running on CPU under TRITON_INTERPRET=1; use --quick", file=sys.stderr)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.reduce_overhead or args.no_cudagraphs:
        os.environ["MLC_CUDAGRAPHS"] = "0" if args.no_cudagraphs else "1"
    import_mlc()
    from mlc.frontend.backend import mlc_backend

    device = torch.device("cuda" if CUDA else "cpu")
    env = environment(device, args)
    env["copy_gbps"] = copy_bandwidth(args)
    env["command"] = "python3 bench/run.py " + " ".join(sys.argv[1:] if argv is None else argv)
    print(f"# mlc bench on {env['device']} (torch {env['torch']}, triton {env['triton']}, {env['timer']})",
          flush=True)
    rows = []
    with torch.no_grad():
        for name in args.models:
            start = time.perf_counter()
            row = bench_model(name, device, args, mlc_backend)
            rows.append(row)
            times = ", ".join(f"{b} {_ms(row, b)}" for b in ("eager", "inductor", "mlc"))
            print(f"{name} (ms): {times}; correct: {row.correct or '-'} ({time.perf_counter() - start:.1f} s)",
                  file=sys.stderr, flush=True)
    table = markdown(rows, env["copy_gbps"])
    env["host_us_per_launch"] = host_us_per_launch(rows)
    if env["host_us_per_launch"]:
        table += "\n\nhost µs per launch (`launches` against `gelu_erf`): " + ", ".join(
            f"{backend} {us:.1f}" for backend, us in env["host_us_per_launch"].items())
    print(table)
    if args.doc:
        copy = env["copy_gbps"]
        # One section per timer: a call as the user makes it, and its kernels alone.
        key, title = (("bench/run.py --cudagraph", "kernels alone") if args.cudagraph
                      else ("bench/run.py --reduce-overhead", "whole calls from CUDA graphs") if args.reduce_overhead
                      else ("bench/run.py", "whole calls"))
        write_section(args.doc, key, WORKLOADS_SECTION.format(
            **env, title=title, copy="-" if copy is None else f"{copy:.0f}", table=table))
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(f"mlc bench on {env['device']}, torch {env['torch']}, triton {env['triton']}\n\n"
                                 + table + "\n")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"environment": env, "rows": [asdict(r) for r in rows]}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
