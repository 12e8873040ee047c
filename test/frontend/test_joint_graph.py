"""What a training step's forward saves for its backward: no more than Inductor's partitioner
saves for the same graph (`mlc.frontend.joint_graph`), and the no-op removal that gets it there."""

from __future__ import annotations

import functools

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from mlc.frontend import backend
from mlc.frontend.joint_graph import remove_noop_ops


class Block(nn.Module):
    """A GPT-2 block with its language-model head and loss: layer norms, causal attention,
    a tanh-gelu MLP, residuals, cross-entropy over the vocabulary."""

    def __init__(self, d: int = 64, heads: int = 4, vocab: int = 96):
        super().__init__()
        self.ln1, self.ln2, self.ln_f = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.heads = heads

    def forward(self, x: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for z in self.qkv(self.ln1(x)).split(d, -1))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(a)
        x = x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))
        logits = self.head(self.ln_f(x)).float()
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), labels.view(-1))


def saved_tensors(compile_with) -> dict[str, tuple[tuple[int, ...], torch.dtype, int]]:
    """The backward's inputs other than the incoming gradients (what the forward saved), by name:
    shape, dtype and bytes; `compile_with(record)` compiles and steps a Block whose graphs go to
    `record(kind, graph)`."""
    graphs: list[tuple[str, torch.fx.GraphModule]] = []
    torch._dynamo.reset()
    compile_with(lambda kind, graph: graphs.append((kind, graph)))
    (bw,) = [g for kind, g in graphs if kind == "backward"]
    saved = {}
    for node in bw.graph.find_nodes(op="placeholder"):
        val = node.meta["val"]
        if not node.name.startswith("tangents") and isinstance(val, torch.Tensor):
            saved[node.name] = (tuple(val.shape), val.dtype, val.numel() * val.element_size())
    return saved


def step(model_backend, dtype: torch.dtype) -> None:
    torch.manual_seed(0)
    model = Block().to(dtype)
    x = torch.randn(2, 32, 64, dtype=dtype, requires_grad=True)
    labels = torch.randint(0, 96, (2, 32))
    torch.compile(model, backend=model_backend)(x, labels).backward()


def inductor_saves(record) -> None:
    from torch._functorch.aot_autograd import make_boxed_func
    from torch._inductor.compile_fx import compile_fx

    def inner(gm, inputs, **kwargs):  # Inductor's partition, the graphs run eagerly
        record("backward" if kwargs.get("is_backward") else "forward", gm)
        return make_boxed_func(gm)

    return functools.partial(compile_fx, inner_compile=inner)


def mlc_saves(record, monkeypatch):
    def compile_graph(gm, inputs, kind="forward", settings=None):  # mlc's partition, run eagerly
        record(kind, gm)
        return gm

    monkeypatch.setattr(backend, "compile_graph", compile_graph)
    return backend.mlc_backend


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_a_transformer_block_saves_no_more_than_inductor(dtype: torch.dtype, monkeypatch) -> None:
    ours = saved_tensors(lambda record: step(mlc_saves(record, monkeypatch), dtype))
    theirs = saved_tensors(lambda record: step(inductor_saves(record), dtype))
    ours_bytes, theirs_bytes = (sum(b for *_, b in s.values()) for s in (ours, theirs))
    assert ours_bytes <= theirs_bytes, f"mlc saves {ours}\nInductor saves {theirs}"
    # The attention output is saved once: not again through autograd's alias of it.
    assert not [name for name in ours if name.startswith("alias")]


def stem_step(model_backend) -> None:
    """ResNet's stem in a training step: convolution, batch norm, ReLU, a 3x3 max pool of stride 2."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 7, 2, 3, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
                          nn.MaxPool2d(3, 2, 1), nn.Conv2d(8, 8, 1))
    torch.compile(model, backend=model_backend)(torch.randn(2, 3, 32, 32)).sum().backward()


def test_a_max_pool_saves_its_offsets_not_its_input_or_indices(monkeypatch) -> None:
    """The pool's backward reads neither the activation it pooled nor int64 indices: the forward
    saves the window offsets as int8 (decompositions.py) beside the pooled values (the last
    convolution's input), and the convolution's output for batch norm's backward, from which
    the ReLU is recomputed. As Inductor's partition saves."""
    ours = saved_tensors(lambda record: stem_step(mlc_saves(record, monkeypatch)))
    theirs = saved_tensors(lambda record: stem_step(inductor_saves(record)))
    assert sum(b for *_, b in ours.values()) <= sum(b for *_, b in theirs.values()), (ours, theirs)
    activations = [(shape, dtype) for shape, dtype, _ in ours.values() if shape[:2] == (2, 8)]
    assert len(activations) == 3 and set(activations) == {
        ((2, 8, 16, 16), torch.float32), ((2, 8, 8, 8), torch.float32), ((2, 8, 8, 8), torch.int8)}, ours


def test_remove_noop_ops_keeps_an_output_apart_from_an_input() -> None:
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    same = graph.call_function(torch.ops.aten.alias.default, (x,))
    inner = graph.call_function(torch.ops.aten.clone.default, (x,))
    used = graph.call_function(torch.ops.aten.sin.default, (inner,))
    graph.output((same, used))
    val = torch.empty(4, 8, device="meta")
    for node in (x, same, inner):
        node.meta["val"] = val if node is x else torch.empty_like(val)
    x.meta["val"] = val
    assert remove_noop_ops(graph) == 1  # the clone inside goes; the returned alias stays
    assert [n.target for n in graph.nodes if n.op == "call_function"] == [torch.ops.aten.alias.default,
                                                                         torch.ops.aten.sin.default]
