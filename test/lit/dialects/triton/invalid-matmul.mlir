// RUN: mlc-opt %s --split-input-file --verify-diagnostics

// What the verifier refuses of a matmul kernel and its triton.dot (matmul.mlir: what it accepts).

// A triton.dot in a looped reduction kernel: only a matmul kernel has A and B tiles.
triton.kernel @k reduction(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>) xnumel 8 r0_numel 9000 {
  %0 = arith.constant 0.0 : f32
  %1 = triton.rloop iter_args(%a = %0 : f32) {
    %2 = triton.load %in_ptr0[r0_index] mask r0_mask other 0.0 : f32
    %3 = triton.load %in_ptr1[r0_index] mask r0_mask other 0.0 : f32
    // expected-error@+1 {{triton.dot must be inside the triton.rloop of a matmul kernel}}
    %4 = triton.dot %2, %3 into %a "ieee" : f32, f32 -> f32
    triton.yield %4 : f32
  }
}

// -----

// A triton.dot after the rloop: a K step belongs in the loop over K.
triton.kernel @k matmul(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>) ynumel 16 xnumel 16 r0_numel 16 {
  %0 = arith.constant 0.0 : f32
  %1 = triton.rloop iter_args(%a = %0 : f32) {
    triton.yield %a : f32
  }
  %2 = triton.load %in_ptr0[yindex] : f32
  %3 = triton.load %in_ptr1[xindex] : f32
  // expected-error@+1 {{triton.dot must be inside the triton.rloop of a matmul kernel}}
  %4 = triton.dot %2, %3 into %1 "ieee" : f32, f32 -> f32
}

// -----

// A matmul kernel tiles M as ynumel: without it there are no rows.
// expected-error@+1 {{triton.kernel: a matmul kernel needs ynumel}}
triton.kernel @k matmul(%in_ptr0: !triton.ptr<f32>) xnumel 16 r0_numel 16 {
}

// -----

// A matmul config sets YBLOCK too (here only XBLOCK and R0_BLOCK).
// expected-error@+1 {{triton.kernel: a matmul kernel's configs set R0_BLOCK and XBLOCK and YBLOCK, got #triton.config<XBLOCK = 16, R0_BLOCK = 16, num_warps = 4, num_stages = 2>}}
triton.kernel @k matmul(%in_ptr0: !triton.ptr<f32>) ynumel 16 xnumel 16 r0_numel 16 configs [#triton.config<XBLOCK = 16, R0_BLOCK = 16, num_warps = 4, num_stages = 2>] {
}

// -----

// The precision is ieee or tf32.
triton.kernel @k matmul(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>) ynumel 16 xnumel 16 r0_numel 16 {
  %0 = arith.constant 0.0 : f32
  %1 = triton.rloop iter_args(%a = %0 : f32) {
    %2 = triton.load %in_ptr0[r0_index + 16*yindex] : f32
    %3 = triton.load %in_ptr1[xindex + 16*r0_index_t] : f32
    // expected-error@+1 {{triton.dot: precision is ieee or tf32, got 'fp8'}}
    %4 = triton.dot %2, %3 into %a "fp8" : f32, f32 -> f32
    triton.yield %4 : f32
  }
}

// -----

// The operands of a dot have one type.
triton.kernel @k matmul(%in_ptr0: !triton.ptr<bf16>, %in_ptr1: !triton.ptr<f16>) ynumel 16 xnumel 16 r0_numel 16 {
  %0 = arith.constant 0.0 : f32
  %1 = triton.rloop iter_args(%a = %0 : f32) {
    %2 = triton.load %in_ptr0[r0_index + 16*yindex] : bf16
    %3 = triton.load %in_ptr1[xindex + 16*r0_index_t] : f16
    // expected-error@+1 {{triton.dot: operands of one type, got bf16 and f16}}
    %4 = triton.dot %2, %3 into %a "ieee" : bf16, f16 -> f32
    triton.yield %4 : f32
  }
}

// -----

// r0_mask_t (K along a B tile's rows) exists in a matmul kernel only, not in a reduction kernel.
triton.kernel @k reduction(%in_ptr0: !triton.ptr<f32>) xnumel 8 r0_numel 9000 {
  %0 = arith.constant 0.0 : f32
  %1 = triton.rloop iter_args(%a = %0 : f32) {
    // expected-error@+1 {{triton.load: unknown mask 'r0_mask_t' in a reduction kernel (known: xmask, r0_mask)}}
    %2 = triton.load %in_ptr0[r0_index] mask r0_mask_t other 0.0 : f32
    %3 = triton.accumulate sum %2 into %a mask r0_mask : f32 -> f32
    triton.yield %3 : f32
  }
}

// -----

// Outside its rloop a matmul kernel has no K index: r0_index is not defined there.
triton.kernel @k matmul(%in_ptr0: !triton.ptr<f32>) ynumel 16 xnumel 16 r0_numel 16 {
  // expected-error@+1 {{triton.load: index symbol 'r0_index' is not defined here (available: xindex, yindex)}}
  %0 = triton.load %in_ptr0[r0_index + 16*yindex] : f32
}

