"""`--convert-to-triton`: buffer IR to Triton kernels, one module per layer of the job.

    convert.py    the pass: each node or fused group -> its kernel(s), the host `triton.wrapper`
                  (allocations, launches, externs, views, frees); kernel names and deduplication
    builder.py    KernelBuilder, what every kernel is built with: index symbols over the flat
                  lane indices, pointers, loads and stores, masks and eviction hooks, CSE, `build`
    pointwise.py  pointwise kernels over 1-D or 2-D (transposed access) tiles
    reduction.py  reduction kernels: persistent, looped (one loop per level of chained
                  reductions), or both over a symbolic r0_numel

A new kind of kernel is a module beside pointwise.py and reduction.py: a KernelBuilder subclass
(its index symbols, masks, body and `triton.kernel`) and a `build_..._kernels(members, ...)`
returning `GroupKernels`, which `convert.py` calls for the groups it takes. The GEMM kernels to
come (templates for `buffer.extern` mm/addmm with fused epilogues) go in `matmul.py`. Launch
decisions (configs, tiling, constant masks, index width) are `analysis/launch.py`'s, never made
here.
"""

from mlc.passes.to_triton.builder import GroupKernels, KernelBuilder, dimension_indices
from mlc.passes.to_triton.convert import ConvertToTritonPass, kernel_base_name, kernel_key
from mlc.passes.to_triton.pointwise import build_pointwise_kernel
from mlc.passes.to_triton.reduction import build_reduction_kernels

__all__ = [
    "ConvertToTritonPass",
    "GroupKernels",
    "KernelBuilder",
    "build_pointwise_kernel",
    "build_reduction_kernels",
    "dimension_indices",
    "kernel_base_name",
    "kernel_key",
]
