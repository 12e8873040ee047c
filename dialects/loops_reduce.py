"""The reduce ops' definitions the loops and buffer dialects share: `ReduceBase` (`loops.reduce`,
`buffer.reduce`) and `DotBase` (`loops.dot`, `buffer.dot`: a contraction).

Part of the `loops` dialect (`loops.reduce` itself, which must sit directly in a
`loops.reduction`, is defined in `mlc.dialects.loops`; `buffer.reduce` in
`mlc.dialects.buffer_body`). Holds the reduction kinds (`REDUCTION_TYPES`), the check of a
kind's results (`verify_reduce`: argmax/argmin give i64, any gives i1, welford three results)
and its syntax.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from xdsl.dialects.builtin import AnyFloat, ArrayAttr, Float32Type, StringAttr, i1, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation, operand_def, prop_def, result_def, var_result_def
from xdsl.utils.exceptions import VerifyException

from mlc.dialects.access import IndirectIndexBase
from mlc.dialects.sym import ExprAttr
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


class DotBase(IRDLOperation):
    """`%c = <dialect>.dot %a, %b : bf16, bf16 -> f32`: the sum over every reduction index of
    `a * b`, each product and the sum in the result's type (a GEMM's K loop, accumulated in f32
    as cuBLAS does). Its node is a contraction: ranges [M, N] over [K], `a` computed from loads
    at (i0, r0_0) and `b` at (r0_0, i1) (batched: [B, M, N], `a` at (i0, i1, r0_0) and `b` at
    (i0, r0_0, i2)), which `verify_contraction` checks. `loops.dot` and
    `buffer.dot` share this definition; the node's ops after it are the GEMM's epilogue."""

    lhs = operand_def(AnyFloat)
    rhs = operand_def(AnyFloat)
    result = result_def(AnyFloat)
    assembly_format = "$lhs `,` $rhs `:` type($lhs) `,` type($rhs) `->` type($result) attr-dict"

    def __init__(self, lhs: SSAValue, rhs: SSAValue, result_type: Attribute):
        super().__init__(operands=[lhs, rhs], result_types=[result_type])

    def verify_(self) -> None:
        if self.lhs.type != self.rhs.type:
            raise VerifyException(f"{self.name}: operands of one type, got {self.lhs.type} and {self.rhs.type}")
        if not isinstance(self.result.type, Float32Type):  # what tl.dot accumulates in, as cuBLAS
            raise VerifyException(f"{self.name}: {self.lhs.type} products accumulate in f32, not {self.result.type}")


def defining_ops(value: SSAValue) -> set[Operation]:
    """The ops of one body that compute `value`: its own and, through their operands, all
    before it (a dot's operand: its loads and the prologue on them)."""
    ops: set[Operation] = set()
    pending = [value]
    while pending:
        owner = pending.pop().owner
        if isinstance(owner, Operation) and owner not in ops:
            ops.add(owner)
            pending.extend(owner.operands)
    return ops


def read_symbols(value: SSAValue, skip: Collection[Operation] = ()) -> set[str]:
    """The index symbols (i0, r0_0, ind0, sizes) the ops computing `value` read (but `skip`)."""
    names: set[str] = set()
    for op in defining_ops(value) - set(skip):
        for prop in op.properties.values():
            for attr in prop.data if isinstance(prop, ArrayAttr) else (prop,):
                if isinstance(attr, ExprAttr):
                    names |= {s.name for s in attr.expr.free_symbols}
    return names


def row_groups(dot: DotBase, rank: int) -> list[IndirectIndexBase]:
    """The loaded positions B's loads take from the row alone (`i0` of an unbatched product):
    a grouped product's group of each row (`_grouped_mm`), which picks the matrix of B the
    row multiplies. Empty for every other contraction."""
    if rank != 2:
        return []
    return [op for op in defining_ops(dot.rhs)
            if isinstance(op, IndirectIndexBase) and read_symbols(op.value) == {"i0"}]


def verify_contraction(node: Operation, dot: DotBase, rank: int, reduction_rank: int) -> None:
    """A contraction's node runs [M, N] over [K], or [B, M, N] over [K] (batched: i0 picks the
    product), and its dot reads `a` along (i_M, r0_0) only and `b` along (r0_0, i_N) only (and
    both along the batch): a tile of A times a tile of B. A grouped product's B reads the row
    only through its group (`row_groups`): a tile of B per group of the tile's rows."""
    if rank not in (2, 3) or reduction_rank != 1:
        raise VerifyException(f"{node.name}: a {dot.name} needs ranges [M, N] or [B, M, N] over [K], "
                              f"got {rank} over {reduction_rank}")
    m, n = f"i{rank - 2}", f"i{rank - 1}"
    groups = set().union(*(defining_ops(g.results[0]) for g in row_groups(dot, rank)))
    for operand, side, other in ((dot.lhs, "lhs", n), (dot.rhs, "rhs", m)):
        if other in read_symbols(operand, skip=groups):
            raise VerifyException(f"{dot.name}: its {side} varies with {other}, which a tile of "
                                  f"{'A' if side == 'lhs' else 'B'} does not walk")
