"""mm and addmm as contractions: a `loops.reduction` [M, N] over [K] around one `loops.dot`.

    %0 = loops.reduction [64, 128] over [96] origins ["addmm"] -> tensor<64x128xbf16> {
      %1 = loops.load %x[i0, r0_0] : tensor<64x96xbf16>
      %2 = loops.load %w[r0_0, i1] : tensor<96x128xbf16>
      %3 = loops.dot %1, %2 : bf16, bf16 -> f32
      %4 = loops.load %b[i1] : tensor<128xbf16>
      %5 = arith.extf %4 : bf16 to f32
      %6 = arith.addf %3, %5 : f32
      %7 = arith.truncf %6 : f32 to bf16
      loops.yield %7 : bf16
    }

The operands are loaded in their storage type (tl.dot multiplies bf16 and f16 tiles exactly and
accumulates in f32, as cuBLAS does); the products of f32 operands accumulate in f32. addmm's
bias, scaled by beta, and alpha are the epilogue, rounded once, as cuBLAS's epilogue does.
Only where `lower-aten{gemm=triton}` asks, and only for float16, bfloat16 and float32 (float64
and integer products stay cuBLAS calls); every other mm/addmm, and bmm, stays an extern call.
"""

from __future__ import annotations

from xdsl.ir import Operation

from mlc.dialects.loops import DotOp
from mlc.passes.lowering.body import Body, Value, make_reduction
from mlc.passes.lowering.dtypes import compute_type, dtype_of
from mlc.passes.lowering.registry import Call, register, shape

TRITON_GEMM_DTYPES = ("float16", "bfloat16", "float32")


@register("mm")
def mm(call: Call) -> list[Operation] | None:
    return _contraction(call, call["self"], call["mat2"])


@register("addmm")
def addmm(call: Call) -> list[Operation] | None:
    return _contraction(call, call["mat1"], call["mat2"], bias=call["self"])


def _contraction(call: Call, a, b, bias=None) -> list[Operation] | None:  # noqa: ANN001 (SSA values)
    dtype = dtype_of(call.result_type)
    if call.options.gemm != "triton" or dtype not in TRITON_GEMM_DTYPES:
        return None
    if any(dtype_of(v.type) != dtype for v in (a, b)):
        return None
    (m, k), n = shape(a), shape(b)[1]
    beta, alpha = call.get("beta", 1), call.get("alpha", 1)

    def body(bb: Body) -> list[Value]:
        i0, i1 = bb.vars
        r0 = bb.rvars[0]
        lhs = bb.load(a, [i0, r0], widen=False)
        rhs = bb.load(b, [r0, i1], widen=False)
        product = Value(bb.emit(DotOp(lhs.ssa, rhs.ssa, compute_type(dtype))), dtype)
        if alpha != 1:
            product = bb.mul(product, bb.constant(float(alpha), dtype))
        if bias is None or beta == 0:
            return [product]
        bias_shape = shape(bias)
        index = [i0, i1][2 - len(bias_shape):]
        index = [0 if size == 1 and full != 1 else v for v, size, full in zip(index, bias_shape, [m, n][2 - len(bias_shape):])]
        term = bb.load(bias, index)
        if beta != 1:
            term = bb.mul(term, bb.constant(float(beta), dtype))
        return [bb.add(product, term)]

    return [make_reduction(call, [m, n], [k], [call.result_type], body)]

