// RUN: mlc-opt %s --split-input-file --verify-diagnostics

// Static bounds of kernel accesses. Each case is convert-to-triton's output for a small aten
// graph (a bias add over [8, 50], a row sum over [4, 2000]) with one size or index edited.
// A launch runs xindex over [0, xnumel) and r0_index over [0, r0_numel); the values an index
// takes there must stay inside the storage of the buffer the launch gives its pointer.

// The output allocation cut to [4, 50]: the kernel stores 400 elements into 200.
triton.kernel @triton_poi_fused_add_0 pointwise(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 400 origins ["add"] configs [#triton.config<XBLOCK = 256, num_warps = 4, num_stages = 1>, #triton.config<XBLOCK = 128, num_warps = 4, num_stages = 1>] {
  triton.index x0 = ModularIndexing(xindex, 1, 50)
  %0 = triton.load %in_ptr0[xindex] mask xmask : f32
  %1 = triton.load %in_ptr1[x0] mask xmask evict_last : f32
  %2 = arith.addf %0, %1 : f32
  triton.store %out_ptr0[xindex], %2 mask xmask : f32
}
triton.wrapper @call {
  triton.input "x" #buffer.layout<[8, 50], [50, 1], f32>
  triton.input "b" #buffer.layout<[50], [1], f32>
  triton.alloc "buf0" #buffer.layout<[4, 50], [50, 1], f32>
  // expected-error@+1 {{triton.launch: @triton_poi_fused_add_0 stores %out_ptr0[xindex] at 0 to 399, past the 200 elements of 'buf0'}}
  triton.launch @triton_poi_fused_add_0(@x, @b, @buf0) xnumel 400
  triton.return @buf0
}

// -----

// The bias declared [40]: the broadcast load at ModularIndexing(xindex, 1, 50) reads 50.
triton.kernel @triton_poi_fused_add_0 pointwise(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 400 origins ["add"] configs [#triton.config<XBLOCK = 256, num_warps = 4, num_stages = 1>, #triton.config<XBLOCK = 128, num_warps = 4, num_stages = 1>] {
  triton.index x0 = ModularIndexing(xindex, 1, 50)
  %0 = triton.load %in_ptr0[xindex] mask xmask : f32
  %1 = triton.load %in_ptr1[x0] mask xmask evict_last : f32
  %2 = arith.addf %0, %1 : f32
  triton.store %out_ptr0[xindex], %2 mask xmask : f32
}
triton.wrapper @call {
  triton.input "x" #buffer.layout<[8, 50], [50, 1], f32>
  triton.input "b" #buffer.layout<[40], [1], f32>
  triton.alloc "buf0" #buffer.layout<[8, 50], [50, 1], f32>
  // expected-error@+1 {{triton.launch: @triton_poi_fused_add_0 loads %in_ptr1[x0] at 0 to 49, past the 40 elements of 'b'}}
  triton.launch @triton_poi_fused_add_0(@x, @b, @buf0) xnumel 400
  triton.return @buf0
}

// -----

// A looped reduction over an input declared [4, 1000]: its rloop reads rows of 2000.
triton.kernel @triton_red_fused_sum_0 reduction(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 4 r0_numel 2000 origins ["sum"] configs [#triton.config<XBLOCK = 2, R0_BLOCK = 2048, num_warps = 16, num_stages = 1>] {
  triton.index x0 = xindex
  %0 = arith.constant 0.000000e+00 : f32
  %1 = triton.rloop iter_args(%2 = %0 : f32) {
    triton.index r0_0 = r0_index
    %3 = triton.load %in_ptr0[r0_0 + 2000*x0] mask r0_mask other 0.000000e+00 evict_first : f32
    %4 = triton.accumulate sum %3 into %2 mask r0_mask : f32 -> f32
    triton.yield %4 : f32
  }
  %5 = triton.reduce sum %1 : f32 -> f32
  triton.store %out_ptr0[x0], %5 : f32
}
triton.wrapper @call {
  triton.input "x" #buffer.layout<[4, 1000], [1000, 1], f32>
  triton.alloc "buf0" #buffer.layout<[4], [1], f32>
  // expected-error@+1 {{triton.launch: @triton_red_fused_sum_0 loads %in_ptr0[r0_0 + 2000*x0] at 0 to 7999, past the 4000 elements of 'x'}}
  triton.launch @triton_red_fused_sum_0(@x, @buf0) xnumel 4 r0_numel 2000
  triton.return @buf0
}

// -----

// A load one element early: at xindex 0 it reads before the start of any buffer (a kernel's
// pointers point at the start of their storage; a view is read through its root).
triton.kernel @triton_poi_fused_add_0 pointwise(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 400 {
  triton.index x0 = ModularIndexing(xindex, 1, 50)
  // expected-error@+1 {{triton.load: loads %in_ptr0[xindex - 1] at -1 to 398, before the start of its storage}}
  %0 = triton.load %in_ptr0[xindex - 1] mask xmask : f32
  %1 = triton.load %in_ptr1[x0] mask xmask evict_last : f32
  %2 = arith.addf %0, %1 : f32
  triton.store %out_ptr0[xindex], %2 mask xmask : f32
}

// -----

// Not certainly outside, so accepted: a load under a mask value (a cat's second half, read
// only where %m holds), and a kernel over a symbolic xnumel with allocations of that size.
triton.kernel @triton_poi_fused_cat_0 pointwise(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 400 {
  %i = triton.expr xindex : i64
  %c = arith.constant 200 : i64
  %m = arith.cmpi sge, %i, %c : i64
  %0 = triton.load %in_ptr0[xindex - 200] mask xmask, %m other 0.000000e+00 : f32
  triton.store %out_ptr0[xindex], %0 mask xmask : f32
}
triton.kernel @triton_poi_fused_add_1 pointwise(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 50*s0 {
  triton.index x0 = ModularIndexing(xindex, 1, 50)
  %0 = triton.load %in_ptr0[xindex] mask xmask : f32
  %1 = triton.load %in_ptr1[x0] mask xmask evict_last : f32
  %2 = arith.addf %0, %1 : f32
  triton.store %out_ptr0[xindex], %2 mask xmask : f32
}
triton.wrapper @call {
  triton.size_input "n" s0
  triton.input "x" #buffer.layout<[200], [1], f32>
  triton.input "y" #buffer.layout<[s0, 50], [50, 1], f32>
  triton.input "b" #buffer.layout<[50], [1], f32>
  triton.alloc "buf0" #buffer.layout<[400], [1], f32>
  triton.launch @triton_poi_fused_cat_0(@x, @buf0) xnumel 400
  triton.alloc "buf1" #buffer.layout<[s0, 50], [50, 1], f32>
  triton.launch @triton_poi_fused_add_1(@y, @b, @buf1) xnumel 50*s0
  triton.return @buf0, @buf1
}
