// RUN: mlc-opt %s --split-input-file -p inline,realize | filecheck %s
// RUN: mlc-opt %s --split-input-file -p inline,realize | mlc-opt --split-input-file | filecheck %s

// Inputs are named by their loc, else their name hint, else arg{N}; buffers are numbered in
// program order with externs counted, each result of a multi-output extern its own name.
// CHECK-LABEL: buffer.graph @naming_order
func.func @naming_order(%x: tensor<8x4xf32> loc("primals_1"), %y: tensor<8x4xf32>, %42: tensor<4x4xf32>) -> (tensor<8x4xf32>, tensor<8xf32>, tensor<8xi64>, tensor<8x4xf32>) {
  // CHECK-NEXT:  buffer.input "primals_1" #buffer.layout<[8, 4], [4, 1], f32>
  // CHECK-NEXT:  buffer.input "y" #buffer.layout<[8, 4], [4, 1], f32>
  // CHECK-NEXT:  buffer.input "arg2" #buffer.layout<[4, 4], [4, 1], f32>
  // CHECK-NEXT:  buffer.computed "buf0" {{.*}} origins ["sin"]
  %s = loops.pointwise [8, 4] origins ["sin"] -> tensor<8x4xf32> {
    %0 = loops.load %x[i0, i1] : tensor<8x4xf32>
    %1 = math.sin %0 : f32
    loops.yield %1 : f32
  }
  // CHECK:       buffer.extern "buf1" = "mm.default" {args = [@buf0, @arg2], origins = ["mm"]} : #buffer.layout<[8, 4], [4, 1], f32>
  %m = loops.extern "mm.default" (%s, %42) {args = [#aten.tensor, #aten.tensor]} : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
  // CHECK-NEXT:  buffer.extern "buf2", "buf3" = "max.dim" {args = [@buf1, 1 : i64], origins = ["max"]} : #buffer.layout<[8], [1], f32>, #buffer.layout<[8], [1], i64>
  %v, %i = loops.extern "max.dim" (%m) {args = [#aten.tensor, 1 : i64]} : (tensor<8x4xf32>) -> (tensor<8xf32>, tensor<8xi64>)
  // CHECK-NEXT:  buffer.computed "buf4" {{.*}} origins ["cos"]
  // CHECK:         buffer.load @y[i1 + 4*i0] : f32
  // CHECK:         buffer.load @buf2[i0] : f32
  %c = loops.pointwise [8, 4] origins ["cos"] -> tensor<8x4xf32> {
    %0 = loops.load %y[i0, i1] : tensor<8x4xf32>
    %1 = loops.load %v[i0] : tensor<8xf32>
    %2 = arith.addf %0, %1 : f32
    %3 = math.cos %2 : f32
    loops.yield %3 : f32
  }
  // CHECK:       buffer.output @buf1, @buf2, @buf3, @buf4
  func.return %m, %v, %i, %c : tensor<8x4xf32>, tensor<8xf32>, tensor<8xi64>, tensor<8x4xf32>
}

// -----

// Loads are flattened through the producer's contiguous layout: a transposed read strides by
// the row length, a broadcast read drops the broadcast dim, a constant index is an offset,
// and a masked read keeps its mask. The store is at this buffer's own contiguous index.
// CHECK-LABEL: buffer.graph @flat_indices
func.func @flat_indices(%x: tensor<64x32xf32>, %b: tensor<64xf32>, %r: tensor<3x64xf32>) -> tensor<32x64xf32> {
  // CHECK:       buffer.computed "buf0" #buffer.layout<[32, 64], [64, 1], f32> ranges [32, 64]
  // CHECK-NEXT:    %[[T:.*]] = buffer.load @x[i0 + 32*i1] : f32
  // CHECK-NEXT:    %[[B:.*]] = buffer.load @b[i1] : f32
  // CHECK-NEXT:    %[[R:.*]] = buffer.load @r[128 + i1] : f32
  // CHECK-NEXT:    %[[I:.*]] = loops.index i0 : i64
  // CHECK:         %[[M:.*]] = arith.cmpi slt, %[[I]], %{{.*}} : i64
  // CHECK-NEXT:    %{{.*}} = buffer.load @x[1 + i0 + 32*i1] mask %[[M]] : f32
  // CHECK:         buffer.store @buf0[i1 + 64*i0], %{{.*}} : f32
  %y = loops.pointwise [32, 64] origins ["add"] -> tensor<32x64xf32> {
    %0 = loops.load %x[i1, i0] : tensor<64x32xf32>
    %1 = loops.load %b[i1] : tensor<64xf32>
    %2 = loops.load %r[2, i1] : tensor<3x64xf32>
    %3 = loops.index i0 : i64
    %4 = arith.constant 31 : i64
    %5 = arith.cmpi slt, %3, %4 : i64
    %6 = loops.load %x[i1, i0 + 1] mask %5 : tensor<64x32xf32>
    %7 = arith.addf %0, %1 : f32
    %8 = arith.addf %7, %2 : f32
    %9 = arith.addf %8, %6 : f32
    loops.yield %9 : f32
  }
  func.return %y : tensor<32x64xf32>
}

// -----

// A reduction stores at the index of its i-variables only; an epilogue (mean's division)
// stays in the node. Each read result of a multi-result reduction is its own computed, with
// only the part of the body it needs (max without the argmax, and the other way round).
// CHECK-LABEL: buffer.graph @reductions
func.func @reductions(%x: tensor<8x64xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xi64>) {
  // CHECK:       buffer.computed "buf0" #buffer.layout<[8], [1], f32> ranges [8] reduce [64] origins ["mean"] {
  // CHECK-NEXT:    %[[V:.*]] = buffer.load @x[r0_0 + 64*i0] : f32
  // CHECK-NEXT:    %[[R:.*]] = buffer.reduce sum %[[V]] : f32 -> f32
  // CHECK-NEXT:    %[[N:.*]] = arith.constant 6.400000e+01 : f32
  // CHECK-NEXT:    %[[M:.*]] = arith.divf %[[R]], %[[N]] : f32
  // CHECK-NEXT:    buffer.store @buf0[i0], %[[M]] : f32
  %mean = loops.reduction [8] over [64] origins ["mean"] -> tensor<8xf32> {
    %0 = loops.load %x[i0, r0_0] : tensor<8x64xf32>
    %1 = loops.reduce sum %0 : f32 -> f32
    %2 = arith.constant 64.0 : f32
    %3 = arith.divf %1, %2 : f32
    loops.yield %3 : f32
  }
  // CHECK:       buffer.computed "buf1" #buffer.layout<[8], [1], f32> ranges [8] reduce [64] origins ["max"] {
  // CHECK-NEXT:    buffer.load @x[r0_0 + 64*i0] : f32
  // CHECK-NEXT:    %[[MX:.*]] = buffer.reduce max %{{.*}} : f32 -> f32
  // CHECK-NEXT:    buffer.store @buf1[i0], %[[MX]] : f32
  // CHECK:       buffer.computed "buf2" #buffer.layout<[8], [1], i64> ranges [8] reduce [64] origins ["max"] {
  // CHECK-NEXT:    buffer.load @x[r0_0 + 64*i0] : f32
  // CHECK-NEXT:    %[[AM:.*]] = buffer.reduce argmax %{{.*}} : f32 -> i64
  // CHECK-NEXT:    buffer.store @buf2[i0], %[[AM]] : i64
  %v, %i = loops.reduction [8] over [64] origins ["max"] -> (tensor<8xf32>, tensor<8xi64>) {
    %0 = loops.load %x[i0, r0_0] : tensor<8x64xf32>
    %1 = loops.reduce max %0 : f32 -> f32
    %2 = loops.reduce argmax %0 : f32 -> i64
    loops.yield %1, %2 : f32, i64
  }
  func.return %mean, %v, %i : tensor<8xf32>, tensor<8xf32>, tensor<8xi64>
}

// -----

// var_mean's welford: the mean and the variance (m2 / weight) are one computed each; the
// weight, also a result but unread, gets none.
// CHECK-LABEL: buffer.graph @welford
func.func @welford(%x: tensor<8x64xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  // CHECK:       buffer.computed "buf0" {{.*}} reduce [64] origins ["var_mean"] {
  // CHECK:         %[[MEAN:.*]], %{{.*}}, %{{.*}} = buffer.reduce welford
  // CHECK-NEXT:    buffer.store @buf0[i0], %[[MEAN]] : f32
  // CHECK:       buffer.computed "buf1" {{.*}} reduce [64] origins ["var_mean"] {
  // CHECK:         %{{.*}}, %[[M2:.*]], %[[W:.*]] = buffer.reduce welford
  // CHECK-NEXT:    %[[VAR:.*]] = arith.divf %[[M2]], %[[W]] : f32
  // CHECK-NEXT:    buffer.store @buf1[i0], %[[VAR]] : f32
  // CHECK-NOT:   buffer.computed
  // CHECK:       buffer.output @buf0, @buf1
  %m, %var, %w = loops.reduction [8] over [64] origins ["var_mean"] -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
    %0 = loops.load %x[i0, r0_0] : tensor<8x64xf32>
    %1, %2, %3 = loops.reduce welford %0 : f32 -> (f32, f32, f32)
    %4 = arith.divf %2, %3 : f32
    loops.yield %1, %4, %3 : f32, f32, f32
  }
  func.return %m, %var : tensor<8xf32>, tensor<8xf32>
}

// -----

// Tensor marks are filled in order through nested lists and keyword arguments; an output
// that is an argument names the input, and a value returned twice is named twice.
// CHECK-LABEL: buffer.graph @extern_arguments
func.func @extern_arguments(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<8xf32>, tensor<4xf32>, tensor<8xf32>) {
  // CHECK:       buffer.extern "buf0" = "cat.default" {args = [[@a, @b], 0 : i64], kwargs = {out = @a}, origins = ["cat"]}
  %c = loops.extern "cat.default" (%a, %b, %a) {args = [[#aten.tensor, #aten.tensor], 0 : i64], kwargs = {out = #aten.tensor}} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
  // CHECK:       buffer.output @buf0, @a, @buf0
  func.return %c, %a, %c : tensor<8xf32>, tensor<4xf32>, tensor<8xf32>
}

// -----

// A view an extern reads is a buffer.view (Inductor's ReinterpretView), numbered apart from
// the buffers: a transpose, and a reshape whose FloorDiv/ModularIndexing map is the identity
// on contiguous storage. A view that is also an output is a buffer.view too: the output is
// the transposed weight itself, as eager's `w.t()` is (and as func.return promises).
// CHECK-LABEL: buffer.graph @views_for_externs
func.func @views_for_externs(%x: tensor<2x4x32xf32>, %w: tensor<16x32xf32>) -> (tensor<8x16xf32>, tensor<32x16xf32>) {
  // CHECK-NEXT:  buffer.input "x"
  // CHECK-NEXT:  buffer.input "w"
  // CHECK-NEXT:  buffer.view "view0" = @x #buffer.layout<[8, 32], [32, 1], f32>
  %v = loops.pointwise [8, 32] origins ["view"] -> tensor<8x32xf32> {
    %0 = loops.load %x[FloorDiv(i0, 4), ModularIndexing(i0, 1, 4), i1] : tensor<2x4x32xf32>
    loops.yield %0 : f32
  }
  // CHECK-NEXT:  buffer.view "view1" = @w #buffer.layout<[32, 16], [1, 32], f32>
  %t = loops.pointwise [32, 16] origins ["permute"] -> tensor<32x16xf32> {
    %0 = loops.load %w[i1, i0] : tensor<16x32xf32>
    loops.yield %0 : f32
  }
  // CHECK-NEXT:  buffer.extern "buf0" = "mm.default" {args = [@view0, @view1], origins = ["mm"]}
  %m = loops.extern "mm.default" (%v, %t) {args = [#aten.tensor, #aten.tensor]} : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  // CHECK-NEXT:  buffer.view "view2" = @w #buffer.layout<[32, 16], [1, 32], f32>
  // CHECK-NEXT:  buffer.extern "buf1" = "mm.default" {args = [@view0, @view2], origins = ["mm"]}
  %t2 = loops.pointwise [32, 16] origins ["permute"] -> tensor<32x16xf32> {
    %0 = loops.load %w[i1, i0] : tensor<16x32xf32>
    loops.yield %0 : f32
  }
  %m2 = loops.extern "mm.default" (%v, %t2) {args = [#aten.tensor, #aten.tensor]} : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  %s = loops.pointwise [8, 16] origins ["add"] -> tensor<8x16xf32> {
    %0 = loops.load %m[i0, i1] : tensor<8x16xf32>
    %1 = loops.load %m2[i0, i1] : tensor<8x16xf32>
    %2 = arith.addf %0, %1 : f32
    loops.yield %2 : f32
  }
  func.return {strides = [array<i64>, array<i64: 1, 32>]} %s, %t : tensor<8x16xf32>, tensor<32x16xf32>
}

// -----

// A call that returns None or a number in some positions (CUDA's cuDNN attention: cum_seq_q/k
// are None, max_q/k numbers) names no buffer there, nor where nothing reads the result (the
// philox seeds here: the call may return None where tracing saw a tensor); buffers are
// numbered over the rest.
// CHECK-LABEL: buffer.graph @extern_none_results
func.func @extern_none_results(%q: tensor<2x2x16x16xbf16>) -> (tensor<2x2x16x16xbf16>, tensor<2x2x16xf32>) {
  // CHECK:       buffer.extern "buf0", "buf1", none, none, none, none, none, none, none = "_scaled_dot_product_cudnn_attention.default" {args = [@q, @q, @q, #aten.none, false, 0.000000e+00 : f64, true], origins = ["_scaled_dot_product_cudnn_attention"]} : #buffer.layout<[2, 2, 16, 16], [512, 256, 16, 1], bf16>, #buffer.layout<[2, 2, 16], [32, 16, 1], f32>{{$}}
  %o:9 = loops.extern "_scaled_dot_product_cudnn_attention.default" (%q, %q, %q) {args = [#aten.tensor, #aten.tensor, #aten.tensor, #aten.none, false, 0.000000e+00 : f64, true]} : (tensor<2x2x16x16xbf16>, tensor<2x2x16x16xbf16>, tensor<2x2x16x16xbf16>) -> (tensor<2x2x16x16xbf16>, tensor<2x2x16xf32>, none, none, none, none, tensor<i64>, tensor<i64>, tensor<0xbf16>)
  // CHECK-NEXT:  buffer.output @buf0, @buf1
  func.return %o#0, %o#1 : tensor<2x2x16x16xbf16>, tensor<2x2x16xf32>
}

// -----

// An extern call's result is laid out as the call returns it when the importer recorded its
// traced strides (`result_strides`; attention's output is [B, H, S, D] in [B, S, H, D] order),
// so the wrapper's layout check after the call finds it in place instead of copying it.
// An empty entry (the second result) keeps row-major.
// CHECK-LABEL: buffer.graph @traced_extern_layout
// CHECK:         buffer.extern "buf0", "buf1" = "_scaled_dot_product_flash_attention_for_cpu.default" {{.*}} : #buffer.layout<[2, 4, 8, 16], [512, 16, 64, 1], f32>, #buffer.layout<[2, 4, 8], [32, 8, 1], f32>
func.func @traced_extern_layout(%q: tensor<2x4x8x16xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8xf32>) {
  %o, %l = loops.extern "_scaled_dot_product_flash_attention_for_cpu.default" (%q, %q, %q) {args = [#aten.tensor, #aten.tensor, #aten.tensor]} attributes {result_strides = [array<i64: 512, 16, 64, 1>, array<i64>]} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8xf32>)
  func.return %o, %l : tensor<2x4x8x16xf32>, tensor<2x4x8xf32>
}

// -----

// A computed attention operand is stored with the strides the call was traced reading it with
// (`operand_strides`): the rotary-embedded query of a [B, S, H*D] projection is [B, H, S, D]
// stored [B, S, H, D], so cuDNN returns its output [B, S, H, D] too, as `result_strides` says.
// Stored row-major, the call would return [B, H, S, D] and the wrapper would copy it. An empty
// entry (the value's) keeps row-major; the key is read twice and keeps its first entry, any
// dense layout (which operands need theirs is the importer's choice: a channels-last
// convolution input, not an attention operand whose last dim is not the fastest).
// CHECK-LABEL: buffer.graph @attention_operand_strides
// CHECK:         buffer.computed "buf0" #buffer.layout<[2, 4, 8, 16], [512, 16, 64, 1], f32>
// CHECK:         buffer.computed "buf1" #buffer.layout<[2, 4, 8, 16], [512, 128, 1, 8], f32>
// CHECK:         buffer.extern "buf2", none = "_scaled_dot_product_flash_attention_for_cpu.default" {args = [@buf0, @buf1, @buf1]{{.*}} : #buffer.layout<[2, 4, 8, 16], [512, 16, 64, 1], f32>{{$}}
func.func @attention_operand_strides(%x: tensor<2x8x64xf32>) -> tensor<2x4x8x16xf32> {
  %q = loops.pointwise [2, 4, 8, 16] origins ["mul"] -> tensor<2x4x8x16xf32> {
    %0 = loops.load %x[i0, i2, i3 + 16*i1] : tensor<2x8x64xf32>
    %1 = arith.mulf %0, %0 : f32
    loops.yield %1 : f32
  }
  %k = loops.pointwise [2, 4, 8, 16] origins ["neg"] -> tensor<2x4x8x16xf32> {
    %0 = loops.load %x[i0, i2, i3 + 16*i1] : tensor<2x8x64xf32>
    %1 = arith.negf %0 : f32
    loops.yield %1 : f32
  }
  %o, %l = loops.extern "_scaled_dot_product_flash_attention_for_cpu.default" (%q, %k, %k) {args = [#aten.tensor, #aten.tensor, #aten.tensor]} attributes {operand_strides = [array<i64: 512, 16, 64, 1>, array<i64: 512, 128, 1, 8>, array<i64>], result_strides = [array<i64: 512, 16, 64, 1>, array<i64>]} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8xf32>)
  func.return %o : tensor<2x4x8x16xf32>
}

// -----

// A copy of an input into channels-last is a single load of it, a view where nothing asks for
// a layout: here the convolution does (`operand_strides`), so the copy is stored in its strides
// and cuDNN gets the channels-last input it was traced with. The 1x1 weight, row-major, is
// passed as it is.
// CHECK-LABEL: buffer.graph @convolution_operand_strides
// CHECK:         buffer.input "x" #buffer.layout<[2, 3, 4, 4], [48, 16, 4, 1], f32>
// CHECK:         buffer.computed "buf0" #buffer.layout<[2, 3, 4, 4], [48, 1, 12, 3], f32>
// CHECK:         buffer.extern "buf1" = "convolution.default" {args = [@buf0, @w, #aten.none, {{.*}} : #buffer.layout<[2, 5, 4, 4], [80, 1, 20, 5], f32>{{$}}
func.func @convolution_operand_strides(%x: tensor<2x3x4x4xf32>, %w: tensor<5x3x1x1xf32>) -> tensor<2x5x4x4xf32> {
  %0 = loops.pointwise [2, 3, 4, 4] origins ["clone"] -> tensor<2x3x4x4xf32> {
    %1 = loops.load %x[i0, i1, i2, i3] : tensor<2x3x4x4xf32>
    loops.yield %1 : f32
  }
  %2 = loops.extern "convolution.default" (%0, %w) {args = [#aten.tensor, #aten.tensor, #aten.none, array<i64: 1, 1>, array<i64: 0, 0>, array<i64: 1, 1>, false, array<i64: 0, 0>, 1 : i64]} attributes {fresh, result_strides = [array<i64: 80, 1, 20, 5>], operand_strides = [array<i64: 48, 1, 12, 3>, array<i64>]} : (tensor<2x3x4x4xf32>, tensor<5x3x1x1xf32>) -> tensor<2x5x4x4xf32>
  func.return {strides = [array<i64: 80, 1, 20, 5>]} %2 : tensor<2x5x4x4xf32>
}

// -----

// Over symbolic sizes the traced strides are expressions (`#sym.sizes`), proved dense: the
// attention output [s0, s1, s2, s3] laid out [B, S, H, D] (as CUDA's attention returns it) is
// used as the call returns it, and its transpose and view to [s0, s2, s1*s3] are views of it,
// not copies.
// CHECK-LABEL: buffer.graph @traced_symbolic_extern_layout
// CHECK:         buffer.extern "buf0", none = "_scaled_dot_product_flash_attention_for_cpu.default" {{.*}} : #buffer.layout<[s0, s1, s2, s3], [s1*s2*s3, s3, s1*s3, 1], f32>{{$}}
// CHECK-NEXT:    buffer.view "view0" = @buf0 #buffer.layout<[s0, s2, s1*s3], [s1*s2*s3, s1*s3, 1], f32>
// CHECK-NEXT:    buffer.output @view0
func.func @traced_symbolic_extern_layout(%s0: !sym.int<s0>, %s1: !sym.int<s1>, %s2: !sym.int<s2>, %s3: !sym.int<s3>, %q: tensor<?x?x?x?xf32, #sym.sizes<[s0, s1, s2, s3]>>) -> tensor<?x?x?xf32, #sym.sizes<[s0, s2, s1*s3]>> {
  %0, %1 = loops.extern "_scaled_dot_product_flash_attention_for_cpu.default" (%q, %q, %q) {args = [#aten.tensor, #aten.tensor, #aten.tensor, 0.000000e+00 : f64, true]} attributes {result_strides = [#sym.sizes<[s1*s2*s3, s3, s1*s3, 1]>, #sym.sizes<[s1*s2, 1, s1]>]} : (tensor<?x?x?x?xf32, #sym.sizes<[s0, s1, s2, s3]>>, tensor<?x?x?x?xf32, #sym.sizes<[s0, s1, s2, s3]>>, tensor<?x?x?x?xf32, #sym.sizes<[s0, s1, s2, s3]>>) -> (tensor<?x?x?x?xf32, #sym.sizes<[s0, s1, s2, s3]>>, tensor<?x?x?xf32, #sym.sizes<[s0, s1, s2]>>)
  %2 = loops.pointwise [s0, s2, s1, s3] origins ["transpose"] -> tensor<?x?x?x?xf32, #sym.sizes<[s0, s2, s1, s3]>> {
    %3 = loops.load %0[i0, i2, i1, i3] : tensor<?x?x?x?xf32, #sym.sizes<[s0, s1, s2, s3]>>
    loops.yield %3 : f32
  }
  %6 = loops.pointwise [s0, s2, s1*s3] origins ["view"] -> tensor<?x?x?xf32, #sym.sizes<[s0, s2, s1*s3]>> {
    %7 = loops.load %2[FloorDiv(i2 + i1*s1*s3 + i0*s1*s2*s3, s1*s2*s3), ModularIndexing(i2 + i1*s1*s3 + i0*s1*s2*s3, s1*s3, s2), ModularIndexing(i2 + i1*s1*s3 + i0*s1*s2*s3, s3, s1), ModularIndexing(i2 + i1*s1*s3 + i0*s1*s2*s3, 1, s3)] : tensor<?x?x?x?xf32, #sym.sizes<[s0, s2, s1, s3]>>
    loops.yield %7 : f32
  }
  func.return %6 : tensor<?x?x?xf32, #sym.sizes<[s0, s2, s1*s3]>>
}

// -----

// A value no reader needs in a given layout is stored in the order its loads walk memory
// (Inductor's get_fill_order): a relu of a channels-last input is stored channels-last, and the
// store walks memory as the load does. (The pooling here records no operand strides.)
// CHECK-LABEL: buffer.graph @read_order
// CHECK:         buffer.computed "buf0" #buffer.layout<[2, 3, 4, 4], [48, 1, 12, 3], f32>
// CHECK:           buffer.store @buf0[i1 + 3*i3 + 12*i2 + 48*i0]
func.func @read_order(%x: tensor<2x3x4x4xf32> {strides = array<i64: 48, 1, 12, 3>}) -> tensor<2x3x1x1xf32> {
  %y = loops.pointwise [2, 3, 4, 4] origins ["relu"] -> tensor<2x3x4x4xf32> {
    %0 = loops.load %x[i0, i1, i2, i3] : tensor<2x3x4x4xf32>
    %1 = arith.constant 0.000000e+00 : f32
    %2 = arith.maximumf %0, %1 : f32
    loops.yield %2 : f32
  }
  %p = loops.extern "_adaptive_avg_pool2d.default" (%y) {args = [#aten.tensor, array<i64: 1, 1>]} : (tensor<2x3x4x4xf32>) -> tensor<2x3x1x1xf32>
  func.return %p : tensor<2x3x1x1xf32>
}

// -----

// A load at loaded positions votes through them: a position computed from one loop variable
// and no loaded data (a max pool's backward gathering from a channels-last gradient, at the
// window `min(i2 floordiv 2, 1)`) moves as that variable does, so the gather is stored
// channels-last too. A position read from memory (the embedding row in @gathered_rows) gives
// its load no say: the written order stays.
// CHECK-LABEL: buffer.graph @window_gather
// CHECK:         buffer.computed "buf0" #buffer.layout<[2, 3, 4, 4], [48, 1, 12, 3], f32>
// CHECK:           buffer.load @g[i1 + 3*ind1 + 6*ind0 + 12*i0] indirect(%{{.*}}, %{{.*}}) : f32
// CHECK:           buffer.store @buf0[i1 + 3*i3 + 12*i2 + 48*i0]
func.func @window_gather(%g: tensor<2x3x2x2xf32> {strides = array<i64: 12, 1, 6, 3>}) -> tensor<2x3x1x1xf32> {
  %y = loops.pointwise [2, 3, 4, 4] origins ["max_pool2d_with_indices_backward"] -> tensor<2x3x4x4xf32> {
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
    %0 = loops.load %g[i0, i1, ind0, ind1] indirect(%ph, %pw) : tensor<2x3x2x2xf32>
    loops.yield %0 : f32
  }
  %p = loops.extern "_adaptive_avg_pool2d.default" (%y) {args = [#aten.tensor, array<i64: 1, 1>]} : (tensor<2x3x4x4xf32>) -> tensor<2x3x1x1xf32>
  func.return %p : tensor<2x3x1x1xf32>
}

// CHECK-LABEL: buffer.graph @gathered_rows
// CHECK:         buffer.computed "buf0" #buffer.layout<[4, 3, 2], [6, 2, 1], f32>
func.func @gathered_rows(%table: tensor<10x3x2xf32> {strides = array<i64: 1, 20, 10>}, %other: tensor<10x3x2xf32> {strides = array<i64: 1, 20, 10>}, %ids: tensor<4xi64>) -> tensor<4x1x1xf32> {
  %y = loops.pointwise [4, 3, 2] origins ["embedding"] -> tensor<4x3x2xf32> {
    %id = loops.load %ids[i0] : tensor<4xi64>
    %row = loops.indirect_index %id size 10 : i64
    %0 = loops.load %table[ind0, i1, i2] indirect(%row) : tensor<10x3x2xf32>
    %1 = loops.load %other[ind0, i1, i2] indirect(%row) : tensor<10x3x2xf32>
    %2 = arith.addf %0, %1 : f32
    loops.yield %2 : f32
  }
  %p = loops.extern "_adaptive_avg_pool2d.default" (%y) {args = [#aten.tensor, array<i64: 1, 1>]} : (tensor<4x3x2xf32>) -> tensor<4x1x1xf32>
  func.return %p : tensor<4x1x1xf32>
}

// -----

// A reader that reshapes it needs it row-major (a view merging dims is a window only on
// row-major storage, as Inductor freezes a flexible layout contiguous for it): the relu is
// stored row-major and the mm reads a view of it, no copy.
// CHECK-LABEL: buffer.graph @reshaped_reader
// CHECK:         buffer.computed "buf0" #buffer.layout<[2, 3, 4, 4], [48, 16, 4, 1], f32>
// CHECK:         buffer.view "view0" = @buf0 #buffer.layout<[2, 48], [48, 1], f32>
// CHECK-NEXT:    buffer.extern "buf1" = "mm.default" {args = [@view0, @w]
func.func @reshaped_reader(%x: tensor<2x3x4x4xf32> {strides = array<i64: 48, 1, 12, 3>}, %w: tensor<48x5xf32>) -> tensor<2x5xf32> {
  %y = loops.pointwise [2, 3, 4, 4] origins ["relu"] -> tensor<2x3x4x4xf32> {
    %0 = loops.load %x[i0, i1, i2, i3] : tensor<2x3x4x4xf32>
    %1 = arith.constant 0.000000e+00 : f32
    %2 = arith.maximumf %0, %1 : f32
    loops.yield %2 : f32
  }
  %v = loops.pointwise [2, 48] origins ["view"] -> tensor<2x48xf32> {
    %0 = loops.load %y[i0, FloorDiv(i1, 16), ModularIndexing(i1, 4, 4), ModularIndexing(i1, 1, 4)] : tensor<2x3x4x4xf32>
    loops.yield %0 : f32
  }
  %m = loops.extern "mm.default" (%v, %w) {args = [#aten.tensor, #aten.tensor]} : (tensor<2x48xf32>, tensor<48x5xf32>) -> tensor<2x5xf32>
  func.return %m : tensor<2x5xf32>
}
