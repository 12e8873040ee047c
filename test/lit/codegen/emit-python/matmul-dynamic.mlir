// RUN: mlc-translate --emit-python %s | filecheck %s

// A GEMM over a symbolic M (s0 rows of f16): ynumel is an argument, not a constant; the y
// programs may pass CUDA's grid limit, so the launch wraps them into z and the kernel reads
// its y program back as program_id(1) + program_id(2) * num_programs(1); indices in 64 bits.

triton.kernel @triton_mm_fused_mm_0 matmul(%in_ptr0: !triton.ptr<f16>, %in_ptr1: !triton.ptr<f16>, %out_ptr0: !triton.ptr<f16>) ynumel s0 xnumel 32 r0_numel 64 origins ["mm"] configs [#triton.config<YBLOCK = 128, XBLOCK = 32, R0_BLOCK = 64, num_warps = 8, num_stages = 3>, #triton.config<YBLOCK = 64, XBLOCK = 32, R0_BLOCK = 64, num_warps = 4, num_stages = 4>, #triton.config<YBLOCK = 128, XBLOCK = 32, R0_BLOCK = 64, num_warps = 4, num_stages = 4>, #triton.config<YBLOCK = 64, XBLOCK = 32, R0_BLOCK = 64, num_warps = 4, num_stages = 3>, #triton.config<YBLOCK = 64, XBLOCK = 32, R0_BLOCK = 32, num_warps = 4, num_stages = 2>] {
  %0 = arith.constant 0.000000e+00 : f32
  %1 = triton.rloop iter_args(%2 = %0 : f32) {
    %3 = triton.load %in_ptr0[r0_index + 64*yindex] mask ymask other 0.000000e+00 : f16
    %4 = triton.load %in_ptr1[xindex + 32*r0_index_t] : f16
    %5 = triton.dot %3, %4 into %2 "ieee" : f16, f16 -> f32
    triton.yield %5 : f32
  }
  %6 = arith.truncf %1 : f32 to f16
  triton.store %out_ptr0[xindex + 32*yindex], %6 mask ymask : f16
} attributes {index_bits = 64 : i64}
triton.wrapper @call {
  triton.size_input "arg0_1" s0
  triton.input "x" #buffer.layout<[s0, 64], [64, 1], f16>
  triton.input "w" #buffer.layout<[64, 32], [32, 1], f16>
  triton.alloc "buf0" #buffer.layout<[s0, 32], [32, 1], f16>
  triton.launch @triton_mm_fused_mm_0(@x, @w, @buf0) ynumel s0 xnumel 32 r0_numel 64
  triton.free @x, @w
  triton.return @buf0
}

// CHECK:       def triton_mm_fused_mm_0(in_ptr0, in_ptr1, out_ptr0, ynumel, xnumel, r0_numel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr):
// CHECK-NEXT:      xnumel = 32
// CHECK-NEXT:      r0_numel = 64
// CHECK-NEXT:      GROUP_Y: tl.constexpr = 8
// CHECK-NEXT:      pid = tl.program_id(0).to(tl.int64) + (tl.program_id(1) + tl.program_id(2) * tl.num_programs(1)).to(tl.int64) * tl.num_programs(0)
// CHECK:           r0_base = tl.arange(0, R0_BLOCK).to(tl.int64)
// CHECK:               tmp2 = tl.load(in_ptr0 + (r0_index + 64*yindex), ymask, other=0.0)
// CHECK-NEXT:          tmp3 = tl.load(in_ptr1 + (xindex + 32*r0_index_t))
// CHECK-NEXT:          tmp4 = tl.dot(tl.broadcast_to(tmp2, [YBLOCK, R0_BLOCK]), tl.broadcast_to(tmp3, [R0_BLOCK, XBLOCK]), _tmp1, input_precision="ieee")
// CHECK:           tl.store(out_ptr0 + (xindex + 32*yindex), tmp5, ymask)
// CHECK:       launch(triton_mm_fused_mm_0, triton_mm_fused_mm_0_configs, 32, (x, w, buf0, s0, 32, 64,), launches, ynumel=s0)
