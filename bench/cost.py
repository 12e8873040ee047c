"""The cost model against the GPU: calibrate a `Target`, then predicted next to measured kernel times.

    python3 bench/cost.py calibrate --out bench/results/target-h200.json
    python3 bench/cost.py report --target bench/results/target-h200.json [--models softmax,layer_norm]
        [--training gpt2,llama] [--json PATH]

`calibrate` runs microbenchmarks on this GPU and writes the speeds `analysis/cost.py` predicts
with (`Target.load` reads them), with the device and date as its `source`:

| field | microbenchmark |
|---|---|
| dram_bytes_per_s | `y.copy_(x)` of 256 MiB each way, L2 flushed before each call (`do_bench`): read + write bytes / time |
| kernel_s | a Triton kernel of one program copying 128 floats, its duration as `report` measures kernels (torch.profiler, mean of 100 calls): launch, one round trip, write-back |
| l2_bytes_per_s | `y.copy_(x)` of 2 and of 8 MiB each way (in L2), 200 replayed from one CUDA graph: the bytes added / the time added (no per-kernel overhead in it) |
| round_trip_s | a one-program looped sum (R0_BLOCK 2048, 16 warps, as a looped reduction's config) of 8 and of 64 iterations, L2 flushed before each call, durations by torch.profiler: the time each iteration adds |
| combine_s | a one-program sum of 1024 floats over 8 warps (`tl.sum` of a [1, 1024] tile) against a one-program copy of as many, both warm in L2, by torch.profiler: the time the combine adds |
| fma_flops_per_s | f32 `torch.mm` 8192^3 with TF32 off |
| tensor_flops_per_s | bf16 `torch.mm` 8192^3 |
| num_sms, l2_bytes | the device's properties (l1_bytes, max_programs_per_sm: `Target`'s hardware facts) |

`report` compiles each `bench/run.py` workload with mlc (the dump gives the wrapper as it runs,
after plan-buffers), predicts every launch, times every kernel (torch.profiler, the GPU time per
call, summed per kernel name as `bench/run.py`'s kernel column), and prints both per kernel with
their ratio, then per kernel kind the share within 20% and the median error. Without a GPU the
measured column is empty (`--quick`: tiny shapes, for a check of the predictions' path).
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import math
import os
import statistics
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


def _load(filename: str) -> Any:
    """A script beside this one as a module: run.py (the workloads, the profiler's kernel
    times), models.py (the model table's workloads and training step)."""
    spec = importlib.util.spec_from_file_location(f"mlc_bench_{Path(filename).stem}", Path(__file__).with_name(filename))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


run = _load("run.py")
torch = run.torch


# ---------------------------------------------------------------------------------------------
# calibrate


def _cold_s(fn: Callable[[], Any]) -> float:
    """Seconds per call, L2 flushed before each (triton's do_bench, median)."""
    import triton.testing

    return triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median") * 1e-3


def _replayed_s(fn: Callable[[], Any], calls: int) -> float:
    """Seconds per call of `calls` calls captured in one CUDA graph, replayed (the median of 10):
    the GPU's time alone, with whatever stays in L2 between calls."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            fn()
    times = []
    for _ in range(10):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e-3 / calls)
    return statistics.median(times)


def _copy(nbytes: int) -> Callable[[], Any]:
    x = torch.empty(nbytes // 4, device="cuda")
    y = torch.empty_like(x)
    return lambda: y.copy_(x)


def _mm_flops_per_s(dtype: Any, n: int = 8192) -> float:
    a = torch.randn(n, n, device="cuda", dtype=dtype)
    b = torch.randn(n, n, device="cuda", dtype=dtype)
    return 2 * n**3 / _cold_s(lambda: torch.mm(a, b))


def _profiled_s(fn: Callable[[], Any], kernel: str, calls: int = 100) -> float:
    """Seconds per call of the kernels whose name holds `kernel` (""): every one), as torch.profiler measures
    them (`bench/run.py`'s kernel_times: what `report` compares predictions with)."""
    fn()
    torch.cuda.synchronize()
    times = run.kernel_times(fn, calls) or {}
    found = [ms for name, ms in times.items() if kernel in name]
    if not found:
        raise RuntimeError(f"calibrate: the profiler saw no kernel named like {kernel!r} (saw: {sorted(times)})")
    return sum(found) * 1e-3


def _l2_bytes_per_s(small: int = 2 * 2**20, large: int = 8 * 2**20) -> float:
    """Copies that stay in L2: the bytes a larger one adds over the time it adds."""
    return 2 * (large - small) / (_replayed_s(_copy(large), 200) - _replayed_s(_copy(small), 200))


def _looped_sum() -> Any:
    """A looped reduction of one program, as Inductor's: [1, R0_BLOCK] tiles, a known trip count."""
    import triton
    import triton.language as tl

    @triton.jit
    def looped_sum_kernel(in_ptr0, out_ptr0, r0_numel: tl.constexpr, R0_BLOCK: tl.constexpr):
        r0_base = tl.arange(0, R0_BLOCK)[None, :]
        acc = tl.zeros([1, R0_BLOCK], tl.float32)
        for r0_offset in range(0, r0_numel, R0_BLOCK):
            acc += tl.load(in_ptr0 + (r0_offset + r0_base), eviction_policy="evict_first")
        tl.store(out_ptr0 + tl.zeros([1, 1], tl.int32), tl.sum(acc, 1)[:, None])

    return looped_sum_kernel


def _copy_kernel() -> Any:
    """The least Triton kernel: one program loads a block and stores it."""
    import triton
    import triton.language as tl

    @triton.jit
    def least_copy_kernel(in_ptr0, out_ptr0, XBLOCK: tl.constexpr):
        xindex = tl.arange(0, XBLOCK)
        tl.store(out_ptr0 + xindex, tl.load(in_ptr0 + xindex))

    return least_copy_kernel


def _block_sum_kernel() -> Any:
    """A persistent reduction of one program, as Inductor's: a [1, R0_BLOCK] tile loaded at
    once, summed across the program's warps, one value stored."""
    import triton
    import triton.language as tl

    @triton.jit
    def block_sum_kernel(in_ptr0, out_ptr0, R0_BLOCK: tl.constexpr):
        r0_index = tl.arange(0, R0_BLOCK)[None, :]
        tl.store(out_ptr0 + tl.zeros([1, 1], tl.int32), tl.sum(tl.load(in_ptr0 + r0_index), 1)[:, None])

    return block_sum_kernel


def _combine_s(block: int = 1024, warps: int = 8) -> float:
    """What a combine across warps adds to a program: a one-program sum of `block` floats over
    `warps` warps against the least kernel copying as many (both warm in L2, as a split
    reduction's second stage reads what the first just wrote)."""
    x, y = torch.randn(block, device="cuda"), torch.empty(block, device="cuda")
    copy, total = _copy_kernel(), _block_sum_kernel()
    copied = _profiled_s(lambda: copy[(1,)](x, y, XBLOCK=block, num_warps=warps), "least_copy_kernel")
    summed = _profiled_s(lambda: total[(1,)](x, y, R0_BLOCK=block, num_warps=warps), "block_sum_kernel")
    return max(summed - copied, 1e-9)  # Target's fields are positive


def _kernel_s(block: int = 128) -> float:
    """What the profiler measures for a Triton kernel that loads and stores almost nothing: a
    launch, one round trip to memory, the write-back (what `report` sees of its smallest kernels)."""
    kernel = _copy_kernel()
    x, y = torch.randn(block, device="cuda"), torch.empty(block, device="cuda")
    return _profiled_s(lambda: kernel[(1,)](x, y, XBLOCK=block, num_warps=4), "least_copy_kernel")


def _round_trip_s(few: int = 8, many: int = 64, block: int = 2048) -> float:
    """The time a looped reduction's iteration adds to one program, its loads from DRAM."""
    kernel = _looped_sum()
    flush = torch.empty(2 * torch.cuda.get_device_properties(0).L2_cache_size // 4, device="cuda")
    out = torch.empty(1, device="cuda")

    def duration(iterations: int) -> float:
        x = torch.randn(iterations * block, device="cuda")

        def call() -> None:
            flush.zero_()
            kernel[(1,)](x, out, iterations * block, R0_BLOCK=block, num_warps=16, num_stages=1)

        return _profiled_s(call, "looped_sum_kernel")

    return (duration(many) - duration(few)) / (many - few)


def calibrate() -> dict[str, Any]:
    """The measured fields of a `Target` for this GPU (see the module docstring)."""
    props = torch.cuda.get_device_properties(0)
    big = 256 * 2**20
    tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        fma = _mm_flops_per_s(torch.float32)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = tf32
    return {
        "num_sms": props.multi_processor_count,
        "l2_bytes": props.L2_cache_size,
        "dram_bytes_per_s": 2 * big / _cold_s(_copy(big)),
        "kernel_s": _kernel_s(),
        "l2_bytes_per_s": _l2_bytes_per_s(),
        "round_trip_s": _round_trip_s(),
        "combine_s": _combine_s(),
        "fma_flops_per_s": fma,
        "tensor_flops_per_s": _mm_flops_per_s(torch.bfloat16),
        "source": f"{props.name}, calibrated {datetime.date.today().isoformat()} by bench/cost.py "
                  f"(torch {torch.__version__})",
    }


# ---------------------------------------------------------------------------------------------
# report


def predicted_kernels(dump: Path, target: Any) -> dict[str, tuple[str, str, float, list[dict[str, Any]]]]:
    """Per kernel name, over every graph mlc dumped into `dump`: (kind, bound, predicted µs per
    call, each launch's traffic), the µs summed over its launches, as the profiler sums a name's."""
    import dataclasses

    from xdsl.parser import Parser

    from mlc.analysis.cost import predictions
    from mlc.dialects.registry import make_context

    out: dict[str, tuple[str, str, float, list[dict[str, Any]]]] = {}
    for path in sorted(dump.glob("graph_*/*-plan-buffers.mlir")):
        module = Parser(make_context(), path.read_text(), str(path)).parse_module()
        for name, p in predictions(module, target):
            kind, bound, us, traffic = out.get(name, (p.traffic.kind, p.bound, 0.0, []))
            out[name] = (kind, bound, us + p.us, [*traffic, dataclasses.asdict(p.traffic)])
    return out


def report_model(name: str, target: Any, quick: bool) -> list[dict[str, Any]]:
    """Each kernel of mlc's compile of the `bench/run.py` workload `name`: predicted and measured µs."""
    from mlc.frontend.backend import mlc_backend

    device = torch.device("cuda" if run.CUDA else "cpu")
    case = run.MODELS[name](device, quick)
    torch._dynamo.reset()
    compiled = torch.compile(case.fn, backend=mlc_backend, fullgraph=True, dynamic=False)

    def call() -> Any:
        with torch.no_grad():
            return compiled(*case.inputs)

    return compared(name, call, target)


def report_training(name: str, target: Any, quick: bool) -> list[dict[str, Any]]:
    """Each kernel of mlc's compile of the `bench/models.py` model `name`'s training step (forward
    and backward graphs, in bfloat16, CUDA graphs off): predicted and measured µs."""
    from mlc.frontend.backend import mlc_backend

    models = _load("models.py")
    device = torch.device("cuda" if run.CUDA else "cpu")
    gpu_size, quick_size = models.SIZES[name]
    workload = models.build(name, quick, quick_size if quick else gpu_size, device, torch.bfloat16)
    workload.model.train(workload.train_mode)
    torch._dynamo.reset()
    compiled = torch.compile(workload.model, backend=mlc_backend, fullgraph=workload.fullgraph, dynamic=False,
                             options={"cudagraphs": False})
    return compared(f"{name} training", models.Step(compiled, workload.inputs, "training"), target)


def compared(label: str, call: Callable[[], Any], target: Any) -> list[dict[str, Any]]:
    """The rows of `call`'s kernels: its first call compiles with a dump, whose plan-buffers IR
    gives the predictions (`predicted_kernels`); the profiler measures the later calls."""
    with tempfile.TemporaryDirectory() as dump:
        os.environ["MLC_DUMP_DIR"] = dump
        try:
            call()
        finally:
            del os.environ["MLC_DUMP_DIR"]
        predicted = predicted_kernels(Path(dump), target)
    measured = run.kernel_times(call) or {}
    return [{"model": label, "kernel": kernel, "kind": kind, "bound": bound, "predicted_us": us,
             "measured_us": measured[kernel] * 1e3 if kernel in measured else None, "launches": traffic}
            for kernel, (kind, bound, us, traffic) in predicted.items()]


def summary(rows: Sequence[dict[str, Any]]) -> list[str]:
    """Per kernel kind: kernels measured, the share predicted within 20%, the median |error|."""
    lines = ["| kind | kernels | within 20% | median error |", "|---|---|---|---|"]
    kinds: dict[str, list[float]] = {}
    for r in rows:
        if r["measured_us"]:
            kinds.setdefault(r["kind"], []).append(r["predicted_us"] / r["measured_us"] - 1)
    for kind, errors in sorted(kinds.items()) + [("all", [e for es in kinds.values() for e in es])]:
        if errors:
            within = sum(abs(e) <= 0.2 for e in errors) / len(errors)
            lines.append(f"| {kind} | {len(errors)} | {within:.0%} | {statistics.median(map(abs, errors)):.0%} |")
    return lines


def table(rows: Sequence[dict[str, Any]]) -> list[str]:
    lines = ["| model | kernel | kind | bound | predicted us | measured us | predicted / measured |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        measured = r["measured_us"]
        ratio = "-" if not measured else f"{r['predicted_us'] / measured:.2f}"
        lines.append(f"| {r['model']} | {r['kernel']} | {r['kind']} | {r['bound']} | {r['predicted_us']:.2f} | "
                     f"{'-' if measured is None else f'{measured:.2f}'} | {ratio} |")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    cal = sub.add_parser("calibrate", help="measure this GPU's Target fields, write them as JSON")
    cal.add_argument("--out", type=Path, required=True)
    rep = sub.add_parser("report", help="predicted against measured kernel times of bench/run.py's workloads")
    rep.add_argument("--target", type=Path, help="a calibration's JSON (default: the datasheet H100)")
    rep.add_argument("--models", default="all", help=f"comma-separated, from: {','.join(run.MODELS)}")
    rep.add_argument("--training", default="", metavar="MODELS",
                     help="also the training steps of these bench/models.py models (comma-separated: gpt2,llama,"
                          "bert,resnet50,moe)")
    rep.add_argument("--quick", action="store_true", help="tiny shapes (a check of the path; what CPU runs use)")
    rep.add_argument("--json", type=Path, help="write every row here too, with each launch's traffic (`Traffic`)")
    args = parser.parse_args(argv)
    run.import_mlc()
    from mlc.analysis.target import H100, Target

    if args.command == "calibrate":
        if not run.CUDA:
            print("bench/cost.py calibrate: needs a GPU", file=sys.stderr)
            return 1
        fields = calibrate()
        args.out.write_text(Target(**fields).dump())
        print(args.out.read_text(), end="")
        return 0
    target = Target.load(args.target) if args.target else H100
    names = list(run.MODELS) if args.models == "all" else args.models.split(",")
    unknown = [n for n in names if n not in run.MODELS]
    if unknown:
        parser.error(f"unknown models: {', '.join(unknown)} (from: {', '.join(run.MODELS)})")
    rows = [row for name in names for row in report_model(name, target, args.quick)]
    rows += [row for name in filter(None, args.training.split(",")) for row in report_training(name, target, args.quick)]
    print(f"Predicted on {target.source}; measured on {torch.cuda.get_device_name() if run.CUDA else 'no GPU'}\n")
    print("\n".join(table(rows) + [""] + summary(rows)))
    if args.json:
        args.json.write_text(json.dumps({"target": target.source, "rows": rows}, indent=1))
    return 0 if all(math.isfinite(r["predicted_us"]) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
