// RUN: mlc-opt %s --lower-aten --inline --realize="explain=true" | filecheck %s

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
