"""The `lower-aten` pass: aten ops -> `loops.pointwise` bodies, views and extern calls."""

from __future__ import annotations

from dataclasses import dataclass
from io import StringIO
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.printer import Printer
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from mlc.dialects.aten import AtenOp, CallOp
from mlc.dialects.sym import unnamed_sizes
from mlc.passes.lowering import Lowered, LoweringOptions, lower_op
from mlc.passes.lowering.extern import extern
from mlc.passes.lowering.registry import make_call
from mlc.passes.stages import check_stage
from mlc.passes.pipeline import option


@dataclass(frozen=True)
class LowerAtenPass(ModulePass):
    """Lower every aten op to loops: Inductor's `lowerings` table as a pass.

    Each aten op becomes its own loops op(s); producers are never folded into consumers here
    (that is `--inline`). Elementwise ops become a `loops.pointwise` over the result shape
    whose body loads each operand with broadcasting and computes in torch's promoted dtype
    (float16/bfloat16 in f32, narrowed once before `loops.yield`). Views (reshape, permute,
    expand, slice, select, squeeze, ...) become a pointwise whose body is a single load at
    the re-indexed position; `cat` and `constant_pad_nd` use masked loads and `arith.select`.
    Reductions (sum, prod, amax/amin, max/min with indices, argmax/argmin, any/all, mean,
    var/std/var_mean) become a `loops.reduction` whose prologue loads at the kept indices
    i0, i1, ... and the reduction indices r0_0, r0_1, ... (over the reduced dims in the
    tensor's order), one `loops.reduce` per kind (max.dim: a max and an argmax of one load;
    var_mean: one welford), and an epilogue on the reduced values (mean's division, var's
    m2 / (n - correction), the narrowing of f16/bf16 sums accumulated in f32). As Inductor's
    `Reduction.create`: a reduction of 0 elements is its identity as a pointwise, of 1 element
    a pointwise, of fewer than `unroll-reductions-threshold` static elements a pointwise
    chain. Softmax, log_softmax, logsumexp, layer_norm, the softmax backwards and
    nll_loss_forward/backward become such reductions plus pointwise ops (see
    `passes/lowering/norms.py` and `losses.py`), with no extern.
    mm/addmm/bmm/baddbmm/convolution, gather/index/embedding (data-dependent indexing) and
    every other op without a rule (so any `aten.call` of an overload the aten dialect has no
    schema for) become `loops.extern` calls of the same aten overload; an `aten.call` of a
    known overload (a number in a Tensor slot, as in `maximum(x, 0.5)`) is lowered like the
    dedicated op.

        %1 = aten.mul.Scalar %x {other = 5.000000e-01 : f64} : (tensor<8x64xf16>) -> tensor<8x64xf16>
        %2 = aten.permute %1 {dims = array<i64: 1, 0>} : (tensor<8x64xf16>) -> tensor<64x8xf16>

    becomes

        %0 = loops.pointwise [8, 64] origins ["mul"] -> tensor<8x64xf16> {
          %1 = loops.load %x[i0, i1] : tensor<8x64xf16>
          %2 = arith.extf %1 : f16 to f32
          %3 = arith.constant 5.000000e-01 : f32
          %4 = arith.mulf %2, %3 : f32
          %5 = arith.truncf %4 : f32 to f16
          loops.yield %5 : f16
        }
        %6 = loops.pointwise [64, 8] origins ["permute"] -> tensor<64x8xf16> {
          %7 = loops.load %0[i1, i0] : tensor<8x64xf16>
          loops.yield %7 : f16
        }

    Each loops op's `origins` is the aten op's `origin` tag (set by the importer on the
    pieces of a decomposed op, e.g. "gelu") or else its packet; its location is the aten
    op's. Externs keep the aten op's discardable attributes.

    Options:
      fallback: overloads to leave as extern calls even though a rule exists, e.g.
        `lower-aten{fallback=gelu,cat}` (spelled as the aten dialect does: "add.Tensor",
        "cat"). Default: none.
      gemm: `extern` (default) leaves mm and addmm cuBLAS calls; `triton` lowers those of
        float16, bfloat16 and float32 to contractions, a `loops.reduction` around a `loops.dot`
        that `--convert-to-triton` runs as a tiled `tl.dot` kernel with its fused epilogue
        (`passes/lowering/matmul.py`).
      unroll-reductions-threshold: reductions of fewer static elements than this become a
        pointwise that combines every element (Inductor's `unroll_reductions_threshold`;
        variance only when the result has more than one element). Default 8; 0 or 1 keeps
        every reduction of 2 or more elements a `loops.reduction`.

    Symbolic sizes (`tensor<?x64xf32, #sym.sizes<[s0, 64]>>`) become symbolic ranges.
    """

    name = "lower-aten"
    ACCEPTS: ClassVar[tuple[str, ...]] = ("aten", "loops")  # loops: what it made already

    fallback: tuple[str, ...] = option((), "overloads to leave as extern calls though a rule exists (fallback=gelu,cat)")
    unroll_reductions_threshold: int = option(8, "reductions of fewer static elements become one pointwise combining them all")
    gemm: str = option("extern", "mm and addmm as cuBLAS calls (extern) or as Triton contractions (triton)")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_stage(self, op)
        if self.gemm not in ("extern", "triton"):
            raise PassFailedException(f"lower-aten: gemm is extern or triton, got '{self.gemm}'")
        options = LoweringOptions(unroll_reductions_threshold=self.unroll_reductions_threshold, gemm=self.gemm)
        for aten_op in [o for o in op.walk() if isinstance(o, (AtenOp, CallOp))]:
            _check_sizes(aten_op)
            if _overload(aten_op) in self.fallback:
                lowered = Lowered.of(extern(make_call(aten_op)))
            else:
                lowered = lower_op(aten_op, options)
            if len(lowered.results) != len(aten_op.results):
                raise _failure(
                    aten_op,
                    f"{aten_op.name} has {len(aten_op.results)} results but its lowering gave {len(lowered.results)}",
                )
            Rewriter.replace_op(aten_op, lowered.ops, lowered.results)


def _overload(op: Operation) -> str:
    if isinstance(op, AtenOp):
        return op.SCHEMA.overload
    assert isinstance(op, CallOp)
    return op.overload.data.removesuffix(".default")


def _check_sizes(op: Operation) -> None:
    for value in (*op.operands, *op.results):
        if isinstance(value.type, TensorType) and (why := unnamed_sizes(value.type)) is not None:
            raise _failure(op, f"{op.name} at {_where(op)}: {why}")


def _failure(op: Operation, message: str) -> PassFailedException:
    """A pass failure that names `op`; mlc-opt reads `.op` to point at its line."""
    error = PassFailedException(message)
    error.op = op  # type: ignore[attr-defined]
    return error


def _where(op: Operation) -> str:
    out = StringIO()
    Printer(stream=out).print_attribute(op.location)
    return out.getvalue()
