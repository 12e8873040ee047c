"""Stores at positions read from memory: index_put, scatter, scatter_add, index_add and the
backward of embedding.

Each is a copy of the input (or zeros) and a `loops.scatter` over the *source's* shape that
stores each value at its loaded position in that copy (`--realize` makes the copy a buffer the
scatter alone writes), adding atomically where positions can repeat:

    index_put(x, [i], v, accumulate=True)      %c = loops.pointwise [S0, D] { x[i0, i1] }
      x: [S0, D], i: [N], v: [N, D]            %r = loops.scatter %c [N, D] atomic_add {
                                                 %p = loops.indirect_index i[i0] size S0
                                                 loops.scatter_store [ind0, i1] indirect(%p), v[i0, i1] }

  index_put         the source shape is that of `x[indices]` (index.Tensor's rule: the index
                    tensors broadcast, None keeps a dim); `values` broadcast to it;
                    accumulate=True adds, False stores (one of repeated positions wins)
  scatter           out[..., index[..., k, ...], ...] = src[..., k, ...] along `dim` (src or a
                    number); scatter_add adds
  index_add         out[..., index[k], ...] += alpha * source[..., k, ...] along `dim`
  embedding_dense_backward
                    grad_weight[ids[n], d] += grad[n, d], rows of padding_idx left 0;
                    with scale_grad_by_freq, a first scatter counts each id and the rows
                    are divided by their id's count

Adds of float16/bfloat16 run in float32, as torch's decompositions compute them (the copy and
the scatter are float32, one pointwise narrows the result). Positions out of range write
outside the tensor (eager raises); `check-indices` asserts instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import sympy
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, Region, SSAValue

from mlc.dialects.loops import ScatterOp, ScatterStoreOp
from mlc.dialects.sym import indirect_symbol, sizes_of, tensor_type
from mlc.passes.lowering.body import Body, Value, make_pointwise
from mlc.passes.lowering.dtypes import dtype_of, storage_type
from mlc.passes.lowering.indexing import broadcast_index
from mlc.passes.lowering.indirect import advanced_index, is_index_tensor, position
from mlc.passes.lowering.registry import Call, Lowered, is_tensor, register, shape

# What a scatter stores: the element's place in the result (index expressions naming the
# positions as ind0, ...), those positions, and the value.
Store = tuple[list[sympy.Expr], list[SSAValue], Value]

_WIDENED = {"float16": "float32", "bfloat16": "float32"}


def _scatter(
    call: Call, base: SSAValue | None, ranges: Sequence[int], store: Callable[[Body], Store], add: bool,
    out: TensorType | None = None,
) -> Lowered:
    """copy (of `base`, or zeros) -> loops.scatter over `ranges` -> (narrowing when adding
    f16/bf16); the result is the call's, or `out`."""
    out = out or call.result_type
    dtype = dtype_of(out)
    assert dtype is not None
    work = _WIDENED.get(dtype, dtype) if add else dtype
    work_type = tensor_type(storage_type(work), sizes_of(out))
    if base is None:
        copy = make_pointwise(call, work_type, lambda b: b.constant(0, work))
    else:
        copy = make_pointwise(call, work_type, lambda b: b.cast(b.load(base, b.vars), work))
    body = Body(len(ranges))
    at, positions, value = store(body)
    body.block.add_op(ScatterStoreOp(at, body.stored(value, work), positions))
    body.drop_dead_ops()
    scatter = ScatterOp(copy.result, ranges, Region(body.block), "atomic_add" if add else None, [call.origin])
    for op in (scatter, *scatter.body.block.ops):
        op.location = call.op.location
    ops: list[Operation] = [copy, scatter]
    if work != dtype:
        ops.append(make_pointwise(call, out, lambda b: b.load(scatter.result, b.vars)))
    return Lowered(ops, [ops[-1].results[0]])


def _float_or_int(call: Call, *tensors: SSAValue) -> bool:
    """Same-dtype operands mlc computes in (not bool: adding flags is an `or`)."""
    dtypes = {dtype_of(call.result_type), *(dtype_of(t.type) for t in tensors)}
    return len(dtypes) == 1 and None not in dtypes and "bool" not in dtypes


