// RUN: mlc-opt %s --lower-aten | filecheck %s

// Seed 000: the gelu after the MLP, as decomposed aten ops (x * 0.5 * (1 + erf(x * M_SQRT1_2))).
// Each aten op becomes its own pointwise that loads its producers at [i0, i1] (--inline fuses
// them later into the seed's one body); every piece carries the importer's origin "gelu".
// CHECK-LABEL: func.func @seed000_gelu
func.func @seed000_gelu(%buf4: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // CHECK:      %[[MUL:.*]] = loops.pointwise [8, 64] origins ["gelu"] -> tensor<8x64xf32> {
  // CHECK-NEXT:   %[[X0:.*]] = loops.load %buf4[i0, i1] : tensor<8x64xf32>
  // CHECK-NEXT:   %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
  // CHECK-NEXT:   %[[T2:.*]] = arith.mulf %[[X0]], %[[HALF]] : f32
  // CHECK-NEXT:   loops.yield %[[T2]] : f32
  // CHECK-NEXT: }
  %0 = aten.mul.Scalar %buf4 {other = 5.000000e-01 : f64} attributes {origin = "gelu"} : (tensor<8x64xf32>) -> tensor<8x64xf32> loc("mul")
  // CHECK:      %[[MUL1:.*]] = loops.pointwise [8, 64] origins ["gelu"] -> tensor<8x64xf32> {
  // CHECK-NEXT:   %[[X1:.*]] = loops.load %buf4[i0, i1] : tensor<8x64xf32>
  // CHECK-NEXT:   %[[C:.*]] = arith.constant 0.707106769 : f32
  // CHECK-NEXT:   %[[T5:.*]] = arith.mulf %[[X1]], %[[C]] : f32
  // CHECK-NEXT:   loops.yield %[[T5]] : f32
  %1 = aten.mul.Scalar %buf4 {other = 0.70710678118654757 : f64} attributes {origin = "gelu"} : (tensor<8x64xf32>) -> tensor<8x64xf32> loc("mul_1")
  // CHECK:      %[[ERF:.*]] = loops.pointwise [8, 64] origins ["gelu"] -> tensor<8x64xf32> {
  // CHECK-NEXT:   %[[L:.*]] = loops.load %[[MUL1]][i0, i1] : tensor<8x64xf32>
  // CHECK-NEXT:   %[[T6:.*]] = math.erf %[[L]] : f32
  // CHECK-NEXT:   loops.yield %[[T6]] : f32
  %2 = aten.erf %1 attributes {origin = "gelu"} : (tensor<8x64xf32>) -> tensor<8x64xf32> loc("erf")
  // CHECK:      %[[ADD:.*]] = loops.pointwise [8, 64] origins ["gelu"] -> tensor<8x64xf32> {
  // CHECK-NEXT:   %[[E:.*]] = loops.load %[[ERF]][i0, i1] : tensor<8x64xf32>
  // CHECK-NEXT:   %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
  // CHECK-NEXT:   %[[T8:.*]] = arith.addf %[[E]], %[[ONE]] : f32
  // CHECK-NEXT:   loops.yield %[[T8]] : f32
  %3 = aten.add.Scalar %2 {other = 1 : i64} attributes {origin = "gelu"} : (tensor<8x64xf32>) -> tensor<8x64xf32> loc("add")
  // CHECK:      %[[OUT:.*]] = loops.pointwise [8, 64] origins ["gelu"] -> tensor<8x64xf32> {
  // CHECK-NEXT:   %[[A:.*]] = loops.load %[[MUL]][i0, i1] : tensor<8x64xf32>
  // CHECK-NEXT:   %[[B:.*]] = loops.load %[[ADD]][i0, i1] : tensor<8x64xf32>
  // CHECK-NEXT:   %[[T9:.*]] = arith.mulf %[[A]], %[[B]] : f32
  // CHECK-NEXT:   loops.yield %[[T9]] : f32
  %4 = aten.mul.Tensor %0, %3 attributes {origin = "gelu"} : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32> loc("mul_2")
  // CHECK:      func.return %[[OUT]] : tensor<8x64xf32>
  // CHECK-NOT:  aten.
  func.return %4 : tensor<8x64xf32>
}
