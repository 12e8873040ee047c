"""Views as re-indexing, and the data-movement ops built on masked loads (cat, padding).

A view becomes a `loops.pointwise` whose body is one raw `loops.load` of its source at the
re-indexed position (never a copy: `--inline` folds it into its consumers). Multi-result
splits give one such pointwise per piece. `cat`, `constant_pad_nd`, `slice_scatter` and
`select_scatter` read their inputs with masked loads and pick the element with `arith.select`,
as Inductor's pointwise_cat does: slice_backward (zeros, then slice_scatter) becomes a select
that `--inline` folds into the gradient's consumer, not a fill and a copy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import sympy
from xdsl.ir import Operation

from mlc.dialects.sym import FloorDiv, ModularIndexing
from mlc.passes.lowering.body import Body, IndexFn, Value, load_as_is, make_pointwise
from mlc.passes.lowering.dtypes import dtype_of
from mlc.passes.lowering.indexing import Index, broadcast_index, contiguous_strides, reshape_index, unflatten
from mlc.passes.lowering.registry import Call, register, shape

def _dim(dim: int, rank: int) -> int:
    """A dim argument, negative ones counted from the end (rank 0 tensors accept 0 and -1)."""
    return dim + max(rank, 1) if dim < 0 else dim


def _view(call: Call, fn: IndexFn) -> list[Operation]:
    return [load_as_is(call, call["self"], fn)]


def _replace(index: Sequence[sympy.Expr], dim: int, expr: sympy.Expr) -> Index:
    out = list(index)
    out[dim] = expr
    return out


@register("view", "reshape", "_unsafe_view", "squeeze", "squeeze.dim", "squeeze.dims", "unsqueeze")
def reshape(call: Call) -> list[Operation] | None:
    """Reshapes, and squeeze/unsqueeze (which only drop or insert size-1 dims)."""
    in_shape, out_shape = shape(call["self"]), shape(call.results[0])
    if in_shape == out_shape:
        return _view(call, lambda index: index)
    return _view(call, lambda index: reshape_index(index, in_shape, out_shape))


@register("permute")
def permute(call: Call) -> list[Operation] | None:
    rank = len(shape(call["self"]))
    dims = [_dim(d, rank) for d in call["dims"]]

    def fn(index: list[sympy.Expr]) -> Index:
        source: Index = [sympy.Integer(0)] * rank
        for out_dim, in_dim in enumerate(dims):
            source[in_dim] = index[out_dim]  # output dim k walks input dim dims[k]
        return source

    return _view(call, fn)


def _swap(index: Sequence[sympy.Expr], a: int, b: int) -> Index:
    out = list(index)
    out[a], out[b] = out[b], out[a]
    return out


@register("transpose.int", "t")
def transpose(call: Call) -> list[Operation] | None:
    rank = len(shape(call["self"]))
    if rank < 2:
        return _view(call, lambda index: index)  # t() of 0-d and 1-d tensors is the identity
    a, b = (0, 1) if call.packet == "t" else (_dim(call["dim0"], rank), _dim(call["dim1"], rank))
    return _view(call, lambda index: _swap(index, a, b))


@register("expand")
def expand(call: Call) -> list[Operation] | None:
    in_shape, out_shape = shape(call["self"]), shape(call.results[0])
    return _view(call, lambda index: broadcast_index(index, in_shape, out_shape))


def _slice_start(size: int | sympy.Expr, start: int | sympy.Expr | None) -> int | sympy.Expr:
    """torch's normalization of a slice start: negative from the end, clamped into range.
    With a symbolic size, a start from the front is kept as it is: past the end, the slice is
    empty and reads nothing; one from the end is `Max(start + size, 0)`."""
    start = 0 if start is None else start
    if isinstance(size, int) and isinstance(start, int):
        return min(max(start + size if start < 0 else start, 0), size)
    if not isinstance(start, int) or start >= 0:
        return start
    return sympy.Max(start + size, 0)


@register("slice.Tensor")
def slice_(call: Call) -> list[Operation] | None:
    in_shape = shape(call["self"])
    dim = _dim(call["dim"], len(in_shape))
    # The end only decides the output size, which the result type already records.
    start, step = _slice_start(in_shape[dim], call["start"]), call["step"]
    return _view(call, lambda index: _replace(index, dim, start + step * index[dim]))


@register("select.int")
def select(call: Call) -> list[Operation] | None:
    in_shape = shape(call["self"])
    dim = _dim(call["dim"], len(in_shape))
    pos = call["index"] + in_shape[dim] if call["index"] < 0 else call["index"]
    return _view(call, lambda index: [*index[:dim], sympy.Integer(pos), *index[dim:]])


@register("as_strided")
def as_strided(call: Call) -> list[Operation] | None:
    """A view of the source's row-major storage: element j reads the source's flat position
    offset + sum(j_k * stride_k), unflattened into the source's shape.

    Only for sources computed in the graph, whose layout mlc decides (row-major, as Inductor
    freezes a FlexibleLayout to contiguous for as_strided), and only when every position lies
    in the source: group_norm's decomposition reshapes its statistics this way. An as_strided
    of a graph input depends on the caller's strides and stays an extern call."""
    x, size, stride = call["self"], call["size"], call["stride"]
    offset = call.get("storage_offset", 0)
    in_shape = shape(x)
    if not isinstance(x.owner, Operation) or len(size) != len(stride) or shape(call.results[0]) != list(size):
        return None
    numel = 1
    for s in in_shape:
        numel *= s
    if any(s == 0 for s in size):
        return _view(call, lambda index: [sympy.Integer(0)] * len(in_shape))
    last = offset + sum((s - 1) * st for s, st in zip(size, stride))
    if offset < 0 or any(st < 0 for st in stride) or last >= numel:
        return None
    if offset == 0 and last == numel - 1 and list(stride) == contiguous_strides(size):
        return _view(call, lambda index: reshape_index(index, in_shape, list(size)))  # a reshape

    def fn(index: list[sympy.Expr]) -> Index:
        linear = sympy.Integer(offset) + sum((i * st for i, st in zip(index, stride) if st), sympy.Integer(0))
        return unflatten(linear, in_shape)

    return _view(call, fn)