@register("index_put")
def index_put(call: Call) -> Lowered | None:
    x, values, add = call["self"], call["values"], bool(call["accumulate"])
    if (index := advanced_index(x, call["indices"])) is None or not _float_or_int(call, x, values):
        return None
    ranges = index.shape  # the points of x[indices], each stored where it is read from

    def store(b: Body) -> Store:
        at, positions = index.at(b, b.vars)
        return at, positions, b.load(values, broadcast_index(b.vars, shape(values), ranges))

    return _scatter(call, x, ranges, store, add)


def _along(dim_size: int, index: SSAValue, at_dim: int, source: Callable[[Body], Value]) -> Callable[[Body], Store]:
    """A store at `index`'s position along `at_dim`, the other dims where the point is."""

    def store(b: Body) -> Store:
        at: list[sympy.Expr] = list(b.vars)
        at[at_dim] = indirect_symbol(0)
        return at, [position(b, index, b.vars, dim_size)], source(b)

    return store


@register("scatter.src", "scatter.value", "scatter_add")
def scatter(call: Call) -> Lowered | None:
    x, index, src = call["self"], call["index"], call["src"] if "src" in call.args else call["value"]
    xs = shape(x)
    if not xs or not is_index_tensor(index) or len(shape(index)) != len(xs):
        return None
    if is_tensor(src) and not _float_or_int(call, x, src) or not is_tensor(src) and not _float_or_int(call, x):
        return None
    dim = call["dim"] % len(xs)
    dtype = dtype_of(call.result_type)

    def source(b: Body) -> Value:
        return b.load(src, b.vars) if is_tensor(src) else b.constant(src, dtype)  # type: ignore[arg-type]

    return _scatter(call, x, shape(index), _along(xs[dim], index, dim, source), call.packet == "scatter_add")


@register("index_add")
def index_add(call: Call) -> Lowered | None:
    x, index, src, alpha = call["self"], call["index"], call["source"], call["alpha"]
    xs = shape(x)
    if not xs or not is_index_tensor(index) or len(shape(index)) != 1 or not _float_or_int(call, x, src):
        return None
    dim = call["dim"] % len(xs)
    dtype = dtype_of(call.result_type)

    def store(b: Body) -> Store:
        at: list[sympy.Expr] = list(b.vars)
        at[dim] = indirect_symbol(0)
        value = b.load(src, b.vars)
        if alpha != 1:
            value = b.mul(value, b.constant(alpha, dtype))  # type: ignore[arg-type]
        return at, [position(b, index, [b.vars[dim]], xs[dim])], value

    return _scatter(call, x, shape(src), store, add=True)


@register("embedding_dense_backward")
def embedding_dense_backward(call: Call) -> Lowered | None:
    grad, ids, rows, padding_idx = call["grad_output"], call["indices"], call["num_weights"], call["padding_idx"]
    if not is_index_tensor(ids):
        return None
    rank = len(shape(ids))
    counts = _counts(call, ids, rows) if call["scale_grad_by_freq"] else None

    def store(b: Body) -> Store:
        t = b.load(ids, b.vars[:rank])
        g = b.load(grad, b.vars)
        if padding_idx >= 0:
            g = b.select(b.compare("eq", b.cast(t, "int64"), b.constant(padding_idx, "int64")), b.constant(0.0, g.dtype), g)
        row = b.indirect_index(t, rows)
        if counts is not None:  # scale_grad_by_freq: each row's gradient over its id's count
            g = b.truediv(g, b.load(counts.results[0], [indirect_symbol(0)], indirect=[row]))
        return [indirect_symbol(0), b.vars[rank]], [row], g

    grads = _scatter(call, None, shape(grad), store, add=True)
    return grads if counts is None else Lowered([*counts.ops, *grads.ops], grads.results)


def _counts(call: Call, ids: SSAValue, rows: int) -> Lowered:
    """How often each of `rows` ids occurs in `ids` (float32: the divisor of its gradient)."""

    def store(b: Body) -> Store:
        return [indirect_symbol(0)], [b.indirect_index(b.load(ids, b.vars), rows)], b.constant(1.0, "float32")

    return _scatter(call, None, shape(ids), store, add=True, out=tensor_type(storage_type("float32"), [rows]))
