// RUN: mlc-opt %s --split-input-file --lower-aten | filecheck %s
// RUN: mlc-opt %s --split-input-file --lower-aten="unroll-reductions-threshold=1" | filecheck %s --check-prefix=NOUNROLL

// A row sum: one loops.reduction over the kept dim (i0) and the reduced one (r0_0); the
// reduce is the last op before the yield (no epilogue).
// CHECK-LABEL: func.func @row_sum
func.func @row_sum(%x: tensor<3x9xf32>) -> tensor<3xf32> {
  // CHECK:      %[[S:.*]] = loops.reduction [3] over [9] origins ["sum"] -> tensor<3xf32> {
  // CHECK-NEXT:   %[[V:.*]] = loops.load %x[i0, r0_0] : tensor<3x9xf32>
  // CHECK-NEXT:   %[[R:.*]] = loops.reduce sum %[[V]] : f32 -> f32
  // CHECK-NEXT:   loops.yield %[[R]] : f32
  // CHECK-NEXT: }
  // CHECK-NEXT: func.return %[[S]] : tensor<3xf32>
  %s = aten.sum.dim_IntList %x {dim = array<i64: 1>} : (tensor<3x9xf32>) -> tensor<3xf32> loc("sum_1")
  func.return %s : tensor<3xf32>
}

// -----

// Which dims: a column sum loads [r0_0, i0, i1]; keepdim keeps a size-1 range that no load
// reads; several dims (given in any order, negative ones too) reduce in the tensor's order;
// a full reduction has no ranges and a 0-d result.
// CHECK-LABEL: func.func @columns_keepdim_dims
func.func @columns_keepdim_dims(%x: tensor<9x8x10xf32>) -> (tensor<8x10xf32>, tensor<9x1x10xf32>, tensor<8xf32>, tensor<f32>) {
  // CHECK:      loops.reduction [8, 10] over [9] origins ["sum"] -> tensor<8x10xf32> {
  // CHECK-NEXT:   loops.load %x[r0_0, i0, i1] : tensor<9x8x10xf32>
  %c = aten.sum.dim_IntList %x {dim = array<i64: 0>} : (tensor<9x8x10xf32>) -> tensor<8x10xf32>
  // CHECK:      loops.reduction [9, 1, 10] over [8] origins ["amax"] -> tensor<9x1x10xf32> {
  // CHECK-NEXT:   %[[V:.*]] = loops.load %x[i0, r0_0, i2] : tensor<9x8x10xf32>
  // CHECK-NEXT:   loops.reduce max %[[V]] : f32 -> f32
  %k = aten.amax %x {dim = array<i64: 1>, keepdim = true} : (tensor<9x8x10xf32>) -> tensor<9x1x10xf32>
  // CHECK:      loops.reduction [8] over [9, 10] origins ["sum"] -> tensor<8xf32> {
  // CHECK-NEXT:   loops.load %x[r0_0, i0, r0_1] : tensor<9x8x10xf32>
  %d = aten.sum.dim_IntList %x {dim = array<i64: -1, 0>} : (tensor<9x8x10xf32>) -> tensor<8xf32>
  // CHECK:      loops.reduction [] over [9, 8, 10] origins ["sum"] -> tensor<f32> {
  // CHECK-NEXT:   loops.load %x[r0_0, r0_1, r0_2] : tensor<9x8x10xf32>
  %a = aten.sum %x : (tensor<9x8x10xf32>) -> tensor<f32>
  func.return %c, %k, %d, %a : tensor<8x10xf32>, tensor<9x1x10xf32>, tensor<8xf32>, tensor<f32>
}

// -----

