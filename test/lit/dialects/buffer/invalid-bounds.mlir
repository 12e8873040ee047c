// RUN: mlc-opt %s --split-input-file --verify-diagnostics

// Static bounds of loads and stores whose index is not affine in the node's variables (a
// broadcast, a reshape's digits): checked with the values it takes at the first and the last
// point of the ranges, which it certainly reaches.

// A bias of 40 read as ModularIndexing(i0, 1, 50) over 400 elements reaches element 49.
buffer.graph @broadcast_past_the_end {
  buffer.input "x" #buffer.layout<[400], [1], f32>
  buffer.input "b" #buffer.layout<[40], [1], f32>
  buffer.computed "buf0" #buffer.layout<[400], [1], f32> ranges [400] {
    %0 = buffer.load @x[i0] : f32
    // expected-error@+1 {{buffer.load: index ModularIndexing(i0, 1, 50) takes values 0 to 49, outside 'b' of 40 elements}}
    %1 = buffer.load @b[ModularIndexing(i0, 1, 50)] : f32
    %2 = arith.addf %0, %1 : f32
    buffer.store @buf0[i0], %2 : f32
  }
  buffer.output @buf0
}

// -----

// A reshape's digits merge back to i0 (exact: 0 to 511), past a 256-element input.
buffer.graph @digits_past_the_end {
  buffer.input "x" #buffer.layout<[4, 64], [64, 1], f32>
  buffer.computed "buf0" #buffer.layout<[512], [1], f32> ranges [512] {
    // expected-error@+1 {{buffer.load: index 64*FloorDiv(i0, 64) + ModularIndexing(i0, 1, 64) takes values 0 to 511, outside 'x' of 256 elements}}
    %0 = buffer.load @x[64*FloorDiv(i0, 64) + ModularIndexing(i0, 1, 64)] : f32
    buffer.store @buf0[i0], %0 : f32
  }
  buffer.output @buf0
}

// -----

// Masked, a load past the end is accepted: cat and padding read only where the mask holds.
buffer.graph @masked_cat_half {
  buffer.input "x" #buffer.layout<[256], [1], f32>
  buffer.computed "buf0" #buffer.layout<[512], [1], f32> ranges [512] {
    %i = loops.index i0 : i64
    %c = arith.constant 256 : i64
    %m = arith.cmpi slt, %i, %c : i64
    %0 = buffer.load @x[64*FloorDiv(i0, 64) + ModularIndexing(i0, 1, 64)] mask %m : f32
    buffer.store @buf0[i0], %0 : f32
  }
  buffer.output @buf0
}
