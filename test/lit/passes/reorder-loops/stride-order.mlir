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

// -----

// Loads at loaded positions vote through them: here a max pool's backward gathers from a
// channels-last gradient `g` at window positions computed from i2 and i3 alone (`min(i2
// floordiv 2, 1)`), so each gather moves along i2 and i3 as g's H and W dims do, and with the
// channels-last read of `x` they outvote the row-major store: C runs innermost. (Counted as
// not moving along i2 and i3, the gathers voted both ways and the written order stayed.)

// CHECK-LABEL: buffer.graph @window_gathers
// CHECK:       } attributes {loops = "[2, 4, 4, 3] from [2, 3, 4, 4]: loops reordered to [i0, i2, i3, i1] by stride
buffer.graph @window_gathers {
  buffer.input "g" #buffer.layout<[2, 3, 2, 2], [12, 1, 6, 3], f32>
  buffer.input "x" #buffer.layout<[2, 3, 4, 4], [48, 1, 12, 3], f32>
  buffer.computed "buf0" #buffer.layout<[2, 3, 4, 4], [48, 16, 4, 1], f32> ranges [2, 3, 4, 4] origins ["max_pool2d_with_indices_backward"] {
    %h = loops.index i2 : i64
    %w = loops.index i3 : i64
    %two = arith.constant 2 : i64
    %one = arith.constant 1 : i64
    %hh = arith.floordivsi %h, %two : i64
    %ww = arith.floordivsi %w, %two : i64
    %hc = arith.minsi %hh, %one : i64
    %wc = arith.minsi %ww, %one : i64
    %ph = loops.indirect_index %hc size 2 : i64
    %pw = loops.indirect_index %wc size 2 : i64
    %0 = buffer.load @g[i1 + 3*ind1 + 6*ind0 + 12*i0] indirect(%ph, %pw) : f32
    %1 = buffer.load @g[i1 + 3*ind1 + 6*ind0 + 12*i0] indirect(%pw, %ph) : f32
    %2 = buffer.load @x[48*i0 + i1 + 12*i2 + 3*i3] : f32
    %3 = arith.addf %0, %1 : f32
    %4 = arith.addf %3, %2 : f32
    buffer.store @buf0[48*i0 + 16*i1 + 4*i2 + i3], %4 : f32
  }
  buffer.output @buf0
}