// max.dim is ONE reduction with two results: a max and an argmax of the same load. argmax
// without a dim reduces every dim; its index is the row-major position in the whole tensor.
// CHECK-LABEL: func.func @max_dim
func.func @max_dim(%x: tensor<3x9xf32>) -> (tensor<3xf32>, tensor<3xi64>, tensor<i64>) {
  // CHECK:      %[[V:.*]], %[[I:.*]] = loops.reduction [3] over [9] origins ["max"] -> (tensor<3xf32>, tensor<3xi64>) {
  // CHECK-NEXT:   %[[L:.*]] = loops.load %x[i0, r0_0] : tensor<3x9xf32>
  // CHECK-NEXT:   %[[M:.*]] = loops.reduce max %[[L]] : f32 -> f32
  // CHECK-NEXT:   %[[A:.*]] = loops.reduce argmax %[[L]] : f32 -> i64
  // CHECK-NEXT:   loops.yield %[[M]], %[[A]] : f32, i64
  // CHECK-NEXT: }
  %v, %i = aten.max.dim %x {dim = 1 : i64} : (tensor<3x9xf32>) -> (tensor<3xf32>, tensor<3xi64>)
  // CHECK:      loops.reduction [] over [3, 9] origins ["argmax"] -> tensor<i64> {
  // CHECK-NEXT:   %[[L2:.*]] = loops.load %x[r0_0, r0_1] : tensor<3x9xf32>
  // CHECK-NEXT:   loops.reduce argmax %[[L2]] : f32 -> i64
  %f = aten.argmax %x : (tensor<3x9xf32>) -> tensor<i64>
  func.return %v, %i, %f : tensor<3xf32>, tensor<3xi64>, tensor<i64>
}

// -----

