#!/usr/bin/env python3
"""Models through eager, Inductor and mlc: inference and a training step, one table.

    python bench/models.py                              # GPT-2 small, Llama-style, BERT-base, ResNet-50, MoE
    python bench/models.py --models gpt2 --modes training --json out.json --markdown out.md
    python bench/models.py --quick --skip inductor      # tiny configs (CPU: Triton's interpreter)

The models are transformers' own (`GPT2LMHeadModel`, `LlamaForCausalLM`, `BertForMaskedLM`,
`ResNetForImageClassification`, and `MixtralForCausalLM` for a mixture of experts: 8 experts,
top-2 routing, the experts run as transformers' default `grouped_mm`, `--moe-experts` for the
others) built from configs with random weights (no download), in bfloat16 on CUDA, dropout off
(`eval()` mode and dropout probabilities 0, so the three runs are deterministic; ResNet's
training steps run in `train()` mode, its batch norms on batch statistics), attention through
`attn_implementation="sdpa"`. Each (model, mode) is one row:

* inference: `model(**inputs)` (token ids, or ResNet's `pixel_values`) under `torch.no_grad()`;
  its logits are checked.
* training: `model(**inputs, labels=...)`, the model's own loss, `.backward()` (gradients set
  to None before each step, over a list of the parameters found once, as an optimizer holds
  them; no optimizer: it would run eagerly in all three); the loss, the logits and every
  parameter's gradient are checked.

Eager runs first and is the reference. Inductor is `torch.compile(m, fullgraph=True,
dynamic=False)`, mlc the same with `backend=mlc_backend`, each on its own `copy.deepcopy` of
the eager model (`fullgraph=False` only for the MoE with `--moe-experts eager`, whose loop over
the experts hit has data-dependent shapes; the graphs and graph breaks Dynamo made are counted
per compiler). Correctness is a relative error norm per tensor, `|a - e| / |e|` (float32
norms), against eager: bfloat16 keeps 8 significant bits and eager rounds every intermediate
to them while a fused kernel keeps float32 inside, so two correct implementations differ by
around 1e-3..1e-2 after a dozen layers, and a wrong index or gradient formula by O(1). A tensor
passes within `--tol` (2e-2), or within twice a noise floor's value for that tensor where that
is larger: Inductor's own distance from eager, and eager's own distance from eager in float32
(`float32_noise`: a copy of the model upcast; if mlc is at least as close to exact arithmetic as
eager, it is within twice that of eager). Layers compound the rounding, and some gradients are
(nearly) zero in exact arithmetic, BERT's attention key biases, the batch norms' biases of a
training ResNet on a small batch, so that correct runs differ from eager's rounding noise by a
relative error of 0.1..1. The times are wall-clock ms per call in rounds of back-to-back
calls, the rounds alternating between the three (`time_interleaved`): median, and min-max over
rounds as the spread; next to them each backend's GPU time per call (the kernels' durations,
torch.profiler) and its peak memory per call (`peak_memory`: after the warm-up, one call's
`torch.cuda.max_memory_allocated` minus the `memory_allocated` before it, so activations,
temporaries, outputs and in training the gradients, counted alike in the three since each step
sets the gradients to None first); compile seconds are the first call's wall time (Dynamo,
AOTAutograd, the backend, and one run). A backend that fails is a cell saying so, never a crash.

Loads mlc like bench/run.py (installed, or the checkout as the package `mlc`) and reuses its
helpers; not part of the mlc package: see bench/README.md.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import fcntl
import importlib.util
import os
import json
import math
import statistics
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


def _load(filename: str) -> Any:
    """A script beside this one as a module: run.py (it sets up the environment: TRITON_INTERPRET
    without a GPU), memory.py (a call's peak and reserved memory)."""
    spec = importlib.util.spec_from_file_location(f"mlc_bench_{Path(filename).stem}", Path(__file__).with_name(filename))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


run = _load("run.py")
memory = _load("memory.py")
# What the other scripts read of this one (`models.peak_memory`, ...)
peak_memory, reserved_memory, pool_segments, graph_pools = (memory.peak_memory, memory.reserved_memory,
                                                            memory.pool_segments, memory.graph_pools)
DEFAULT_POOL = memory.DEFAULT_POOL

import torch  # noqa: E402
from torch import nn  # noqa: E402

from mlc.frontend import cudagraphs  # noqa: E402

CUDA = run.CUDA
BACKENDS = ("eager", "inductor", "mlc")
MODES = ("inference", "training")
DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}

# ---------------------------------------------------------------------------------------------
# Models


@dataclass
class Workload:
    """One model with its inputs on a device."""

    model: nn.Module
    inputs: dict[str, torch.Tensor]  # the training step's; inference drops "labels"
    shape: str
    train_mode: bool = False  # training steps in `train()` mode (batch norm's batch statistics)
    fullgraph: bool = True  # False: Dynamo may break the graph (data-dependent control flow)


