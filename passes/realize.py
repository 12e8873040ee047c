"""Store what `--inline` left: each func of loops ops becomes a buffer.graph of named buffers."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import ClassVar

import sympy
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    ModuleOp,
    NoneType,
    NameLoc,
    StringAttr,
    SymbolRefAttr,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from mlc.dialects import buffer, loops
from mlc.dialects.aten import FRESH_RESULTS, TensorArgAttr
from mlc.dialects.buffer_layout import (
    INPUT_STRIDES, OPERAND_STRIDES, OUT_RESULTS, OUTPUT_STRIDES, RESULT_STRIDES, LayoutAttr, contiguous_strides, is_dense,
    is_padded, strides_in_order,
)
from mlc.dialects.sym import IntType, SizesAttr, is_size_symbol, sizes_of, symbol, unnamed_sizes
from mlc.analysis.flat_index import access_order, affine_strides, followed_positions, loop_strides, simplify_index
from mlc.analysis.realization import (
    RealizeOptions,
    ThresholdOptions,
    consumers,
    is_eager_alias,
    is_view,
    realize_reason,
    reordered_copy_viewer,
    viewer_through_views,
)
from mlc.passes.stages import check_stage
from mlc.passes.pipeline import option

# What `explain` says of an op that no rule stores: only seen when --inline did not run.
NOT_INLINED = "no rule realizes it: --inline would recompute it in its consumers"


@dataclass(frozen=True)
class Storage:
    """Where a tensor value lives: a named buffer (the root storage, for views) and a layout."""

    name: str
    layout: LayoutAttr


def _describe(op: Operation) -> str:
    """`loops.pointwise "mul_2"`, `func.func @forward`: an op as error messages name it."""
    if isinstance(op, func.FuncOp):
        return f"{op.name} @{op.sym_name.data}"
    loc = op.location
    return f'{op.name} "{loc.desc.data}"' if isinstance(loc, NameLoc) else op.name


def _fail(op: Operation, message: str) -> PassFailedException:
    """A pass failure that tools can point at `op`'s position."""
    error = PassFailedException(f"{_describe(op)}: {message}")
    error.op = op  # type: ignore[attr-defined]
    return error


def _layout(typ: Attribute, op: Operation, strides: Sequence[int | sympy.Expr] | None = None) -> LayoutAttr:
    """A row-major layout (Inductor's FlexibleLayout, decided contiguous), or one with the given
    strides (promised for an output, traced for an extern's result); symbolic sizes give
    symbolic strides (`[s0, s1]`: `[s1, 1]`)."""
    if not isinstance(typ, TensorType):
        raise _fail(op, f"expected a tensor, got {typ}")
    if (why := unnamed_sizes(typ)) is not None:
        raise _fail(op, why)
    return LayoutAttr(sizes_of(typ), strides, typ.element_type)


def _output_strides(block: Block) -> dict[SSAValue, list[int | sympy.Expr]]:
    """The strides the graph promises for returned values, eager's (the importer's `strides`
    on func.return; an empty entry: row-major). A computed buffer that is returned is laid
    out with them where they are dense, so that it needs no copy into them after the call
    (Inductor's FixedLayout of outputs); a returned view is matched against them (see
    `keeps_promise`). A value returned twice keeps its first."""
    ret = block.last_op
    if not isinstance(ret, func.ReturnOp):
        return {}
    return _strides_attr(ret, OUTPUT_STRIDES, list(ret.arguments), dense=False)


def _operand_strides(block: Block) -> dict[SSAValue, list[int | sympy.Expr]]:
    """The strides extern calls were traced reading their operands with, where the importer
    recorded them (`operand_strides`: attention and convolutions, whose results are laid out
    as their operands are). A computed operand is stored with them, so that the call returns
    its results with the traced `result_strides` the IR fixed for them rather than being
    copied into them after the call (Inductor's `sdpa_constraint`, and its channels-last
    convolution inputs). A value read by two calls keeps the first's."""
    out: dict[SSAValue, list[int | sympy.Expr]] = {}
    for op in block.ops:
        if isinstance(op, loops.ExternOp):
            for value, strides in _strides_attr(op, OPERAND_STRIDES, list(op.tensors)).items():
                out.setdefault(value, strides)
    return out


