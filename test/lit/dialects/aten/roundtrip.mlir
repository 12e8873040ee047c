// RUN: mlc-opt %s | mlc-opt | filecheck %s
// RUN: mlc-opt %s --print-op-generic | mlc-opt | filecheck %s
// RUN: mlc-opt %s --print-debuginfo | filecheck %s --check-prefix=LOC

// Tensor arguments print positionally, the rest as a dictionary keyed by schema name.
// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%x: tensor<8x64xf32>, %b: tensor<64xf32>) -> tensor<8x64xf32> {
  // CHECK: %{{.*}} = aten.add.Tensor %x, %b {alpha = 2 : i64} : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  %0 = aten.add.Tensor %x, %b {alpha = 2 : i64} : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32> loc("add")
  // CHECK: aten.mul.Scalar %{{.*}} {other = 5.000000e-01 : f64}
  %1 = aten.mul.Scalar %0 {other = 0.5 : f64} : (tensor<8x64xf32>) -> tensor<8x64xf32> loc("mul")
  // CHECK: aten._to_copy %{{.*}} {dtype = f16}
  %2 = aten._to_copy %1 {dtype = f16} : (tensor<8x64xf32>) -> tensor<8x64xf16>
  // LOC: loc("add")
  func.return %1 : tensor<8x64xf32>
}

// Lists of tensors are bracketed; an absent optional tensor is `none`.
// CHECK-LABEL: func.func @lists_and_optionals
func.func @lists_and_optionals(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // CHECK: aten.cat [%x, %x] {dim = 1 : i64}
  %0 = aten.cat [%x, %x] {dim = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>) -> tensor<1x6x8x8xf32>
  // CHECK: aten.convolution %x, %w, none {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64}
  %1 = aten.convolution %x, %w, none {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// Multi-result overloads and the generic aten.call.
// CHECK-LABEL: func.func @multi_result_and_call
func.func @multi_result_and_call(%x: tensor<8x64xf32>) {
  // CHECK: %{{.*}}, %{{.*}} = aten.max.dim %x {dim = 1 : i64} : (tensor<8x64xf32>) -> (tensor<8xf32>, tensor<8xi64>)
  %v, %i = aten.max.dim %x {dim = 1 : i64} : (tensor<8x64xf32>) -> (tensor<8xf32>, tensor<8xi64>)
  // CHECK: aten.call "cumsum.default" (%x) {args = [#aten.tensor, 1 : i64], kwargs = {dtype = #aten.none}} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  %c = aten.call "cumsum.default" (%x) {args = [#aten.tensor, 1 : i64], kwargs = {dtype = #aten.none}} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  func.return
}

// Dims in range verify: negative ones count from the end, a 0-d tensor takes 0 and -1,
// unsqueeze one past the last, cat skips legacy empty [0] tensors, keepdim keeps size 1.
// CHECK-LABEL: func.func @dims_in_range
func.func @dims_in_range(%x: tensor<8x64xf32>, %s: tensor<f32>, %e: tensor<0xf32>) {
  // CHECK: aten.sum.dim_IntList %x {dim = array<i64: -1>, keepdim = true}
  %0 = aten.sum.dim_IntList %x {dim = array<i64: -1>, keepdim = true} : (tensor<8x64xf32>) -> tensor<8x1xf32>
  // CHECK: aten.amax %s {dim = array<i64: -1>}
  %1 = aten.amax %s {dim = array<i64: -1>} : (tensor<f32>) -> tensor<f32>
  // CHECK: aten.permute %x {dims = array<i64: -1, 0>}
  %2 = aten.permute %x {dims = array<i64: -1, 0>} : (tensor<8x64xf32>) -> tensor<64x8xf32>
  // CHECK: aten.unsqueeze %x {dim = 2 : i64}
  %3 = aten.unsqueeze %x {dim = 2 : i64} : (tensor<8x64xf32>) -> tensor<8x64x1xf32>
  // CHECK: aten.cat [%e, %x] {dim = -1 : i64}
  %4 = aten.cat [%e, %x] {dim = -1 : i64} : (tensor<0xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  // CHECK: aten.select.int %x {dim = 0 : i64, index = -8 : i64}
  %5 = aten.select.int %x {dim = 0 : i64, index = -8 : i64} : (tensor<8x64xf32>) -> tensor<64xf32>
  func.return
}