@dataclass(frozen=True)
class Size:
    batch: int
    seq: int


SIZES = {  # (GPU, --quick)
    "gpt2": (Size(4, 512), Size(1, 8)),
    "llama": (Size(2, 1024), Size(1, 8)),
    "bert": (Size(4, 512), Size(2, 8)),
    "resnet50": (Size(16, 224), Size(2, 32)),  # batch x image side
    "moe": (Size(4, 512), Size(1, 8)),
}


def _transformers() -> Any:
    import transformers

    return transformers


def gpt2_config(quick: bool) -> Any:
    """GPT-2 small (124M: 12 layers, hidden 768, 12 heads, vocabulary 50257)."""
    tf = _transformers()
    drop = {"resid_pdrop": 0.0, "embd_pdrop": 0.0, "attn_pdrop": 0.0}
    if quick:
        return tf.GPT2Config(vocab_size=256, n_positions=32, n_embd=32, n_inner=64, n_layer=1, n_head=2,
                             bos_token_id=0, eos_token_id=0, use_cache=False, **drop)
    return tf.GPT2Config(use_cache=False, **drop)


def llama_config(quick: bool) -> Any:
    """A Llama-style decoder: hidden 2048, 8 layers, 16 query heads sharing 4 key/value heads (GQA),
    SwiGLU 5632, RMSNorm, rotary embeddings, vocabulary 32000 (490M parameters)."""
    tf = _transformers()
    if quick:
        return tf.LlamaConfig(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                              num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=32,
                              use_cache=False)
    return tf.LlamaConfig(vocab_size=32000, hidden_size=2048, intermediate_size=5632, num_hidden_layers=8,
                          num_attention_heads=16, num_key_value_heads=4, max_position_embeddings=2048,
                          use_cache=False)


def bert_config(quick: bool) -> Any:
    """BERT-base (110M: 12 layers, hidden 768, 12 heads, vocabulary 30522)."""
    tf = _transformers()
    drop = {"hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0}
    if quick:
        return tf.BertConfig(vocab_size=128, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                             intermediate_size=64, max_position_embeddings=32, **drop)
    return tf.BertConfig(**drop)


def resnet50_config(quick: bool) -> Any:
    """ResNet-50 (25.6M: bottleneck stages of 3, 4, 6, 3 blocks, 1000 classes); quick: two stages of
    one bottleneck block, 8 and 16 channels (a call under Triton's interpreter takes a second or less)."""
    tf = _transformers()
    if quick:
        return tf.ResNetConfig(embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1], layer_type="bottleneck",
                               num_labels=10)
    return tf.ResNetConfig(num_labels=1000)


def moe_config(quick: bool) -> Any:
    """A Mixtral-style mixture of experts: hidden 1024, 4 layers, 16 query heads sharing 4 key/value
    heads, 8 SwiGLU experts of 2048 per layer, each token routed to 2, vocabulary 32000 (250M)."""
    tf = _transformers()
    if quick:
        return tf.MixtralConfig(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                num_attention_heads=4, num_key_value_heads=2, num_local_experts=4,
                                num_experts_per_tok=2, max_position_embeddings=32, use_cache=False)
    return tf.MixtralConfig(vocab_size=32000, hidden_size=1024, intermediate_size=2048, num_hidden_layers=4,
                            num_attention_heads=16, num_key_value_heads=4, num_local_experts=8, num_experts_per_tok=2,
                            max_position_embeddings=1024, use_cache=False)


CONFIGS = {"gpt2": gpt2_config, "llama": llama_config, "bert": bert_config, "resnet50": resnet50_config,
           "moe": moe_config}


EXPERTS = ("grouped_mm", "batched_mm", "eager")  # transformers' experts_implementation, its default first


