"""One rank of `test_distributed.py`: `python distributed_worker.py GROUP RANK WORLD PORT`.

Joins a process group on 127.0.0.1:PORT and runs every case of GROUP, each compiled with
`backend="mlc"` and run eagerly on the same inputs: outputs, losses and gradients must match.
The ranks compute on CPU tensors over gloo, or with DISTRIBUTED_TEST_DEVICE=cuda each on its own
GPU (`cuda:RANK`) over NCCL.
Prints `ok <case>` per case; on a failure prints the traceback and exits at once with status 1
(the other ranks then fail at their next collective instead of waiting for this one).
Extra arguments name the cases to run (all of GROUP's when none); DISTRIBUTED_TEST_BACKEND=aot_eager
runs the same checks with torch's own backend, to tell mlc's failures from torch's.
"""

from __future__ import annotations

import copy
import datetime
import os
import sys
import traceback
import warnings
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
import torch.nn.functional as F
from torch import nn

TOL = {"atol": 1e-5, "rtol": 1e-5}
DEVICE = torch.device(os.environ.get("DISTRIBUTED_TEST_DEVICE", "cpu"))  # cuda: this rank's GPU, set in main
CASES: dict[str, dict[str, Callable[[], None]]] = {}


def case(group: str) -> Callable[[Callable[[], None]], Callable[[], None]]:
    def add(fn: Callable[[], None]) -> Callable[[], None]:
        CASES.setdefault(group, {})[fn.__name__] = fn
        return fn

    return add


def mlc(fn: Any, fullgraph: bool = False) -> Any:
    return torch.compile(fn, backend=os.environ.get("DISTRIBUTED_TEST_BACKEND", "mlc"), dynamic=False,
                         fullgraph=fullgraph)


def rank_input(*shape: int, seed: int = 0) -> torch.Tensor:
    """A different tensor on each rank (so that a collective has something to combine)."""
    g = torch.Generator().manual_seed(1000 * seed + dist.get_rank())
    return torch.randn(*shape, generator=g).to(DEVICE)


def check_grad(fn: Callable[..., Any], *inputs: torch.Tensor) -> None:
    """`fn` through mlc (one graph: every collective in it) matches eager: its outputs and each
    input's gradient of a weighted sum."""

    def run(f: Callable[..., Any]) -> tuple[Any, list[torch.Tensor]]:
        args = [x.detach().clone().requires_grad_(x.is_floating_point()) for x in inputs]
        out = f(*args)
        leaves = list(out) if isinstance(out, (tuple, list)) else [out]
        if any(o.requires_grad for o in leaves):
            sum((o * (k + 1)).sum() for k, o in enumerate(leaves) if o.requires_grad).backward()
        return [o.detach() for o in leaves], [a.grad for a in args]

    expected, expected_grads = run(fn)
    actual, actual_grads = run(mlc(fn, fullgraph=True))
    torch.testing.assert_close(actual, expected, **TOL)
    torch.testing.assert_close(actual_grads, expected_grads, **TOL)


# ---------------------------------------------------------------------------------------------
# Every functional collective, forward and backward


@case("collectives")
def all_reduce_sum_and_max() -> None:
    g = dist.group.WORLD
    check_grad(lambda x: funcol.all_reduce(torch.relu(x) * 2, "sum", g) + funcol.all_reduce(x.detach(), "max", g) * x,
               rank_input(4, 8))


