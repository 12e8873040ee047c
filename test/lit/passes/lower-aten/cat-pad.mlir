// RUN: mlc-opt %s --split-input-file --lower-aten | filecheck %s

// cat is one pointwise, not a copy per input: each input is a masked load at its offset along
// the cat dim (the mask is a compare of loops.index), and an arith.select chain picks one.
// CHECK-LABEL: func.func @cat_masked_loads
func.func @cat_masked_loads(%a: tensor<8x32xf32>, %b: tensor<8x16xf32>, %c: tensor<8x16xf32>) -> tensor<8x64xf32> {
  // CHECK:      loops.pointwise [8, 64] origins ["cat"] -> tensor<8x64xf32> {
  // CHECK-NEXT:   %[[I:.*]] = loops.index i1 : i64
  // CHECK-NEXT:   %[[C32:.*]] = arith.constant 32 : i64
  // CHECK-NEXT:   %[[M0:.*]] = arith.cmpi slt, %[[I]], %[[C32]] : i64
  // CHECK-NEXT:   %[[A:.*]] = loops.load %a[i0, i1] mask %[[M0]] : tensor<8x32xf32>
  // CHECK-NEXT:   %[[LO:.*]] = arith.cmpi sge, %[[I]], %[[C32]] : i64
  // CHECK-NEXT:   %[[C48:.*]] = arith.constant 48 : i64
  // CHECK-NEXT:   %[[HI:.*]] = arith.cmpi slt, %[[I]], %[[C48]] : i64
  // CHECK-NEXT:   %[[M1:.*]] = arith.andi %[[LO]], %[[HI]] : i1
  // CHECK-NEXT:   %[[B:.*]] = loops.load %b[i0, i1 - 32] mask %[[M1]] : tensor<8x16xf32>
  // CHECK-NEXT:   %[[M2:.*]] = arith.cmpi sge, %[[I]], %[[C48]] : i64
  // CHECK-NEXT:   %[[C:.*]] = loops.load %c[i0, i1 - 48] mask %[[M2]] : tensor<8x16xf32>
  // CHECK-NEXT:   %[[S1:.*]] = arith.select %[[M1]], %[[B]], %[[C]] : f32
  // CHECK-NEXT:   %[[S0:.*]] = arith.select %[[M0]], %[[A]], %[[S1]] : f32
  // CHECK-NEXT:   loops.yield %[[S0]] : f32
  %r = aten.cat [%a, %b, %c] {dim = 1 : i64} : (tensor<8x32xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x64xf32>
  func.return %r : tensor<8x64xf32>
}

// -----

// Inputs of another dtype are converted before the select (cat promotes like torch.cat);
// legacy empty inputs (shape [0]) are skipped.
// CHECK-LABEL: func.func @cat_promotes_and_skips_empty
func.func @cat_promotes_and_skips_empty(%a: tensor<2x8xf16>, %b: tensor<3x8xf32>, %e: tensor<0xf32>) -> tensor<5x8xf32> {
  // CHECK:      loops.pointwise [5, 8] origins ["cat"] -> tensor<5x8xf32> {
  // CHECK:        %[[A:.*]] = loops.load %a[i0, i1] mask %{{.*}} : tensor<2x8xf16>
  // CHECK-NEXT:   %[[W:.*]] = arith.extf %[[A]] : f16 to f32
  // CHECK:        loops.load %b[i0 - 2, i1] mask %{{.*}} : tensor<3x8xf32>
  // CHECK-NOT:    %e
  // CHECK:        arith.select %{{.*}}, %[[W]], %{{.*}} : f32
  %r = aten.cat [%a, %b, %e] : (tensor<2x8xf16>, tensor<3x8xf32>, tensor<0xf32>) -> tensor<5x8xf32>
  func.return %r : tensor<5x8xf32>
}

// -----

// constant_pad_nd: (low, high) pairs from the last dim backwards. A positive pad masks the load
// and selects the pad value; a negative pad crops (an offset, no mask).
// CHECK-LABEL: func.func @pad_and_crop
func.func @pad_and_crop(%x: tensor<4x8xf32>) -> (tensor<4x11xf32>, tensor<4x5xf32>) {
  // CHECK:      loops.pointwise [4, 11] origins ["constant_pad_nd"] -> tensor<4x11xf32> {
  // CHECK:        %[[M:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
  // CHECK-NEXT:   %[[L:.*]] = loops.load %x[i0, i1 - 1] mask %[[M]] : tensor<4x8xf32>
  // CHECK-NEXT:   %[[V:.*]] = arith.constant -2.500000e+00 : f32
  // CHECK-NEXT:   %[[S:.*]] = arith.select %[[M]], %[[L]], %[[V]] : f32
  // CHECK-NEXT:   loops.yield %[[S]] : f32
  %p = aten.constant_pad_nd %x {pad = array<i64: 1, 2>, value = -2.500000e+00 : f64} : (tensor<4x8xf32>) -> tensor<4x11xf32>
  // CHECK:      loops.pointwise [4, 5] origins ["constant_pad_nd"] -> tensor<4x5xf32> {
  // CHECK-NEXT:   %[[C:.*]] = loops.load %x[i0, 1 + i1] : tensor<4x8xf32>
  // CHECK-NEXT:   loops.yield %[[C]] : f32
  %c = aten.constant_pad_nd %x {pad = array<i64: -1, -2>} : (tensor<4x8xf32>) -> tensor<4x5xf32>
  func.return %p, %c : tensor<4x11xf32>, tensor<4x5xf32>
}
