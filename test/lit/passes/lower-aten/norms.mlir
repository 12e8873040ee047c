// RUN: mlc-opt %s --split-input-file --lower-aten | filecheck %s

// cross_entropy as AOTAutograd traces it with mlc's table: log_softmax decomposed into
// amax/sub/exp/sum/log/sub (reductions over the class dim with keepdim), then
// nll_loss_forward, which the table keeps. Its pick reads one element per row, x[n, t[n]]
// (an indirect load; an ignored row reads class 0 and counts 0), in one reduction over the
// rows that sums the picks and total_weight (the count of the kept targets); mean divides
// them in the epilogue. Nothing reduces over all N * C elements, nothing scans a row for t.
// CHECK-LABEL: func.func @cross_entropy
func.func @cross_entropy(%x: tensor<8x64xf32>, %t: tensor<8xi64>) -> (tensor<f32>, tensor<f32>) {
  // CHECK:      %[[MAX:.*]] = loops.reduction [8, 1] over [64] origins ["_log_softmax"] -> tensor<8x1xf32> {
  // CHECK-NEXT:   loops.load %x[i0, r0_0] : tensor<8x64xf32>
  // CHECK-NEXT:   loops.reduce max
  %0 = aten.amax %x {dim = array<i64: 1>, keepdim = true} attributes {origin = "_log_softmax"} : (tensor<8x64xf32>) -> tensor<8x1xf32> loc("amax")
  // CHECK:      loops.pointwise [8, 64] origins ["_log_softmax"] -> tensor<8x64xf32> {
  // CHECK-NEXT:   loops.load %x[i0, i1] : tensor<8x64xf32>
  // CHECK-NEXT:   loops.load %[[MAX]][i0, 0] : tensor<8x1xf32>
  %1 = aten.sub.Tensor %x, %0 attributes {origin = "_log_softmax"} : (tensor<8x64xf32>, tensor<8x1xf32>) -> tensor<8x64xf32> loc("sub")
  %2 = aten.exp %1 attributes {origin = "_log_softmax"} : (tensor<8x64xf32>) -> tensor<8x64xf32> loc("exp")
  // CHECK:      loops.reduction [8, 1] over [64] origins ["_log_softmax"] -> tensor<8x1xf32> {
  // CHECK:        loops.reduce sum
  %3 = aten.sum.dim_IntList %2 {dim = array<i64: 1>, keepdim = true} attributes {origin = "_log_softmax"} : (tensor<8x64xf32>) -> tensor<8x1xf32> loc("sum_1")
  %4 = aten.log %3 attributes {origin = "_log_softmax"} : (tensor<8x1xf32>) -> tensor<8x1xf32> loc("log")
  // CHECK:      %[[LOGP:.*]] = loops.pointwise [8, 64] origins ["_log_softmax"]
  %5 = aten.sub.Tensor %1, %4 attributes {origin = "_log_softmax"} : (tensor<8x64xf32>, tensor<8x1xf32>) -> tensor<8x64xf32> loc("sub_1")
  // CHECK:      %[[LOSS:.*]], %[[TW:.*]] = loops.reduction [] over [8] origins ["nll_loss_forward"] -> (tensor<f32>, tensor<f32>) {
  // CHECK-NEXT:   %[[T:.*]] = loops.load %t[r0_0] : tensor<8xi64>
  // CHECK-NEXT:   %[[IGN:.*]] = arith.constant 3 : i64
  // CHECK-NEXT:   %[[KEPT:.*]] = arith.cmpi ne, %[[T]], %[[IGN]] : i64
  // CHECK-NEXT:   %[[C0:.*]] = arith.constant 0 : i64
  // CHECK-NEXT:   %[[SAFE:.*]] = arith.select %[[KEPT]], %[[T]], %[[C0]] : i64
  // CHECK-NEXT:   %[[CLS:.*]] = loops.indirect_index %[[SAFE]] size 64 : i64
  // CHECK-NEXT:   %[[X:.*]] = loops.load %[[LOGP]][r0_0, ind0] indirect(%[[CLS]]) : tensor<8x64xf32>
  // CHECK-NEXT:   %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
  // CHECK-NEXT:   %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK-NEXT:   %[[NEG:.*]] = arith.negf %[[X]] : f32
  // CHECK-NEXT:   %[[TERM:.*]] = arith.select %[[KEPT]], %[[NEG]], %[[ZERO]] : f32
  // CHECK-NEXT:   %[[WTERM:.*]] = arith.select %[[KEPT]], %[[ONE]], %[[ZERO]] : f32
  // CHECK-NEXT:   %[[LSUM:.*]] = loops.reduce sum %[[TERM]] : f32 -> f32
  // CHECK-NEXT:   %[[WSUM:.*]] = loops.reduce sum %[[WTERM]] : f32 -> f32
  // CHECK-NEXT:   %[[MEAN:.*]] = arith.divf %[[LSUM]], %[[WSUM]] : f32
  // CHECK-NEXT:   loops.yield %[[MEAN]], %[[WSUM]] : f32, f32
  // CHECK-NEXT: }
  // CHECK-NEXT: func.return %[[LOSS]], %[[TW]] : tensor<f32>, tensor<f32>
  // CHECK-NOT:  loops.extern
  %6, %7 = aten.nll_loss_forward %5, %t, none {reduction = 1 : i64, ignore_index = 3 : i64} : (tensor<8x64xf32>, tensor<8xi64>) -> (tensor<f32>, tensor<f32>) loc("nll_loss_forward")
  func.return %6, %7 : tensor<f32>, tensor<f32>
}

