"""The lowering table and `Call`, the one view of an aten op that every rule reads.

A rule takes a `Call` and returns the loops ops that replace it (their results, in order,
replace the aten op's results), a `Lowered` when some of the ops it builds are intermediate
(softmax's max and sum before its pointwise), or None to say "not this case" -- the op then
becomes an extern call. Rules are registered by the overload as the aten dialect spells it
("add.Tensor", "cat" for cat.default).

`Call` hides whether the op was a dedicated aten op or a generic `aten.call` of an overload
that has a schema: both bind their arguments to schema names, so `mul.Tensor` with a Python
scalar in the `other` slot (which only `aten.call` can carry) lowers like any other mul.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import sympy
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, StringAttr, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from mlc.dialects.aten import AtenOp, CallOp, Schema, TensorArgAttr, default_value, op_class
from mlc.dialects.sym import sizes_of
from mlc.dialects.values import attr_to_py


@dataclass(frozen=True)
class LoweringOptions:
    """What `--lower-aten`'s options tell the rules."""

    unroll_reductions_threshold: int = 8
    """Static reductions of fewer elements become pointwise chains (Inductor's
    `unroll_reductions_threshold`); 0 or 1 never unrolls."""
    gemm: str = "extern"
    """mm and addmm: `extern` calls (cuBLAS), or `triton` contractions (`matmul.py`)."""


@dataclass
class Call:
    """An aten op with its arguments bound to schema names (tensors as SSA values)."""

    op: Operation
    overload: str  # schema spelling: "add.Tensor", "cat"
    schema: Schema | None  # None for an aten.call of an overload mlc has no schema for
    args: dict[str, Any] = field(default_factory=dict)
    options: LoweringOptions = field(default_factory=LoweringOptions)

    @property
    def packet(self) -> str:
        return self.overload.split(".")[0]

    @property
    def full_overload(self) -> str:
        """`packet.overload` as torch.ops.aten spells it: "mm.default", "add.Tensor"."""
        return self.overload if "." in self.overload else self.overload + ".default"

    @property
    def origin(self) -> str:
        """What the op's kernel is named after: the importer's `origin` tag, else the packet."""
        tag = self.op.attributes.get("origin")
        return tag.data if isinstance(tag, StringAttr) else self.packet

    @property
    def results(self) -> list[SSAValue]:
        return list(self.op.results)

    @property
    def result_type(self) -> TensorType:
        typ = self.op.results[0].type
        assert isinstance(typ, TensorType)
        return typ

    def __getitem__(self, name: str) -> Any:
        return self.args[name]

    def get(self, name: str, default: Any = None) -> Any:
        value = self.args.get(name)
        return default if value is None else value


def shape(value: SSAValue) -> list[int | sympy.Expr]:
    """A tensor's sizes: ints, and expressions of size symbols where they are dynamic."""
    typ = value.type
    assert isinstance(typ, TensorType)
    return sizes_of(typ)


def is_tensor(value: Any) -> bool:
    return isinstance(value, SSAValue) and isinstance(value.type, TensorType)


# ---------------------------------------------------------------------------------------------
# Building a Call


def make_call(op: Operation) -> Call:
    if isinstance(op, AtenOp):
        return _call_of_aten_op(op)
    assert isinstance(op, CallOp)
    return _call_of_generic(op)


def _call_of_aten_op(op: AtenOp) -> Call:
    args: dict[str, Any] = {}
    for arg in op.SCHEMA.args:
        kind = arg.tensor_kind
        if kind == "list":
            args[arg.name] = op.tensor_list(arg.name)
        elif kind is not None:
            args[arg.name] = op.tensor(arg.name)
        else:
            args[arg.name] = op.arg(arg.name)
    return Call(op, op.SCHEMA.overload, op.SCHEMA, args)


def _call_of_generic(op: CallOp) -> Call:
    name = op.overload.data.removesuffix(".default")
    cls = op_class(name)
    if cls is None:
        return Call(op, name, None)
    operands = iter(op.tensors)
    positional = [_resolve(a, operands) for a in op.args.data]
    keywords = {k: _resolve(v, operands) for k, v in (op.kwargs.data.items() if op.kwargs else ())}
    bound = _bind(cls.SCHEMA, positional, keywords)
    return Call(op, name, cls.SCHEMA if bound is not None else None, bound or {})


def _resolve(attr: Attribute, operands: Iterator[SSAValue]) -> Any:
    """An aten.call argument as a Python value, `#aten.tensor` marks as the next operand."""
    if isinstance(attr, TensorArgAttr):
        return next(operands)
    if isinstance(attr, ArrayAttr) and any(isinstance(a, (TensorArgAttr, ArrayAttr)) for a in attr.data):
        return [_resolve(a, operands) for a in attr.data]
    if isinstance(attr, DictionaryAttr):
        return {k: _resolve(v, operands) for k, v in attr.data.items()}
    return attr_to_py(attr)


def _bind(schema: Schema, positional: Sequence[Any], keywords: dict[str, Any]) -> dict[str, Any] | None:
    """Python-style binding of call arguments to schema names; None when they do not fit."""
    params = [a for a in schema.args if not a.kwarg_only]
    if len(positional) > len(params):
        return None
    bound = {a.name: v for a, v in zip(params, positional)}
    names = {a.name for a in schema.args}
    for key, value in keywords.items():
        if key not in names or key in bound:
            return None
        bound[key] = value
    for arg in schema.args:
        if arg.name not in bound:
            bound[arg.name] = [] if arg.tensor_kind == "list" else default_value(arg)
    return bound


# ---------------------------------------------------------------------------------------------
# The table


@dataclass
class Lowered:
    """Ops that replace an aten op, and which of their results replace its results, in order
    (the others are intermediates, as softmax's max and sum)."""

    ops: list[Operation]
    results: list[SSAValue]

    @staticmethod
    def of(ops: list[Operation]) -> Lowered:
        """Every result of every op, in order."""
        return Lowered(ops, [r for op in ops for r in op.results])


Lowering = Callable[[Call], "list[Operation] | Lowered | None"]

LOWERINGS: dict[str, Lowering] = {}


def register(*overloads: str) -> Callable[[Lowering], Lowering]:
    """Decorator: `@register("add.Tensor", "add.Scalar")` makes the function their rule."""

    def add(fn: Lowering) -> Lowering:
        for name in overloads:
            assert name not in LOWERINGS, f"two lowerings for {name}"
            LOWERINGS[name] = fn
        return fn

    return add
