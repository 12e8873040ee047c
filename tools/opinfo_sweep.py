"""mlc-opinfo-sweep: every OpInfo op of PyTorch's op_db through mlc, against eager.

    mlc-opinfo-sweep                                  # every op, float32 samples, all cores
    mlc-opinfo-sweep --ops abs,sum --limit-samples 4 --json out.json

For each op of `torch.testing._internal.common_methods_invocations.op_db` with float32
samples, each sample is compiled with `torch.compile(backend="mlc", fullgraph=True,
dynamic=False)` and compared with eager: forward, and backward where the op supports autograd
(see `tools/opinfo_check.py`). The report gives the pass rates (passed / samples eager ran)
and a table of failures by cause, with counts and example ops.

Ops run in `--jobs` worker processes (one op at a time each, Dynamo's caches reset between
samples). A sample over `--timeout` seconds is a `timeout`; a worker stuck in native code past
that (or one that crashed) is killed and restarted after the sample, which is counted as a
`timeout` (or a `runtime` crash). Runs on CUDA when available, else on CPU with Triton's
interpreter (`TRITON_INTERPRET=1`, set before triton is imported).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

# Statuses that are failures, worst first (the table's order).
FAILURES = ("mismatch", "compile", "runtime", "timeout", "dynamo")


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    _set_device_env()
    keys = select_ops(args.ops)
    if not keys:
        print("mlc-opinfo-sweep: no op matches --ops", file=sys.stderr)
        return 1
    print(f"mlc-opinfo-sweep: {len(keys)} ops, {args.jobs} jobs, device {_device_name()}", flush=True)
    start = time.time()
    outcomes = run_sweep(keys, args)
    summary = summarize(outcomes)
    print(format_report(summary, time.time() - start))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"summary": summary, "outcomes": outcomes}, f, indent=1)
    return 0


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="mlc-opinfo-sweep", description=__doc__.split("\n")[0])
    parser.add_argument("--ops", default="", help="comma-separated op names (name or name.variant)")
    parser.add_argument("--limit-samples", type=int, default=0, help="at most N samples per op (0: all)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per sample and phase")
    parser.add_argument("--json", default="", help="write the summary and every outcome here")
    parser.add_argument("--quiet", action="store_true", help="no line per finished op")
    return parser.parse_args(argv)


def _set_device_env() -> None:
    """TRITON_INTERPRET=1 without a GPU, before anything imports triton (workers inherit it)."""
    import torch

    if not torch.cuda.is_available():
        os.environ["TRITON_INTERPRET"] = "1"


def _device_name() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu (Triton interpreter)"


def select_ops(ops: str) -> list[str]:
    """The op_db keys to run: those named in `ops` (a name selects all its variants), or every
    op with float32 samples on the device."""
    wanted = {s.strip() for s in ops.split(",") if s.strip()}
    return [op_key(op) for op in float32_ops() if not wanted or op_key(op) in wanted or op.name in wanted]


def float32_ops() -> list[Any]:
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    device = "cuda" if torch.cuda.is_available() else "cpu"
    return [op for op in op_db if torch.float32 in op.supported_dtypes(device)]


def op_key(op: Any) -> str:
    from mlc.tools.opinfo_check import op_key as key

    return key(op)


# ---------------------------------------------------------------------------------------------
# Workers


def worker(conn: Connection, limit: int, timeout: float) -> None:
    """A worker process: receives (op key, first sample) tasks, sends one message per sample
    started ("start", i), per finished sample ("done", [outcome dicts]) and at the end ("end",)."""
    import warnings

    import torch

    from mlc.tools.opinfo_check import check_sample

    warnings.filterwarnings("ignore")  # the interpreter's numpy warnings, deprecations
    torch.set_num_threads(1)
    ops = {op_key(op): op for op in float32_ops()}
    device = "cuda" if torch.cuda.is_available() else "cpu"
    while True:
        task = conn.recv()
        if task is None:
            return
        key, first = task
        op = ops[key]
        try:
            samples = list(op.sample_inputs(device, torch.float32, requires_grad=op.supports_autograd))
        except Exception as e:  # noqa: BLE001
            conn.send(("end", f"sample_inputs failed: {type(e).__name__}: {e}"))
            continue
        if limit:
            samples = samples[:limit]
        for i in range(first, len(samples)):
            conn.send(("start", i))
            torch.manual_seed(0)
            conn.send(("done", [o.as_dict() for o in check_sample(op, samples[i], i, timeout)]))
        conn.send(("end", None))


@dataclass
class _Slot:
    """One worker process and the task it runs."""

    process: Any
    conn: Connection
    key: str | None = None
    sample: int = -1
    deadline: float = 0.0


@dataclass
class _Sweep:
    """The parent's state: tasks left, outcomes so far, the workers."""

    args: argparse.Namespace
    tasks: list[tuple[str, int]]
    outcomes: list[dict[str, Any]] = field(default_factory=list)
    slots: list[_Slot] = field(default_factory=list)
    done_ops: int = 0


