// RUN: mlc-opt %s --split-input-file --verify-diagnostics

// What the verifier refuses of a contraction (loops.dot; dot.mlir: what it accepts).

// A dot outside a loops.reduction: a pointwise has no K to sum over.
func.func @dot_in_pointwise(%a: tensor<4x8xbf16>, %b: tensor<8x4xbf16>) {
  %0 = loops.pointwise [4, 4] -> tensor<4x4xf32> {
    %x = loops.load %a[i0, i1] : tensor<4x8xbf16>
    %y = loops.load %b[i0, i1] : tensor<8x4xbf16>
    // expected-error@+1 {{loops.dot must be directly inside loops.reduction}}
    %d = loops.dot %x, %y : bf16, bf16 -> f32
    loops.yield %d : f32
  }
  func.return
}

// -----

// The lhs (a tile of A, rows i0) may not vary with i1.
func.func @lhs_varies_with_i1(%a: tensor<4x8xbf16>, %b: tensor<8x4xbf16>) {
  // expected-error@+1 {{loops.dot: its lhs varies with i1, which a tile of A does not walk}}
  %0 = loops.reduction [4, 4] over [8] -> tensor<4x4xf32> {
    %x = loops.load %a[i1, r0_0] : tensor<4x8xbf16>
    %y = loops.load %b[r0_0, i1] : tensor<8x4xbf16>
    %d = loops.dot %x, %y : bf16, bf16 -> f32
    loops.yield %d : f32
  }
  func.return
}

// -----

// The lhs may not vary with i1 through a loops.index either (not only through a load's index).
func.func @lhs_index_i1(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) {
  // expected-error@+1 {{loops.dot: its lhs varies with i1, which a tile of A does not walk}}
  %0 = loops.reduction [4, 4] over [8] -> tensor<4x4xf32> {
    %x = loops.load %a[i0, r0_0] : tensor<4x8xf32>
    %i = loops.index i1 : i64
    %f = arith.sitofp %i : i64 to f32
    %s = arith.addf %x, %f : f32
    %y = loops.load %b[r0_0, i1] : tensor<8x4xf32>
    %d = loops.dot %s, %y : f32, f32 -> f32
    loops.yield %d : f32
  }
  func.return
}

// -----

// The rhs (a tile of B, columns i1) may not vary with i0.
func.func @rhs_varies_with_i0(%a: tensor<4x8xbf16>, %b: tensor<8x4xbf16>) {
  // expected-error@+1 {{loops.dot: its rhs varies with i0, which a tile of B does not walk}}
  %0 = loops.reduction [4, 4] over [8] -> tensor<4x4xf32> {
    %x = loops.load %a[i0, r0_0] : tensor<4x8xbf16>
    %y = loops.load %b[r0_0, i0] : tensor<8x4xbf16>
    %d = loops.dot %x, %y : bf16, bf16 -> f32
    loops.yield %d : f32
  }
  func.return
}

// -----

// The operands have one type (no mixed bf16 x f16 product).
func.func @operand_types_differ(%a: tensor<4x8xbf16>, %b: tensor<8x4xf16>) {
  %0 = loops.reduction [4, 4] over [8] -> tensor<4x4xf32> {
    %x = loops.load %a[i0, r0_0] : tensor<4x8xbf16>
    %y = loops.load %b[r0_0, i1] : tensor<8x4xf16>
    // expected-error@+1 {{loops.dot: operands of one type, got bf16 and f16}}
    %d = loops.dot %x, %y : bf16, f16 -> f32
    loops.yield %d : f32
  }
  func.return
}

// -----

// bf16 products accumulate in f32 (what tl.dot accumulates in), not in f16.
func.func @f16_from_bf16(%a: tensor<4x8xbf16>, %b: tensor<8x4xbf16>) {
  %0 = loops.reduction [4, 4] over [8] -> tensor<4x4xf16> {
    %x = loops.load %a[i0, r0_0] : tensor<4x8xbf16>
    %y = loops.load %b[r0_0, i1] : tensor<8x4xbf16>
    // expected-error@+1 {{loops.dot: bf16 products accumulate in f32, not f16}}
    %d = loops.dot %x, %y : bf16, bf16 -> f16
    loops.yield %d : f16
  }
  func.return
}

// -----

// A contraction's reduction combines nothing else: no loops.reduce beside the loops.dot.
func.func @dot_and_reduce(%a: tensor<4x8xbf16>, %b: tensor<8x4xbf16>) {
  // expected-error@+1 {{loops.reduction: a contraction has one loops.dot and no loops.reduce}}
  %0, %1 = loops.reduction [4, 4] over [8] -> (tensor<4x4xf32>, tensor<4x4xf32>) {
    %x = loops.load %a[i0, r0_0] : tensor<4x8xbf16>
    %y = loops.load %b[r0_0, i1] : tensor<8x4xbf16>
    %d = loops.dot %x, %y : bf16, bf16 -> f32
    %e = arith.extf %x : bf16 to f32
    %s = loops.reduce sum %e : f32 -> f32
    loops.yield %d, %s : f32, f32
  }
  func.return
}