@case("collectives")
def issue_example() -> None:
    """relu(x @ w), an all-reduce, an all-gather and a sum, with compute that can overlap."""
    g = dist.group.WORLD

    def fn(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        y = funcol.all_reduce(torch.relu(x @ w), "sum", g)
        other = torch.sigmoid(x) @ w.t()  # independent of the all-reduce: runs while it is in flight
        z = funcol.all_gather_tensor_autograd(y * other, 0, g)
        # (z * 2).sum(), not z.sum(): eager's all-gather backward on NCCL refuses the expanded
        # (stride 0) gradient of a plain sum
        return (z * 2).sum()

    check_grad(fn, rank_input(4, 8), rank_input(8, 8, seed=1))


@case("collectives")
def all_gather_and_reduce_scatter() -> None:
    """Each the other's backward (funcol's differentiable variants)."""
    g = dist.group.WORLD
    world = dist.get_world_size()
    check_grad(lambda x: funcol.all_gather_tensor_autograd(x.exp(), 0, g), rank_input(2, 8))
    check_grad(lambda x: funcol.all_gather_tensor_autograd(x * 3, 1, g), rank_input(2, 4))  # gather along dim 1
    check_grad(lambda x: funcol.reduce_scatter_tensor_autograd(x.sin(), "sum", 0, g), rank_input(2 * world, 8))
    check_grad(lambda x: funcol.all_gather_tensor(x + 1, 0, g) * 2, rank_input(2, 8))  # the plain ops
    check_grad(lambda x: funcol.reduce_scatter_tensor(x + 1, "sum", 0, g) * 2, rank_input(2 * world, 8))


@case("collectives")
def all_to_all() -> None:
    g = dist.group.WORLD
    world = dist.get_world_size()
    check_grad(lambda x: funcol.all_to_all_single_autograd(x * 2, None, None, g).cos(), rank_input(2 * world, 4))
    check_grad(lambda x: funcol.all_to_all_single(x - 1, None, None, g) * 3, rank_input(2 * world, 4))


@case("collectives")
def broadcast() -> None:
    g = dist.group.WORLD
    check_grad(lambda x: (funcol.broadcast(x.detach() * 2, 0, g) + x).tanh(), rank_input(4, 8))


@case("collectives")
def coalesced() -> None:
    g = dist.group.WORLD
    world = dist.get_world_size()
    check_grad(lambda x: sum(funcol.all_reduce_coalesced([x * 2, x.exp()], "sum", g)), rank_input(4, 8))
    check_grad(lambda x: funcol.all_gather_into_tensor_coalesced([x * 2, x + 1], g), rank_input(2, 8))
    check_grad(lambda x: funcol.reduce_scatter_tensor_coalesced([x * 2, x + 1], "sum", [0, 0], g),
               rank_input(2 * world, 8))


@case("collectives")
def in_place_all_reduce() -> None:
    """`dist.all_reduce(t)` in compiled code: Dynamo writes the functional op and a copy back.
    (Forward only: eager's in-place all-reduce has no gradient formula, the functional one has.)"""

    def fn(x: torch.Tensor) -> torch.Tensor:
        y = x.detach() * 2
        dist.all_reduce(y)
        return y.relu()

    check_grad(fn, rank_input(4, 8))


# ---------------------------------------------------------------------------------------------
# Training a small transformer: DDP, FSDP2, tensor parallelism


class Block(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.head_dim = dim // heads
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.wq, self.wk, self.wv, self.wo = (nn.Linear(dim, dim, bias=False) for _ in range(4))
        self.w1, self.w2 = nn.Linear(dim, 2 * dim), nn.Linear(2 * dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        h = self.norm1(x)
        q, k, v = (w(h).view(b, s, -1, self.head_dim).transpose(1, 2) for w in (self.wq, self.wk, self.wv))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.wo(a.transpose(1, 2).reshape(b, s, -1))
        return x + self.w2(F.gelu(self.w1(self.norm2(x))))


class Tiny(nn.Module):
    def __init__(self, dim: int = 32, heads: int = 2, layers: int = 2) -> None:
        super().__init__()
        self.layers = nn.ModuleList([Block(dim, heads) for _ in range(layers)])
        self.head = nn.Linear(dim, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


def local(t: torch.Tensor) -> torch.Tensor:
    """A DTensor's shard on this rank, a tensor as it is."""
    return t.to_local() if hasattr(t, "to_local") else t


def train_and_compare(eager: nn.Module, compiled: nn.Module, x: torch.Tensor, steps: int = 2) -> None:
    """`steps` SGD steps of both: the losses, every gradient and the updated weights match."""
    torch._dynamo.reset()  # a model compiled before (another parallel plan) must not be reused
    run = mlc(compiled)
    # foreach=False: under tensor parallelism DTensors and plain tensors are updated together,
    # which CUDA's default foreach kernels refuse
    opts = [torch.optim.SGD(m.parameters(), lr=0.1, foreach=False) for m in (eager, compiled)]
    for step in range(steps):
        losses = []
        for model, forward, opt in zip((eager, compiled), (eager, run), opts):
            opt.zero_grad()
            loss = forward(x).pow(2).mean()
            loss.backward()
            losses.append(loss.detach())
        torch.testing.assert_close(local(losses[1]), local(losses[0]), **TOL)
        for (name, p), q in zip(eager.named_parameters(), compiled.parameters()):
            torch.testing.assert_close(local(q.grad), local(p.grad), **TOL,
                                       msg=lambda m, name=name, step=step: f"step {step}, grad of {name}: {m}")
        for opt in opts:
            opt.step()


def graphs_compiled() -> int:
    from mlc.frontend import backend

    return next(backend._graph_counter)  # the number the next graph would get


@case("ddp")
def ddp_training() -> None:
    """DDP with small buckets: Dynamo's DDPOptimizer splits the graph at bucket boundaries (its
    first bucket's cap set as small as DDP's), DDP's hooks all-reduce the gradients."""
    from torch.nn.parallel import DistributedDataParallel as DDP

    dist._DEFAULT_FIRST_BUCKET_BYTES = 8192  # DDPOptimizer requires first bucket <= bucket cap
    torch.manual_seed(0)
    model = Tiny().to(DEVICE)
    eager = DDP(copy.deepcopy(model), bucket_cap_mb=0.02)
    compiled = DDP(model, bucket_cap_mb=0.02)
    before = graphs_compiled()
    train_and_compare(eager, compiled, rank_input(2, 8, 32))
    compiled_graphs = graphs_compiled() - before - 1  # forward and backward of each piece
    assert compiled_graphs >= 4 or os.environ.get("DISTRIBUTED_TEST_BACKEND"), (
        f"DDPOptimizer did not split the graph: mlc compiled {compiled_graphs} graphs")


@case("fsdp2")
def fsdp2_training() -> None:
    """FSDP2's hooks (all-gather before each block, reduce-scatter after its backward) run
    eagerly around the compiled graphs; the graphs compute on the unsharded parameters."""
    from torch.distributed.fsdp import fully_shard

    torch.manual_seed(0)
    models = [Tiny().to(DEVICE), None]
    models[1] = copy.deepcopy(models[0])
    for model in models:
        for layer in model.layers:
            fully_shard(layer)
        fully_shard(model)
    train_and_compare(models[0], models[1], rank_input(2, 8, 32))


_MESH = None


def tensor_parallel(model: Tiny, sequence_parallel: bool = False) -> Tiny:
    """Attention and MLP split column-wise then row-wise over all ranks (Megatron's plan); with
    `sequence_parallel`, activations between the blocks' halves are sharded along the sequence
    (all-gather before the column-wise layers, reduce-scatter after the row-wise ones)."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import (
        ColwiseParallel,
        PrepareModuleInput,
        RowwiseParallel,
        SequenceParallel,
        parallelize_module,
    )

    global _MESH
    if _MESH is None:
        _MESH = init_device_mesh(DEVICE.type, (dist.get_world_size(),))
    mesh = _MESH
    for block in model.layers:
        plan: dict[str, Any] = {
            "wq": ColwiseParallel(), "wk": ColwiseParallel(), "wv": ColwiseParallel(), "wo": RowwiseParallel(),
            "w1": ColwiseParallel(), "w2": RowwiseParallel(),
        }
        if sequence_parallel:  # the residual stream stays a DTensor sharded along the sequence
            # The column-wise layers all-gather the norms' sharded outputs (their input DTensor
            # says Shard(1); left Replicate, the linear would run on the shards, which CUDA's
            # sharding propagation refuses).
            gathered = ColwiseParallel(input_layouts=Shard(1))
            plan |= {
                "wq": gathered, "wk": gathered, "wv": gathered, "w1": gathered,
                "norm1": SequenceParallel(), "norm2": SequenceParallel(),
                "wo": RowwiseParallel(output_layouts=Shard(1), use_local_output=False),
                "w2": RowwiseParallel(output_layouts=Shard(1), use_local_output=False),
            }
        parallelize_module(block, mesh, plan)
    if sequence_parallel:
        parallelize_module(model, mesh, {
            "layers.0": PrepareModuleInput(input_layouts=Replicate(), desired_input_layouts=Shard(1)),
            "head": ColwiseParallel(input_layouts=Shard(1), output_layouts=Replicate()),
        })
    return model


def same_input(*shape: int) -> torch.Tensor:
    """The same tensor on every rank (tensor parallelism replicates the batch)."""
    return torch.randn(*shape, generator=torch.Generator().manual_seed(5)).to(DEVICE)


@case("tp")
def tp_training() -> None:
    torch.manual_seed(0)
    model = Tiny().to(DEVICE)
    twin = copy.deepcopy(model)
    train_and_compare(tensor_parallel(model), tensor_parallel(twin), same_input(2, 8, 32))


@case("tp")
def tp_sequence_parallel_training() -> None:
    torch.manual_seed(0)
    model = Tiny().to(DEVICE)
    twin = copy.deepcopy(model)
    # One step: Dynamo breaks this graph in many (DTensor's sequence sharding reads a size from a
    # tensor), each compiled on its own (on CPU under Triton's interpreter: slow).
    train_and_compare(tensor_parallel(model, True), tensor_parallel(twin, True), same_input(2, 8, 32), steps=1)


# ---------------------------------------------------------------------------------------------


def main() -> None:
    warnings.filterwarnings("ignore")  # torch's deprecation notices, once per rank, are not results
    group, rank, world, port = sys.argv[1], *map(int, sys.argv[2:5])
    only = sys.argv[5:]  # case names, to run a few (all when none)
    global DEVICE
    if DEVICE.type == "cuda":
        DEVICE = torch.device("cuda", rank)
        torch.cuda.set_device(DEVICE)
    dist.init_process_group("nccl" if DEVICE.type == "cuda" else "gloo", init_method=f"tcp://127.0.0.1:{port}",
                            rank=rank, world_size=world, timeout=datetime.timedelta(seconds=120))
    try:
        for name, fn in CASES[group].items():
            if only and name not in only:
                continue
            fn()
            print(f"ok {name}", flush=True)
    except BaseException:  # noqa: BLE001 - every failure must reach the parent, then exit at once
        traceback.print_exc()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)
    dist.destroy_process_group()
    # Every result is printed: leave before the interpreter's teardown, where a gloo thread still
    # joinable at exit has aborted a rank that had passed ("terminate called without an active
    # exception", exit -6, once in CI).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
