// RUN: mlc-opt %s --split-input-file --reorder-loops=explain | filecheck %s

// A channels-last add of a per-channel bias: the store and the load of x walk memory as
// [N, H, W, C], so the loops run in that order, then N, H, W merge; the bias read (a
// broadcast along N, H, W) has no say in the order but keeps C apart.

// CHECK-LABEL: buffer.graph @channels_last
// CHECK:       ranges [40, 3]
// CHECK-NEXT:    %{{.*}} = buffer.load @x[i1 + 3*i0] : f32
// CHECK-NEXT:    %{{.*}} = buffer.load @b[i1] : f32
// CHECK:         buffer.store @buf0[i1 + 3*i0]
// CHECK:       } attributes {loops = "[40, 3] from [2, 3, 4, 5]: loops reordered to [i0, i2, i3, i1] by stride (then renamed i0, i1, ...); i2 | i3 kept apart: @b[i3] steps 0 along i2, not 3"}
buffer.graph @channels_last {
  buffer.input "x" #buffer.layout<[2, 3, 4, 5], [60, 1, 15, 3], f32>
  buffer.input "b" #buffer.layout<[3], [1], f32>
  buffer.computed "buf0" #buffer.layout<[2, 3, 4, 5], [60, 1, 15, 3], f32> ranges [2, 3, 4, 5] origins ["add"] {
    %0 = buffer.load @x[60*i0 + i1 + 15*i2 + 3*i3] : f32
    %1 = buffer.load @b[i1] : f32
    %2 = arith.addf %0, %1 : f32
    buffer.store @buf0[60*i0 + i1 + 15*i2 + 3*i3], %2 : f32
  }
  buffer.output @buf0
}

// -----

// A transpose: the store walks i1 fastest, the load i0. One vote each: the order stays
// (convert-to-triton tiles such a kernel).

// CHECK-LABEL: buffer.graph @transpose
// CHECK:       ranges [8, 16]
// CHECK:       } attributes {loops = "[8, 16] from [8, 16]: i0 | i1 kept apart: @x[i0 + 8*i1] steps 1 along i0, not 128"}
buffer.graph @transpose {
  buffer.input "x" #buffer.layout<[16, 8], [8, 1], f32>
  buffer.computed "buf0" #buffer.layout<[8, 16], [16, 1], f32> ranges [8, 16] origins ["t"] {
    %0 = buffer.load @x[i0 + 8*i1] : f32
    buffer.store @buf0[16*i0 + i1], %0 : f32
  }
  buffer.output @buf0
}

// -----

// x.t() + y stored column-major (eager's strides follow the first operand): the store and
// the load of x step 1 along i0, y along i1. Two votes to one put i0 innermost, so that the
// kernel's x axis follows two of the three accesses.

// CHECK-LABEL: buffer.graph @transpose_add
// CHECK:       ranges [16, 8]
// CHECK-NEXT:    %{{.*}} = buffer.load @x[i1 + 8*i0] : f32
// CHECK-NEXT:    %{{.*}} = buffer.load @y[i0 + 16*i1] : f32
// CHECK:         buffer.store @buf0[i1 + 8*i0]
// CHECK:       } attributes {loops = "[16, 8] from [8, 16]: loops reordered to [i1, i0] by stride (then renamed i0, i1, ...); i0 | i1 kept apart: @y[i0 + 16*i1] steps 1 along i0, not 128"}
buffer.graph @transpose_add {
  buffer.input "x" #buffer.layout<[16, 8], [8, 1], f32>
  buffer.input "y" #buffer.layout<[8, 16], [16, 1], f32>
  buffer.computed "buf0" #buffer.layout<[8, 16], [1, 8], f32> ranges [8, 16] origins ["add"] {
    %0 = buffer.load @x[i0 + 8*i1] : f32
    %1 = buffer.load @y[16*i0 + i1] : f32
    %2 = arith.addf %0, %1 : f32
    buffer.store @buf0[i0 + 8*i1], %2 : f32
  }
  buffer.output @buf0
}

// -----

// A reduction's pointwise loops are ordered the same way (its reduction loops keep theirs): a
// column sum's split partials over [columns, split], stored split-major, run as [split,
// columns], so that neighbouring lanes of the kernel read and write neighbouring columns.
// CHECK-LABEL: buffer.graph @column_partials
// CHECK:         buffer.computed "buf1" #buffer.layout<[4096, 32], [1, 4096], f32> ranges [32, 4096] reduce [256] origins ["sum"] {
// CHECK-NEXT:      buffer.load @x[i1 + 4096*r0_0 + 1048576*i0] : f32
// CHECK-NEXT:      buffer.reduce sum
// CHECK-NEXT:      buffer.store @buf1[i1 + 4096*i0]
// CHECK-NEXT:    } attributes {loops = "[32, 4096] reduce [256] from [4096, 32] reduce [256]: loops reordered to [i1, i0] by stride (then renamed i0, i1, ...); {{.*}}"}
buffer.graph @column_partials {
  buffer.input "x" #buffer.layout<[8192, 4096], [4096, 1], f32>
  buffer.computed "buf1" #buffer.layout<[4096, 32], [1, 4096], f32> ranges [4096, 32] reduce [256] origins ["sum"] {
    %0 = buffer.load @x[i0 + 4096*r0_0 + 1048576*i1] : f32
    %1 = buffer.reduce sum %0 : f32 -> f32
    buffer.store @buf1[i0 + 4096*i1], %1 : f32
  }
  buffer.output @buf1
}
