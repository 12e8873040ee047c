#!/usr/bin/env python3
"""GEMMs with their epilogues: cuBLAS, Inductor, Inductor's autotuned templates and mlc, one table.

    python bench/gemm.py                                # every workload, GPU shapes (bf16)
    python bench/gemm.py --models linear_gelu,swiglu --skip inductor-max-autotune --json out.json
    python bench/gemm.py --quick --skip inductor,inductor-max-autotune   # tiny shapes (CPU: interpreter)

Measures matrix multiplies with the pointwise work around them (bias, gelu, residual, SwiGLU's
gate, QKV split into heads, GPT-2's LM head, a float32 mm), six ways in one process: `eager`
(cuBLAS, separate epilogue kernels), `inductor` (`torch.compile(fn)`), `inductor-max-autotune`
(`mode="max-autotune-no-cudagraphs"`: Triton GEMM templates with fused epilogues, autotuned
against cuBLAS), `mlc` (`backend=mlc_backend`: GEMMs as cuBLAS extern calls),
`mlc-triton-gemm` (`options={"gemm": "triton"}`: mlc's `tl.dot` kernels, epilogues fused) and
`mlc-auto` (`options={"gemm": "auto"}`: each of those kernels timed at its first run against
cuBLAS plus its epilogue kernel, the faster kept). Each
compiles with `fullgraph=True, dynamic=False` (as bench/run.py's); its first call is timed as
compile seconds and checked against eager. All are then timed with `triton.testing.do_bench`
(median ms; on CPU a wall-clock median) in `--repeats` interleaved rounds: the median round, the
rounds' range, TFLOP/s (2*M*N*K per GEMM summed; x3 with `--backward`, for dX and dW) against
the card's dense peak, and a call's peak memory above what was allocated before it (CUDA).
`--backward`: forward + backward of `sum(out.float().sum())` into every input's gradient. A
backend that fails is a cell, "failed: <reason>", never a crash. Reuses bench/run.py's and
bench/models.py's helpers; not part of the mlc package.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import inspect
import json
import statistics
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


def _load(name: str, file: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(file))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


models = _load("mlc_bench_models", "models.py")  # loads bench/run.py (TRITON_INTERPRET without a GPU)
run = models.run

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

CUDA = run.CUDA
BACKENDS = ("eager", "inductor", "inductor-max-autotune", "mlc", "mlc-triton-gemm", "mlc-auto")
SHORT = {"eager": "eager", "inductor": "ind", "inductor-max-autotune": "ind-ma", "mlc": "mlc",
         "mlc-triton-gemm": "mlc-tg", "mlc-auto": "mlc-auto"}
# Dense (no sparsity) peak TFLOP/s by a fragment of torch.cuda.get_device_name (datasheets):
# "NVIDIA H100 80GB HBM3" is the SXM part; PCIe and NVL parts have lower peaks and no entry.
PEAKS = {("H100 80GB HBM3", "H100 SXM", "H200"): {"bf16": 989.0, "fp16": 989.0, "tf32": 494.0, "fp32": 67.0}}
TOLERANCES = {torch.float32: 1e-4, torch.float16: 1e-2, torch.bfloat16: 2e-2}  # atol = rtol, against eager
REF_TOL = 1e-2  # low precision: against float32 math, atol relative to the output's largest value


# ---------------------------------------------------------------------------------------------
# Workloads: functions of tensors (weights are inputs), each its own code object


def linear_gelu_fn(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return F.gelu(x @ w.t() + b)


def linear_bias_residual_fn(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
    return x @ w.t() + b + r


def swiglu_fn(x: torch.Tensor, w1: torch.Tensor, w3: torch.Tensor) -> torch.Tensor:
    return F.silu(x @ w1.t()) * (x @ w3.t())


def make_qkv_fn(batch: int, heads: int) -> Callable[..., tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """`x @ w.t() + b` split into q, k, v, each [batch, heads, seq, head dim]."""
    def qkv_fn(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        q, k, v = (x @ w.t() + b).chunk(3, dim=1)
        heads_of = [t.view(batch, -1, heads, t.shape[1] // heads).transpose(1, 2) for t in (q, k, v)]
        return heads_of[0], heads_of[1], heads_of[2]
    return qkv_fn


def lm_head_fn(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return x @ w.t()


def mm_fp32_fn(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return x @ w


def attention_scores_fn(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    return (q @ k.transpose(-1, -2)) * q.shape[-1] ** -0.5


def make_moe_combine_fn(tokens: int) -> Callable[..., torch.Tensor]:
    """A mixture of experts' combine, as torchtitan writes it: the down projection of each
    expert's rows (a grouped product), each row scaled by its routing weight, scatter-added
    into its token's row. torch's grouped product takes bf16 only: the float32 reference
    multiplies bf16 copies (casts that are no-ops in the row itself)."""

    def moe_combine(h: torch.Tensor, w: torch.Tensor, weights: torch.Tensor, token_of_row: torch.Tensor,
                    ends: torch.Tensor) -> torch.Tensor:
        h16, w16 = h.to(torch.bfloat16), w.to(torch.bfloat16)
        rows = torch._grouped_mm(h16, w16.transpose(-2, -1), offs=ends).float() * weights[:, None]
        hidden = w.shape[1]
        out = torch.zeros(tokens, hidden, dtype=h.dtype, device=h.device)
        return out.scatter_add(0, token_of_row[:, None].expand(-1, hidden), rows.to(h.dtype))

    return moe_combine


@dataclass
class Workload:
    fn: Callable[..., Any]
    inputs: list[torch.Tensor]  # the first one's dtype is the row's
    gemms: list[tuple[int, int, int]]  # (M, N, K) of each GEMM of the forward


def _make(device: torch.device, dtype: torch.dtype, *shape: int, scale: float = 1.0) -> torch.Tensor:
    return (torch.randn(*shape, device=device, dtype=torch.float32) * scale).to(dtype)


def _linear(fn: Callable[..., Any], device: torch.device, quick: bool, full: tuple[int, int, int],
            small: tuple[int, int, int], extra: Sequence[str] = ("b",)) -> Workload:
    """x [M, K] @ w [N, K]ᵀ (weights scaled by K^-1/2: outputs of order 1), then the `extra`
    inputs: "b" a bias [N], "r" a residual [M, N], "w" another weight [N, K] (another GEMM)."""
    m, n, k = small if quick else full
    dtype = torch.float32 if quick else torch.bfloat16
    x, w = _make(device, dtype, m, k), _make(device, dtype, n, k, scale=k**-0.5)
    more = [_make(device, dtype, *{"b": (n,), "r": (m, n), "w": (n, k)}[e], scale=k**-0.5 if e == "w" else 1.0)
            for e in extra]
    return Workload(fn, [x, w, *more], [(m, n, k)] * (1 + list(extra).count("w")))


def _qkv(device: torch.device, quick: bool) -> Workload:
    batch, seq, heads, dim = (3, 23, 2, 12) if quick else (8, 1024, 12, 64)
    hidden, dtype = heads * dim, torch.float32 if quick else torch.bfloat16
    x, w = _make(device, dtype, batch * seq, hidden), _make(device, dtype, 3 * hidden, hidden, scale=hidden**-0.5)
    return Workload(make_qkv_fn(batch, heads), [x, w, _make(device, dtype, 3 * hidden)], [(batch * seq, 3 * hidden, hidden)])


def _mm_fp32(device: torch.device, quick: bool) -> Workload:
    m, n, k = (65, 48, 40) if quick else (4096, 4096, 4096)
    x, w = _make(device, torch.float32, m, k), _make(device, torch.float32, k, n, scale=k**-0.5)
    return Workload(mm_fp32_fn, [x, w], [(m, n, k)])


def _attention_scores(device: torch.device, quick: bool) -> Workload:
    """A batched product: q @ kᵀ per head, scaled (a bmm of batch x heads products)."""
    batch, heads, seq, dim = (2, 3, 37, 24) if quick else (8, 12, 1024, 64)
    dtype = torch.float32 if quick else torch.bfloat16
    q, k = _make(device, dtype, batch, heads, seq, dim), _make(device, dtype, batch, heads, seq, dim)
    return Workload(attention_scores_fn, [q, k], [(seq, seq, dim)] * (batch * heads))


def _moe_combine(device: torch.device, quick: bool) -> Workload:
    """Top-2 routing of `tokens` over `experts` (random, so groups differ in size): the
    rows sorted by expert, each expert's [hidden, ffn] weight."""
    tokens, experts, ffn, hidden = (37, 4, 40, 24) if quick else (4096, 8, 1408, 1024)
    dtype = torch.bfloat16
    expert = torch.randint(0, experts, (2 * tokens,), device=device)
    order = expert.argsort(stable=True)
    ends = torch.bincount(expert, minlength=experts).cumsum(0).to(torch.int32)
    h = _make(device, dtype, 2 * tokens, ffn)
    w = _make(device, dtype, experts, hidden, ffn, scale=ffn**-0.5)
    weights = torch.rand(2 * tokens, device=device).to(dtype)
    return Workload(make_moe_combine_fn(tokens), [h, w, weights, order // 2, ends], [(2 * tokens, hidden, ffn)])


WORKLOADS: dict[str, Callable[[torch.device, bool], Workload]] = {
    "linear_gelu": lambda d, q: _linear(linear_gelu_fn, d, q, (8192, 4096, 1024), (67, 48, 40)),
    "linear_bias_residual": lambda d, q: _linear(linear_bias_residual_fn, d, q, (8192, 1024, 4096), (67, 48, 40),
                                                 ("b", "r")),
    "swiglu": lambda d, q: _linear(swiglu_fn, d, q, (8192, 2816, 1024), (67, 48, 40), ("w",)),
    "qkv": _qkv,
    "lm_head": lambda d, q: _linear(lm_head_fn, d, q, (8192, 50257, 768), (67, 257, 40), ()),
    "mm_fp32": _mm_fp32,
    "attention_scores": _attention_scores,
    "moe_combine": _moe_combine,
}


# ---------------------------------------------------------------------------------------------
# One call, and how far it is from eager's


def step(fn: Callable[..., Any], inputs: list[torch.Tensor], backward: bool) -> list[torch.Tensor]:
    """The outputs; with `backward`, then the gradients of the inputs that require grad."""
    if backward:
        for t in inputs:
            t.grad = None
    out = fn(*inputs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    if not backward:
        return outs
    sum(o.float().sum() for o in outs).backward()  # type: ignore[union-attr]
    return [o.detach() for o in outs] + [t.grad for t in inputs if t.requires_grad]  # type: ignore[misc]


def tensor_names(wl: Workload, count: int) -> list[str]:
    grads = [f"grad {p}" for p, t in zip(inspect.signature(wl.fn).parameters, wl.inputs) if t.requires_grad]
    return [f"out{i}" for i in range(count - len(grads))] + grads


def reference(wl: Workload, backward: bool) -> list[torch.Tensor]:
    """The same call in float32 (TF32 off: torch's default) on upcast copies of the inputs."""
    inputs = [t.detach().float().requires_grad_(t.requires_grad) if t.is_floating_point() else t for t in wl.inputs]
    return step(wl.fn, inputs, backward)


def _close(a: torch.Tensor, e: torch.Tensor, atol: float, rtol: float) -> str:
    try:
        torch.testing.assert_close(a, e, atol=atol, rtol=rtol, equal_nan=True)
    except AssertionError as error:
        lines = [ln.strip() for ln in str(error).splitlines() if ln.strip()]
        return "; ".join(ln for ln in lines if ln.startswith(("Mismatched", "Greatest"))) or lines[0]
    return ""


def judge(actual: list[torch.Tensor], eager: list[torch.Tensor], ref: list[torch.Tensor],
          names: list[str]) -> tuple[str, float]:
    """("yes" or "mismatch: ...", worst max|a - ref| / max|ref| over the tensors). A tensor
    passes within the dtype's tolerance of eager's; a low-precision one also within REF_TOL x its
    largest value of the float32 reference (a K=4096 bf16 product is rounded once by a fused
    kernel, twice by eager: correct kernels differ by more than eager's tolerance allows)."""
    if len(actual) != len(eager):
        return f"mismatch: {len(actual)} tensors, eager {len(eager)}", float("inf")
    worst, bad = 0.0, []
    for name, a, e, r in zip(names, actual, eager, ref):
        scale = r.float().abs().max().item() if r.numel() else 0.0
        if a.shape == r.shape and a.numel():
            worst = max(worst, (a.float() - r.float()).abs().max().item() / (scale or 1.0))
        tol = TOLERANCES.get(e.dtype, 1e-4)
        detail = _close(a, e, tol, tol)
        if detail and e.dtype != torch.float32 and not _close(a.float(), r.float(), REF_TOL * scale, 2e-2):
            detail = ""
        if detail:
            bad.append(f"{name}: {detail}")
    return ("mismatch: " + " | ".join(bad)[:300] if bad else "yes"), worst


# ---------------------------------------------------------------------------------------------
# A row: one workload, six backends


@dataclass
class Row:
    model: str
    mode: str = "forward"
    shape: str = ""
    dtype: str = ""
    flops: int = 0
    ms: dict[str, float] = field(default_factory=dict)
    range: dict[str, tuple[float, float]] = field(default_factory=dict)  # fastest and slowest round
    round_ms: dict[str, list[float]] = field(default_factory=dict)  # each round's ms, in order
    tflops: dict[str, float] = field(default_factory=dict)
    peak_pct: dict[str, float] = field(default_factory=dict)  # % of the card's dense peak
    tg_over_ma: float | None = None  # mlc-triton-gemm ms / inductor-max-autotune ms
    compile_s: dict[str, float] = field(default_factory=dict)  # first call: Dynamo, compiler, autotuning, a run
    peak_mb: dict[str, float] = field(default_factory=dict)
    correct: dict[str, str] = field(default_factory=dict)  # compiled backend -> "yes" / "mismatch: ..."
    max_err: dict[str, float] = field(default_factory=dict)  # backend -> max|a - f32 ref| / max|ref| (eager too)
    errors: dict[str, str] = field(default_factory=dict)  # backend -> one-line reason, or "skipped"


def compilers(mlc_backend: Callable[..., Any]) -> dict[str, Callable[[Callable[..., Any]], Callable[..., Any]]]:
    """bench/run.py's three (eager, Inductor, mlc), and the three that fuse epilogues into GEMMs."""
    three = run.compilers(mlc_backend)
    two = {"inductor-max-autotune": lambda fn: torch.compile(fn, fullgraph=True, dynamic=False,
                                                             mode="max-autotune-no-cudagraphs"),
           "mlc-triton-gemm": lambda fn: torch.compile(fn, backend=mlc_backend, fullgraph=True, dynamic=False,
                                                       options={"gemm": "triton"}),
           "mlc-auto": lambda fn: torch.compile(fn, backend=mlc_backend, fullgraph=True, dynamic=False,
                                                options={"gemm": "auto"})}
    return {b: {**three, **two}[b] for b in BACKENDS}


def dense_peak(dtype: torch.dtype) -> float | None:
    if not CUDA:
        return None
    name = torch.cuda.get_device_name()
    key = {torch.bfloat16: "bf16", torch.float16: "fp16"}.get(
        dtype, "tf32" if torch.backends.cuda.matmul.allow_tf32 else "fp32")
    return next((peaks[key] for parts, peaks in PEAKS.items() if any(p in name for p in parts)
                 and "NVL" not in name and "PCIe" not in name), None)


def _fail(row: Row, backend: str, error: BaseException, verbose: bool) -> None:
    row.errors[backend] = run.one_line(error)
    if verbose:
        traceback.print_exc()


def bench_row(name: str, device: torch.device, args: argparse.Namespace, mlc_backend: Callable[..., Any]) -> Row:
    row = Row(model=name, mode="forward+backward" if args.backward else "forward")
    torch._dynamo.reset()
    torch.manual_seed(0)
    try:
        wl = WORKLOADS[name](device, args.quick)
    except Exception as error:  # noqa: BLE001 (a row, never a crash)
        _fail(row, "setup", error, args.verbose)
        return row
    if args.backward:
        for t in wl.inputs:
            t.requires_grad_(t.is_floating_point())
    row.shape = ", ".join(f"({m}, {n}, {k})" for m, n, k in dict.fromkeys(wl.gemms))
    row.shape += f" x{len(wl.gemms)}" if len(set(wl.gemms)) == 1 < len(wl.gemms) else ""
    row.dtype = str(wl.inputs[0].dtype).removeprefix("torch.")
    row.flops = sum(2 * m * n * k for m, n, k in wl.gemms) * (3 if args.backward else 1)
    eager: list[torch.Tensor] | None = None
    ref: list[torch.Tensor] = []
    calls: dict[str, Callable[[], Any]] = {}
    for backend, compile_fn in compilers(mlc_backend).items():
        if backend in args.skip:
            row.errors[backend] = "skipped"
            continue
        try:
            compiled = compile_fn(wl.fn)
            models._sync()
            start = time.perf_counter()
            results = step(compiled, wl.inputs, args.backward)
            models._sync()
            if backend != "eager":
                row.compile_s[backend] = time.perf_counter() - start
            if backend == "eager":
                eager = results
                ref = results if wl.inputs[0].dtype == torch.float32 else reference(wl, args.backward)
                names = tensor_names(wl, len(results))
                row.max_err["eager"] = judge(results, results, ref, names)[1]
            elif eager is not None:
                row.correct[backend], row.max_err[backend] = judge(results, eager, ref, names)
            calls[backend] = lambda compiled=compiled: step(compiled, wl.inputs, args.backward)  # type: ignore[misc]
        except Exception as error:  # noqa: BLE001 (a cell, never a crash)
            _fail(row, backend, error, args.verbose)
        results = []
    eager, ref = None, []
    for backend, call in list(calls.items()):
        for t in wl.inputs:  # the last call's gradients: held before the call, freed by it
            t.grad = None
        try:
            if (peak := models.peak_memory(call)) is not None:
                row.peak_mb[backend] = peak
        except Exception as error:  # noqa: BLE001
            _fail(row, backend, error, args.verbose)
            del calls[backend]
    # Rounds interleave the backends, so that a drift of the clock or a neighbour's load hits all alike.
    for _ in range(args.repeats):
        for backend, call in list(calls.items()):
            try:
                row.round_ms.setdefault(backend, []).append(run.time_ms(call, args.warmup, args.rep))
            except Exception as error:  # noqa: BLE001
                _fail(row, backend, error, args.verbose)
                del calls[backend]
                row.round_ms.pop(backend, None)
    peak = dense_peak(wl.inputs[0].dtype)
    for backend, times in row.round_ms.items():
        row.ms[backend] = ms = statistics.median(times)
        row.range[backend] = (min(times), max(times))
        row.tflops[backend] = row.flops / (ms * 1e-3) / 1e12
        if peak:
            row.peak_pct[backend] = 100 * row.tflops[backend] / peak
    if "mlc-triton-gemm" in row.ms and row.ms.get("inductor-max-autotune"):
        row.tg_over_ma = row.ms["mlc-triton-gemm"] / row.ms["inductor-max-autotune"]
    calls.clear()
    wl.inputs.clear()  # the calls' tensors: freed before the cache is emptied
    torch._dynamo.reset()
    if CUDA:
        torch.cuda.empty_cache()
    return row


# ---------------------------------------------------------------------------------------------
# Reporting


def _ms(row: Row, backend: str) -> str:
    if backend in row.ms:
        lo, hi = row.range[backend]
        return f"{row.ms[backend]:.3f}" + (f" ({lo:.3f}–{hi:.3f})" if lo != hi else "")
    error = row.errors.get(backend) or row.errors.get("setup")
    return "-" if not error else error if error == "skipped" else f"failed: {error}".replace("|", "\\|")


def _each(values: dict[str, float], backends: Sequence[str], fmt: str) -> str:
    return " / ".join(format(values[b], fmt) if b in values else "-" for b in backends)


def _verdict(row: Row, backend: str) -> str:
    if backend in row.correct:
        return row.correct[backend].split(":")[0]
    return "skipped" if row.errors.get(backend) == "skipped" else "failed" if backend in row.errors else "-"


def markdown(rows: Sequence[Row]) -> str:
    compiled = BACKENDS[1:]
    short = " / ".join(SHORT[b] for b in compiled)
    head = ["model", "shape (M, N, K)", "dtype", *(f"{b} ms" for b in BACKENDS), "mlc-tg / ind-ma",
            f"TFLOP/s {' / '.join(SHORT.values())}", f"% peak {' / '.join(SHORT.values())}", f"compile s {short}",
            f"peak MB {' / '.join(SHORT.values())}", f"correct {short}"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in rows:
        cells = [r.model + (" fwd+bwd" if r.mode != "forward" else ""), r.shape, r.dtype,
                 *(_ms(r, b) for b in BACKENDS), "-" if r.tg_over_ma is None else f"{r.tg_over_ma:.2f}",
                 _each(r.tflops, BACKENDS, ".3g"), _each(r.peak_pct, BACKENDS, ".0f"), _each(r.compile_s, compiled, ".1f"),
                 _each(r.peak_mb, BACKENDS, ".0f"), " / ".join(_verdict(r, b) for b in compiled)]
        lines.append("| " + " | ".join(cells) + " |")
    notes = [f"- {r.model} {b}: {v}".replace("|", "\\|") for r in rows for b, v in r.correct.items() if v != "yes"]
    if notes:
        lines += ["", "Mismatches:", *notes]
    return "\n".join(lines)


GEMM_SECTION = """## GEMM + epilogue workloads{title}

`{command}`

{device}, torch {torch}, triton {triton}, Python {python}; {time}. Timer: {timer}, the median
of {repeats} rounds that interleave the backends, the rounds' range in parentheses; TF32
{tf32}. Backends: *eager* (cuBLAS, the epilogue as separate kernels), *inductor*
(`torch.compile(fn)`), *ind-ma* (`mode="max-autotune-no-cudagraphs"`: Triton GEMM templates with
fused epilogues, autotuned against cuBLAS), *mlc* (GEMMs as cuBLAS extern calls; its forward
calls replay CUDA graphs, whose memory is the graph's pool, not a call's), *mlc-tg*
(`options={{"gemm": "triton"}}`: mlc's `tl.dot` kernels with the epilogue fused). *TFLOP/s* is
2*M*N*K per GEMM summed (x3 with `--backward`) ÷ time, *% peak* against the card's dense peak
(H100 SXM / H200: bf16 989, tf32 494, fp32 67); *compile s* the first call (Dynamo, the compiler,
autotuning, one run); *peak MB* one call's `max_memory_allocated` above what was allocated before
it; *correct* each compiled backend against eager (float32 1e-4; bf16 2e-2, or within 1e-2 x
the largest value of a float32 reference computed from the same inputs).

{table}
"""


def report(rows: Sequence[Row], env: dict[str, Any], args: argparse.Namespace) -> None:
    table = markdown(rows)
    print(table)
    if args.doc:
        key = "bench/gemm.py" + (" --backward" if args.backward else "")
        run.write_section(args.doc, key, GEMM_SECTION.format(
            **env, title=", forward + backward" if args.backward else "", table=table))
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(f"mlc GEMM bench on {env['device']}, torch {env['torch']}, triton {env['triton']}\n\n"
                                 f"`{env['command']}`\n\n{table}\n")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"environment": env, "rows": [asdict(r) for r in rows]}, indent=2) + "\n")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="all", help=f"comma-separated, from: {','.join(WORKLOADS)} (default all)")
    parser.add_argument("--quick", action="store_true", help="tiny odd shapes in float32 (what CPU runs use)")
    parser.add_argument("--backward", action="store_true", help="forward + backward into every input's gradient")
    parser.add_argument("--json", type=Path, help="write the rows and the environment as JSON here")
    parser.add_argument("--markdown", type=Path, help="write the Markdown table here too")
    parser.add_argument("--doc", type=Path, help="write the table as the `bench/gemm.py` section of this document")
    parser.add_argument("--warmup", type=int, default=25, help="do_bench warmup, ms (default 25)")
    parser.add_argument("--rep", type=int, default=100, help="do_bench repetition time, ms (default 100)")
    parser.add_argument("--repeats", type=int, default=9, help="timing rounds, the backends interleaved (default 9)")
    parser.add_argument("--skip", default="", help=f"backends not to run, from: {','.join(BACKENDS[1:])}")
    parser.add_argument("--verbose", action="store_true", help="print tracebacks of failures")
    args = parser.parse_args(argv)
    args.models = models._choose(parser, "model", args.models, list(WORKLOADS))
    args.skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    if unknown := args.skip - set(BACKENDS):
        parser.error(f"unknown backend(s) {','.join(sorted(unknown))}; known: {','.join(BACKENDS)}")
    if "eager" in args.skip:
        parser.error("eager is the reference: it cannot be skipped")
    if not CUDA and not args.quick:
        print("no CUDA device: running on CPU under TRITON_INTERPRET=1; use --quick", file=sys.stderr)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    run.import_mlc()
    from mlc.frontend.backend import mlc_backend

    device = torch.device("cuda" if CUDA else "cpu")
    env = run.environment(device, argparse.Namespace(**vars(args), cudagraph=False))
    env.update(command="python3 bench/gemm.py " + " ".join(sys.argv[1:] if argv is None else argv),
               tf32="on" if torch.backends.cuda.matmul.allow_tf32 else "off", backward=args.backward,
               peak_tflops=dense_peak(torch.bfloat16))
    print(f"# mlc GEMM bench on {env['device']} (torch {env['torch']}, triton {env['triton']}, {env['timer']})",
          flush=True)
    rows = []
    with contextlib.nullcontext() if args.backward else torch.no_grad():
        for name in args.models:
            start = time.perf_counter()
            rows.append(row := bench_row(name, device, args, mlc_backend))
            times = ", ".join(f"{b} {_ms(row, b)}" for b in BACKENDS)
            print(f"{name} (ms): {times}; correct: {row.correct} ({time.perf_counter() - start:.1f} s)",
                  file=sys.stderr, flush=True)
    report(rows, env, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
