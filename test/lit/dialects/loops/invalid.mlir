// RUN: mlc-opt %s --split-input-file --verify-diagnostics

func.func @index_out_of_range(%x: tensor<8x64xf32>) {
  %0 = loops.pointwise [8] -> tensor<8xf32> {
    // expected-error@+1 {{index variable 'i1' is out of range here (available: i0)}}
    %a = loops.load %x[i0, i1] : tensor<8x64xf32>
    loops.yield %a : f32
  }
  func.return
}

// -----

func.func @wrong_index_count(%x: tensor<8x64xf32>) {
  %0 = loops.pointwise [8] -> tensor<8xf32> {
    // expected-error@+1 {{1 indices for a rank-2 tensor}}
    %a = loops.load %x[i0] : tensor<8x64xf32>
    loops.yield %a : f32
  }
  func.return
}

// -----

func.func @shape_mismatch(%x: tensor<8xf32>) {
  // expected-error@+1 {{result shape [4] does not match ranges [8]}}
  %0 = loops.pointwise [8] -> tensor<4xf32> {
    %a = loops.load %x[i0] : tensor<8xf32>
    loops.yield %a : f32
  }
  func.return
}

// -----

func.func @dtype_mismatch(%x: tensor<8xf32>) {
  // expected-error@+1 {{yielded f32 but the result element type is f16}}
  %0 = loops.pointwise [8] -> tensor<8xf16> {
    %a = loops.load %x[i0] : tensor<8xf32>
    loops.yield %a : f32
  }
  func.return
}

// -----

func.func @block_arguments(%x: tensor<8xf32>) {
  // expected-error@+1 {{the body takes no block arguments}}
  %0 = loops.pointwise [8] -> tensor<8xf32> {
  ^bb0(%i: index):
    %a = loops.load %x[i0] : tensor<8xf32>
    loops.yield %a : f32
  }
  func.return
}

// -----

func.func @reduction_kind(%x: tensor<8xf32>) {
  %0 = loops.reduction [1] over [8] -> tensor<1xf32> {
    %a = loops.load %x[r0_0] : tensor<8xf32>
    // expected-error@+1 {{unknown reduction type 'mean'}}
    %r = loops.reduce mean %a : f32 -> f32
    loops.yield %r : f32
  }
  func.return
}

// -----

func.func @no_reduce(%x: tensor<8xf32>) {
  // expected-error@+1 {{the body has no loops.reduce}}
  %0 = loops.reduction [1] over [8] -> tensor<1xf32> {
    %a = loops.load %x[r0_0] : tensor<8xf32>
    loops.yield %a : f32
  }
  func.return
}

// -----

func.func @epilogue_uses_prologue(%x: tensor<8xf32>) {
  %0 = loops.reduction [1] over [8] -> tensor<1xf32> {
    %a = loops.load %x[r0_0] : tensor<8xf32>
    %r = loops.reduce sum %a : f32 -> f32
    // expected-error@+1 {{arith.addf after the reduction uses a value that varies with the reduction indices}}
    %b = arith.addf %r, %a : f32
    loops.yield %b : f32
  }
  func.return
}

// -----

func.func @argmax_type(%x: tensor<8xf32>) {
  %0 = loops.reduction [1] over [8] -> tensor<1xf32> {
    %a = loops.load %x[r0_0] : tensor<8xf32>
    // expected-error@+1 {{argmax results are i64 indices}}
    %r = loops.reduce argmax %a : f32 -> f32
    loops.yield %r : f32
  }
  func.return
}

// -----

func.func @welford_results(%x: tensor<8xf32>) {
  %0 = loops.reduction [1] over [8] -> tensor<1xf32> {
    %a = loops.load %x[r0_0] : tensor<8xf32>
    // expected-error@+1 {{welford has 3 result(s), got 1}}
    %r = loops.reduce welford %a : f32 -> f32
    loops.yield %r : f32
  }
  func.return
}

// -----

func.func @reduction_index_outside(%x: tensor<8xf32>) {
  %0 = loops.pointwise [8] -> tensor<8xf32> {
    // expected-error@+1 {{index variable 'r0_0' is out of range here}}
    %a = loops.load %x[r0_0] : tensor<8xf32>
    loops.yield %a : f32
  }
  func.return
}

// -----

func.func @bad_expression(%x: tensor<8xf32>) {
  %0 = loops.pointwise [8] -> tensor<8xf32> {
    // expected-error@+1 {{unknown function 'Mod' in index expression}}
    %a = loops.load %x[Mod(i0, 2)] : tensor<8xf32>
    loops.yield %a : f32
  }
  func.return
}

// -----

