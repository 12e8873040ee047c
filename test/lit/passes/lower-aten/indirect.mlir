// RUN: mlc-opt %s --split-input-file --lower-aten | filecheck %s

// x[i, j] with index tensors of shapes [4, 1] and [5] on adjacent dims: they broadcast to
// [4, 5], which takes their place in the result; each element of an index tensor is made a
// position (loops.indirect_index: negative values count from the end) and named ind0, ind1
// in the one load of x. No extern: the gather is a pointwise and fuses like one.
// CHECK-LABEL: func.func @index_adjacent
func.func @index_adjacent(%x: tensor<3x7x9xf32>, %i: tensor<4x1xi64>, %j: tensor<5xi32>) -> tensor<3x4x5xf32> {
  // CHECK:      loops.pointwise [3, 4, 5] origins ["index"] -> tensor<3x4x5xf32> {
  // CHECK-NEXT:   %[[I:.*]] = loops.load %i[i1, 0] : tensor<4x1xi64>
  // CHECK-NEXT:   %[[P:.*]] = loops.indirect_index %[[I]] size 7 : i64
  // CHECK-NEXT:   %[[J:.*]] = loops.load %j[i2] : tensor<5xi32>
  // CHECK-NEXT:   %[[Q:.*]] = loops.indirect_index %[[J]] size 9 : i32
  // CHECK-NEXT:   %[[V:.*]] = loops.load %x[i0, ind0, ind1] indirect(%[[P]], %[[Q]]) : tensor<3x7x9xf32>
  // CHECK-NEXT:   loops.yield %[[V]] : f32
  // CHECK-NOT:  loops.extern
  %0 = aten.call "index.Tensor" (%x, %i, %j) {args = [#aten.tensor, [#aten.none, #aten.tensor, #aten.tensor]]} : (tensor<3x7x9xf32>, tensor<4x1xi64>, tensor<5xi32>) -> tensor<3x4x5xf32> loc("index")
  func.return %0 : tensor<3x4x5xf32>
}

// -----

// x[i, :, j]: the indexed dims are not adjacent, so the broadcast index dims lead (NumPy's
// rule) and the sliced dim follows.
// CHECK-LABEL: func.func @index_apart
func.func @index_apart(%x: tensor<3x7x9xf32>, %i: tensor<2xi64>, %j: tensor<2xi64>) -> tensor<2x7xf32> {
  // CHECK:      loops.pointwise [2, 7] origins ["index"] -> tensor<2x7xf32> {
  // CHECK-NEXT:   loops.load %i[i0] : tensor<2xi64>
  // CHECK-NEXT:   loops.indirect_index %{{.*}} size 3 : i64
  // CHECK-NEXT:   loops.load %j[i0] : tensor<2xi64>
  // CHECK-NEXT:   loops.indirect_index %{{.*}} size 9 : i64
  // CHECK-NEXT:   loops.load %x[ind0, i1, ind1] indirect(%{{.*}}, %{{.*}}) : tensor<3x7x9xf32>
  %0 = aten.call "index.Tensor" (%x, %i, %j) {args = [#aten.tensor, [#aten.tensor, #aten.none, #aten.tensor]]} : (tensor<3x7x9xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x7xf32> loc("index")
  func.return %0 : tensor<2x7xf32>
}

// -----

// A boolean mask selects a data-dependent number of elements: it stays an extern call.
// CHECK-LABEL: func.func @index_by_mask
func.func @index_by_mask(%x: tensor<8xf32>, %m: tensor<8xi1>) -> tensor<3xf32> {
  // CHECK: loops.extern "index.Tensor"
  %0 = aten.index.Tensor %x, [%m] : (tensor<8xf32>, tensor<8xi1>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

// gather along dim 1: the output walks the index tensor's shape; dim 1 reads at the position.
// CHECK-LABEL: func.func @gather
func.func @gather(%x: tensor<8x64xf32>, %idx: tensor<8x4xi64>) -> tensor<8x4xf32> {
  // CHECK:      loops.pointwise [8, 4] origins ["gather"] -> tensor<8x4xf32> {
  // CHECK-NEXT:   %[[T:.*]] = loops.load %idx[i0, i1] : tensor<8x4xi64>
  // CHECK-NEXT:   %[[P:.*]] = loops.indirect_index %[[T]] size 64 : i64
  // CHECK-NEXT:   loops.load %x[i0, ind0] indirect(%[[P]]) : tensor<8x64xf32>
  %0 = aten.gather %x, %idx {dim = -1 : i64} : (tensor<8x64xf32>, tensor<8x4xi64>) -> tensor<8x4xf32> loc("gather")
  func.return %0 : tensor<8x4xf32>
}

// -----

// embedding: row ids[n] of the weight, for every column; a bf16 table is copied, not widened.
// CHECK-LABEL: func.func @embedding
func.func @embedding(%w: tensor<50x16xbf16>, %ids: tensor<2x3xi64>) -> tensor<2x3x16xbf16> {
  // CHECK:      loops.pointwise [2, 3, 16] origins ["embedding"] -> tensor<2x3x16xbf16> {
  // CHECK-NEXT:   %[[T:.*]] = loops.load %ids[i0, i1] : tensor<2x3xi64>
  // CHECK-NEXT:   %[[P:.*]] = loops.indirect_index %[[T]] size 50 : i64
  // CHECK-NEXT:   %[[V:.*]] = loops.load %w[ind0, i2] indirect(%[[P]]) : tensor<50x16xbf16>
  // CHECK-NEXT:   loops.yield %[[V]] : bf16
  %0 = aten.embedding %w, %ids : (tensor<50x16xbf16>, tensor<2x3xi64>) -> tensor<2x3x16xbf16> loc("embedding")
  func.return %0 : tensor<2x3x16xbf16>
}
