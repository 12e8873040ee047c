"""Reductions: the kinds' identities and types, `triton.reduce`, `triton.accumulate` and a
matmul kernel's `triton.dot` (the loop that carries accumulators, `triton.rloop`, is in
kernel.py)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    IntegerType,
    StringAttr,
    Signedness,
    AnyFloat,
    AnyFloatConstr,
    i1,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.irdl.declarative_assembly_format import (
    CustomDirective,
    ParsingState,
    PrintingState,
    TypeDirective,
    VariadicOperandVariable,
    irdl_custom_directive,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from mlc.dialects.syntax import parse_types_of
from mlc.dialects.triton.core import ACCUMULATORS, REDUCE_KINDS, mask_names_props
from mlc.dialects.triton.kernel import MaskedBodyOp

# ---------------------------------------------------------------------------------------------
# Reductions
#
# In `persistent_reduction` and `reduction` kernels, values are [XBLOCK, R0_BLOCK] tiles where
# they vary along the reduction (they use r0_index) and [XBLOCK, 1] columns where they do not;
# Triton broadcasts one against the other. `triton.reduce` turns a tile into a column.


def reduction_identity(kind: str, typ: Attribute) -> int | float:
    """The value that leaves a reduction of `kind` unchanged, in `typ` (what masked lanes hold)."""
    if kind in ("sum", "welford", "any"):
        return 0.0 if isinstance(typ, AnyFloat) else 0
    if kind == "prod":
        return 1.0 if isinstance(typ, AnyFloat) else 1
    low = kind in ("max", "argmax")  # the smallest value, so that any other one wins
    if isinstance(typ, AnyFloat):
        return -math.inf if low else math.inf
    assert isinstance(typ, IntegerType)
    width = typ.width.data
    if width == 1 or typ.signedness.data == Signedness.UNSIGNED:
        return 0 if low else (1 << width) - 1
    return -(1 << (width - 1)) if low else (1 << (width - 1)) - 1


def _verify_kind_types(op: Operation, kind: str, value: Attribute, results: Sequence[Attribute], accumulators: bool) -> None:
    """Result (or accumulator) types a reduction of `kind` over `value` elements has."""
    if kind not in REDUCE_KINDS:
        raise VerifyException(f"{op.name}: unknown reduction kind '{kind}' (expected one of {', '.join(REDUCE_KINDS)})")
    if kind in ("argmax", "argmin"):
        expected: list[Attribute] = [value, IntegerType(64)] if accumulators else [IntegerType(64)]
    elif kind in ("welford", "online_softmax"):
        if not isinstance(value, AnyFloat):
            raise VerifyException(f"{op.name}: {kind} needs float values, got {value}")
        expected = [value] * ACCUMULATORS[kind]
    elif kind == "any":
        if value != i1:
            raise VerifyException(f"{op.name}: any reduces i1 values, got {value}")
        expected = [i1]
    else:
        expected = [value]
    if list(results) != expected:
        what = "accumulators" if accumulators else "results"
        raise VerifyException(
            f"{op.name}: {kind} of {value} has {what} ({', '.join(map(str, expected))}), got ({', '.join(map(str, results))})"
        )


@irdl_custom_directive
class AccumulatorTypes(CustomDirective):
    """`f32, i64` after `->` in triton.accumulate: the accumulators' types, which the results
    (the new accumulators) have too."""

    accumulators: VariadicOperandVariable
    types: TypeDirective
    results: TypeDirective

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        printer.print_list(self.types.get(op), printer.print_attribute)

    def parse(self, parser: Parser, state: ParsingState) -> None:
        types = parse_types_of(parser, state, self.accumulators, "accumulator")
        self.types.set(state, types)
        self.results.set(state, types)


@irdl_op_definition
class ReduceOp(MaskedBodyOp):
    """Reduce along R0: `%r = triton.reduce sum %v mask r0_mask, xmask : f32 -> f32`.

    `tl.sum(tl.where(r0_mask & xmask, v, 0.0), 1)[:, None]`: lanes where a mask is false take
    the kind's identity (0, 1, -inf, inf, False), so they cannot change the result, which is an
    [XBLOCK, 1] column (keepdim, as Inductor). argmax/argmin give the i64 position of the first
    extreme value (ties go to the lowest index; NaN counts as the extreme), positions being
    r0_index in a persistent kernel or an explicit index tile:
    `%i = triton.reduce argmax %vals, %idxs : f32, i64 -> i64` (a looped kernel's accumulators).
    welford combines (mean, m2, weight) tiles into (mean, m2, weight) columns (Chan et al.):
    `%m, %m2, %w = triton.reduce welford %a, %b, %c : f32, f32, f32 -> f32, f32, f32`.
    online_softmax combines (max, sum of exp(v - max)) accumulators into the row's max and
    sum(exp(v - max)), rescaling each lane's sum to the row's max (Milakov & Gimelshein).
    In a looped `reduction` kernel it follows the triton.rloop, on its accumulators."""

    name = "triton.reduce"
    kind = prop_def(StringAttr)
    values = var_operand_def()
    outputs = var_result_def()
    assembly_format = (
        "custom<ReductionKind>($kind) custom<Operands>($values) custom<MaskNames>($mask_names)"
        " `:` custom<TypesOf>(ref($values), type($values))"
        " `->` type($outputs) attr-dict"
    )

    def __init__(self, kind: str, values: Sequence[SSAValue], result_types: Sequence[Attribute], mask_names: Sequence[str] = ()):
        super().__init__(
            operands=[list(values)],
            properties={"kind": StringAttr(kind), **mask_names_props(mask_names)},
            result_types=[list(result_types)],
        )

    @property
    def reduction_kind(self) -> str:
        return self.kind.data

    @property
    def explicit_index(self) -> bool:
        """argmax/argmin with an index tile operand (else positions are r0_index)."""
        return self.reduction_kind in ("argmax", "argmin") and len(self.values) == 2

    def verify_(self) -> None:
        kernel = self.kernel()
        if kernel.kernel_kind in ("pointwise", "matmul"):
            raise VerifyException(f"triton.reduce: a {kernel.kernel_kind} kernel has no reduction dimension to reduce")
        if self.in_rloop():
            raise VerifyException("triton.reduce: reduce after the triton.rloop; inside it, use triton.accumulate")
        kind = self.reduction_kind
        types = [v.type for v in self.values]
        counts = {"welford": (3,), "online_softmax": (2,), "argmax": (1, 2), "argmin": (1, 2)}.get(kind, (1,))
        if len(types) not in counts:
            raise VerifyException(f"triton.reduce: {kind} takes {' or '.join(map(str, counts))} operand(s), got {len(types)}")
        if kind in ("argmax", "argmin"):
            if len(types) == 1 and kernel.kernel_kind == "reduction":
                raise VerifyException(f"triton.reduce: {kind} after a loop needs the index accumulator")
            if len(types) == 2 and not isinstance(types[1], IntegerType):
                raise VerifyException(f"triton.reduce: {kind} positions are integers, got {types[1]}")
        if kind == "welford" and len(set(types)) != 1:
            raise VerifyException("triton.reduce: welford's mean, m2 and weight have one type")
        if kind == "online_softmax" and (kernel.kernel_kind != "reduction" or self.masks or len(set(types)) != 1):
            raise VerifyException(
                "triton.reduce: online_softmax combines a looped kernel's (max, sum) accumulators, of one type, unmasked"
            )
        _verify_kind_types(self, kind, types[0], [r.type for r in self.results], accumulators=False)
        self.verify_masks(kernel)


@irdl_op_definition
class AccumulateOp(MaskedBodyOp):
    """One step of a looped reduction, inside `triton.rloop`:
    `%n = triton.accumulate sum %v into %acc mask r0_mask, xmask : f32 -> f32`.

    Lane by lane, where every mask holds the accumulator takes combine(acc, v), elsewhere it
    keeps acc (`tl.where(r0_mask & xmask, acc + v, acc)`). argmax/argmin carry (value, i64
    index) accumulators and take r0_index as the value's position, keeping the first on ties;
    welford carries (mean, m2, weight) and adds one sample per lane (Inductor's
    `welford_reduce`); online_softmax carries (max, sum of exp(v - max)), rescaling the sum
    when the max grows. The results are the new accumulators, of the accumulators' types."""

    name = "triton.accumulate"
    kind = prop_def(StringAttr)
    value = operand_def()
    accumulators = var_operand_def()
    outputs = var_result_def()
    traits = traits_def(Pure())
    assembly_format = (
        "custom<ReductionKind>($kind) $value `into` custom<Operands>($accumulators) custom<MaskNames>($mask_names) `:` type($value)"
        " `->` custom<AccumulatorTypes>(ref($accumulators), type($accumulators), type($outputs)) attr-dict"
    )
    custom_directives = (AccumulatorTypes, *MaskedBodyOp.custom_directives)

    def __init__(self, kind: str, value: SSAValue, accumulators: Sequence[SSAValue], mask_names: Sequence[str] = ()):
        super().__init__(
            operands=[value, list(accumulators)],
            properties={"kind": StringAttr(kind), **mask_names_props(mask_names)},
            result_types=[[a.type for a in accumulators]],
        )

    @property
    def reduction_kind(self) -> str:
        return self.kind.data

    def verify_(self) -> None:
        kernel = self.kernel()
        if not self.in_rloop() or kernel.kernel_kind != "reduction":
            raise VerifyException("triton.accumulate must be inside the triton.rloop of a looped reduction kernel")
        accs = [a.type for a in self.accumulators]
        _verify_kind_types(self, self.reduction_kind, self.value.type, accs, accumulators=True)
        if [r.type for r in self.results] != accs:
            raise VerifyException("triton.accumulate: results are the new accumulators, of their types")
        self.verify_masks(kernel)


DOT_PRECISIONS = ("ieee", "tf32")


@irdl_op_definition
class DotOp(MaskedBodyOp):
    """One K step of a matmul kernel, inside its `triton.rloop`:
    `%n = triton.dot %a, %b into %acc mask r0_mask, r0_mask_t tf32 : bf16, bf16 -> f32`.

    `a` is the [YBLOCK, R0_BLOCK] tile of A (broadcast to it), `b` the [R0_BLOCK, XBLOCK] tile
    of B; the result is `acc + a @ b` (`tl.dot(a, b, acc)`), the products and sums in the
    accumulator's type. `r0_mask` zeroes the lanes of `a` past K, `r0_mask_t` those of `b`
    (where they are not loads that read 0 there already: values computed from them). f32
    operands multiply as IEEE floats unless `tf32` says TF32 may be used (torch's
    `allow_tf32`)."""

    name = "triton.dot"
    lhs = operand_def(AnyFloat)
    rhs = operand_def(AnyFloat)
    T: ClassVar = VarConstraint("T", AnyFloatConstr)
    accumulator = operand_def(T)
    precision = prop_def(StringAttr)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = (
        "$lhs `,` $rhs `into` $accumulator custom<MaskNames>($mask_names) $precision `:` type($lhs) `,` type($rhs)"
        " `->` type($result) attr-dict"
    )

    def __init__(self, lhs: SSAValue, rhs: SSAValue, accumulator: SSAValue, mask_names: Sequence[str] = (),
                 precision: str = "ieee"):
        super().__init__(
            operands=[lhs, rhs, accumulator],
            properties={"precision": StringAttr(precision), **mask_names_props(mask_names)},
            result_types=[accumulator.type],
        )

    def verify_(self) -> None:
        kernel = self.kernel()
        if kernel.kernel_kind != "matmul" or not self.in_rloop():
            raise VerifyException("triton.dot must be inside the triton.rloop of a matmul kernel")
        if self.lhs.type != self.rhs.type:
            raise VerifyException(f"triton.dot: operands of one type, got {self.lhs.type} and {self.rhs.type}")
        if self.precision.data not in DOT_PRECISIONS:
            raise VerifyException(f"triton.dot: precision is {' or '.join(DOT_PRECISIONS)}, got '{self.precision.data}'")
        self.verify_masks(kernel)