def build(name: str, quick: bool, size: Size, device: torch.device, dtype: torch.dtype,
          experts: str = EXPERTS[0]) -> Workload:
    """The model `name` on `device` in `dtype` with random inputs: token ids (images for resnet50),
    in eval mode (a convnet's training steps run in train mode). `experts`: how the MoE's experts
    run (transformers' `experts_implementation`): "grouped_mm" sorts the tokens by expert and
    calls one grouped matmul (`torch._grouped_mm`) per projection, "batched_mm" gathers each
    token's expert weights for a `bmm`, "eager" loops over the experts hit with `nonzero` and
    `index_add_`, data-dependent shapes that break Dynamo's graph (so that one runs without
    `fullgraph`)."""
    tf = _transformers()
    config = CONFIGS[name](quick)
    if name == "resnet50":
        return _convnet(tf.ResNetForImageClassification(config), config, size, device, dtype)
    config._attn_implementation = "sdpa"
    if name == "moe":
        config._experts_implementation = experts
    cls = {"gpt2": tf.GPT2LMHeadModel, "llama": tf.LlamaForCausalLM, "bert": tf.BertForMaskedLM,
           "moe": tf.MixtralForCausalLM}[name]
    model = cls(config)
    if name == "gpt2":
        # transformers finds no loss for the class name and logs a warning inside forward (a graph
        # break under Dynamo); name the loss it falls back to.
        model.loss_type = "ForCausalLM"
    model = model.to(device=device, dtype=dtype).eval()
    ids = torch.randint(0, config.vocab_size, (size.batch, size.seq), device=device)
    if name == "bert":  # masked LM: a loss on 15% of the positions
        labels = torch.where(torch.rand(ids.shape, device=device) < 0.15, ids, -100)
    else:  # causal LM: the model shifts the labels itself
        labels = ids
    shape = f"{_params(model)} params, batch {size.batch} x seq {size.seq}"
    if name == "moe":
        shape += f", experts {experts}"
    return Workload(model, {"input_ids": ids, "labels": labels}, shape, fullgraph=name != "moe" or experts != "eager")


def _convnet(model: nn.Module, config: Any, size: Size, device: torch.device, dtype: torch.dtype) -> Workload:
    """An image classifier on `size.batch` random images of `size.seq` pixels a side, with labels."""
    model = model.to(device=device, dtype=dtype).eval()
    images = torch.randn(size.batch, 3, size.seq, size.seq, device=device, dtype=dtype)
    labels = torch.randint(0, config.num_labels, (size.batch,), device=device)
    shape = f"{_params(model)} params, batch {size.batch} x 3 x {size.seq} x {size.seq}"
    return Workload(model, {"pixel_values": images, "labels": labels}, shape, train_mode=True)


def _params(model: nn.Module) -> str:
    params = sum(p.numel() for p in model.parameters())
    return f"{params / 1e6:.0f}M" if params >= 1e6 else f"{params / 1e3:.0f}K"


# ---------------------------------------------------------------------------------------------
# One step, its results, and how far they are from eager's


def step(model: nn.Module, inputs: dict[str, torch.Tensor], mode: str,
         params: dict[str, nn.Parameter] | None = None) -> dict[str, torch.Tensor]:
    """Run one inference or training step; the tensors to check, by name. `params`: the model's
    parameters by name (`parameters_of`), found once by a caller that steps many times, as a
    training loop's optimizer holds them (walking ResNet-50's modules twice a step took a
    millisecond of host time)."""
    if mode == "inference":
        with torch.no_grad():
            out = model(**{k: v for k, v in inputs.items() if k != "labels"})
        return {"logits": out.logits}
    params = parameters_of(model) if params is None else params
    for p in params.values():
        p.grad = None
    out = model(**inputs)
    out.loss.backward()
    results = {"loss": out.loss.detach(), "logits": out.logits.detach()}
    results.update({f"grad {n}": p.grad for n, p in params.items() if p.grad is not None})
    return results


def parameters_of(model: nn.Module) -> dict[str, nn.Parameter]:
    return dict(getattr(model, "_orig_mod", model).named_parameters())  # names without "_orig_mod."


def drop_gradients(model: nn.Module) -> None:
    for p in model.parameters():
        p.grad = None


@dataclass
class Step:
    """A backend's step on its model, to time (`step`)."""

    model: nn.Module
    inputs: dict[str, torch.Tensor]
    mode: str
    params: dict[str, nn.Parameter] = field(init=False)

    def __post_init__(self) -> None:
        self.params = parameters_of(self.model)

    def __call__(self) -> dict[str, torch.Tensor]:
        return step(self.model, self.inputs, self.mode, self.params)


def rel_err(actual: torch.Tensor | None, expected: torch.Tensor) -> float:
    """|a - e| / |e| in float32 (|a - e| where e is 0); inf where `actual` is missing."""
    if actual is None or actual.shape != expected.shape:
        return math.inf
    a, e = actual.detach().float(), expected.detach().float()
    norm = e.norm().item()
    diff = (a - e).norm().item()
    return diff / norm if norm > 0 else diff


def rel_errors(actual: dict[str, torch.Tensor], expected: dict[str, torch.Tensor]) -> dict[str, float]:
    return {k: rel_err(actual.get(k), e) for k, e in expected.items()}


def _badness(value: float, limit: float) -> float:
    return math.inf if math.isnan(value) else value / limit


