// RUN: mlc-opt %s --split-input-file -p 'lower-aten{gemm=triton}' | filecheck %s
// RUN: mlc-opt %s --split-input-file --lower-aten | filecheck %s --check-prefix=EXTERN
// RUN: not mlc-opt %s -p 'lower-aten{gemm=cublas}' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: mlc-opt %s --split-input-file -p 'lower-aten{gemm=triton fallback=_grouped_mm}' | filecheck %s --check-prefix=FALLBACK

// gemm=triton: mm, addmm, bmm and baddbmm of f16/bf16/f32 become contractions, a loops.reduction [M, N]
// over [K] whose loops.dot multiplies A at (i0, r0_0) by B at (r0_0, i1), the operands in
// their storage type and the sum in f32; addmm's alpha, beta and bias are the epilogue,
// rounded once. The default (gemm=extern) keeps every mm/addmm a cuBLAS call; any other
// value of `gemm` is an error.
// BAD: error: lower-aten: gemm is extern or triton, got 'cublas'

// mm of f32: the dot's f32 sum is the result, no epilogue.
// CHECK-LABEL: func.func @mm_f32
// CHECK:      loops.reduction [8, 16] over [32] origins ["mm"] -> tensor<8x16xf32> {
// CHECK-NEXT:   %[[A:.*]] = loops.load %a[i0, r0_0] : tensor<8x32xf32>
// CHECK-NEXT:   %[[B:.*]] = loops.load %b[r0_0, i1] : tensor<32x16xf32>
// CHECK-NEXT:   %[[D:.*]] = loops.dot %[[A]], %[[B]] : f32, f32 -> f32
// CHECK-NEXT:   loops.yield %[[D]] : f32
// CHECK-NEXT: }
// EXTERN-LABEL: func.func @mm_f32
// EXTERN:       loops.extern "mm.default" (%a, %b)
// EXTERN-NOT:   loops.dot
func.func @mm_f32(%a: tensor<8x32xf32>, %b: tensor<32x16xf32>) -> tensor<8x16xf32> {
  %0 = aten.mm %a, %b : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  func.return %0 : tensor<8x16xf32>
}

// -----

// bf16 addmm with a bias over N: the bias is read at [i1] after the dot, added in f32, rounded once.
// CHECK-LABEL: func.func @addmm_bias_bf16
// CHECK:      loops.reduction [8, 16] over [32] origins ["addmm"] -> tensor<8x16xbf16> {
// CHECK-NEXT:   %[[A:.*]] = loops.load %a[i0, r0_0] : tensor<8x32xbf16>
// CHECK-NEXT:   %[[B:.*]] = loops.load %w[r0_0, i1] : tensor<32x16xbf16>
// CHECK-NEXT:   %[[D:.*]] = loops.dot %[[A]], %[[B]] : bf16, bf16 -> f32
// CHECK-NEXT:   %[[BIAS:.*]] = loops.load %b[i1] : tensor<16xbf16>
// CHECK-NEXT:   %[[WIDE:.*]] = arith.extf %[[BIAS]] : bf16 to f32
// CHECK-NEXT:   %[[SUM:.*]] = arith.addf %[[D]], %[[WIDE]] : f32
// CHECK-NEXT:   %[[OUT:.*]] = arith.truncf %[[SUM]] : f32 to bf16
// CHECK-NEXT:   loops.yield %[[OUT]] : bf16
// CHECK-NEXT: }
// EXTERN-LABEL: func.func @addmm_bias_bf16
// EXTERN:       loops.extern "addmm.default" (%b, %a, %w)
func.func @addmm_bias_bf16(%b: tensor<16xbf16>, %a: tensor<8x32xbf16>, %w: tensor<32x16xbf16>) -> tensor<8x16xbf16> {
  %0 = aten.addmm %b, %a, %w : (tensor<16xbf16>, tensor<8x32xbf16>, tensor<32x16xbf16>) -> tensor<8x16xbf16>
  func.return %0 : tensor<8x16xbf16>
}

// -----

