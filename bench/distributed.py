#!/usr/bin/env python3
"""Training steps of a transformer on several GPUs (DDP, FSDP2, tensor parallelism): eager,
Inductor and mlc with `overlap-comm` on and off, one table.

    torchrun --nproc-per-node 2 bench/distributed.py --doc docs/BENCHMARKS.md --json out.json
    torchrun --nproc-per-node 2 bench/distributed.py --quick --parallel tp   # CPU: gloo, interpreter

Each rank computes on its own GPU (`cuda:LOCAL_RANK`, NCCL), or without GPUs on the CPU over
gloo. The model is a GPT-style decoder (token embedding, pre-norm blocks of causal SDPA
attention and a GELU MLP, a vocabulary head) in bfloat16 on CUDA; a step is the forward, the
cross-entropy loss, `.backward()` and an SGD step. The parallelisms:

* ddp: `DistributedDataParallel`, each rank its own batch; Dynamo's DDPOptimizer splits the
  graph at bucket boundaries and DDP's hooks all-reduce gradients while the backward runs.
* fsdp2: `fully_shard` on each block and on the model, each rank its own batch; FSDP2's hooks
  all-gather parameters and reduce-scatter gradients around the compiled graphs.
* tp: Megatron's column-then-row split of every block's attention and MLP
  (`parallelize_module`), the same batch on every rank; the graphs hold the all-reduces
  (`_c10d_functional.all_reduce` and `wait_tensor`), which `overlap-comm` moves.

Only tp's graphs hold collectives: under ddp and fsdp2 the communication runs in hooks outside
the compiled graphs, so `overlap-comm` has nothing to move there (its off column is the same
code, timed again). Backends run one after another on their own copies of one model (same
weights), each first step is its compile (wall seconds, rank 0) and is checked against eager's
first step (the loss and every gradient of this rank, relative error norms as bench/models.py
computes them); then they are timed together: `--rounds` rounds of `--steps` back-to-back
steps, the backends in turn, the median round and the rounds' range, wall ms per step on rank
0 (the ranks run in lockstep: every step's collectives join them). Not part of the mlc package:
see bench/README.md.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import datetime
import importlib.util
import json
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


def _load_models() -> Any:
    """bench/models.py as a module (it loads bench/run.py, which sets up the environment)."""
    spec = importlib.util.spec_from_file_location("mlc_bench_models", Path(__file__).with_name("models.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


models = _load_models()
run = models.run

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

CUDA = run.CUDA
PARALLELISMS = ("ddp", "fsdp2", "tp")
BACKENDS = ("eager", "inductor", "mlc", "mlc_no_overlap")

# ---------------------------------------------------------------------------------------------
# The model


@dataclass(frozen=True)
class Config:
    vocab: int
    dim: int
    heads: int
    layers: int
    batch: int
    seq: int

    def describe(self) -> str:
        return (f"{self.layers} layers, dim {self.dim}, {self.heads} heads, vocab {self.vocab}; "
                f"batch {self.batch} x seq {self.seq} per rank")


FULL = Config(vocab=8192, dim=1024, heads=16, layers=4, batch=8, seq=1024)
QUICK = Config(vocab=64, dim=32, heads=2, layers=2, batch=2, seq=8)


class Block(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.head_dim = dim // heads
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.wq, self.wk, self.wv, self.wo = (nn.Linear(dim, dim, bias=False) for _ in range(4))
        self.w1, self.w2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        h = self.norm1(x)
        # -1 heads: under tensor parallelism a rank holds a share of them
        q, k, v = (w(h).view(b, s, -1, self.head_dim).transpose(1, 2) for w in (self.wq, self.wk, self.wv))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.wo(a.transpose(1, 2).reshape(b, s, -1))
        return x + self.w2(F.gelu(self.w1(self.norm2(x))))


class Decoder(nn.Module):
    def __init__(self, config: Config) -> None:
        super().__init__()
        self.embed = nn.Embedding(config.vocab, config.dim)
        self.layers = nn.ModuleList([Block(config.dim, config.heads) for _ in range(config.layers)])
        self.norm = nn.LayerNorm(config.dim)
        self.head = nn.Linear(config.dim, config.vocab, bias=False)

    def forward(self, tokens: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """The mean cross-entropy of the next-token predictions (in the compiled graph too)."""
        x = self.embed(tokens)
        for layer in self.layers:
            x = layer(x)
        logits = self.head(self.norm(x))
        return F.cross_entropy(logits.flatten(0, 1).float(), targets.flatten())


def parallelize(model: Decoder, parallelism: str, device: torch.device) -> nn.Module:
    if parallelism == "ddp":
        from torch.nn.parallel import DistributedDataParallel as DDP

        return DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
    if parallelism == "fsdp2":
        from torch.distributed.fsdp import fully_shard

        for layer in model.layers:
            fully_shard(layer)
        return fully_shard(model)
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

    mesh = init_device_mesh(device.type, (dist.get_world_size(),))
    plan = {"wq": ColwiseParallel(), "wk": ColwiseParallel(), "wv": ColwiseParallel(), "wo": RowwiseParallel(),
            "w1": ColwiseParallel(), "w2": RowwiseParallel()}
    for block in model.layers:
        parallelize_module(block, mesh, plan)
    return model


def tokens(config: Config, parallelism: str, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs and next-token targets: the same on every rank under tp (it splits the model, not
    the batch), each rank its own otherwise."""
    seed = 0 if parallelism == "tp" else dist.get_rank()
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, config.vocab, (config.batch, config.seq + 1), generator=g).to(device)
    return ids[:, :-1].contiguous(), ids[:, 1:].contiguous()


