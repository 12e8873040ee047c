"""analysis/dependencies.py: canonical deps (Inductor's normalized MemoryDep) and buffer users."""

from __future__ import annotations

import sympy
from xdsl.parser import Parser

from mlc.analysis.dependencies import buffer_users, canonical_dep, simplify_loops
from mlc.dialects import buffer
from mlc.dialects.registry import make_context
from mlc.dialects.sym import FloorDiv, symbol
from mlc.passes.registry import parse_pipeline

i0, i1, i2 = symbol("i0"), symbol("i1"), symbol("i2")
RANGES = [("i0", 10), ("i1", 88), ("i2", 78)]


def test_contiguous_loops_merge_and_broadcast_loops_do_not() -> None:
    assert str(canonical_dep("buf0", i2 + 78 * i1 + 6864 * i0, RANGES)) == '#buffer.memory<"buf0", c0, {c0: 68640}>'
    assert str(canonical_dep("bias", i0, RANGES)) == '#buffer.memory<"bias", c0, {c0: 10}>'
    # A transposed read: no two neighbours step contiguously.
    assert str(canonical_dep("t", i1 + 88 * i2 + 6864 * i0, RANGES)) == \
        '#buffer.memory<"t", c1 + 88*c2 + 6864*c0, {c0: 10, c1: 88, c2: 78}>'


def test_the_dep_does_not_depend_on_loop_names_or_size_one_loops() -> None:
    """Two nodes touching the same elements name the same dep: [1, 690] and [690] alike."""
    a = canonical_dep("x", symbol("i1"), [("i0", 1), ("i1", 690)])
    b = canonical_dep("x", symbol("i0"), [("i0", 690)])
    assert a == b


def test_non_affine_index_keeps_its_loops() -> None:
    dep = canonical_dep("v", FloorDiv(i1, 2) + 44 * i0, [("i0", 10), ("i1", 88)])
    assert str(dep) == '#buffer.memory<"v", 44*c0 + FloorDiv(c1, 2), {c0: 10, c1: 88}>'


def test_symbolic_sizes_merge_too() -> None:
    s0 = symbol("s0")
    dep = canonical_dep("x", i1 + s0 * i0, [("i0", 4), ("i1", s0)])
    assert dep.ranges == [("c0", 4 * s0)] and dep.index.expr == symbol("c0")


def test_simplify_loops_groups() -> None:
    sizes = [sympy.Integer(s) for s in (2, 1, 3, 5)]
    contiguous = [15, 15, 5, 1]
    assert simplify_loops(sizes, [contiguous]) == [[0, 2, 3]]
    assert simplify_loops(sizes, [contiguous, [1, 0, 0, 0]]) == [[0], [2, 3]]


def test_buffer_users_in_program_order() -> None:
    text = """
    func.func @f(%x: tensor<3x9xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
      %0 = aten.sum.dim_IntList %x {dim = array<i64: 1>} : (tensor<3x9xf32>) -> tensor<3xf32>
      %1 = aten.sigmoid %0 : (tensor<3xf32>) -> tensor<3xf32>
      %2 = aten.exp %0 : (tensor<3xf32>) -> tensor<3xf32>
      func.return %1, %2 : tensor<3xf32>, tensor<3xf32>
    }"""
    module = Parser(make_context(), text).parse_module()
    parse_pipeline("lower-aten,inline,realize,deps").apply(make_context(), module)
    graph = next(op for op in module.walk() if isinstance(op, buffer.GraphOp))
    users = {name: [n.defined_names()[0] for n in nodes] for name, nodes in buffer_users(graph).items()}
    assert users == {"x": ["buf0"], "buf0": ["buf1", "buf2"]}
