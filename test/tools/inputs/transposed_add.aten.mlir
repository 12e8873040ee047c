// The aten IR of transposed_add.mlir: x + y, y broadcast over the rows.
func.func @transposed_add(%x: tensor<4x8xf32>, %y: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = aten.add.Tensor %x, %y : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}
