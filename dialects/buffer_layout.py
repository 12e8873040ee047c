"""The `buffer` dialect's layouts: `#buffer.layout` and the stride math around it.

Part of the `buffer` dialect (registered by `mlc.dialects.buffer`). A layout is a buffer's
size, stride, dtype and storage offset, `#buffer.layout<[8, 64], [64, 1], f32>`; next to it
live the row-major strides of a size (`contiguous_strides`), the tests for dense (`is_dense`,
a permutation of row-major) and padded (`is_padded`, pad-mm's rows with room between them)
strides, and the names of the attributes that carry traced strides from the importer to
`--realize`.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy
from xdsl.dialects.builtin import ArrayAttr
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from mlc.dialects.sym import (
    ExprAttr,
    at_hint,
    equal,
    expr_str,
    exprs_of,
    parse_expr,
    parse_expr_list,
    print_expr_list,
)


def exprs_attr(values: Sequence[sympy.Expr | int]) -> ArrayAttr:
    return ArrayAttr([ExprAttr(sympy.Integer(v) if isinstance(v, int) else v) for v in values])


def contiguous_strides(size: Sequence[sympy.Expr | int]) -> list[sympy.Expr]:
    strides: list[sympy.Expr] = []
    running: sympy.Expr = sympy.Integer(1)
    for dim in reversed(size):
        strides.append(running)
        running = running * dim
    return strides[::-1]


def strides_in_order(size: Sequence[sympy.Expr | int], order: Sequence[int]) -> list[sympy.Expr]:
    """Dense strides with the dims laid out in `order` (positions, outermost first): the
    row-major strides of the permuted sizes, put back in dim order."""
    strides: list[sympy.Expr] = [sympy.Integer(0)] * len(size)
    for d, stride in zip(order, contiguous_strides([size[d] for d in order])):
        strides[d] = stride
    return strides


OUTPUT_STRIDES = "strides"  # on func.return: each result's promised strides, eager's (array<i64>; empty: row-major)
RESULT_STRIDES = "result_strides"  # on an aten op: each result's traced strides (the same form)
OUT_RESULTS = "out"  # on an aten op: each result is written into a buffer laid out with its result_strides (the call's out=)
OPERAND_STRIDES = "operand_strides"  # on an aten op: each tensor operand's traced strides (the same form)
INPUT_STRIDES = "strides"  # in a func argument's attributes: the input's strides when not row-major (any strided layout)


def is_dense(size: Sequence[int | sympy.Expr], stride: Sequence[int | sympy.Expr]) -> bool:
    """Strides of a permutation of a row-major layout (non-overlapping, no gaps): walked from
    the smallest stride up, each dim's stride is the product of the sizes before it (size-1
    dims are free). Symbolic strides are walked in the order of their values with every size
    at DENSE_ORDER_HINT and must equal the products as expressions: dense at every size."""
    dims = [(n, s) for n, s in zip(size, stride) if n != 1]
    if all(isinstance(v, int) or v.is_Integer for p in dims for v in p):
        expected = 1
        for n, s in sorted(((int(n), int(s)) for n, s in dims), key=lambda p: p[1]):
            if s != expected:
                return False
            expected *= n
        return True
    product: sympy.Expr = sympy.Integer(1)
    for n, s in sorted(dims, key=lambda p: at_hint(p[1], DENSE_ORDER_HINT)):
        if not equal(s, product):
            return False
        product *= n
    return True


DENSE_ORDER_HINT = 4096  # each size's value when ordering symbolic strides (a wrong order only fails the proof)


def is_padded(size: Sequence[int], stride: Sequence[int], dense: Sequence[int]) -> bool:
    """Whether `stride` orders the dims as the dense strides `dense` do, with room between rows
    (pad-mm's sliced result): each dim's stride at least the dense one and at least the extent
    of the dims inside it, and the innermost one 1. Size-1 dims are free."""
    dims = sorted((d for d in range(len(size)) if size[d] != 1), key=lambda d: dense[d])
    extent = 1
    for d in dims:
        if stride[d] < max(dense[d], extent):
            return False
        extent = stride[d] * size[d]
    return bool(dims) and stride[dims[0]] == 1



def element_bytes(dtype: Attribute) -> int:
    """Bytes one element of `dtype` takes in memory (an i1 takes one, as torch's bool)."""
    return max(1, getattr(dtype, "bitwidth", 8) // 8)


@irdl_attr_definition
class LayoutAttr(ParametrizedAttribute):
    """`#buffer.layout<[8, 64], [64, 1], f32>` or `..., f32, offset 4>`: size, stride, dtype, offset."""

    name = "buffer.layout"
    size: ArrayAttr
    stride: ArrayAttr
    dtype: TypeAttribute
    offset: ExprAttr

    def __init__(
        self,
        size: Sequence[sympy.Expr | int],
        stride: Sequence[sympy.Expr | int] | None,
        dtype: Attribute,
        offset: sympy.Expr | int = 0,
    ):
        stride = contiguous_strides(size) if stride is None else stride
        super().__init__(exprs_attr(size), exprs_attr(stride), dtype, ExprAttr(sympy.Integer(offset) if isinstance(offset, int) else offset))

    @property
    def sizes(self) -> list[sympy.Expr]:
        return exprs_of(self.size.data)

    @property
    def strides(self) -> list[sympy.Expr]:
        return exprs_of(self.stride.data)

    @property
    def rank(self) -> int:
        return len(self.size.data)

    def flat_index(self, indices: Sequence[sympy.Expr]) -> sympy.Expr:
        """The storage offset of the element at `indices`."""
        return self.offset.expr + sum((i * s for i, s in zip(indices, self.strides)), sympy.Integer(0))

    @property
    def is_empty(self) -> bool:
        """A size is 0: the tensor has no element (a computed node of it runs nothing)."""
        return any(n == 0 for n in self.sizes)

    def storage_extent(self) -> sympy.Expr:
        """Elements of storage the layout spans: offset + sum((size - 1) * stride) + 1 (0 when
        a size is 0)."""
        if self.is_empty:
            return sympy.Integer(0)
        return self.offset.expr + 1 + sum(((n - 1) * st for n, st in zip(self.sizes, self.strides)), sympy.Integer(0))

    def verify(self) -> None:
        if len(self.size.data) != len(self.stride.data):
            raise VerifyException(
                f"buffer.layout: {len(self.size.data)} sizes but {len(self.stride.data)} strides"
            )
        for a in (*self.size.data, *self.stride.data):
            if not isinstance(a, ExprAttr):
                raise VerifyException(f"buffer.layout: sizes and strides are expressions, got {a}")

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        print_expr_list(printer, self.sizes)
        printer.print_string(", ")
        print_expr_list(printer, self.strides)
        printer.print_string(", ")
        printer.print_attribute(self.dtype)
        if self.offset.expr != 0:
            printer.print_string(f", offset {expr_str(self.offset.expr)}")
        printer.print_string(">")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            size = parse_expr_list(parser)
            parser.parse_punctuation(",")
            pos = parser.pos
            stride = parse_expr_list(parser)
            if len(size) != len(stride):
                parser.raise_error(f"{len(size)} sizes but {len(stride)} strides", pos, parser.pos)
            parser.parse_punctuation(",")
            dtype = parser.parse_type()
            offset: sympy.Expr = sympy.Integer(0)
            if parser.parse_optional_punctuation(","):
                parser.parse_keyword("offset")
                offset = parse_expr(parser)
        return [exprs_attr(size), exprs_attr(stride), dtype, ExprAttr(offset)]