# ---------------------------------------------------------------------------------------------
# One backend's run


def local(t: torch.Tensor) -> torch.Tensor:
    """A DTensor's shard on this rank, a tensor as it is."""
    return t.to_local() if hasattr(t, "to_local") else t


@contextlib.contextmanager
def pipeline(spec: str | None) -> Iterator[None]:
    """mlc's pass pipeline while the block runs (`MLC_PIPELINE`; mlc reads it at each compile,
    and AOTAutograd compiles a backward at its first call)."""
    saved = os.environ.get("MLC_PIPELINE")
    if spec is not None:
        os.environ["MLC_PIPELINE"] = spec
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("MLC_PIPELINE", None)
        else:
            os.environ["MLC_PIPELINE"] = saved


@dataclass
class Trainer:
    """A model under one backend with its optimizer: `step()` is one training step."""

    model: nn.Module
    forward: Callable[..., torch.Tensor]
    inputs: tuple[torch.Tensor, torch.Tensor]
    spec: str | None = None  # mlc's pipeline for this backend (None: the default)
    opt: Any = None

    def __post_init__(self) -> None:
        # One update per parameter: tp's parameters are DTensors and plain tensors (embedding,
        # norms, head), which one foreach kernel cannot take together.
        self.opt = torch.optim.SGD(self.model.parameters(), lr=1e-3, foreach=False)

    def step(self, update: bool = True) -> torch.Tensor:
        with pipeline(self.spec):
            self.opt.zero_grad(set_to_none=True)
            loss = self.forward(*self.inputs)
            loss.backward()
            if update:
                self.opt.step()
        return loss.detach()

    def gradients(self) -> torch.Tensor:
        return torch.cat([local(p.grad).float().flatten() for p in self.model.parameters() if p.grad is not None])