def verdict(mlc: dict[str, float], inductor: dict[str, float] | None, tol: float,
            noise: dict[str, float] | None = None) -> str:
    """"yes", or "mismatch: <worst tensor> ..." (see the module docstring for the rule): each
    tensor within `tol`, or within twice a noise floor's value for it where that is larger
    (Inductor's distance from eager; `noise`: eager's own distance from eager in float32)."""
    limits = {k: max([tol] + [2 * floor[k] for floor in (inductor, noise)
                              if floor and math.isfinite(floor.get(k, math.nan))]) for k in mlc}
    bad = [k for k, v in mlc.items() if not v <= limits[k]]
    if not bad:
        return "yes"
    worst = max(bad, key=lambda k: _badness(mlc[k], limits[k]))
    return f"mismatch: {len(bad)}/{len(mlc)} tensors, worst {worst} rel err {mlc[worst]:.2e} (limit {limits[worst]:.1e})"


def float32_noise(workload: Workload, mode: str, expected: dict[str, torch.Tensor]) -> dict[str, float]:
    """Each checked tensor's distance of eager in the bench's dtype (`expected`) from eager in
    float32 (a copy of the model and its floating-point inputs upcast, the same step): the dtype's
    own rounding, a noise floor that needs no Inductor. {} where the dtype is float32."""
    if next(workload.model.parameters()).dtype == torch.float32:
        return {}
    model = copy.deepcopy(workload.model).float()
    model.train(mode == "training" and workload.train_mode)
    inputs = {k: v.float() if v.is_floating_point() else v for k, v in workload.inputs.items()}
    reference = step(model, inputs, mode)
    del model
    return rel_errors(expected, reference)


def worst(errors: dict[str, float] | None) -> tuple[float | None, str]:
    """The largest error and its tensor's name (NaN counts as largest)."""
    if not errors:
        return None, ""
    name = max(errors, key=lambda k: math.inf if math.isnan(errors[k]) else errors[k])
    return errors[name], name


# ---------------------------------------------------------------------------------------------
# Timing


@dataclass
class Timing:
    """Milliseconds per call over the timed repeats."""

    median: float
    min: float
    max: float
    samples: int


def time_interleaved(fns: dict[str, Callable[[], Any]], rounds: int, calls: int) -> dict[str, Timing]:
    """Wall-clock ms per call of each function, timed in turn: each round runs each function
    `calls` times back to back (no synchronisation between calls, as a model is called in a
    loop: the host's launches overlap the GPU's work) and divides the round's time by `calls`.
    Rounds alternate between the functions, so that a drift of the machine's state (clocks,
    other tenants) falls on all of them alike; median, min and max are over rounds."""
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            _sync()
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            _sync()
            samples[name].append((time.perf_counter() - start) * 1e3 / calls)
    return {name: Timing(statistics.median(t), min(t), max(t), len(t)) for name, t in samples.items()}


def _sync() -> None:
    if CUDA:
        torch.cuda.synchronize()


# ---------------------------------------------------------------------------------------------
# A row: one model in one mode, three backends


@dataclass
class Row:
    model: str
    mode: str
    shape: str = ""
    dtype: str = ""
    ms: dict[str, Timing] = field(default_factory=dict)  # backend -> wall-clock timing
    gpu_ms: dict[str, float] = field(default_factory=dict)  # backend -> kernels' GPU time per call
    kernel_ms: dict[str, dict[str, float]] = field(default_factory=dict)  # backend -> kernel name -> ms per call
    peak_mb: dict[str, float] = field(default_factory=dict)  # backend -> MB held at the peak of a call (`peak_memory`)
    reserved_mb: dict[str, float] = field(default_factory=dict)  # backend -> MB reserved for a call (`reserved_memory`)
    # mlc -> how its graphs' calls ran from the first on ("replayed", "recorded", "busy", ...: `CudaGraphCall.calls`)
    graph_calls: dict[str, dict[str, int]] = field(default_factory=dict)
    graphs: dict[str, int] = field(default_factory=dict)  # inductor/mlc -> graphs Dynamo compiled (1: no break)
    breaks: dict[str, int] = field(default_factory=dict)  # inductor/mlc -> graph breaks (0 under fullgraph)
    compile_s: dict[str, float] = field(default_factory=dict)  # backend -> first call, s
    rel_errors: dict[str, dict[str, float]] = field(default_factory=dict)  # inductor/mlc -> tensor -> err
    float32_noise: dict[str, float] = field(default_factory=dict)  # tensor -> eager's err against float32 eager
    mlc_over_inductor: float | None = None
    correct: str = ""  # mlc against eager: "yes", "mismatch: ...", "failed: ..."
    inductor_correct: str = ""
    errors: dict[str, str] = field(default_factory=dict)  # backend -> one-line reason