// Epilogues in the same node: mean divides the sum by n; var_mean is one welford whose
// epilogue is m2 / (n - correction) (correction defaults to 1: 9 - 1 = 8) and yields
// (var, mean); std with correction 0 divides by n and takes the square root.
// CHECK-LABEL: func.func @mean_var
func.func @mean_var(%x: tensor<3x9xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3x1xf32>) {
  // CHECK:      loops.reduction [3] over [9] origins ["mean"] -> tensor<3xf32> {
  // CHECK-NEXT:   %[[L:.*]] = loops.load %x[i0, r0_0] : tensor<3x9xf32>
  // CHECK-NEXT:   %[[S:.*]] = loops.reduce sum %[[L]] : f32 -> f32
  // CHECK-NEXT:   %[[N:.*]] = arith.constant 9.000000e+00 : f32
  // CHECK-NEXT:   %[[M:.*]] = arith.divf %[[S]], %[[N]] : f32
  // CHECK-NEXT:   loops.yield %[[M]] : f32
  %m = aten.mean.dim %x {dim = array<i64: 1>} : (tensor<3x9xf32>) -> tensor<3xf32>
  // CHECK:      loops.reduction [3] over [9] origins ["var_mean"] -> (tensor<3xf32>, tensor<3xf32>) {
  // CHECK-NEXT:   %[[L:.*]] = loops.load %x[i0, r0_0] : tensor<3x9xf32>
  // CHECK-NEXT:   %[[MEAN:.*]], %[[M2:.*]], %{{.*}} = loops.reduce welford %[[L]] : f32 -> (f32, f32, f32)
  // CHECK-NEXT:   %[[D:.*]] = arith.constant 8.000000e+00 : f32
  // CHECK-NEXT:   %[[VAR:.*]] = arith.divf %[[M2]], %[[D]] : f32
  // CHECK-NEXT:   loops.yield %[[VAR]], %[[MEAN]] : f32, f32
  %v, %vm = aten.var_mean.correction %x {dim = array<i64: 1>} : (tensor<3x9xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  // CHECK:      loops.reduction [3, 1] over [9] origins ["std"] -> tensor<3x1xf32> {
  // CHECK:        arith.constant 9.000000e+00 : f32
  // CHECK-NEXT:   arith.divf
  // CHECK-NEXT:   math.sqrt
  // CHECK-NEXT:   loops.yield
  %s = aten.std.correction %x {dim = array<i64: 1>, correction = 0 : i64, keepdim = true} : (tensor<3x9xf32>) -> tensor<3x1xf32>
  func.return %m, %v, %vm, %s : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3x1xf32>
}

// -----

// dtypes: f16 is widened before the reduce (accumulation in f32) and narrowed once in the
// epilogue; an int32 sum accumulates in its int64 result type; any reduces i1; all is
// not any(not x).
// CHECK-LABEL: func.func @dtypes
func.func @dtypes(%h: tensor<3x9xf16>, %i: tensor<3x9xi32>, %b: tensor<3x9xi1>) -> (tensor<3xf16>, tensor<3xf16>, tensor<3xi64>, tensor<3xi1>, tensor<3xi1>) {
  // CHECK:      loops.reduction [3] over [9] origins ["sum"] -> tensor<3xf16> {
  // CHECK-NEXT:   %[[L:.*]] = loops.load %h[i0, r0_0] : tensor<3x9xf16>
  // CHECK-NEXT:   %[[W:.*]] = arith.extf %[[L]] : f16 to f32
  // CHECK-NEXT:   %[[S:.*]] = loops.reduce sum %[[W]] : f32 -> f32
  // CHECK-NEXT:   %[[N:.*]] = arith.truncf %[[S]] : f32 to f16
  // CHECK-NEXT:   loops.yield %[[N]] : f16
  %hs = aten.sum.dim_IntList %h {dim = array<i64: 1>} : (tensor<3x9xf16>) -> tensor<3xf16>
  // CHECK:      loops.reduction [3] over [9] origins ["var"] -> tensor<3xf16> {
  // CHECK:        loops.reduce welford %{{.*}} : f32 -> (f32, f32, f32)
  // CHECK-NEXT:   arith.constant 8.000000e+00 : f32
  // CHECK-NEXT:   arith.divf
  // CHECK-NEXT:   arith.truncf %{{.*}} : f32 to f16
  %hv = aten.var.correction %h {dim = array<i64: 1>} : (tensor<3x9xf16>) -> tensor<3xf16>
  // CHECK:      loops.reduction [3] over [9] origins ["sum"] -> tensor<3xi64> {
  // CHECK-NEXT:   %[[L:.*]] = loops.load %i[i0, r0_0] : tensor<3x9xi32>
  // CHECK-NEXT:   %[[W:.*]] = arith.extsi %[[L]] : i32 to i64
  // CHECK-NEXT:   loops.reduce sum %[[W]] : i64 -> i64
  %is = aten.sum.dim_IntList %i {dim = array<i64: 1>} : (tensor<3x9xi32>) -> tensor<3xi64>
  // CHECK:      loops.reduction [3] over [9] origins ["any"] -> tensor<3xi1> {
  // CHECK-NEXT:   %[[L:.*]] = loops.load %b[i0, r0_0] : tensor<3x9xi1>
  // CHECK-NEXT:   loops.reduce any %[[L]] : i1 -> i1
  %ba = aten.any.dim %b {dim = 1 : i64} : (tensor<3x9xi1>) -> tensor<3xi1>
  // CHECK:      loops.reduction [3] over [9] origins ["all"] -> tensor<3xi1> {
  // CHECK-NEXT:   %[[L:.*]] = loops.load %b[i0, r0_0] : tensor<3x9xi1>
  // CHECK-NEXT:   %[[T:.*]] = arith.constant true
  // CHECK-NEXT:   %[[NOT:.*]] = arith.xori %[[L]], %[[T]] : i1
  // CHECK-NEXT:   %[[ANY:.*]] = loops.reduce any %[[NOT]] : i1 -> i1
  // CHECK-NEXT:   %[[ALL:.*]] = arith.xori %[[ANY]], %[[T]] : i1
  // CHECK-NEXT:   loops.yield %[[ALL]] : i1
  %bl = aten.all.dim %b {dim = 1 : i64} : (tensor<3x9xi1>) -> tensor<3xi1>
  func.return %hs, %hv, %is, %ba, %bl : tensor<3xf16>, tensor<3xf16>, tensor<3xi64>, tensor<3xi1>, tensor<3xi1>
}

// -----

// Inductor's special cases: 0 elements give the identity, 1 element a load (argmax 0), fewer
// than unroll-reductions-threshold (8) elements a pointwise chain; with the threshold at 1
// the small sum stays a reduction.
// CHECK-LABEL: func.func @special_cases
// NOUNROLL-LABEL: func.func @special_cases
func.func @special_cases(%e: tensor<3x0xf32>, %o: tensor<3x1xf32>, %s: tensor<3x4xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xi64>, tensor<3xf32>) {
  // CHECK:      loops.pointwise [3] origins ["sum"] -> tensor<3xf32> {
  // CHECK-NEXT:   %[[Z:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK-NEXT:   loops.yield %[[Z]] : f32
  %se = aten.sum.dim_IntList %e {dim = array<i64: 1>} : (tensor<3x0xf32>) -> tensor<3xf32>
  // One element: 0 + x, as eager sums from 0 (a sum of -0.0 is +0.0).
  // CHECK:      loops.pointwise [3] origins ["sum"] -> tensor<3xf32> {
  // CHECK-NEXT:   %[[L:.*]] = loops.load %o[i0, 0] : tensor<3x1xf32>
  // CHECK-NEXT:   %[[Z:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK-NEXT:   %[[S:.*]] = arith.addf %[[Z]], %[[L]] : f32
  // CHECK-NEXT:   loops.yield %[[S]] : f32
  %so = aten.sum.dim_IntList %o {dim = array<i64: 1>} : (tensor<3x1xf32>) -> tensor<3xf32>
  // CHECK:      loops.pointwise [3] origins ["argmax"] -> tensor<3xi64> {
  // CHECK-NEXT:   %[[Z:.*]] = arith.constant 0 : i64
  // CHECK-NEXT:   loops.yield %[[Z]] : i64
  %ao = aten.argmax %o {dim = 1 : i64} : (tensor<3x1xf32>) -> tensor<3xi64>
  // CHECK:      loops.pointwise [3] origins ["sum"] -> tensor<3xf32> {
  // CHECK-NEXT:   %[[A:.*]] = loops.load %s[i0, 0] : tensor<3x4xf32>
  // CHECK-NEXT:   %[[B:.*]] = loops.load %s[i0, 1] : tensor<3x4xf32>
  // CHECK-NEXT:   %[[C:.*]] = loops.load %s[i0, 2] : tensor<3x4xf32>
  // CHECK-NEXT:   %[[D:.*]] = loops.load %s[i0, 3] : tensor<3x4xf32>
  // CHECK-NEXT:   %[[Z:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK-NEXT:   %[[ZA:.*]] = arith.addf %[[Z]], %[[A]] : f32
  // CHECK-NEXT:   %[[AB:.*]] = arith.addf %[[ZA]], %[[B]] : f32
  // CHECK-NEXT:   %[[ABC:.*]] = arith.addf %[[AB]], %[[C]] : f32
  // CHECK-NEXT:   %[[ABCD:.*]] = arith.addf %[[ABC]], %[[D]] : f32
  // CHECK-NEXT:   loops.yield %[[ABCD]] : f32
  // NOUNROLL:   loops.reduction [3] over [4] origins ["sum"] -> tensor<3xf32> {
  // NOUNROLL-NEXT: loops.load %s[i0, r0_0] : tensor<3x4xf32>
  %ss = aten.sum.dim_IntList %s {dim = array<i64: 1>} : (tensor<3x4xf32>) -> tensor<3xf32>
  // CHECK-NOT: loops.reduction
  func.return %se, %so, %ao, %ss : tensor<3xf32>, tensor<3xf32>, tensor<3xi64>, tensor<3xf32>
}

// -----

// A small argmax unrolls into Inductor's combine: a later element wins only if it is strictly
// greater, or NaN where the best so far is not, so ties keep the first index.
// CHECK-LABEL: func.func @small_argmax
func.func @small_argmax(%x: tensor<5x2xf32>) -> tensor<5xi64> {
  // CHECK:      loops.pointwise [5] origins ["argmax"] -> tensor<5xi64> {
  // CHECK-NEXT:   %[[A:.*]] = loops.load %x[i0, 0] : tensor<5x2xf32>
  // CHECK-NEXT:   %[[B:.*]] = loops.load %x[i0, 1] : tensor<5x2xf32>
  // CHECK-NEXT:   %[[I0:.*]] = arith.constant 0 : i64
  // CHECK-NEXT:   %[[I1:.*]] = arith.constant 1 : i64
  // CHECK-NEXT:   %[[GT:.*]] = arith.cmpf ogt, %[[B]], %[[A]] : f32
  // CHECK-NEXT:   %[[BNAN:.*]] = arith.cmpf uno, %[[B]], %[[B]] : f32
  // CHECK-NEXT:   %[[ANAN:.*]] = arith.cmpf uno, %[[A]], %[[A]] : f32
  // CHECK-NEXT:   %[[T:.*]] = arith.constant true
  // CHECK-NEXT:   %[[ANUM:.*]] = arith.xori %[[ANAN]], %[[T]] : i1
  // CHECK-NEXT:   %[[NANWINS:.*]] = arith.andi %[[BNAN]], %[[ANUM]] : i1
  // CHECK-NEXT:   %[[WINS:.*]] = arith.ori %[[GT]], %[[NANWINS]] : i1
  // CHECK-NEXT:   %[[AT:.*]] = arith.select %[[WINS]], %[[I1]], %[[I0]] : i64
  // CHECK-NEXT:   loops.yield %[[AT]] : i64
  %a = aten.argmax %x {dim = 1 : i64} : (tensor<5x2xf32>) -> tensor<5xi64>
  func.return %a : tensor<5xi64>
}
