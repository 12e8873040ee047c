"""Static bounds of a kernel's loads and stores, and of the buffers a launch gives them.

A kernel writes its indices over `triton.index` symbols; with their definitions substituted an
index is an expression of the implicit indices, which a launch runs over [0, xnumel),
[0, ynumel) and [0, r0_numel) (the named masks only cut off the lanes past those). Where the
numels are static, `reached_span` (the buffer dialect's check, `buffer_checks.py`, uses it too)
gives values the index certainly takes, so:

- the kernel rejects an index certainly negative: each pointer is at the start of its
  storage (a view is read through its root, with the offset in the index);
- the wrapper rejects a launch giving a pointer a buffer whose storage its accesses certainly
  run past (an allocation smaller than what the kernel stores).

Accesses with a mask value (`mask %m`: a cat's, a split reduction's bound) and at loaded
positions (`ind0`) may go anywhere where masked off or as loaded, and are not checked.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import sympy
from xdsl.ir import Block, BlockArgument

from mlc.analysis.flat_index import reached_span
from mlc.dialects.buffer_checks import storage_extent
from mlc.dialects.buffer_layout import LayoutAttr
from mlc.dialects.sym import expr_str, symbol
from mlc.dialects.triton.body import LoadOp, StoreOp
from mlc.dialects.triton.core import _blame
from mlc.dialects.triton.kernel import IndexOp, KernelOp, RLoopOp

if TYPE_CHECKING:
    from mlc.dialects.triton.wrapper import LaunchOp  # it calls these checks

Span = tuple[int, int]


@dataclass(frozen=True)
class Access:
    """A load or store with no mask value, and values its index certainly takes."""

    op: LoadOp | StoreOp
    span: Span

    @property
    def pointer(self) -> BlockArgument:
        assert isinstance(self.op.ptr, BlockArgument)  # a kernel's pointers are its arguments
        return self.op.ptr

    def describe(self) -> str:
        """`stores %out_ptr0[r0_0 + 64*x0] at 0 to 1023`."""
        verb = "stores" if isinstance(self.op, StoreOp) else "loads"
        return f"{verb} %{self.pointer.name_hint}[{expr_str(self.op.index.expr)}] at {self.span[0]} to {self.span[1]}"


def kernel_accesses(kernel: KernelOp) -> list[Access]:
    """The kernel's checkable accesses: static spans over its numels."""
    numels = {"xindex": kernel.xnumel, "yindex": kernel.ynumel, "r0_index": kernel.r0_numel}
    ranges = {symbol(name): numel.expr for name, numel in numels.items() if numel is not None}
    accesses: list[Access] = []
    _collect_accesses(kernel.body.block, {}, ranges, accesses)
    return accesses


def _collect_accesses(
    block: Block, definitions: Mapping[sympy.Symbol, sympy.Expr], ranges: Mapping[sympy.Symbol, sympy.Expr],
    accesses: list[Access],
) -> None:
    definitions = dict(definitions)  # a loop's index symbols end with it
    for op in block.ops:
        if isinstance(op, IndexOp):
            definitions[symbol(op.var.data)] = op.expr.expr.xreplace(definitions)
        elif isinstance(op, RLoopOp):
            _collect_accesses(op.body.block, definitions, ranges, accesses)
        elif isinstance(op, (LoadOp, StoreOp)) and op.mask is None and isinstance(op.ptr, BlockArgument):
            span = reached_span(op.index.expr.xreplace(definitions), ranges)
            if span is not None:
                accesses.append(Access(op, span))


def verify_kernel_in_bounds(kernel: KernelOp) -> None:
    """No access certainly indexes before the start of its pointer's storage."""
    for access in kernel_accesses(kernel):
        if access.span[0] < 0:
            raise _blame(access.op, f"{access.op.name}: {access.describe()}, before the start of its storage")


def verify_launch_in_bounds(
    launch: LaunchOp, layouts: Mapping[str, LayoutAttr | None],
    accesses_of: Callable[[KernelOp], list[Access]] = kernel_accesses,
) -> None:
    """Each kernel the launch may run keeps the accesses of every pointer inside the storage of
    the buffer the launch gives it, where that storage is static (`accesses_of`: the wrapper's
    memo of `kernel_accesses`)."""
    buffers = launch.arg_names
    for name in launch.kernel_names:
        kernel = launch.lookup_kernel(name)
        if kernel is None:
            continue
        for access in accesses_of(kernel):
            buffer = buffers[access.pointer.index] if access.pointer.index < len(buffers) else None
            layout = layouts.get(buffer) if buffer is not None else None
            size = storage_extent(layout) if layout is not None else None
            if size is not None and access.span[1] >= size:
                raise _blame(
                    launch, f"triton.launch: @{name} {access.describe()}, past the {size} elements of '{buffer}'"
                )