def compilers(mlc_backend: Callable[..., Any], reduce_overhead: bool = False, fullgraph: bool = True,
              inductor_mode: str | None = None) -> dict[str, Callable[[nn.Module], Callable[..., Any]]]:
    """As `bench/run.py`'s: `reduce_overhead`, both compilers replay CUDA graphs; `inductor_mode`
    is Inductor's torch.compile mode instead (max-autotune, ...); `fullgraph` False lets Dynamo
    break the graph (the model's `Workload.fullgraph`)."""
    mode = inductor_mode or ("reduce-overhead" if reduce_overhead else None)
    return {
        "eager": lambda m: m,
        "inductor": lambda m: torch.compile(m, fullgraph=fullgraph, dynamic=False, mode=mode),
        "mlc": lambda m: torch.compile(m, backend=mlc_backend, fullgraph=fullgraph, dynamic=False),
    }


def first_call(row: Row, backend: str, model: nn.Module, compile_fn: Callable[[nn.Module], Any],
               inputs: dict[str, torch.Tensor], expected: dict[str, torch.Tensor] | None,
               args: argparse.Namespace) -> tuple[Callable[[], Any], dict[str, torch.Tensor] | None]:
    """Compile, run once (timed as compile seconds), compare with `expected`; fills `row`.
    Returns the step to time, and the first step's results where there is no reference yet
    (eager's become it)."""
    from torch._dynamo.utils import counters

    compiled = compile_fn(model)
    counters["stats"].clear()
    counters["graph_break"].clear()
    _sync()
    start = time.perf_counter()
    results = step(compiled, inputs, row.mode)
    _sync()
    row.compile_s[backend] = time.perf_counter() - start
    if backend != "eager":
        row.graphs[backend] = counters["stats"]["unique_graphs"]
        row.breaks[backend] = sum(counters["graph_break"].values())
    if expected is not None:
        row.rel_errors[backend] = rel_errors(results, expected)
        if backend == "mlc":
            row.correct = verdict(row.rel_errors["mlc"], row.rel_errors.get("inductor"), args.tol, row.float32_noise)
        else:
            row.inductor_correct = verdict(row.rel_errors[backend], None, args.tol, row.float32_noise)
        results = None  # free them before timing
    return Step(compiled, inputs, row.mode), results


def time_row(row: Row, calls: dict[str, Callable[[], Any]], args: argparse.Namespace,
             pools_made: dict[str, set[tuple[int, int]]]) -> None:
    """Warm each backend's step up, take its GPU time per call (the profiler's kernel durations),
    then time them all together in interleaved rounds (`time_interleaved`)."""
    for backend, call in calls.items():
        before = set(graph_pools())
        for _ in range(args.warmup):
            call()
        if isinstance(call, Step):  # the last step's gradients, freed where no recording holds them
            drop_gradients(call.model)
        # its pools: those its first call made (Inductor's graph trees warm up in theirs) and its warm-up
        mine = pools_made.get(backend, set()) | (set(graph_pools()) - before)
        pooled = sum(size for pool, size in graph_pools().items() if pool in mine)
        peak = peak_memory(call, pooled)
        if isinstance(call, Step):
            drop_gradients(call.model)
        reserved = reserved_memory(call, pooled)
        if peak is not None and reserved is not None:
            row.peak_mb[backend], row.reserved_mb[backend] = peak, reserved
        kernels = run.kernel_times(call)
        if kernels is not None:
            row.gpu_ms[backend] = sum(kernels.values())
            row.kernel_ms[backend] = dict(sorted(kernels.items(), key=lambda kv: -kv[1]))
    row.ms.update(time_interleaved(calls, args.rounds, args.calls))


def bench_row(workload: Workload, name: str, mode: str, args: argparse.Namespace,
              mlc_backend: Callable[..., Any]) -> Row:
    """Eager (the reference), then Inductor, then mlc, each on its own copy of the model:
    compiled and checked one after another, then timed together (`time_row`), so that a drift
    of the machine falls on all three alike."""
    row = Row(model=name, mode=mode, shape=workload.shape, dtype=args.dtype)
    expected: dict[str, torch.Tensor] | None = None
    calls: dict[str, Callable[[], Any]] = {}
    pools_made: dict[str, set[tuple[int, int]]] = {}  # backend -> the CUDA graph pools its first call made
    graphed: dict[str, list[Any]] = {}  # backend -> the CudaGraphCalls its first call made (mlc's)
    torch._dynamo.reset()
    for backend, compile_fn in compilers(mlc_backend, args.reduce_overhead, workload.fullgraph,
                                         args.inductor_mode).items():
        if backend in args.skip or (backend != "eager" and expected is None):
            row.errors[backend] = "skipped" if backend in args.skip else "no eager reference"
            continue
        model = workload.model if backend == "eager" else copy.deepcopy(workload.model)
        model.train(mode == "training" and workload.train_mode)
        pools_before, graphs_before = set(graph_pools()), set(cudagraphs.CALLS)
        try:
            calls[backend], results = first_call(row, backend, model, compile_fn, workload.inputs, expected, args)
            pools_made[backend] = set(graph_pools()) - pools_before
            graphed[backend] = list(set(cudagraphs.CALLS) - graphs_before)
        except Exception as error:  # noqa: BLE001 (a cell, never a crash)
            row.errors[backend] = run.one_line(error)
            if args.verbose:
                traceback.print_exc()
            results = None
        if backend == "eager" and results is not None:
            expected = results
            try:
                row.float32_noise = float32_noise(workload, mode, expected)
            except Exception as error:  # noqa: BLE001 (then Inductor's is the only noise floor)
                row.errors["float32 eager"] = run.one_line(error)
    expected = None
    with timing_turn(args.barrier, row):
        time_row(row, calls, args, pools_made)
    row.graph_calls = {backend: dict(sum((g.calls for g in graphs), Counter()))
                       for backend, graphs in graphed.items() if graphs}
    calls.clear()
    for p in workload.model.parameters():
        p.grad = None
    torch._dynamo.reset()
    if CUDA:
        torch.cuda.empty_cache()
    if row.errors.get("mlc", "skipped") != "skipped":
        row.correct = f"failed: {row.errors['mlc']}"
    if row.errors.get("inductor", "skipped") != "skipped":
        row.inductor_correct = f"failed: {row.errors['inductor']}"
    if "mlc" in row.ms and "inductor" in row.ms:
        row.mlc_over_inductor = row.ms["mlc"].median / row.ms["inductor"].median
    return row


