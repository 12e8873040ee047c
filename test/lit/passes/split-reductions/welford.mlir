// RUN: mlc-opt %s --split-reductions --split-input-file | filecheck %s

// var_mean over (0, 2, 3) of [64, 64, 56, 56] (batch-norm statistics): 64 outputs of 200704
// elements each, split into 8 pieces of 25088 (which tile the reduction: no mask). The var
// node and the mean node reduce one welford, so their partials are made once: the pieces'
// means (buf2) and m2s (buf3). Then Chan's combine of equal pieces: the mean of the piece
// means (buf4), and m2 = sum of m2_k + 25088 * (mean_k - mean)^2, from which the var node's
// epilogue divides. The mean node reads the same partial means.
// CHECK:      buffer.computed "buf2" #buffer.layout<[64, 8], [1, 64], f32> ranges [64, 8] reduce [25088] origins ["var_mean"] {
// CHECK-NEXT:   %[[X:.*]] = buffer.load @x[{{.*}}]
// CHECK-NEXT:   %[[MEAN:.*]], %{{.*}}, %{{.*}} = buffer.reduce welford %[[X]] : f32 -> (f32, f32, f32)
// CHECK-NEXT:   buffer.store @buf2[i0 + 64*i1], %[[MEAN]] : f32
// CHECK-NEXT: } attributes {hint = "inner"}
// CHECK:      buffer.computed "buf3" #buffer.layout<[64, 8], [1, 64], f32> ranges [64, 8] reduce [25088] origins ["var_mean"] {
// CHECK:        %{{.*}}, %[[M2:.*]], %{{.*}} = buffer.reduce welford
// CHECK-NEXT:   buffer.store @buf3[i0 + 64*i1], %[[M2]] : f32
// CHECK:      buffer.computed "buf4" #buffer.layout<[64], [1], f32> ranges [64] reduce [8] origins ["var_mean"] {
// CHECK-NEXT:   %[[PM:.*]] = buffer.load @buf2[i0 + 64*r0_0] : f32
// CHECK-NEXT:   %[[SUM:.*]] = buffer.reduce sum %[[PM]] : f32 -> f32
// CHECK-NEXT:   %[[EIGHT:.*]] = arith.constant 8.000000e+00 : f32
// CHECK-NEXT:   %[[AVG:.*]] = arith.divf %[[SUM]], %[[EIGHT]] : f32
// CHECK-NEXT:   buffer.store @buf4[i0], %[[AVG]] : f32
// CHECK:      buffer.computed "buf0" #buffer.layout<[64], [1], f32> ranges [64] reduce [8] origins ["var_mean"] {
// CHECK-NEXT:   %[[C:.*]] = buffer.load @buf4[i0] : f32
// CHECK-NEXT:   %[[MK:.*]] = buffer.load @buf2[i0 + 64*r0_0] : f32
// CHECK-NEXT:   %[[M2K:.*]] = buffer.load @buf3[i0 + 64*r0_0] : f32
// CHECK-NEXT:   %[[D:.*]] = arith.subf %[[MK]], %[[C]] : f32
// CHECK-NEXT:   %[[DD:.*]] = arith.mulf %[[D]], %[[D]] : f32
// CHECK-NEXT:   %[[PIECE:.*]] = arith.constant 2.508800e+04 : f32
// CHECK-NEXT:   %[[W:.*]] = arith.mulf %[[DD]], %[[PIECE]] : f32
// CHECK-NEXT:   %[[T:.*]] = arith.addf %[[M2K]], %[[W]] : f32
// CHECK-NEXT:   %[[TOTAL:.*]] = buffer.reduce sum %[[T]] : f32 -> f32
// CHECK-NEXT:   %[[N:.*]] = arith.constant 2.007040e+05 : f32
// CHECK-NEXT:   %[[VAR:.*]] = arith.divf %[[TOTAL]], %[[N]] : f32
// CHECK-NEXT:   buffer.store @buf0[i0], %[[VAR]] : f32
// CHECK:      buffer.computed "buf1" #buffer.layout<[64], [1], f32> ranges [64] reduce [8] origins ["var_mean"] {
// CHECK-NEXT:   buffer.load @buf2[i0 + 64*r0_0] : f32
// CHECK-NOT:  buffer.computed
buffer.graph @batch_norm_statistics {
  buffer.input "x" #buffer.layout<[64, 64, 56, 56], [200704, 3136, 56, 1], f32>
  buffer.computed "buf0" #buffer.layout<[64], [1], f32> ranges [64] reduce [64, 56, 56] origins ["var_mean"] {
    %0 = buffer.load @x[r0_2 + 56*r0_1 + 3136*i0 + 200704*r0_0] : f32
    %1, %2, %3 = buffer.reduce welford %0 : f32 -> (f32, f32, f32)
    %4 = arith.constant 2.007040e+05 : f32
    %5 = arith.divf %2, %4 : f32
    buffer.store @buf0[i0], %5 : f32
  }
  buffer.computed "buf1" #buffer.layout<[64], [1], f32> ranges [64] reduce [64, 56, 56] origins ["var_mean"] {
    %6 = buffer.load @x[r0_2 + 56*r0_1 + 3136*i0 + 200704*r0_0] : f32
    %7, %8, %9 = buffer.reduce welford %6 : f32 -> (f32, f32, f32)
    buffer.store @buf1[i0], %7 : f32
  }
  buffer.output @buf0, @buf1
}

// -----

// 3 rows of 50021 (prime): no split of 50021 into equal pieces, so the welford stays whole.
// CHECK-LABEL: buffer.graph @untiled
// CHECK-NEXT:    buffer.input "x"
// CHECK-NEXT:    buffer.computed "buf0" {{.*}} ranges [3] reduce [50021]
// CHECK-NOT:     buffer.computed
buffer.graph @untiled {
  buffer.input "x" #buffer.layout<[3, 50021], [50021, 1], f32>
  buffer.computed "buf0" #buffer.layout<[3], [1], f32> ranges [3] reduce [50021] origins ["var"] {
    %0 = buffer.load @x[r0_0 + 50021*i0] : f32
    %1, %2, %3 = buffer.reduce welford %0 : f32 -> (f32, f32, f32)
    buffer.store @buf0[i0], %2 : f32
  }
  buffer.output @buf0
}