// -----

// reduction='none' with class weights: a pointwise per row reading x[n, t] and w[t] at the
// same loaded position; total_weight is the constant 0 that torch returns.
// CHECK-LABEL: func.func @nll_none_weight
func.func @nll_none_weight(%x: tensor<8x64xf32>, %t: tensor<8xi64>, %w: tensor<64xf32>) -> (tensor<8xf32>, tensor<f32>) {
  // CHECK:      loops.pointwise [8] origins ["nll_loss_forward"] -> tensor<8xf32> {
  // CHECK-NEXT:   loops.load %t[i0] : tensor<8xi64>
  // CHECK:        %[[CLS:.*]] = loops.indirect_index %{{.*}} size 64 : i64
  // CHECK-NEXT:   %[[X:.*]] = loops.load %x[i0, ind0] indirect(%[[CLS]]) : tensor<8x64xf32>
  // CHECK-NEXT:   %[[W:.*]] = loops.load %w[ind0] indirect(%[[CLS]]) : tensor<64xf32>
  // CHECK-NEXT:   arith.mulf %[[X]], %[[W]] : f32
  // CHECK:      loops.pointwise [] origins ["nll_loss_forward"] -> tensor<f32> {
  // CHECK-NEXT:   arith.constant 0.000000e+00 : f32
  %0, %1 = aten.nll_loss_forward %x, %t, %w {reduction = 0 : i64, ignore_index = -100 : i64} : (tensor<8x64xf32>, tensor<8xi64>, tensor<64xf32>) -> (tensor<8xf32>, tensor<f32>)
  func.return %0, %1 : tensor<8xf32>, tensor<f32>
}

// -----

// reduction='sum' with class weights: one reduction over the rows sums -x[n, t] * w[t] and
// w[t] (the weight is read once, at the row's position).
// CHECK-LABEL: func.func @nll_sum_weight
func.func @nll_sum_weight(%x: tensor<8x64xf32>, %t: tensor<8xi64>, %w: tensor<64xf32>) -> (tensor<f32>, tensor<f32>) {
  // CHECK:      loops.reduction [] over [8] origins ["nll_loss_forward"] -> (tensor<f32>, tensor<f32>) {
  // CHECK:        %[[KEPT:.*]] = arith.cmpi ne
  // CHECK:        %[[CLS:.*]] = loops.indirect_index %{{.*}} size 64 : i64
  // CHECK-NEXT:   loops.load %x[r0_0, ind0] indirect(%[[CLS]]) : tensor<8x64xf32>
  // CHECK-NEXT:   %[[W:.*]] = loops.load %w[ind0] indirect(%[[CLS]]) : tensor<64xf32>
  // CHECK:        %[[TERM:.*]] = arith.select %[[KEPT]], %{{.*}}, %[[ZERO:.*]] : f32
  // CHECK-NEXT:   %[[WTERM:.*]] = arith.select %[[KEPT]], %[[W]], %[[ZERO]] : f32
  // CHECK-NEXT:   %[[S:.*]] = loops.reduce sum %[[TERM]] : f32 -> f32
  // CHECK-NEXT:   %[[TW:.*]] = loops.reduce sum %[[WTERM]] : f32 -> f32
  // CHECK-NEXT:   loops.yield %[[S]], %[[TW]] : f32, f32
  // CHECK-NOT:  loops.reduction
  %0, %1 = aten.nll_loss_forward %x, %t, %w {reduction = 2 : i64, ignore_index = -100 : i64} : (tensor<8x64xf32>, tensor<8xi64>, tensor<64xf32>) -> (tensor<f32>, tensor<f32>)
  func.return %0, %1 : tensor<f32>, tensor<f32>
}

