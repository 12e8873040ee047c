// RUN: mlc-opt %s --inline | filecheck %s

// A gather (columns idx[n, k]) of an embedding (rows ids[n]) of a table: inlining the
// embedding at the gather's loaded position gives one load of the table at two loaded
// positions. The producer's load named its row ind0; the consumer's position (its ind0)
// replaces i1. The operands are renumbered in the order the index names them.
// CHECK-LABEL: func.func @gather_of_embedding
// CHECK:       loops.pointwise [4, 2] origins ["embedding", "gather"] -> tensor<4x2xf32> {
// CHECK-NEXT:    %[[J:.*]] = loops.load %idx[i0, i1] : tensor<4x2xi64>
// CHECK-NEXT:    %[[Q:.*]] = loops.indirect_index %[[J]] size 16 : i64
// CHECK-NEXT:    %[[T:.*]] = loops.load %ids[i0] : tensor<4xi64>
// CHECK-NEXT:    %[[K:.*]] = loops.indirect_index %[[T]] size 50 : i64
// CHECK-NEXT:    %[[V:.*]] = loops.load %w[ind0, ind1] indirect(%[[K]], %[[Q]]) : tensor<50x16xf32>
// An index value inlined at a loaded position (16*row + column) names both positions.
// CHECK:       loops.pointwise [4, 2] origins ["embedding", "gather"] -> tensor<4x2xi64> {
// CHECK-NEXT:    %[[J2:.*]] = loops.load %idx[i0, i1] : tensor<4x2xi64>
// CHECK-NEXT:    %[[Q2:.*]] = loops.indirect_index %[[J2]] size 16 : i64
// CHECK-NEXT:    %[[T2:.*]] = loops.load %ids[i0] : tensor<4xi64>
// CHECK-NEXT:    %[[K2:.*]] = loops.indirect_index %[[T2]] size 50 : i64
// CHECK-NEXT:    loops.index ind0 + 16*ind1 indirect(%[[Q2]], %[[K2]]) : i64
// CHECK-NOT:   loops.pointwise
func.func @gather_of_embedding(%w: tensor<50x16xf32>, %ids: tensor<4xi64>, %idx: tensor<4x2xi64>) -> (tensor<4x2xf32>, tensor<4x2xi64>) {
  %e = loops.pointwise [4, 16] origins ["embedding"] -> tensor<4x16xf32> {
    %t = loops.load %ids[i0] : tensor<4xi64>
    %k = loops.indirect_index %t size 50 : i64
    %v = loops.load %w[ind0, i1] indirect(%k) : tensor<50x16xf32>
    loops.yield %v : f32
  }
  %p = loops.pointwise [4, 16] origins ["embedding"] -> tensor<4x16xi64> {
    %t = loops.load %ids[i0] : tensor<4xi64>
    %k = loops.indirect_index %t size 50 : i64
    %v = loops.index 16*ind0 + i1 indirect(%k) : i64
    loops.yield %v : i64
  }
  %g = loops.pointwise [4, 2] origins ["gather"] -> tensor<4x2xf32> {
    %j = loops.load %idx[i0, i1] : tensor<4x2xi64>
    %q = loops.indirect_index %j size 16 : i64
    %v = loops.load %e[i0, ind0] indirect(%q) : tensor<4x16xf32>
    loops.yield %v : f32
  }
  %h = loops.pointwise [4, 2] origins ["gather"] -> tensor<4x2xi64> {
    %j = loops.load %idx[i0, i1] : tensor<4x2xi64>
    %q = loops.indirect_index %j size 16 : i64
    %c = loops.load %p[i0, ind0] indirect(%q) : tensor<4x16xi64>
    loops.yield %c : i64
  }
  func.return %g, %h : tensor<4x2xf32>, tensor<4x2xi64>
}