BARRIER_WAIT_S = 150  # at most this long after its own compile a run waits for the others'


@contextlib.contextmanager
def timing_turn(barrier: str | None, row: Row) -> Any:
    """`--barrier DIR:N`: parallel runs (one per GPU) time their rows one at a time (a lock in
    DIR), once N rows in all have compiled (a file each in DIR) or `BARRIER_WAIT_S` passed, so
    that a row's timing does not share the host with another run's compile."""
    if barrier is None:
        yield
        return
    folder, _, count = barrier.rpartition(":")
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    (path / f"{os.getpid()}-{row.model}-{row.mode}.compiled").touch()
    deadline = time.monotonic() + BARRIER_WAIT_S
    while len(list(path.glob("*.compiled"))) < int(count) and time.monotonic() < deadline:
        time.sleep(1)
    with open(path / "timing.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def bench_model(name: str, device: torch.device, args: argparse.Namespace,
                mlc_backend: Callable[..., Any]) -> list[Row]:
    torch.manual_seed(0)
    gpu_size, quick_size = SIZES[name]
    size = quick_size if args.quick else gpu_size
    size = Size(args.batch or size.batch, args.seq or size.seq)
    try:
        workload = build(name, args.quick, size, device, DTYPES[args.dtype], args.moe_experts)
    except Exception as error:  # noqa: BLE001
        reason = run.one_line(error)
        return [Row(model=name, mode=mode, dtype=args.dtype, correct=f"failed: {reason}", errors={"setup": reason})
                for mode in args.modes]
    rows = [bench_row(workload, name, mode, args, mlc_backend) for mode in args.modes]
    del workload
    if CUDA:
        torch.cuda.empty_cache()
    return rows


# ---------------------------------------------------------------------------------------------
# Reporting


def _ms(row: Row, backend: str) -> str:
    timing = row.ms.get(backend)
    if timing is not None:
        return f"{timing.median:.2f} ({timing.min:.2f}-{timing.max:.2f})"
    error = row.errors.get(backend)
    return "skipped" if error == "skipped" else ("failed" if error else "-")


def _pair(a: float | None, b: float | None, fmt: str) -> str:
    return " / ".join("-" if v is None else format(v, fmt) for v in (a, b))


def _graphs(row: Row, backend: str) -> str:
    """The graphs Dynamo compiled, and its graph breaks where there were any."""
    if backend not in row.graphs:
        return "-"
    breaks = row.breaks.get(backend, 0)
    return f"{row.graphs[backend]}" + (f" ({breaks} breaks)" if breaks else "")


