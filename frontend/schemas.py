"""The importer's reading of torch's op schemas: which arguments are tensors (`tensor_arg_kind`),
the overload a call with numbers for tensors takes (`mul.Tensor(x, 0.5)` as `mul.Scalar`,
`sub.Tensor(1, x)` as `rsub.Scalar`), the dialect's dedicated op whose schema agrees with the
running torch's (`dedicated_op`; else an `aten.call`), and whether a call's results are fresh
(`returns_fresh`: no alias annotation, no collective).
"""

from __future__ import annotations

from typing import Any

import sympy
import torch

from mlc.analysis.collectives import comm_kind
from mlc.dialects.aten import AtenOp, op_class


def returns_fresh(schema: torch._C.FunctionSchema, overload: str) -> bool:
    """Whether a call returns new tensors that hold nothing of its arguments (plan-buffers then
    reuses the arguments' storage after their last use): its schema's returns carry no alias
    annotation, and it is no collective (a collective reads its input until its wait, and the
    wait returns the buffer it was given, whatever its schema says)."""
    return all(r.alias_info is None for r in schema.returns) and comm_kind(overload) is None


def dedicated_op(overload: str, schema: torch._C.FunctionSchema) -> type[AtenOp] | None:
    """The dedicated op for `overload` if its schema agrees with the running torch's."""
    cls = op_class(overload)
    if cls is None:
        return None
    # The dialect's schemas were copied from one torch version; another may differ, and an op
    # whose arguments do not line up must not be built from this schema (aten.call is safe).
    ours = [(a.name, a.tensor_kind) for a in cls.SCHEMA.args]
    theirs = [(a.name, tensor_arg_kind(a.type)) for a in schema.arguments]
    return cls if ours == theirs else None


def is_python_number(value: Any) -> bool:
    return isinstance(value, (int, float, bool, complex, sympy.Expr))


# op(number, tensor) -> the overload computing the same as op'(tensor, number).
_SWAPPED = {
    "add.Tensor": "add.Scalar",  # only with alpha == 1
    "sub.Tensor": "rsub.Scalar",  # s - alpha * x
    "mul.Tensor": "mul.Scalar",
    "eq.Tensor": "eq.Scalar",
    "ne.Tensor": "ne.Scalar",
    "lt.Tensor": "gt.Scalar",
    "le.Tensor": "ge.Scalar",
    "gt.Tensor": "lt.Scalar",
    "ge.Tensor": "le.Scalar",
    "bitwise_and.Tensor": "bitwise_and.Scalar",
    "bitwise_or.Tensor": "bitwise_or.Scalar",
    "bitwise_xor.Tensor": "bitwise_xor.Scalar",
}


def number_first_swapped(
    target: torch._ops.OpOverload, values: dict[str, Any]
) -> tuple[torch._ops.OpOverload, dict[str, Any]]:
    swapped = _SWAPPED.get(f"{target._overloadpacket.__name__}.{target._overloadname}")
    if (
        swapped is None
        or not is_python_number(values.get("self"))
        or not isinstance(values.get("other"), torch.fx.Node)
        or (swapped == "add.Scalar" and values.get("alpha", 1) != 1)
    ):
        return target, values
    packet, _, overload = swapped.partition(".")
    return getattr(getattr(torch.ops.aten, packet), overload), {
        **values,
        "self": values["other"],
        "other": values["self"],
    }


def scalar_overload(
    target: torch._ops.OpOverload, values: dict[str, Any]
) -> torch._ops.OpOverload | None:
    """The overload of the same packet taking Scalar where `values` holds numbers for tensors."""
    args = target._schema.arguments
    numbers = {a.name for a in args if tensor_arg_kind(a.type) and is_python_number(values.get(a.name))}
    packet = target._overloadpacket
    for name in packet.overloads():
        candidate = getattr(packet, name)
        cargs = candidate._schema.arguments
        if candidate._schema.is_mutable or [a.name for a in cargs] != [a.name for a in args]:
            continue
        if all(
            _is_scalar_type(b.type) if a.name in numbers else str(a.type) == str(b.type)
            for a, b in zip(args, cargs, strict=True)
        ):
            return candidate
    return None


def _is_scalar_type(type: torch._C.JitType) -> bool:
    if isinstance(type, torch.OptionalType):
        type = type.getElementType()
    return isinstance(type, (torch.NumberType, torch.FloatType, torch.IntType, torch.BoolType))


def tensor_arg_kind(type: torch._C.JitType) -> str | None:
    """'one', 'optional', 'list' or None, as mlc.dialects.aten.Arg.tensor_kind."""
    if isinstance(type, torch.TensorType):
        return "one"
    if isinstance(type, torch.OptionalType) and isinstance(type.getElementType(), torch.TensorType):
        return "optional"
    if isinstance(type, torch.ListType):
        elem = type.getElementType()
        if isinstance(elem, torch.OptionalType):
            elem = elem.getElementType()
        if isinstance(elem, torch.TensorType):
            return "list"
    return None


def is_int_list(type: torch._C.JitType) -> bool:
    if isinstance(type, torch.OptionalType):
        type = type.getElementType()
    return isinstance(type, torch.ListType) and isinstance(type.getElementType(), torch.IntType)


def returns_list(target: Any) -> bool:
    returns = target._schema.returns
    return len(returns) != 1 or isinstance(returns[0].type, torch.ListType)
