// RUN: mlc-translate --emit-python %s | filecheck %s

// Kernels with `index_bits = 64` (--convert-to-triton: a position could reach 2^31) widen their
// program ids and aranges, so every index built on them is int64. Static numels are literals
// in the body, as Inductor writes them (Triton folds the masks and the loop's trip count).

// CHECK-LABEL: def triton_poi_fused_add_0(
// CHECK-NEXT:    xnumel = 2147483648
// CHECK-NEXT:    xoffset = tl.program_id(0).to(tl.int64) * XBLOCK
// CHECK-NEXT:    xindex = xoffset + tl.arange(0, XBLOCK)[:]
// CHECK-LABEL: def triton_red_fused_sum_0(
// CHECK-NEXT:    xnumel = 2
// CHECK-NEXT:    r0_numel = 1073741825
// CHECK-NEXT:    xoffset = tl.program_id(0).to(tl.int64) * XBLOCK
// CHECK:         r0_base = tl.arange(0, R0_BLOCK)[None, :].to(tl.int64)
// CHECK:         for r0_offset in range(0, r0_numel, R0_BLOCK):
// CHECK-NEXT:      r0_index = r0_offset + r0_base
triton.kernel @triton_poi_fused_add_0 pointwise(%in_ptr0: !triton.ptr<i8>, %out_ptr0: !triton.ptr<i8>) xnumel 2147483648 origins ["add"] configs [#triton.config<XBLOCK = 1024, num_warps = 4, num_stages = 1>, #triton.config<XBLOCK = 512, num_warps = 8, num_stages = 1>] {
  %0 = triton.load %in_ptr0[xindex] : i8
  %1 = arith.addi %0, %0 : i8
  triton.store %out_ptr0[xindex], %1 : i8
} attributes {index_bits = 64 : i64}
triton.kernel @triton_red_fused_sum_0 reduction(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 2 r0_numel 1073741825 origins ["sum"] configs [#triton.config<XBLOCK = 1, R0_BLOCK = 2048, num_warps = 16, num_stages = 1>] {
  triton.index x0 = xindex
  %0 = arith.constant 0.000000e+00 : f32
  %1 = triton.rloop iter_args(%2 = %0 : f32) {
    triton.index r0_0 = r0_index
    %3 = triton.load %in_ptr0[r0_0 + 1073741825*x0] mask r0_mask other 0.000000e+00 evict_first : f32
    %4 = triton.accumulate sum %3 into %2 mask r0_mask : f32 -> f32
    triton.yield %4 : f32
  }
  %5 = triton.reduce sum %1 : f32 -> f32
  triton.store %out_ptr0[x0], %5 : f32
} attributes {index_bits = 64 : i64}
triton.wrapper @call {
  triton.input "x" #buffer.layout<[2, 1073741825], [1073741825, 1], f32>
  triton.alloc "buf0" #buffer.layout<[2], [1], f32>
  triton.launch @triton_red_fused_sum_0(@x, @buf0) xnumel 2 r0_numel 1073741825
  triton.return @buf0
}