def markdown(rows: Sequence[Row]) -> str:
    head = ["model", "mode", "shape", "eager ms", "inductor ms", "mlc ms", "mlc/inductor",
            "GPU ms mlc / ind", "peak MB eager / ind / mlc", "reserved MB eager / ind / mlc", "graphs mlc / ind",
            "compile s mlc / ind",
            "rel err mlc / ind / f32", "correct"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in rows:
        ratio = "-" if r.mlc_over_inductor is None else f"{r.mlc_over_inductor:.2f}"
        errs = " / ".join("-" if e is None else f"{e:.1e}" for e in (
            worst(r.rel_errors.get("mlc"))[0], worst(r.rel_errors.get("inductor"))[0], worst(r.float32_noise)[0]))
        cells = [r.model, r.mode, r.shape, _ms(r, "eager"), _ms(r, "inductor"), _ms(r, "mlc"), ratio,
                 _pair(r.gpu_ms.get("mlc"), r.gpu_ms.get("inductor"), ".2f"),
                 " / ".join("-" if b not in r.peak_mb else f"{r.peak_mb[b]:.0f}" for b in BACKENDS),
                 " / ".join("-" if b not in r.reserved_mb else f"{r.reserved_mb[b]:.0f}" for b in BACKENDS),
                 f"{_graphs(r, 'mlc')} / {_graphs(r, 'inductor')}",
                 _pair(r.compile_s.get("mlc"), r.compile_s.get("inductor"), ".1f"), errs,
                 r.correct.replace("|", "\\|")]
        lines.append("| " + " | ".join(cells) + " |")
    # Inductor's distance from eager is the table's noise floor, not a verdict: a bfloat16
    # gradient summed over thousands of tokens (a norm's weight) differs by a few 1e-2 between
    # correct implementations; its "mismatch" against --tol alone is in the JSON only.
    notes = [f"- {r.model} {r.mode} {b}: {e}" for r in rows for b, e in r.errors.items()
             if e != "skipped" and b != "mlc"]
    if notes:
        lines += ["", "Other failures:", *notes]
    return "\n".join(lines)


def top_kernels(row: Row, n: int) -> str:
    """Each backend's `n` longest kernels of the row: GPU ms per call, launches folded by name."""
    lines = []
    for backend, kernels in row.kernel_ms.items():
        lines.append(f"  {backend}: {len(kernels)} kernel names, {row.gpu_ms[backend]:.3f} ms")
        lines += [f"    {ms:8.3f}  {name[:110]}" for name, ms in list(kernels.items())[:n]]
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="all", help=f"comma-separated, from: {','.join(SIZES)} (default all)")
    parser.add_argument("--modes", default="inference,training", help="comma-separated: inference,training")
    parser.add_argument("--quick", action="store_true", help="tiny configs (a sanity check; what CPU runs use)")
    parser.add_argument("--dtype", default="bfloat16", choices=list(DTYPES), help="(default bfloat16)")
    parser.add_argument("--batch", type=int, default=0, help="batch size instead of the model's")
    parser.add_argument("--seq", type=int, default=0, help="sequence length instead of the model's")
    parser.add_argument("--tol", type=float, default=2e-2, help="relative error norm allowed (default 2e-2)")
    parser.add_argument("--json", type=Path, help="write the rows and the environment as JSON here")
    parser.add_argument("--markdown", type=Path, help="write the Markdown table here too")
    parser.add_argument("--doc", type=Path,
                        help="write the table, the command and the machine as a section of this document (docs/BENCHMARKS.md)")
    parser.add_argument("--warmup", type=int, default=5, help="calls of each backend before timing (default 5)")
    parser.add_argument("--rounds", type=int, default=15, help="timed rounds, alternating the backends (default 15)")
    parser.add_argument("--calls", type=int, default=10, help="calls per round, back to back (default 10)")
    parser.add_argument("--reduce-overhead", action="store_true",
                        help="both compilers replay CUDA graphs: Inductor's mode=reduce-overhead, mlc's MLC_CUDAGRAPHS=1")
    parser.add_argument("--inductor-mode", choices=("default", "reduce-overhead", "max-autotune",
                                                    "max-autotune-no-cudagraphs"),
                        help="Inductor's torch.compile mode (mlc's settings stay as the environment and "
                             "--reduce-overhead set them): max-autotune, the bar of mlc's GEMMs")
    parser.add_argument("--barrier", metavar="DIR:N",
                        help="runs in parallel on several GPUs: time once N rows of all runs have compiled, one run "
                             "at a time (files in DIR)")
    parser.add_argument("--skip", default="", help="backends not to run: inductor,mlc")
    parser.add_argument("--moe-experts", default=EXPERTS[0], choices=EXPERTS,
                        help="how the moe row's experts run (transformers' experts_implementation; default "
                             f"{EXPERTS[0]}); eager loops over the experts with nonzero, so without fullgraph")
    parser.add_argument("--top-kernels", type=int, default=0, metavar="N",
                        help="print each row's N longest kernels (GPU ms per call) per backend; "
                             "--json keeps all of them in any case")
    parser.add_argument("--verbose", action="store_true", help="print tracebacks of failures")
    args = parser.parse_args(argv)
    args.models = _choose(parser, "model", args.models, list(SIZES))
    args.modes = _choose(parser, "mode", args.modes, list(MODES))
    args.skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    if "eager" in args.skip:
        parser.error("eager is the reference: it cannot be skipped")
    if not CUDA and not args.quick:
        print("no CUDA device: running on CPU under TRITON_INTERPRET=1; use --quick", file=sys.stderr)
    return args


