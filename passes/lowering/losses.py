"""nll_loss_forward and nll_loss_backward: one value read per row.

torch's decompositions pick `x[n, target[n]]` with `gather` and build the gradient with
`scatter` into zeros. mlc's frontends trace with the gather (so that AOTAutograd's partitioner
can recompute a log-softmax the loss reads) and with a pointwise nll_loss_backward (see
frontend/decompositions.py); IR that carries the ops themselves lowers here:

  forward   row n's term is `-x[n, t] * w[t]` with t = target[n] (an indirect load: one element
            of the row), or 0 where t == ignore_index (the row then reads class 0, never
            ignore_index itself, which may be out of range, as -100 is);
            reduction none (2-d input): a pointwise [N] of the terms; total_weight is the
              constant 0 that torch returns;
            sum and mean: one reduction [] over [N] with two sums, the loss and total_weight
              (the rows' w[t], or the count of rows not ignored); mean divides them in the
              epilogue (0 / 0 = NaN when every target is ignored, as in torch). After
              log_softmax, --inline folds `x - max - log(sum)` into the pick, so the
              normalized row is never stored: the loss reads N elements and two [N] vectors;
            a 1-d input: the same, over the one row
  backward  a pointwise over the input: select(c == t && t != ignore_index, -g * w[c], 0)
            with g = grad[n] (none), grad (sum) or grad / total_weight (mean): the gradient
            is written whole anyway, so a comparison per element costs nothing, where a
            scatter into zeros is a second kernel

Targets outside [0, C) other than ignore_index read outside the row (torch raises an error;
`--convert-to-triton="check-indices=true"` asserts instead). Negative ones count from the end.
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from mlc.dialects.sym import indirect_symbol
from mlc.passes.lowering.body import Body, Value, make_pointwise
from mlc.passes.lowering.dtypes import dtype_of, is_float
from mlc.passes.lowering.norms import upcast
from mlc.passes.lowering.reducer import Reducer
from mlc.passes.lowering.registry import Call, Lowered, register, shape

NONE, MEAN, SUM = 0, 1, 2  # at::Reduction


def _hit(b: Body, target: Value, cls: Value, ignore_index: int) -> Value:
    """c == t && t != ignore_index."""
    target = b.cast(target, "int64")
    ignore = b.constant(ignore_index, "int64")
    return b.logical_and(b.compare("eq", cls, target), b.compare("ne", target, ignore))


def _target_index(target: SSAValue, n: object) -> list:  # type: ignore[type-arg]
    """Row n's target; a 1-d input has one (0-d) target."""
    return [n] if n is not None and shape(target) else [0] * len(shape(target))


def _pick(
    b: Body, x: SSAValue, target: SSAValue, weight: SSAValue | None, n: object, ignore_index: int, acc: str
) -> tuple[Value, Value]:
    """Row n's loss term -x[n, t] * w[t] and weight term w[t] (0 and 0 where t is ignored)."""
    t = b.cast(b.load(target, _target_index(target, n)), "int64")
    kept = b.compare("ne", t, b.constant(ignore_index, "int64"))
    position = b.indirect_index(b.select(kept, t, b.constant(0, "int64")), shape(x)[-1])
    cls = indirect_symbol(0)
    xv = b.cast(b.load(x, [n, cls] if n is not None else [cls], indirect=[position]), acc)
    w = b.constant(1.0, acc)
    if weight is not None:
        w = b.cast(b.load(weight, [cls], indirect=[position]), acc)
        xv = b.mul(xv, w)
    zero = b.constant(0.0, acc)
    return b.select(kept, b.neg(xv), zero), b.select(kept, w, zero)


@register("nll_loss_forward")
def nll_loss_forward(call: Call) -> Lowered | list[Operation] | None:
    x, target, weight = call["self"], call["target"], call["weight"]
    reduction, ignore_index = call["reduction"], call["ignore_index"]
    xs, out = shape(x), dtype_of(call.result_type)
    if out is None or not is_float(out) or len(xs) not in (1, 2) or reduction not in (NONE, MEAN, SUM):
        return None
    acc = upcast(out)
    batched = len(xs) == 2
    loss_type, weight_type = call.results[0].type, call.results[1].type

    if batched and reduction == NONE:
        rows = make_pointwise(call, loss_type, lambda b: _pick(b, x, target, weight, b.vars[0], ignore_index, acc)[0])  # type: ignore[arg-type]
        zero = make_pointwise(call, weight_type, lambda b: b.constant(0.0, acc))  # type: ignore[arg-type]
        return Lowered([rows, zero], [rows.result, zero.result])

    def prologue(b: Body, r: list) -> list[Value]:  # type: ignore[type-arg]
        return list(_pick(b, x, target, weight, r[0] if batched else None, ignore_index, acc))

    def epilogue(b: Body, red: list[list[Value]]) -> list[Value]:
        (loss,), (total,) = red
        return [b.truediv(loss, total) if reduction == MEAN else loss, total]

    rows = [xs[0]] if batched else [1]
    return Reducer([], rows, ["sum", "sum"], prologue, epilogue, [loss_type, weight_type]).build(call)  # type: ignore[list-item]


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
        t = b.load(target, _target_index(target, n))
        hit = _hit(b, t, b.index(c), ignore_index)
        g = b.cast(b.load(grad, [n] if shape(grad) and batched else [0] * len(shape(grad))), acc)
        if reduction == MEAN:
            g = b.truediv(g, b.cast(b.load(total_weight, [0] * len(shape(total_weight))), acc))
        if weight is not None:
            g = b.mul(g, b.cast(b.load(weight, [c]), acc))
        return b.select(hit, b.neg(g), b.constant(0.0, acc))

    return [make_pointwise(call, call.result_type, fn)]
