// RUN: mlc-opt %s --split-input-file -p 'lower-aten{gemm=triton},inline,realize,reorder-loops{explain=true}' | filecheck %s

// A contraction (buffer.dot) keeps its loops as they are, [M, N] reduce [K]: its kernel tiles M
// and N itself. Its epilogue nodes are ordered (and merged) as any pointwise node.

// mm(x, w.t()) + relu: B read along its rows does not reorder the contraction; the relu merges.
// CHECK-LABEL: buffer.graph @mm_t_relu
// CHECK:       buffer.computed "buf0" {{.*}} ranges [64, 128] reduce [96] origins ["mm", "t"] {
// CHECK-NEXT:    buffer.load @x[r0_0 + 96*i0] : f32
// CHECK-NEXT:    buffer.load @w[r0_0 + 96*i1] : f32
// CHECK:       } attributes {loops = "[64, 128] reduce [96] kept: a contraction"}
// CHECK:       buffer.computed "buf1" {{.*}} ranges [8192] origins ["relu"] {
// CHECK:       } attributes {loops = "[8192] from [64, 128]"}
func.func @mm_t_relu(%x: tensor<64x96xf32>, %w: tensor<128x96xf32>) -> tensor<64x128xf32> {
  %wt = aten.t %w : (tensor<128x96xf32>) -> tensor<96x128xf32>
  %y = aten.mm %x, %wt : (tensor<64x96xf32>, tensor<96x128xf32>) -> tensor<64x128xf32>
  %r = aten.relu %y : (tensor<64x128xf32>) -> tensor<64x128xf32>
  func.return %r : tensor<64x128xf32>
}

// -----

// M = 1: the size-1 loop is not dropped from a contraction (a pointwise would lose it).
// CHECK-LABEL: buffer.graph @mm_one_row
// CHECK:       buffer.computed "buf0" {{.*}} ranges [1, 128] reduce [96] origins ["mm"] {
// CHECK:       } attributes {loops = "[1, 128] reduce [96] kept: a contraction"}
func.func @mm_one_row(%x: tensor<1x96xf32>, %w: tensor<96x128xf32>) -> tensor<1x128xf32> {
  %y = aten.mm %x, %w : (tensor<1x96xf32>, tensor<96x128xf32>) -> tensor<1x128xf32>
  func.return %y : tensor<1x128xf32>
}
