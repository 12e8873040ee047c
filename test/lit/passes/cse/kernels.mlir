// RUN: mlc-opt %s --split-input-file --cse | filecheck %s

// A persistent softmax as fusion assembles it: the output member loads the row again and
// recomputes exp(x - max). One load (now the row's last read: evict_first), one exp.

// CHECK-LABEL: triton.kernel @softmax
// CHECK:         %[[X:.*]] = triton.load %in_ptr0[r0_0 + 1024*x0] evict_first : f32
// CHECK-NEXT:    %[[MAX:.*]] = triton.reduce max %[[X]] : f32 -> f32
// CHECK-NEXT:    %[[D:.*]] = arith.subf %[[X]], %[[MAX]] : f32
// CHECK-NEXT:    %[[E:.*]] = math.exp %[[D]] : f32
// CHECK-NEXT:    %[[SUM:.*]] = triton.reduce sum %[[E]] : f32 -> f32
// CHECK-NEXT:    %[[Y:.*]] = arith.divf %[[E]], %[[SUM]] : f32
// CHECK-NEXT:    triton.store %out_ptr0[r0_0 + 1024*x0], %[[Y]] : f32
// CHECK-NEXT:  }
triton.kernel @softmax persistent_reduction(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 8192 r0_numel 1024 configs [#triton.config<XBLOCK = 1, num_warps = 1, num_stages = 1>] {
  triton.index x0 = xindex
  triton.index r0_0 = r0_index
  %0 = triton.load %in_ptr0[r0_0 + 1024*x0] evict_last : f32
  %1 = triton.reduce max %0 : f32 -> f32
  %2 = arith.subf %0, %1 : f32
  %3 = math.exp %2 : f32
  %4 = triton.reduce sum %3 : f32 -> f32
  %5 = triton.load %in_ptr0[r0_0 + 1024*x0] evict_first : f32
  %6 = arith.subf %5, %1 : f32
  %7 = math.exp %6 : f32
  %8 = arith.divf %7, %4 : f32
  triton.store %out_ptr0[r0_0 + 1024*x0], %8 : f32
}

// -----

// A store between two loads of one address may change what the second reads: both stay.
// Loads under different masks, or of another index, are different values.

// CHECK-LABEL: triton.kernel @store_between
// CHECK-COUNT-2: triton.load %in_out_ptr0[x0] mask xmask
// CHECK:         triton.load %in_ptr1[x0] mask xmask
// CHECK-NEXT:    triton.load %in_ptr1[1 + x0] mask xmask
// CHECK-NOT:     triton.load
triton.kernel @store_between pointwise(%in_out_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>) xnumel 1000 configs [#triton.config<XBLOCK = 1024, num_warps = 4, num_stages = 1>] {
  triton.index x0 = xindex
  %0 = triton.load %in_out_ptr0[x0] mask xmask : f32
  %1 = arith.addf %0, %0 : f32
  triton.store %in_out_ptr0[x0], %1 mask xmask : f32
  %2 = triton.load %in_out_ptr0[x0] mask xmask : f32
  %3 = triton.load %in_ptr1[x0] mask xmask : f32
  %4 = triton.load %in_ptr1[x0 + 1] mask xmask : f32
  %5 = arith.addf %2, %3 : f32
  %6 = arith.addf %5, %4 : f32
  triton.store %in_out_ptr0[x0], %6 mask xmask : f32
}

// -----

// Each loop names its own r0 symbols: a load in one loop is not the load in the next.

// CHECK-LABEL: triton.kernel @two_loops
// CHECK:         triton.rloop
// CHECK:           triton.load %in_ptr0[r0_0 + 8192*x0]
// CHECK:         triton.rloop
// CHECK:           triton.load %in_ptr0[r0_0 + 8192*x0]
triton.kernel @two_loops reduction(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 64 r0_numel 8192 configs [#triton.config<XBLOCK = 1, R0_BLOCK = 2048, num_warps = 16, num_stages = 1>] {
  triton.index x0 = xindex
  %0 = arith.constant 0.000000e+00 : f32
  %1 = triton.rloop iter_args(%2 = %0 : f32) {
    triton.index r0_0 = r0_index
    %3 = triton.load %in_ptr0[r0_0 + 8192*x0] mask r0_mask, xmask other 0.0 evict_last : f32
    %4 = triton.accumulate sum %3 into %2 mask r0_mask, xmask : f32 -> f32
    triton.yield %4 : f32
  }
  %5 = triton.reduce sum %1 : f32 -> f32
  triton.rloop {
    triton.index r0_0 = r0_index
    %6 = triton.load %in_ptr0[r0_0 + 8192*x0] mask r0_mask, xmask other 0.0 evict_first : f32
    %7 = arith.divf %6, %5 : f32
    triton.store %out_ptr0[r0_0 + 8192*x0], %7 mask r0_mask, xmask : f32
    triton.yield
  }
}
