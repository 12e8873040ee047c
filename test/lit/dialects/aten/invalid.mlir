// RUN: mlc-opt %s --split-input-file --verify-diagnostics

func.func @no_broadcast(%x: tensor<8x64xf32>, %y: tensor<32xf32>) {
  // expected-error@+1 {{operand shapes [8, 64], [32] do not broadcast}}
  %0 = aten.add.Tensor %x, %y : (tensor<8x64xf32>, tensor<32xf32>) -> tensor<8x64xf32>
  func.return
}

// -----

func.func @wrong_result_shape(%x: tensor<8x64xf32>) {
  // expected-error@+1 {{result shape [8, 32] is not the broadcast shape [8, 64]}}
  %0 = aten.neg %x : (tensor<8x64xf32>) -> tensor<8x32xf32>
  func.return
}

// -----

func.func @unknown_argument(%x: tensor<8xf32>) {
  // expected-error@+1 {{aten.neg: unknown argument 'alpha'}}
  %0 = aten.neg %x {alpha = 1 : i64} : (tensor<8xf32>) -> tensor<8xf32>
  func.return
}

// -----

func.func @result_count(%x: tensor<8x4xf32>) {
  // expected-error@+1 {{expected 2 results, got 1}}
  %0 = aten.max.dim %x {dim = 1 : i64} : (tensor<8x4xf32>) -> tensor<8xf32>
  func.return
}

// -----

