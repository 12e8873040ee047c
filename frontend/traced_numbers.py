"""Dynamo graphs whose symbolic inputs are not only sizes: a Python number Dynamo made a tensor
input and reads back with `.item()` (a LayerNorm's eps under `dynamic=True`), a SymFloat or a
SymBool. mlc compiles sizes symbolically, once for all of them, but numbers become constants:

* every traced number known (`_traced_numbers`): one compile with them inlined and the sizes
  symbolic, whose calls check the numbers (`NumbersChecked`), and any other numbers go to
* `Respecializing`: one compile per concrete signature, made at call time, every value bound.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.fx

Compiler = Callable[[torch.fx.GraphModule, Sequence[Any]], Callable[..., Any]]


def has_symbolic_numbers(gm: torch.fx.GraphModule, example_inputs: Sequence[Any]) -> bool:
    """Whether the graph is symbolic in anything but sizes: what this module compiles."""
    return _is_symbolic(example_inputs) and not _symbolic_sizes_only(gm, example_inputs)


def compile_with_numbers(gm: torch.fx.GraphModule, example_inputs: Sequence[Any], compile: Compiler
                         ) -> Callable[..., Any]:
    """`gm` compiled by `compile` with its traced numbers as constants, checked at each call, or
    respecialised per call signature where a number is not known."""
    numbers = _traced_numbers(gm, example_inputs)
    if numbers is None:
        return Respecializing(gm, compile)
    specialized, kept = _numbers_inlined(gm, numbers)
    compiled = compile(specialized, [example_inputs[i] for i in kept])
    return NumbersChecked(compiled, kept, numbers, Respecializing(gm, compile))


class Respecializing:
    """A Dynamo graph with symbolic values other than sizes (a Python number Dynamo made an
    input and reads with `.item()`, a SymFloat), compiled once per concrete signature at call
    time: each new set of values is a new specialised graph (values bound as constants).
    Graphs whose only other symbols are sizes compile once, symbolically (`NumbersChecked`)."""

    def __init__(self, gm: torch.fx.GraphModule, compile: Compiler):
        self.gm, self.compile = gm, compile
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        # Per input: a tensor Dynamo made from a Python number (read back with .item())?
        self.scalars = [_is_traced_number(n) for n in placeholders]
        self.compiled: dict[tuple[Any, ...], tuple[Callable[..., Any], list[int]]] = {}

    def __call__(self, *args: Any) -> Any:
        key = tuple(_signature(a, scalar) for a, scalar in zip(args, self.scalars))
        entry = self.compiled.get(key)
        if entry is None:
            entry = self.compiled[key] = self._specialize(args)
        fn, kept = entry
        return fn(*[args[i] for i in kept])

    def _specialize(self, args: Sequence[Any]) -> tuple[Callable[..., Any], list[int]]:
        numbers = {i: a.item() for i, (a, scalar) in enumerate(zip(args, self.scalars)) if scalar}
        gm, kept = _numbers_inlined(self.gm, numbers)
        graph = gm.graph
        placeholders = {i: n for i, n in zip(kept, [n for n in graph.nodes if n.op == "placeholder"])}
        for i, node in placeholders.items():
            if not isinstance(args[i], torch.Tensor):  # a size: a constant of the graph
                _replace_uses(node, args[i])
                graph.erase_node(node)
        for node in graph.nodes:  # symbolic example values would make the retrace symbolic
            node.meta.pop("example_value", None)
            node.meta.pop("val", None)
        gm.recompile()
        kept = [i for i in kept if isinstance(args[i], torch.Tensor)]
        return self.compile(gm, [args[i] for i in kept]), kept


def _traced_numbers(gm: torch.fx.GraphModule, example_inputs: Sequence[Any]) -> dict[int, Any] | None:
    """The value of each number Dynamo passes as a tensor read with `.item()` (its placeholder's
    `grapharg` holds the value it traced with), by input position; None when the graph has a
    SymFloat or SymBool input, or a value is not known."""
    if any(isinstance(x, (torch.SymFloat, torch.SymBool)) for x in example_inputs):
        return None
    numbers = {}
    for i, node in enumerate(n for n in gm.graph.nodes if n.op == "placeholder"):
        if _is_traced_number(node):
            example = getattr(node.meta.get("grapharg"), "example", None)
            if not isinstance(example, torch.Tensor) or example.numel() != 1:
                return None
            numbers[i] = example.item()
    return numbers


def _numbers_inlined(gm: torch.fx.GraphModule, numbers: dict[int, Any]) -> tuple[torch.fx.GraphModule, list[int]]:
    """`gm` with the inputs at `numbers`' positions gone and their `.item()`s replaced by the
    numbers; also the positions of the inputs it keeps."""
    graph = copy.deepcopy(gm.graph)
    kept = []
    for i, node in enumerate([n for n in graph.nodes if n.op == "placeholder"]):
        if i not in numbers:
            kept.append(i)
            continue
        for item in list(node.users):
            _replace_uses(item, numbers[i])
            graph.erase_node(item)
        graph.erase_node(node)
    return torch.fx.GraphModule(gm, graph), kept


class NumbersChecked:
    """A graph compiled with the numbers Dynamo traced (a LayerNorm's eps, which `dynamic=True`
    passes as a tensor) as constants and its sizes symbolic: one compile for all sizes. A call
    with other numbers (Dynamo does not guard on them) goes to `fallback`, never to kernels
    built for the traced ones."""

    def __init__(self, compiled: Callable[..., Any], kept: list[int], numbers: dict[int, Any],
                 fallback: Callable[..., Any]):
        self.compiled, self.kept, self.numbers, self.fallback = compiled, kept, numbers, fallback

    def __call__(self, *args: Any) -> Any:
        if any(args[i].item() != v for i, v in self.numbers.items()):
            return self.fallback(*args)
        return self.compiled(*[args[i] for i in self.kept])


def _signature(a: Any, scalar: bool) -> Any:
    if isinstance(a, torch.Tensor):
        if scalar:
            return (a.dtype, a.item())
        return (tuple(a.shape), a.stride(), a.dtype, a.device, a.requires_grad)
    return (type(a), a)


def _is_traced_number(placeholder: torch.fx.Node) -> bool:
    """A tensor input Dynamo made from a Python number: read only with `.item()`."""
    return bool(placeholder.users) and all(_is_item(u) for u in placeholder.users)


def _is_item(node: torch.fx.Node) -> bool:
    return (node.op == "call_method" and node.target == "item") or (
        node.op == "call_function" and node.target in (torch.Tensor.item, torch.ops.aten._local_scalar_dense.default)
    )


def _replace_uses(node: torch.fx.Node, value: Any) -> None:
    for user in list(node.users):
        user.args = torch.fx.node.map_arg(user.args, lambda n: value if n is node else n)
        user.kwargs = torch.fx.node.map_arg(user.kwargs, lambda n: value if n is node else n)


def _symbolic_sizes_only(gm: torch.fx.GraphModule, example_inputs: Sequence[Any]) -> bool:
    """Whether every symbolic input is a size (a SymInt, or a tensor's symbolic shape): what
    mlc compiles once for all sizes. A number Dynamo wrapped in a tensor and reads back with
    `.item()`, a SymFloat or a SymBool is specialised instead (`Respecializing`)."""
    if any(isinstance(x, (torch.SymFloat, torch.SymBool)) for x in example_inputs):
        return False
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    return not any(_is_traced_number(n) for n in placeholders)


def _is_symbolic(example_inputs: Sequence[Any]) -> bool:
    for x in example_inputs:
        if isinstance(x, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            return True
        if isinstance(x, torch.Tensor) and not all(isinstance(d, int) for d in x.shape):
            return True
    return False
