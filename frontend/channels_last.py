"""Convolutions in channels-last: the layout optimization of Inductor's `GraphLowering`, on the FX graph.

cuDNN's convolutions on tensor cores work in NHWC. Given NCHW tensors it transposes every input
to NHWC and every output back (`nchwToNhwcKernel`, `nhwcToNchwKernel`: 1.1 ms of a 5.1 ms
ResNet-50 training step on the H200, bf16, batch 16). `to_channels_last` asks for the
channels-last layout at each convolution instead: its input, weight (and in a backward its
output gradient) are cloned into channels-last where they are not already, and the graph's
metadata is propagated again, so that the batch norms, activations and residual adds between
two convolutions (whose strides follow their inputs, as eager's do) are computed in
channels-last and only the graph's inputs (images, weights) are converted, once each:

    %conv = convolution(%x, %w, ...)                   # NCHW
  becomes
    %x_cl = clone(%x, memory_format=channels_last)     # a no-op, removed, where %x already is
    %w_cl = clone(%w, memory_format=channels_last)
    %conv = convolution(%x_cl, %w_cl, ...)             # NHWC, and so is what reads it

The graph's outputs keep the layout they were traced with (a weight's gradient, a returned
feature map): one whose layout changed is cloned back (strides of size-1 dims do not count: a
1x1 convolution's weight is row-major and channels-last at once). `decide` says whether a graph is worth
it, with Inductor's rules (`decide_layout_opt`) and the reason.

The fake tensors only promise the layouts; three things make the real tensors keep the promise.
The importer records each convolution's and pooling's operand strides (`operand_strides`), and
realize stores a computed operand in them, a clone of an input included. Realize stores what no
reader needs in a given layout in the order its loads walk memory (Inductor's `get_fill_order`),
so a residual add between two convolutions stays channels-last and fuses with its readers. And
a clone that is a no-op once the layers before it are channels-last is removed.

A copy of a graph input (a weight, an image) is marked for recomputation: the partitioner then
copies the input again in the backward, which holds the input anyway, instead of saving the copy
from the forward (Inductor's convolutions copy their weights in both; ResNet-50 saved 27 MB of
such copies, bf16, batch 16).

On by default (`MLC_CHANNELS_LAST=0`, `options={"channels_last": False}`: off). Measured on the
H200 (ResNet-50, bf16, batch 16), GPU ms per call: training 5.13 without, 3.96 with (Inductor
4.03); inference 1.37 without, 1.00 with (Inductor 0.99).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.fx
import torch.utils._pytree as pytree
from torch.utils.checkpoint import CheckpointPolicy

aten = torch.ops.aten
CONVOLUTIONS = {aten.convolution.default: (0, 1), aten.convolution_backward.default: (0, 1, 2)}
"""The convolution ops, with the positions of the 4-D tensor arguments asked for in channels-last."""


@dataclass(frozen=True)
class Decision:
    channels_last: bool
    reason: str


def decide(graph: torch.fx.Graph) -> Decision:
    """Whether the graph's convolutions should run in channels-last (Inductor's rules)."""
    convs = [n for n in graph.nodes if n.target is aten.convolution.default]
    if not convs:
        return Decision(False, "no convolution")
    weights = [_val(n.args[1]) for n in convs]
    if any(w is None or w.dim() != 4 for w in weights):
        return Decision(False, "a convolution that is not 2-D")
    if any(not all(isinstance(d, int) for d in w.shape) for w in weights if w is not None):
        return Decision(False, "a convolution of symbolic sizes")
    if len(graph.nodes) >= 300 * len(convs):
        return Decision(False, f"{len(convs)} convolutions among {len(graph.nodes)} nodes: too few to pay")
    if any(n.args[-1] > 1 and w.size(1) > 1 for n, w in zip(convs, weights)):
        return Decision(False, "a grouped convolution with more than one input channel per group")
    if any(w.size(0) * 2 <= w.size(1) and w.size(2) > 1 for w in weights):
        return Decision(False, "a convolution with half as many output channels as input channels")
    if all(w.size(0) <= 64 and w.size(1) <= 64 for w in weights):
        return Decision(False, "every convolution has 64 channels or fewer")
    return Decision(True, f"{len(convs)} convolutions in channels-last")


def to_channels_last(gm: torch.fx.GraphModule, inputs: Any) -> Decision:
    """Rewrite `gm` (whose nodes carry fake `val`s, for `inputs`) as the module docstring says,
    where `decide` says so; the decision."""
    decision = decide(gm.graph)
    if not decision.channels_last:
        return decision
    graph = gm.graph
    output = graph.output_node()
    promised = {n: _val(n) for n in pytree.tree_leaves(output.args) if isinstance(n, torch.fx.Node)}
    if any(v is not None and not _is_dense(v) for v in promised.values()):
        return Decision(False, "an output whose strides are neither contiguous nor channels-last")
    clones = []
    for node in list(graph.nodes):
        for pos in CONVOLUTIONS.get(node.target, ()):
            arg = node.args[pos]
            value = _val(arg) if isinstance(arg, torch.fx.Node) else None
            if value is None or value.dim() != 4 or value.is_contiguous(memory_format=torch.channels_last):
                continue
            with graph.inserting_before(node):
                clone = graph.call_function(aten.clone.default, (arg,), {"memory_format": torch.channels_last})
            node.update_arg(pos, clone)
            clones.append(clone)
    try:
        _propagate(gm, inputs)
    except Exception as e:  # noqa: BLE001 (an op whose meta rejects the new strides: a view)
        for clone in clones:
            clone.replace_all_uses_with(clone.args[0])
            graph.erase_node(clone)
        _propagate(gm, inputs)
        return Decision(False, f"the graph does not take channels-last strides: {type(e).__name__}: {str(e).splitlines()[0][:120]}")
    for clone in clones:
        source = _val(clone.args[0])
        if source is not None and source.is_contiguous(memory_format=torch.channels_last):
            clone.replace_all_uses_with(clone.args[0])  # already channels-last: the layers before are
            graph.erase_node(clone)
        elif clone.args[0].op == "placeholder":  # a weight or an image: the backward copies it again
            clone.meta["recompute"] = CheckpointPolicy.MUST_RECOMPUTE
    for node, value in promised.items():
        now = _val(node)
        if value is None or now is None or _same_layout(now, value):
            continue
        fmt = torch.channels_last if value.is_contiguous(memory_format=torch.channels_last) else torch.contiguous_format
        with graph.inserting_before(output):
            back = graph.call_function(aten.clone.default, (node,), {"memory_format": fmt})
        back.meta["val"] = value
        output.replace_input_with(node, back)
    graph.lint()
    gm.recompile()
    return decision


def _propagate(gm: torch.fx.GraphModule, inputs: Any) -> None:
    """Recompute every node's fake `val` (the clones change the strides of what follows)."""
    from torch._guards import detect_fake_mode
    from torch.fx.passes.fake_tensor_prop import FakeTensorProp

    mode = detect_fake_mode(inputs)
    gm.recompile()
    FakeTensorProp(gm, mode).propagate_dont_convert_inputs(*inputs)


def _same_layout(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether `a` and `b` (of one shape) lay their elements out alike: strides equal wherever
    a dim has more than one element. A 1x1 convolution's weight gradient is both row-major and
    channels-last ([128, 64, 1, 1]: strides [64, 1, 1, 1] or [64, 1, 64, 64]); copying it
    "back" would be a kernel that moves nothing (ResNet-50 has 36 of them), and autograd's
    layout contract ignores those strides too."""
    return all(n == 1 or x == y for n, x, y in zip(a.shape, a.stride(), b.stride()))


def _is_dense(value: torch.Tensor) -> bool:
    return value.dim() != 4 or value.is_contiguous() or value.is_contiguous(memory_format=torch.channels_last)


def _val(node: Any) -> Any:
    value = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return value if isinstance(value, torch.Tensor) else None