// -----

// nll_loss_backward is a pointwise over the input, no scatter: -grad / total_weight where
// the class is the (kept) target, else 0.
// CHECK-LABEL: func.func @nll_backward
func.func @nll_backward(%g: tensor<f32>, %x: tensor<8x64xf32>, %t: tensor<8xi64>, %tw: tensor<f32>) -> tensor<8x64xf32> {
  // CHECK:      loops.pointwise [8, 64] origins ["nll_loss_backward"] -> tensor<8x64xf32> {
  // CHECK-NEXT:   %[[T:.*]] = loops.load %t[i0] : tensor<8xi64>
  // CHECK-NEXT:   %[[C:.*]] = loops.index i1 : i64
  // CHECK-NEXT:   %[[IGN:.*]] = arith.constant 3 : i64
  // CHECK-NEXT:   %[[EQ:.*]] = arith.cmpi eq, %[[C]], %[[T]] : i64
  // CHECK-NEXT:   %[[KEPT:.*]] = arith.cmpi ne, %[[T]], %[[IGN]] : i64
  // CHECK-NEXT:   %[[HIT:.*]] = arith.andi %[[EQ]], %[[KEPT]] : i1
  // CHECK-NEXT:   %[[G:.*]] = loops.load %g[] : tensor<f32>
  // CHECK-NEXT:   %[[N:.*]] = loops.load %tw[] : tensor<f32>
  // CHECK-NEXT:   %[[D:.*]] = arith.divf %[[G]], %[[N]] : f32
  // CHECK-NEXT:   %[[NEG:.*]] = arith.negf %[[D]] : f32
  // CHECK-NEXT:   %[[Z:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK-NEXT:   %[[R:.*]] = arith.select %[[HIT]], %[[NEG]], %[[Z]] : f32
  // CHECK-NEXT:   loops.yield %[[R]] : f32
  %0 = aten.nll_loss_backward %g, %x, %t, none, %tw {reduction = 1 : i64, ignore_index = 3 : i64} : (tensor<f32>, tensor<8x64xf32>, tensor<8xi64>, tensor<f32>) -> tensor<8x64xf32>
  func.return %0 : tensor<8x64xf32>
}

// -----

