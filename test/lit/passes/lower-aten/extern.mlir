// RUN: mlc-opt %s --split-input-file --lower-aten | filecheck %s
// RUN: mlc-opt %s --split-input-file --lower-aten="fallback=gelu" | filecheck %s --check-prefix=FALLBACK

// mm, addmm and convolution stay aten calls (as Inductor's extern kernels). The overload is
// spelled packet.overload; tensors are #aten.tensor marks in operand order, other arguments are
// attributes by position, keyword-only ones (addmm's beta/alpha) are kwargs; the bias stays an
// ordinary pointwise that loads the extern's result. `fresh`: the op's schema says it returns
// new tensors (plan-buffers may reuse its arguments' storage after it).
// CHECK-LABEL: func.func @linear_with_extern
func.func @linear_with_extern(%x: tensor<8x32xf32>, %w: tensor<32x64xf32>, %b: tensor<64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>) {
  // CHECK:      %[[MM:.*]] = loops.extern "mm.default" (%x, %w) {args = [#aten.tensor, #aten.tensor]} attributes {fresh} : (tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
  %mm = aten.mm %x, %w : (tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
  // CHECK:      loops.pointwise [8, 64] origins ["add"]
  // CHECK-NEXT:   loops.load %[[MM]][i0, i1] : tensor<8x64xf32>
  // CHECK-NEXT:   loops.load %b[i1] : tensor<64xf32>
  %y = aten.add.Tensor %mm, %b : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  // CHECK:      loops.extern "addmm.default" (%b, %x, %w) {args = [#aten.tensor, #aten.tensor, #aten.tensor], kwargs = {beta = 2 : i64}} attributes {fresh} : (tensor<64xf32>, tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
  %z = aten.addmm %b, %x, %w {beta = 2 : i64} : (tensor<64xf32>, tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
  func.return %y, %z : tensor<8x64xf32>, tensor<8x64xf32>
}

// -----

// Seed 002's convolution: an optional tensor that is absent is #aten.none; the importer's
// origin tag and the location stay on the extern.
// CHECK-LABEL: func.func @convolution_without_bias
func.func @convolution_without_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // CHECK:      loops.extern "convolution.default" (%x, %w) {args = [#aten.tensor, #aten.tensor, #aten.none, array<i64: 1, 1>, array<i64: 0, 0>, array<i64: 1, 1>, false, array<i64: 0, 0>, 1 : i64]} attributes {fresh, origin = "conv2d"}
  %c = aten.convolution %x, %w, none {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64} attributes {origin = "conv2d"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %c : tensor<1x4x6x6xf32>
}

// -----

// Ops without a rule become externs: a gather from a float index tensor (a case the rule
// refuses) and any aten.call (arguments passed through, and its attributes: `fresh` only where
// the importer recorded it); a multi-result op keeps all its results on one extern.
// CHECK-LABEL: func.func @fallbacks
func.func @fallbacks(%x: tensor<8x64xf32>, %idx: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x64xf32>, tensor<8x64xi64>, tensor<8x64xf32>) {
  // CHECK:      loops.extern "gather.default" (%x, %idx) {args = [#aten.tensor, 1 : i64, #aten.tensor]}
  %g = aten.gather %x, %idx {dim = 1 : i64} : (tensor<8x64xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  // CHECK:      %{{.*}}, %{{.*}} = loops.extern "sort.default" (%x) {args = [#aten.tensor, 1 : i64]} attributes {fresh} : (tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xi64>)
  %v, %i = aten.call "sort" (%x) {args = [#aten.tensor, 1 : i64]} attributes {fresh} : (tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xi64>)
  // CHECK:      loops.extern "cumsum.default" (%x) {args = [#aten.tensor, 1 : i64]} : (tensor<8x64xf32>)
  %c = aten.call "cumsum" (%x) {args = [#aten.tensor, 1 : i64]} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  func.return %g, %v, %i, %c : tensor<8x4xf32>, tensor<8x64xf32>, tensor<8x64xi64>, tensor<8x64xf32>
}

// -----

// The `fallback` option keeps a lowerable op as an extern call.
// CHECK-LABEL: func.func @forced_fallback
// FALLBACK-LABEL: func.func @forced_fallback
func.func @forced_fallback(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // CHECK:         loops.pointwise [8, 64] origins ["gelu"]
  // CHECK:           math.erf
  // FALLBACK:      loops.extern "gelu.default" (%x) {args = [#aten.tensor]}
  // FALLBACK-NOT:  loops.pointwise
  %g = aten.gelu %x : (tensor<8x64xf32>) -> tensor<8x64xf32>
  func.return %g : tensor<8x64xf32>
}

// -----

// A complex scalar argument is a #complex.number; complex tensors are computed by aten.
// CHECK-LABEL: func.func @complex_scalar
func.func @complex_scalar(%x: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  // CHECK: loops.extern "mul.Scalar" (%x) {args = [#aten.tensor, #complex.number<:f64 0.000000e+00, 1.000000e+00> : complex<f64>]}
  %0 = aten.mul.Scalar %x {other = #complex.number<:f64 0.0, 1.0> : complex<f64>} : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  func.return %0 : tensor<4xcomplex<f32>>
}
