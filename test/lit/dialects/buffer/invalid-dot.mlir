// RUN: mlc-opt %s --split-input-file --verify-diagnostics

// What the verifier refuses of a buffer.dot (dot.mlir: what it accepts).

// A dot in a computed node without reduce ranges: no K to sum over (the node's check names it).
buffer.graph @no_reduce_ranges {
  buffer.input "x" #buffer.layout<[4, 8], [8, 1], f32>
  buffer.input "w" #buffer.layout<[8, 4], [4, 1], f32>
  // expected-error@+1 {{buffer.computed: a buffer.dot needs ranges [M, N] or [B, M, N] over [K], got 2 over 0}}
  buffer.computed "buf0" #buffer.layout<[4, 4], [4, 1], f32> ranges [4, 4] {
    %0 = buffer.load @x[8*i0] : f32
    %1 = buffer.load @w[i1] : f32
    %2 = buffer.dot %0, %1 : f32, f32 -> f32
    buffer.store @buf0[i1 + 4*i0], %2 : f32
  }
  buffer.output @buf0
}

// -----

// A dot in a buffer.scatter (no reduce ranges there either): the dot's own check.
buffer.graph @dot_in_scatter {
  buffer.input "x" #buffer.layout<[4, 4], [4, 1], f32>
  buffer.computed "buf0" #buffer.layout<[4, 4], [4, 1], f32> ranges [4, 4] {
    %0 = arith.constant 0.0 : f32
    buffer.store @buf0[i1 + 4*i0], %0 : f32
  }
  buffer.scatter "buf1" #buffer.layout<[4, 4], [4, 1], f32> = @buf0 ranges [4, 4] {
    %0 = buffer.load @x[i1 + 4*i0] : f32
    // expected-error@+1 {{buffer.dot needs a computed node with reduce ranges}}
    %1 = buffer.dot %0, %0 : f32, f32 -> f32
    buffer.store @buf1[i1 + 4*i0], %1 atomic_add : f32
  }
  buffer.output @buf1
}

// -----

// The lhs (a tile of A) may not vary with i1.
buffer.graph @lhs_varies_with_i1 {
  buffer.input "x" #buffer.layout<[4, 8], [8, 1], f32>
  buffer.input "w" #buffer.layout<[8, 4], [4, 1], f32>
  // expected-error@+1 {{buffer.dot: its lhs varies with i1, which a tile of A does not walk}}
  buffer.computed "buf0" #buffer.layout<[4, 4], [4, 1], f32> ranges [4, 4] reduce [8] {
    %0 = buffer.load @x[r0_0 + 8*i1] : f32
    %1 = buffer.load @w[i1 + 4*r0_0] : f32
    %2 = buffer.dot %0, %1 : f32, f32 -> f32
    buffer.store @buf0[i1 + 4*i0], %2 : f32
  }
  buffer.output @buf0
}

// -----

// The rhs (a tile of B) may not vary with i0.
buffer.graph @rhs_varies_with_i0 {
  buffer.input "x" #buffer.layout<[4, 8], [8, 1], f32>
  buffer.input "w" #buffer.layout<[8, 4], [4, 1], f32>
  // expected-error@+1 {{buffer.dot: its rhs varies with i0, which a tile of B does not walk}}
  buffer.computed "buf0" #buffer.layout<[4, 4], [4, 1], f32> ranges [4, 4] reduce [8] {
    %0 = buffer.load @x[r0_0 + 8*i0] : f32
    %1 = buffer.load @w[i0 + 4*r0_0] : f32
    %2 = buffer.dot %0, %1 : f32, f32 -> f32
    buffer.store @buf0[i1 + 4*i0], %2 : f32
  }
  buffer.output @buf0
}

// -----

// A contraction has no buffer.reduce beside its dot.
buffer.graph @dot_and_reduce {
  buffer.input "x" #buffer.layout<[4, 8], [8, 1], f32>
  buffer.input "w" #buffer.layout<[8, 4], [4, 1], f32>
  // expected-error@+1 {{buffer.computed 'buf0': a contraction has one buffer.dot and no buffer.reduce}}
  buffer.computed "buf0" #buffer.layout<[4, 4], [4, 1], f32> ranges [4, 4] reduce [8] {
    %0 = buffer.load @x[r0_0 + 8*i0] : f32
    %1 = buffer.load @w[i1 + 4*r0_0] : f32
    %2 = buffer.dot %0, %1 : f32, f32 -> f32
    %3 = buffer.reduce sum %0 : f32 -> f32
    %4 = arith.addf %2, %3 : f32
    buffer.store @buf0[i1 + 4*i0], %4 : f32
  }
  buffer.output @buf0
}

// -----

// A contraction's M and N are two ranges, not one merged range.
buffer.graph @ranges_merged {
  buffer.input "x" #buffer.layout<[4, 8], [8, 1], f32>
  buffer.input "w" #buffer.layout<[8, 4], [4, 1], f32>
  // expected-error@+1 {{buffer.computed: a buffer.dot needs ranges [M, N] or [B, M, N] over [K], got 1 over 1}}
  buffer.computed "buf0" #buffer.layout<[4, 4], [4, 1], f32> ranges [16] reduce [8] {
    %0 = buffer.load @x[r0_0 + 8*FloorDiv(i0, 4)] : f32
    %1 = buffer.load @w[ModularIndexing(i0, 1, 4) + 4*r0_0] : f32
    %2 = buffer.dot %0, %1 : f32, f32 -> f32
    buffer.store @buf0[i0], %2 : f32
  }
  buffer.output @buf0
}

// -----

// A scatter in a fused group without a contraction: it runs alone, or as a GEMM's epilogue.
buffer.graph @scatter_fused_without_a_contraction {
  buffer.input "i" #buffer.layout<[30], [1], i64>
  buffer.input "v" #buffer.layout<[30, 8], [8, 1], f32>
  buffer.input "buf0" #buffer.layout<[20, 8], [8, 1], f32>
  // expected-error@+1 {{buffer.fused: a buffer.scatter fuses only as a contraction's epilogue, and this group holds none}}
  buffer.fused {
    buffer.scatter "buf1" #buffer.layout<[20, 8], [8, 1], f32> = @buf0 ranges [30, 8] {
      %1 = buffer.load @i[i0] : i64
      %2 = loops.indirect_index %1 size 20 : i64
      %3 = buffer.load @v[i1 + 8*i0] : f32
      buffer.store @buf1[i1 + 8*ind0] indirect(%2), %3 atomic_add : f32
    }
  }
  buffer.output @buf1
}
