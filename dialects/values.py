"""Python values <-> attributes, for the non-tensor arguments of aten ops and extern calls.

int -> `3 : i64`, float -> `0.5 : f64`, bool -> `true`, complex -> `#complex.number<:f64 0.0, 1.0> :
complex<f64>`, list of ints -> `array<i64: 1, 2>`,
other lists -> `[...]`, str -> `"mean"`, None -> `#aten.none` (only inside lists and aten.call),
dtype -> its builtin type (`f16`, `i1` for bool), a symbolic size -> `#sym.expr<2*s0>`.
The two attributes of the `aten` dialect that stand for argument values live here too
(`#aten.none`, and `#aten.tensor` marking a tensor operand's place).
"""

from __future__ import annotations

from typing import Any

import sympy
from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    ComplexType,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
    SymbolRefAttr,
    TypeAttribute,
    f64,
    i1,
    i64,
)
from xdsl.dialects.complex import ComplexNumberAttr
from xdsl.ir import Attribute, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition

from mlc.dialects.sym import ExprAttr


@irdl_attr_definition
class TensorArgAttr(ParametrizedAttribute):
    """`#aten.tensor`: in an extern call's arguments, the place of the next tensor operand."""

    name = "aten.tensor"


@irdl_attr_definition
class NoneArgAttr(ParametrizedAttribute):
    """`#aten.none`: a Python None argument."""

    name = "aten.none"


def py_to_attr(value: Any) -> Attribute:
    """A Python argument value as an attribute (dtypes must already be builtin types)."""
    if isinstance(value, Attribute):
        return value
    if value is None:
        return NoneArgAttr()
    if isinstance(value, bool):
        return IntegerAttr(int(value), i1)
    if isinstance(value, int):
        return IntegerAttr(value, i64)
    if isinstance(value, float):
        return FloatAttr(value, f64)
    if isinstance(value, complex):
        return ComplexNumberAttr(value.real, value.imag, ComplexType(f64))
    if isinstance(value, str):
        return StringAttr(value)
    if isinstance(value, sympy.Expr):  # a symbolic size (dynamic shapes)
        return IntegerAttr(int(value), i64) if value.is_Integer else ExprAttr(value)
    if isinstance(value, (list, tuple)):
        if value and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return DenseArrayBase.from_list(i64, list(value))
        return ArrayAttr([py_to_attr(v) for v in value])
    raise TypeError(f"cannot represent argument {value!r} ({type(value).__name__}) as an attribute")


def attr_to_py(attr: Attribute) -> Any:
    """The inverse of py_to_attr; types stay attributes, symbol references stay references."""
    if isinstance(attr, NoneArgAttr):
        return None
    if isinstance(attr, IntegerAttr):
        value = attr.value.data
        return bool(value) if attr.type == i1 else value
    if isinstance(attr, FloatAttr):
        return attr.value.data
    if isinstance(attr, ComplexNumberAttr):
        return complex(attr.real.data, attr.imag.data)
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, DenseArrayBase):
        return list(attr.get_values())
    if isinstance(attr, ArrayAttr):
        return [attr_to_py(a) for a in attr.data]
    if isinstance(attr, ExprAttr):
        return attr.expr
    return attr  # types, symbol refs, #aten.tensor


# dtype names as torch spells them (`torch.float32` -> "float32") and the builtin types for them.
DTYPES: dict[str, Attribute] = {
    "float32": Float32Type(),
    "float16": Float16Type(),
    "bfloat16": BFloat16Type(),
    "float64": Float64Type(),
    "int64": i64,
    "int32": IntegerType(32),
    "int16": IntegerType(16),
    "int8": IntegerType(8),
    "uint8": IntegerType(8, Signedness.UNSIGNED),
    "uint16": IntegerType(16, Signedness.UNSIGNED),
    "uint32": IntegerType(32, Signedness.UNSIGNED),
    "uint64": IntegerType(64, Signedness.UNSIGNED),
    "bool": i1,
    # Complex tensors are carried through the IR for extern calls (fft, view_as_complex, ...);
    # no lowering computes in them (`passes/lowering/dtypes.py`).
    "complex32": ComplexType(Float16Type()),
    "complex64": ComplexType(Float32Type()),
    "complex128": ComplexType(Float64Type()),
}
DTYPE_NAMES: dict[Attribute, str] = {v: k for k, v in DTYPES.items()}


def is_float(t: Attribute) -> bool:
    return isinstance(t, (Float16Type, BFloat16Type, Float32Type, Float64Type))


def is_type(attr: Attribute) -> bool:
    return isinstance(attr, TypeAttribute)


__all__ = ["py_to_attr", "attr_to_py", "DTYPES", "DTYPE_NAMES", "is_float", "SymbolRefAttr"]
