"""The FX graph made ready for the importer, and the nesting of its outputs.

Before an aten graph is imported (`mlc.frontend.importer`), the backend rewrites what the
importer does not take: each input gets the strides it is called with (`strides_from_examples`),
effect tokens go (`effects_inlined`), writes into inputs become outputs that the compiled
graph copies back (`input_mutations`), and the numbers a graph reads out of its tensors are split
off into a host epilogue run by torch (`host_epilogue`). `is_aten_graph` says whether a graph
is aten already (else AOTAutograd makes it so); `output_leaves` and `rebuild` flatten and
rebuild the nested lists and tuples a graph returns.
"""

from __future__ import annotations

import copy
import operator
from collections.abc import Sequence
from typing import Any

import torch
import torch.fx


def strides_from_examples(gm: torch.fx.GraphModule, example_inputs: Sequence[Any]) -> None:
    """Give each input the strides of its example where both are static and they differ: the
    graph is called with those (a backward's saved tensors as the forward returned them, which
    AOTAutograd restrides the examples to, see `compiled_graph.report_output_strides`; its
    nodes keep the traced strides). The importer reads the strides from the nodes."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for node, example in zip(placeholders, example_inputs):
        val = node.meta.get("val")
        if not (isinstance(val, torch.Tensor) and isinstance(example, torch.Tensor)):
            continue
        static = all(isinstance(d, int) for d in (*val.shape, *val.stride(), *example.shape, *example.stride()))
        if static and tuple(val.shape) == tuple(example.shape) and val.stride() != example.stride():
            node.meta["val"] = val.as_strided(val.shape, example.stride())


def effects_inlined(gm: torch.fx.GraphModule) -> tuple[torch.fx.GraphModule, list[int]]:
    """`gm` with each `with_effects(token, op, *args)` as the plain call `op(*args)`.

    AOTAutograd threads a token through ops registered as having side effects (linalg's
    `_linalg_check_errors` after a factorization) and returns it as an extra output; the
    token out of a `with_effects` becomes the token that went in. An op that returns nothing
    is then dropped by the importer, as trace-time checks are: mlc's kernels do not raise on
    invalid input (a singular matrix gives what the factorization gives, with eager's error).
    Also returns the positions of the token inputs, which AOTAutograd passes as None.
    """
    with_effects = torch.ops.higher_order.with_effects
    if not any(n.target is with_effects for n in gm.graph.nodes):
        return gm, []
    graph = copy.deepcopy(gm.graph)
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    tokens = set()
    for node in [n for n in graph.nodes if n.target is with_effects]:
        token, op, *args = node.args
        if token in placeholders:
            tokens.add(placeholders.index(token))
        with graph.inserting_before(node):
            call = graph.call_function(op, tuple(args), dict(node.kwargs))
        values = node.meta.get("val") or (None,)
        call.meta["val"] = values[1] if len(values) == 2 else (tuple(values[1:]) if len(values) > 2 else None)
        for user in list(node.users):  # getitem(node, k): the token for k = 0, else result k - 1
            k = user.args[1]
            if k == 0:
                user.replace_all_uses_with(token)
            elif len(values) == 2:
                user.replace_all_uses_with(call)
            else:
                user.args = (call, k - 1)
                continue
            graph.erase_node(user)
        graph.erase_node(node)
    return torch.fx.GraphModule(gm, graph), sorted(tokens)


def input_mutations(gm: torch.fx.GraphModule) -> tuple[torch.fx.GraphModule, list[int]]:
    """`gm` with each `copy_(input, value)` that ends it as one more output, `value`; and the
    positions of those inputs, in the order of the outputs appended.

    AOTAutograd leaves such copies in the graph where asked to (`keep_inference_input_mutations`):
    a batch norm's running statistics, a cache updated in place. The kernels compute the new
    values; the compiled graph's call writes them into the inputs after its kernels, all of them
    in a few `_foreach_copy_` launches (`compiled_graph.relaid`: inside what a CUDA graph
    captures, so that a replay writes them too), rather than AOTAutograd's runtime copying each
    one outside the graph. A copy the graph returns returns its input. A copy whose value
    differs in shape or dtype, or whose result another node uses, stays for the importer to
    refuse.
    """
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    output = gm.graph.output_node()
    copies = [n for n in gm.graph.nodes
              if n.target is torch.ops.aten.copy_.default and _writes_back(n, placeholders, output)]
    if not copies or not isinstance(output.args[0], (tuple, list)):
        return gm, []
    graph = copy.deepcopy(gm.graph)
    mapped = dict(zip(gm.graph.nodes, graph.nodes))
    written = {c: c.args[0] for c in copies}  # a copy returned is its input (`copy_` returns self), written by then
    results = [mapped[written.get(r, r)] if isinstance(r, torch.fx.Node) else r for r in output.args[0]]
    graph.output_node().args = (type(output.args[0])([*results, *(mapped[n.args[1]] for n in copies)]),)
    for node in copies:
        graph.erase_node(mapped[node])
    return torch.fx.GraphModule(gm, graph), [placeholders.index(n.args[0]) for n in copies]


def _writes_back(node: torch.fx.Node, placeholders: list[torch.fx.Node], output: torch.fx.Node) -> bool:
    """`copy_(input, value)` of a value of the input's shape and dtype, whose result only the
    graph's outputs use (the input, which a function returns after writing it)."""
    target, value = node.args[:2]
    if (any(user is not output for user in node.users) or node.kwargs or target not in placeholders
            or not isinstance(value, torch.fx.Node)):
        return False
    t, v = target.meta.get("val"), value.meta.get("val")
    return (isinstance(t, torch.Tensor) and isinstance(v, torch.Tensor) and t.dtype == v.dtype
            and t.device == v.device and tuple(t.shape) == tuple(v.shape))


_HOST_OPS = (
    torch.ops.aten._local_scalar_dense.default,  # `.item()`
    torch.ops.aten.scalar_tensor.default,  # Dynamo's wrapping of a returned number
    torch.ops.aten._assert_scalar.default,  # Dynamo's checks of a number's range
)


def host_epilogue(gm: torch.fx.GraphModule) -> tuple[torch.fx.GraphModule, torch.fx.GraphModule | None]:
    """Split off the numbers a graph reads out of its tensors (`.item()`) and only returns.

    Such a number is a host value: mlc compiles the tensor part, which returns the tensors read,
    and the host part runs on its results as eager runs it (the `.item()`s, Dynamo's range checks
    on them, `scalar_tensor` of a returned number). A graph that computes tensors from such a
    number (a size from `.tolist()`) is returned whole, for the importer to report.
    """
    items = [n for n in gm.graph.nodes if n.target is torch.ops.aten._local_scalar_dense.default]
    host: list[torch.fx.Node] = []
    seen = set(items)
    for node in gm.graph.nodes:  # topological: every user of a host node is host too
        if node in seen or any(isinstance(a, torch.fx.Node) and a in seen for a in node.all_input_nodes):
            if node.op == "output":
                continue
            if isinstance(node.target, torch._ops.OpOverload) and node.target not in _HOST_OPS:
                return gm, None  # a tensor op on a number: data-dependent, not host work
            seen.add(node)
            host.append(node)
    if not host:
        return gm, None
    hosted = set(host)
    output = gm.graph.output_node()
    leaves = [leaf for leaf in output_leaves(output.args[0]) if isinstance(leaf, torch.fx.Node)]
    boundary = list(dict.fromkeys(
        [leaf for leaf in leaves if leaf not in hosted]
        + [a for n in host for a in n.all_input_nodes if a not in hosted]
    ))
    device = copy.deepcopy(gm.graph)
    copies = dict(zip(gm.graph.nodes, device.nodes))
    device.output_node().args = (tuple(copies[n] for n in boundary),)
    for node in reversed(host):
        device.erase_node(copies[node])
    epilogue = torch.fx.Graph()
    env = {n: epilogue.placeholder(f"result_{i}") for i, n in enumerate(boundary)}
    for node in host:
        env[node] = epilogue.node_copy(node, lambda a: env[a])
    epilogue.output(torch.fx.node.map_arg(output.args[0], lambda a: env[a]))
    return torch.fx.GraphModule(gm, device), torch.fx.GraphModule(gm, epilogue)


def is_aten_graph(gm: torch.fx.GraphModule) -> bool:
    """Whether `gm` is already an aten graph with fake values, ready for the importer."""
    for node in gm.graph.nodes:
        if node.op in ("call_module", "call_method"):
            return False
        if node.op == "placeholder" and "val" not in node.meta:
            return False
        if node.op == "call_function" and not (
            isinstance(node.target, torch._ops.OpOverload) or node.target is operator.getitem
        ):
            return False
    return True


def output_leaves(structure: Any) -> list[Any]:
    """The leaves of the output structure, in `rebuild`'s order."""
    if isinstance(structure, (tuple, list)):
        return [leaf for s in structure for leaf in output_leaves(s)]
    return [structure]


def rebuild(structure: Any, flat: Any) -> Any:
    """The graph's output structure (nested lists/tuples of nodes) with values in its leaves."""
    if isinstance(structure, tuple):
        return tuple(rebuild(s, flat) for s in structure)
    if isinstance(structure, list):  # FX's immutable_list included
        return [rebuild(s, flat) for s in structure]
    return next(flat)
