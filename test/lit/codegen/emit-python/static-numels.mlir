// RUN: mlc-translate --emit-python %s | filecheck %s

// A static numel is a literal first in the kernel's body (Triton folds the masks with it); a
// symbolic one stays the launch's argument. The signature is the same either way.

// CHECK-LABEL: def triton_per_fused_sum_1(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK: tl.constexpr):
// CHECK-NEXT:    xnumel = 8
// CHECK-NEXT:    r0_numel = 768
// CHECK-NEXT:    R0_BLOCK: tl.constexpr = 1024
// CHECK:         r0_mask = r0_index < r0_numel
// CHECK-LABEL: def triton_poi_fused_fill_2(out_ptr0, xnumel, XBLOCK: tl.constexpr):
// CHECK-NEXT:    xoffset = tl.program_id(0) * XBLOCK
triton.kernel @triton_per_fused_sum_1 persistent_reduction(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 8 r0_numel 768 configs [#triton.config<XBLOCK = 1, num_warps = 1, num_stages = 1>] {
  triton.index x0 = xindex
  %0 = triton.load %in_ptr0[r0_index + 768*x0] mask r0_mask, xmask other 0.0 : f32
  %1 = triton.reduce sum %0 mask r0_mask, xmask : f32 -> f32
  triton.store %out_ptr0[x0], %1 mask xmask : f32
}
triton.kernel @triton_poi_fused_fill_2 pointwise(%out_ptr0: !triton.ptr<f32>) xnumel s0 configs [#triton.config<XBLOCK = 128, num_warps = 4, num_stages = 1>] {
  %0 = arith.constant 1.0 : f32
  triton.store %out_ptr0[xindex], %0 mask xmask : f32
}
triton.wrapper @call {
  triton.size_input "arg0_1" s0
  triton.input "arg2_1" #buffer.layout<[8, 768], [768, 1], f32>
  triton.alloc "buf1" #buffer.layout<[8], [1], f32>
  triton.alloc "buf2" #buffer.layout<[s0], [1], f32>
  triton.launch @triton_per_fused_sum_1(@arg2_1, @buf1) xnumel 8 r0_numel 768
  triton.launch @triton_poi_fused_fill_2(@buf2) xnumel s0
  triton.return @buf1, @buf2
}
