// RUN: mlc-translate --emit-python %s | filecheck %s

// Seed 000's gelu kernel and its wrapper, as --convert-to-triton writes them.

triton.kernel @triton_poi_fused_gelu_0 pointwise(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 512 origins ["gelu"] configs [#triton.config<XBLOCK = 256, num_warps = 4, num_stages = 1>, #triton.config<XBLOCK = 128, num_warps = 4, num_stages = 1>] {
  triton.index x0 = ModularIndexing(xindex, 1, 64)
  triton.index x1 = FloorDiv(xindex, 64)
  %0 = triton.load %in_ptr0[x0 + 64*x1] mask xmask : f32
  %1 = arith.constant 5.000000e-01 : f32
  %2 = arith.mulf %0, %1 : f32
  %3 = arith.constant 0.70710678118654757 : f32
  %4 = arith.mulf %0, %3 : f32
  %5 = math.erf %4 : f32
  %6 = arith.constant 1.000000e+00 : f32
  %7 = arith.addf %5, %6 : f32
  %8 = arith.mulf %2, %7 : f32
  triton.store %out_ptr0[x0 + 64*x1], %8 mask xmask : f32
}
triton.wrapper @call {
  triton.input "arg0_1" #buffer.layout<[8, 64], [64, 1], f32>
  triton.alloc "buf0" #buffer.layout<[8, 64], [64, 1], f32>
  triton.launch @triton_poi_fused_gelu_0(@arg0_1, @buf0) xnumel 512
  triton.return @buf0
}

// CHECK:       import triton.language as tl
// CHECK:       @triton.jit
// CHECK-NEXT:  def triton_poi_fused_gelu_0(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
// CHECK-NEXT:      xnumel = 512
// CHECK-NEXT:      xoffset = tl.program_id(0) * XBLOCK
// CHECK-NEXT:      xindex = xoffset + tl.arange(0, XBLOCK)[:]
// CHECK-NEXT:      xmask = xindex < xnumel
// CHECK-NEXT:      x0 = (xindex % 64)
// CHECK-NEXT:      x1 = (xindex // 64)
// CHECK-NEXT:      tmp0 = tl.load(in_ptr0 + (x0 + 64*x1), xmask)
// CHECK-NEXT:      tmp1 = 0.5
// CHECK-NEXT:      tmp2 = tmp0 * tmp1
// CHECK-NEXT:      tmp3 = 0.70710676908493
// CHECK-NEXT:      tmp4 = tmp0 * tmp3
// CHECK-NEXT:      tmp5 = tl.math.erf(tmp4)
// CHECK-NEXT:      tmp6 = 1.0
// CHECK-NEXT:      tmp7 = tmp5 + tmp6
// CHECK-NEXT:      tmp8 = tmp2 * tmp7
// CHECK-NEXT:      tl.store(out_ptr0 + (x0 + 64*x1), tmp8, xmask)
// The launch configs, the heuristics' preferred first; `launch` autotunes among them on a GPU.
// CHECK:       triton_poi_fused_gelu_0_configs = (dict(XBLOCK=256, num_warps=4, num_stages=1), dict(XBLOCK=128, num_warps=4, num_stages=1))
// CHECK:       def call(args):
// CHECK-NEXT:      arg0_1, = args
// CHECK-NEXT:      args.clear()
// The device and stream, read once per call, that every launch goes on.
// CHECK-NEXT:      launches = launch_context()
// CHECK-NEXT:      assert_size_stride(arg0_1, (8, 64), (64, 1))
// CHECK-NEXT:      buf0 = empty_on_device((8, 64), (64, 1), torch.float32)
// CHECK-NEXT:      launch(triton_poi_fused_gelu_0, triton_poi_fused_gelu_0_configs, 512, (arg0_1, buf0, 512,), launches)
// CHECK-NEXT:      return (buf0,)
// What the launch passes the kernel as Triton's compile sees it (buffers as dtypes), for the
// kernels to compile in the background before the first call reaches them.
// CHECK:       precompile = (
// CHECK-NEXT:      (triton_poi_fused_gelu_0, triton_poi_fused_gelu_0_configs, (torch.float32, torch.float32, 512,)),
// CHECK-NEXT:  )