def _read_as_laid_out(result: SSAValue) -> bool:
    """Whether every reader of `result` takes it in whatever layout it is stored in: loads
    whose index in each dim is affine in the reader's loops (a permute or a broadcast, not a
    reshape: a view merging or splitting dims is a strided window only on row-major storage,
    as Inductor freezes a flexible layout contiguous for it) and externs. Not a returned value
    (the caller expects row-major where no strides are promised) or a scatter's input."""
    for use in result.uses:
        reader = use.operation
        if isinstance(reader, (func.ReturnOp, loops.ScatterOp)):
            return False
        if isinstance(reader, loops.LoadOp):
            loops_vars = sorted({v for e in reader.index_exprs for v in e.free_symbols if not is_size_symbol(v.name)},
                                key=str)
            if any(loop_strides(e, loops_vars) is None for e in reader.index_exprs):
                return False
    return True


def _same_strides(sizes: Sequence[int | sympy.Expr], a: Sequence[int | sympy.Expr],
                  b: Sequence[int | sympy.Expr]) -> bool:
    """Whether two strides of `sizes` address the same elements (a size-1 dim's stride is free)."""
    return all(n == 1 or x == y or sympy.expand(x - y) == 0 for n, x, y in zip(sizes, a, b))


def _strides_attr(op: Operation, key: str, values: Sequence[SSAValue],
                  dense: bool = True) -> dict[SSAValue, list[int | sympy.Expr]]:
    """`op`'s `key` attribute (per value: an array<i64> of strides, empty for row-major, or a
    `#sym.sizes` of symbolic ones) as the strides of each value that has them; a clear error
    where they are not one per dim, or (`dense`) not a dense layout."""
    attr = op.attributes.get(key)
    if not isinstance(attr, ArrayAttr):
        return {}
    if len(attr.data) != len(values):
        raise _fail(op, f"'{key}' has {len(attr.data)} entries for {len(values)} values")
    out: dict[SSAValue, list[int | sympy.Expr]] = {}
    for k, (value, strides) in enumerate(zip(values, attr.data)):
        given: list[int | sympy.Expr] | None = None
        if isinstance(strides, DenseArrayBase):
            given = [int(v) for v in strides.get_values()]
        elif isinstance(strides, SizesAttr):
            given = list(strides.sizes)
        if given == []:
            continue
        shape = sizes_of(value.type) if isinstance(value.type, TensorType) else None
        if given is None or shape is None or len(given) != len(shape):
            raise _fail(op, f"'{key}' of value {k} are not strides of {value.type}: {strides}")
        if dense and not is_dense(shape, given):
            raise _fail(op, f"'{key}' of value {k} are not a dense layout of {value.type}: {strides}")
        out.setdefault(value, given)  # a value returned twice keeps its first entry
    return out


def _input_strides(f: func.FuncOp, k: int) -> list[int] | None:
    """Argument `k`'s `{strides = array<i64: ...>}` (the importer's: how the input comes when
    not row-major; any non-negative strides, one per dim), or None for row-major."""
    attrs = f.arg_attrs.data[k].data if f.arg_attrs is not None and k < len(f.arg_attrs.data) else {}
    strides = attrs.get(INPUT_STRIDES)
    if strides is None:
        return None
    typ = f.body.block.args[k].type
    given = [int(v) for v in strides.get_values()] if isinstance(strides, DenseArrayBase) else None
    if given is None or not isinstance(typ, TensorType) or len(given) != len(typ.get_shape()) or min(given, default=0) < 0:
        raise _fail(f, f"'{INPUT_STRIDES}' of argument {k} are not strides of {typ}: {strides}")
    return given


