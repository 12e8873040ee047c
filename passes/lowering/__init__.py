"""Lowering rules of `--lower-aten`: one function per aten overload, in a table.

    registry.py     Call (an aten op with arguments bound to schema names) and the table
    dtypes.py       storage/compute types, torch's type promotion
    indexing.py     index maps: broadcasting, reshape, flatten/unflatten
    value.py        Value: an SSA value of a body with its torch dtype
    body.py         Body (builds one loops body), elementwise(), make_pointwise()
    scalar.py       scalar math on body values: arith/math ops chosen by dtype
    pointwise.py    arithmetic, comparisons, logic, float functions, pow
    activations.py  relu, gelu, silu, elu, ... and simple backwards
    creation.py     copies, casts, fills, arange, masked_fill
    views.py        views as re-indexing; split/unbind; cat and padding by masked loads
    reducer.py      Reducer: one reduction as loops.reduction, or as a pointwise when it has
                    0, 1 or few (< unroll threshold) elements; Axes (which dims, keepdim)
    reductions.py   sum, prod, amax/amin, max/min (+ indices), argmax/argmin, any/all, mean,
                    var/std/var_mean
    norms.py        softmax, log_softmax, logsumexp, layer_norm and the softmax backwards
    indirect.py     loads at loaded positions: index.Tensor, gather, embedding
    scatter.py      stores at loaded positions: index_put, scatter(_add), index_add, embedding backward
    losses.py       nll_loss_forward (one element per row) and nll_loss_backward
    matmul.py       mm and addmm as contractions (loops.dot), where `gemm=triton` asks
    extern.py       loops.extern for mm/conv and every op without a rule

A new rule is a module with `@register("sum.dim_IntList")` functions imported below;
`lower_op` tries the rule and falls back to an extern call when there is none or it returns
None.
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation

from mlc.passes.lowering import (  # noqa: F401 (register rules)
    activations,
    creation,
    indirect,
    losses,
    matmul,
    norms,
    pointwise,
    reductions,
    scatter,
    views,
)
from mlc.passes.lowering.dtypes import dtype_of
from mlc.passes.lowering.extern import EXTERN_BY_DESIGN, extern
from mlc.passes.lowering.registry import LOWERINGS, Call, Lowered, LoweringOptions, make_call, register


def lower_op(op: Operation, options: LoweringOptions | None = None) -> Lowered:
    """The loops ops that replace aten op `op`, and the values that replace its results."""
    call = make_call(op)
    if options is not None:
        call.options = options
    rule = LOWERINGS.get(call.overload) if call.schema is not None and _known_dtypes(op) else None
    new_ops = rule(call) if rule is not None else None
    if new_ops is None:
        new_ops = extern(call)
    return new_ops if isinstance(new_ops, Lowered) else Lowered.of(new_ops)


def _known_dtypes(op: Operation) -> bool:
    """Rules only see tensors of dtypes mlc computes in; complex, float8, ... stay aten calls."""
    values = (*op.operands, *op.results)
    return all(dtype_of(v.type) is not None for v in values if isinstance(v.type, TensorType))


__all__ = ["EXTERN_BY_DESIGN", "LOWERINGS", "Call", "Lowered", "LoweringOptions", "lower_op", "register"]
