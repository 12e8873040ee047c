// RUN: mlc-opt %s --split-input-file --lower-aten | filecheck %s

// Python scalars are weak: an int tensor times 2.5 computes (and returns) float32, an int32
// tensor plus 7 stays int32.
// CHECK-LABEL: func.func @weak_scalars
func.func @weak_scalars(%i: tensor<8xi64>, %j: tensor<8xi32>) -> (tensor<8xf32>, tensor<8xi32>) {
  // CHECK:      loops.pointwise [8] origins ["mul"] -> tensor<8xf32> {
  // CHECK-NEXT:   %[[L:.*]] = loops.load %i[i0] : tensor<8xi64>
  // CHECK-NEXT:   %[[F:.*]] = arith.sitofp %[[L]] : i64 to f32
  // CHECK-NEXT:   %[[C:.*]] = arith.constant 2.500000e+00 : f32
  // CHECK-NEXT:   %[[M:.*]] = arith.mulf %[[F]], %[[C]] : f32
  // CHECK-NEXT:   loops.yield %[[M]] : f32
  %0 = aten.mul.Scalar %i {other = 2.500000e+00 : f64} : (tensor<8xi64>) -> tensor<8xf32>
  // CHECK:      loops.pointwise [8] origins ["add"] -> tensor<8xi32> {
  // CHECK-NEXT:   %[[J:.*]] = loops.load %j[i0] : tensor<8xi32>
  // CHECK-NEXT:   %[[SEVEN:.*]] = arith.constant 7 : i32
  // CHECK-NEXT:   %[[S:.*]] = arith.addi %[[J]], %[[SEVEN]] : i32
  // CHECK-NEXT:   loops.yield %[[S]] : i32
  %1 = aten.add.Scalar %j {other = 7 : i64} : (tensor<8xi32>) -> tensor<8xi32>
  func.return %0, %1 : tensor<8xf32>, tensor<8xi32>
}

// -----

// fp16 math happens in f32: loads are widened with extf and the result is narrowed once with
// truncf before loops.yield. The f16 tensor plus 1.0 stays f16; a broadcast operand reads its
// size-1 dim at 0.
// CHECK-LABEL: func.func @f16_upcast
func.func @f16_upcast(%x: tensor<8x64xf16>, %b: tensor<1x64xf16>) -> tensor<8x64xf16> {
  // CHECK:      loops.pointwise [8, 64] origins ["add"] -> tensor<8x64xf16> {
  // CHECK-NEXT:   %[[X:.*]] = loops.load %x[i0, i1] : tensor<8x64xf16>
  // CHECK-NEXT:   %[[XW:.*]] = arith.extf %[[X]] : f16 to f32
  // CHECK-NEXT:   %[[B:.*]] = loops.load %b[0, i1] : tensor<1x64xf16>
  // CHECK-NEXT:   %[[BW:.*]] = arith.extf %[[B]] : f16 to f32
  // CHECK-NEXT:   %[[S:.*]] = arith.addf %[[XW]], %[[BW]] : f32
  // CHECK-NEXT:   %[[N:.*]] = arith.truncf %[[S]] : f32 to f16
  // CHECK-NEXT:   loops.yield %[[N]] : f16
  %0 = aten.add.Tensor %x, %b : (tensor<8x64xf16>, tensor<1x64xf16>) -> tensor<8x64xf16>
  // CHECK:      loops.pointwise [8, 64] origins ["add"] -> tensor<8x64xf16> {
  // CHECK:        arith.constant 1.000000e+00 : f32
  // CHECK:        arith.truncf %{{.*}} : f32 to f16
  %1 = aten.add.Scalar %0 {other = 1.000000e+00 : f64} : (tensor<8x64xf16>) -> tensor<8x64xf16>
  func.return %1 : tensor<8x64xf16>
}

// -----

