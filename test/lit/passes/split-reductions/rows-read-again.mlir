// RUN: mlc-opt %s --split-reductions --split-input-file | filecheck %s

// A reduction whose result a node reads together with the reduced rows stays whole from one
// output per SM (132) instead of Inductor's two: whole, the softmax's max, sum and output fuse
// into one kernel that re-reads each row from L2; split, they take five kernels.

// Softmax over 256 rows of 32768: 256 >= 132 outputs, and buf1 (the sum) reads x and buf0 (the
// max), buf2 reads x, buf0 and buf1: nothing is split.
// CHECK-LABEL: buffer.graph @softmax_256_rows
// CHECK-NEXT:    buffer.input "x"
// CHECK-NEXT:    buffer.computed "buf0" {{.*}} ranges [256, 1] reduce [32768]
// CHECK:         buffer.computed "buf1" {{.*}} ranges [256, 1] reduce [32768]
// CHECK:         buffer.computed "buf2" {{.*}} ranges [256, 32768] origins
// CHECK-NOT:     buffer.computed
buffer.graph @softmax_256_rows {
  buffer.input "x" #buffer.layout<[256, 32768], [32768, 1], f32>
  buffer.computed "buf0" #buffer.layout<[256, 1], [1, 1], f32> ranges [256, 1] reduce [32768] origins ["_softmax"] {
    %0 = buffer.load @x[r0_0 + 32768*i0] : f32
    %1 = buffer.reduce max %0 : f32 -> f32
    buffer.store @buf0[i0 + i1], %1 : f32
  }
  buffer.computed "buf1" #buffer.layout<[256, 1], [1, 1], f32> ranges [256, 1] reduce [32768] origins ["_softmax"] {
    %2 = buffer.load @x[r0_0 + 32768*i0] : f32
    %3 = buffer.load @buf0[i0] : f32
    %4 = arith.subf %2, %3 : f32
    %5 = math.exp %4 : f32
    %6 = buffer.reduce sum %5 : f32 -> f32
    buffer.store @buf1[i0 + i1], %6 : f32
  }
  buffer.computed "buf2" #buffer.layout<[256, 32768], [32768, 1], f32> ranges [256, 32768] origins ["_softmax"] {
    %7 = buffer.load @x[i1 + 32768*i0] : f32
    %8 = buffer.load @buf0[i0] : f32
    %9 = arith.subf %7, %8 : f32
    %10 = buffer.load @buf1[i0] : f32
    %11 = math.exp %9 : f32
    %12 = arith.divf %11, %10 : f32
    buffer.store @buf2[i1 + 32768*i0], %12 : f32
  }
  buffer.output @buf2
}

// -----

// The same row sum with no node reading x again: 256 < 2 * 132 outputs, split as Inductor does.
// CHECK-LABEL: buffer.graph @row_sum_256_rows
// CHECK-NEXT:    buffer.input "x"
// CHECK-NEXT:    buffer.computed "buf1" {{.*}} ranges [256, {{[0-9]+}}] reduce [{{[0-9]+}}]
// CHECK:         buffer.computed "buf0" {{.*}} ranges [256] reduce [{{[0-9]+}}]
buffer.graph @row_sum_256_rows {
  buffer.input "x" #buffer.layout<[256, 32768], [32768, 1], f32>
  buffer.computed "buf0" #buffer.layout<[256], [1], f32> ranges [256] reduce [32768] origins ["sum"] {
    %0 = buffer.load @x[r0_0 + 32768*i0] : f32
    %1 = buffer.reduce sum %0 : f32 -> f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.output @buf0
}

// -----

// Softmax over 128 rows: fewer outputs than SMs, so the max and the sum are split after all.
// CHECK-LABEL: buffer.graph @softmax_128_rows
// CHECK-NEXT:    buffer.input "x"
// CHECK-NEXT:    buffer.computed "buf3" {{.*}} ranges [128, 1, {{[0-9]+}}] reduce
// CHECK:         buffer.computed "buf0" {{.*}} ranges [128, 1] reduce [{{[0-9]+}}]
buffer.graph @softmax_128_rows {
  buffer.input "x" #buffer.layout<[128, 32768], [32768, 1], f32>
  buffer.computed "buf0" #buffer.layout<[128, 1], [1, 1], f32> ranges [128, 1] reduce [32768] origins ["_softmax"] {
    %0 = buffer.load @x[r0_0 + 32768*i0] : f32
    %1 = buffer.reduce max %0 : f32 -> f32
    buffer.store @buf0[i0 + i1], %1 : f32
  }
  buffer.computed "buf1" #buffer.layout<[128, 1], [1, 1], f32> ranges [128, 1] reduce [32768] origins ["_softmax"] {
    %2 = buffer.load @x[r0_0 + 32768*i0] : f32
    %3 = buffer.load @buf0[i0] : f32
    %4 = arith.subf %2, %3 : f32
    %5 = math.exp %4 : f32
    %6 = buffer.reduce sum %5 : f32 -> f32
    buffer.store @buf1[i0 + i1], %6 : f32
  }
  buffer.computed "buf2" #buffer.layout<[128, 32768], [32768, 1], f32> ranges [128, 32768] origins ["_softmax"] {
    %7 = buffer.load @x[i1 + 32768*i0] : f32
    %8 = buffer.load @buf0[i0] : f32
    %9 = arith.subf %7, %8 : f32
    %10 = buffer.load @buf1[i0] : f32
    %11 = math.exp %9 : f32
    %12 = arith.divf %11, %10 : f32
    buffer.store @buf2[i1 + 32768*i0], %12 : f32
  }
  buffer.output @buf2
}