// -----

// A matmul kernel's K loop accumulates with triton.dot only: no triton.accumulate.
triton.kernel @k matmul(%in_ptr0: !triton.ptr<f32>) ynumel 16 xnumel 16 r0_numel 16 {
  %0 = arith.constant 0.0 : f32
  %1 = triton.rloop iter_args(%a = %0 : f32) {
    %2 = triton.load %in_ptr0[r0_index + 16*yindex] : f32
    // expected-error@+1 {{triton.accumulate must be inside the triton.rloop of a looped reduction kernel}}
    %3 = triton.accumulate sum %2 into %a : f32 -> f32
    triton.yield %3 : f32
  }
}

// -----

// Only a batched matmul kernel counts products in z.
// expected-error@+1 {{triton.kernel: a pointwise kernel takes no znumel (only a batched matmul does)}}
triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>) znumel 4 xnumel 16 {
}

// -----

// zindex is a batched kernel's: an unbatched one has none.
triton.kernel @k matmul(%in_ptr0: !triton.ptr<f32>) ynumel 16 xnumel 16 r0_numel 16 {
  // expected-error@+1 {{zindex}}
  %0 = triton.load %in_ptr0[xindex + 16*yindex + 256*zindex] : f32
}

// -----

// A GEMM launched against an unfused wrapper that takes other buffers than the launch's and
// its `also` ones, in order.
triton.kernel @k matmul(%in_ptr0: !triton.ptr<bf16>, %in_ptr1: !triton.ptr<bf16>, %out_ptr0: !triton.ptr<bf16>) ynumel 16 xnumel 16 r0_numel 16 {
  %0 = arith.constant 0.000000e+00 : f32
  %1 = triton.rloop iter_args(%2 = %0 : f32) {
    %3 = triton.load %in_ptr0[r0_index + 16*yindex] : bf16
    %4 = triton.load %in_ptr1[r0_index_t + 16*xindex] : bf16
    %5 = triton.dot %3, %4 into %2 "ieee" : bf16, bf16 -> f32
    triton.yield %5 : f32
  }
  %6 = arith.truncf %1 : f32 to bf16
  triton.store %out_ptr0[xindex + 16*yindex], %6 : bf16
}
triton.wrapper @k_unfused0 {
  triton.input "a" #buffer.layout<[16, 16], [16, 1], bf16>
  triton.input "b" #buffer.layout<[16, 16], [16, 1], bf16>
  triton.input "out" #buffer.layout<[16, 16], [16, 1], bf16>
  triton.return
}
triton.wrapper @call {
  triton.input "a" #buffer.layout<[16, 16], [16, 1], bf16>
  triton.input "b" #buffer.layout<[16, 16], [16, 1], bf16>
  triton.input "ends" #buffer.layout<[2], [1], i32>
  triton.alloc "out" #buffer.layout<[16, 16], [16, 1], bf16>
  // expected-error@+1 {{triton.launch: @k_unfused0 takes ['a', 'b', 'out'], not the launch's buffers ['a', 'b', 'out', 'ends']}}
  triton.launch @k(@a, @b, @out) ynumel 16 xnumel 16 r0_numel 16 against @k_unfused0 also(@ends)
  triton.return @out
}

// -----

// `also` names what an unfused wrapper reads: a launch with no `against` has none.
triton.kernel @k matmul(%in_ptr0: !triton.ptr<bf16>, %in_ptr1: !triton.ptr<bf16>, %out_ptr0: !triton.ptr<bf16>) ynumel 16 xnumel 16 r0_numel 16 {
  %0 = arith.constant 0.000000e+00 : f32
  %1 = triton.rloop iter_args(%2 = %0 : f32) {
    %3 = triton.load %in_ptr0[r0_index + 16*yindex] : bf16
    %4 = triton.load %in_ptr1[r0_index_t + 16*xindex] : bf16
    %5 = triton.dot %3, %4 into %2 "ieee" : bf16, bf16 -> f32
    triton.yield %5 : f32
  }
  %6 = arith.truncf %1 : f32 to bf16
  triton.store %out_ptr0[xindex + 16*yindex], %6 : bf16
}
triton.wrapper @call {
  triton.input "a" #buffer.layout<[16, 16], [16, 1], bf16>
  triton.input "b" #buffer.layout<[16, 16], [16, 1], bf16>
  triton.input "ends" #buffer.layout<[2], [1], i32>
  triton.alloc "out" #buffer.layout<[16, 16], [16, 1], bf16>
  // expected-error@+1 {{triton.launch: `also` names what an unfused wrapper reads, and there is none (`against`)}}
  triton.launch @k(@a, @b, @out) ynumel 16 xnumel 16 r0_numel 16 also(@ends)
  triton.return @out
}