def _arg_name(arg: SSAValue, k: int, taken: set[str]) -> str:
    """An input's name: its `loc("primals_1")`, else its name hint, else `arg{k}`.

    The loc comes first because xDSL drops the `_1` of `%primals_1` from the name hint."""
    loc = getattr(arg, "location", None)
    for name in (loc.desc.data if isinstance(loc, NameLoc) else None, arg.name_hint, f"arg{k}"):
        if name and name not in taken and not re.fullmatch(r"(buf|view)\d+", name):
            return name
    return f"arg{k}_{len(taken)}"


def _index_vars(rank: int, prefix: str = "i") -> list[sympy.Symbol]:
    return [symbol(f"{prefix}{k}") for k in range(rank)]


def _var_ranges(op: loops.LoopsBodyOp) -> dict[sympy.Symbol, sympy.Expr]:
    """Each index variable's extent, for simplifying flat indices."""
    out = dict(zip(_index_vars(len(op.ranges)), op.range_exprs))
    if isinstance(op, loops.ReductionOp):
        out |= dict(zip(_index_vars(len(op.reduction_ranges), "r0_"), op.reduction_range_exprs))
    return out


def _origins(op: loops.ExternOp) -> list[str]:
    """As lower-aten names a loops op's origins: the importer's `origin` tag, else the packet."""
    tag = op.attributes.get("origin")
    return [tag.data] if isinstance(tag, StringAttr) else [op.overload.data.split(".")[0]]


def _fill_marks(attr: Attribute, refs: Iterator[SymbolRefAttr]) -> Attribute:
    """Replace each `#aten.tensor` (depth first, in order) by the next buffer reference."""
    if isinstance(attr, TensorArgAttr):
        return next(refs)
    if isinstance(attr, ArrayAttr):
        return ArrayAttr([_fill_marks(a, refs) for a in attr.data])
    if isinstance(attr, DictionaryAttr):
        return DictionaryAttr({k: _fill_marks(v, refs) for k, v in attr.data.items()})
    return attr


