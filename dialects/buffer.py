"""The `buffer` dialect: realized storage, Inductor's `Buffer` family.

Produced by `--realize`; read and annotated by `--deps`, `--reorder-loops` and `--fuse`;
consumed by `--convert-to-triton`. There are no SSA tensors at this level: a `buffer.graph`
holds named nodes in program order, and bodies load and store named buffers at flat index
expressions over the node's index variables (`i0, i1, ...`, and `r0_0, ...` for reductions).

    buffer.graph @forward {
      buffer.input "arg0_1" #buffer.layout<[8, 64], [64, 1], f32>
      buffer.computed "buf0" #buffer.layout<[8, 64], [64, 1], f32> ranges [8, 64] origins ["gelu"] {
        %0 = buffer.load @arg0_1[i1 + 64*i0] : f32
        %1 = math.erf %0 : f32
        buffer.store @buf0[i1 + 64*i0], %1 : f32
      }
      buffer.computed "buf1" #buffer.layout<[8], [1], f32> ranges [8] reduce [64] {
        %0 = buffer.load @buf0[r0_0 + 64*i0] : f32
        %1 = buffer.reduce sum %0 : f32 -> f32
        buffer.store @buf1[i0], %1 : f32
      }
      buffer.extern "buf2" #buffer.layout<[8, 8], [8, 1], f32> = "mm.default" {args = [@buf0, @buf3]}
      buffer.view "buf3" = @buf0 #buffer.layout<[64, 8], [1, 64], f32>
      buffer.output @buf1, @buf2
    }

Invariants the verifier checks: node names are unique and every reference names a buffer
defined earlier in the graph; a layout's rank equals its node's ranges; index expressions use
only the node's index variables (and size symbols `s0, ...`); a body ends with a store to its
own buffer.

After `--deps`, nodes carry `reads`/`writes` arrays of `#buffer.memory<"buf0", c0, {c0: 68640}>`
(Inductor's MemoryDep: buffer, index, variable ranges), `#buffer.star<"buf0">` (whole buffer,
unknown index) and `#buffer.weak<"buf0", "buf3">` (ordering only: read buf0 before buf3
mutates it).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import sympy
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    NoneType,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    UnitAttr,
)
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, Region
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
)
from xdsl.irdl.declarative_assembly_format import (
    AttributeVariable,
    ParsingState,
    PrintingState,
    irdl_custom_directive,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import IsTerminator, NoTerminator
from xdsl.utils.exceptions import VerifyException

from mlc.dialects.buffer_body import DotOp, LoadOp, ReduceOp, StoreOp  # noqa: F401 (re-exported: buffer.LoadOp, ...)
from mlc.dialects.buffer_checks import storage_extent, verify_body_in_bounds
from mlc.dialects.buffer_layout import LayoutAttr, exprs_attr
from mlc.dialects.loops import blame, index_names, origins_props, reduction_index_names
from mlc.dialects.loops_reduce import verify_contraction
from mlc.dialects.sym import ExprAttr, expr_str, exprs_of, parse_expr, symbol
from mlc.dialects.syntax import AttrList, ExprList, ExternArgs, Origins, PropertyDirective, SymbolRef, SymbolRefs

# ---------------------------------------------------------------------------------------------
# Attributes


@irdl_attr_definition
class MemoryDepAttr(ParametrizedAttribute):
    """`#buffer.memory<"buf0", c0, {c0: 68640}>`: Inductor's MemoryDep (name, index, var ranges)."""

    name = "buffer.memory"
    buffer: StringAttr
    index: ExprAttr
    var_names: ArrayAttr
    var_sizes: ArrayAttr

    def __init__(self, buffer: str, index: sympy.Expr, ranges: Sequence[tuple[str, sympy.Expr | int]]):
        super().__init__(
            StringAttr(buffer),
            ExprAttr(index),
            ArrayAttr([StringAttr(n) for n, _ in ranges]),
            exprs_attr([s for _, s in ranges]),
        )

    @property
    def ranges(self) -> list[tuple[str, sympy.Expr]]:
        return [(n.data, s) for n, s in zip(self.var_names.data, exprs_of(self.var_sizes.data))]

    def print_parameters(self, printer: Printer) -> None:
        ranges = ", ".join(f"{n}: {expr_str(s)}" for n, s in self.ranges)
        printer.print_string("<")
        printer.print_string_literal(self.buffer.data)
        printer.print_string(f", {expr_str(self.index.expr)}, {{{ranges}}}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            name = parser.parse_str_literal()
            parser.parse_punctuation(",")
            index = parse_expr(parser)
            parser.parse_punctuation(",")

            def parse_range() -> tuple[str, sympy.Expr]:
                var = parser.parse_identifier()
                parser.parse_punctuation(":")
                return var, parse_expr(parser)

            ranges = parser.parse_comma_separated_list(parser.Delimiter.BRACES, parse_range)
        return list(cls(name, index, ranges).parameters)


@irdl_attr_definition
class StarDepAttr(ParametrizedAttribute):
    """`#buffer.star<"buf0">`: the whole buffer, at indices not known statically."""

    name = "buffer.star"
    buffer: StringAttr

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_string_literal(self.buffer.data)
        printer.print_string(">")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            return [StringAttr(parser.parse_str_literal())]


@irdl_attr_definition
class WeakDepAttr(ParametrizedAttribute):
    """`#buffer.weak<"buf0", "buf3">`: ordering only -- read buf0 before buf3 mutates it."""

    name = "buffer.weak"
    buffer: StringAttr
    mutating_buffer: StringAttr

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_string_literal(self.buffer.data)
        printer.print_string(", ")
        printer.print_string_literal(self.mutating_buffer.data)
        printer.print_string(">")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            name = parser.parse_str_literal()
            parser.parse_punctuation(",")
            return [StringAttr(name), StringAttr(parser.parse_str_literal())]


# ---------------------------------------------------------------------------------------------
# Graph-level ops


class BufferNode(IRDLOperation):
    """A node of a buffer.graph that defines named buffers."""

    def defined_names(self) -> list[str]:
        raise NotImplementedError  # every concrete node overrides it

    def referenced_names(self) -> Iterator[str]:
        """Buffers this node reads (from its body loads or its arguments)."""
        return iter(())


@irdl_op_definition
class GraphOp(IRDLOperation):
    """The realized program: nodes in execution order, ending with buffer.output."""

    name = "buffer.graph"
    sym_name = prop_def(SymbolNameConstraint())
    body = region_def("single_block")
    assembly_format = "$sym_name $body attr-dict-with-keyword"

    def __init__(self, name: str, body: Region):
        super().__init__(properties={"sym_name": StringAttr(name)}, regions=[body])

    def nodes(self) -> Iterator[BufferNode]:
        return (op for op in self.body.block.ops if isinstance(op, BufferNode))

    def verify_(self) -> None:
        defined: set[str] = set()
        for op in self.body.block.ops:
            if isinstance(op, BufferNode):
                for ref in op.referenced_names():
                    if ref not in defined:
                        raise blame(op, f"{op.name}: unknown buffer '{ref}'")
                for name in op.defined_names():
                    if name in defined:
                        raise blame(op, f"{op.name}: buffer '{name}' is defined twice")
                    defined.add(name)
            elif isinstance(op, OutputOp):
                for ref in op.names:
                    if ref not in defined:
                        raise blame(op, f"buffer.output: unknown buffer '{ref}'")
            else:
                raise blame(op, f"buffer.graph may only hold buffer nodes, found {op.name}")
        self._verify_accesses_in_bounds()
        if not isinstance(self.body.block.last_op, OutputOp):
            raise VerifyException("buffer.graph must end with buffer.output")

    def _verify_accesses_in_bounds(self) -> None:
        """Unmasked loads and stores stay inside the storage of the inputs and computed
        buffers whose sizes are static (`buffer_checks`)."""
        extents = {
            n.buffer.data: e
            for n in self.body.walk()
            if isinstance(n, (InputOp, ComputedOp)) and (e := storage_extent(n.layout)) is not None
        }
        for node in self.body.walk():
            if isinstance(node, BodyNode):
                verify_body_in_bounds(node.body, node.index_extents(), extents)


@irdl_custom_directive
class Layout(PropertyDirective):
    """A buffer's `#buffer.layout<[8, 64], [64, 1], f32>` (an error at anything else)."""

    attr: AttributeVariable

    def print_value(self, printer: Printer, value: Attribute) -> None:
        printer.print_attribute(value)

    def parse(self, parser: Parser, state: ParsingState) -> None:
        layout = parser.parse_attribute()
        if not isinstance(layout, LayoutAttr):
            parser.raise_error(f"expected a #buffer.layout, got {layout}")
        self.attr.set(state, layout)


class NamedLayoutOp(IRDLOperation):
    """`"arg0_1" #buffer.layout<[8, 64], [64, 1], f32>`: a buffer's name and layout, no more.
    Shared by `buffer.input` and the wrapper's `triton.input` and `triton.alloc`."""

    buffer = prop_def(StringAttr)
    layout = prop_def(LayoutAttr)
    assembly_format = "$buffer custom<Layout>($layout) attr-dict"
    custom_directives = (Layout,)

    def __init__(self, name: str, layout: LayoutAttr):
        super().__init__(properties={"buffer": StringAttr(name), "layout": layout})

    def defined_names(self) -> list[str]:
        return [self.buffer.data]

    def layout_of(self, name: str) -> LayoutAttr | None:
        return self.layout


@irdl_op_definition
class InputOp(NamedLayoutOp, BufferNode):
    """A graph input (Inductor's InputBuffer), in argument order."""

    name = "buffer.input"


@irdl_op_definition
class SizeInputOp(BufferNode):
    """A graph input that is an integer, the size it names (Dynamo's SymInt input), in argument
    order: `buffer.size_input "arg0_1" <s0>`. It holds no storage: kernels and the
    wrapper read `s0` wherever a size or an index uses it."""

    name = "buffer.size_input"
    buffer = prop_def(StringAttr)
    size = prop_def(ExprAttr)
    assembly_format = "$buffer $size attr-dict"

    def __init__(self, name: str, size: sympy.Expr):
        super().__init__(properties={"buffer": StringAttr(name), "size": ExprAttr(size)})

    def defined_names(self) -> list[str]:
        return [self.buffer.data]  # a name the graph may return (a size the backward needs)


GRAPH_INPUTS = (InputOp, SizeInputOp)
"""The nodes that are the graph's arguments, in argument order."""


def symbol_refs(attr: Attribute) -> Iterator[str]:
    """The buffer names an argument attribute references (`@name`, nested in lists and dicts)."""
    if isinstance(attr, SymbolRefAttr):
        yield attr.root_reference.data
    elif isinstance(attr, ArrayAttr):
        for a in attr.data:
            yield from symbol_refs(a)
    elif isinstance(attr, DictionaryAttr):
        for a in attr.data.values():
            yield from symbol_refs(a)


class BodyNode(BufferNode):
    """A node whose buffer a loop nest writes: a body run once per point of `ranges`, ending
    with the store of the node's buffer (shared by buffer.computed and buffer.scatter)."""

    buffer = prop_def(StringAttr)
    layout = prop_def(LayoutAttr)
    ranges = prop_def(ArrayAttr)
    origins = opt_prop_def(ArrayAttr)
    body = region_def("single_block")
    custom_directives = (ExprList, Origins, Layout, SymbolRef)

    @property
    def range_exprs(self) -> list[sympy.Expr]:
        return exprs_of(self.ranges.data)

    @property
    def reduction_range_exprs(self) -> list[sympy.Expr]:
        return []

    @property
    def is_reduction(self) -> bool:
        return False

    def dot_op(self) -> DotOp | None:
        """The `buffer.dot` of a contraction (a GEMM), None for any other node."""
        return None

    @property
    def is_contraction(self) -> bool:
        return self.dot_op() is not None

    @property
    def origin_names(self) -> list[str]:
        return [o.data for o in self.origins.data] if self.origins is not None else []

    def index_symbols(self) -> set[str]:
        return set(index_names(len(self.ranges))) | set(
            reduction_index_names(len(self.reduction_range_exprs))
        )

    def index_extents(self) -> dict[sympy.Symbol, sympy.Expr]:
        """Each index variable (i0, ..., r0_0, ...) and the number of values it takes."""
        names = index_names(len(self.ranges)) + reduction_index_names(len(self.reduction_range_exprs))
        return {symbol(n): e for n, e in zip(names, [*self.range_exprs, *self.reduction_range_exprs])}

    def defined_names(self) -> list[str]:
        return [self.buffer.data]

    def referenced_names(self) -> Iterator[str]:
        for op in self.body.walk():
            if isinstance(op, LoadOp):
                yield op.buffer_name

    def store_op(self) -> StoreOp:
        last = self.body.block.last_op
        assert isinstance(last, StoreOp)
        return last

    def _verify_body(self) -> None:
        if self.body.block.args:
            raise VerifyException(f"{self.name}: the body takes no block arguments")
        last = self.body.block.last_op
        if not isinstance(last, StoreOp):
            raise VerifyException(f"{self.name} '{self.buffer.data}': body must end with buffer.store")
        if last.buffer_name != self.buffer.data:
            raise VerifyException(f"{self.name} '{self.buffer.data}': body stores to '{last.buffer_name}'")


@irdl_op_definition
class ComputedOp(BodyNode):
    """A buffer computed by a loop nest (Inductor's ComputedBuffer).

    The body runs once per point of `ranges` (x `reduction_ranges` for a reduction, in which
    case a `buffer.reduce` combines the values over the reduction indices) and ends with the
    store of this buffer."""

    name = "buffer.computed"
    reduction_ranges = opt_prop_def(ArrayAttr)
    assembly_format = (
        "$buffer custom<Layout>($layout) `ranges` custom<ExprList>($ranges)"
        " (`reduce` custom<ExprList>($reduction_ranges)^)? custom<Origins>($origins) $body attr-dict-with-keyword"
    )

    def __init__(
        self,
        name: str,
        layout: LayoutAttr,
        ranges: Sequence[sympy.Expr | int],
        body: Region,
        reduction_ranges: Sequence[sympy.Expr | int] = (),
        origins: Sequence[str] = (),
    ):
        props: dict[str, Attribute] = {"buffer": StringAttr(name), "layout": layout, "ranges": exprs_attr(ranges)}
        if reduction_ranges:
            props["reduction_ranges"] = exprs_attr(reduction_ranges)
        super().__init__(properties=props | origins_props(origins), regions=[body])

    @property
    def reduction_range_exprs(self) -> list[sympy.Expr]:
        return exprs_of(self.reduction_ranges.data) if self.reduction_ranges is not None else []

    @property
    def is_reduction(self) -> bool:
        return self.reduction_ranges is not None

    def dot_op(self) -> DotOp | None:
        return next((op for op in self.body.block.ops if isinstance(op, DotOp)), None)

    def verify_(self) -> None:
        if sympy.Mul(*self.range_exprs) != sympy.Mul(*self.layout.sizes):
            raise VerifyException(
                f"buffer.computed '{self.buffer.data}': ranges [{', '.join(map(expr_str, self.range_exprs))}] "
                f"do not cover its layout's {self.layout.rank}-d shape"
            )
        self._verify_body()
        reduces = [op for op in self.body.walk() if isinstance(op, ReduceOp)]
        if reduces and not self.is_reduction:
            raise VerifyException("buffer.reduce needs a computed node with reduce ranges")
        if (dot := self.dot_op()) is not None:
            if reduces or sum(isinstance(op, DotOp) for op in self.body.block.ops) > 1:
                raise VerifyException(f"buffer.computed '{self.buffer.data}': a contraction has one buffer.dot and no buffer.reduce")
            verify_contraction(self, dot, len(self.range_exprs), len(self.reduction_range_exprs))
        elif self.is_reduction and not reduces:
            raise VerifyException(
                f"buffer.computed '{self.buffer.data}': reduce ranges need a buffer.reduce to combine over them"
            )
        stores = self.store_op()
        if stores.indirect or stores.mode is not None:
            raise VerifyException(f"buffer.computed '{self.buffer.data}': stores at loaded positions are a buffer.scatter's")


@irdl_op_definition
class ScatterOp(BodyNode):
    """`base` with values stored at loaded positions (Inductor's Scatter, a mutation):

        buffer.scatter "buf1" #buffer.layout<[50, 16], [16, 1], f32> = @buf0 ranges [12, 16] {
          %0 = buffer.load @ids[i0] : i64
          %1 = loops.indirect_index %0 size 50 : i64
          %2 = buffer.load @grad[i1 + 16*i0] : f32
          buffer.store @buf1[i1 + 16*ind0] indirect(%1), %2 atomic_add : f32
        }

    The body runs once per point of `ranges` (the source's shape, not the buffer's) and its
    store writes (or, `atomic_add`, adds) into `base`'s storage: `buf1` is a new name for it
    once every point has run, with the same layout. `base` is a buffer made for this node
    (`--realize` copies the scatter's input into one), which nothing else reads."""

    name = "buffer.scatter"
    base = prop_def(SymbolRefAttr)
    assembly_format = (
        "$buffer custom<Layout>($layout) `=` custom<SymbolRef>($base) `ranges` custom<ExprList>($ranges) custom<Origins>($origins)"
        " $body attr-dict-with-keyword"
    )

    def __init__(
        self, name: str, layout: LayoutAttr, base: str, ranges: Sequence[sympy.Expr | int], body: Region,
        origins: Sequence[str] = (),
    ):
        props: dict[str, Attribute] = {
            "buffer": StringAttr(name), "layout": layout, "base": SymbolRefAttr(base), "ranges": exprs_attr(ranges),
            **origins_props(origins),
        }
        super().__init__(properties=props, regions=[body])

    @property
    def base_name(self) -> str:
        return self.base.root_reference.data

    def referenced_names(self) -> Iterator[str]:
        yield self.base_name
        yield from super().referenced_names()

    def verify_(self) -> None:
        self._verify_body()
        if any(isinstance(op, ReduceOp) for op in self.body.walk()):
            raise VerifyException(f"buffer.scatter '{self.buffer.data}': a scatter does not reduce")


@irdl_custom_directive
class BufferNames(PropertyDirective):
    """`"buf2", none`: the buffer an extern call's result defines, `none` where it returns no
    tensor."""

    attr: AttributeVariable

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        printer.print_list(self.attr.get(op).data, printer.print_attribute)  # type: ignore[union-attr]

    def parse(self, parser: Parser, state: ParsingState) -> None:
        def name() -> Attribute:
            return NoneType() if parser.parse_optional_keyword("none") else StringAttr(parser.parse_str_literal())

        self.attr.set(state, ArrayAttr(parser.parse_comma_separated_list(parser.Delimiter.NONE, name)))


class ExternCall(IRDLOperation):
    """Buffers written by one aten call at run time: `"buf2" = "mm.default" {args = [...]} : #layout`.

    `args`/`kwargs` are the call's Python arguments, with `@name` for a buffer. `buffers` has
    one entry per value the call returns: a name, or `none` where it returns no tensor (None, or
    a number): `none, "buf3" = "convolution_backward.default" ...`; `layouts` has one layout
    per name. `fresh` (`{args = [...], fresh}`): the call returns new tensors, none of them an
    argument or a view of one (its schema's returns carry no alias annotation); without it a
    result may hold an argument's storage. `out` (`{args = [...], fresh, out}`): the call writes
    each result into a new buffer allocated with its layout, passed as its `out=` argument (mm,
    addmm, bmm, baddbmm): how a result gets strides the call would not give it (pad-mm's rows
    padded to 16 bytes). Shared by `buffer.extern` and the wrapper's `triton.extern`, which
    differ only in where they live."""

    buffers = prop_def(ArrayAttr)
    layouts = prop_def(ArrayAttr)
    overload = prop_def(StringAttr)
    args = prop_def(ArrayAttr)
    kwargs = opt_prop_def(DictionaryAttr)
    origins = opt_prop_def(ArrayAttr)
    fresh = opt_prop_def(UnitAttr)
    out = opt_prop_def(UnitAttr)
    assembly_format = (
        "custom<BufferNames>($buffers) `=` $overload custom<ExternArgs>($args, $kwargs, $fresh, $out, $origins)"
        " (`:` custom<AttrList>($layouts)^)? attr-dict-with-keyword"
    )
    custom_directives = (BufferNames, ExternArgs, AttrList)

    def __init__(
        self,
        names: Sequence[str | None],
        layouts: Sequence[LayoutAttr],
        overload: str,
        args: Sequence[Attribute],
        kwargs: dict[str, Attribute] | None = None,
        origins: Sequence[str] = (),
        fresh: bool = False,
        out: bool = False,
    ):
        props: dict[str, Attribute] = {  # in the order of the syntax, as parsing sets them
            "buffers": ArrayAttr([NoneType() if n is None else StringAttr(n) for n in names]),
            "overload": StringAttr(overload),
            "args": ArrayAttr(list(args)),
        }
        if kwargs:
            props["kwargs"] = DictionaryAttr(kwargs)
        if fresh:
            props["fresh"] = UnitAttr()
        if out:
            props["out"] = UnitAttr()
        props |= origins_props(origins)
        props["layouts"] = ArrayAttr(list(layouts))
        super().__init__(properties=props)

    def result_names(self) -> list[str | None]:
        """Per value the call returns: its buffer's name, or None where it returns no tensor."""
        return [n.data if isinstance(n, StringAttr) else None for n in self.buffers.data]

    def defined_names(self) -> list[str]:
        return [n for n in self.result_names() if n is not None]

    def referenced_names(self) -> Iterator[str]:
        yield from symbol_refs(self.args)
        if self.kwargs is not None:
            yield from symbol_refs(self.kwargs)

    def layout_of(self, name: str) -> LayoutAttr | None:
        index = self.defined_names().index(name)
        layout = self.layouts.data[index] if index < len(self.layouts) else None
        return layout if isinstance(layout, LayoutAttr) else None  # verify_ reports a bad one

    def verify_(self) -> None:
        if any(not isinstance(n, (StringAttr, NoneType)) for n in self.buffers.data):
            raise VerifyException(f"{self.name}: each result is a buffer name or none")
        if len(self.defined_names()) != len(self.layouts) or not self.buffers.data:
            raise VerifyException(f"{self.name}: needs one layout per buffer name")
        if self.out is not None and self.overload.data not in OUT_OVERLOADS:
            raise VerifyException(f"{self.name}: out is for {', '.join(OUT_OVERLOADS)}, not {self.overload.data}")
        for layout in self.layouts.data:
            if not isinstance(layout, LayoutAttr):
                raise VerifyException(f"{self.name}: {layout} is not a #buffer.layout")


OUT_OVERLOADS = ("mm.default", "addmm.default", "bmm.default", "baddbmm.default")
"""The calls an extern with `out` may make: each writes its one result into the `out=` tensor
it is given, whatever its strides (cuBLAS takes rows any multiple of 16 bytes apart)."""


@irdl_op_definition
class ExternOp(ExternCall, BufferNode):
    """An extern node of the graph (Inductor's ExternKernel / FallbackKernel)."""

    name = "buffer.extern"


class ViewBase(IRDLOperation):
    """`"buf3" = @buf0 #buffer.layout<...>`: a buffer aliasing another's storage with its own
    layout (Inductor's ReinterpretView); shared by `buffer.view` and the wrapper's `triton.view`."""

    buffer = prop_def(StringAttr)
    source = prop_def(SymbolRefAttr)
    layout = prop_def(LayoutAttr)
    assembly_format = "$buffer `=` custom<SymbolRef>($source) custom<Layout>($layout) attr-dict"
    custom_directives = (Layout, SymbolRef)

    def __init__(self, name: str, source: str, layout: LayoutAttr):
        super().__init__(
            properties={"buffer": StringAttr(name), "source": SymbolRefAttr(source), "layout": layout}
        )

    def defined_names(self) -> list[str]:
        return [self.buffer.data]

    def referenced_names(self) -> list[str]:
        return [self.source.root_reference.data]

    def layout_of(self, name: str) -> LayoutAttr | None:
        return self.layout


@irdl_op_definition
class ViewOp(ViewBase, BufferNode):
    """A view node of the graph."""

    name = "buffer.view"


@irdl_op_definition
class FusedOp(BufferNode):
    """Nodes that `--fuse` grouped into one kernel, in execution order."""

    name = "buffer.fused"
    body = region_def("single_block")
    traits = traits_def(NoTerminator())
    assembly_format = "$body attr-dict-with-keyword"

    def __init__(self, body: Region):
        super().__init__(regions=[body])

    def members(self) -> list[BufferNode]:
        return [op for op in self.body.block.ops if isinstance(op, BufferNode)]

    def verify_(self) -> None:
        members = self.members()
        if any(isinstance(m, ScatterOp) for m in members) and not any(
                isinstance(m, ComputedOp) and m.is_contraction for m in members):
            raise VerifyException("buffer.fused: a buffer.scatter fuses only as a contraction's epilogue, "
                                  "and this group holds none")

    def defined_names(self) -> list[str]:
        return [n for m in self.members() for n in m.defined_names()]

    def referenced_names(self) -> Iterator[str]:
        inside: set[str] = set()
        for m in self.members():
            for ref in m.referenced_names():
                if ref not in inside:
                    yield ref
            inside.update(m.defined_names())


@irdl_op_definition
class OutputOp(IRDLOperation):
    """The graph's results, in order."""

    name = "buffer.output"
    outputs = prop_def(ArrayAttr)
    traits = traits_def(IsTerminator())
    assembly_format = "custom<SymbolRefs>($outputs) attr-dict"
    custom_directives = (SymbolRefs,)

    def __init__(self, names: Sequence[str]):
        super().__init__(properties={"outputs": ArrayAttr([SymbolRefAttr(n) for n in names])})

    @property
    def names(self) -> list[str]:
        return [r.root_reference.data for r in self.outputs.data]  # type: ignore[attr-defined]


Buffer = Dialect(
    "buffer",
    [GraphOp, InputOp, SizeInputOp, ComputedOp, ScatterOp, ExternOp, ViewOp, FusedOp, OutputOp, LoadOp, StoreOp, ReduceOp, DotOp],
    [LayoutAttr, MemoryDepAttr, StarDepAttr, WeakDepAttr],
)
