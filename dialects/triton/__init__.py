"""The `triton` dialect: GPU kernels at the level of `triton.language`, and the host wrapper.

Produced by `--convert-to-triton`, printed as a Python module by `mlc-translate --emit-python`.
A module holds `triton.kernel`s (one per fused group; Inductor's `@triton.jit` functions) and one
`triton.wrapper` (Inductor's `call(args)`): allocations, launches, extern calls, views, frees.

    triton.kernel @triton_poi_fused_gelu_0 pointwise(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 512 origins ["gelu"] configs [#triton.config<XBLOCK = 256, num_warps = 4, num_stages = 1>, #triton.config<XBLOCK = 128, num_warps = 4, num_stages = 1>] {
      triton.index x0 = ModularIndexing(xindex, 1, 64)
      triton.index x1 = FloorDiv(xindex, 64)
      %0 = triton.load %in_ptr0[x0 + 64*x1] mask xmask : f32
      %1 = arith.constant 5.000000e-01 : f32
      %2 = arith.mulf %0, %1 : f32
      %3 = math.erf %2 : f32
      triton.store %out_ptr0[x0 + 64*x1], %3 mask xmask : f32
    }
    triton.wrapper @call {
      triton.input "arg0_1" #buffer.layout<[8, 64], [64, 1], f32>
      triton.alloc "buf0" #buffer.layout<[8, 64], [64, 1], f32>
      triton.launch @triton_poi_fused_gelu_0(@arg0_1, @buf0) xnumel 512
      triton.extern "buf1" = "mm.default" {args = [@buf0, @buf2]} : #buffer.layout<[8, 8], [8, 1], f32>
      triton.view "buf2" = @buf0 #buffer.layout<[64, 8], [1, 64], f32>
      triton.free @buf0
      triton.return @buf1
    }

Kernel bodies are tile programs written with scalar types. Every value is a block of its type
whose shape the kernel kind implies -- `[XBLOCK]` in a `pointwise` kernel; in the reduction kinds
`[XBLOCK, R0_BLOCK]` where it varies along the reduction and `[XBLOCK, 1]` where it does not,
Triton broadcasting one against the other -- so `arith`/`math` ops are reused unchanged:
`%2 = arith.mulf %0, %1 : f32` is `tmp2 = tmp0 * tmp1`. The kernel defines, implicitly,
`xoffset = program_id(0) * XBLOCK`, `xindex = xoffset + arange(0, XBLOCK)` and
`xmask = xindex < xnumel`; a reduction kernel also `r0_index` (`[1, R0_BLOCK]`) and
`r0_mask = r0_index < r0_numel` -- a looped one only inside its `triton.rloop`, one R0_BLOCK
slice per step. A 2-D tiled pointwise kernel (`ynumel Y xnumel X`, Inductor's (y, x) tiling for
transposes) has [YBLOCK, XBLOCK] values and also defines `yoffset = program_id(1) * YBLOCK`,
`yindex = yoffset + arange(0, YBLOCK)[:, None]` and `ymask = yindex < ynumel`, with `xindex`
a `[None, :]` row; its configs set XBLOCK and YBLOCK and its grid is
`(cdiv(xnumel, XBLOCK), cdiv(ynumel, YBLOCK))`. `triton.index` names derived index symbols (`x0 = xindex % 64`,
`r0_0 = r0_index`); loads, stores and `triton.expr` use sym expressions over them. Block sizes
are not in the IR: `configs` are the launch configurations the runtime may autotune over
(XBLOCK, and R0_BLOCK for a looped reduction; a persistent one fixes R0_BLOCK =
next_pow2(r0_numel)); the grid is `(cdiv(xnumel, XBLOCK),)`.

Reductions (kinds sum, prod, max, min, argmax, argmin, any, welford, online_softmax):

    triton.kernel @triton_per_fused_add_sum_0 persistent_reduction(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 3 r0_numel 9 configs [...] {
      triton.index x0 = xindex
      triton.index r0_0 = r0_index
      %0 = triton.load %in_ptr0[r0_0 + 9*x0] mask r0_mask, xmask other 0.0 : f32
      %1 = triton.reduce sum %0 mask r0_mask, xmask : f32 -> f32       // [XBLOCK, 1]
      triton.store %out_ptr0[x0], %1 mask xmask : f32
    }
    triton.kernel @triton_red_fused_sum_1 reduction(...) xnumel 3 r0_numel 20000 configs [...] {
      triton.index x0 = xindex
      %zero = arith.constant 0.0 : f32
      %acc = triton.rloop iter_args(%a = %zero : f32) {                // for r0_offset in range(...)
        triton.index r0_0 = r0_index
        %0 = triton.load %in_ptr0[r0_0 + 20000*x0] mask r0_mask, xmask other 0.0 : f32
        %1 = triton.accumulate sum %0 into %a mask r0_mask, xmask : f32 -> f32
        triton.yield %1 : f32
      }
      %2 = triton.reduce sum %acc : f32 -> f32
      triton.store %out_ptr0[x0], %2 mask xmask : f32
    }

Invariants the verifier checks: kernel arguments are named `%<identifier>` pointers
(`!triton.ptr<dtype>`), unique; the body holds only triton body ops, `arith` and `math`; an index
symbol is defined once, from the implicit ones, size symbols (`s0`) or index symbols defined
earlier in an enclosing block, and used only after its definition; a load's result and a store's
value have the pointer's element type; mask names exist where they are used; `other` needs a
mask; configs set the block sizes of the kernel kind; reductions have the operand, accumulator
and result types of their kind, `triton.reduce` outside loops, `triton.accumulate` inside the one
`triton.rloop` of a looped kernel. In the wrapper: every buffer
name is defined once and referenced only after its definition and before it is freed; a launch
names a kernel of the module with one buffer per pointer, of the pointer's dtype, and the
kernel's numels; the wrapper ends with `triton.return`.

Modules (each imports only those above it; import the dialect from this package):

    core.py        constants (kernel kinds, implicit indices, masks, reduce kinds), PtrType,
                   ConfigAttr, shared syntax (numels, `custom<Masks>`)
    kernel.py      KernelOp, the bases of body ops (KernelBodyOp, MaskedBodyOp, PointerAccessOp),
                   IndexOp, RLoopOp, YieldOp; the kernel's check of its accesses' static bounds
    body.py        LoadOp, StoreOp, ExprOp, IndirectIndexOp (accesses: `mlc.dialects.access`)
    reductions.py  reduction_identity, ReduceOp, AccumulateOp, DotOp (a matmul kernel's K step)
    wrapper.py     WrapperOp and its body ops (InputOp, SizeInputOp, AllocOp, LaunchOp, ExternOp,
                   ViewOp, ReuseOp, FreeOp, ReturnOp); each launch's buffers against the kernels'
                   accesses
"""

