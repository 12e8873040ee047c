// RUN: mlc-opt %s --split-input-file --lower-aten --inline --realize="explain=true" | filecheck %s

// (x + 1).t() @ w: the mm reads a transpose of a pointwise. The pointwise is stored in its own
// order and the mm gets a strided view of it (Inductor's ReinterpretView), rather than a copy
// written in the transposed order.
// CHECK:      buffer.computed "buf0" #buffer.layout<[64, 32], [32, 1], f32> ranges [64, 32] origins ["add"] {
// CHECK:      } attributes {realize_reason = "viewed by extern 'mm.default'"}
// CHECK-NEXT: buffer.view "view0" = @buf0 #buffer.layout<[32, 64], [1, 32], f32> {realize_reason = "read by extern 'mm.default'"}
// CHECK-NEXT: buffer.extern "buf1" = "mm.default" {args = [@view0, @w], fresh, origins = ["mm"]}
func.func @transposed_operand(%x: tensor<64x32xf32>, %w: tensor<64x16xf32>) -> tensor<32x16xf32> {
  %c = aten.add.Scalar %x {other = 1.000000e+00 : f64} attributes {origin = "add"} : (tensor<64x32xf32>) -> tensor<64x32xf32>
  %t = aten.permute %c {dims = array<i64: 1, 0>} : (tensor<64x32xf32>) -> tensor<32x64xf32>
  %0 = aten.mm %t, %w attributes {origin = "mm"} : (tensor<32x64xf32>, tensor<64x16xf32>) -> tensor<32x16xf32>
  func.return %0 : tensor<32x16xf32>
}

// -----

