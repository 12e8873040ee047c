"""mlc-fuzz: differential fuzzing of mlc against eager PyTorch.

    mlc-fuzz --seed 0 --count 3000 [--jobs N] [--backward-fraction 0.5] [--edge-fraction 0.3] [--shrink] [--out DIR]
             [--gemm extern|triton|auto]

Program `k` is `tools.fuzz.generate(seed + k)`: a random valid program over the ops mlc
lowers, with shapes aimed at the passes' thresholds; about `backward-fraction` of them also
compare input gradients; about `edge-fraction` of them are edge programs (tools/fuzz_edge.py:
signed zeros, infinities and NaN among the inputs, size-0 dims, views of one intermediate among
the outputs; 0 gives exactly the programs of before). Each runs eagerly and through
`torch.compile(backend="mlc")` on CUDA when available, else under Triton's interpreter on CPU
(tools/fuzz_check.py). Failures print as they come (seed, kind, message); `--shrink` reduces each to a minimal program and prints it
as a pytest case (also written to `--out`). The summary counts programs, forward/backward,
wrong numbers, compile errors by cause, crashes, and programs eager rejected (generator bugs).

`--jobs N` runs programs in N worker processes (spawned; each program is independent).
Exit status: 1 when anything failed, else 0.
"""

from __future__ import annotations

import argparse
import collections
import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

FAILURES = ("mismatch", "grad_mismatch", "crash", "compile_error", "timeout")


def _worker_init() -> None:
    """Per worker: the interpreter chosen before triton is imported, its fast paths, quiet warnings."""
    import torch

    if not torch.cuda.is_available():
        os.environ["TRITON_INTERPRET"] = "1"
    import warnings

    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    from mlc.tools.fuzz_check import fast_interpreter_reductions, largest_interpreter_blocks

    fast_interpreter_reductions()
    largest_interpreter_blocks()


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout()


def run_one(task: tuple[int, dict[str, Any]]) -> dict[str, Any]:
    """Generate, check and (optionally) shrink program `seed`; a plain dict for the parent."""
    seed, opts = task
    from mlc.tools.fuzz import generate
    from mlc.tools.fuzz_check import Outcome, check_program, pytest_case, shrink

    start = time.monotonic()
    program = generate(seed, opts["max_numel"], opts["backward_fraction"], opts["max_stmts"], opts["edge_fraction"])
    old = signal.signal(signal.SIGALRM, _alarm) if opts["timeout"] else None
    if opts["timeout"]:
        signal.alarm(opts["timeout"])
    try:
        outcome = check_program(program)
    except _Timeout:
        outcome = Outcome("timeout", "timeout", f"over {opts['timeout']} s")
    finally:
        if opts["timeout"]:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
    result = {
        "seed": seed, "kind": outcome.kind, "cause": outcome.cause, "detail": outcome.detail,
        "backward": program.backward, "seconds": time.monotonic() - start, "source": program.source(),
    }
    if opts["shrink"] and outcome.failed and outcome.kind != "timeout":
        small = shrink(program, outcome, max_tries=opts["shrink_tries"])
        result["case"] = pytest_case(small, outcome)
    return result


def _results(args: argparse.Namespace, opts: dict[str, Any]) -> Iterator[dict[str, Any]]:
    tasks = [(args.seed + k, opts) for k in range(args.count)]
    if args.jobs <= 1:
        _worker_init()
        yield from map(run_one, tasks)
        return
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(args.jobs, initializer=_worker_init, maxtasksperchild=200) as pool:
        yield from pool.imap_unordered(run_one, tasks)


def _report_failure(r: dict[str, Any], out: Path | None) -> None:
    print(f"FAIL seed {r['seed']}: {r['kind']}: {r['detail'].splitlines()[0][:300] if r['detail'] else ''}", flush=True)
    print("    " + r["source"].replace("\n", "\n    "), flush=True)
    if "case" in r:
        print("  shrunk:\n" + r["case"], flush=True)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        text = r.get("case") or r["source"]
        (out / f"seed_{r['seed']}_{r['kind']}.py").write_text(f"# {r['kind']}: {r['detail'][:2000]}\n{text}\n")


