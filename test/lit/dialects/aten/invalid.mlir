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