// A 0-d tensor participates weakly: f32 times a 0-d f64 stays f32 (the f64 is loaded at [] and
// truncated); integer true division computes in float32; comparisons yield i1.
// CHECK-LABEL: func.func @zero_dim_div_compare
func.func @zero_dim_div_compare(%x: tensor<8xf32>, %s: tensor<f64>, %i: tensor<8xi32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xi1>) {
  // CHECK:      loops.pointwise [8] origins ["mul"] -> tensor<8xf32> {
  // CHECK-NEXT:   loops.load %x[i0] : tensor<8xf32>
  // CHECK-NEXT:   %[[S:.*]] = loops.load %s[] : tensor<f64>
  // CHECK-NEXT:   arith.truncf %[[S]] : f64 to f32
  %0 = aten.mul.Tensor %x, %s : (tensor<8xf32>, tensor<f64>) -> tensor<8xf32>
  // CHECK:      loops.pointwise [8] origins ["div"] -> tensor<8xf32> {
  // CHECK:        arith.sitofp %{{.*}} : i32 to f32
  // CHECK:        arith.sitofp %{{.*}} : i32 to f32
  // CHECK-NEXT:   arith.divf
  %1 = aten.div.Tensor %i, %i : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xf32>
  // CHECK:      loops.pointwise [8] origins ["lt"] -> tensor<8xi1> {
  // CHECK:        %[[C:.*]] = arith.cmpf olt, %{{.*}}, %{{.*}} : f32
  // CHECK-NEXT:   loops.yield %[[C]] : i1
  %2 = aten.lt.Tensor %i, %x : (tensor<8xi32>, tensor<8xf32>) -> tensor<8xi1>
  func.return %0, %1, %2 : tensor<8xf32>, tensor<8xf32>, tensor<8xi1>
}

// -----

// Integer and bool math stays in integers: floor division is floordivsi, bool * bool is andi,
// a cast to bool is `!= 0` and a float -> int cast truncates through i64.
// CHECK-LABEL: func.func @integer_and_bool
func.func @integer_and_bool(%i: tensor<8xi32>, %b: tensor<8xi1>, %x: tensor<8xf32>) -> (tensor<8xi32>, tensor<8xi1>, tensor<8xi1>, tensor<8xi32>) {
  // CHECK:      loops.pointwise [8] origins ["div"] -> tensor<8xi32> {
  // CHECK:        arith.floordivsi %{{.*}}, %{{.*}} : i32
  %0 = aten.div.Tensor_mode %i, %i {rounding_mode = "floor"} : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  // CHECK:      loops.pointwise [8] origins ["mul"] -> tensor<8xi1> {
  // CHECK:        arith.andi %{{.*}}, %{{.*}} : i1
  %1 = aten.mul.Tensor %b, %b : (tensor<8xi1>, tensor<8xi1>) -> tensor<8xi1>
  // CHECK:      loops.pointwise [8] origins ["_to_copy"] -> tensor<8xi1> {
  // CHECK:        arith.cmpf une, %{{.*}}, %{{.*}} : f32
  %2 = aten._to_copy %x {dtype = i1} : (tensor<8xf32>) -> tensor<8xi1>
  // CHECK:      loops.pointwise [8] origins ["_to_copy"] -> tensor<8xi32> {
  // CHECK-NEXT:   %[[L:.*]] = loops.load %x[i0] : tensor<8xf32>
  // CHECK-NEXT:   %[[W:.*]] = arith.fptosi %[[L]] : f32 to i64
  // CHECK-NEXT:   %[[N:.*]] = arith.trunci %[[W]] : i64 to i32
  // CHECK-NEXT:   loops.yield %[[N]] : i32
  %3 = aten._to_copy %x {dtype = i32} : (tensor<8xf32>) -> tensor<8xi32>
  func.return %0, %1, %2, %3 : tensor<8xi32>, tensor<8xi1>, tensor<8xi1>, tensor<8xi32>
}
