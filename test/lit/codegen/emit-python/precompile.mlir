// RUN: mlc-translate --emit-python %s | filecheck %s

// The precompile table: each distinct static launch as Triton's compile sees its arguments (a
// buffer as its dtype, a number as itself), for `runtime.load_call` to compile every kernel in
// the background. Left out: a launch over a symbolic size, and one passing a view whose data
// starts off a 16-byte boundary (the binary would be specialized differently).

triton.kernel @double pointwise(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 100 configs [#triton.config<XBLOCK = 128, num_warps = 4, num_stages = 1>, #triton.config<XBLOCK = 64, num_warps = 2, num_stages = 1>] {
  %0 = triton.load %in_ptr0[xindex] mask xmask : f32
  %1 = arith.addf %0, %0 : f32
  triton.store %out_ptr0[xindex], %1 mask xmask : f32
}
triton.kernel @fill pointwise(%out_ptr0: !triton.ptr<bf16>) xnumel s0 configs [#triton.config<XBLOCK = 128, num_warps = 4, num_stages = 1>] {
  %0 = arith.constant 0.000000e+00 : bf16
  triton.store %out_ptr0[xindex], %0 mask xmask : bf16
}
triton.wrapper @call {
  triton.size_input "n" s0
  triton.input "a" #buffer.layout<[104], [1], f32>
  triton.view "aligned" = @a #buffer.layout<[100], [1], f32, offset 4>
  triton.view "unaligned" = @a #buffer.layout<[100], [1], f32, offset 1>
  triton.alloc "buf0" #buffer.layout<[100], [1], f32>
  triton.launch @double(@aligned, @buf0) xnumel 100
  triton.alloc "buf1" #buffer.layout<[100], [1], f32>
  triton.launch @double(@aligned, @buf1) xnumel 100
  triton.alloc "buf2" #buffer.layout<[100], [1], f32>
  triton.launch @double(@unaligned, @buf2) xnumel 100
  triton.alloc "buf3" #buffer.layout<[s0], [1], bf16>
  triton.launch @fill(@buf3) xnumel s0
  triton.return @buf0, @buf1, @buf2, @buf3
}

// CHECK:       launch(double, double_configs, 100, (unaligned, buf2, 100,), launches)
// CHECK:       launch(fill, fill_configs, s0, (buf3, s0,), launches)
// CHECK:       precompile = (
// CHECK-NEXT:      (double, double_configs, (torch.float32, torch.float32, 100,)),
// CHECK-NEXT:  )
