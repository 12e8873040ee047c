"""Extern calls: mm, addmm, bmm, baddbmm, convolution, and every op without a lowering.

A `loops.extern` names the overload as `packet.overload` ("mm.default") and spells its
arguments so that `torch.ops.aten.<packet>.<overload>(*args, **kwargs)` reproduces the call:
`#aten.tensor` marks the operands in order, other arguments are attributes by position (or by
keyword for keyword-only ones), and positional defaults fill gaps before a given argument.
`fresh` (an attribute) says the call returns new tensors (mlc's schema of the op, or, for an
`aten.call`, torch's, as the importer recorded it): plan-buffers reuses its arguments' storage.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ArrayAttr, UnitAttr
from xdsl.ir import Attribute, Operation

from mlc.dialects.aten import FRESH_RESULTS, Arg, AtenOp, CallOp, NoneArgAttr, TensorArgAttr, default_value
from mlc.dialects.loops import ExternOp
from mlc.dialects.values import py_to_attr
from mlc.passes.lowering.registry import Call

# Inductor computes these through aten (cuBLAS/cuDNN) unless a Triton template is autotuned;
# they are extern by design, not for want of a rule.
EXTERN_BY_DESIGN = ("mm", "addmm", "bmm", "baddbmm", "convolution")


def full_overload(name: str) -> str:
    return name if "." in name else name + ".default"


def extern(call: Call) -> list[Operation]:
    op = call.op
    result_types = [r.type for r in op.results]
    if isinstance(op, CallOp):
        kwargs = dict(op.kwargs.data) if op.kwargs is not None else None
        new = ExternOp(full_overload(op.overload.data), list(op.tensors), op.args.data, kwargs, result_types)
    else:
        assert isinstance(op, AtenOp)
        args, kwargs = _arguments(op)
        new = ExternOp(call.full_overload, list(op.tensors), args, kwargs, result_types)
        if op.SCHEMA.fresh_results:
            new.attributes[FRESH_RESULTS] = UnitAttr()
    # Keep discardable attributes (the importer's `origin` tag and an aten.call's `fresh`, which
    # realize reads) for realize and kernel names.
    new.attributes |= op.attributes
    new.location = op.location
    return [new]


def _arguments(op: AtenOp) -> tuple[list[Attribute], dict[str, Attribute]]:
    given = dict(op.args.data) if op.args is not None else {}
    params = [a for a in op.SCHEMA.args if not a.kwarg_only]
    # Positional arguments up to the last one that is a tensor or given explicitly.
    last = max((k for k, a in enumerate(params) if a.tensor_kind or a.name in given), default=-1)
    args = [_argument(op, a, given) for a in params[: last + 1]]
    kwargs = {
        a.name: _argument(op, a, given)
        for a in op.SCHEMA.args
        if a.kwarg_only and (a.name in given or (a.tensor_kind and _has_tensor(op, a)))
    }
    return args, kwargs


def _has_tensor(op: AtenOp, arg: Arg) -> bool:
    return bool(op.tensor_list(arg.name)) if arg.tensor_kind == "list" else op.tensor(arg.name) is not None


def _argument(op: AtenOp, arg: Arg, given: dict[str, Attribute]) -> Attribute:
    if arg.tensor_kind == "list":
        return ArrayAttr([TensorArgAttr() for _ in op.tensor_list(arg.name)])
    if arg.tensor_kind is not None:
        return TensorArgAttr() if op.tensor(arg.name) is not None else NoneArgAttr()
    if arg.name in given:
        return given[arg.name]
    return py_to_attr(default_value(arg))
