"""mm, addmm, bmm and baddbmm as contractions: a `loops.reduction` [M, N] (batched: [B, M, N])
over [K] around one `loops.dot`.

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
bias, scaled by beta, and alpha are the epilogue, rounded once, as cuBLAS's epilogue does
(baddbmm's likewise). A batched product reads A at (i0, i1, r0_0) and B at (i0, r0_0, i2); its
batch count is static and at most CUDA's grid z (each product is a z row of programs).
`_grouped_mm(a, b, offs)` of a 2-D `a` [M, K] and a 3-D `b` [G, K, N] (a mixture of experts'
projections: rows sorted by expert, `offs` the groups' cumulative ends) is the same contraction
with B read at the row's group, a loaded position: first a reduction over [G] counts the ends
at or below each row (`group[i0] = sum(offs[r0_0] <= i0)`, kept below G), then

      %g = loops.load %group[i0] : i64
      %p = loops.indirect_index %g size 8 : i64
      %2 = loops.load %w[i1 + 4096*r0_0 + 4194304*ind0] indirect(%p) : bf16

Only where `lower-aten{gemm=triton}` asks, and only for float16, bfloat16 and float32 (float64
and integer products stay cuBLAS calls); every other mm/addmm/bmm/baddbmm stays an extern call.
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType, i64
from xdsl.ir import Operation

from mlc.analysis.target import CUDA_MAX_GRID_Y
from mlc.dialects.loops import DotOp
from mlc.dialects.sym import symbol
from mlc.passes.lowering.body import Body, Value, make_reduction
from mlc.passes.lowering.dtypes import compute_type, dtype_of
from mlc.passes.lowering.registry import Call, Lowered, register, shape

TRITON_GEMM_DTYPES = ("float16", "bfloat16", "float32")


@register("mm", "bmm")
def product(call: Call) -> list[Operation] | None:
    return _contraction(call, call["self"], call["mat2"])


@register("addmm", "baddbmm")
def product_plus_bias(call: Call) -> list[Operation] | None:
    batched = call.packet == "baddbmm"
    return _contraction(call, call["batch1" if batched else "mat1"], call["batch2" if batched else "mat2"],
                        bias=call["self"])


def _contraction(call: Call, a, b, bias=None) -> list[Operation] | None:  # noqa: ANN001 (SSA values)
    dtype = dtype_of(call.result_type)
    if call.options.gemm != "triton" or dtype not in TRITON_GEMM_DTYPES:
        return None
    if any(dtype_of(v.type) != dtype for v in (a, b)):
        return None
    *batch, m, k = shape(a)
    n = shape(b)[-1]
    if batch and not (isinstance(batch[0], int) and batch[0] <= CUDA_MAX_GRID_Y):
        return None  # the products are the grid's z: a number of them CUDA's grid holds
    out = [*batch, m, n]
    beta, alpha = call.get("beta", 1), call.get("alpha", 1)

    def body(bb: Body) -> list[Value]:
        *z, i, j = bb.vars
        r0 = bb.rvars[0]
        lhs = bb.load(a, [*z, i, r0], widen=False)
        rhs = bb.load(b, [*z, r0, j], widen=False)
        product = Value(bb.emit(DotOp(lhs.ssa, rhs.ssa, compute_type(dtype))), dtype)
        if alpha != 1:
            product = bb.mul(product, bb.constant(float(alpha), dtype))
        if bias is None or beta == 0:
            return [product]
        bias_shape = shape(bias)  # broadcast against the output's trailing dimensions
        sizes, variables = out[len(out) - len(bias_shape):], bb.vars[len(out) - len(bias_shape):]
        term = bb.load(bias, [0 if size == 1 and full != 1 else v for v, size, full in zip(variables, bias_shape, sizes)])
        if beta != 1:
            term = bb.mul(term, bb.constant(float(beta), dtype))
        return [bb.add(product, term)]

    return [make_reduction(call, out, [k], [call.result_type], body)]


@register("_grouped_mm")
def grouped_product(call: Call) -> Lowered | None:
    """`_grouped_mm(a, b, offs)`, a 2-D `a` by a 3-D `b` (the forward's and the input
    gradient's form); every other form (a 2-D result's groups along K: the weight gradient;
    a bias; an out_dtype) stays the extern."""
    a, b, offs = call["self"], call["mat2"], call.get("offs")
    if call.options.gemm != "triton" or offs is None or call.get("bias") is not None:
        return None
    if call.get("out_dtype") is not None and call["out_dtype"] != dtype_of(call.result_type):
        return None
    dtype = dtype_of(call.result_type)
    if dtype not in TRITON_GEMM_DTYPES or any(dtype_of(v.type) != dtype for v in (a, b)):
        return None
    if len(shape(a)) != 2 or len(shape(b)) != 3 or dtype_of(offs.type) not in ("int32", "int64"):
        return None
    (m, k), (groups, _, n) = shape(a), shape(b)
    if not all(isinstance(size, int) for size in (m, k, n, groups)):
        return None
    index_type = TensorType(i64, [m])

    def group_of_row(bb: Body) -> list[Value]:
        end = bb.cast(bb.load(offs, [bb.rvars[0]]), "int64")
        at_or_below = bb.cast(bb.compare("le", end, bb.index(bb.vars[0])), "int64")
        (ends,) = bb.reduce("sum", at_or_below)
        return [bb.minimum(ends, bb.constant(groups - 1, "int64"))]  # rows past the last end: any group

    group = make_reduction(call, [m], [groups], [index_type], group_of_row)

    def body(bb: Body) -> list[Value]:
        i, j = bb.vars
        r0 = bb.rvars[0]
        lhs = bb.load(a, [i, r0], widen=False)
        position = bb.indirect_index(bb.load(group.results[0], [i]), groups)
        rhs = bb.load(b, [symbol("ind0"), r0, j], widen=False, indirect=[position])
        return [Value(bb.emit(DotOp(lhs.ssa, rhs.ssa, compute_type(dtype))), dtype)]

    product = make_reduction(call, [m, n], [k], [call.result_type], body)
    return Lowered([group, product], [product.results[0]])