// addmm of f16 with beta=0.5, alpha=2.0 and a full [M, N] bias: alpha * (A @ B) + beta * bias.
// CHECK-LABEL: func.func @addmm_beta_alpha
// CHECK:      loops.reduction [8, 16] over [32] origins ["addmm"] -> tensor<8x16xf16> {
// CHECK:        %[[D:.*]] = loops.dot %{{.*}}, %{{.*}} : f16, f16 -> f32
// CHECK-NEXT:   %[[ALPHA:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:   %[[P:.*]] = arith.mulf %[[D]], %[[ALPHA]] : f32
// CHECK-NEXT:   %[[BIAS:.*]] = loops.load %b[i0, i1] : tensor<8x16xf16>
// CHECK-NEXT:   %[[WIDE:.*]] = arith.extf %[[BIAS]] : f16 to f32
// CHECK-NEXT:   %[[BETA:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:   %[[T:.*]] = arith.mulf %[[WIDE]], %[[BETA]] : f32
// CHECK-NEXT:   %[[SUM:.*]] = arith.addf %[[P]], %[[T]] : f32
// CHECK-NEXT:   %[[OUT:.*]] = arith.truncf %[[SUM]] : f32 to f16
// CHECK-NEXT:   loops.yield %[[OUT]] : f16
func.func @addmm_beta_alpha(%b: tensor<8x16xf16>, %a: tensor<8x32xf16>, %w: tensor<32x16xf16>) -> tensor<8x16xf16> {
  %0 = aten.addmm %b, %a, %w {beta = 5.000000e-01 : f64, alpha = 2.000000e+00 : f64} : (tensor<8x16xf16>, tensor<8x32xf16>, tensor<32x16xf16>) -> tensor<8x16xf16>
  func.return %0 : tensor<8x16xf16>
}

// -----

