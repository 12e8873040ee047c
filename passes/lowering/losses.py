"""nll_loss_forward and nll_loss_backward without indirect indexing.

torch's decompositions pick `x[n, target[n]]` with `gather` and build the gradient with
`scatter`, both data-dependent indexing that mlc leaves to aten (a later issue). mlc's table
keeps both ops instead (see frontend/decompositions.py), and they are lowered here by reading
the whole class row, which cross_entropy's log_softmax has just produced anyway:

  forward   the picked element is a reduction over the class dim c of
              select(c == t && t != ignore_index, -x[n, c] * w[c], 0)
            reduction none (2-d input): one reduction [N] over [C], and total_weight is the
              constant 0 that torch returns;
            sum and mean (2-d input): the same row reduction [N] over [C] (with a weight, a
              second sum picks w[t[n]] the same way), then one reduction [] over [N] with two
              sums, the loss and total_weight (the row weights, or the count of non-ignored
              targets without a weight); mean divides them in the epilogue (0 / 0 = NaN when
              every target is ignored, as in torch). The row reduction has the iteration
              space of the log_softmax before it, so --fuse puts it in that kernel, and the
              second reads N values: never a reduction over all N * C elements (one that
              --split-reductions cannot split, having two sums);
            a 1-d input: one reduction [] over [C] with the two sums
  backward  a pointwise over the input: select(c == t && t != ignore_index, -g * w[c], 0)
            with g = grad[n] (none), grad (sum) or grad / total_weight (mean)

The class weight `w[c]` is a plain load at the class index. Targets outside [0, C) other than
ignore_index pick nothing (torch raises an error instead).
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation

from mlc.passes.lowering.body import Body, Value, make_pointwise
from mlc.passes.lowering.dtypes import dtype_of, is_float, storage_type
from mlc.passes.lowering.norms import upcast
from mlc.passes.lowering.reducer import Reducer, results_of
from mlc.passes.lowering.registry import Call, Lowered, register, shape

NONE, MEAN, SUM = 0, 1, 2  # at::Reduction


def _hit(b: Body, target: Value, cls: Value, ignore_index: int) -> Value:
    """c == t && t != ignore_index."""
    target = b.cast(target, "int64")
    ignore = b.constant(ignore_index, "int64")
    return b.logical_and(b.compare("eq", cls, target), b.compare("ne", target, ignore))


@register("nll_loss_forward")
def nll_loss_forward(call: Call) -> Lowered | list[Operation] | None:
    x, target, weight = call["self"], call["target"], call["weight"]
    reduction, ignore_index = call["reduction"], call["ignore_index"]
    xs, out = shape(x), dtype_of(call.result_type)
    if out is None or not is_float(out) or len(xs) not in (1, 2) or reduction not in (NONE, MEAN, SUM):
        return None
    acc = upcast(out)
    batched = len(xs) == 2
    classes = xs[-1]

    def terms(b: Body, n: object, c: object) -> tuple[Value, Value]:
        """The loss term and the weight term at row n, class c."""
        t = b.load(target, [n] if batched and shape(target) else [0] * len(shape(target)))
        hit = _hit(b, t, b.index(c), ignore_index)  # type: ignore[arg-type]
        xv = b.cast(b.load(x, [n, c] if batched else [c]), acc)
        if weight is not None:
            w = b.cast(b.load(weight, [c]), acc)
            xv = b.mul(xv, w)
        else:
            w = b.constant(1.0, acc)
        zero = b.constant(0.0, acc)
        return b.select(hit, b.neg(xv), zero), b.select(hit, w, zero)

    loss_type, weight_type = call.results[0].type, call.results[1].type

    def epilogue(b: Body, red: list[list[Value]]) -> list[Value]:
        (loss,), (total,) = red
        return [b.truediv(loss, total) if reduction == MEAN else loss, total]

    if batched:
        # The row's loss (its result when reduction is none), and its weight when there is one.
        row_kinds = ["sum", "sum"] if weight is not None and reduction != NONE else ["sum"]
        row_types = [loss_type] if reduction == NONE else [TensorType(storage_type(acc), [xs[0]])] * len(row_kinds)

        def row_terms(b: Body, r: list) -> list[Value]:  # type: ignore[type-arg]
            return list(terms(b, b.vars[0], r[0]))[: len(row_kinds)]

        def keep(b: Body, red: list[list[Value]]) -> list[Value]:
            return [values[0] for values in red]

        rows = Reducer([xs[0]], [classes], row_kinds, row_terms, keep, row_types).build(call)  # type: ignore[arg-type]
        if rows is None:
            return None
        if reduction == NONE:
            zero = make_pointwise(call, weight_type, lambda b: b.constant(0.0, acc))  # type: ignore[arg-type]
            return Lowered([*rows, zero], [rows[0].results[0], zero.result])
        row_loss, *row_weight = results_of(rows)

        def row_prologue(b: Body, r: list) -> list[Value]:  # type: ignore[type-arg]
            loss = b.load(row_loss, [r[0]])
            if row_weight:
                return [loss, b.load(row_weight[0], [r[0]])]
            kept = b.compare("ne", b.cast(b.load(target, [r[0]]), "int64"), b.constant(ignore_index, "int64"))
            return [loss, b.select(kept, b.constant(1.0, acc), b.constant(0.0, acc))]

        total = Reducer([], [xs[0]], ["sum", "sum"], row_prologue, epilogue, [loss_type, weight_type]).build(call)  # type: ignore[list-item]
        return None if total is None else Lowered([*rows, *total], results_of(total))

    def prologue(b: Body, r: list) -> list[Value]:  # type: ignore[type-arg]
        return list(terms(b, None, r[0]))

    reducer = Reducer([], xs, ["sum", "sum"], prologue, epilogue, [loss_type, weight_type])  # type: ignore[list-item]
    return reducer.build(call)


@register("nll_loss_backward")
def nll_loss_backward(call: Call) -> list[Operation] | None:
    grad, x, target, weight = call["grad_output"], call["self"], call["target"], call["weight"]
    reduction, ignore_index, total_weight = call["reduction"], call["ignore_index"], call["total_weight"]
    xs, out = shape(x), dtype_of(call.result_type)
    if out is None or not is_float(out) or len(xs) not in (1, 2) or reduction not in (NONE, MEAN, SUM):
        return None
    acc = upcast(out)
    batched = len(xs) == 2

    def fn(b: Body) -> Value:
        n, c = (b.vars[0], b.vars[1]) if batched else (None, b.vars[0])
        # A 1-d input uses target[0] (the C++ kernel's rule), a 0-d target as it is.
        t = b.load(target, [n] if batched and shape(target) else [0] * len(shape(target)))
        hit = _hit(b, t, b.index(c), ignore_index)
        g = b.cast(b.load(grad, [n] if shape(grad) and batched else [0] * len(shape(grad))), acc)
        if reduction == MEAN:
            g = b.truediv(g, b.cast(b.load(total_weight, [0] * len(shape(total_weight))), acc))
        if weight is not None:
            g = b.mul(g, b.cast(b.load(weight, [c]), acc))
        return b.select(hit, b.neg(g), b.constant(0.0, acc))

    return [make_pointwise(call, call.result_type, fn)]
