// RUN: mlc-opt %s --split-input-file --verify-diagnostics

// expected-error@+1 {{unknown kind 'looped'}}
triton.kernel @k looped(%in_ptr0: !triton.ptr<f32>) xnumel 8 {
}

// -----

// expected-error@+1 {{a pointwise kernel takes no r0_numel}}
triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>) xnumel 8 r0_numel 4 {
}

// -----

// expected-error@+1 {{a reduction kernel needs r0_numel}}
triton.kernel @k reduction(%in_ptr0: !triton.ptr<f32>) xnumel 8 {
}

// -----

// expected-error@+1 {{arguments are !triton.ptr, got f32}}
triton.kernel @k pointwise(%in_ptr0: f32) xnumel 8 {
}

// -----

// expected-error@+1 {{arguments need a name usable in Python}}
triton.kernel @k pointwise(%0: !triton.ptr<f32>) xnumel 8 {
}

// -----

// expected-error@+1 {{SSA value %in_ptr0 is already defined}}
triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>, %in_ptr0: !triton.ptr<f32>) xnumel 8 {
}

// -----

// expected-error@+1 {{pointee must be an integer or float type}}
triton.kernel @k pointwise(%in_ptr0: !triton.ptr<index>) xnumel 8 {
}

// -----

// expected-error@+1 {{XBLOCK must be a power of two}}
triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>) xnumel 8 configs [#triton.config<XBLOCK = 100, num_warps = 4, num_stages = 1>] {
}

// -----

// expected-error@+1 {{num_warps must be a power of two <= 32}}
triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>) xnumel 8 configs [#triton.config<XBLOCK = 128, num_warps = 3, num_stages = 1>] {
}

// -----

triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>) xnumel 8 {
  // expected-error@+1 {{triton.alloc cannot appear in a kernel body}}
  triton.alloc "buf0" #buffer.layout<[8], [1], f32>
}

// -----

triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>) xnumel 8 {
  // expected-error@+1 {{index symbol 'x0' is not defined here}}
  %0 = triton.load %in_ptr0[x0] mask xmask : f32
  triton.index x0 = xindex
}

// -----

triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>) xnumel 8 {
  // expected-error@+1 {{index symbol 'r0_index' is not defined here}}
  triton.index x0 = r0_index
}

// -----

triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>) xnumel 8 {
  triton.index x0 = xindex
  // expected-error@+1 {{'x0' is defined twice}}
  triton.index x0 = FloorDiv(xindex, 2)
}

// -----

triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>) xnumel 8 {
  // expected-error@+1 {{'xmask' cannot name an index symbol}}
  triton.index xmask = xindex
}

// -----

triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>) xnumel 8 {
  // expected-error@+1 {{unknown mask 'r0_mask' in a pointwise kernel}}
  %0 = triton.load %in_ptr0[xindex] mask r0_mask : f32
}

// -----

triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>) xnumel 8 {
  // expected-error@+1 {{'other' needs a mask}}
  %0 = triton.load %in_ptr0[xindex] other 0.0 : f32
}

// -----

triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>) xnumel 8 {
  // expected-error@+1 {{result type i32 does not match the pointer's f32}}
  %0 = "triton.load"(%in_ptr0) <{operandSegmentSizes = array<i32: 1, 0, 0>, index = #sym.expr<xindex>}> : (!triton.ptr<f32>) -> i32
}

// -----

triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>) xnumel 8 {
  // expected-error@+1 {{'other' must be a f32 constant}}
  %0 = "triton.load"(%in_ptr0) <{operandSegmentSizes = array<i32: 1, 0, 0>, index = #sym.expr<xindex>, mask_names = ["xmask"], other = 0 : i32}> : (!triton.ptr<f32>) -> f32
}

// -----

triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>) xnumel 8 {
  // expected-error@+1 {{unknown eviction policy 'evict_normal'}}
  %0 = "triton.load"(%in_ptr0) <{operandSegmentSizes = array<i32: 1, 0, 0>, index = #sym.expr<xindex>, eviction_policy = "evict_normal"}> : (!triton.ptr<f32>) -> f32
}

// -----

triton.kernel @k pointwise(%out_ptr0: !triton.ptr<f32>) xnumel 8 {
  %0 = arith.constant 1 : i32
  // expected-error@+1 {{stored type i32 does not match the pointer's f32}}
  "triton.store"(%out_ptr0, %0) <{operandSegmentSizes = array<i32: 1, 1, 0, 0>, index = #sym.expr<xindex>}> : (!triton.ptr<f32>, i32) -> ()
}

// -----

triton.kernel @k pointwise(%out_ptr0: !triton.ptr<f32>) xnumel 8 {
  // expected-error@+1 {{index symbol 'x3' is not defined here}}
  %0 = triton.expr x3 : i32
}

// -----

// expected-error@+1 {{triton.index must be inside triton.kernel}}
triton.index x0 = xindex

// -----

triton.wrapper @call {
  triton.alloc "buf0" #buffer.layout<[8], [1], f32>
  // expected-error@+1 {{no triton.kernel @nope in this module}}
  triton.launch @nope(@buf0) xnumel 8
  triton.return @buf0
}

// -----

triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 8 {
}
triton.wrapper @call {
  triton.alloc "buf0" #buffer.layout<[8], [1], f32>
  // expected-error@+1 {{@k takes 2 pointers, got 1 buffers}}
  triton.launch @k(@buf0) xnumel 8
  triton.return @buf0
}

// -----

triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>) xnumel 8 {
}
triton.wrapper @call {
  triton.alloc "buf0" #buffer.layout<[8], [1], f32>
  // expected-error@+1 {{xnumel does not match @k's}}
  triton.launch @k(@buf0) xnumel 16
  triton.return @buf0
}

// -----

triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>) xnumel 8 {
}
triton.wrapper @call {
  triton.alloc "buf0" #buffer.layout<[8], [1], i64>
  // expected-error@+1 {{buffer 'buf0' holds i64 but %in_ptr0 of @k points to f32}}
  triton.launch @k(@buf0) xnumel 8
  triton.return @buf0
}

// -----

triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>) xnumel 8 {
}
triton.wrapper @call {
  // expected-error@+1 {{buffer 'buf0' is not defined before this use}}
  triton.launch @k(@buf0) xnumel 8
  triton.alloc "buf0" #buffer.layout<[8], [1], f32>
  triton.return @buf0
}

// -----

triton.wrapper @call {
  triton.alloc "buf0" #buffer.layout<[8], [1], f32>
  triton.free @buf0
  // expected-error@+1 {{buffer 'buf0' is already freed}}
  triton.return @buf0
}

// -----

triton.wrapper @call {
  triton.alloc "buf0" #buffer.layout<[8], [1], f32>
  // expected-error@+1 {{buffer 'buf0' is defined twice}}
  triton.view "buf0" = @buf0 #buffer.layout<[8], [1], f32>
  triton.return @buf0
}

// -----

triton.wrapper @call {
  triton.alloc "buf0" #buffer.layout<[8], [1], f32>
  // expected-error@+1 {{inputs come first in the wrapper}}
  triton.input "arg0_1" #buffer.layout<[8], [1], f32>
  triton.return @buf0
}

// -----

// expected-error@+1 {{triton.wrapper must end with triton.return}}
triton.wrapper @call {
  triton.alloc "buf0" #buffer.layout<[8], [1], f32>
}

// -----