class _Realizer:
    """One func's conversion: storage and names per SSA value, buffer counters, new nodes."""

    def __init__(self, f: func.FuncOp, options: RealizeOptions, explain: bool, keep_padded_outputs: bool = False):
        self.func, self.block = f, f.body.block
        self.options, self.explain = options, explain
        self.keep_padded_outputs = keep_padded_outputs
        self.uses = consumers(self.block)
        self.storage: dict[SSAValue, Storage] = {}  # what body loads read
        self.names: dict[SSAValue, str] = {}  # what externs and outputs refer to (views too)
        self.nodes: list[Operation] = []
        self.counters = {"buf": 0, "view": 0}
        self.output_strides = _output_strides(self.block)
        self.operand_strides = _operand_strides(self.block)

    def fresh(self, prefix: str) -> str:
        """buf0, buf1, ... in program order, never reused; views count apart (view0, ...)."""
        self.counters[prefix] += 1
        return f"{prefix}{self.counters[prefix] - 1}"

    def live_ops(self) -> set[Operation]:
        """Ops whose values reach an output or an extern (externs always run)."""
        live: set[Operation] = set()
        for op in reversed(list(self.block.ops)):
            if not isinstance(op, loops.LoopsBodyOp) or any(
                u in live or isinstance(u, func.ReturnOp) for u in self.uses[op]
            ):
                live.add(op)
        return live

    def run(self) -> list[Operation]:
        for k, arg in enumerate(self.block.args):
            name = _arg_name(arg, k, set(self.names.values()))
            if isinstance(arg.type, IntType):
                self.names[arg] = name
                self.nodes.append(buffer.SizeInputOp(name, arg.type.expr))
                continue
            layout = _layout(arg.type, self.func, _input_strides(self.func, k))
            self.storage[arg], self.names[arg] = Storage(name, layout), name
            self.nodes.append(buffer.InputOp(name, layout))
        live = self.live_ops()
        for op in self.block.ops:
            if isinstance(op, loops.ExternOp):
                self.extern(op)
            elif isinstance(op, loops.LoopsBodyOp):
                if op in live:
                    self.loops_op(op)
            elif isinstance(op, func.ReturnOp):
                self.nodes.append(buffer.OutputOp([self.names[v] for v in op.arguments]))
            else:
                raise _fail(op, "not a loops op; only loops IR can be realized")
        return self.nodes

    def add(self, node: Operation, source: Operation) -> None:
        """Append a node with the loops op's location (and, with explain, why it is stored)."""
        node.location = source.location
        if self.explain and not isinstance(node, buffer.ExternOp):  # externs print no attributes
            reason = realize_reason(source, self.uses[source], self.options) or NOT_INLINED
            node.attributes["realize_reason"] = StringAttr(reason)
        self.nodes.append(node)

    def extern(self, op: loops.ExternOp) -> None:
        """`buffer.extern`: the call's tensor marks become `@name`s, operands in order."""
        refs = iter([SymbolRefAttr(self.names[t]) for t in op.tensors])
        args = [_fill_marks(a, refs) for a in op.args.data]
        kwargs = {k: _fill_marks(v, refs) for k, v in op.kwargs.data.items()} if op.kwargs else None
        # A result that is not a tensor (a None or a number the call returns), or that nothing
        # reads, names no buffer (`none`): the call may return None there at run time even
        # where tracing saw a tensor (cuDNN attention's logsumexp when it is not asked for).
        tensors = [r for r in op.results if not isinstance(r.type, NoneType) and r.uses]
        # As the call lays them out, or (`out`: pad-mm's padded rows) as it is told to write them.
        out = OUT_RESULTS in op.attributes
        traced = _strides_attr(op, RESULT_STRIDES, list(op.results), dense=not out)
        layouts = [_layout(r.type, op, traced.get(r)) for r in tensors]
        names = {r: self.fresh("buf") for r in tensors}
        results = [names.get(r) for r in op.results]
        fresh = FRESH_RESULTS in op.attributes
        self.add(buffer.ExternOp(results, layouts, op.overload.data, args, kwargs, _origins(op), fresh, out), op)
        for result, layout in zip(tensors, layouts):
            self.storage[result], self.names[result] = Storage(names[result], layout), names[result]

    def loops_op(self, op: loops.LoopsBodyOp) -> None:
        """A view re-indexes its source; anything else is one computed per read result."""
        if isinstance(op, loops.ScatterOp):
            return self.scatter(op)
        if self.as_view(op):
            return
        for k, result in enumerate(op.results):
            if not result.uses:
                continue  # an unread result: Inductor drops it as a dead buffer
            strides = self.stored_strides(result) or self.read_order_strides(op, result)
            name, layout = self.fresh("buf"), _layout(result.type, op, strides)
            self.storage[result], self.names[result] = Storage(name, layout), name
            reduce = op.reduction_range_exprs if isinstance(op, loops.ReductionOp) else []
            body = Region(self.body(op, self.storage[result], k))
            self.add(buffer.ComputedOp(name, layout, op.range_exprs, body, reduce, op.origin_names), op)

    def scatter(self, op: loops.ScatterOp) -> None:
        """`buffer.scatter` into the buffer of its input, a copy made for it alone (lower-aten
        builds one), so no other reader sees the writes."""
        base = op.base.owner
        if not isinstance(base, loops.PointwiseOp) or self.uses[base] != [op] or op.base not in self.names:
            raise _fail(op, "a scatter writes into a copy of its input that only it reads (loops.pointwise)")
        storage = self.storage[op.base]
        name = self.fresh("buf")
        body = Region(self.body(op, Storage(name, storage.layout), 0))
        self.add(buffer.ScatterOp(name, storage.layout, storage.name, op.range_exprs, body, op.origin_names), op)
        self.storage[op.result], self.names[op.result] = Storage(name, storage.layout), name

    def as_view(self, op: loops.LoopsBodyOp) -> bool:
        """A single load at an affine index is a strided window on storage: no copy.

        Loads through it read the root storage at the view layout's flat index, so views never
        chain; externs, which take tensors, and the graph's outputs get a `buffer.view` node to
        name it by (Inductor's ReinterpretView: a weight gradient `mm(...).t()` is returned as
        the transposed mm result, not copied; a transposed weight saved for the backward is
        returned as a view of the weight, as eager's `w.t()` is)."""
        if not is_view(op) or any(isinstance(u, loops.ScatterOp) for u in self.uses[op]):
            return False  # a scatter's input is copied: the scatter writes into it
        if reordered_copy_viewer(op, self.uses[op]) is not None:
            return False  # the copy externs' views read (realization.reordered_copy_viewer)
        load = op.body.block.first_op
        assert isinstance(load, loops.LoadOp)
        source = self.storage[load.source]
        returned = any(isinstance(u, func.ReturnOp) for u in self.uses[op])
        flat = simplify_index(source.layout.flat_index(load.index_exprs), _var_ranges(op))
        strided = affine_strides(flat, _index_vars(len(op.ranges)))
        if strided is None:
            return False
        layout = LayoutAttr(op.range_exprs, strided[1], source.layout.dtype, strided[0])
        if returned and not (is_eager_alias(op) and self.keeps_promise(op.results[0], layout)):
            return False  # stored: a new tensor in eager (a clone), or copied into the promised strides
        wanted = self.operand_strides.get(op.results[0])
        if wanted is not None and not _same_strides(layout.sizes, layout.strides, wanted):
            return False  # stored in the strides an extern reads it with (a channels-last clone of an input)
        self.storage[op.results[0]] = Storage(source.name, layout)
        if returned or any(isinstance(u, loops.ExternOp) for u in self.uses[op]):
            name = self.names[op.results[0]] = self.fresh("view")
            self.add(buffer.ViewOp(name, source.name, layout), op)
        return True

    def stored_strides(self, result: SSAValue) -> list[int | sympy.Expr] | None:
        """The strides a computed `result` is stored with: the promised ones where it is
        returned and they are a dense layout; else those an extern was traced reading it with
        (`_operand_strides`); else None (row-major; the caller copies a result whose promise
        no buffer can keep, such as eager's slice)."""
        promised = self.output_strides.get(result)
        if promised is not None and is_dense(sizes_of(result.type), promised):
            return promised
        return self.operand_strides.get(result)

    def read_order_strides(self, op: loops.LoopsBodyOp, result: SSAValue) -> list[int] | None:
        """Dense strides in the order `op`'s loads walk memory, where that is not row-major
        (Inductor's `get_fill_order` for a flexible layout): each load's flat index votes for
        which loop is inner (`access_order`, reduction loops at 0), so a batch norm over
        channels-last convolution outputs is stored channels-last too and fuses with its
        channels-last readers. None (row-major) where a reader needs row-major
        (`_read_as_laid_out`), where an extern reads it through a chain of views
        (`viewer_through_views` judged the chain a window on row-major storage: BERT's queries,
        cast to f32 in their heads' transposed order, were copied again for the bmm), over
        symbolic sizes, where a load is not affine in the loops, or where no load has integer
        strides."""
        sizes = op.range_exprs
        if not all(isinstance(n, int) or n.is_Integer for n in sizes) or not _read_as_laid_out(result):
            return None
        if isinstance(op, loops.PointwiseOp) and (viewed := viewer_through_views(op, self.uses[op])) and viewed[1] > 1:
            return None
        variables = _index_vars(len(sizes))
        every = list(_var_ranges(op))
        reduction = {r: 0 for r in every if r not in variables}
        flat = [self.storage[load.source].layout.flat_index(load.index_exprs)
                .xreplace(followed_positions(load, every)).subs(reduction)
                for load in op.body.walk() if isinstance(load, loops.LoadOp) and load.source in self.storage]
        order = access_order(flat, variables, sizes)
        return None if order is None else [int(st) for st in strides_in_order(sizes, order)]

    def keeps_promise(self, result: SSAValue, view: LayoutAttr) -> bool:
        """Whether `view` may be returned as it is: anything but the promised strides (eager's,
        row-major where func.return has no entry) with padded rows, pad-mm's sliced result,
        which is stored instead (a graph whose caller expects the promised strides). With
        `keep-padded-outputs` (the backend's inference and forward graphs: the user and, told
        the strides, AOTAutograd's backward take them padded) that stays a view too. Other strides are kept as they are: symbolic ones, and
        those the importer states no preference for (an expanded view)."""
        if self.keep_padded_outputs:
            return True
        sizes, strides = view.sizes, view.strides
        promised = self.output_strides.get(result) or contiguous_strides(sizes)
        if not all(isinstance(v, int) or v.is_Integer for v in [*sizes, *strides, *promised]):
            return True
        sizes, strides, promised = ([int(v) for v in vs] for vs in (sizes, strides, promised))
        if _same_strides(sizes, strides, promised):
            return True
        return not is_padded(sizes, strides, promised)

    def body(self, op: loops.LoopsBodyOp, dest: Storage, output: int) -> Block:
        """The body with loads flattened and yielded value `output` stored at `dest`."""
        block, mapping, ranges = Block(), {}, _var_ranges(op)
        for body_op in op.body.block.ops:
            if isinstance(body_op, loops.ScatterStoreOp):
                index = simplify_index(dest.layout.flat_index(body_op.index_exprs), ranges)
                indirect = [mapping[v] for v in body_op.indirect]
                mode = op.store_mode if isinstance(op, loops.ScatterOp) else None
                block.add_op(buffer.StoreOp(dest.name, index, mapping[body_op.value], indirect, mode))
                _erase_unused(block)
                return block
            if isinstance(body_op, loops.YieldOp):
                index = dest.layout.flat_index(_index_vars(len(op.ranges)))
                block.add_op(buffer.StoreOp(dest.name, index, mapping[body_op.values[output]]))
                _erase_unused(block)
                return block
            if isinstance(body_op, loops.LoadOp) and self.storage[body_op.source].layout.is_empty:
                new: Operation = loops.masked_off_value(body_op.result.type)  # no element to read: masked off
            elif isinstance(body_op, loops.LoadOp):
                src = self.storage[body_op.source]
                index = simplify_index(src.layout.flat_index(body_op.index_exprs), ranges)
                mask = mapping[body_op.mask] if body_op.mask is not None else None
                indirect = [mapping[v] for v in body_op.indirect]
                new = buffer.LoadOp(src.name, index, body_op.result.type, mask, indirect)
            elif isinstance(body_op, loops.ReduceOp):
                types = [r.type for r in body_op.outputs]
                new = buffer.ReduceOp(body_op.kind, mapping[body_op.value], types)
            elif isinstance(body_op, loops.DotOp):
                new = buffer.DotOp(mapping[body_op.lhs], mapping[body_op.rhs], body_op.result.type)
            else:
                new = body_op.clone(value_mapper=mapping)  # arith, math and loops.index stay
            block.add_op(new)
            mapping.update(zip(body_op.results, new.results))
        raise AssertionError("loops body without loops.yield")  # the verifier rules this out


