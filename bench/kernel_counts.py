#!/usr/bin/env python3
"""Kernel counts: the kernels mlc launches per program, beside the Triton kernels Inductor generates.

    python bench/kernel_counts.py --list
    python bench/kernel_counts.py --mlc                    # CPU (Triton's interpreter, ~1.5 min) or GPU
    python bench/kernel_counts.py --mlc --programs softmax,layer_norm_grad
    python bench/kernel_counts.py --inductor --json bench/results/kernel_counts_inductor.json   # GPU only

`PROGRAMS` holds ~60 small programs with fixed shapes: elementwise chains, views, reductions,
norms, losses, blocks with matmuls and a convolution, and the seeds' graphs (000: an MLP; 001:
add, reshape, matmul, sum, sigmoid; 002: conv2d + bias). A `grad=True` program also runs
backward (`.sum().backward()` of its outputs); its count covers the forward and backward graphs.
Shapes are ones a real kernel sees, but small: under Triton's interpreter mlc's reductions cost
~0.1 ms per reduced element. `--mlc` prints a Markdown table: mlc's count, Inductor's from
`--inductor-json` (default: the committed JSON, when present), mlc - inductor, mlc's extern
calls and `correct` (outputs and input gradients against eager, bench/run.py's tolerances:
`yes`, `mismatch: ...` or `failed: ...`). `mlc_kernel_count(name)` is the count for tests.

mlc: `mlc.frontend.backend.compile_graph` is wrapped during the run to keep every
`CompiledGraph` it returns; the count is the `launch(...)` calls in each graph's emitted `call`
function (its `source`; codegen/emit_wrapper.py), summed over the graphs. Extern calls (`mm`,
`convolution`, but also `embedding`, `cumsum`, `sort`, which Inductor generates kernels for) are
listed, not counted. mlc partitions forward/backward with AOTAutograd's default partitioner,
Inductor with its min-cut one: what the backward recomputes differs.

Inductor (CUDA only; on CPU it generates C++): `torch._inductor.metrics.generated_kernel_count`
after `metrics.reset()` and one compile + run (+ backward) of `torch.compile(fn, fullgraph=True,
dynamic=False)`, caches disabled (a hit would replay a stored count). It counts (torch/_inductor,
read in torch 2.13; the line is the same in older releases): `Kernel.__init__` (codegen/common.py)
adds one per kernel object the scheduler codegens, i.e. per Triton kernel emitted, each launched
once per call. Extern kernels (`extern_kernels.mm`, `addmm`, `convolution`) are ExternKernel IR
nodes, not `Kernel`s: not counted. Combo kernels subtract their sub-kernels, debug printing
restores the count, and kernels built only to be benchmarked (benchmark_fusion, max_autotune,
multi_kernel; all off by default) would count. Unseen: ATen calls in the wrapper itself, e.g. the
final `.sum(dim=0)` of a mix-order reduction (layer-norm backward; from 4096 rows and 5M
elements, more than any program here). As a check, `<kernel>.run(` launches of
`async_compile.triton` kernels in the wrapper code (`GraphLowering.save_output_code`) are
counted too: the JSON has both, and a difference is printed as a warning.

Not part of the mlc package; bench/README.md describes the GPU machine's set-up.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import importlib.util
import json
import os
import platform
import re
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

import torch

CUDA = torch.cuda.is_available()
if not CUDA:
    os.environ["TRITON_INTERPRET"] = "1"  # read when a kernel is decorated: before mlc imports triton

import torch.nn.functional as F  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEVICE = torch.device("cuda" if CUDA else "cpu")
INDUCTOR_JSON = ROOT / "bench" / "results" / "kernel_counts_inductor.json"
F32, BF16, I32 = torch.float32, torch.bfloat16, torch.int32
TOLERANCES = {F32: 1e-5, BF16: 2e-2, I32: 0.0}  # atol = rtol, as bench/run.py


def import_mlc() -> Any:
    """`import mlc`; when it is not installed, load the repository root as the package."""
    try:
        import mlc

        return mlc
    except ImportError:
        spec = importlib.util.spec_from_file_location("mlc", ROOT / "__init__.py",
                                                      submodule_search_locations=[str(ROOT)])
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["mlc"] = module
        spec.loader.exec_module(module)
        return module


# ---------------------------------------------------------------------------------------------
# The corpus

Factory = Callable[[torch.device, torch.dtype], list[torch.Tensor]]


@dataclass(frozen=True)
class Program:
    fn: Callable[..., Any]
    make: Factory  # (device, dtype) -> the inputs, fixed shapes
    what: str
    dtype: torch.dtype = F32
    grad: bool = False  # also compile the backward: `.sum().backward()` of the outputs
    tol: float | None = None  # atol = rtol; None: TOLERANCES[dtype]


def randn(*shapes: tuple[int, ...]) -> Factory:
    return lambda device, dtype: [torch.randn(s, device=device, dtype=dtype) for s in shapes]


def with_ints(shape: tuple[int, ...], high: int, *shapes: tuple[int, ...]) -> Factory:
    """Float inputs of `shapes`, then int64 class indices of `shape` in [0, high)."""
    return lambda device, dtype: [*randn(*shapes)(device, dtype), torch.randint(0, high, shape, device=device)]


def linears(batch: int, *features: int) -> Factory:
    """x [batch, features[0]], then (weight, bias) of each Linear features[i] -> features[i + 1]."""

    def make(device: torch.device, dtype: torch.dtype) -> list[torch.Tensor]:
        tensors = [torch.randn(batch, features[0], device=device, dtype=dtype)]
        for n_in, n_out in zip(features, features[1:]):
            tensors += [torch.randn(n_out, n_in, device=device, dtype=dtype) / n_in**0.5,
                        torch.randn(n_out, device=device, dtype=dtype) / 10]
        return tensors

    return make


def mlp_fn(x: torch.Tensor, *params: torch.Tensor) -> torch.Tensor:
    """Seed 000's network: Linear 32->64, four Linear 64->64, gelu (weights as inputs)."""
    for w, b in zip(params[::2], params[1::2]):
        x = F.linear(x, w, b)
    return F.gelu(x)


