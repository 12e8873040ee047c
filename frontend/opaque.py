"""Graph inputs that are objects, not tensors, which a graph only passes through.

A tensor-parallel model's AOTAutograd graphs take DTensor's `DeviceMesh` as an input (a
`FakeScriptObject` while tracing) and return it untouched: the forward saves it for the
backward, the backward returns it beside each DTensor gradient. Nothing in the graph computes
with it (the collectives name their process group by a string), so mlc compiles the graph
without such inputs and hands each back where the graph returns it:

    def forward(self, primals_1, primals_4, ...):     # primals_4: a DeviceMesh
        ...
        return (view_61, primals_1, ..., primals_4)

compiles as the same graph without `primals_4` returning None in its place, and the call puts
the argument there. An object input that an op reads stays, for the importer to refuse.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.fx


def _is_object(value: Any) -> bool:
    from torch._library.fake_class_registry import FakeScriptObject
    from torch._library.opaque_object import is_opaque_value

    return isinstance(value, (torch.ScriptObject, FakeScriptObject)) or is_opaque_value(value)


class PassedThrough:
    """A compiled graph called without the dropped inputs; each returned one put back."""

    def __init__(self, compiled: Callable[..., Any], dropped: Sequence[int], returned: dict[int, int]):
        self.compiled = compiled
        self.dropped = set(dropped)
        self.returned = returned  # output position -> input position

    def __call__(self, *args: Any) -> Any:
        return self.call_boxed(list(args))

    def call_boxed(self, args: list[Any]) -> Any:
        """As `CompiledGraph.call_boxed`: `args` is emptied."""
        kept = [a for k, a in enumerate(args) if k not in self.dropped]
        returned = {pos: args[k] for pos, k in self.returned.items()}
        args.clear()
        outputs = self.compiled.call_boxed(kept)
        flat = list(outputs)
        for pos, value in returned.items():
            flat[pos] = value
        return type(outputs)(flat) if isinstance(outputs, tuple) else flat

    def __getattr__(self, name: str) -> Any:  # graph_id, source, ... of the compiled graph
        return getattr(self.compiled, name)


def compile_without_objects(
    gm: torch.fx.GraphModule, example_inputs: Sequence[Any],
    compile: Callable[[torch.fx.GraphModule, Sequence[Any]], Callable[..., Any]],
) -> Callable[..., Any]:
    """`compile(gm, example_inputs)`, with the object inputs that `gm` only returns (at the top
    level of its output tuple) taken out of the graph and passed around it."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    output = gm.graph.output_node()
    results = output.args[0]
    dropped = [
        k for k, p in enumerate(placeholders)
        if _is_object(p.meta.get("val")) and all(u is output for u in p.users)
        and isinstance(results, (tuple, list))
        and all(isinstance(r, torch.fx.Node) or not _holds(r, p) for r in results)
    ]
    if not dropped:
        return compile(gm, example_inputs)
    graph = torch.fx.Graph()
    env: dict[torch.fx.Node, Any] = {placeholders[k]: None for k in dropped}
    for node in gm.graph.nodes:
        if node not in env:
            env[node] = graph.node_copy(node, lambda a: env[a])
    gone = {placeholders[k]: k for k in dropped}
    returned = {pos: gone[r] for pos, r in enumerate(results) if r in gone}
    inputs = [x for k, x in enumerate(example_inputs) if k not in set(dropped)]
    return PassedThrough(compile(torch.fx.GraphModule(gm, graph), inputs), dropped, returned)


def _holds(value: Any, node: torch.fx.Node) -> bool:
    """Whether a nested output value mentions `node` (which only the top level may)."""
    if isinstance(value, (tuple, list)):
        return any(_holds(v, node) for v in value)
    if isinstance(value, dict):
        return any(_holds(v, node) for v in value.values())
    return value is node
