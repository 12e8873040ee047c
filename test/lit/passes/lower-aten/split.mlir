// RUN: mlc-opt %s --split-input-file --lower-aten | filecheck %s

// split, split_with_sizes and unbind have several results: one view (a pointwise of one load)
// per piece, each offset along the split dim; unbind reads a fixed index instead.
// CHECK-LABEL: func.func @split_pieces
func.func @split_pieces(%x: tensor<4x8xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x2xf32>) {
  // CHECK:      loops.pointwise [4, 3] origins ["split"] -> tensor<4x3xf32> {
  // CHECK-NEXT:   loops.load %x[i0, i1] : tensor<4x8xf32>
  // CHECK:      loops.pointwise [4, 3] origins ["split"] -> tensor<4x3xf32> {
  // CHECK-NEXT:   loops.load %x[i0, 3 + i1] : tensor<4x8xf32>
  // CHECK:      loops.pointwise [4, 2] origins ["split"] -> tensor<4x2xf32> {
  // CHECK-NEXT:   loops.load %x[i0, 6 + i1] : tensor<4x8xf32>
  %p:3 = aten.split.Tensor %x {split_size = 3 : i64, dim = 1 : i64} : (tensor<4x8xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x2xf32>)
  func.return %p#0, %p#1, %p#2 : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x2xf32>
}

// -----

// CHECK-LABEL: func.func @split_with_sizes_and_unbind
func.func @split_with_sizes_and_unbind(%x: tensor<4x8xf32>) -> (tensor<3x8xf32>, tensor<4xf32>) {
  // CHECK:      loops.pointwise [1, 8] origins ["split_with_sizes"]
  // CHECK-NEXT:   loops.load %x[i0, i1] : tensor<4x8xf32>
  // CHECK:      loops.pointwise [3, 8] origins ["split_with_sizes"]
  // CHECK-NEXT:   loops.load %x[1 + i0, i1] : tensor<4x8xf32>
  %s:2 = aten.split_with_sizes %x {split_sizes = array<i64: 1, 3>} : (tensor<4x8xf32>) -> (tensor<1x8xf32>, tensor<3x8xf32>)
  // CHECK-COUNT-7: loops.pointwise [4] origins ["unbind"]
  // CHECK:      loops.pointwise [4] origins ["unbind"]
  // CHECK-NEXT:   loops.load %x[i0, 7] : tensor<4x8xf32>
  %u:8 = aten.unbind.int %x {dim = 1 : i64} : (tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  func.return %s#1, %u#7 : tensor<3x8xf32>, tensor<4xf32>
}