def backends(mlc_backend: Callable[..., Any]) -> dict[str, tuple[Callable[[nn.Module], Any], str | None]]:
    """How each backend wraps the model, and the mlc pipeline it compiles with. Each mlc run has
    its own backend callable: Dynamo reuses a compiled frame only for the backend it was
    compiled by, so the two mlc runs compile apart."""
    from mlc.passes.registry import DEFAULT_PIPELINE

    def mlc_no_overlap(gm: Any, example_inputs: Any) -> Any:
        return mlc_backend(gm, example_inputs)

    no_overlap = DEFAULT_PIPELINE.replace("overlap-comm", "overlap-comm{enabled=false}")
    return {
        "eager": (lambda m: m, None),
        "inductor": (lambda m: torch.compile(m, dynamic=False), None),
        "mlc": (lambda m: torch.compile(m, backend=mlc_backend, dynamic=False), None),
        "mlc_no_overlap": (lambda m: torch.compile(m, backend=mlc_no_overlap, dynamic=False), no_overlap),
    }


# ---------------------------------------------------------------------------------------------
# A row: one parallelism, every backend


@dataclass
class Row:
    parallelism: str
    ms: dict[str, Any] = field(default_factory=dict)  # backend -> models.Timing, ms per step
    compile_s: dict[str, float] = field(default_factory=dict)  # backend -> first step, s
    rel_errors: dict[str, dict[str, float]] = field(default_factory=dict)  # backend -> loss/grads -> err
    correct: dict[str, str] = field(default_factory=dict)  # backend -> "yes" / "mismatch: ..."


def first_step(trainer: Trainer) -> tuple[float, dict[str, torch.Tensor]]:
    """The first step without the update (its compile, timed), and what it computed."""
    dist.barrier()
    models._sync()
    start = time.perf_counter()
    loss = trainer.step(update=False)
    models._sync()
    seconds = time.perf_counter() - start
    return seconds, {"loss": loss.float().reshape(1), "grads": trainer.gradients()}


def bench_row(parallelism: str, config: Config, device: torch.device, dtype: torch.dtype,
              args: argparse.Namespace, mlc_backend: Callable[..., Any]) -> Row:
    """Every backend on its own copy of one model: compiled and checked in turn, then timed
    together in interleaved rounds."""
    torch._dynamo.reset()
    row = Row(parallelism)
    torch.manual_seed(0)
    base = Decoder(config).to(device=device, dtype=dtype)
    inputs = tokens(config, parallelism, device)
    expected: dict[str, torch.Tensor] = {}
    trainers: dict[str, Trainer] = {}
    for backend, (wrap, spec) in backends(mlc_backend).items():
        if backend in args.skip:
            continue
        # A failure ends the run (torchrun stops the other ranks): a rank that went on to the next
        # backend would wait at a collective the failed one never reaches.
        model = parallelize(copy.deepcopy(base), parallelism, device)
        trainer = Trainer(model, wrap(model), inputs, spec)
        row.compile_s[backend], results = first_step(trainer)
        if backend == "eager":
            expected = results
        else:
            row.rel_errors[backend] = models.rel_errors(results, expected)
            row.correct[backend] = models.verdict(row.rel_errors[backend], None, args.tol)
        trainer.opt.step()
        trainers[backend] = trainer
    for trainer in trainers.values():
        for _ in range(args.warmup):
            trainer.step()
    # The ranks run in lockstep: every step's collectives join them.
    dist.barrier()
    row.ms = models.time_interleaved({b: t.step for b, t in trainers.items()}, args.rounds, args.steps)
    return row


# ---------------------------------------------------------------------------------------------
# Reporting


def _ms(row: Row, backend: str) -> str:
    timing = row.ms.get(backend)
    if timing is None:
        return "-"
    return f"{timing.median:.2f} ({timing.min:.2f}-{timing.max:.2f})"


