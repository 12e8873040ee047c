// RUN: mlc-opt %s --split-input-file --lower-aten | filecheck %s

// A permute + reshape chain: each view is a pointwise whose body is one load of its source at
// the re-indexed position (never a copy). permute swaps the indices; a reshape that splits
// one dim reads it back with FloorDiv/ModularIndexing; a reshape that merges dims is linear.
// CHECK-LABEL: func.func @permute_then_reshape
func.func @permute_then_reshape(%x: tensor<8x64xf32>) -> tensor<4x128xf32> {
  // CHECK:      %[[P:.*]] = loops.pointwise [64, 8] origins ["permute"] -> tensor<64x8xf32> {
  // CHECK-NEXT:   %[[L:.*]] = loops.load %x[i1, i0] : tensor<8x64xf32>
  // CHECK-NEXT:   loops.yield %[[L]] : f32
  // CHECK-NEXT: }
  %p = aten.permute %x {dims = array<i64: 1, 0>} : (tensor<8x64xf32>) -> tensor<64x8xf32>
  // CHECK:      %[[F:.*]] = loops.pointwise [512] origins ["view"] -> tensor<512xf32> {
  // CHECK-NEXT:   loops.load %[[P]][FloorDiv(i0, 8), ModularIndexing(i0, 1, 8)] : tensor<64x8xf32>
  %f = aten.view %p {size = array<i64: 512>} : (tensor<64x8xf32>) -> tensor<512xf32>
  // CHECK:      loops.pointwise [4, 128] origins ["reshape"] -> tensor<4x128xf32> {
  // CHECK-NEXT:   loops.load %[[F]][i1 + 128*i0] : tensor<512xf32>
  %r = aten.reshape %f {shape = array<i64: 4, 128>} : (tensor<512xf32>) -> tensor<4x128xf32>
  func.return %r : tensor<4x128xf32>
}

// -----

// Reshape to the same shape loads at identity indices; size-1 dims read index 0; a split of
// the inner dim keeps the outer index as is.
// CHECK-LABEL: func.func @reshape_simple_cases
func.func @reshape_simple_cases(%x: tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x1x64xf32>, tensor<8x4x16xf32>) {
  // CHECK:      loops.load %x[i0, i1] : tensor<8x64xf32>
  %same = aten.view %x {size = array<i64: 8, 64>} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  // CHECK:      loops.load %x[i0, i2] : tensor<8x64xf32>
  %unsq = aten.unsqueeze %x {dim = 1 : i64} : (tensor<8x64xf32>) -> tensor<8x1x64xf32>
  // CHECK:      loops.load %x[i0, i2 + 16*i1] : tensor<8x64xf32>
  %split = aten.view %x {size = array<i64: 8, 4, 16>} : (tensor<8x64xf32>) -> tensor<8x4x16xf32>
  func.return %same, %unsq, %split : tensor<8x64xf32>, tensor<8x1x64xf32>, tensor<8x4x16xf32>
}

// -----

// expand reads index 0 on broadcast dims and skips the new leading dims; squeeze reads the
// dropped size-1 dim at 0; transpose and t swap indices.
// CHECK-LABEL: func.func @expand_squeeze_transpose
func.func @expand_squeeze_transpose(%b: tensor<1x64xf32>, %x: tensor<2x8x4xf32>) -> (tensor<3x8x64xf32>, tensor<64xf32>, tensor<4x8x2xf32>, tensor<64x1xf32>) {
  // CHECK:      loops.pointwise [3, 8, 64] origins ["expand"]
  // CHECK-NEXT:   loops.load %b[0, i2] : tensor<1x64xf32>
  %e = aten.expand %b {size = array<i64: 3, 8, 64>} : (tensor<1x64xf32>) -> tensor<3x8x64xf32>
  // CHECK:      loops.pointwise [64] origins ["squeeze"]
  // CHECK-NEXT:   loops.load %b[0, i0] : tensor<1x64xf32>
  %s = aten.squeeze.dim %b {dim = 0 : i64} : (tensor<1x64xf32>) -> tensor<64xf32>
  // CHECK:      loops.pointwise [4, 8, 2] origins ["transpose"]
  // CHECK-NEXT:   loops.load %x[i2, i1, i0] : tensor<2x8x4xf32>
  %t = aten.transpose.int %x {dim0 = 0 : i64, dim1 = -1 : i64} : (tensor<2x8x4xf32>) -> tensor<4x8x2xf32>
  // CHECK:      loops.pointwise [64, 1] origins ["t"]
  // CHECK-NEXT:   loops.load %b[i1, i0] : tensor<1x64xf32>
  %bt = aten.t %b : (tensor<1x64xf32>) -> tensor<64x1xf32>
  func.return %e, %s, %t, %bt : tensor<3x8x64xf32>, tensor<64xf32>, tensor<4x8x2xf32>, tensor<64x1xf32>
}

// -----

// slice normalizes negative and out-of-range bounds as torch does (start -6 of 8 is 2; the end
// only decides the size); select drops a dim at a fixed index; flip reads size - 1 - i.
// CHECK-LABEL: func.func @slice_select_flip
func.func @slice_select_flip(%x: tensor<4x8xf32>) -> (tensor<4x3xf32>, tensor<3x8xf32>, tensor<4xf32>, tensor<4x8xf32>) {
  // CHECK:      loops.pointwise [4, 3] origins ["slice"]
  // CHECK-NEXT:   loops.load %x[i0, 2 + 2*i1] : tensor<4x8xf32>
  %s = aten.slice.Tensor %x {dim = 1 : i64, start = -6 : i64, end = 9223372036854775807 : i64, step = 2 : i64} : (tensor<4x8xf32>) -> tensor<4x3xf32>
  // CHECK:      loops.pointwise [3, 8] origins ["slice"]
  // CHECK-NEXT:   loops.load %x[i0, i1] : tensor<4x8xf32>
  %c = aten.slice.Tensor %x {dim = 0 : i64, start = -100 : i64, end = 3 : i64} : (tensor<4x8xf32>) -> tensor<3x8xf32>
  // CHECK:      loops.pointwise [4] origins ["select"]
  // CHECK-NEXT:   loops.load %x[i0, 7] : tensor<4x8xf32>
  %sel = aten.select.int %x {dim = 1 : i64, index = -1 : i64} : (tensor<4x8xf32>) -> tensor<4xf32>
  // CHECK:      loops.pointwise [4, 8] origins ["flip"]
  // CHECK-NEXT:   loops.load %x[3 - i0, i1] : tensor<4x8xf32>
  %f = aten.flip %x {dims = array<i64: 0>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %s, %c, %sel, %f : tensor<4x3xf32>, tensor<3x8xf32>, tensor<4xf32>, tensor<4x8xf32>
}

// -----

// Views move data and never widen: an f16 view yields the loaded f16 as is.
// CHECK-LABEL: func.func @f16_view_is_a_raw_load
func.func @f16_view_is_a_raw_load(%x: tensor<8x64xf16>) -> tensor<64x8xf16> {
  // CHECK:      loops.pointwise [64, 8] origins ["permute"] -> tensor<64x8xf16> {
  // CHECK-NEXT:   %[[L:.*]] = loops.load %x[i1, i0] : tensor<8x64xf16>
  // CHECK-NEXT:   loops.yield %[[L]] : f16
  %p = aten.permute %x {dims = array<i64: 1, 0>} : (tensor<8x64xf16>) -> tensor<64x8xf16>
  func.return %p : tensor<64x8xf16>
}