def _erase_unused(block: Block) -> None:
    """Drop what the stored value does not need: a reduction's other results, for one."""
    for op in reversed(list(block.ops)[:-1]):
        if not any(r.uses for r in op.results):
            Rewriter.erase_op(op)


@dataclass(frozen=True)
class RealizePass(ThresholdOptions, ModulePass):
    """Store the loops ops left by `--inline`: func.func -> buffer.graph of named buffers.

        func.func @f(%x: tensor<8x64xf32>, %w: tensor<64x32xf32>) -> tensor<8x32xf32> {
          %t = loops.pointwise [32, 64] -> tensor<32x64xf32> { ... %w[i1, i0] ... }
          %m = loops.extern "mm.default" (%x, %t) {args = [#aten.tensor, #aten.tensor]} : ...
          %g = loops.pointwise [8, 32] origins ["gelu"] -> tensor<8x32xf32> {
            %0 = loops.load %m[i0, i1] : tensor<8x32xf32> ... loops.yield %9 : f32 }
          func.return %g : tensor<8x32xf32> }
      becomes
        buffer.graph @f {
          buffer.input "x" #buffer.layout<[8, 64], [64, 1], f32>   (and "w")
          buffer.view "view0" = @w #buffer.layout<[32, 64], [1, 32], f32>
          buffer.extern "buf0" = "mm.default" {args = [@x, @view0], origins = ["mm"]} : ...
          buffer.computed "buf1" #buffer.layout<[8, 32], [32, 1], f32> ranges [8, 32] origins ["gelu"] {
            %0 = buffer.load @buf0[i1 + 32*i0] : f32 ... buffer.store @buf1[i1 + 32*i0], %9 : f32 }
          buffer.output @buf1 }

    Inputs are named by their `loc`, name hint or position. Every loops op becomes a
    `buffer.computed "bufN"` (N in program order from 0, externs counted, never reused) with a
    contiguous layout (a returned one: the strides `func.return {strides = [...]}` promises
    for it, eager's, where they are dense: a transposed or channels-last output; an attention,
    convolution or pooling operand: the strides the call was traced reading it with,
    `operand_strides`; a value no reader constrains: the order its loads walk memory, Inductor's
    `get_fill_order`, `read_order_strides`), its location
    and origins; loads read the producer at its layout's flat
    index, and the yielded value is stored at this buffer's. A reduction gets one computed per
    read result (max.dim's max and argmax, var_mean's mean and var), each with the part of the
    body its value needs and `loops.reduce` as `buffer.reduce`, as Inductor gives each output of
    a multi-output reduction its own buffer. A view (one load at an affine index) is no copy:
    loads read its root storage, and an extern gets `buffer.view "viewN"` (Inductor's
    ReinterpretView, numbered apart so bufN match Inductor's). A returned view keeps its
    strides (eager's slice `x[:, :5]` has rows 8 apart too) unless it is the promised layout
    with padded rows (pad-mm's sliced mm result, rows 50264 apart where 50257 are promised):
    that one is stored instead, as a copy into the promised strides. An extern call's results are
    row-major, or laid out with the strides the importer traced for them (`result_strides`:
    attention's output in [B, S, H, D] order), so that the call's result is used in place.
    Ops whose values reach no output or extern are dropped. Alone, without `--inline`, the
    pass is correct but less fused: what `--inline` would have folded into its consumers is
    stored and loaded.

    Options (the thresholds carry `--inline`'s names and defaults, for one pipeline to set
    both; here they only feed `explain`):
      reads-threshold=4, acc-reads-threshold=8, opcount-threshold=30   see `--inline`
      explain=false   add `realize_reason = "..."` to each computed and view: the rule that
                      stores it, as `realization.realize_reason` finds it on this pass's input
      keep-padded-outputs=false   return a view with padded rows (each dim's stride at least
                      the promised one) as it is, uncopied: for a graph whose callers take
                      the strides it returns (the backend's inference and forward graphs)
    Fails when: a func holds an op that is not loops IR, a dynamic (`?`) dim has no size
    symbol, func.return's `strides` are not one stride per dim of each result, or an extern's
    `result_strides` not one dense layout per result.
    """

    name = "realize"
    ACCEPTS: ClassVar[tuple[str, ...]] = ("loops",)
    explain: bool = option(False, "write realize_reason on each stored node: the rule that stores it")
    keep_padded_outputs: bool = option(
        False, "return a view with padded rows (pad-mm's sliced mm) as it is, not copied into the promised strides")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_stage(self, op)
        for f in [o for o in op.walk() if isinstance(o, func.FuncOp) and o.body.blocks]:
            nodes = _Realizer(f, self.options, self.explain, self.keep_padded_outputs).run()
            graph = buffer.GraphOp(f.sym_name.data, Region(Block(nodes)))
            graph.location = f.location
            Rewriter.replace_op(f, graph, new_results=[])
