"""The reduce op's definition `loops.reduce` and `buffer.reduce` share: `ReduceBase`.

Part of the `loops` dialect (`loops.reduce` itself, which must sit directly in a
`loops.reduction`, is defined in `mlc.dialects.loops`; `buffer.reduce` in
`mlc.dialects.buffer_body`). Holds the reduction kinds (`REDUCTION_TYPES`), the check of a
kind's results (`verify_reduce`: argmax/argmin give i64, any gives i1, welford three results)
and its syntax.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import StringAttr, i1, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation, operand_def, prop_def, var_result_def
from xdsl.utils.exceptions import VerifyException

from mlc.dialects.syntax import ReductionKind, TypeList

REDUCTION_TYPES = ("sum", "prod", "max", "min", "argmax", "argmin", "any", "welford")


class ReduceBase(IRDLOperation):
    """`%r = <dialect>.reduce <kind> %v : T -> T'`: combine a value over all reduction indices.

    argmax/argmin give i64 positions in the flattened reduction ranges (the first on ties, as
    PyTorch); welford gives (mean, m2, weight); any gives i1. `loops.reduce` and `buffer.reduce`
    share this definition."""

    reduction_type = prop_def(StringAttr)
    value = operand_def()
    outputs = var_result_def()
    assembly_format = (
        "custom<ReductionKind>($reduction_type) $value `:` type($value) `->` custom<TypeList>(type($outputs)) attr-dict"
    )
    custom_directives = (ReductionKind, TypeList)

    def __init__(self, kind: str, value: SSAValue, result_types: Sequence[Attribute]):
        super().__init__(
            operands=[value],
            properties={"reduction_type": StringAttr(kind)},
            result_types=[list(result_types)],
        )

    @property
    def kind(self) -> str:
        return self.reduction_type.data

    def verify_(self) -> None:
        verify_reduce(self)


def verify_reduce(op: ReduceBase) -> None:
    """Shared by loops.reduce and buffer.reduce: a known kind with its number and types of results."""
    kind = op.reduction_type.data  # type: ignore[attr-defined]
    if kind not in REDUCTION_TYPES:
        raise VerifyException(
            f"{op.name}: unknown reduction type '{kind}' (expected one of {', '.join(REDUCTION_TYPES)})"
        )
    expected = 3 if kind == "welford" else 1
    if len(op.results) != expected:
        raise VerifyException(f"{op.name}: {kind} has {expected} result(s), got {len(op.results)}")
    if kind in ("argmax", "argmin") and op.results[0].type != i64:
        raise VerifyException(f"{op.name}: {kind} results are i64 indices")
    if kind == "any" and op.results[0].type != i1:
        raise VerifyException(f"{op.name}: any gives i1")
    if kind in ("sum", "prod", "max", "min") and op.results[0].type != op.operands[0].type:
        raise VerifyException(
            f"{op.name}: {kind} of {op.operands[0].type} cannot give {op.results[0].type}"
        )