// _softmax (when it arrives undecomposed): the max and the sum of exp(x - max) as keepdim
// reductions, kept in f32 for an f16 input, then one pointwise narrowed to f16.
// CHECK-LABEL: func.func @softmax
func.func @softmax(%x: tensor<8x64xf16>) -> tensor<8x64xf16> {
  // CHECK:      %[[MAX:.*]] = loops.reduction [8, 1] over [64] origins ["_softmax"] -> tensor<8x1xf32> {
  // CHECK-NEXT:   %[[L:.*]] = loops.load %x[i0, r0_0] : tensor<8x64xf16>
  // CHECK-NEXT:   %[[W:.*]] = arith.extf %[[L]] : f16 to f32
  // CHECK-NEXT:   %[[M:.*]] = loops.reduce max %[[W]] : f32 -> f32
  // CHECK-NEXT:   loops.yield %[[M]] : f32
  // CHECK:      %[[SUM:.*]] = loops.reduction [8, 1] over [64] origins ["_softmax"] -> tensor<8x1xf32> {
  // CHECK-NEXT:   %[[L:.*]] = loops.load %x[i0, r0_0] : tensor<8x64xf16>
  // CHECK-NEXT:   %[[W:.*]] = arith.extf %[[L]] : f16 to f32
  // CHECK-NEXT:   %[[M:.*]] = loops.load %[[MAX]][i0, 0] : tensor<8x1xf32>
  // CHECK-NEXT:   %[[D:.*]] = arith.subf %[[W]], %[[M]] : f32
  // CHECK-NEXT:   %[[E:.*]] = math.exp %[[D]] : f32
  // CHECK-NEXT:   %[[S:.*]] = loops.reduce sum %[[E]] : f32 -> f32
  // CHECK-NEXT:   loops.yield %[[S]] : f32
  // CHECK:      loops.pointwise [8, 64] origins ["_softmax"] -> tensor<8x64xf16> {
  // CHECK:        loops.load %[[MAX]][i0, 0] : tensor<8x1xf32>
  // CHECK:        loops.load %[[SUM]][i0, 0] : tensor<8x1xf32>
  // CHECK:        math.exp
  // CHECK-NEXT:   arith.divf
  // CHECK-NEXT:   arith.truncf %{{.*}} : f32 to f16
  %0 = aten._softmax %x {dim = -1 : i64, half_to_float = false} : (tensor<8x64xf16>) -> tensor<8x64xf16>
  func.return %0 : tensor<8x64xf16>
}

// -----

// _softmax_backward_data (kept by the table, as Inductor keeps it): s = sum(g * y), then
// g * y - y * s.
// CHECK-LABEL: func.func @softmax_backward
func.func @softmax_backward(%g: tensor<8x64xf32>, %y: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // CHECK:      %[[S:.*]] = loops.reduction [8, 1] over [64] origins ["_softmax_backward_data"] -> tensor<8x1xf32> {
  // CHECK-NEXT:   %[[G:.*]] = loops.load %g[i0, r0_0] : tensor<8x64xf32>
  // CHECK-NEXT:   %[[Y:.*]] = loops.load %y[i0, r0_0] : tensor<8x64xf32>
  // CHECK-NEXT:   %[[GY:.*]] = arith.mulf %[[G]], %[[Y]] : f32
  // CHECK-NEXT:   loops.reduce sum %[[GY]] : f32 -> f32
  // CHECK:      loops.pointwise [8, 64] origins ["_softmax_backward_data"] -> tensor<8x64xf32> {
  // CHECK-NEXT:   %[[G:.*]] = loops.load %g[i0, i1] : tensor<8x64xf32>
  // CHECK-NEXT:   %[[Y:.*]] = loops.load %y[i0, i1] : tensor<8x64xf32>
  // CHECK-NEXT:   %[[SV:.*]] = loops.load %[[S]][i0, 0] : tensor<8x1xf32>
  // CHECK-NEXT:   %[[GY:.*]] = arith.mulf %[[G]], %[[Y]] : f32
  // CHECK-NEXT:   %[[YS:.*]] = arith.mulf %[[Y]], %[[SV]] : f32
  // CHECK-NEXT:   %[[R:.*]] = arith.subf %[[GY]], %[[YS]] : f32
  // CHECK-NEXT:   loops.yield %[[R]] : f32
  %0 = aten._softmax_backward_data %g, %y {dim = 1 : i64, input_dtype = f32} : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  func.return %0 : tensor<8x64xf32>
}

// -----