def run_sweep(keys: list[str], args: argparse.Namespace) -> list[dict[str, Any]]:
    """Every op of `keys` through the workers; the outcome of every sample and phase."""
    sweep = _Sweep(args, [(k, 0) for k in reversed(keys)])
    ctx = mp.get_context("spawn")
    sweep.slots = [_start(ctx, args) for _ in range(max(1, min(args.jobs, len(keys))))]
    try:
        while sweep.tasks or any(s.key for s in sweep.slots):
            for slot in sweep.slots:
                if slot.key is None and sweep.tasks:
                    _assign(slot, sweep.tasks.pop(), args)
            ready = wait([s.conn for s in sweep.slots if s.key], timeout=1.0)
            for slot in sweep.slots:
                if slot.conn in ready:
                    _receive(sweep, slot, ctx)
                elif slot.key and time.time() > slot.deadline:
                    _lost(sweep, slot, ctx, "timeout", "worker stuck past the time limit")
    finally:
        for slot in sweep.slots:
            _stop(slot)
    return sweep.outcomes


def _start(ctx: Any, args: argparse.Namespace) -> _Slot:
    parent, child = ctx.Pipe()
    process = ctx.Process(target=worker, args=(child, args.limit_samples, args.timeout), daemon=True)
    process.start()
    child.close()
    return _Slot(process, parent)


def _assign(slot: _Slot, task: tuple[str, int], args: argparse.Namespace) -> None:
    slot.key, slot.sample = task[0], task[1] - 1
    slot.deadline = time.time() + _grace(args) + 120  # a fresh worker imports torch and op_db
    slot.conn.send(task)


def _grace(args: argparse.Namespace) -> float:
    """How long a sample may go silent: both phases at their limit, and some slack."""
    return 2 * args.timeout + 60


def _receive(sweep: _Sweep, slot: _Slot, ctx: Any) -> None:
    try:
        message = slot.conn.recv()
    except (EOFError, OSError):
        _lost(sweep, slot, ctx, "runtime", f"worker died (exit code {slot.process.exitcode})")
        return
    kind = message[0]
    slot.deadline = time.time() + _grace(sweep.args)
    if kind == "start":
        slot.sample = message[1]
    elif kind == "done":
        sweep.outcomes += message[1]
    elif kind == "end":
        if message[1]:
            sweep.outcomes.append(_lost_outcome(slot.key, -1, "runtime", message[1]))
        _finish(sweep, slot)


def _finish(sweep: _Sweep, slot: _Slot) -> None:
    sweep.done_ops += 1
    if not sweep.args.quiet:
        mine = [o for o in sweep.outcomes if o["op"] == slot.key]
        failed = sum(o["status"] in FAILURES for o in mine)
        print(f"[{sweep.done_ops}] {slot.key}: {len(mine)} checks, {failed} failed", flush=True)
    slot.key = None