def markdown(rows: Sequence[Row]) -> str:
    head = ["parallelism", "eager ms", "inductor ms", "mlc ms", "mlc ms, overlap off", "mlc/inductor",
            "compile s mlc / ind", "rel err mlc / ind", "correct mlc / overlap off / ind"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in rows:
        mlc, ind = r.ms.get("mlc"), r.ms.get("inductor")
        ratio = f"{mlc.median / ind.median:.2f}" if mlc and ind else "-"
        errs = [models.worst(r.rel_errors.get(b))[0] for b in ("mlc", "inductor")]
        cells = [r.parallelism, *(_ms(r, b) for b in BACKENDS), ratio,
                 models._pair(r.compile_s.get("mlc"), r.compile_s.get("inductor"), ".1f"),
                 models._pair(*errs, ".1e"),
                 " / ".join(r.correct.get(b, "-") for b in ("mlc", "mlc_no_overlap", "inductor")).replace("|", "\\|")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


SECTION = """## Training on {world} GPUs: DDP, FSDP2, tensor parallelism

`{command}`

{world} × {device}, torch {torch}, triton {triton}, NCCL; {time}. {model}, {dtype}. A step is the
forward, cross-entropy, backward and an SGD step; wall ms per step on rank 0, the median of
{rounds} rounds of {steps} steps (the backends in turn), the rounds' range in parentheses.
*mlc ms, overlap off* is mlc with `overlap-comm{{enabled=false}}`: only tp's graphs hold
collectives (ddp's and fsdp2's run in hooks outside the graphs), so elsewhere it is the same
code timed again. *compile s* is the first step's wall time; *rel err* the worst relative error
norm of the first step's loss and this rank's gradients against eager's (bench/models.py's
rule, tolerance {tol}).

{table}
"""


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parallel", default="all", help=f"comma-separated, from: {','.join(PARALLELISMS)}")
    parser.add_argument("--quick", action="store_true", help="a tiny model (a sanity check; what CPU runs use)")
    parser.add_argument("--tol", type=float, default=2e-2, help="relative error norm allowed (default 2e-2)")
    parser.add_argument("--warmup", type=int, default=3, help="steps of each backend before timing (default 3)")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds, the backends in turn (default 5)")
    parser.add_argument("--steps", type=int, default=10, help="steps per round, back to back (default 10)")
    parser.add_argument("--skip", default="", help="backends not to run: inductor,mlc,mlc_no_overlap")
    parser.add_argument("--json", type=Path, help="write the rows and the environment as JSON here (rank 0)")
    parser.add_argument("--doc", type=Path, help="write the table as a section of this document (rank 0)")
    args = parser.parse_args(argv)
    args.parallel = models._choose(parser, "parallelism", args.parallel, list(PARALLELISMS))
    args.skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    if "eager" in args.skip:
        parser.error("eager is the reference: it cannot be skipped")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if "RANK" not in os.environ:
        sys.exit("run under torchrun: torchrun --nproc-per-node N bench/distributed.py ...")
    run.import_mlc()
    from mlc.frontend.backend import mlc_backend

    rank, local_rank = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank) if CUDA else torch.device("cpu")
    if CUDA:
        torch.cuda.set_device(device)
    dist.init_process_group("nccl" if CUDA else "gloo", timeout=datetime.timedelta(seconds=600))
    config = QUICK if args.quick else FULL
    dtype = torch.bfloat16 if CUDA else torch.float32
    env = run.machine(device, args)
    env.update(command="torchrun --nproc-per-node {} bench/distributed.py {}".format(
        dist.get_world_size(), " ".join(sys.argv[1:] if argv is None else argv)),
        world=dist.get_world_size(), model=config.describe(), dtype=str(dtype).removeprefix("torch."),
        rounds=args.rounds, steps=args.steps, tol=args.tol)
    rows = []
    for parallelism in args.parallel:
        start = time.perf_counter()
        rows.append(bench_row(parallelism, config, device, dtype, args, mlc_backend))
        if rank == 0:
            times = ", ".join(f"{b} {_ms(rows[-1], b)}" for b in BACKENDS)
            print(f"{parallelism} (ms per step): {times} ({time.perf_counter() - start:.1f} s)", file=sys.stderr,
                  flush=True)
    if rank == 0:
        table = markdown(rows)
        print(table)
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps({"environment": env, "rows": [asdict(r) for r in rows]}, indent=2) + "\n")
        if args.doc:
            key = f"bench/distributed.py --nproc-per-node {env['world']}"  # a section per machine size
            run.write_section(args.doc, key, SECTION.format(**env, table=table))
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
