// RUN: mlc-opt %s --split-input-file --lower-aten | filecheck %s

// index_put(x, [i], v, accumulate=True): a copy of x, then a scatter over v's shape that adds
// v[n, d] at row i[n] (positions repeat: atomic adds).
// CHECK-LABEL: func.func @index_put_accumulate
func.func @index_put_accumulate(%x: tensor<20x8xf32>, %i: tensor<30xi64>, %v: tensor<30x8xf32>) -> tensor<20x8xf32> {
  // CHECK:      %[[C:.*]] = loops.pointwise [20, 8] origins ["index_put"] -> tensor<20x8xf32> {
  // CHECK-NEXT:   %[[X:.*]] = loops.load %x[i0, i1] : tensor<20x8xf32>
  // CHECK-NEXT:   loops.yield %[[X]] : f32
  // CHECK:      loops.scatter %[[C]] [30, 8] atomic_add origins ["index_put"] -> tensor<20x8xf32> {
  // CHECK-NEXT:   %[[T:.*]] = loops.load %i[i0] : tensor<30xi64>
  // CHECK-NEXT:   %[[P:.*]] = loops.indirect_index %[[T]] size 20 : i64
  // CHECK-NEXT:   %[[V:.*]] = loops.load %v[i0, i1] : tensor<30x8xf32>
  // CHECK-NEXT:   loops.scatter_store [ind0, i1] indirect(%[[P]]), %[[V]] : f32
  %0 = aten.index_put %x, [%i], %v {accumulate = true} : (tensor<20x8xf32>, tensor<30xi64>, tensor<30x8xf32>) -> tensor<20x8xf32> loc("index_put")
  func.return %0 : tensor<20x8xf32>
}

// -----

// scatter(x, 1, idx, src) stores (no accumulate: one of repeated positions wins, as on CUDA);
// the scatter runs over the index's shape.
// CHECK-LABEL: func.func @scatter_src
func.func @scatter_src(%x: tensor<4x9xf32>, %idx: tensor<4x3xi64>, %src: tensor<4x5xf32>) -> tensor<4x9xf32> {
  // CHECK:      loops.scatter %{{.*}} [4, 3] origins ["scatter"] -> tensor<4x9xf32> {
  // CHECK-NEXT:   %[[T:.*]] = loops.load %idx[i0, i1] : tensor<4x3xi64>
  // CHECK-NEXT:   %[[P:.*]] = loops.indirect_index %[[T]] size 9 : i64
  // CHECK-NEXT:   %[[V:.*]] = loops.load %src[i0, i1] : tensor<4x5xf32>
  // CHECK-NEXT:   loops.scatter_store [i0, ind0] indirect(%[[P]]), %[[V]] : f32
  %0 = aten.scatter.src %x, %idx, %src {dim = 1 : i64} : (tensor<4x9xf32>, tensor<4x3xi64>, tensor<4x5xf32>) -> tensor<4x9xf32> loc("scatter")
  func.return %0 : tensor<4x9xf32>
}

// -----

// index_add(x, 0, i, s, alpha=2): adds 2 * s[n, d] at row i[n].
// CHECK-LABEL: func.func @index_add
func.func @index_add(%x: tensor<20x8xf32>, %i: tensor<30xi64>, %s: tensor<30x8xf32>) -> tensor<20x8xf32> {
  // CHECK:      loops.scatter %{{.*}} [30, 8] atomic_add origins ["index_add"] -> tensor<20x8xf32> {
  // CHECK:        %[[M:.*]] = arith.mulf
  // CHECK:        loops.scatter_store [ind0, i1] indirect(%{{.*}}), %[[M]] : f32
  %0 = aten.index_add %x, %i, %s {dim = 0 : i64, alpha = 2 : i64} : (tensor<20x8xf32>, tensor<30xi64>, tensor<30x8xf32>) -> tensor<20x8xf32> loc("index_add")
  func.return %0 : tensor<20x8xf32>
}

// -----

