"""Convolutions in channels-last (`mlc.frontend.channels_last`): who decides, and a training step
that runs its convolutions so and still matches eager, gradients' layouts included."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

from mlc.frontend import backend, compiled_graph
from mlc.frontend.channels_last import decide

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
TOLERANCE = {"rtol": 2e-3, "atol": 2e-3} if DEVICE == "cuda" else {"rtol": 1e-4, "atol": 1e-5}  # cuDNN: TF32


class ConvNet(nn.Module):
    """A stem, a residual block of a 3x3 and a 1x1 convolution (whose row-major weight is also
    channels-last: cuDNN takes the format of its input) with batch norms, a pooled head."""

    def __init__(self, channels: int = 96, groups: int = 1):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, channels, 3, padding=1, bias=False), nn.BatchNorm2d(channels), nn.ReLU())
        self.block = nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1, bias=False, groups=groups),
                                   nn.BatchNorm2d(channels), nn.ReLU(),
                                   nn.Conv2d(channels, channels, 1, bias=False), nn.BatchNorm2d(channels))
        self.head = nn.Linear(channels, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stem(x)
        x = torch.relu(x + self.block(x))
        return self.head(x.mean((2, 3)))


def graph_of(model: nn.Module, x: torch.Tensor) -> torch.fx.Graph:
    return torch.fx.experimental.proxy_tensor.make_fx(model)(x).graph


@pytest.mark.parametrize("channels, groups, expected", [
    (96, 1, "3 convolutions in channels-last"),
    (32, 1, "every convolution has 64 channels or fewer"),
    (96, 2, "a grouped convolution with more than one input channel per group"),
])
def test_decide(channels: int, groups: int, expected: str) -> None:
    decision = decide(graph_of(ConvNet(channels, groups).eval(), torch.randn(1, 3, 8, 8)))
    assert decision.reason == expected
    assert decision.channels_last == expected.endswith("channels-last")


class ConvolutionOperands(TorchDispatchMode):
    """Records each convolution's 4-D operands and results, as they come at run time, in the
    compiled graphs' calls (`watch`: Dynamo compiles nothing under a dispatch mode)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, torch.Tensor]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func in (torch.ops.aten.convolution.default, torch.ops.aten.convolution_backward.default):
            results = out if isinstance(out, tuple) else (out,)
            self.seen += [(f"{func.__name__} {what}", t) for what, ts in (("operand", args), ("result", results))
                          for t in ts if isinstance(t, torch.Tensor) and t.dim() == 4]
        return out

    def watch(self, monkeypatch) -> None:
        call_boxed = compiled_graph.CompiledGraph.call_boxed

        def watched(graph, args):
            with self:
                return call_boxed(graph, args)

        monkeypatch.setattr(compiled_graph.CompiledGraph, "call_boxed", watched)

    def not_channels_last(self) -> list[tuple[str, tuple[int, ...], tuple[int, ...]]]:
        return [(what, tuple(t.shape), t.stride()) for what, t in self.seen
                if not t.is_contiguous(memory_format=torch.channels_last)]


def test_a_training_step_runs_its_convolutions_in_channels_last(monkeypatch) -> None:
    """Every convolution reads channels-last operands, in the graphs and at run time: the
    kernels feeding one (the output gradient of a batch norm's backward, too) store their
    results in the strides it was traced with, so cuDNN converts nothing inside the call."""
    torch.manual_seed(0)
    model = ConvNet().train().to(DEVICE)
    x = torch.randn(3, 3, 7, 5, device=DEVICE)  # odd sizes: masked channels-last tiles
    graphs: list[tuple[str, torch.fx.GraphModule]] = []
    compile_graph = backend.compile_graph

    def recorded(gm, inputs, kind="forward", settings=None):
        graphs.append((kind, gm))
        return compile_graph(gm, inputs, kind, settings)

    monkeypatch.setattr(backend, "compile_graph", recorded)
    monkeypatch.delenv("MLC_CHANNELS_LAST", raising=False)  # on by default
    compiled = torch.compile(copy.deepcopy(model), backend=backend.mlc_backend, fullgraph=True)
    convs = ConvolutionOperands()
    convs.watch(monkeypatch)
    compiled(x).sum().backward()
    # forward: 3 x (input, weight, result); backward: 3 x (output gradient, input, weight) and
    # 5 gradients (the stem's input gradient is not asked for)
    assert len(convs.seen) == 3 * 3 + 3 * 3 + 5, convs.not_channels_last()
    assert not convs.not_channels_last(), convs.not_channels_last()
    model(x).sum().backward()
    for name, p in compiled._orig_mod.named_parameters():
        expected = dict(model.named_parameters())[name].grad
        torch.testing.assert_close(p.grad, expected, **TOLERANCE)
        laid_out = [st for n, st in zip(p.grad.shape, p.grad.stride()) if n > 1]
        assert laid_out == [st for n, st in zip(expected.shape, expected.stride()) if n > 1], name
    # a gradient whose layout differs only in size-1 strides (the 1x1 weight's) is not copied back
    clones_back = [n.args[0].meta["val"].shape for n in graphs[1][1].graph.output_node().all_input_nodes
                   if n.target is torch.ops.aten.clone.default]
    assert clones_back and all(shape[-1] > 1 for shape in clones_back), clones_back
    assert [kind for kind, _ in graphs] == ["forward", "backward"]
    # the backward copies the weights and the image into channels-last again; it saves no copy
    inputs = {tuple(t.shape) for t in [x, *model.parameters()] if t.dim() == 4}
    saved = [n.name for n in graphs[1][1].graph.find_nodes(op="placeholder")
             if tuple(n.meta["val"].shape) in inputs and not n.name.startswith("primals")]
    assert not saved, saved
    for kind, gm in graphs:
        convs = [n for n in gm.graph.nodes if n.target in (torch.ops.aten.convolution.default,
                                                          torch.ops.aten.convolution_backward.default)]
        assert convs, kind
        for conv in convs:
            for arg in conv.args[:2]:
                assert arg.meta["val"].is_contiguous(memory_format=torch.channels_last), (kind, conv, arg)


@pytest.mark.parametrize("setting", [None, "0"])
def test_inference_runs_its_convolutions_in_channels_last(monkeypatch, setting) -> None:
    """Without a backward the activations between convolutions are not graph outputs, whose
    promised strides would keep them channels-last: the operand strides do, and no convolution's
    result comes back in another layout than the graph was traced with. `MLC_CHANNELS_LAST=0`
    leaves the convolutions as traced (row-major)."""
    torch._dynamo.reset()  # a new module may reuse a freed one's id, and Dynamo its compiled graph
    torch.manual_seed(0)
    model = ConvNet().eval().to(DEVICE)
    x = torch.randn(3, 3, 7, 5, device=DEVICE)  # odd sizes: masked channels-last tiles
    if setting is None:
        monkeypatch.delenv("MLC_CHANNELS_LAST", raising=False)
    else:
        monkeypatch.setenv("MLC_CHANNELS_LAST", setting)
    compiled = torch.compile(copy.deepcopy(model), backend=backend.mlc_backend, fullgraph=True)
    convs = ConvolutionOperands()
    convs.watch(monkeypatch)
    with torch.no_grad():
        out = compiled(x)
        torch.testing.assert_close(out, model(x), **TOLERANCE)
    assert len(convs.seen) == 3 * 3, convs.not_channels_last()
    if setting is None:
        assert not convs.not_channels_last(), convs.not_channels_last()
    else:  # the 1x1 weight is both; the rest row-major
        assert len(convs.not_channels_last()) == 3 * 3 - 1, convs.not_channels_last()