triton.wrapper @call {
  triton.input "arg0_1" #buffer.layout<[8, 8], [8, 1], f32>
  // expected-error@+1 {{needs one layout per buffer name}}
  "triton.extern"() <{buffers = ["buf0", "buf1"], layouts = [#buffer.layout<[8], [1], f32>], overload = "mm.default", args = [@arg0_1]}> : () -> ()
  triton.return @arg0_1
}

// -----

triton.wrapper @call {
  triton.input "arg0_1" #buffer.layout<[8], [1], f32>
  // expected-error@+1 {{triton.free: nothing to free}}
  triton.free
  triton.return @arg0_1
}

// -----
// Reductions

// expected-error@+1 {{a persistent_reduction kernel's configs set XBLOCK}}
triton.kernel @k persistent_reduction(%in_ptr0: !triton.ptr<f32>) xnumel 8 r0_numel 9 configs [#triton.config<XBLOCK = 1, R0_BLOCK = 16, num_warps = 2, num_stages = 1>] {
}

// -----

// expected-error@+1 {{a reduction kernel's configs set R0_BLOCK and XBLOCK}}
triton.kernel @k reduction(%in_ptr0: !triton.ptr<f32>) xnumel 8 r0_numel 9000 configs [#triton.config<XBLOCK = 1, num_warps = 2, num_stages = 1>] {
}

// -----

// Over a symbolic r0_numel, R0_BLOCK is next_pow2(r0_numel) at launch: each config names its own.
// expected-error@+1 {{a persistent_reduction kernel's configs set R0_BLOCK and XBLOCK}}
triton.kernel @k persistent_reduction(%in_ptr0: !triton.ptr<f32>) xnumel 8 r0_numel s0 configs [#triton.config<XBLOCK = 1, num_warps = 2, num_stages = 1>] {
}

// -----

triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>) xnumel 8 {
  %0 = triton.load %in_ptr0[xindex] mask xmask : f32
  // expected-error@+1 {{a pointwise kernel has no reduction dimension to reduce}}
  %1 = triton.reduce sum %0 mask xmask : f32 -> f32
}

// -----

triton.kernel @k persistent_reduction(%in_ptr0: !triton.ptr<f32>) xnumel 8 r0_numel 9 {
  %0 = triton.load %in_ptr0[r0_index] mask r0_mask other 0.0 : f32
  // expected-error@+1 {{unknown reduction kind 'mean'}}
  %1 = triton.reduce mean %0 mask r0_mask : f32 -> f32
}

// -----

triton.kernel @k persistent_reduction(%in_ptr0: !triton.ptr<f32>) xnumel 8 r0_numel 9 {
  %0 = triton.load %in_ptr0[r0_index] mask r0_mask other 0.0 : f32
  // expected-error@+1 {{sum of f32 has results (f32), got (i64)}}
  %1 = triton.reduce sum %0 mask r0_mask : f32 -> i64
}

// -----

triton.kernel @k persistent_reduction(%in_ptr0: !triton.ptr<f32>) xnumel 8 r0_numel 9 {
  %0 = triton.load %in_ptr0[r0_index] mask r0_mask other 0.0 : f32
  // expected-error@+1 {{any reduces i1 values, got f32}}
  %1 = triton.reduce any %0 mask r0_mask : f32 -> i1
}

// -----

triton.kernel @k persistent_reduction(%in_ptr0: !triton.ptr<f32>) xnumel 8 r0_numel 9 {
  %0 = triton.load %in_ptr0[r0_index] mask r0_mask other 0.0 : f32
  // expected-error@+1 {{welford takes 3 operand(s), got 1}}
  %1, %2, %3 = triton.reduce welford %0 mask r0_mask : f32 -> f32, f32, f32
}

// -----

triton.kernel @k persistent_reduction(%in_ptr0: !triton.ptr<f32>) xnumel 8 r0_numel 9 {
  %0 = triton.load %in_ptr0[r0_index] mask r0_mask other 0.0 : f32
  // expected-error@+1 {{online_softmax combines a looped kernel's (max, sum) accumulators, of one type, unmasked}}
  %1, %2 = triton.reduce online_softmax %0, %0 mask r0_mask : f32, f32 -> f32, f32
}

// -----

triton.kernel @k reduction(%in_ptr0: !triton.ptr<i32>) xnumel 8 r0_numel 9000 {
  %0 = arith.constant 0 : i32
  %1, %2 = triton.rloop iter_args(%a = %0 : i32, %b = %0 : i32) {
    %3 = triton.load %in_ptr0[r0_index] mask r0_mask other 0 : i32
    // expected-error@+1 {{online_softmax needs float values, got i32}}
    %4, %5 = triton.accumulate online_softmax %3 into %a, %b mask r0_mask : i32 -> i32, i32
    triton.yield %4, %5 : i32, i32
  }
}

// -----

triton.kernel @k reduction(%in_ptr0: !triton.ptr<f32>) xnumel 8 r0_numel 9000 {
  %0 = arith.constant 0.0 : f32
  %1 = triton.rloop iter_args(%a = %0 : f32) {
    %2 = triton.load %in_ptr0[r0_index] mask r0_mask other 0.0 : f32
    // expected-error@+1 {{reduce after the triton.rloop; inside it, use triton.accumulate}}
    %3 = triton.reduce sum %2 mask r0_mask : f32 -> f32
    triton.yield %a : f32
  }
}

// -----

triton.kernel @k reduction(%in_ptr0: !triton.ptr<f32>) xnumel 8 r0_numel 9000 {
  %0 = arith.constant 0.0 : f32
  // expected-error@+1 {{argmax after a loop needs the index accumulator}}
  %1 = triton.reduce argmax %0 : f32 -> i64
}

// -----

triton.kernel @k persistent_reduction(%in_ptr0: !triton.ptr<f32>) xnumel 8 r0_numel 9 {
  %0 = arith.constant 0.0 : f32
  // expected-error@+1 {{triton.accumulate must be inside the triton.rloop of a looped reduction kernel}}
  %1 = triton.accumulate sum %0 into %0 : f32 -> f32
}

// -----

triton.kernel @k reduction(%in_ptr0: !triton.ptr<f32>) xnumel 8 r0_numel 9000 {
  %0 = arith.constant 0.0 : f32
  %1 = triton.rloop iter_args(%a = %0 : f32) {
    %2 = triton.load %in_ptr0[r0_index] mask r0_mask other 0.0 : f32
    // expected-error@+1 {{argmax of f32 has accumulators (f32, i64), got (f32)}}
    %3 = triton.accumulate argmax %2 into %a mask r0_mask : f32 -> f32
    triton.yield %3 : f32
  }
}

// -----

triton.kernel @k persistent_reduction(%in_ptr0: !triton.ptr<f32>) xnumel 8 r0_numel 9 {
  %0 = arith.constant 0.0 : f32
  // expected-error@+1 {{only a looped reduction or a matmul kernel has one, not a persistent_reduction kernel}}
  %1 = triton.rloop iter_args(%a = %0 : f32) {
    triton.yield %a : f32
  }
}

// -----

triton.kernel @k reduction(%in_ptr0: !triton.ptr<f32>) xnumel 8 r0_numel 9000 {
  %0 = arith.constant 0.0 : f32
  %i = arith.constant 0 : i64
  // expected-error@+1 {{triton.yield must give one value per accumulator, of its type}}
  %1 = triton.rloop iter_args(%a = %0 : f32) {
    triton.yield %i : i64
  }
}

// -----

triton.kernel @k reduction(%in_ptr0: !triton.ptr<f32>) xnumel 8 r0_numel 9000 {
  // expected-error@+1 {{unknown mask 'r0_mask' in a reduction kernel outside its triton.rloop (known: xmask)}}
  %0 = triton.load %in_ptr0[xindex] mask r0_mask, xmask : f32
}

// -----

triton.kernel @k reduction(%in_ptr0: !triton.ptr<f32>) xnumel 8 r0_numel 9000 {
  // expected-error@+1 {{index symbol 'r0_index' is not defined here}}
  %0 = triton.load %in_ptr0[r0_index] mask xmask : f32
}

// -----

triton.kernel @k reduction(%in_ptr0: !triton.ptr<f32>) xnumel 8 r0_numel 9000 {
  triton.rloop {
    triton.index r0_0 = r0_index
    triton.yield
  }
  // expected-error@+1 {{index symbol 'r0_0' is not defined here}}
  %0 = triton.load %in_ptr0[r0_0] mask xmask : f32
}

// -----

// expected-error@+1 {{a reduction kernel takes no ynumel}}
triton.kernel @k reduction(%in_ptr0: !triton.ptr<f32>) ynumel 4 xnumel 8 r0_numel 16 {
}

// -----

// expected-error@+1 {{a pointwise kernel's configs set XBLOCK and YBLOCK}}
triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>) ynumel 4 xnumel 8 configs [#triton.config<XBLOCK = 8, num_warps = 1, num_stages = 1>] {
}

