// RUN: mlc-translate --emit-python %s | filecheck %s

// GEMM kernels as --convert-to-triton{tf32=true} writes them (an mm + relu of bf16 whose
// blocks divide 256 x 256 over 128, and an mm of f32 over odd sizes with an exp prologue on A),
// and their wrapper. Each program takes one [YBLOCK, XBLOCK] tile in grouped order (GROUP_Y
// rows of tiles walked down a column before the next); the K loop makes the A tile's columns
// (r0_index) and the B tile's rows (r0_index_t); tl.dot accumulates into the carried tile.

triton.kernel @triton_mm_fused_mm_relu_0 matmul(%in_ptr0: !triton.ptr<bf16>, %in_ptr1: !triton.ptr<bf16>, %out_ptr0: !triton.ptr<bf16>) ynumel 256 xnumel 256 r0_numel 128 origins ["mm", "relu"] configs [#triton.config<YBLOCK = 128, XBLOCK = 128, R0_BLOCK = 64, num_warps = 8, num_stages = 3>, #triton.config<YBLOCK = 128, XBLOCK = 256, R0_BLOCK = 64, num_warps = 8, num_stages = 3>, #triton.config<YBLOCK = 64, XBLOCK = 128, R0_BLOCK = 64, num_warps = 4, num_stages = 4>, #triton.config<YBLOCK = 128, XBLOCK = 64, R0_BLOCK = 64, num_warps = 4, num_stages = 4>, #triton.config<YBLOCK = 64, XBLOCK = 64, R0_BLOCK = 64, num_warps = 4, num_stages = 3>, #triton.config<YBLOCK = 64, XBLOCK = 64, R0_BLOCK = 32, num_warps = 4, num_stages = 2>] {
  %0 = arith.constant 0.000000e+00 : f32
  %1 = triton.rloop iter_args(%2 = %0 : f32) {
    %3 = triton.load %in_ptr0[r0_index + 128*yindex] : bf16
    %4 = triton.load %in_ptr1[xindex + 256*r0_index_t] : bf16
    %5 = triton.dot %3, %4 into %2 "ieee" : bf16, bf16 -> f32
    triton.yield %5 : f32
  }
  %6 = arith.truncf %1 : f32 to bf16
  %7 = arith.extf %6 : bf16 to f32
  %8 = arith.constant 0.000000e+00 : f32
  %9 = arith.maximumf %7, %8 : f32
  %10 = arith.truncf %9 : f32 to bf16
  triton.store %out_ptr0[xindex + 256*yindex], %10 : bf16
}
triton.kernel @triton_mm_fused_exp_mm_1 matmul(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) ynumel 37 xnumel 50 r0_numel 29 origins ["exp", "mm"] configs [#triton.config<YBLOCK = 64, XBLOCK = 64, R0_BLOCK = 32, num_warps = 8, num_stages = 3>, #triton.config<YBLOCK = 64, XBLOCK = 64, R0_BLOCK = 32, num_warps = 4, num_stages = 4>, #triton.config<YBLOCK = 64, XBLOCK = 64, R0_BLOCK = 32, num_warps = 4, num_stages = 3>, #triton.config<YBLOCK = 64, XBLOCK = 64, R0_BLOCK = 16, num_warps = 4, num_stages = 2>] {
  %0 = arith.constant 0.000000e+00 : f32
  %1 = triton.rloop iter_args(%2 = %0 : f32) {
    %3 = triton.load %in_ptr0[r0_index + 29*yindex] mask ymask, r0_mask other 0.000000e+00 : f32
    %4 = math.exp %3 : f32
    %5 = triton.load %in_ptr1[xindex + 50*r0_index_t] mask xmask, r0_mask_t other 0.000000e+00 : f32
    %6 = triton.dot %4, %5 into %2 mask r0_mask "tf32" : f32, f32 -> f32
    triton.yield %6 : f32
  }
  triton.store %out_ptr0[xindex + 50*yindex], %1 mask ymask, xmask : f32
}
triton.wrapper @call {
  triton.input "x" #buffer.layout<[256, 128], [128, 1], bf16>
  triton.input "w" #buffer.layout<[128, 256], [256, 1], bf16>
  triton.input "a" #buffer.layout<[37, 29], [29, 1], f32>
  triton.input "b" #buffer.layout<[29, 50], [50, 1], f32>
  triton.alloc "buf1" #buffer.layout<[256, 256], [256, 1], bf16>
  triton.launch @triton_mm_fused_mm_relu_0(@x, @w, @buf1) ynumel 256 xnumel 256 r0_numel 128
  triton.free @x, @w
  triton.alloc "buf2" #buffer.layout<[37, 50], [50, 1], f32>
  triton.launch @triton_mm_fused_exp_mm_1(@a, @b, @buf2) ynumel 37 xnumel 50 r0_numel 29
  triton.free @a, @b
  triton.return @buf1, @buf2
}