// An unmasked load must stay inside the tensor at every point of the ranges.
func.func @reduction_past_the_end(%x: tensor<8x64xf32>) {
  %0 = loops.reduction [8] over [128] -> tensor<8xf32> {
    // expected-error@+1 {{loops.load: index r0_0 of dim 1 takes values 0 to 127, outside the dim's size 64}}
    %1 = loops.load %x[i0, r0_0] : tensor<8x64xf32>
    %2 = loops.reduce sum %1 : f32 -> f32
    loops.yield %2 : f32
  }
  func.return
}

// -----

func.func @pointwise_before_the_start(%x: tensor<8x64xf32>) {
  %0 = loops.pointwise [8, 64] -> tensor<8x64xf32> {
    // expected-error@+1 {{loops.load: index i1 - 1 of dim 1 takes values -1 to 62, outside the dim's size 64}}
    %1 = loops.load %x[i0, i1 - 1] : tensor<8x64xf32>
    loops.yield %1 : f32
  }
  func.return
}

// -----

func.func @strided_past_the_end(%x: tensor<8x64xf32>) {
  %0 = loops.pointwise [8, 33] -> tensor<8x33xf32> {
    // expected-error@+1 {{loops.load: index 2*i1 of dim 1 takes values 0 to 64, outside the dim's size 64}}
    %1 = loops.load %x[i0, 2*i1] : tensor<8x64xf32>
    loops.yield %1 : f32
  }
  func.return
}

// -----

func.func @indirect_symbol_without_operand(%x: tensor<8x64xf32>, %t: tensor<8xi64>) {
  %0 = loops.pointwise [8] -> tensor<8xf32> {
    %a = loops.load %t[i0] : tensor<8xi64>
    %k = loops.indirect_index %a size 64 : i64
    // expected-error@+1 {{index variable 'ind1' is out of range here (available: i0, ind0)}}
    %v = loops.load %x[i0, ind1] indirect(%k) : tensor<8x64xf32>
    loops.yield %v : f32
  }
  func.return
}

// -----

func.func @indirect_size_not_positive(%t: tensor<8xi64>) {
  %0 = loops.pointwise [8] -> tensor<8xi64> {
    %a = loops.load %t[i0] : tensor<8xi64>
    // expected-error@+1 {{loops.indirect_index: size must be positive, got 0}}
    %k = loops.indirect_index %a size 0 : i64
    loops.yield %a : i64
  }
  func.return
}

// -----

func.func @indirect_of_a_float(%x: tensor<8xf32>) {
  %0 = loops.pointwise [8] -> tensor<8xf32> {
    %a = loops.load %x[i0] : tensor<8xf32>
    // expected-error@+1 {{an indirect index is an integer, got f32}}
    %k = loops.indirect_index %a size 8 : f32
    loops.yield %a : f32
  }
  func.return
}

// -----

func.func @scatter_store_rank(%z: tensor<50x16xf32>, %g: tensor<12xf32>) {
  %r = loops.scatter %z [12] -> tensor<50x16xf32> {
    %0 = loops.load %g[i0] : tensor<12xf32>
    // expected-error@+1 {{loops.scatter_store: 1 indices for a rank-2 result}}
    loops.scatter_store [i0], %0 : f32
  }
  func.return
}

// -----

func.func @scatter_without_store(%z: tensor<8xf32>) {
  // expected-error@+1 {{loops.scatter: body must end with loops.scatter_store}}
  %r = loops.scatter %z [8] -> tensor<8xf32> {
    %0 = loops.load %z[i0] : tensor<8xf32>
    loops.yield %0 : f32
  }
  func.return
}

// -----

// A `mask` names its i1 value.
func.func @mask_without_value(%x: tensor<8xf32>) {
  %0 = loops.pointwise [8] -> tensor<8xf32> {
    // expected-error@+1 {{Expected an operand.}}
    %a = loops.load %x[i0] mask : tensor<8xf32>
    loops.yield %a : f32
  }
  func.return
}

// -----

// A loops op computes tensors; the error points at the type.
func.func @pointwise_of_a_scalar(%x: tensor<8xf32>) {
  // expected-error@+1 {{a loops op's results are tensors, got f32}}
  %0 = loops.pointwise [8] -> f32 {
    %a = loops.load %x[i0] : tensor<8xf32>
    loops.yield %a : f32
  }
  func.return
}

// -----

// An index expression's value is an integer, not an `index`.
func.func @index_value_of_type_index() {
  %0 = loops.pointwise [8] -> tensor<8xi64> {
    // expected-error@+1 {{an index expression's value is an integer, got index}}
    %i = loops.index i0 : index
    loops.yield %i : i64
  }
  func.return
}