// Attention's probabilities: the bmm reads them through two views (an expand, then a view
// merging batch and heads), and a `detach` of them is saved for the backward. Stored once in
// their own order (the two views compose to a strided window on them), both readers get views
// of the one buffer; inlined into the first view, they were computed and stored twice.
// CHECK-LABEL: buffer.graph @probabilities_saved_and_multiplied
// CHECK:       buffer.computed "buf0" #buffer.layout<[2, 2, 16, 16], [512, 256, 16, 1], f32> ranges [2, 2, 16, 16] origins ["exp"] {
// CHECK-NOT:   buffer.computed
// CHECK:       buffer.view "view0" = @buf0 #buffer.layout<[2, 2, 16, 16], [512, 256, 16, 1], f32> {realize_reason = "graph output"}
// CHECK-NEXT:  buffer.view "view1" = @buf0 #buffer.layout<[4, 16, 16], [256, 16, 1], f32> {realize_reason = "read by extern 'bmm.default'"}
// CHECK-NEXT:  buffer.extern "buf1" = "bmm.default" {args = [@view1, @v], fresh, origins = ["bmm"]}
func.func @probabilities_saved_and_multiplied(%x: tensor<2x2x16x16xf32>, %v: tensor<4x16x8xf32>) -> (tensor<4x16x8xf32>, tensor<2x2x16x16xf32>) {
  %p = aten.exp %x attributes {origin = "exp"} : (tensor<2x2x16x16xf32>) -> tensor<2x2x16x16xf32>
  %saved = aten.alias %p attributes {origin = "detach"} : (tensor<2x2x16x16xf32>) -> tensor<2x2x16x16xf32>
  %e = aten.expand %p {size = array<i64: 2, 2, 16, 16>} : (tensor<2x2x16x16xf32>) -> tensor<2x2x16x16xf32>
  %r = aten.view %e {size = array<i64: 4, 16, 16>} : (tensor<2x2x16x16xf32>) -> tensor<4x16x16xf32>
  %0 = aten.bmm %r, %v attributes {origin = "bmm"} : (tensor<4x16x16xf32>, tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  func.return %0, %saved : tensor<4x16x8xf32>, tensor<2x2x16x16xf32>
}

// -----

// Heads gathered for a bmm: a permute, an expand and a view merging batch and heads. The three
// compose to no strided window on the scaled input (batch and head are not adjacent in it), so
// it is not stored itself: it is inlined into the permute, which is stored in the order the
// bmm reads, and no copy follows.
// CHECK-LABEL: buffer.graph @heads_gathered
// CHECK:       buffer.computed "buf0" #buffer.layout<[2, 2, 16, 8], [256, 128, 8, 1], f32> ranges [2, 2, 16, 8] origins ["mul", "permute"] {
// CHECK:       buffer.view "view0" = @buf0 #buffer.layout<[4, 16, 8], [128, 8, 1], f32> {realize_reason = "read by extern 'bmm.default'"}
// CHECK-NEXT:  buffer.extern "buf1" = "bmm.default" {args = [@view0, @k], fresh, origins = ["bmm"]}
func.func @heads_gathered(%x: tensor<2x16x2x8xf32>, %k: tensor<4x8x16xf32>) -> tensor<4x16x16xf32> {
  %q = aten.mul.Scalar %x {other = 5.000000e-01 : f64} attributes {origin = "mul"} : (tensor<2x16x2x8xf32>) -> tensor<2x16x2x8xf32>
  %t = aten.permute %q {dims = array<i64: 0, 2, 1, 3>} : (tensor<2x16x2x8xf32>) -> tensor<2x2x16x8xf32>
  %e = aten.expand %t {size = array<i64: 2, 2, 16, 8>} : (tensor<2x2x16x8xf32>) -> tensor<2x2x16x8xf32>
  %r = aten.view %e {size = array<i64: 4, 16, 8>} : (tensor<2x2x16x8xf32>) -> tensor<4x16x8xf32>
  %0 = aten.bmm %r, %k attributes {origin = "bmm"} : (tensor<4x16x8xf32>, tensor<4x8x16xf32>) -> tensor<4x16x16xf32>
  func.return %0 : tensor<4x16x16xf32>
}

// -----

// Attention's backward hands q's gradient to two mms: transposed to [batch, seq, heads, dim],
// cloned, viewed as a [tokens, hidden] matrix that one mm reads and the other reads transposed.
// Neither view is a window on the gradient (heads and dim are not adjacent in it), so the
// permute, a reordered copy, is stored once in the order the views need, and both mms read
// views of it; folded into each view, every mm was handed its own copy.
// CHECK-LABEL: buffer.graph @gradient_cloned_for_two_mms
// CHECK:       buffer.computed "buf0" #buffer.layout<[2, 4, 8, 16], [512, 128, 16, 1], f32> ranges [2, 4, 8, 16] origins ["mul"] {
// CHECK:       buffer.computed "buf1" #buffer.layout<[2, 8, 4, 16], [512, 64, 16, 1], f32> ranges [2, 8, 4, 16] origins ["transpose"] {
// CHECK:       } attributes {realize_reason = "reordered copy viewed by extern 'mm.default'"}
// CHECK-NEXT:  buffer.view "view0" = @buf1 #buffer.layout<[16, 64], [64, 1], f32> {realize_reason = "read by extern 'mm.default'"}
// CHECK-NEXT:  buffer.view "view1" = @buf1 #buffer.layout<[64, 16], [1, 64], f32> {realize_reason = "read by extern 'mm.default'"}
// CHECK-NEXT:  buffer.extern "buf2" = "mm.default" {args = [@view1, @x], fresh, origins = ["mm"]}
// CHECK-NEXT:  buffer.extern "buf3" = "mm.default" {args = [@view0, @w], fresh, origins = ["mm"]}
func.func @gradient_cloned_for_two_mms(%g: tensor<2x4x8x16xf32>, %x: tensor<16x64xf32>, %w: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<16x64xf32>, tensor<2x4x8x16xf32>) {
  %p = aten.mul.Scalar %g {other = 2.000000e+00 : f64} attributes {origin = "mul"} : (tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  %t = aten.permute %p {dims = array<i64: 0, 2, 1, 3>} attributes {origin = "transpose"} : (tensor<2x4x8x16xf32>) -> tensor<2x8x4x16xf32>
  %c = aten.clone %t {memory_format = "contiguous_format"} attributes {origin = "clone"} : (tensor<2x8x4x16xf32>) -> tensor<2x8x4x16xf32>
  %v = aten.view %c {size = array<i64: 16, 64>} : (tensor<2x8x4x16xf32>) -> tensor<16x64xf32>
  %vt = aten.permute %v {dims = array<i64: 1, 0>} : (tensor<16x64xf32>) -> tensor<64x16xf32>
  %dw = aten.mm %vt, %x attributes {origin = "mm"} : (tensor<64x16xf32>, tensor<16x64xf32>) -> tensor<64x64xf32>
  %dx = aten.mm %v, %w attributes {origin = "mm"} : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  func.return %dw, %dx, %p : tensor<64x64xf32>, tensor<16x64xf32>, tensor<2x4x8x16xf32>
}

// -----

// The same views of an input whose memory is already [batch, seq, heads, dim] (attention's
// output comes so): they are windows on the input itself, and no copy is made. The rule above
// judges only copies of computed ops, stored row-major; an input or an extern's result has
// strides of its own, which --realize reads.
// CHECK-LABEL: buffer.graph @attention_output_to_two_mms
// CHECK-NOT:   buffer.computed
// CHECK:       buffer.view "view0" = @o #buffer.layout<[16, 64], [64, 1], f32> {realize_reason = "read by extern 'mm.default'"}
// CHECK-NEXT:  buffer.view "view1" = @o #buffer.layout<[64, 16], [1, 64], f32> {realize_reason = "read by extern 'mm.default'"}
func.func @attention_output_to_two_mms(%o: tensor<2x4x8x16xf32> {strides = array<i64: 512, 16, 64, 1>}, %x: tensor<16x64xf32>, %w: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<16x64xf32>) {
  %t = aten.permute %o {dims = array<i64: 0, 2, 1, 3>} attributes {origin = "transpose"} : (tensor<2x4x8x16xf32>) -> tensor<2x8x4x16xf32>
  %c = aten.clone %t {memory_format = "contiguous_format"} attributes {origin = "clone"} : (tensor<2x8x4x16xf32>) -> tensor<2x8x4x16xf32>
  %v = aten.view %c {size = array<i64: 16, 64>} : (tensor<2x8x4x16xf32>) -> tensor<16x64xf32>
  %vt = aten.permute %v {dims = array<i64: 1, 0>} : (tensor<16x64xf32>) -> tensor<64x16xf32>
  %dw = aten.mm %vt, %x attributes {origin = "mm"} : (tensor<64x16xf32>, tensor<16x64xf32>) -> tensor<64x64xf32>
  %dx = aten.mm %v, %w attributes {origin = "mm"} : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
  func.return %dw, %dx : tensor<64x64xf32>, tensor<16x64xf32>
}

// -----

// pad-mm's padded result rows (`out`, result_strides not dense): the extern's buffer is laid out
// with them, rows 1024 apart, and the call writes into it (`out`); its reader, a pointwise,
// loads the 1023 columns of each row through that layout.
// CHECK-LABEL: buffer.graph @result_rows_padded
// CHECK:       buffer.extern "buf0" = "mm.default" {args = [@x, @view0], fresh, out, origins = ["mm"]} : #buffer.layout<[256, 1023], [1024, 1], bf16>
// CHECK:       buffer.computed "buf1" #buffer.layout<[256, 1023], [1023, 1], bf16>
// CHECK:       buffer.load @buf0[{{.*}}1024*
func.func @result_rows_padded(%x: tensor<256x1024xbf16>, %w: tensor<1023x1024xbf16>) -> tensor<256x1023xbf16> {
  %t = aten.permute %w {dims = array<i64: 1, 0>} : (tensor<1023x1024xbf16>) -> tensor<1024x1023xbf16>
  %0 = aten.mm %x, %t attributes {origin = "mm", result_strides = [array<i64: 1024, 1>], out} : (tensor<256x1024xbf16>, tensor<1024x1023xbf16>) -> tensor<256x1023xbf16>
  %1 = aten.tanh %0 : (tensor<256x1023xbf16>) -> tensor<256x1023xbf16>
  func.return %1 : tensor<256x1023xbf16>
}

// -----

// Attention's queries in the math path at bf16: split into heads (a permute), cast to f32 and
// scaled, then an expand, a clone and a view merging batch and heads before the bmm, and the
// view saved (transposed) for the backward. The cast is stored for the bmm's views, which
// compose to a window on it only if it is stored row-major: so it is, rather than in the
// order its loads walk the projection (heads' transposed order), which took a second kernel
// copying it for the bmm (BERT: three per layer).
// CHECK-LABEL: buffer.graph @heads_cast_then_gathered
// CHECK:       buffer.computed "buf0" #buffer.layout<[2, 2, 8, 16], [256, 128, 16, 1], f32> ranges [2, 2, 8, 16] origins ["_to_copy", "mul", "transpose"] {
// CHECK:       } attributes {realize_reason = "viewed by extern 'bmm.default' through views"}
// CHECK-NOT:   buffer.computed
// CHECK:       buffer.view "view0" = @buf0 #buffer.layout<[4, 8, 16], [128, 16, 1], f32> {realize_reason = "read by extern 'bmm.default'"}
// CHECK-NEXT:  buffer.extern "buf1" = "bmm.default" {args = [@view0, @k], fresh, origins = ["bmm"]}
// CHECK-NEXT:  buffer.view "view1" = @buf0 #buffer.layout<[4, 16, 8], [128, 1, 16], f32> {realize_reason = "graph output"}
func.func @heads_cast_then_gathered(%x: tensor<2x8x2x16xbf16>, %k: tensor<4x16x8xf32>) -> (tensor<4x8x8xf32>, tensor<4x16x8xf32>) {
  %t = aten.permute %x {dims = array<i64: 0, 2, 1, 3>} attributes {result_strides = [array<i64: 256, 16, 32, 1>], origin = "transpose"} : (tensor<2x8x2x16xbf16>) -> tensor<2x2x8x16xbf16>
  %f = aten._to_copy %t {dtype = f32} attributes {result_strides = [array<i64: 256, 16, 32, 1>]} : (tensor<2x2x8x16xbf16>) -> tensor<2x2x8x16xf32>
  %q = aten.mul.Scalar %f {other = 5.000000e-01 : f64} attributes {result_strides = [array<i64: 256, 16, 32, 1>], origin = "mul"} : (tensor<2x2x8x16xf32>) -> tensor<2x2x8x16xf32>
  %e = aten.expand %q {size = array<i64: 2, 2, 8, 16>} attributes {result_strides = [array<i64: 256, 16, 32, 1>]} : (tensor<2x2x8x16xf32>) -> tensor<2x2x8x16xf32>
  %c = aten.clone %e {memory_format = "contiguous_format"} : (tensor<2x2x8x16xf32>) -> tensor<2x2x8x16xf32>
  %r = aten.view %c {size = array<i64: 4, 8, 16>} attributes {origin = "_unsafe_view"} : (tensor<2x2x8x16xf32>) -> tensor<4x8x16xf32>
  %0 = aten.bmm %r, %k attributes {origin = "bmm"} : (tensor<4x8x16xf32>, tensor<4x16x8xf32>) -> tensor<4x8x8xf32>
  %s = aten.permute %r {dims = array<i64: 0, 2, 1>} attributes {result_strides = [array<i64: 128, 1, 16>], origin = "transpose"} : (tensor<4x8x16xf32>) -> tensor<4x16x8xf32>
  func.return %0, %s : tensor<4x8x8xf32>, tensor<4x16x8xf32>
}