// -----

// expected-error@+1 {{a pointwise kernel's configs set XBLOCK}}
triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>) xnumel 8 configs [#triton.config<XBLOCK = 8, YBLOCK = 4, num_warps = 1, num_stages = 1>] {
}

// -----

triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>) xnumel 8 {
  // expected-error@+1 {{index symbol 'yindex' is not defined here}}
  %0 = triton.load %in_ptr0[yindex] mask xmask : f32
}

// -----

triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>) xnumel 8 {
  // expected-error@+1 {{unknown mask 'ymask' in a pointwise kernel (known: xmask)}}
  %0 = triton.load %in_ptr0[xindex] mask ymask : f32
}

// -----

triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>) ynumel 4 xnumel 8 {
  // expected-error@+1 {{unknown mask 'r0_mask' in a pointwise kernel (known: xmask, ymask)}}
  %0 = triton.load %in_ptr0[xindex + 8*yindex] mask r0_mask : f32
}

// -----

triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>) ynumel 4 xnumel 8 {
}
triton.wrapper @call {
  triton.alloc "buf0" #buffer.layout<[32], [1], f32>
  // expected-error@+1 {{ynumel does not match @k's}}
  triton.launch @k(@buf0) xnumel 8
  triton.return @buf0
}

// -----

triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>) ynumel 4 xnumel 8 {
}
triton.wrapper @call {
  triton.alloc "buf0" #buffer.layout<[32], [1], f32>
  // expected-error@+1 {{ynumel does not match @k's}}
  triton.launch @k(@buf0) ynumel 2 xnumel 8
  triton.return @buf0
}

// -----

// A size no input gives (here only 2*s0 is known) cannot be bound by the wrapper.
triton.wrapper @call {
  // expected-error@+1 {{triton.input: size s0 is not given by any input of the wrapper}}
  triton.input "x" #buffer.layout<[2*s0], [1], f32>
  triton.return @x
}

// -----

triton.kernel @per persistent_reduction(%in_ptr0: !triton.ptr<f32>) xnumel 8 r0_numel s0 configs [#triton.config<XBLOCK = 1, R0_BLOCK = 1, num_warps = 2, num_stages = 1>] {
}
triton.wrapper @call {
  triton.size_input "arg0_1" s0
  triton.alloc "buf0" #buffer.layout<[8], [1], f32>
  // expected-error@+1 {{a persistent kernel over a symbolic r0_numel, and only one, names a looped kernel for the sizes above its bound}}
  triton.launch @per(@buf0) xnumel 8 r0_numel s0
  triton.return @buf0
}

// -----

triton.kernel @red reduction(%in_ptr0: !triton.ptr<f32>) xnumel 8 r0_numel s0 configs [#triton.config<XBLOCK = 1, R0_BLOCK = 64, num_warps = 2, num_stages = 1>] {
}
triton.wrapper @call {
  triton.size_input "arg0_1" s0
  triton.alloc "buf0" #buffer.layout<[8], [1], f32>
  // expected-error@+1 {{and only one, names a looped kernel}}
  triton.launch @red(@buf0) xnumel 8 r0_numel s0 else @red when r0_numel > 4
  triton.return @buf0
}

// -----

triton.kernel @per persistent_reduction(%in_ptr0: !triton.ptr<f32>) xnumel 8 r0_numel s0 configs [#triton.config<XBLOCK = 1, R0_BLOCK = 1, num_warps = 2, num_stages = 1>] {
}
triton.wrapper @call {
  triton.size_input "arg0_1" s0
  triton.alloc "buf0" #buffer.layout<[8], [1], f32>
  // expected-error@+1 {{@per is not a looped reduction kernel}}
  triton.launch @per(@buf0) xnumel 8 r0_numel s0 else @per when r0_numel > 1
  triton.return @buf0
}

// -----

