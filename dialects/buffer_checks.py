"""Static bounds of a buffer.graph's accesses: what the graph verifier checks of flat indices.

An unmasked `buffer.load` or `buffer.store` of an input or computed buffer must stay inside
the buffer's storage at every point of its node's ranges; otherwise the kernel reads or
writes past the end at run time. Checked where the sizes are static, with the values the
index certainly takes (`analysis/flat_index.py: reached_span`; views and externs' buffers are
left to their producers; masked loads, as cat and padding make, may index anywhere where
masked off). `buffer.graph`'s verifier gives each node's body, index extents and the storage
sizes it knows to `verify_body_in_bounds`. The triton dialect checks its kernels' accesses
with the same two functions, `reached_span` and `storage_extent` (`triton/kernel.py`,
`triton/wrapper.py`).
"""

from __future__ import annotations

from collections.abc import Mapping

import sympy
from xdsl.ir import Region

from mlc.analysis.flat_index import reached_span
from mlc.dialects.access import MaskOperand
from mlc.dialects.buffer_body import LoadOp, StoreOp
from mlc.dialects.buffer_layout import LayoutAttr
from mlc.dialects.loops import blame
from mlc.dialects.sym import expr_str


def storage_extent(layout: LayoutAttr) -> int | None:
    """How many elements a static layout's storage spans, offset included (None: not static,
    negative strides, or no elements)."""
    parts = [*layout.sizes, *layout.strides, layout.offset.expr]
    if not all(p.is_Integer and int(p) >= 0 for p in parts) or any(int(s) == 0 for s in layout.sizes):
        return None
    return int(layout.offset.expr) + sum((int(s) - 1) * int(t) for s, t in zip(layout.sizes, layout.strides)) + 1


def verify_body_in_bounds(
    body: Region, variables: Mapping[sympy.Symbol, sympy.Expr], extents: Mapping[str, int]
) -> None:
    """Every unmasked load and store in a node's `body` of a buffer with a static storage size
    (`extents`) stays inside it at every point of the node's index `variables`."""
    for op in body.walk():
        if not isinstance(op, (LoadOp, StoreOp)) or isinstance(op, MaskOperand) and op.mask is not None:
            continue
        size = extents.get(op.buffer_name)
        span = reached_span(op.index.expr, variables) if size is not None else None
        if span is not None and size is not None and (span[0] < 0 or span[1] >= size):
            raise blame(
                op,
                f"{op.name}: index {expr_str(op.index.expr)} takes values {span[0]} to {span[1]}, "
                f"outside '{op.buffer_name}' of {size} elements",
            )