from __future__ import annotations

from xdsl.ir import Dialect

from mlc.dialects.sym import ExprAttr
from mlc.dialects.triton.body import ExprOp, IndirectIndexOp, LoadOp, StoreOp
from mlc.dialects.triton.core import (
    ACCUMULATORS,
    BLOCK_NAMES,
    EVICTION_POLICIES,
    IMPLICIT_INDICES,
    KERNEL_KINDS,
    MASK_NAMES,
    REDUCE_KINDS,
    RESERVED,
    TILED_INDICES,
    TILED_MASKS,
    ConfigAttr,
    PtrType,
)
from mlc.dialects.triton.kernel import (
    INDEX_BITS, IndexOp, KernelBodyOp, KernelOp, MaskedBodyOp, RLoopOp, YieldOp, r0_blocks_up_to,
)
from mlc.dialects.triton.reductions import AccumulateOp, DotOp, ReduceOp, reduction_identity
from mlc.dialects.triton.wrapper import (
    GRAPH_INPUTS,
    AllocOp,
    ExternOp,
    FreeOp,
    InputOp,
    LaunchOp,
    ReturnOp,
    ReuseOp,
    SizeInputOp,
    ViewOp,
    WrapperBodyOp,
    WrapperOp,
)

__all__ = [
    "ACCUMULATORS", "BLOCK_NAMES", "EVICTION_POLICIES", "IMPLICIT_INDICES", "INDEX_BITS", "KERNEL_KINDS", "MASK_NAMES",
    "REDUCE_KINDS", "RESERVED", "TILED_INDICES", "TILED_MASKS",
    "ExprAttr",  # re-exported from mlc.dialects.sym (passes/to_triton/reduction.py uses triton.ExprAttr)
    "PtrType", "ConfigAttr", "KernelOp", "KernelBodyOp", "MaskedBodyOp", "IndexOp", "LoadOp", "StoreOp", "ExprOp", "IndirectIndexOp",
    "r0_blocks_up_to", "reduction_identity", "ReduceOp", "AccumulateOp", "DotOp", "RLoopOp", "YieldOp",
    "WrapperBodyOp", "GRAPH_INPUTS", "InputOp", "SizeInputOp", "AllocOp", "LaunchOp", "ExternOp", "ViewOp", "ReuseOp", "FreeOp",
    "ReturnOp", "WrapperOp",
    "Triton",
]

Triton = Dialect(
    "triton",
    [KernelOp, IndexOp, LoadOp, StoreOp, ExprOp, IndirectIndexOp, ReduceOp, AccumulateOp, DotOp, RLoopOp, YieldOp]
    + [WrapperOp, InputOp, SizeInputOp, AllocOp, LaunchOp, ExternOp, ViewOp, ReuseOp, FreeOp, ReturnOp],
    [PtrType, ConfigAttr],
)
