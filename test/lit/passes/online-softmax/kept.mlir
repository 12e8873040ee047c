// RUN: mlc-opt %s --split-input-file --online-softmax=explain | filecheck %s

// Loops that stay apart. Here the sum is of exp(2v - max): not the values the max was taken of.

// CHECK-LABEL: triton.kernel @scaled
// CHECK-COUNT-2: triton.rloop iter_args
// CHECK-NOT:   online_softmax
triton.kernel @scaled reduction(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 64 r0_numel 8192 configs [#triton.config<XBLOCK = 1, R0_BLOCK = 2048, num_warps = 16, num_stages = 1>] {
  triton.index x0 = xindex
  %0 = arith.constant 0xff800000 : f32
  %1 = arith.constant 0.000000e+00 : f32
  %2 = triton.rloop iter_args(%3 = %0 : f32) {
    triton.index r0_0 = r0_index
    %4 = triton.load %in_ptr0[r0_0 + 8192*x0] mask r0_mask, xmask other -inf evict_last : f32
    %5 = triton.accumulate max %4 into %3 mask r0_mask, xmask : f32 -> f32
    triton.yield %5 : f32
  }
  %6 = triton.reduce max %2 : f32 -> f32
  %7 = triton.rloop iter_args(%8 = %1 : f32) {
    triton.index r0_0 = r0_index
    %9 = triton.load %in_ptr0[r0_0 + 8192*x0] mask r0_mask, xmask other 0.000000e+00 evict_last : f32
    %twice = arith.addf %9, %9 : f32
    %10 = arith.subf %twice, %6 : f32
    %11 = math.exp %10 : f32
    %12 = triton.accumulate sum %11 into %8 mask r0_mask, xmask : f32 -> f32
    triton.yield %12 : f32
  }
  %13 = triton.reduce sum %7 : f32 -> f32
  triton.store %out_ptr0[x0], %13 mask xmask : f32
}

// -----

// The sum loop also stores (a fused epilogue of another value): it must run after the max.

// CHECK-LABEL: triton.kernel @storing
// CHECK-COUNT-2: triton.rloop iter_args
// CHECK-NOT:   online_softmax
triton.kernel @storing reduction(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>, %out_ptr1: !triton.ptr<f32>) xnumel 64 r0_numel 8192 configs [#triton.config<XBLOCK = 1, R0_BLOCK = 2048, num_warps = 16, num_stages = 1>] {
  triton.index x0 = xindex
  %0 = arith.constant 0xff800000 : f32
  %1 = arith.constant 0.000000e+00 : f32
  %2 = triton.rloop iter_args(%3 = %0 : f32) {
    triton.index r0_0 = r0_index
    %4 = triton.load %in_ptr0[r0_0 + 8192*x0] mask r0_mask, xmask other -inf evict_last : f32
    %5 = triton.accumulate max %4 into %3 mask r0_mask, xmask : f32 -> f32
    triton.yield %5 : f32
  }
  %6 = triton.reduce max %2 : f32 -> f32
  %7 = triton.rloop iter_args(%8 = %1 : f32) {
    triton.index r0_0 = r0_index
    %9 = triton.load %in_ptr0[r0_0 + 8192*x0] mask r0_mask, xmask other 0.000000e+00 evict_last : f32
    %10 = arith.subf %9, %6 : f32
    %11 = math.exp %10 : f32
    triton.store %out_ptr1[r0_0 + 8192*x0], %11 mask r0_mask, xmask : f32
    %12 = triton.accumulate sum %11 into %8 mask r0_mask, xmask : f32 -> f32
    triton.yield %12 : f32
  }
  %13 = triton.reduce sum %7 : f32 -> f32
  triton.store %out_ptr0[x0], %13 mask xmask : f32
}

// -----

// A persistent kernel holds the row in registers and reads it once: nothing to merge.

// CHECK-LABEL: triton.kernel @persistent
// CHECK:         triton.reduce max
// CHECK:         triton.reduce sum
// CHECK-NOT:     online_softmax
triton.kernel @persistent persistent_reduction(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 64 r0_numel 1024 configs [#triton.config<XBLOCK = 1, num_warps = 8, num_stages = 1>] {
  triton.index x0 = xindex
  triton.index r0_0 = r0_index
  %0 = triton.load %in_ptr0[r0_0 + 1024*x0] mask r0_mask, xmask other 0.000000e+00 : f32
  %1 = triton.reduce max %0 mask r0_mask, xmask : f32 -> f32
  %2 = arith.subf %0, %1 : f32
  %3 = math.exp %2 : f32
  %4 = triton.reduce sum %3 mask r0_mask, xmask : f32 -> f32
  triton.store %out_ptr0[x0], %4 mask xmask : f32
}
