// RUN: mlc-opt %s --split-input-file --verify-diagnostics

// A computed node's reduce ranges and its buffer.reduce come together: with reduce ranges but
// no reduce op, nothing combines the values over the reduction indices (the converse, a reduce
// without reduce ranges, is in invalid.mlir).

buffer.graph @reduce_ranges_without_reduce {
  buffer.input "x" #buffer.layout<[8, 8], [8, 1], f32>
  // expected-error@+1 {{buffer.computed 'buf0': reduce ranges need a buffer.reduce to combine over them}}
  buffer.computed "buf0" #buffer.layout<[8], [1], f32> ranges [8] reduce [8] {
    %0 = buffer.load @x[r0_0 + 8*i0] : f32
    buffer.store @buf0[i0], %0 : f32
  }
  buffer.output @buf0
}