// addmm with beta=0 never reads the bias (as torch: not even its NaNs).
// CHECK-LABEL: func.func @addmm_beta_zero
// CHECK:      %[[D:.*]] = loops.dot %{{.*}}, %{{.*}} : f32, f32 -> f32
// CHECK-NEXT: loops.yield %[[D]] : f32
// CHECK-NOT:  loops.load %b
func.func @addmm_beta_zero(%b: tensor<1x16xf32>, %a: tensor<8x32xf32>, %w: tensor<32x16xf32>) -> tensor<8x16xf32> {
  %0 = aten.addmm %b, %a, %w {beta = 0 : i64} : (tensor<1x16xf32>, tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  func.return %0 : tensor<8x16xf32>
}

// -----

// A bias of one column broadcasts along N: it is read at [i0, 0].
// CHECK-LABEL: func.func @addmm_column_bias
// CHECK:      loops.dot
// CHECK-NEXT: loops.load %b[i0, 0] : tensor<8x1xf32>
func.func @addmm_column_bias(%b: tensor<8x1xf32>, %a: tensor<8x32xf32>, %w: tensor<32x16xf32>) -> tensor<8x16xf32> {
  %0 = aten.addmm %b, %a, %w : (tensor<8x1xf32>, tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  func.return %0 : tensor<8x16xf32>
}

// -----

// An f64 mm stays a cuBLAS call even under gemm=triton.
// CHECK-LABEL: func.func @mm_f64
// CHECK:       loops.extern "mm.default" (%a, %b) {args = [#aten.tensor, #aten.tensor]} attributes {fresh} : (tensor<8x32xf64>, tensor<32x16xf64>) -> tensor<8x16xf64>
// CHECK-NOT:   loops.dot
func.func @mm_f64(%a: tensor<8x32xf64>, %b: tensor<32x16xf64>) -> tensor<8x16xf64> {
  %0 = aten.mm %a, %b : (tensor<8x32xf64>, tensor<32x16xf64>) -> tensor<8x16xf64>
  func.return %0 : tensor<8x16xf64>
}

// -----

// bmm: a batched contraction [B, M, N] over [K]; A is read at (i0, i1, r0_0) and B at
// (i0, r0_0, i2), both along the batch i0.
// CHECK-LABEL: func.func @bmm_bf16
// CHECK:      loops.reduction [4, 8, 16] over [32] origins ["bmm"] -> tensor<4x8x16xbf16> {
// CHECK-NEXT:   %[[A:.*]] = loops.load %a[i0, i1, r0_0] : tensor<4x8x32xbf16>
// CHECK-NEXT:   %[[B:.*]] = loops.load %b[i0, r0_0, i2] : tensor<4x32x16xbf16>
// CHECK-NEXT:   %[[D:.*]] = loops.dot %[[A]], %[[B]] : bf16, bf16 -> f32
// CHECK-NEXT:   %[[OUT:.*]] = arith.truncf %[[D]] : f32 to bf16
// CHECK-NEXT:   loops.yield %[[OUT]] : bf16
// CHECK-NEXT: }
// EXTERN-LABEL: func.func @bmm_bf16
// EXTERN:       loops.extern "bmm.default" (%a, %b)
func.func @bmm_bf16(%a: tensor<4x8x32xbf16>, %b: tensor<4x32x16xbf16>) -> tensor<4x8x16xbf16> {
  %0 = aten.bmm %a, %b : (tensor<4x8x32xbf16>, tensor<4x32x16xbf16>) -> tensor<4x8x16xbf16>
  func.return %0 : tensor<4x8x16xbf16>
}

// -----

// baddbmm's bias broadcasts against the output's trailing dimensions: one of [M, N] is read
// at (i1, i2) in every batch; alpha and beta scale the product and the bias.
// CHECK-LABEL: func.func @baddbmm_f32
// CHECK:      loops.reduction [4, 8, 16] over [32] origins ["baddbmm"] -> tensor<4x8x16xf32> {
// CHECK:        %[[D:.*]] = loops.dot %{{.*}}, %{{.*}} : f32, f32 -> f32
// CHECK:        %[[P:.*]] = arith.mulf %[[D]], %{{.*}} : f32
// CHECK-NEXT:   %[[BIAS:.*]] = loops.load %c[i1, i2] : tensor<8x16xf32>
// CHECK:        arith.mulf %[[BIAS]], %{{.*}} : f32
// EXTERN-LABEL: func.func @baddbmm_f32
// EXTERN:       loops.extern "baddbmm.default" (%c, %a, %b)
func.func @baddbmm_f32(%c: tensor<8x16xf32>, %a: tensor<4x8x32xf32>, %b: tensor<4x32x16xf32>) -> tensor<4x8x16xf32> {
  %0 = aten.baddbmm %c, %a, %b {beta = 5.000000e-01 : f64, alpha = 2.000000e+00 : f64} : (tensor<8x16xf32>, tensor<4x8x32xf32>, tensor<4x32x16xf32>) -> tensor<4x8x16xf32>
  func.return %0 : tensor<4x8x16xf32>
}

// -----

// _grouped_mm of a 2-D A by a 3-D B (a mixture of experts' projection, rows sorted by expert,
// %offs the groups' ends): first each row's group, the count of ends at or below it (kept
// below G = 4); then the contraction, reading B's matrix at that group, a loaded position.
// CHECK-LABEL: func.func @grouped_mm
// CHECK:      %[[G:.*]] = loops.reduction [24] over [4] origins ["_grouped_mm"] -> tensor<24xi64> {
// CHECK-NEXT:   %[[END:.*]] = loops.load %offs[r0_0] : tensor<4xi32>
// CHECK-NEXT:   %[[END64:.*]] = arith.extsi %[[END]] : i32 to i64
// CHECK-NEXT:   %[[ROW:.*]] = loops.index i0 : i64
// CHECK-NEXT:   %[[BELOW:.*]] = arith.cmpi sle, %[[END64]], %[[ROW]] : i64
// CHECK:        %[[N:.*]] = loops.reduce sum
// CHECK:        arith.minsi %[[N]]
// CHECK:      loops.reduction [24, 16] over [32] origins ["_grouped_mm"] -> tensor<24x16xbf16> {
// CHECK-NEXT:   %[[A:.*]] = loops.load %a[i0, r0_0] : tensor<24x32xbf16>
// CHECK-NEXT:   %[[GROW:.*]] = loops.load %[[G]][i0] : tensor<24xi64>
// CHECK-NEXT:   %[[P:.*]] = loops.indirect_index %[[GROW]] size 4 : i64
// CHECK-NEXT:   %[[B:.*]] = loops.load %b[ind0, r0_0, i1] indirect(%[[P]]) : tensor<4x32x16xbf16>
// CHECK-NEXT:   %[[D:.*]] = loops.dot %[[A]], %[[B]] : bf16, bf16 -> f32
// EXTERN-LABEL: func.func @grouped_mm
// EXTERN:       loops.extern "_grouped_mm.default" (%a, %b, %offs)
// lower-aten's fallback option leaves it the extern.
// FALLBACK-LABEL: func.func @grouped_mm
// FALLBACK:       loops.extern "_grouped_mm.default" (%a, %b, %offs)
// FALLBACK-NOT:   loops.dot
func.func @grouped_mm(%a: tensor<24x32xbf16>, %b: tensor<4x32x16xbf16>, %offs: tensor<4xi32>) -> tensor<24x16xbf16> {
  %0 = aten._grouped_mm %a, %b, %offs, none : (tensor<24x32xbf16>, tensor<4x32x16xbf16>, tensor<4xi32>) -> tensor<24x16xbf16>
  func.return %0 : tensor<24x16xbf16>
}

// -----

// The weight gradient's form (2-D by 2-D, the groups along K, a 3-D result) stays the extern.
// CHECK-LABEL: func.func @grouped_mm_along_k
// CHECK:       loops.extern "_grouped_mm.default" (%a, %b, %offs)
func.func @grouped_mm_along_k(%a: tensor<16x24xbf16>, %b: tensor<24x8xbf16>, %offs: tensor<4xi32>) -> tensor<4x16x8xbf16> {
  %0 = aten._grouped_mm %a, %b, %offs, none : (tensor<16x24xbf16>, tensor<24x8xbf16>, tensor<4xi32>) -> tensor<4x16x8xbf16>
  func.return %0 : tensor<4x16x8xbf16>
}
