// RUN: mlc-opt %s --split-input-file | mlc-opt --split-input-file | filecheck %s
// RUN: mlc-opt %s --split-input-file --print-op-generic | mlc-opt --split-input-file | filecheck %s

// A contraction is a loops.reduction [M, N] over [K] around one loops.dot: the lhs loaded at
// (i0, r0_0), the rhs at (r0_0, i1); bf16 products accumulate in f32 (invalid-dot.mlir: what
// the verifier refuses).

// mm: the dot's f32 sum is the yielded value.
// CHECK-LABEL: func.func @mm
// CHECK:      loops.reduction [64, 128] over [96] origins ["mm"] -> tensor<64x128xf32> {
// CHECK-NEXT:   %[[A:.*]] = loops.load %x[i0, r0_0] : tensor<64x96xbf16>
// CHECK-NEXT:   %[[B:.*]] = loops.load %w[r0_0, i1] : tensor<96x128xbf16>
// CHECK-NEXT:   %[[D:.*]] = loops.dot %[[A]], %[[B]] : bf16, bf16 -> f32
// CHECK-NEXT:   loops.yield %[[D]] : f32
// CHECK-NEXT: }
func.func @mm(%x: tensor<64x96xbf16>, %w: tensor<96x128xbf16>) -> tensor<64x128xf32> {
  %0 = loops.reduction [64, 128] over [96] origins ["mm"] -> tensor<64x128xf32> {
    %1 = loops.load %x[i0, r0_0] : tensor<64x96xbf16>
    %2 = loops.load %w[r0_0, i1] : tensor<96x128xbf16>
    %3 = loops.dot %1, %2 : bf16, bf16 -> f32
    loops.yield %3 : f32
  }
  func.return %0 : tensor<64x128xf32>
}

// -----

// addmm: the ops after the dot are the epilogue (bias over N at [i1], alpha, one rounding to bf16).
// CHECK-LABEL: func.func @addmm
// CHECK:      loops.reduction [64, 128] over [96] origins ["addmm"] -> tensor<64x128xbf16> {
// CHECK-NEXT:   %[[A:.*]] = loops.load %x[i0, r0_0] : tensor<64x96xbf16>
// CHECK-NEXT:   %[[B:.*]] = loops.load %w[r0_0, i1] : tensor<96x128xbf16>
// CHECK-NEXT:   %[[D:.*]] = loops.dot %[[A]], %[[B]] : bf16, bf16 -> f32
// CHECK-NEXT:   %[[ALPHA:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:   %[[P:.*]] = arith.mulf %[[D]], %[[ALPHA]] : f32
// CHECK-NEXT:   %[[BIAS:.*]] = loops.load %b[i1] : tensor<128xbf16>
// CHECK-NEXT:   %[[WIDE:.*]] = arith.extf %[[BIAS]] : bf16 to f32
// CHECK-NEXT:   %[[SUM:.*]] = arith.addf %[[P]], %[[WIDE]] : f32
// CHECK-NEXT:   %[[OUT:.*]] = arith.truncf %[[SUM]] : f32 to bf16
// CHECK-NEXT:   loops.yield %[[OUT]] : bf16
// CHECK-NEXT: }
func.func @addmm(%x: tensor<64x96xbf16>, %w: tensor<96x128xbf16>, %b: tensor<128xbf16>) -> tensor<64x128xbf16> {
  %0 = loops.reduction [64, 128] over [96] origins ["addmm"] -> tensor<64x128xbf16> {
    %1 = loops.load %x[i0, r0_0] : tensor<64x96xbf16>
    %2 = loops.load %w[r0_0, i1] : tensor<96x128xbf16>
    %3 = loops.dot %1, %2 : bf16, bf16 -> f32
    %4 = arith.constant 2.0 : f32
    %5 = arith.mulf %3, %4 : f32
    %6 = loops.load %b[i1] : tensor<128xbf16>
    %7 = arith.extf %6 : bf16 to f32
    %8 = arith.addf %5, %7 : f32
    %9 = arith.truncf %8 : f32 to bf16
    loops.yield %9 : bf16
  }
  func.return %0 : tensor<64x128xbf16>
}

