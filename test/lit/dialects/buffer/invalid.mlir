// RUN: mlc-opt %s --split-input-file --verify-diagnostics

buffer.graph @unknown_buffer {
  // expected-error@+1 {{buffer.computed: unknown buffer 'buf9'}}
  buffer.computed "buf0" #buffer.layout<[8], [1], f32> ranges [8] {
    %0 = buffer.load @buf9[i0] : f32
    buffer.store @buf0[i0], %0 : f32
  }
  buffer.output @buf0
}

// -----

// Ranges may be fewer or more than the layout's dims (--reorder-loops merges loops), but they
// must cover the same number of elements.
buffer.graph @layout_rank {
  // expected-error@+1 {{buffer.computed 'buf0': ranges [8, 2] do not cover its layout's 1-d shape}}
  buffer.computed "buf0" #buffer.layout<[8], [1], f32> ranges [8, 2] {
    %0 = arith.constant 1.0 : f32
    buffer.store @buf0[i0], %0 : f32
  }
  buffer.output @buf0
}

// -----

buffer.graph @index_range {
  buffer.input "x" #buffer.layout<[8], [1], f32>
  buffer.computed "buf0" #buffer.layout<[8], [1], f32> ranges [8] {
    // expected-error@+1 {{index variable 'i1' is out of range here}}
    %0 = buffer.load @x[i1] : f32
    buffer.store @buf0[i0], %0 : f32
  }
  buffer.output @buf0
}

// -----

buffer.graph @stores_elsewhere {
  buffer.input "x" #buffer.layout<[8], [1], f32>
  // expected-error@+1 {{body stores to 'x'}}
  buffer.computed "buf0" #buffer.layout<[8], [1], f32> ranges [8] {
    %0 = arith.constant 1.0 : f32
    buffer.store @x[i0], %0 : f32
  }
  buffer.output @buf0
}

// -----

buffer.graph @defined_twice {
  buffer.input "x" #buffer.layout<[8], [1], f32>
  // expected-error@+1 {{buffer 'x' is defined twice}}
  buffer.input "x" #buffer.layout<[8], [1], f32>
  buffer.output @x
}

// -----

buffer.graph @unknown_output {
  buffer.input "x" #buffer.layout<[8], [1], f32>
  // expected-error@+1 {{buffer.output: unknown buffer 'y'}}
  buffer.output @y
}

// -----

buffer.graph @reduction_store_index {
  buffer.input "x" #buffer.layout<[8, 4], [4, 1], f32>
  buffer.computed "buf0" #buffer.layout<[8], [1], f32> ranges [8] reduce [4] {
    %0 = buffer.load @x[r0_0 + 4*i0] : f32
    %1 = buffer.reduce sum %0 : f32 -> f32
    // expected-error@+1 {{a reduction's store index cannot use reduction variables}}
    buffer.store @buf0[r0_0], %1 : f32
  }
  buffer.output @buf0
}

// -----

buffer.graph @reduce_without_ranges {
  buffer.input "x" #buffer.layout<[8], [1], f32>
  // expected-error@+1 {{buffer.reduce needs a computed node with reduce ranges}}
  buffer.computed "buf0" #buffer.layout<[8], [1], f32> ranges [8] {
    %0 = buffer.load @x[i0] : f32
    %1 = buffer.reduce sum %0 : f32 -> f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.output @buf0
}

// -----

buffer.graph @extern_out_is_for_matmuls {
  buffer.input "x" #buffer.layout<[8], [1], f32>
  // expected-error@+1 {{out is for mm.default, addmm.default, bmm.default, baddbmm.default, not neg.default}}
  buffer.extern "buf0" = "neg.default" {args = [@x], fresh, out} : #buffer.layout<[8], [2], f32>
  buffer.output @buf0
}

// -----

buffer.graph @extern_none_needs_no_layout {
  buffer.input "x" #buffer.layout<[8], [1], f32>
  // expected-error@+1 {{needs one layout per buffer name}}
  buffer.extern none, "buf0" = "neg.default" {args = [@x]} : #buffer.layout<[8], [1], f32>, #buffer.layout<[8], [1], f32>
  buffer.output @buf0
}

// -----

buffer.graph @extern_layouts {
  buffer.input "x" #buffer.layout<[8], [1], f32>
  // expected-error@+1 {{stride}}
  buffer.extern "buf0" = "neg.default" {args = [@x]} : #buffer.layout<[8, 2], [1], f32>
  buffer.output @buf0
}

