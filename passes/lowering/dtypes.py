"""dtypes as the lowering sees them: names, storage vs compute types, and torch's promotion.

A dtype is named as torch spells it ("float16", "int64", "bool"). Its *storage* type is the
builtin element type of a tensor of that dtype; its *compute* type is what a loops body does
math in: float16/bfloat16 widen to f32 (Inductor's fp32 upcast), uint8 becomes a signless i8
(arith's integer ops only accept signless integers; unsignedness is carried by the dtype name
and picked up by the unsigned op variants).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sympy
from xdsl.dialects.builtin import IntegerType, TensorType, f32
from xdsl.ir import Attribute

from mlc.dialects.values import DTYPE_NAMES, DTYPES

FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")
INT_DTYPES = ("uint8", "int8", "int16", "int32", "int64")
DEFAULT_FLOAT = "float32"  # torch.get_default_dtype() as torch.compile sees it

_FLOAT_RANK = {"float16": 0, "bfloat16": 0, "float32": 1, "float64": 2}
_INT_BITS = {"bool": 1, "uint8": 8, "int8": 8, "int16": 16, "int32": 32, "int64": 64}


def is_float(dtype: str) -> bool:
    return dtype in FLOAT_DTYPES


def is_int(dtype: str) -> bool:
    """Integer proper: bool is its own category, as in torch."""
    return dtype in INT_DTYPES


def is_unsigned(dtype: str) -> bool:
    """uint8 and bool compare, divide and widen as unsigned numbers."""
    return dtype in ("uint8", "bool")


def int_bits(dtype: str) -> int:
    return _INT_BITS[dtype]


def dtype_of(t: Attribute) -> str | None:
    """The dtype name of a tensor type or an element type; None for ones mlc cannot compute in
    (complex: such ops stay extern calls)."""
    elem = t.element_type if isinstance(t, TensorType) else t
    name = DTYPE_NAMES.get(elem)
    return None if name is None or name.startswith("complex") else name


def storage_type(dtype: str) -> Attribute:
    return DTYPES[dtype]


def compute_type(dtype: str) -> Attribute:
    if dtype in ("float16", "bfloat16"):
        return f32
    if dtype == "uint8":
        return IntegerType(8)
    return DTYPES[dtype]


# ---------------------------------------------------------------------------------------------
# Promotion: torch's promote_types and result_type (c10's combine_categories).


def promote_types(a: str | None, b: str | None) -> str | None:
    """torch.promote_types for the dtypes mlc knows; None stands for 'no operand yet'."""
    if a is None or a == b:
        return b
    if b is None:
        return a
    if a == "bool" or b == "bool":
        return b if a == "bool" else a
    if is_float(a) != is_float(b):
        return a if is_float(a) else b
    if is_float(a):
        if {a, b} == {"float16", "bfloat16"}:
            return "float32"
        return a if _FLOAT_RANK[a] > _FLOAT_RANK[b] else b
    if "uint8" in (a, b):
        other = b if a == "uint8" else a
        # uint8 with int8 needs a type that holds both ranges; wider signed ints already do.
        return "int16" if other == "int8" else other
    return a if _INT_BITS[a] > _INT_BITS[b] else b


def _combine(higher: str | None, lower: str | None) -> str | None:
    """Let a lower-priority group (0-d tensors, then scalars) raise the category only."""
    if higher is None:
        return lower
    if lower is None or is_float(higher):
        return higher
    if higher == "bool" or is_float(lower):
        return promote_types(higher, lower)
    return higher


@dataclass(frozen=True)
class Operand:
    """What type promotion needs to know of one argument: a tensor's dtype and rank, or a
    Python scalar (weak: it only decides the category, never the width)."""

    dtype: str
    rank: int | None  # None for a Python scalar

    @staticmethod
    def of_scalar(value: bool | int | float) -> Operand:
        if isinstance(value, bool):
            return Operand("bool", None)
        if isinstance(value, int) or isinstance(value, sympy.Expr) and value.is_integer:  # an int or a size
            return Operand("int64", None)
        return Operand(DEFAULT_FLOAT, None)


def result_type(operands: Sequence[Operand]) -> str:
    """torch.result_type: dimensioned tensors, then 0-d tensors, then scalars, by priority."""
    dim = zero = scalar = None
    for o in operands:
        if o.rank is None:
            scalar = promote_types(scalar, o.dtype)
        elif o.rank == 0:
            zero = promote_types(zero, o.dtype)
        else:
            dim = promote_types(dim, o.dtype)
    out = _combine(dim, _combine(zero, scalar))
    assert out is not None, "type promotion needs at least one operand"
    return out


def int_to_float(dtype: str) -> str:
    """INT_TO_FLOAT promotion (div, exp, sqrt, ...): bool and integers compute in float32."""
    return dtype if is_float(dtype) else DEFAULT_FLOAT
