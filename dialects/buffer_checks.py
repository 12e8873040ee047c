"""Static bounds of a buffer.graph's accesses: what the graph verifier checks of flat indices.

An unmasked `buffer.load` or `buffer.store` of an input or computed buffer must stay inside
the buffer's storage at every point of its node's ranges; otherwise the kernel reads or
writes past the end at run time. Checked where the sizes are static, with the values the
index certainly takes (`analysis/flat_index.py: reached_span`; views and externs' buffers are
left to their producers; masked loads, as cat and padding make, may index anywhere where
masked off). The triton dialect checks its kernels' accesses with the same two functions,
`reached_span` and `storage_extent` (`triton/bounds.py`).
"""

from __future__ import annotations

import sympy

from mlc.analysis.flat_index import reached_span
from mlc.dialects.buffer import BodyNode, ComputedOp, GraphOp, InputOp, LoadOp, StoreOp
from mlc.dialects.buffer_layout import LayoutAttr
from mlc.dialects.loops import blame, index_names, reduction_index_names
from mlc.dialects.sym import expr_str, symbol


def storage_extent(layout: LayoutAttr) -> int | None:
    """How many elements a static layout's storage spans, offset included (None: not static,
    negative strides, or no elements)."""
    parts = [*layout.sizes, *layout.strides, layout.offset.expr]
    if not all(p.is_Integer and int(p) >= 0 for p in parts) or any(int(s) == 0 for s in layout.sizes):
        return None
    return int(layout.offset.expr) + sum((int(s) - 1) * int(t) for s, t in zip(layout.sizes, layout.strides)) + 1


def _node_extents(node: BodyNode) -> dict[sympy.Symbol, sympy.Expr]:
    names = index_names(len(node.ranges)) + reduction_index_names(len(node.reduction_range_exprs))
    return {symbol(n): e for n, e in zip(names, [*node.range_exprs, *node.reduction_range_exprs])}


def verify_accesses_in_bounds(graph: GraphOp) -> None:
    """Every unmasked load and store of an input or computed buffer stays inside its storage
    at every point of the node's ranges, where the sizes are static."""
    extents = {
        n.buffer.data: e
        for n in graph.body.walk()
        if isinstance(n, (InputOp, ComputedOp)) and (e := storage_extent(n.layout)) is not None
    }
    for node in (n for n in graph.body.walk() if isinstance(n, BodyNode)):
        variables = _node_extents(node)
        for op in node.body.walk():
            if not isinstance(op, (LoadOp, StoreOp)) or getattr(op, "mask", None) is not None:
                continue
            size = extents.get(op.buffer_name)
            span = reached_span(op.index.expr, variables) if size is not None else None
            if span is not None and size is not None and (span[0] < 0 or span[1] >= size):
                raise blame(
                    op,
                    f"{op.name}: index {expr_str(op.index.expr)} takes values {span[0]} to {span[1]}, "
                    f"outside '{op.buffer_name}' of {size} elements",
                )