// The kernel takes ynumel, xnumel, r0_numel and the three blocks; the grouped program order.
// CHECK:       # origins: mm, relu
// CHECK-NEXT:  @triton.jit
// CHECK-NEXT:  def triton_mm_fused_mm_relu_0(in_ptr0, in_ptr1, out_ptr0, ynumel, xnumel, r0_numel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr):
// CHECK-NEXT:      ynumel = 256
// CHECK-NEXT:      xnumel = 256
// CHECK-NEXT:      r0_numel = 128
// CHECK-NEXT:      GROUP_Y: tl.constexpr = 8
// CHECK-NEXT:      pid = tl.program_id(0) + tl.program_id(1) * tl.num_programs(0)
// CHECK-NEXT:      y_tiles = (ynumel + YBLOCK - 1) // YBLOCK
// CHECK-NEXT:      x_tiles = (xnumel + XBLOCK - 1) // XBLOCK
// CHECK-NEXT:      first_y = (pid // (GROUP_Y * x_tiles)) * GROUP_Y
// CHECK-NEXT:      group_rows = tl.minimum(y_tiles - first_y, GROUP_Y)
// CHECK-NEXT:      yoffset = (first_y + (pid % (GROUP_Y * x_tiles)) % group_rows) * YBLOCK
// CHECK-NEXT:      yindex = yoffset + tl.arange(0, YBLOCK)[:, None]
// CHECK-NEXT:      ymask = yindex < ynumel
// CHECK-NEXT:      xoffset = ((pid % (GROUP_Y * x_tiles)) // group_rows) * XBLOCK
// CHECK-NEXT:      xindex = xoffset + tl.arange(0, XBLOCK)[None, :]
// CHECK-NEXT:      xmask = xindex < xnumel
// CHECK-NEXT:      r0_base = tl.arange(0, R0_BLOCK)
// The accumulator is an f32 [YBLOCK, XBLOCK] tile carried through the K loop.
// CHECK-NEXT:      tmp0 = tl.full([1, 1], 0.0, tl.float32)
// CHECK-NEXT:      _tmp1 = tl.broadcast_to(tmp0, [YBLOCK, XBLOCK])
// CHECK-NEXT:      for r0_offset in range(0, r0_numel, R0_BLOCK):
// CHECK-NEXT:          r0_index = r0_offset + r0_base[None, :]
// CHECK-NEXT:          r0_mask = r0_index < r0_numel
// CHECK-NEXT:          r0_index_t = r0_offset + r0_base[:, None]
// CHECK-NEXT:          r0_mask_t = r0_index_t < r0_numel
// Unmasked loads (every block divides), each broadcast to its side's tile in the dot.
// CHECK-NEXT:          tmp2 = tl.load(in_ptr0 + (r0_index + 128*yindex))
// CHECK-NEXT:          tmp3 = tl.load(in_ptr1 + (xindex + 256*r0_index_t))
// CHECK-NEXT:          tmp4 = tl.dot(tl.broadcast_to(tmp2, [YBLOCK, R0_BLOCK]), tl.broadcast_to(tmp3, [R0_BLOCK, XBLOCK]), _tmp1, input_precision="ieee")
// CHECK-NEXT:          _tmp1 = tmp4
// The epilogue after the loop: mm's rounding to bf16, the relu, the store.
// CHECK-NEXT:      tmp5 = to_bfloat16(_tmp1)
// CHECK-NEXT:      tmp6 = tmp5.to(tl.float32)
// CHECK-NEXT:      tmp7 = 0.0
// CHECK-NEXT:      tmp8 = maximum(tmp6, tmp7)
// CHECK-NEXT:      tmp9 = to_bfloat16(tmp8)
// CHECK-NEXT:      tl.store(out_ptr0 + (xindex + 256*yindex), tmp9)
// CHECK:       triton_mm_fused_mm_relu_0_configs = (dict(YBLOCK=128, XBLOCK=128, R0_BLOCK=64, num_warps=8, num_stages=3), dict(YBLOCK=128, XBLOCK=256, R0_BLOCK=64, num_warps=8, num_stages=3), dict(YBLOCK=64, XBLOCK=128, R0_BLOCK=64, num_warps=4, num_stages=4), dict(YBLOCK=128, XBLOCK=64, R0_BLOCK=64, num_warps=4, num_stages=4), dict(YBLOCK=64, XBLOCK=64, R0_BLOCK=64, num_warps=4, num_stages=3), dict(YBLOCK=64, XBLOCK=64, R0_BLOCK=32, num_warps=4, num_stages=2))

// Odd sizes: masked loads, the dot zeroes exp's lanes past K (tl.where on r0_mask), TF32, a masked store.
// CHECK:       def triton_mm_fused_exp_mm_1(
// CHECK:               tmp2 = tl.load(in_ptr0 + (r0_index + 29*yindex), ymask & r0_mask, other=0.0)
// CHECK-NEXT:          tmp3 = tl.math.exp(tmp2)
// CHECK-NEXT:          tmp4 = tl.load(in_ptr1 + (xindex + 50*r0_index_t), xmask & r0_mask_t, other=0.0)
// CHECK-NEXT:          tmp5 = tl.dot(tl.where(r0_mask, tl.broadcast_to(tmp3, [YBLOCK, R0_BLOCK]), 0.0), tl.broadcast_to(tmp4, [R0_BLOCK, XBLOCK]), _tmp1, input_precision="tf32")
// CHECK-NEXT:          _tmp1 = tmp5
// CHECK-NEXT:      tl.store(out_ptr0 + (xindex + 50*yindex), _tmp1, ymask & xmask)
// CHECK:       triton_mm_fused_exp_mm_1_configs = (dict(YBLOCK=64, XBLOCK=64, R0_BLOCK=32, num_warps=8, num_stages=3), dict(YBLOCK=64, XBLOCK=64, R0_BLOCK=32, num_warps=4, num_stages=4), dict(YBLOCK=64, XBLOCK=64, R0_BLOCK=32, num_warps=4, num_stages=3), dict(YBLOCK=64, XBLOCK=64, R0_BLOCK=16, num_warps=4, num_stages=2))

// The launches: N as the x extent, the kernel's arguments with ynumel, xnumel, r0_numel, and ynumel.
// CHECK:       launch(triton_mm_fused_mm_relu_0, triton_mm_fused_mm_relu_0_configs, 256, (x, w, buf1, 256, 256, 128,), launches, ynumel=256)
// CHECK:       launch(triton_mm_fused_exp_mm_1, triton_mm_fused_exp_mm_1_configs, 50, (a, b, buf2, 37, 50, 29,), launches, ynumel=37)
