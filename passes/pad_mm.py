"""Pad matmul sizes that keep cuBLAS off its fast kernels (Inductor's `fx_passes/pad_mm.py`).

cuBLAS runs its fast kernels only when every operand's rows start at 16-byte boundaries. An
mm whose K or N (or M) is not a multiple of 8 halves or 4 floats gets an `align1` kernel, several
times slower: GPT-2's LM head, [2048, 768] @ [768, 50257] in bf16 on the H100, takes 1.67 ms,
against 0.23 ms padded to 50264 plus 0.05 ms to pad the weight. So such an mm becomes a
`constant_pad_nd` of each operand, an mm of the padded sizes and a slice of its result
(Inductor's `mm_replace`; an addmm's added input is padded along the dims it spans, as in
`pad_addmm`); the zeros add nothing to the products, and the slice is a view:

Before:
    %0 = aten.mm %x, %w : (tensor<2048x768xbf16>, tensor<768x50257xbf16>) -> tensor<2048x50257xbf16>
After:
    %0 = aten.constant_pad_nd %w {pad = array<i64: 0, 7, 0, 0>, value = 0.000000e+00 : f64}
           : (tensor<768x50257xbf16>) -> tensor<768x50264xbf16>
    %1 = aten.mm %x, %0 : (tensor<2048x768xbf16>, tensor<768x50264xbf16>) -> tensor<2048x50264xbf16>
    %2 = aten.slice.Tensor %1 {dim = 1 : i64, start = 0 : i64, end = 50257 : i64, step = 1 : i64}
           : (tensor<2048x50264xbf16>) -> tensor<2048x50257xbf16>

An `nn.Linear` reads its [N, K] weight transposed, rows K apart: there an unaligned N leaves
only the result's rows unaligned. With `result-only=true` nothing is copied: the mm writes its
result into a buffer whose rows are N rounded up apart (`result_strides` with `out`: the call's
`out=` argument), a strided view for every reader (BERT's tied LM head: 30522 columns written
30528 apart, where padding the weight copies 45 MB per call). It is off by default: on the H200
(torch 2.11, CUDA 13) cuBLAS still runs an `align1` kernel for an N that is not a multiple of 8,
whatever the result's row stride (GPT-2's LM head forward: 1.68 ms, eager's time):

Before:
    %t = aten.permute %w {dims = array<i64: 1, 0>} : (tensor<30522x768xbf16>) -> tensor<768x30522xbf16>
    %0 = aten.mm %x, %t : (tensor<4096x768xbf16>, tensor<768x30522xbf16>) -> tensor<4096x30522xbf16>
After:
    %0 = aten.mm %x, %t attributes {result_strides = [array<i64: 30528, 1>], out} : ...

Which mms are padded (Inductor's `should_pad_common`, `get_padded_length` and
`is_mm_compute_bound`; Inductor then times both forms on the GPU, mlc decides from the sizes):
  - the operands are f16/bf16 (padded to multiples of 8) or f32 (of 4) and share the dtype;
  - a size that is already a multiple, or is 1, stays;
  - a symbolic size (dynamic shapes: `s0*s1` rows) stays, as in Inductor; the static ones of
    the same mm are padded, its intensity judged with the symbolic size at launch's size hint;
  - the mm is compute bound: M*N*K / (M*K + K*N + M*N) flops per element moved reaches
    `min-intensity`, half the H100's machine balance for its dtype (Inductor's factor), so that
    the copies padding makes cost little next to the mm they speed up.

Options:
  min-intensity-16bit=148   bf16/f16: 989 TFLOP/s / 3.35 TB/s / 2
  min-intensity-f32=10      f32 (no TF32): 67 TFLOP/s / 3.35 TB/s / 2
  result-only=false         true: an nn.Linear's unaligned N pads the result's rows only
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import sympy
from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    TensorType,
    UnitAttr,
    f64,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from mlc.analysis.launch import SYMBOLIC_SIZE_HINT
from mlc.dialects.aten import OPS, AtenOp
from mlc.dialects.buffer_layout import OUT_RESULTS, RESULT_STRIDES
from mlc.dialects.sym import sizes_of, tensor_type
from mlc.passes.pipeline import option
from mlc.passes.stages import check_stage

_PAD, _SLICE, _PERMUTE = OPS["constant_pad_nd"], OPS["slice.Tensor"], OPS["permute"]


def alignment(dtype: Attribute) -> int:
    """Elements per 16 bytes for the dtypes cuBLAS's fast kernels take (0: never padded)."""
    if isinstance(dtype, (Float16Type, BFloat16Type)):
        return 8
    return 4 if isinstance(dtype, Float32Type) else 0