// The backward of a bf16 embedding adds in f32 (zeros, the scatter, then one narrowing), and
// a gradient row whose id is padding_idx adds 0.
// CHECK-LABEL: func.func @embedding_backward_bf16
func.func @embedding_backward_bf16(%g: tensor<6x7x8xbf16>, %ids: tensor<6x7xi64>) -> tensor<40x8xbf16> {
  // CHECK:      %[[Z:.*]] = loops.pointwise [40, 8] origins ["embedding_dense_backward"] -> tensor<40x8xf32> {
  // CHECK-NEXT:   %[[C:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK-NEXT:   loops.yield %[[C]] : f32
  // CHECK:      %[[S:.*]] = loops.scatter %[[Z]] [6, 7, 8] atomic_add origins ["embedding_dense_backward"] -> tensor<40x8xf32> {
  // CHECK-NEXT:   %[[T:.*]] = loops.load %ids[i0, i1] : tensor<6x7xi64>
  // CHECK-NEXT:   %[[G:.*]] = loops.load %g[i0, i1, i2] : tensor<6x7x8xbf16>
  // CHECK-NEXT:   %[[W:.*]] = arith.extf %[[G]] : bf16 to f32
  // CHECK-NEXT:   %[[PAD:.*]] = arith.constant 3 : i64
  // CHECK-NEXT:   %[[IS:.*]] = arith.cmpi eq, %[[T]], %[[PAD]] : i64
  // CHECK-NEXT:   %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK-NEXT:   %[[V:.*]] = arith.select %[[IS]], %[[ZERO]], %[[W]] : f32
  // CHECK-NEXT:   %[[P:.*]] = loops.indirect_index %[[T]] size 40 : i64
  // CHECK-NEXT:   loops.scatter_store [ind0, i2] indirect(%[[P]]), %[[V]] : f32
  // CHECK:      loops.pointwise [40, 8] origins ["embedding_dense_backward"] -> tensor<40x8xbf16> {
  // CHECK-NEXT:   loops.load %[[S]][i0, i1] : tensor<40x8xf32>
  // CHECK-NEXT:   arith.truncf
  %0 = aten.embedding_dense_backward %g, %ids {num_weights = 40 : i64, padding_idx = 3 : i64, scale_grad_by_freq = false} : (tensor<6x7x8xbf16>, tensor<6x7xi64>) -> tensor<40x8xbf16> loc("embedding_dense_backward")
  func.return %0 : tensor<40x8xbf16>
}

// -----

// scale_grad_by_freq: a first scatter counts each id (adds of 1.0 into f32 zeros), and each
// gradient row is divided by its id's count, read at the same loaded position.
// CHECK-LABEL: func.func @embedding_backward_scale_grad_by_freq
func.func @embedding_backward_scale_grad_by_freq(%g: tensor<6x8xf32>, %ids: tensor<6xi64>) -> tensor<40x8xf32> {
  // CHECK:      %[[COUNTS:.*]] = loops.scatter %{{.*}} [6] atomic_add origins ["embedding_dense_backward"] -> tensor<40xf32> {
  // CHECK:        %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
  // CHECK-NEXT:   loops.scatter_store [ind0] indirect(%{{.*}}), %[[ONE]] : f32
  // CHECK:      loops.scatter %{{.*}} [6, 8] atomic_add origins ["embedding_dense_backward"] -> tensor<40x8xf32> {
  // CHECK:        %[[ROW:.*]] = loops.indirect_index %{{.*}} size 40 : i64
  // CHECK-NEXT:   %[[N:.*]] = loops.load %[[COUNTS]][ind0] indirect(%[[ROW]]) : tensor<40xf32>
  // CHECK-NEXT:   %[[V:.*]] = arith.divf %{{.*}}, %[[N]] : f32
  // CHECK-NEXT:   loops.scatter_store [ind0, i1] indirect(%[[ROW]]), %[[V]] : f32
  %0 = aten.embedding_dense_backward %g, %ids {num_weights = 40 : i64, padding_idx = -1 : i64, scale_grad_by_freq = true} : (tensor<6x8xf32>, tensor<6xi64>) -> tensor<40x8xf32> loc("embedding_dense_backward")
  func.return %0 : tensor<40x8xf32>
}