@register("flip")
def flip(call: Call) -> list[Operation] | None:
    in_shape = shape(call["self"])
    dims = {_dim(d, len(in_shape)) for d in call["dims"]}
    return _view(call, lambda index: [in_shape[d] - 1 - i if d in dims else i for d, i in enumerate(index)])


# -- multi-result splits ------------------------------------------------------------------------


def _pieces(call: Call, dim: int, fn: Callable[[int, int], IndexFn]) -> list[Operation]:
    """One view per result; `fn(k, offset)` gives the index map of piece k starting at offset."""
    ops, offset = [], 0
    for k, result in enumerate(call.results):
        ops.append(load_as_is(call, call["self"], fn(k, offset), result=k))
        offset += shape(result)[dim] if call.packet != "unbind" else 1
    return ops


@register("split.Tensor", "split_with_sizes")
def split(call: Call) -> list[Operation] | None:
    dim = _dim(call["dim"], len(shape(call["self"])))
    return _pieces(call, dim, lambda k, offset: lambda index: _replace(index, dim, index[dim] + offset))


@register("unbind.int")
def unbind(call: Call) -> list[Operation] | None:
    dim = _dim(call["dim"], len(shape(call["self"])))
    return _pieces(call, dim, lambda k, _: lambda index: [*index[:dim], sympy.Integer(k), *index[dim:]])


# -- masked loads: cat and constant padding -------------------------------------------------------


def _in_range(b: Body, pos: Value, low: int | sympy.Expr | None, high: int | sympy.Expr | None) -> Value | None:
    """low <= pos < high as an i1 value, leaving out bounds that are None (bounds may be sizes)."""
    checks = []
    if low is not None:
        checks.append(b.compare("ge", pos, b.count(low, "int64")))
    if high is not None:
        checks.append(b.compare("lt", pos, b.count(high, "int64")))
    if not checks:
        return None
    return checks[0] if len(checks) == 1 else b.logical_and(checks[0], checks[1])


def _empty(size: int | sympy.Expr) -> bool:
    return isinstance(size, int) and size == 0