def padding(size: int | sympy.Expr, align: int) -> int:
    """Elements to add to `size` to reach a multiple of `align` (0 for 1: it squeezes away; 0
    for a symbolic size, as in Inductor: its alignment is unknown until run time)."""
    if not isinstance(size, int) or align == 0 or size == 1 or size % align == 0:
        return 0
    return align - size % align


def intensity(m: int, k: int, n: int) -> float:
    """Flops of an [m, k] @ [k, n] product per element it reads or writes."""
    moved = m * k + k * n + m * n
    return m * n * k / moved if moved else 0.0


@dataclass(frozen=True)
class PaddedMm:
    """How one mm is padded: the elements added to M, K and N; `result_only`: N alone, with the
    second operand a transpose (its rows K apart), so that only the result's rows are padded."""

    m: int
    k: int
    n: int
    result_only: bool = False


def _matrices(op: AtenOp) -> tuple[SSAValue, SSAValue]:
    """The two matrices of an mm or an addmm (whose first operand is the added input)."""
    a, b = op.tensors[-2:]
    return a, b


def plan(mm: AtenOp, min_intensity_16bit: float, min_intensity_f32: float, result_only: bool = False) -> PaddedMm | None:
    """The padding `mm` (an mm or addmm) gets, or None when it is left alone."""
    a, b = (t.type for t in _matrices(mm))
    assert isinstance(a, TensorType) and isinstance(b, TensorType)
    (m, k), (_, n) = sizes_of(a), sizes_of(b)
    if len({t.type.element_type for t in mm.tensors}) != 1:  # type: ignore[attr-defined]
        return None
    align = alignment(a.element_type)
    pads = PaddedMm(padding(m, align), padding(k, align), padding(n, align))
    if pads == PaddedMm(0, 0, 0):
        return None
    threshold = min_intensity_f32 if isinstance(a.element_type, Float32Type) else min_intensity_16bit
    m, k, n = (d if isinstance(d, int) else SYMBOLIC_SIZE_HINT for d in (m, k, n))
    if intensity(m, k, n) < threshold:
        return None
    source = _transposed_source(_matrices(mm)[1])  # rows K apart, unless a transpose again (`t().t()`)
    if result_only and pads.m == 0 and pads.k == 0 and source is not None and _transposed_source(source) is None:
        return PaddedMm(0, 0, pads.n, result_only=True)
    return pads


def _transposed_source(value: SSAValue) -> SSAValue | None:
    """The [C, R] tensor whose transpose `value` is (`t`, `permute [1, 0]`, `transpose 0 1`)."""
    op = value.owner
    if not isinstance(op, AtenOp) or len(op.tensors) != 1:
        return None
    swaps = op.name == "aten.t" or (op.name == "aten.permute" and list(op.arg("dims")) == [1, 0]) or (
        op.name == "aten.transpose.int" and {op.arg("dim0") % 2, op.arg("dim1") % 2} == {0, 1})
    source = op.tensors[0]
    return source if swaps and isinstance(source.type, TensorType) and source.type.get_num_dims() == 2 else None


def _zero_padded(value: SSAValue, highs: Sequence[int], at: InsertPoint) -> SSAValue:
    """`value` with `highs[d]` zeros added at the end of each dim d (a constant_pad_nd)."""
    t = value.type
    assert isinstance(t, TensorType)
    pad = [p for high in reversed(highs) for p in (0, high)]  # (low, high) from the last dim back
    shape = [n + high for n, high in zip(sizes_of(t), highs)]
    args = {"pad": DenseArrayBase.from_list(i64, pad), "value": FloatAttr(0.0, f64)}
    for use in value.uses:  # padded already for an mm before this one (a gradient feeds two)
        other = use.operation
        if isinstance(other, _PAD) and other.parent_block() is at.block and dict(other.args.data) == args:
            return other.outputs[0]
    op = _PAD([value], args, [tensor_type(t.element_type, shape)])
    Rewriter.insert_op(op, at)
    return op.outputs[0]


def _padded(value: SSAValue, rows: int, cols: int, at: InsertPoint) -> SSAValue:
    """`value` ([R, C]) with `rows` zero rows and `cols` zero columns added at the ends. The
    transpose of a tensor (an `nn.Linear` weight) is padded as that tensor and transposed
    again: a copy that keeps the order of memory, which cuBLAS reads transposed as it is, where
    padding the transposed view would write a transposed copy (4x slower for GPT-2's LM head)."""
    if rows == 0 and cols == 0:
        return value
    if (source := _transposed_source(value)) is not None:
        padded = _padded(source, cols, rows, at)
        if (twice := _transposed_source(padded)) is not None:
            _erase_unused_transposes(padded)
            return twice  # the transpose of a transpose (a tied weight's `t().t()`) is its source
        r, c = sizes_of(padded.type)
        back = _PERMUTE([padded], {"dims": DenseArrayBase.from_list(i64, [1, 0])},
                        [tensor_type(padded.type.element_type, [c, r])])  # type: ignore[attr-defined]
        Rewriter.insert_op(back, at)
        return back.outputs[0]
    return _zero_padded(value, [rows, cols], at)