def _choose(parser: argparse.ArgumentParser, what: str, text: str, known: list[str]) -> list[str]:
    names = known if text == "all" else [m.strip() for m in text.split(",") if m.strip()]
    unknown = [m for m in names if m not in known]
    if unknown:
        parser.error(f"unknown {what}(s) {','.join(unknown)}; known: {','.join(known)}")
    return names


MODELS_SECTION = """## Models: {models}{graphs}

`{command}`

{device}, torch {torch}, triton {triton}, transformers {transformers}, {dtype}; {time}. Times:
wall-clock ms per call in {rounds} rounds of {calls} back-to-back calls, the rounds alternating
between the backends (a training loop's view: the host's launches overlap the GPU's work),
median and min-max over rounds. *GPU ms*: the kernels' durations per call summed (torch.profiler;
memory copies and sets are left out); where it is well below the wall time, the host's work per
call bounds the call (a step of these models is a few hundred launches and extern calls;
{replays}). *peak MB*: what one call holds at its peak above what was allocated before it
(`torch.cuda.max_memory_allocated` during the call minus `memory_allocated` before: activations,
temporaries, outputs, and in training the gradients, set to None before it; a call replayed
from a CUDA graph allocates nothing: its memory is its recordings' pools, taken when they were
recorded in the warm-up, which count here as a whole; `-` without CUDA). *reserved MB*: the GPU
memory the call needs from the caching allocator: what it makes it reserve from an emptied
cache (`max_memory_reserved` during the call minus `memory_reserved` before), plus the free
space the default pool's segments had before it (which it may fill without reserving), plus
its CUDA graph pools: above *peak MB* by what the allocator rounds and splits, the same
measure with graphs and without. *graphs*: the graphs
Dynamo compiled for the model (1: no graph break; with breaks, their count in parentheses: only
a model compiled without fullgraph has any). *compile
s* is the first call's wall time (Dynamo, AOTAutograd, the backend, one run); *rel err* is the
worst tensor's relative error norm against eager (logits; in training also the loss and every
gradient) of mlc and Inductor, and *f32* eager's own against eager in float32 (the dtype's
rounding); *correct* judges mlc within `--tol` or twice Inductor's or eager's float32 distance
for each tensor, as `bench/models.py`'s docstring says.

{table}
"""


def report(rows: Sequence[Row], env: dict[str, Any], args: argparse.Namespace) -> None:
    table = markdown(rows)
    print(table)
    title = f"mlc model bench on {env['device']}, torch {env['torch']}, triton {env['triton']}"
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(f"{title}\n\n{table}\n")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"environment": env, "rows": [asdict(r) for r in rows]}, indent=2) + "\n")
    if args.doc:
        models = ",".join(args.models)
        key = (f"bench/models.py {models}" + (" --reduce-overhead" if args.reduce_overhead else "")
               + (f" --inductor-mode {args.inductor_mode}" if args.inductor_mode else ""))
        if args.reduce_overhead:
            graphs = ", CUDA graphs (Inductor's reduce-overhead, mlc's MLC_CUDAGRAPHS=1)"
            replays = "here both compilers replay CUDA graphs in every row"
        else:
            graphs, replays = "", "mlc replays CUDA graphs where its static graphs do by default (inference and training)"
        run.write_section(args.doc, key, MODELS_SECTION.format(**env, models=models, table=table, graphs=graphs,
                                                               replays=replays))


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.reduce_overhead:
        os.environ["MLC_CUDAGRAPHS"] = "1"
    run.import_mlc()
    from mlc.frontend.backend import mlc_backend

    import transformers

    device = torch.device("cuda" if CUDA else "cpu")
    env = run.machine(device, args)
    env["command"] = "python3 bench/models.py " + " ".join(sys.argv[1:] if argv is None else argv)
    env.update(transformers=transformers.__version__, dtype=args.dtype, tol=args.tol,
               warmup_calls=args.warmup, rounds=args.rounds, calls=args.calls)
    print(f"# mlc model bench on {env['device']} (torch {env['torch']}, triton {env['triton']}, "
          f"transformers {env['transformers']})", flush=True)
    rows: list[Row] = []
    for name in args.models:
        start = time.perf_counter()
        for row in bench_model(name, device, args, mlc_backend):
            rows.append(row)
            times = ", ".join(f"{b} {_ms(row, b)}" for b in BACKENDS)
            print(f"{name} {row.mode} (ms): {times}; correct: {row.correct or '-'}", file=sys.stderr, flush=True)
            for backend, ran in row.graph_calls.items():
                print(f"  {backend}'s calls: " + ", ".join(f"{how} {n}" for how, n in sorted(ran.items())),
                      file=sys.stderr, flush=True)
            if args.top_kernels:
                print(top_kernels(row, args.top_kernels), file=sys.stderr, flush=True)
        print(f"{name}: {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
    report(rows, env, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
