"""The ops of a `buffer` node's body: `buffer.load`, `buffer.store`, `buffer.reduce`, `buffer.dot`.

Part of the `buffer` dialect (registered by `mlc.dialects.buffer`, which re-exports them). A body
belongs to a `buffer.computed` or a `buffer.scatter`; its index expressions use that node's
index variables (`i0, ...`, `r0_0, ...`), size symbols, and the access's own loaded positions
(`ind0, ...`, see `sym`). Loads and stores are accesses (`mlc.dialects.access`) at one flat
index of a named buffer.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy
from xdsl.dialects.builtin import SymbolRefAttr
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    result_def,
    traits_def,
)
from xdsl.traits import IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException

from mlc.dialects.access import BufferRefMixin, FlatAccessOp, MaskOperand, StoreModeMixin, mode_props
from mlc.dialects.loops import reduction_index_names, verify_index_symbols
from mlc.dialects.loops_reduce import DotBase, ReduceBase
from mlc.dialects.sym import ExprAttr


def enclosing_node(op: Operation) -> Operation | None:
    """The buffer.computed or buffer.scatter whose body holds `op` (the node says which index
    symbols exist)."""
    parent = op.parent_op()
    return parent if parent is not None and callable(getattr(parent, "index_symbols", None)) else None


def _verify_index(op: FlatAccessOp) -> None:
    owner = enclosing_node(op)
    if owner is None:
        raise VerifyException(f"{op.name} must be inside buffer.computed")
    verify_index_symbols(op, op.index_exprs, owner.index_symbols(), len(op.indirect))  # type: ignore[attr-defined]


@irdl_op_definition
class LoadOp(BufferRefMixin, MaskOperand, FlatAccessOp):
    """Read a buffer at a flat index: `%0 = buffer.load @buf4[i1 + 64*i0] : f32`.

    With `mask %m` (an i1), lanes where the mask is false read 0 and touch no memory; with
    `indirect(%k)` the index names loaded positions (`768*ind0 + i1`, see `sym`)."""

    name = "buffer.load"
    result = result_def()
    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "custom<SymbolRef>($buffer) `` custom<Index>($index) custom<Indirect>($indirect) custom<Mask>($mask)"
        " `:` type($result) attr-dict"
    )

    def __init__(
        self,
        buffer: str,
        index: sympy.Expr,
        result_type: Attribute,
        mask: SSAValue | None = None,
        indirect: Sequence[SSAValue] = (),
    ):
        super().__init__(
            operands=[[mask] if mask is not None else [], list(indirect)],
            properties={"buffer": SymbolRefAttr(buffer), "index": ExprAttr(index)},
            result_types=[result_type],
        )

    def verify_(self) -> None:
        _verify_index(self)


@irdl_op_definition
class StoreOp(BufferRefMixin, StoreModeMixin, FlatAccessOp):
    """Write this node's value: `buffer.store @buf5[i1 + 64*i0], %9 : f32`; ends a body.

    A scatter's store is at loaded positions, and where positions can repeat it adds
    atomically: `buffer.store @buf5[i1 + 16*ind0] indirect(%k), %9 atomic_add : f32`."""

    name = "buffer.store"
    value = operand_def()
    traits = traits_def(IsTerminator())
    assembly_format = (
        "custom<SymbolRef>($buffer) `` custom<Index>($index) custom<Indirect>($indirect) `,` $value custom<StoreMode>($mode)"
        " `:` type($value) attr-dict"
    )

    def __init__(
        self, buffer: str, index: sympy.Expr, value: SSAValue, indirect: Sequence[SSAValue] = (), mode: str | None = None
    ):
        props: dict[str, Attribute] = {"buffer": SymbolRefAttr(buffer), "index": ExprAttr(index), **mode_props(mode)}
        super().__init__(operands=[value, list(indirect)], properties=props)

    def verify_(self) -> None:
        _verify_index(self)
        self.verify_store_mode()
        owner = enclosing_node(self)
        if getattr(owner, "is_reduction", False):
            reduction_vars = set(reduction_index_names(len(owner.reduction_range_exprs)))  # type: ignore[union-attr]
            used = {s.name for s in self.index.expr.free_symbols}
            if used & reduction_vars:
                raise VerifyException(
                    "buffer.store: a reduction's store index cannot use reduction variables"
                )


@irdl_op_definition
class ReduceOp(ReduceBase):
    """A reduction in a `buffer.computed` body: `%r = buffer.reduce sum %v : f32 -> f32`."""

    name = "buffer.reduce"


@irdl_op_definition
class DotOp(DotBase):
    """A contraction in a `buffer.computed` body: `%c = buffer.dot %a, %b : bf16, bf16 -> f32`
    (the node's ranges are [M, N], its reduce ranges [K]: `DotBase`)."""

    name = "buffer.dot"

    def verify_(self) -> None:
        super().verify_()
        owner = self.parent_op()
        if not getattr(owner, "is_reduction", False):
            raise VerifyException("buffer.dot needs a computed node with reduce ranges")