def seed001_fn(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Seed 001's ToyModule.forward: add, reshape, matmul, sum, sigmoid."""
    z = x + y
    u = torch.reshape(z, (z.shape[1], z.shape[0]))
    return torch.sigmoid(torch.sum(torch.matmul(x, u), 1))


def rms_norm_fn(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w


def swiglu_fn(x: torch.Tensor, w1: torch.Tensor, w3: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
    return (F.silu(x @ w1.t()) * (x @ w3.t())) @ w2.t()


def attention_fn(x: torch.Tensor, w_qkv: torch.Tensor, w_o: torch.Tensor, heads: int = 2) -> torch.Tensor:
    """A causal attention block by hand (no SDPA): projections, scores, softmax, residual."""
    b, s, d = x.shape
    q, k, v = (x @ w_qkv.t()).view(b, s, 3, heads, d // heads).permute(2, 0, 3, 1, 4)
    scores = (q @ k.transpose(-2, -1)) * (d // heads) ** -0.5
    causal = torch.ones(s, s, dtype=torch.bool, device=x.device).triu(1)
    p = scores.masked_fill(causal, float("-inf")).softmax(-1)
    return x + (p @ v).transpose(1, 2).reshape(b, s, d) @ w_o.t()


P = Program
E = (64, 1000)  # elementwise programs' [rows, columns]
R, C = 16, 1024  # row reductions' [rows, columns] (persistent kernels: columns <= 1024)
MLP = linears(64, 32, 64, 64, 64, 64, 64)
SEED002 = randn((10, 90, 80), (10, 10, 3, 3), (10,))  # unbatched image, 10 -> 10 channels, 3x3, bias
PROGRAMS: dict[str, Program] = {
    # elementwise, broadcasts, views
    "pointwise_chain": P(lambda x, w, b: F.gelu(x * w + b), randn(E, (1000,), (1000,)), "gelu(x*w+b)"),
    "bias_relu": P(lambda x, b: torch.relu(x + b), randn(E, (1000,)), "relu(x+b)"),
    "gelu": P(lambda x: F.gelu(x), randn(E), "gelu(x)"),
    "gelu_tanh": P(lambda x: F.gelu(x, approximate="tanh"), randn(E), "gelu(x, tanh)"),
    "unary_chain": P(lambda x: torch.tanh(torch.exp(-x.abs()) * 3 - 1).sigmoid() + torch.erf(x).cos(), randn(E),
                     "tanh(exp(-|x|)*3-1).sigmoid()+erf(x).cos()"),
    "where_maximum": P(lambda x, y: torch.where(x > 0, torch.maximum(x, y), y.exp()), randn(E, E),
                       "where(x>0, max(x,y), exp(y))"),
    "masked_fill": P(lambda x: x.masked_fill(x < 0, -1.0) + x.masked_fill(x > 1, float("-inf")).exp(), randn(E),
                     "two masked_fills, added"),
    "several_outputs": P(lambda x: (x.sin(), x.cos(), x * 2, x.exp()), randn(E), "sin, cos, x*2, exp of one x"),
    "factories": P(lambda x: x * torch.full(x.shape, 2.5, device=x.device) + torch.arange(1000, device=x.device),
                   randn(E), "x*full(2.5)+arange"),
    "outer_broadcast": P(lambda x, y: x - y, randn((32, 1, 128), (1, 16, 128)), "[32,1,128]-[1,16,128]"),
    "transpose_add": P(lambda x, y: x.t() + y, randn((256, 256), (256, 256)), "x.t()+y"),
    "permute_views": P(lambda x: x.view(64, 16, 16).permute(0, 2, 1).reshape(64, 256) * x, randn((64, 256)),
                       "view/permute/reshape * x"),
    "slice_step": P(lambda x: x[1::2, 3:500:3] * 2, randn(E), "x[1::2, 3:500:3]*2"),
    "flip_add": P(lambda x: torch.flip(x, [0, 1]) + x, randn(E), "flip(x)+x"),
    "cat": P(lambda a, b, c: torch.cat([a, b, c], dim=1), randn((64, 256), (64, 512), (64, 256)), "cat(a,b,c; 1)"),
    # tol: in some CI processes (never alone, never on the GPU) the interpreted sin of these
    # inputs differed from ATen's by up to 1.5e-4, growing with |x|; the cause is not found yet
    # (test_elementwise checks sin at 1e-5). This program counts a cat's kernels.
    "cat_computed": P(lambda x: torch.cat([x[:3], x.sin()], dim=0), randn(E), "cat(x[:3], sin(x); 0)", tol=2e-4),
    "int_arith": P(lambda a, b: (a + b, a * 3 - b, torch.div(a, 7, rounding_mode="floor")),
                   lambda d, t: [torch.randint(-100, 100, E, device=d, dtype=u) for u in (t, torch.int64)],
                   "int32, int64: a+b, a*3-b, a//7", dtype=I32),
    "casts": P(lambda x: (x.to(torch.int32), (x > 0).float() * x, x.to(torch.float16)), randn(E),
               "to int32, bool->float, to f16"),
    "bf16_chain": P(lambda x, y: torch.sigmoid(x * 0.5 + y) * x - torch.tanh(y), randn(E, E),
                    "sigmoid(x*.5+y)*x-tanh(y)", dtype=BF16),
    # reductions, norms, losses
    "sum_rows": P(lambda x: x.sum(-1), randn((32, 4096)), "x.sum(-1)", tol=1e-4),
    "sum_columns": P(lambda x: x.sum(0), randn((512, 32)), "x.sum(0)", tol=1e-4),
    "sum_full": P(lambda x: x.sum(), randn((128, 128)), "x.sum()", tol=1e-4),
    "sum_rows_looped": P(lambda x: x.sum(-1), randn((8, 20000)), "x.sum(-1)", tol=1e-4),
    "sum_dims": P(lambda x: x.sum((0, 2)), randn((8, 64, 32)), "x.sum((0, 2))", tol=1e-4),
    "sum_sigmoid": P(lambda x: torch.sigmoid(x.sum(-1)), randn((64, 512)), "sigmoid(x.sum(-1))", tol=1e-4),
    "mean_center": P(lambda x: x - x.mean(-1, keepdim=True), randn((R, C)), "x - x.mean(-1, keepdim)", tol=1e-4),
    "amax_amin": P(lambda x: (x.amax(-1), x.amin(-1)), randn((R, 512)), "x.amax(-1), x.amin(-1)"),
    "argmax": P(lambda x: x.argmax(-1), randn((R, 512)), "x.argmax(-1)"),
    "any_all": P(lambda x: ((x > 2.5).any(-1), (x > -2.9).all(-1)), randn((R, 512)), "(x>a).any(-1), (x>b).all(-1)"),
    "var_mean": P(lambda x: torch.var_mean(x, -1), randn((R, C)), "var_mean(x, -1)", tol=1e-4),
    "var_mean_looped": P(lambda x: torch.var_mean(x, -1), randn((4, 20000)), "var_mean(x, -1)", tol=1e-4),
    "producer_epilogue": P(lambda x, y: ((x * y).sum(-1) / 3 + 1, (x - y).abs().amax(0)), randn((R, 512), (R, 512)),
                           "(x*y).sum(-1)/3+1, |x-y|.amax(0)", tol=1e-4),
    "softmax": P(lambda x: x.softmax(-1), randn((R, C)), "softmax(x, -1)"),
    "softmax_looped": P(lambda x: x.softmax(-1), randn((8, 20000)), "softmax(x, -1)"),
    "log_softmax": P(lambda x: x.log_softmax(-1), randn((R, C)), "log_softmax(x, -1)", tol=1e-4),
    "logsumexp": P(lambda x: torch.logsumexp(x, -1), randn((R, C)), "logsumexp(x, -1)", tol=1e-4),
    "layer_norm": P(lambda x, w, b: F.layer_norm(x, w.shape, w, b), randn((R, C), (C,), (C,)), "layer_norm(x, w, b)",
                    tol=1e-4),
    "rms_norm": P(rms_norm_fn, randn((R, C), (C,)), "x*rsqrt(mean(x^2)+eps)*w", tol=1e-4),
    "group_norm": P(lambda x, w, b: F.group_norm(x, 4, w, b), randn((2, 16, 8, 8), (16,), (16,)),
                    "group_norm, 4 groups", tol=1e-4),
    "batch_norm_eval": P(lambda x, m, v, w, b: F.batch_norm(x, m, v.abs() + 0.5, w, b),
                         randn((4, 16, 8, 8), (16,), (16,), (16,), (16,)), "batch_norm, eval", tol=1e-4),
    "normalize": P(lambda x: F.normalize(x, dim=-1), randn((R, C)), "F.normalize(x, dim=-1)"),
    "cross_entropy": P(lambda x, t: F.cross_entropy(x, t), with_ints((R,), 1000, (R, 1000)), "cross_entropy, mean",
                       tol=1e-4),
    "bf16_rms_norm": P(rms_norm_fn, randn((R, C), (C,)), "x*rsqrt(mean(x^2)+eps)*w", dtype=BF16),
    "bf16_sum_mean": P(lambda x: (x.sum(-1), x.mean(0)), randn((R, 512)), "x.sum(-1), x.mean(0)", dtype=BF16),
    # matmuls, convolution, gather
    "seed001_toy": P(seed001_fn, randn((64, 128), (64, 128)), "seed 001: add,reshape,matmul,sum,sigmoid", tol=1e-4),
    "mlp": P(mlp_fn, MLP, "seed 000: 5 Linear + gelu", tol=1e-4),
    "linear_gelu": P(lambda x, w, b: F.gelu(F.linear(x, w, b)), linears(64, 128, 256), "gelu(linear(x))", tol=1e-4),
    "swiglu": P(swiglu_fn, randn((64, 128), (256, 128), (256, 128), (128, 256)), "(silu(x@w1)*(x@w3))@w2", tol=1e-3),
    "attention": P(attention_fn, randn((1, 32, 32), (96, 32), (32, 32)), "causal attention by hand", tol=1e-4),
    "embedding_add": P(lambda table, pos, ids: F.embedding(ids, table) + pos,
                       with_ints((8, 32), 1000, (1000, 64), (32, 64)), "embedding(ids, table) + positions"),
    "conv_bias_relu": P(lambda x, w, b: torch.relu(F.conv2d(x, w, b)), SEED002, "seed 002: relu(conv2d + bias)",
                        tol=1e-4),
    # forward + backward
    "gelu_grad": P(lambda x: F.gelu(x), randn(E), "gelu", grad=True),
    "bias_relu_grad": P(lambda x, b: torch.relu(x + b), randn((64, 256), (256,)), "relu(x+b)", grad=True, tol=1e-4),
    "softmax_grad": P(lambda x: x.softmax(-1), randn((R, 512)), "softmax", grad=True, tol=1e-4),
    "log_softmax_grad": P(lambda x: x.log_softmax(-1), randn((R, 512)), "log_softmax", grad=True, tol=1e-4),
    "layer_norm_grad": P(lambda x, w, b: F.layer_norm(x, w.shape, w, b), randn((R, 512), (512,), (512,)),
                         "layer_norm", grad=True, tol=1e-4),
    "rms_norm_grad": P(rms_norm_fn, randn((R, 512), (512,)), "rms_norm by hand", grad=True, tol=1e-4),
    "cross_entropy_grad": P(lambda x, t: F.cross_entropy(x, t), with_ints((R,), 500, (R, 500)), "cross_entropy",
                            grad=True, tol=1e-4),
    "mlp_grad": P(mlp_fn, MLP, "seed 000 MLP", grad=True, tol=1e-4),
    "swiglu_grad": P(swiglu_fn, randn((32, 64), (128, 64), (128, 64), (64, 128)), "SwiGLU", grad=True, tol=1e-3),
    "attention_grad": P(attention_fn, randn((1, 16, 32), (96, 32), (32, 32)), "attention block", grad=True, tol=1e-4),
    "conv_bias_grad": P(lambda x, w, b: F.conv2d(x, w, b), SEED002, "seed 002: conv2d + bias", grad=True, tol=1e-4),
}


# ---------------------------------------------------------------------------------------------
# Running a program


def execute(fn: Callable[..., Any], inputs: Sequence[torch.Tensor], grad: bool) -> list[torch.Tensor]:
    """The outputs of `fn` on copies of `inputs`, then (grad) the float inputs' gradients."""
    args = [x.detach().clone().requires_grad_(grad and x.is_floating_point()) for x in inputs]
    outputs = [t for t in torch.utils._pytree.tree_leaves(fn(*args)) if isinstance(t, torch.Tensor)]
    if grad:
        sum(o.float().sum() for o in outputs if o.requires_grad).backward()
    return [o.detach() for o in outputs] + [x.grad for x in args if x.requires_grad]


def run_compiled(name: str, compile_fn: Callable[[Callable[..., Any]], Callable[..., Any]]
                 ) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """(compiled results, eager results) of one program on DEVICE, inputs seeded by its name."""
    program = PROGRAMS[name]
    torch._dynamo.reset()
    torch.manual_seed(sum(name.encode()))
    inputs = program.make(DEVICE, program.dtype)
    expected = execute(program.fn, inputs, program.grad)
    return execute(compile_fn(program.fn), inputs, program.grad), expected


def compare(actual: list[torch.Tensor], expected: list[torch.Tensor], program: Program) -> str:
    """"yes", or "mismatch: <assert_close's summary>"."""
    tol = program.tol if program.tol is not None else TOLERANCES[program.dtype]
    try:
        torch.testing.assert_close(actual, expected, atol=tol, rtol=tol, equal_nan=True)
    except AssertionError as error:
        lines = [ln.strip() for ln in str(error).splitlines() if ln.strip()]
        detail = "; ".join(ln for ln in lines if ln.startswith(("Mismatched", "Greatest", "The failure")))
        return f"mismatch: {detail or (lines[0] if lines else 'values differ')}"
    return "yes"


def one_line(error: BaseException, limit: int = 200) -> str:
    while getattr(error, "inner_exception", None) is not None:  # Dynamo's BackendCompilerFailed
        error = error.inner_exception  # type: ignore[attr-defined]
    lines = [ln.strip() for ln in str(error).splitlines() if ln.strip()]
    text = f"{type(error).__name__}: {lines[0] if lines else ''}"
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass
class Result:
    name: str
    count: int | None = None
    externs: list[str] = field(default_factory=list)
    correct: str = ""  # "yes", "mismatch: ...", "failed: ..."
    seconds: float = 0.0
    wrapper_launches: int | None = None  # Inductor: `.run(` launches in its wrapper code (the check)


@contextlib.contextmanager
def recorded(result: Result, verbose: bool) -> Iterator[None]:
    """Time the block into `result`; an exception in it becomes `result.correct`, not a crash."""
    start = time.perf_counter()
    try:
        yield
    except Exception as error:  # noqa: BLE001
        result.correct = f"failed: {one_line(error)}"
        if verbose:
            traceback.print_exc()
    finally:
        torch._dynamo.reset()
        result.seconds = time.perf_counter() - start


# ---------------------------------------------------------------------------------------------
# mlc


def wrapper_calls(source: str) -> list[str]:
    """The functions an emitted module's wrapper (`def call(args)`) calls, in order, as dotted names."""
    functions = [n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)]
    wrappers = [f for f in functions if not any("jit" in ast.unparse(d) for d in f.decorator_list)]
    assert len(wrappers) == 1, f"expected one wrapper function, found {[w.name for w in wrappers]}"
    calls = sorted((n for n in ast.walk(wrappers[0]) if isinstance(n, ast.Call)), key=lambda c: c.lineno)
    return [ast.unparse(c.func) for c in calls]


def count_launches(source: str) -> int:
    """Kernel launches: `launch(kernel, kernel_configs, xnumel, (args...), launches)` (codegen/emit_wrapper.py: _launch)."""
    return wrapper_calls(source).count("launch")


def extern_calls(source: str) -> list[str]:
    """The wrapper's aten (or other torch.ops) calls: work outside mlc's kernels."""
    names = [n for n in wrapper_calls(source) if n.startswith(("aten.", "torch.ops."))]
    return [n.removeprefix("aten.").removeprefix("torch.ops.").removesuffix(".default") for n in names]


@contextlib.contextmanager
def captured_graphs() -> Iterator[list[Any]]:
    """Every CompiledGraph that mlc's backend builds inside the block (MLC_FALLBACK off)."""
    import mlc.frontend.backend as backend

    graphs: list[Any] = []
    original = backend.compile_graph

    def compile_graph(gm: Any, example_inputs: Any, *args: Any) -> Any:
        graphs.append(original(gm, example_inputs, *args))
        return graphs[-1]

    fallback = os.environ.pop("MLC_FALLBACK", None)  # a graph run eagerly would count no kernels
    backend.compile_graph = compile_graph
    try:
        yield graphs
    finally:
        backend.compile_graph = original
        if fallback is not None:
            os.environ["MLC_FALLBACK"] = fallback


def measure_mlc(name: str, verbose: bool = False) -> Result:
    """One program through `torch.compile(backend=mlc)`: kernel launches, externs, correctness."""
    import_mlc()
    from mlc.frontend.backend import mlc_backend

    result = Result(name)
    with captured_graphs() as graphs, recorded(result, verbose):
        actual, expected = run_compiled(
            name, lambda fn: torch.compile(fn, backend=mlc_backend, fullgraph=True, dynamic=False))
        result.count = sum(count_launches(g.source) for g in graphs)
        result.externs = [e for g in graphs for e in extern_calls(g.source)]
        result.correct = compare(actual, expected, PROGRAMS[name])
    return result


def mlc_kernel_count(name: str) -> int:
    """mlc's kernel launches for PROGRAMS[name] (forward + backward when grad); RuntimeError
    when mlc fails on it or its result differs from eager's."""
    result = measure_mlc(name)
    if result.correct != "yes" or result.count is None:
        raise RuntimeError(f"{name}: {result.correct}")
    return result.count


# ---------------------------------------------------------------------------------------------
# Inductor (CUDA)


def inductor_wrapper_launches(codes: Sequence[str]) -> int:
    """`<kernel>.run(...)` calls of kernels defined as `<kernel> = async_compile.triton(...)`."""
    total = 0
    for code in codes:
        kernels = set(re.findall(r"^(\w+) = async_compile\.triton\(", code, re.M))
        total += sum(1 for k in re.findall(r"^\s+(\w+)\.run\(", code, re.M) if k in kernels)
    return total


def measure_inductor(name: str, verbose: bool = False) -> Result:
    """One program through `torch.compile` (Inductor): generated_kernel_count, and its check."""
    import torch._inductor.config as inductor_config
    from torch._inductor import metrics
    from torch._inductor.graph import GraphLowering

    result, codes = Result(name), []
    with (mock.patch.object(GraphLowering, "save_output_code", codes.append),
          inductor_config.patch(force_disable_caches=True),  # a cache hit would replay a stored count
          recorded(result, verbose)):
        metrics.reset()
        actual, expected = run_compiled(name, lambda fn: torch.compile(fn, fullgraph=True, dynamic=False))
        result.count = metrics.generated_kernel_count
        result.wrapper_launches = inductor_wrapper_launches(codes)
        calls = re.findall(r"extern_kernels\.(\w+)\(|torch\.ops\.aten\.(\w+)\.", "\n".join(codes))
        result.externs = [a or b for a, b in calls]
        result.correct = compare(actual, expected, PROGRAMS[name])
    return result


# ---------------------------------------------------------------------------------------------
# Reporting and the command line


def _row(cells: Sequence[Any]) -> str:
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"


def tally(names: Sequence[str]) -> str:
    """`mm x3, addmm` for [mm, addmm, mm, mm]: each name once, in order of first appearance."""
    counts = {n: names.count(n) for n in names}
    return ", ".join(n if k == 1 else f"{n} x{k}" for n, k in counts.items())


def markdown(results: Sequence[Result], inductor: dict[str, int]) -> str:
    """mlc's counts, Inductor's beside them (when known) and the difference."""
    head = ["program", "what", "grad", "mlc", "inductor", "mlc - inductor", "mlc externs", "correct"]
    lines = [_row(head), _row(["---"] * len(head))]
    for r in results:
        ind = inductor.get(r.name)
        diff = "-" if r.count is None or ind is None else f"{r.count - ind:+d}"
        lines.append(_row([r.name, PROGRAMS[r.name].what, "yes" if PROGRAMS[r.name].grad else "",
                           "-" if r.count is None else r.count, "-" if ind is None else ind, diff,
                           tally(r.externs), r.correct]))
    both = [r for r in results if r.count is not None and r.name in inductor]
    if both:
        mlc_total, ind_total = sum(r.count or 0 for r in both), sum(inductor[r.name] for r in both)
        diff = f"{mlc_total - ind_total:+d}"
        lines.append(_row([f"total ({len(both)})", "", "", mlc_total, ind_total, diff, "", ""]))
    return "\n".join(lines)


def write_json(path: Path, results: Sequence[Result], backend: str) -> None:
    data: dict[str, Any] = {
        "backend": backend,
        "environment": {
            "device": torch.cuda.get_device_name() if CUDA else f"cpu ({platform.machine()})",
            "torch": torch.__version__, "triton": importlib.import_module("triton").__version__,
            "python": platform.python_version(), "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "command": " ".join(["python", *sys.argv]),
        },
        "counts": {r.name: r.count for r in results if r.count is not None},
        "externs": {r.name: r.externs for r in results if r.externs},
        "correct": {r.name: r.correct for r in results},
    }
    if backend == "inductor":
        data["wrapper_launches"] = {r.name: r.wrapper_launches for r in results}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="list the programs")
    parser.add_argument("--mlc", action="store_true", help="measure mlc's counts (CPU or GPU)")
    parser.add_argument("--inductor", action="store_true", help="measure Inductor's counts (CUDA only)")
    parser.add_argument("--programs", default="all", help="comma-separated names (default all)")
    parser.add_argument("--json", type=Path, help="write the measured counts and the environment here")
    parser.add_argument("--inductor-json", type=Path, default=INDUCTOR_JSON,
                        help="Inductor's counts to show beside mlc's (default: %(default)s)")
    parser.add_argument("--verbose", action="store_true", help="print tracebacks of failures")
    args = parser.parse_args(argv)
    if not (args.list or args.mlc or args.inductor):
        parser.error("nothing to do: give --list, --mlc or --inductor")
    if args.json and args.mlc and args.inductor:
        parser.error("--json takes one of --mlc and --inductor: run them one at a time")
    if args.inductor and not CUDA:
        parser.error("--inductor needs a CUDA GPU: the counts are of Inductor's Triton kernels, and without "
                     "CUDA it generates C++ ones")
    names = list(PROGRAMS) if args.programs == "all" else [p.strip() for p in args.programs.split(",") if p.strip()]
    unknown = [n for n in names if n not in PROGRAMS]
    if unknown:
        parser.error(f"unknown program(s) {','.join(unknown)}; see --list")
    args.programs = names
    return args


def measure_all(names: Sequence[str], measure_one: Callable[[str, bool], Result], verbose: bool) -> list[Result]:
    results = []
    for name in names:
        results.append(r := measure_one(name, verbose))
        print(f"{name}: {r.count} kernels, {r.correct} ({r.seconds:.1f} s)", file=sys.stderr, flush=True)
        if r.wrapper_launches is not None and r.wrapper_launches != r.count:
            print(f"  warning: generated_kernel_count {r.count} != {r.wrapper_launches} `.run(` launches in "
                  "Inductor's wrapper code", file=sys.stderr)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.list:
        print("\n".join(f"{n:20} {'grad' if p.grad else '    '} {str(p.dtype)[6:]:9} {p.what}"
                        for n, p in PROGRAMS.items()))
    if not CUDA:
        torch.set_num_threads(1)  # as bench/run.py: no contention on a small machine
        # Masked-off lanes of interpreted kernels divide by zero in numpy: harmless.
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"triton\.")
    start, results = time.perf_counter(), []
    path = args.inductor_json
    inductor = json.loads(path.read_text()).get("counts", {}) if path.exists() else {}
    if args.inductor:
        results = measure_all(args.programs, measure_inductor, args.verbose)
        inductor = {r.name: r.count for r in results if r.count is not None}
        if not args.mlc:
            print("\n".join(_row([r.name, r.count, r.wrapper_launches, tally(r.externs), r.correct])
                            for r in results))
        if args.json:
            write_json(args.json, results, "inductor")
    if args.mlc:
        results += (mlc_results := measure_all(args.programs, measure_mlc, args.verbose))
        print(markdown(mlc_results, inductor))
        if args.json:
            write_json(args.json, mlc_results, "mlc")
    if results:
        print(f"{len(results)} runs in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return 1 if any(r.correct != "yes" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
