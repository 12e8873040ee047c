"""Functional collectives in the importer and through the pipeline, on hand-built FX graphs
(no process group: nothing here runs a collective; test/e2e/test_distributed.py does)."""

from __future__ import annotations

import operator

import pytest
import torch
import torch.distributed as dist
import torch.fx

import mlc
from mlc.dialects import triton as tt
from mlc.frontend.importer import UnsupportedGraph, import_graph

pytestmark = pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not available")

c10d = torch.ops._c10d_functional if dist.is_available() else None
aten = torch.ops.aten


class Builder:
    """An FX graph with `meta["val"]` on every node, as AOTAutograd hands one over."""

    def __init__(self) -> None:
        self.graph = torch.fx.Graph()

    def input(self, name: str, *shape: int) -> torch.fx.Node:
        node = self.graph.placeholder(name)
        node.meta["val"] = torch.empty(*shape)
        return node

    def call(self, target, *args, shape: tuple[int, ...] | None = None, results: int = 0) -> torch.fx.Node:
        node = self.graph.call_function(target, args)
        if results:
            node.meta["val"] = [torch.empty(*shape) for _ in range(results)]  # type: ignore[misc]
        else:
            first = next(a for a in args if isinstance(a, torch.fx.Node))
            value = first.meta["val"]
            value = value[args[1]] if target is operator.getitem else value
            node.meta["val"] = torch.empty(*(shape or value.shape))
        return node

    def module(self, *outputs: torch.fx.Node) -> torch.fx.GraphModule:
        self.graph.output(tuple(outputs))
        return torch.fx.GraphModule(torch.nn.Module(), self.graph)


def test_start_and_wait_import_as_calls_and_later_reads_read_the_wait():
    b = Builder()
    x = b.input("x", 8, 8)
    start = b.call(c10d.all_reduce.default, x, "sum", "0")
    wait = b.call(c10d.wait_tensor.default, start)
    add = b.call(aten.add.Tensor, wait, start)  # the same tensor, named by the start
    text = str(import_graph(b.module(add)).module)
    assert '%0 = aten.call "_c10d_functional::all_reduce" (%x) {args = [#aten.tensor, "sum", "0"]}' in text
    assert '%1 = aten.call "_c10d_functional::wait_tensor" (%0) {args = [#aten.tensor]}' in text
    assert "aten.add.Tensor %1, %1" in text


def test_coalesced_results_are_waited_one_by_one():
    b = Builder()
    x, y = b.input("x", 8), b.input("y", 8)
    start = b.call(c10d.all_reduce_coalesced.default, [x, y], "sum", "0", shape=(8,), results=2)
    firsts = [b.call(operator.getitem, start, k) for k in range(2)]
    waits = [b.call(c10d.wait_tensor.default, f) for f in firsts]
    text = str(import_graph(b.module(*waits)).module)
    assert '%0, %1 = aten.call "_c10d_functional::all_reduce_coalesced" (%x, %y)' in text
    assert "wait_tensor\" (%0)" in text and "wait_tensor\" (%1)" in text


@pytest.mark.parametrize("reader", ["op", "output"])
def test_a_result_read_before_its_wait_is_refused(reader):
    b = Builder()
    x = b.input("x", 8)
    start = b.call(c10d.all_gather_into_tensor.default, x, 2, "0", shape=(16,))
    outputs = [b.call(aten.neg.default, start)] if reader == "op" else [start]
    with pytest.raises(UnsupportedGraph, match="reads the result of all_gather_into_tensor before waiting for it"):
        import_graph(b.module(*outputs))


@pytest.mark.parametrize("target, message", [
    ("all_reduce_", "unsupported collective: an in-place collective"),
    ("isend", "unsupported collective: point-to-point communication is not supported yet"),
])
def test_collectives_mlc_cannot_order_are_refused(target, message):
    b = Builder()
    x = b.input("x", 8)
    args = (x, "sum", "0") if target == "all_reduce_" else (x, 1, 0, "0")
    node = b.call(getattr(c10d, target).default, *args)
    with pytest.raises(UnsupportedGraph, match=rf"node '{node.name}' \(_c10d_functional.{target}.default\): {message}"):
        import_graph(b.module(node))


def test_a_process_group_object_is_refused():
    b = Builder()
    x, group = b.input("x", 8), b.input("group", 1)
    start = b.call(c10d.broadcast.default, x, 0, group)
    with pytest.raises(UnsupportedGraph, match="the process group is passed as Node; only a group name"):
        import_graph(b.module(b.call(c10d.wait_tensor.default, start)))


def test_default_pipeline_overlaps_an_independent_mm():
    """Through every pass: the all-reduce starts before the mm it does not need, its wait comes
    after it, and both stay extern calls of torch's ops in the wrapper."""
    b = Builder()
    x, w = b.input("x", 8, 8), b.input("w", 8, 8)
    relu = b.call(aten.relu.default, x)
    start = b.call(c10d.all_reduce.default, relu, "sum", "0")
    wait = b.call(c10d.wait_tensor.default, start)
    mm = b.call(aten.mm.default, x, w)
    out = b.call(aten.mul.Tensor, wait, mm)
    module = mlc.run_passes(import_graph(b.module(out)).module, "default")  # the registered pipeline
    wrapper = next(op for op in module.walk() if isinstance(op, tt.WrapperOp))
    calls = [op.overload.data for op in wrapper.body.block.ops if isinstance(op, tt.ExternOp)]
    assert calls == ["_c10d_functional::all_reduce.default", "mm.default", "_c10d_functional::wait_tensor.default"]