def _sliced(value: SSAValue, dim: int, end: int, at: InsertPoint) -> SSAValue:
    t = value.type
    assert isinstance(t, TensorType)
    shape = sizes_of(t)
    shape[dim] = end
    args = {"dim": IntegerAttr(dim, i64), "start": IntegerAttr(0, i64), "end": IntegerAttr(end, i64),
            "step": IntegerAttr(1, i64)}
    op = _SLICE([value], args, [tensor_type(t.element_type, shape)])
    Rewriter.insert_op(op, at)
    return op.outputs[0]


def _padded_bias(value: SSAValue, pads: PaddedMm, m: int | sympy.Expr, n: int | sympy.Expr,
                 at: InsertPoint) -> SSAValue:
    """An addmm's input ([N], [1, N], [M, 1] or [M, N]) padded along the dims it spans."""
    t = value.type
    assert isinstance(t, TensorType)
    shape = sizes_of(t)
    cols = pads.n if shape[-1] == n and n != 1 else 0
    if len(shape) == 1:
        return _zero_padded(value, [cols], at) if cols else value
    rows = pads.m if shape[0] == m and m != 1 else 0
    return _padded(value, rows, cols, at)


def pad(mm: AtenOp, pads: PaddedMm) -> None:
    """Replace `mm` (an mm or addmm) by the padded one and the slices of its result, or (`result_only`)
    have it write its result with padded rows."""
    if pads.result_only:
        (_, n), = [sizes_of(r.type) for r in mm.outputs]  # type: ignore[arg-type]
        mm.attributes[RESULT_STRIDES] = ArrayAttr([DenseArrayBase.from_list(i64, [n + pads.n, 1])])
        mm.attributes[OUT_RESULTS] = UnitAttr()
        return
    a, b = _matrices(mm)
    before = InsertPoint.before(mm)
    result = mm.outputs[0].type
    assert isinstance(result, TensorType)
    (m, n) = sizes_of(result)
    operands = [_padded(a, pads.m, pads.k, before), _padded(b, pads.k, pads.n, before)]
    if mm.name == "aten.addmm":
        operands.insert(0, _padded_bias(mm.tensors[0], pads, m, n, before))
    padded = type(mm)(operands, dict(mm.args.data) if mm.args is not None else {},
                      [tensor_type(result.element_type, [m + pads.m, n + pads.n])])
    padded.attributes |= mm.attributes  # the importer's `origin` tag
    padded.location = mm.location
    Rewriter.insert_op(padded, before)
    out = padded.outputs[0]
    if pads.m:
        out = _sliced(out, 0, m, before)
    if pads.n:
        out = _sliced(out, 1, n, before)
    mm.outputs[0].replace_all_uses_with(out)
    Rewriter.erase_op(mm)
    for operand in dict.fromkeys((a, b)):  # `w.t() @ w.t()` reads one transpose twice
        _erase_unused_transposes(operand)


def _erase_unused_transposes(value: SSAValue) -> None:
    """Erase `value` and the transposes it is one of while nothing reads them: `_padded` reads
    through them, and left in the graph an unread transpose would count as a second consumer
    of the tensor it transposes (one that keeps `--inline` from folding a gradient into its pad)."""
    while not value.uses and (source := _transposed_source(value)) is not None:
        owner = value.owner
        assert isinstance(owner, Operation)
        Rewriter.erase_op(owner)
        value = source


@dataclass(frozen=True)
class PadMmPass(ModulePass):
    """Pad mm and addmm sizes that keep cuBLAS off its 16-byte-aligned kernels (Inductor's pad_mm)."""

    name = "pad-mm"
    ACCEPTS: ClassVar[tuple[str, ...]] = ("aten",)

    min_intensity_16bit: int = option(148, "bf16/f16 mms are padded from this many flops per element moved")
    min_intensity_f32: int = option(10, "f32 mms are padded from this many flops per element moved")
    result_only: bool = option(False, "an unaligned N of a transposed weight pads only the result's rows (no copy)")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_stage(self, op)
        for mm in [o for o in op.walk() if isinstance(o, AtenOp) and o.name in ("aten.mm", "aten.addmm")]:
            if (pads := plan(mm, self.min_intensity_16bit, self.min_intensity_f32, self.result_only)) is not None:
                pad(mm, pads)