// native_layer_norm (when it arrives undecomposed): one welford with two results, mean and
// rsqrt(m2 / n + eps), and one pointwise (x - mean) * rstd * w + b.
// CHECK-LABEL: func.func @layer_norm
func.func @layer_norm(%x: tensor<8x64xf32>, %w: tensor<64xf32>, %b: tensor<64xf32>) -> (tensor<8x64xf32>, tensor<8x1xf32>, tensor<8x1xf32>) {
  // CHECK:      %[[MEAN:.*]], %[[RSTD:.*]] = loops.reduction [8, 1] over [64] origins ["native_layer_norm"] -> (tensor<8x1xf32>, tensor<8x1xf32>) {
  // CHECK-NEXT:   %[[L:.*]] = loops.load %x[i0, r0_0] : tensor<8x64xf32>
  // CHECK-NEXT:   %[[M:.*]], %[[M2:.*]], %{{.*}} = loops.reduce welford %[[L]] : f32 -> (f32, f32, f32)
  // CHECK-NEXT:   %[[N:.*]] = arith.constant 6.400000e+01 : f32
  // CHECK-NEXT:   %[[VAR:.*]] = arith.divf %[[M2]], %[[N]] : f32
  // CHECK-NEXT:   %[[EPS:.*]] = arith.constant 1.000000e-05 : f32
  // CHECK-NEXT:   %[[VE:.*]] = arith.addf %[[VAR]], %[[EPS]] : f32
  // CHECK-NEXT:   %[[R:.*]] = math.rsqrt %[[VE]] : f32
  // CHECK-NEXT:   loops.yield %[[M]], %[[R]] : f32, f32
  // CHECK:      %[[OUT:.*]] = loops.pointwise [8, 64] origins ["native_layer_norm"] -> tensor<8x64xf32> {
  // CHECK-NEXT:   %[[X:.*]] = loops.load %x[i0, i1] : tensor<8x64xf32>
  // CHECK-NEXT:   %[[MV:.*]] = loops.load %[[MEAN]][i0, 0] : tensor<8x1xf32>
  // CHECK-NEXT:   %[[C:.*]] = arith.subf %[[X]], %[[MV]] : f32
  // CHECK-NEXT:   %[[RV:.*]] = loops.load %[[RSTD]][i0, 0] : tensor<8x1xf32>
  // CHECK-NEXT:   %[[XH:.*]] = arith.mulf %[[C]], %[[RV]] : f32
  // CHECK-NEXT:   %[[WV:.*]] = loops.load %w[i1] : tensor<64xf32>
  // CHECK-NEXT:   %[[Y:.*]] = arith.mulf %[[XH]], %[[WV]] : f32
  // CHECK-NEXT:   %[[BV:.*]] = loops.load %b[i1] : tensor<64xf32>
  // CHECK-NEXT:   %[[Z:.*]] = arith.addf %[[Y]], %[[BV]] : f32
  // CHECK-NEXT:   loops.yield %[[Z]] : f32
  // CHECK:      func.return %[[OUT]], %[[MEAN]], %[[RSTD]]
  %0, %1, %2 = aten.native_layer_norm %x, %w, %b {normalized_shape = array<i64: 64>, eps = 1.000000e-05 : f64} : (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<8x64xf32>, tensor<8x1xf32>, tensor<8x1xf32>)
  func.return %0, %1, %2 : tensor<8x64xf32>, tensor<8x1xf32>, tensor<8x1xf32>
}

// -----

// batch_norm's statistics (training, as decomposed): one welford per channel over the batch
// and spatial dims, the non-contiguous dims 0, 2, 3, with keepdim ranges [1, 16, 1, 1].
// CHECK-LABEL: func.func @batch_norm_stats
func.func @batch_norm_stats(%x: tensor<4x16x8x8xf32>) -> (tensor<1x16x1x1xf32>, tensor<1x16x1x1xf32>) {
  // CHECK:      loops.reduction [1, 16, 1, 1] over [4, 8, 8] origins ["var_mean"] -> (tensor<1x16x1x1xf32>, tensor<1x16x1x1xf32>) {
  // CHECK-NEXT:   %[[L:.*]] = loops.load %x[r0_0, i1, r0_1, r0_2] : tensor<4x16x8x8xf32>
  // CHECK-NEXT:   %[[M:.*]], %[[M2:.*]], %{{.*}} = loops.reduce welford %[[L]] : f32 -> (f32, f32, f32)
  // CHECK-NEXT:   %[[N:.*]] = arith.constant 2.560000e+02 : f32
  // CHECK-NEXT:   %[[V:.*]] = arith.divf %[[M2]], %[[N]] : f32
  // CHECK-NEXT:   loops.yield %[[V]], %[[M]] : f32, f32
  %0, %1 = aten.var_mean.correction %x {dim = array<i64: 0, 2, 3>, correction = 0 : i64, keepdim = true} : (tensor<4x16x8x8xf32>) -> (tensor<1x16x1x1xf32>, tensor<1x16x1x1xf32>) loc("var_mean")
  func.return %0, %1 : tensor<1x16x1x1xf32>, tensor<1x16x1x1xf32>
}