@register("cat")
def cat(call: Call) -> list[Operation] | None:
    out_type = call.result_type
    out_dtype = dtype_of(out_type)
    dim = _dim(call["dim"], out_type.get_num_dims())
    # Legacy empty inputs (shape [0]) and empty slices contribute nothing.
    inputs = [t for t in call["tensors"] if t.type.get_num_dims() == out_type.get_num_dims() and not _empty(shape(t)[dim])]
    if out_dtype is None or any(dtype_of(t.type) is None for t in inputs) or not inputs:
        return None
    starts = [0]
    for t in inputs:
        starts.append(starts[-1] + shape(t)[dim])
    raw = all(dtype_of(t.type) == out_dtype for t in inputs)  # pure data movement: no widening

    def body(b: Body) -> Value:
        pos = b.index(b.vars[dim]) if len(inputs) > 1 else None
        loads: list[tuple[Value | None, Value]] = []
        for k, t in enumerate(inputs):
            low = starts[k] if k > 0 else None
            high = starts[k + 1] if k < len(inputs) - 1 else None
            mask = _in_range(b, pos, low, high) if pos is not None else None
            index = _replace(b.vars, dim, b.vars[dim] - starts[k])
            v = b.load(t, index, mask=mask, widen=not raw)
            loads.append((mask, v if raw else b.cast(v, out_dtype)))
        value = loads[-1][1]
        for mask, v in reversed(loads[:-1]):
            value = b.select(mask, v, value)  # type: ignore[arg-type]
        return value

    return [make_pointwise(call, out_type, body)]


@register("constant_pad_nd")
def constant_pad_nd(call: Call) -> list[Operation] | None:
    """Pads are (low, high) pairs from the last dim backwards; negative pads crop."""
    x, pad, fill = call["self"], call["pad"], call["value"]
    in_shape, dtype = shape(x), dtype_of(x.type)
    if dtype is None or len(pad) % 2 or len(pad) // 2 > len(in_shape):
        return None
    bounds = {len(in_shape) - 1 - k: (pad[2 * k], pad[2 * k + 1]) for k in range(len(pad) // 2)}

    def body(b: Body) -> Value:
        index, masks = list(b.vars), []
        for d, (low, high) in sorted(bounds.items()):
            index[d] = b.vars[d] - low
            # Only a positive pad can step outside the input on that side.
            lo, hi = (low if low > 0 else None), (low + in_shape[d] if high > 0 else None)
            if lo is not None or hi is not None:
                masks.append(_in_range(b, b.index(b.vars[d]), lo, hi))
        mask = None
        for m in masks:
            mask = m if mask is None else b.logical_and(mask, m)
        v = b.load(x, index, mask=mask, widen=mask is not None)
        return v if mask is None else b.select(mask, v, b.constant(fill, dtype))

    return [make_pointwise(call, call.result_type, body)]



@register("slice_scatter")
def slice_scatter(call: Call) -> list[Operation] | None:
    """`self` with `src` in place of self[start:end:step] along `dim`: a point inside the slice
    reads src at (pos - start) / step, any other point reads self."""
    x, src = call["self"], call["src"]
    xs, dtype = shape(x), dtype_of(x.type)
    if dtype is None or dtype_of(src.type) != dtype:
        return None
    dim = _dim(call["dim"], len(xs))
    start, step, count = _slice_start(xs[dim], call["start"]), call["step"], shape(src)[dim]
    if not isinstance(step, int) or step < 1:
        return None
    end = start + step * (count - 1) + 1 if step != 1 else start + count  # one past the last point written
    if _empty(count):
        return [load_as_is(call, x, lambda index: list(index))]

    def body(b: Body) -> Value:
        v = b.vars[dim]
        pos = b.index(v)
        mask = _in_range(b, pos, start if start != 0 else None, end if end != xs[dim] else None)
        if step != 1:
            on_step = b.compare("eq", b.index(ModularIndexing(v - start, 1, step)), b.constant(0, "int64"))
            mask = on_step if mask is None else b.logical_and(mask, on_step)
        inside = _replace(b.vars, dim, v - start if step == 1 else FloorDiv(v - start, step))
        if mask is None:  # src covers the whole dim
            return b.load(src, inside, widen=False)
        return b.select(mask, b.load(src, inside, mask=mask, widen=False), b.load(x, b.vars, widen=False))

    return [make_pointwise(call, call.result_type, body)]


@register("select_scatter")
def select_scatter(call: Call) -> list[Operation] | None:
    """`self` with `src` in place of self.select(dim, index): the points at that index along
    `dim` read src, the others self."""
    x, src = call["self"], call["src"]
    xs, dtype = shape(x), dtype_of(x.type)
    if dtype is None or dtype_of(src.type) != dtype:
        return None
    dim = _dim(call["dim"], len(xs))
    at = call["index"]
    if isinstance(at, int) and at < 0:
        at += xs[dim]

    def body(b: Body) -> Value:
        mask = b.compare("eq", b.index(b.vars[dim]), b.count(at, "int64"))
        inside = [*b.vars[:dim], *b.vars[dim + 1:]]
        return b.select(mask, b.load(src, inside, mask=mask, widen=False), b.load(x, b.vars, widen=False))

    return [make_pointwise(call, call.result_type, body)]
