"""AOTAutograd's joint forward-backward graph, cleaned before it is split (Inductor's
`joint_graph_passes`), and the split itself.

What the forward saves for the backward is decided on the joint graph by the min-cut
partitioner, which sees every node as a tensor of its own. An op that only renames its input,
`alias(x)`, a `clone(x)` with x's layout, a `_to_copy(x)` to x's dtype, makes the partitioner
save both names' tensors where one would do. Autograd's formula for scaled-dot-product
attention saves its output through an `alias`, so that the forward kept the attention output
twice, once as the alias and once as the projection's input view (which, from the output
itself, the backward would recompute):

    attn = _scaled_dot_product_flash_attention(q, k, v)[0]
    out = alias(attn)                     # saved
    x = view(permute(attn), [b*t, d])     # saved too: `attn` itself is not
  after `remove_noop_ops`:
    attn = _scaled_dot_product_flash_attention(q, k, v)[0]   # saved; x recomputed from it

An op is removed where its result has its input's size, strides, dtype and device, as long as
that does not make an output the same tensor as an input or as another output (the caller may
hold both and write one).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.fx
import torch.utils._pytree as pytree
from torch.multiprocessing.reductions import StorageWeakRef

from mlc.frontend.channels_last import to_channels_last

aten = torch.ops.aten


def _copy_to_own_dtype(node: torch.fx.Node) -> bool:
    """`_to_copy(x, dtype=x.dtype)`: no device, layout or memory-format change asked."""
    return set(node.kwargs) <= {"dtype"}


NOOPS = {
    aten.alias.default: lambda node: True,
    aten.clone.default: lambda node: True,
    aten._to_copy.default: _copy_to_own_dtype,
}
"""Ops that are a rename of their first argument where their result's metadata is its own,
with what else must hold of the call."""


def remove_noop_ops(graph: torch.fx.Graph) -> int:
    """Replace each `NOOPS` op whose result is laid out as its input by the input; the count."""
    placeholders = list(graph.find_nodes(op="placeholder"))
    output = graph.output_node()
    outputs = {r for r in pytree.tree_leaves(output.args) if isinstance(r, torch.fx.Node)}
    input_storages = {_storage(n) for n in placeholders} - {None}
    output_storages = {_storage(n) for n in outputs} - {None}
    removed = 0
    for node in list(graph.nodes):
        rule = NOOPS.get(node.target)
        src = node.args[0] if node.args else None
        if rule is None or not isinstance(src, torch.fx.Node) or not _same_layout(node, src) or not rule(node):
            continue
        if node in outputs and (src in outputs or src in placeholders or _storage(src) in input_storages | output_storages):
            continue  # the output would become an input, or another output
        node.replace_all_uses_with(src)
        graph.erase_node(node)
        removed += 1
    return removed


def partition(joint: torch.fx.GraphModule, joint_inputs: Sequence[Any], channels_last: bool = False,
              **kwargs: Any) -> tuple[torch.fx.GraphModule, torch.fx.GraphModule]:
    """AOTAutograd's `partition_fn`: the joint graph's convolutions put in channels-last where
    asked and Inductor's rules say so (`mlc.frontend.channels_last`), its no-ops removed, then Inductor's min-cut
    partitioner (the forward saves few, small tensors and the backward recomputes the cheap
    pointwise ops from them, fused into its kernels, where the default partitioner saves every
    intermediate the backward reads: a float32 log-softmax over the vocabulary, written and
    read back once per step)."""
    from functorch.compile import min_cut_rematerialization_partition

    if channels_last:
        to_channels_last(joint, joint_inputs)
    if remove_noop_ops(joint.graph):
        joint.recompile()
    return min_cut_rematerialization_partition(joint, joint_inputs, compiler="inductor", **kwargs)


def _same_layout(a: torch.fx.Node, b: torch.fx.Node) -> bool:
    x, y = a.meta.get("val"), b.meta.get("val")
    if not isinstance(x, torch.Tensor) or not isinstance(y, torch.Tensor):
        return False
    return (x.dtype == y.dtype and x.device == y.device and x.shape == y.shape and x.stride() == y.stride()
            and x.storage_offset() == y.storage_offset())


def _storage(node: torch.fx.Node) -> StorageWeakRef | None:
    val = node.meta.get("val")
    return StorageWeakRef(val.untyped_storage()) if isinstance(val, torch.Tensor) else None