// -----

// expected-error@+1 {{buffer.graph must end with buffer.output}}
buffer.graph @no_output {
  buffer.input "x" #buffer.layout<[8], [1], f32>
}

// -----

// An unmasked load must stay inside the buffer's storage at every point of the ranges.
buffer.graph @load_past_the_end {
  buffer.input "x" #buffer.layout<[8], [1], f32>
  buffer.computed "buf0" #buffer.layout<[16], [1], f32> ranges [16] {
    // expected-error@+1 {{buffer.load: index i0 takes values 0 to 15, outside 'x' of 8 elements}}
    %0 = buffer.load @x[i0] : f32
    buffer.store @buf0[i0], %0 : f32
  }
  buffer.output @buf0
}

// -----

buffer.graph @reduction_past_the_end {
  buffer.input "x" #buffer.layout<[8, 64], [64, 1], f32>
  buffer.computed "buf0" #buffer.layout<[8], [1], f32> ranges [8] reduce [128] {
    // expected-error@+1 {{buffer.load: index r0_0 + 64*i0 takes values 0 to 575, outside 'x' of 512 elements}}
    %0 = buffer.load @x[r0_0 + 64*i0] : f32
    %1 = buffer.reduce sum %0 : f32 -> f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.output @buf0
}

// -----

buffer.graph @store_past_the_end {
  buffer.input "x" #buffer.layout<[8], [1], f32>
  buffer.computed "buf0" #buffer.layout<[4], [1], f32> ranges [4] {
    %0 = buffer.load @x[i0] : f32
    // expected-error@+1 {{buffer.store: index 2*i0 takes values 0 to 6, outside 'buf0' of 4 elements}}
    buffer.store @buf0[2*i0], %0 : f32
  }
  buffer.output @buf0
}

// -----

buffer.graph @indirect_symbol_without_operand {
  buffer.input "x" #buffer.layout<[8], [1], f32>
  buffer.computed "buf0" #buffer.layout<[8], [1], f32> ranges [8] {
    // expected-error@+1 {{index variable 'ind0' is out of range here (available: i0)}}
    %0 = buffer.load @x[ind0] : f32
    buffer.store @buf0[i0], %0 : f32
  }
  buffer.output @buf0
}

// -----

buffer.graph @store_at_loaded_positions_in_a_computed {
  buffer.input "x" #buffer.layout<[8], [1], f32>
  buffer.input "t" #buffer.layout<[8], [1], i64>
  // expected-error@+1 {{buffer.computed 'buf0': stores at loaded positions are a buffer.scatter's}}
  buffer.computed "buf0" #buffer.layout<[8], [1], f32> ranges [8] {
    %0 = buffer.load @t[i0] : i64
    %1 = loops.indirect_index %0 size 8 : i64
    %2 = buffer.load @x[i0] : f32
    buffer.store @buf0[ind0] indirect(%1), %2 atomic_add : f32
  }
  buffer.output @buf0
}

// -----

buffer.graph @unknown_store_mode {
  buffer.input "x" #buffer.layout<[8], [1], f32>
  buffer.computed "buf0" #buffer.layout<[8], [1], f32> ranges [8] {
    %0 = buffer.load @x[i0] : f32
    buffer.store @buf0[i0], %0 : f32
  }
  buffer.scatter "buf1" #buffer.layout<[8], [1], f32> = @buf0 ranges [8] {
    %0 = buffer.load @x[i0] : f32
    // expected-error@+1 {{buffer.store: unknown store mode 'atomic_max' (known: atomic_add)}}
    "buffer.store"(%0) <{buffer = @buf1, index = #sym.expr<i0>, mode = "atomic_max"}> : (f32) -> ()
  }
  buffer.output @buf1
}

// -----

// A node's layout is a #buffer.layout; the error points at it, not past the body.
buffer.graph @layout_not_a_layout {
  buffer.input "x" #buffer.layout<[8], [1], f32>
  // expected-error@+1 {{expected a #buffer.layout, got #sym.expr<8>}}
  buffer.computed "buf0" #sym.expr<8> ranges [8] {
    %0 = buffer.load @x[i0] : f32
    buffer.store @buf0[i0], %0 : f32
  }
  buffer.output @buf0
}
