// RUN: mlc-opt %s --split-input-file --online-softmax=explain | filecheck %s
// RUN: mlc-opt %s --split-input-file --online-softmax="enabled=false" | filecheck %s --check-prefix=OFF

// A looped softmax: the max loop and the loop summing exp(v - max) over the same loads become
// one loop carrying (max, sum); the output loop reads the row a second time, not a third.

// CHECK-LABEL: triton.kernel @softmax
// CHECK:         %[[NINF:.*]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[AM:.*]], %[[AS:.*]] = triton.rloop iter_args(%[[M:.*]] = %[[NINF]] : f32, %[[S:.*]] = %[[ZERO]] : f32) {
// CHECK-NEXT:      triton.index r0_0 = r0_index
// CHECK-NEXT:      %[[V:.*]] = triton.load %in_ptr0[r0_0 + 8192*x0] mask r0_mask, xmask other -inf evict_last : f32
// CHECK-NEXT:      %[[NM:.*]], %[[NS:.*]] = triton.accumulate online_softmax %[[V]] into %[[M]], %[[S]] mask r0_mask, xmask : f32 -> f32, f32
// CHECK-NEXT:      triton.yield %[[NM]], %[[NS]] : f32, f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[MAX:.*]], %[[SUM:.*]] = triton.reduce online_softmax %[[AM]], %[[AS]] : f32, f32 -> f32, f32
// CHECK-NEXT:    triton.rloop {
// CHECK:           arith.subf %{{.*}}, %[[MAX]]
// CHECK:           arith.divf %{{.*}}, %[[SUM]]
// CHECK:       } attributes {online_softmax = "a max loop and its sum(exp(v - max)) loop merged: the row is read once less"}
// OFF-LABEL:   triton.kernel @softmax
// OFF-COUNT-3: triton.rloop
// OFF-NOT:     online_softmax
triton.kernel @softmax reduction(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 64 r0_numel 8192 configs [#triton.config<XBLOCK = 1, R0_BLOCK = 2048, num_warps = 16, num_stages = 1>] {
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
    %12 = triton.accumulate sum %11 into %8 mask r0_mask, xmask : f32 -> f32
    triton.yield %12 : f32
  }
  %13 = triton.reduce sum %7 : f32 -> f32
  triton.rloop {
    triton.index r0_0 = r0_index
    %14 = triton.load %in_ptr0[r0_0 + 8192*x0] mask r0_mask, xmask other 0.000000e+00 evict_first : f32
    %15 = arith.subf %14, %6 : f32
    %16 = math.exp %15 : f32
    %17 = arith.divf %16, %13 : f32
    triton.store %out_ptr0[r0_0 + 8192*x0], %17 mask r0_mask, xmask : f32
    triton.yield
  }
}

// -----

// A float16 log_softmax: the max is taken of the converted loads, and the sum loop converts
// them again; the same ops on the same loads are the same value.

// CHECK-LABEL: triton.kernel @log_softmax_f16
// CHECK:         triton.rloop iter_args(
// CHECK:           %[[C:.*]] = arith.extf
// CHECK-NEXT:      triton.accumulate online_softmax %[[C]] into
// CHECK:         triton.reduce online_softmax
// CHECK-NOT:     triton.reduce sum
triton.kernel @log_softmax_f16 reduction(%in_ptr0: !triton.ptr<f16>, %out_ptr0: !triton.ptr<f16>) xnumel 64 r0_numel 8192 configs [#triton.config<XBLOCK = 1, R0_BLOCK = 2048, num_warps = 16, num_stages = 1>] {
  triton.index x0 = xindex
  %0 = arith.constant 0xff800000 : f32
  %1 = arith.constant 0.000000e+00 : f32
  %2 = triton.rloop iter_args(%3 = %0 : f32) {
    triton.index r0_0 = r0_index
    %4 = triton.load %in_ptr0[r0_0 + 8192*x0] mask r0_mask, xmask other -inf evict_last : f16
    %c = arith.extf %4 : f16 to f32
    %5 = triton.accumulate max %c into %3 mask r0_mask, xmask : f32 -> f32
    triton.yield %5 : f32
  }
  %6 = triton.reduce max %2 : f32 -> f32
  %7 = triton.rloop iter_args(%8 = %1 : f32) {
    triton.index r0_0 = r0_index
    %9 = triton.load %in_ptr0[r0_0 + 8192*x0] mask r0_mask, xmask other 0.000000e+00 evict_last : f16
    %c2 = arith.extf %9 : f16 to f32
    %10 = arith.subf %c2, %6 : f32
    %11 = math.exp %10 : f32
    %12 = triton.accumulate sum %11 into %8 mask r0_mask, xmask : f32 -> f32
    triton.yield %12 : f32
  }
  %13 = triton.reduce sum %7 : f32 -> f32
  triton.rloop {
    triton.index r0_0 = r0_index
    %14 = triton.load %in_ptr0[r0_0 + 8192*x0] mask r0_mask, xmask other 0.000000e+00 evict_first : f16
    %c3 = arith.extf %14 : f16 to f32
    %15 = arith.subf %c3, %6 : f32
    %16 = math.log %13 : f32
    %17 = arith.subf %15, %16 : f32
    %18 = arith.truncf %17 : f32 to f16
    triton.store %out_ptr0[r0_0 + 8192*x0], %18 mask r0_mask, xmask : f16
    triton.yield
  }
}