// -----

// f32 products accumulate in f32, and an operand may be computed from its loads (an inlined prologue).
// CHECK-LABEL: func.func @f32_prologue
// CHECK:      %[[B:.*]] = loops.load %w[i1, r0_0] : tensor<16x8xf32>
// CHECK-NEXT: %[[S:.*]] = arith.mulf %[[B]], %{{.*}} : f32
// CHECK-NEXT: %{{.*}} = loops.dot %{{.*}}, %[[S]] : f32, f32 -> f32
func.func @f32_prologue(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32> {
  %0 = loops.reduction [4, 16] over [8] -> tensor<4x16xf32> {
    %1 = loops.load %x[i0, r0_0] : tensor<4x8xf32>
    %2 = arith.constant 0.5 : f32
    %3 = loops.load %w[i1, r0_0] : tensor<16x8xf32>
    %4 = arith.mulf %3, %2 : f32
    %5 = loops.dot %1, %4 : f32, f32 -> f32
    loops.yield %5 : f32
  }
  func.return %0 : tensor<4x16xf32>
}

// -----

// bmm: a batched contraction [B, M, N] over [K]; both operands walk the batch i0.
// CHECK-LABEL: func.func @bmm
// CHECK:      loops.reduction [4, 64, 128] over [96] origins ["bmm"] -> tensor<4x64x128xf32> {
// CHECK-NEXT:   %[[A:.*]] = loops.load %x[i0, i1, r0_0] : tensor<4x64x96xbf16>
// CHECK-NEXT:   %[[B:.*]] = loops.load %w[i0, r0_0, i2] : tensor<4x96x128xbf16>
// CHECK-NEXT:   %[[D:.*]] = loops.dot %[[A]], %[[B]] : bf16, bf16 -> f32
func.func @bmm(%x: tensor<4x64x96xbf16>, %w: tensor<4x96x128xbf16>) -> tensor<4x64x128xf32> {
  %0 = loops.reduction [4, 64, 128] over [96] origins ["bmm"] -> tensor<4x64x128xf32> {
    %1 = loops.load %x[i0, i1, r0_0] : tensor<4x64x96xbf16>
    %2 = loops.load %w[i0, r0_0, i2] : tensor<4x96x128xbf16>
    %3 = loops.dot %1, %2 : bf16, bf16 -> f32
    loops.yield %3 : f32
  }
  func.return %0 : tensor<4x64x128xf32>
}

// -----

// A grouped product (_grouped_mm): the rhs reads the row i0 only through a loaded position
// of the row alone, its group, which picks B's matrix.
// CHECK-LABEL: func.func @grouped
// CHECK:        %[[P:.*]] = loops.indirect_index %{{.*}} size 4 : i64
// CHECK-NEXT:   %[[B:.*]] = loops.load %w[ind0, r0_0, i1] indirect(%[[P]]) : tensor<4x32x16xbf16>
// CHECK-NEXT:   loops.dot %{{.*}}, %[[B]] : bf16, bf16 -> f32
func.func @grouped(%x: tensor<24x32xbf16>, %w: tensor<4x32x16xbf16>, %group: tensor<24xi64>) {
  %0 = loops.reduction [24, 16] over [32] -> tensor<24x16xf32> {
    %a = loops.load %x[i0, r0_0] : tensor<24x32xbf16>
    %g = loops.load %group[i0] : tensor<24xi64>
    %p = loops.indirect_index %g size 4 : i64
    %b = loops.load %w[ind0, r0_0, i1] indirect(%p) : tensor<4x32x16xbf16>
    %d = loops.dot %a, %b : bf16, bf16 -> f32
    loops.yield %d : f32
  }
  func.return
}