func.func @call_marks(%x: tensor<8xf32>) {
  // expected-error@+1 {{arguments mark 2 tensors but the op has 1 operands}}
  %0 = aten.call "foo.default" (%x) {args = [#aten.tensor, #aten.tensor]} : (tensor<8xf32>) -> tensor<8xf32>
  func.return
}

// -----

func.func @operand_types(%x: tensor<8xf32>) {
  // expected-error@+1 {{expected 1 operand types, got 2}}
  %0 = aten.neg %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return
}

// -----

func.func @unknown_op(%x: tensor<8xf32>) {
  // expected-error@+1 {{aten.frobnicate is not registered}}
  %0 = aten.frobnicate %x : (tensor<8xf32>) -> tensor<8xf32>
  func.return
}

// -----

func.func @reduce_missing_dim(%x: tensor<8x64xf32>) {
  // expected-error@+1 {{aten.sum.dim_IntList: dim 2 is out of range for a rank-2 tensor (expected -2 to 1)}}
  %0 = aten.sum.dim_IntList %x {dim = array<i64: 2>} : (tensor<8x64xf32>) -> tensor<8xf32>
  func.return
}

// -----

func.func @reduce_negative_dim(%x: tensor<8x64xf32>) {
  // expected-error@+1 {{aten.amax: dim -3 is out of range for a rank-2 tensor (expected -2 to 1)}}
  %0 = aten.amax %x {dim = array<i64: -3>} : (tensor<8x64xf32>) -> tensor<8xf32>
  func.return
}

// -----

func.func @reduce_dim_twice(%x: tensor<8x64xf32>) {
  // expected-error@+1 {{aten.sum.dim_IntList: dim [1, -1] names dim 1 twice}}
  %0 = aten.sum.dim_IntList %x {dim = array<i64: 1, -1>} : (tensor<8x64xf32>) -> tensor<8xf32>
  func.return
}

// -----

func.func @reduce_result_shape(%x: tensor<8x64xf32>) {
  // expected-error@+1 {{aten.max.dim: result shape [8] is not [8, 1], the shape [8, 64] reduced over dims [1] with keepdim}}
  %0, %1 = aten.max.dim %x {dim = 1 : i64, keepdim = true} : (tensor<8x64xf32>) -> (tensor<8xf32>, tensor<8xi64>)
  func.return
}

// -----

func.func @softmax_dim(%x: tensor<8x64xf32>) {
  // expected-error@+1 {{aten._softmax: dim 2 is out of range for a rank-2 tensor}}
  %0 = aten._softmax %x {dim = 2 : i64, half_to_float = false} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  func.return
}

// -----

func.func @scalar_dim(%x: tensor<f32>) {
  // A 0-d tensor takes dims 0 and -1 only.
  // expected-error@+1 {{aten.sum.dim_IntList: dim 1 is out of range for a rank-0 tensor (expected -1 to 0)}}
  %0 = aten.sum.dim_IntList %x {dim = array<i64: 1>} : (tensor<f32>) -> tensor<f32>
  func.return
}

// -----

func.func @permute_dim(%x: tensor<8x64xf32>) {
  // expected-error@+1 {{aten.permute: dim 2 in dims is out of range for a rank-2 tensor}}
  %0 = aten.permute %x {dims = array<i64: 1, 2>} : (tensor<8x64xf32>) -> tensor<64x8xf32>
  func.return
}

// -----

func.func @permute_repeats(%x: tensor<8x64xf32>) {
  // expected-error@+1 {{aten.permute: dims [1, 1] names dim 1 twice}}
  %0 = aten.permute %x {dims = array<i64: 1, 1>} : (tensor<8x64xf32>) -> tensor<64x8xf32>
  func.return
}

// -----

func.func @permute_short(%x: tensor<8x64xf32>) {
  // expected-error@+1 {{aten.permute: dims [1] name 1 dims of a rank-2 tensor}}
  %0 = aten.permute %x {dims = array<i64: 1>} : (tensor<8x64xf32>) -> tensor<64x8xf32>
  func.return
}

// -----

func.func @transpose_dim(%x: tensor<8x64xf32>) {
  // expected-error@+1 {{aten.transpose.int: dim1 3 is out of range for a rank-2 tensor}}
  %0 = aten.transpose.int %x {dim0 = 0 : i64, dim1 = 3 : i64} : (tensor<8x64xf32>) -> tensor<64x8xf32>
  func.return
}

// -----

func.func @select_dim(%x: tensor<8x64xf32>) {
  // expected-error@+1 {{aten.select.int: dim 5 is out of range for a rank-2 tensor}}
  %0 = aten.select.int %x {dim = 5 : i64, index = 0 : i64} : (tensor<8x64xf32>) -> tensor<8xf32>
  func.return
}

// -----

func.func @select_index(%x: tensor<8x64xf32>) {
  // expected-error@+1 {{aten.select.int: index -65 is out of range for dim 1 of size 64}}
  %0 = aten.select.int %x {dim = 1 : i64, index = -65 : i64} : (tensor<8x64xf32>) -> tensor<8xf32>
  func.return
}

// -----

func.func @squeeze_dim(%x: tensor<8x1xf32>) {
  // expected-error@+1 {{aten.squeeze.dim: dim 2 is out of range for a rank-2 tensor}}
  %0 = aten.squeeze.dim %x {dim = 2 : i64} : (tensor<8x1xf32>) -> tensor<8xf32>
  func.return
}

// -----

func.func @unsqueeze_dim(%x: tensor<8xf32>) {
  // unsqueeze may name one dim past the last (the new one): -2 to 1 here, not 2.
  // expected-error@+1 {{aten.unsqueeze: dim 2 is out of range for a rank-1 tensor (expected -2 to 1)}}
  %0 = aten.unsqueeze %x {dim = 2 : i64} : (tensor<8xf32>) -> tensor<8x1xf32>
  func.return
}

// -----

func.func @cat_dim(%x: tensor<8x64xf32>) {
  // expected-error@+1 {{aten.cat: dim 2 is out of range for a rank-2 tensor}}
  %0 = aten.cat [%x, %x] {dim = 2 : i64} : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x128xf32>
  func.return
}

// -----

func.func @cat_shapes(%x: tensor<8x64xf32>, %y: tensor<4x64xf32>) {
  // expected-error@+1 {{aten.cat: tensors of shapes [8, 64] and [4, 64] do not join along dim 1}}
  %0 = aten.cat [%x, %y] {dim = 1 : i64} : (tensor<8x64xf32>, tensor<4x64xf32>) -> tensor<8x128xf32>
  func.return
}

// -----

func.func @view_numel(%x: tensor<8x64xf32>) {
  // expected-error@+1 {{aten.view: result shape [8, 32] has 256 elements, the operand [8, 64] has 512}}
  %0 = aten.view %x {size = array<i64: 8, 32>} : (tensor<8x64xf32>) -> tensor<8x32xf32>
  func.return
}