triton.kernel @per persistent_reduction(%in_ptr0: !triton.ptr<f32>) xnumel 8 r0_numel s0 configs [#triton.config<XBLOCK = 1, R0_BLOCK = 1, num_warps = 2, num_stages = 1>, #triton.config<XBLOCK = 1, R0_BLOCK = 4, num_warps = 2, num_stages = 1>] {
}
triton.kernel @red reduction(%in_ptr0: !triton.ptr<f32>) xnumel 8 r0_numel s0 configs [#triton.config<XBLOCK = 1, R0_BLOCK = 64, num_warps = 2, num_stages = 1>] {
}
triton.wrapper @call {
  triton.size_input "arg0_1" s0
  triton.alloc "buf0" #buffer.layout<[8], [1], f32>
  // expected-error@+1 {{@per runs r0_numel up to 3, but no config has R0_BLOCK 2}}
  triton.launch @per(@buf0) xnumel 8 r0_numel s0 else @red when r0_numel > 3
  triton.return @buf0
}

// -----

triton.kernel @per persistent_reduction(%in_ptr0: !triton.ptr<f32>) xnumel 8 r0_numel s0 configs [#triton.config<XBLOCK = 1, R0_BLOCK = 1, num_warps = 2, num_stages = 1>] {
}
triton.kernel @red reduction(%in_ptr0: !triton.ptr<i64>) xnumel 8 r0_numel s0 configs [#triton.config<XBLOCK = 1, R0_BLOCK = 64, num_warps = 2, num_stages = 1>] {
}
triton.wrapper @call {
  triton.size_input "arg0_1" s0
  triton.alloc "buf0" #buffer.layout<[8], [1], f32>
  // expected-error@+1 {{buffer 'buf0' holds f32 but %in_ptr0 of @red points to i64}}
  triton.launch @per(@buf0) xnumel 8 r0_numel s0 else @red when r0_numel > 1
  triton.return @buf0
}

// -----

// A reuse takes the storage of the wrapper's own allocation, of the same dtype and extent; the
// buffer it takes is dead after it.
triton.wrapper @call {
  triton.input "arg0_1" #buffer.layout<[8], [1], f32>
  // expected-error@+1 {{triton.reuse: 'arg0_1' is not an allocation of this wrapper: its storage is not its own to give}}
  triton.reuse "buf0" = @arg0_1 #buffer.layout<[8], [1], f32>
  triton.return @buf0
}

// -----

triton.wrapper @call {
  triton.alloc "buf0" #buffer.layout<[4, 3], [3, 1], f32>
  // expected-error@+1 {{triton.reuse: 'buf1' needs 12 elements of f16, 'buf0' holds 12 of f32}}
  triton.reuse "buf1" = @buf0 #buffer.layout<[3, 4], [1, 3], f16>
  triton.return @buf1
}

// -----

triton.wrapper @call {
  triton.alloc "buf0" #buffer.layout<[4, 3], [3, 1], f32>
  // expected-error@+1 {{triton.reuse: 'buf1' needs 8 elements of f32, 'buf0' holds 12 of f32}}
  triton.reuse "buf1" = @buf0 #buffer.layout<[8], [1], f32>
  triton.return @buf1
}

// -----

triton.wrapper @call {
  triton.alloc "buf0" #buffer.layout<[8], [1], f32>
  triton.reuse "buf1" = @buf0 #buffer.layout<[8], [1], f32>
  // expected-error@+1 {{buffer 'buf0' is already freed}}
  triton.return @buf0, @buf1
}

// -----

// triton.yield gives one type per value.
triton.kernel @yield_types reduction(%in_ptr0: !triton.ptr<f32>) xnumel 4 r0_numel 8 {
  %z = arith.constant 0.0 : f32
  %a = triton.rloop iter_args(%acc = %z : f32) {
    // expected-error@+1 {{expected 1 operand types, got 2}}
    triton.yield %acc : f32, f32
  }
}

// -----

// Only a matmul kernel's loop runs over groups of rows (a grouped product's).
triton.kernel @k reduction(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<i64>) xnumel 8 r0_numel 9000 {
  %0 = arith.constant 0.0 : f32
  %1 = triton.load %in_ptr1[xindex] mask xmask other 0 : i64
  %2 = triton.indirect_index %1 size 4 mask xmask : i64
  // expected-error@+1 {{only a matmul kernel's loop runs over groups of rows}}
  %3 = triton.rloop groups(%2) iter_args(%a = %0 : f32) {
    triton.yield %a : f32
  }
}