// -----

// A contraction runs [M, N], not M*N merged into one range.
func.func @ranges_merged(%a: tensor<4x8xbf16>, %b: tensor<8x4xbf16>) {
  // expected-error@+1 {{loops.reduction: a loops.dot needs ranges [M, N] or [B, M, N] over [K], got 1 over 1}}
  %0 = loops.reduction [16] over [8] -> tensor<16xf32> {
    %x = loops.load %a[FloorDiv(i0, 4), r0_0] : tensor<4x8xbf16>
    %y = loops.load %b[r0_0, ModularIndexing(i0, 1, 4)] : tensor<8x4xbf16>
    %d = loops.dot %x, %y : bf16, bf16 -> f32
    loops.yield %d : f32
  }
  func.return
}

// -----

// A contraction sums over one K, not two reduction ranges.
func.func @two_reduction_ranges(%a: tensor<4x8x2xbf16>, %b: tensor<8x2x4xbf16>) {
  // expected-error@+1 {{loops.reduction: a loops.dot needs ranges [M, N] or [B, M, N] over [K], got 2 over 2}}
  %0 = loops.reduction [4, 4] over [8, 2] -> tensor<4x4xf32> {
    %x = loops.load %a[i0, r0_0, r0_1] : tensor<4x8x2xbf16>
    %y = loops.load %b[r0_0, r0_1, i1] : tensor<8x2x4xbf16>
    %d = loops.dot %x, %y : bf16, bf16 -> f32
    loops.yield %d : f32
  }
  func.return
}

// -----

// Two dots in one contraction: one GEMM per node.
func.func @two_dots(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<4x4xf32> {
  // expected-error@+1 {{loops.reduction: a contraction has one loops.dot and no loops.reduce}}
  %0 = loops.reduction [4, 4] over [8] -> tensor<4x4xf32> {
    %1 = loops.load %a[i0, r0_0] : tensor<4x8xf32>
    %2 = loops.load %b[r0_0, i1] : tensor<8x4xf32>
    %3 = loops.dot %1, %2 : f32, f32 -> f32
    %4 = loops.dot %1, %2 : f32, f32 -> f32
    %5 = arith.addf %3, %4 : f32
    loops.yield %5 : f32
  }
  func.return %0 : tensor<4x4xf32>
}

// -----

// In a batched contraction N is i2: an lhs that varies with it is not a tile of A.
func.func @batched_lhs_along_n(%a: tensor<2x4x8xbf16>, %b: tensor<2x8x4xbf16>) {
  // expected-error@+1 {{loops.dot: its lhs varies with i2, which a tile of A does not walk}}
  %0 = loops.reduction [2, 4, 4] over [8] -> tensor<2x4x4xf32> {
    %x = loops.load %a[i0, i2, r0_0] : tensor<2x4x8xbf16>
    %y = loops.load %b[i0, r0_0, i2] : tensor<2x8x4xbf16>
    %d = loops.dot %x, %y : bf16, bf16 -> f32
    loops.yield %d : f32
  }
  func.return
}

// -----

// Two batch dimensions: a batched contraction has one (bmm's; matmul's views flatten the rest).
func.func @two_batches(%a: tensor<2x2x4x8xbf16>, %b: tensor<2x2x8x4xbf16>) {
  // expected-error@+1 {{loops.reduction: a loops.dot needs ranges [M, N] or [B, M, N] over [K], got 4 over 1}}
  %0 = loops.reduction [2, 2, 4, 4] over [8] -> tensor<2x2x4x4xf32> {
    %x = loops.load %a[i0, i1, i2, r0_0] : tensor<2x2x4x8xbf16>
    %y = loops.load %b[i0, i1, r0_0, i3] : tensor<2x2x8x4xbf16>
    %d = loops.dot %x, %y : bf16, bf16 -> f32
    loops.yield %d : f32
  }
  func.return
}

// -----

// A position of the rhs that reads the column as well as the row is no group of rows.
func.func @rhs_position_of_row_and_column(%x: tensor<24x32xbf16>, %w: tensor<4x32x16xbf16>, %group: tensor<24x16xi64>) {
  // expected-error@+1 {{loops.dot: its rhs varies with i0, which a tile of B does not walk}}
  %0 = loops.reduction [24, 16] over [32] -> tensor<24x16xf32> {
    %a = loops.load %x[i0, r0_0] : tensor<24x32xbf16>
    %g = loops.load %group[i0, i1] : tensor<24x16xi64>
    %p = loops.indirect_index %g size 4 : i64
    %b = loops.load %w[ind0, r0_0, i1] indirect(%p) : tensor<4x32x16xbf16>
    %d = loops.dot %a, %b : bf16, bf16 -> f32
    loops.yield %d : f32
  }
  func.return
}