def summarize(results: list[dict[str, Any]], elapsed: float) -> str:
    """The closing summary: counts by kind, compile errors and crashes by cause."""
    kinds = collections.Counter(r["kind"] for r in results)
    backward = sum(r["backward"] for r in results)
    lines = [
        f"programs: {len(results)} ({len(results) - backward} forward only, {backward} with backward) "
        f"in {elapsed:.0f} s ({elapsed / max(1, len(results)):.2f} s per program, wall)",
        f"ok: {kinds['ok']}   wrong numbers: {kinds['mismatch']} forward, {kinds['grad_mismatch']} gradients   "
        f"compile errors: {kinds['compile_error']}   crashes: {kinds['crash']}   timeouts: {kinds['timeout']}   "
        f"invalid (eager failed): {kinds['invalid']}   as Inductor (ill-conditioned): {kinds['as_inductor']}",
    ]
    for kind in ("mismatch", "grad_mismatch", "compile_error", "crash", "invalid", "as_inductor"):
        causes = collections.Counter(r["cause"] for r in results if r["kind"] == kind)
        for cause, n in causes.most_common():
            seeds = [r["seed"] for r in results if r["kind"] == kind and r["cause"] == cause][:8]
            lines.append(f"  {kind:14} {n:5}  {cause[:150]}  (seeds {', '.join(map(str, seeds))})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mlc-fuzz", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0, help="the first program's seed")
    parser.add_argument("--count", type=int, default=100, help="how many programs")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--backward-fraction", type=float, default=0.5, help="share of programs checking gradients")
    parser.add_argument("--edge-fraction", type=float, default=None,
                        help="share of edge programs (tools/fuzz_edge.py; default its EDGE_FRACTION, 0.3)")
    parser.add_argument("--shrink", action="store_true", help="shrink each failure to a minimal pytest case")
    parser.add_argument("--shrink-tries", type=int, default=150, help="most candidates tried per shrink")
    parser.add_argument("--max-numel", type=int, default=400_000, help="the most elements of one tensor")
    parser.add_argument("--max-stmts", type=int, default=10, help="the most statements of a program")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per program (0: none)")
    parser.add_argument("--out", type=Path, default=None, help="write each failure (shrunk case) here")
    parser.add_argument("--progress", type=int, default=50, help="print a progress line every N programs")
    parser.add_argument("--time-limit", type=float, default=0, help="stop after this many seconds (0: none), "
                        "summarizing the programs done")
    parser.add_argument("--gemm", choices=("extern", "triton", "auto"), default=None,
                        help="what runs the programs' matrix products (MLC_GEMM, for every worker; default its value)")
    args = parser.parse_args(argv)
    if args.gemm is not None:
        os.environ["MLC_GEMM"] = args.gemm
    opts = {k: getattr(args, k) for k in ("max_numel", "backward_fraction", "max_stmts", "edge_fraction", "shrink",
                                          "shrink_tries", "timeout")}
    start, results = time.monotonic(), []
    for r in _results(args, opts):
        results.append(r)
        if args.time_limit and time.monotonic() - start > args.time_limit:
            print(f"time limit: stopping after {len(results)} programs", flush=True)
            break
        if r["kind"] in FAILURES or r["kind"] == "invalid":
            _report_failure(r, args.out)
        if len(results) % args.progress == 0:
            bad = sum(x["kind"] in FAILURES for x in results)
            print(f"[{len(results)}/{args.count}] {time.monotonic() - start:.0f} s, {bad} failures", flush=True)
    print(summarize(results, time.monotonic() - start), flush=True)
    return 1 if any(r["kind"] in FAILURES for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