def _lost(sweep: _Sweep, slot: _Slot, ctx: Any, status: str, why: str) -> None:
    """A worker that died or hung: its sample is a failure; the op resumes after it."""
    assert slot.key is not None
    sample = max(slot.sample, 0)
    sweep.outcomes.append(_lost_outcome(slot.key, sample, status, why))
    sweep.tasks.append((slot.key, sample + 1))
    _stop(slot)
    fresh = _start(ctx, sweep.args)
    slot.process, slot.conn, slot.key = fresh.process, fresh.conn, None


def _lost_outcome(key: str, sample: int, status: str, why: str) -> dict[str, Any]:
    return {"op": key, "sample": sample, "phase": "forward", "status": status, "cause": why, "detail": why}


def _stop(slot: _Slot) -> None:
    try:
        if slot.process.is_alive() and slot.key is None:
            slot.conn.send(None)
            slot.process.join(timeout=5)
    except (OSError, BrokenPipeError):
        pass
    if slot.process.is_alive():
        slot.process.kill()
        slot.process.join()


# ---------------------------------------------------------------------------------------------
# Report


def summarize(outcomes: list[dict[str, Any]]) -> dict[str, Any]:
    """Per phase: counts by status and the pass rates; failures grouped by (status, cause)."""
    phases = {}
    for phase in ("forward", "backward"):
        mine = [o for o in outcomes if o["phase"] == phase]
        counts = Counter(o["status"] for o in mine)
        ran = len(mine) - counts["eager-error"]
        passed = counts["pass"] + counts["pass-split"]
        phases[phase] = {
            "counts": dict(counts),
            "eager_ran": ran,
            "passed": passed,
            "passed_split": counts["pass-split"],
            "pass_rate": passed / ran if ran else 1.0,
            "pass_rate_without_dynamo": passed / (ran - counts["dynamo"]) if ran - counts["dynamo"] else 1.0,
        }
    groups: dict[tuple[str, str], dict[str, Any]] = defaultdict(lambda: {"count": 0, "ops": Counter()})
    for o in outcomes:
        if o["status"] in FAILURES:
            group = groups[(o["status"], o["cause"])]
            group["count"] += 1
            group["ops"][o["op"]] += 1
    failures = [
        {"status": s, "cause": c, "count": g["count"], "ops": [k for k, _ in g["ops"].most_common()]}
        for (s, c), g in groups.items()
    ]
    failures.sort(key=lambda f: (FAILURES.index(f["status"]), -f["count"]))
    return {"phases": phases, "failures": failures}


def format_report(summary: dict[str, Any], seconds: float) -> str:
    lines = [f"\nmlc-opinfo-sweep: done in {seconds:.0f} s", ""]
    for phase, p in summary["phases"].items():
        c = p["counts"]
        lines.append(
            f"{phase:8}: {p['passed']}/{p['eager_ran']} passed ({100 * p['pass_rate']:.1f}%, "
            f"{p['passed_split']} of them split by Dynamo's graph breaks); "
            + ", ".join(f"{s} {c[s]}" for s in (*FAILURES, "eager-error") if c.get(s))
            + f"; without dynamo's failures {100 * p['pass_rate_without_dynamo']:.1f}%"
        )
    lines += ["", "dynamo failures (Dynamo errors, or graph breaks that fail or leave mlc no graph even when "
              "allowed) are not mlc's but count in the first rate.", ""]
    lines.append(f"{'status':9} {'count':>5}  cause  [example ops]")
    for f in summary["failures"]:
        ops = ", ".join(f["ops"][:4]) + (f" (+{len(f['ops']) - 4})" if len(f["ops"]) > 4 else "")
        lines.append(f"{f['status']:9} {f['count']:5}  {f['cause']}  [{ops}]")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
