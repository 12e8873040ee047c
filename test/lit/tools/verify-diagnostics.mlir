// RUN: mlc-opt %s --split-input-file --verify-diagnostics

// Every spelling of an annotation's line that MLIR accepts: `@+N`, `@-N`, `@above`, `@below`,
// with or without a space before `@`, and none (the annotation's own line).
func.func @space_before_at(%x: tensor<8xf32>) {
  // expected-error @+1 {{result shape [9]}}
  %0 = aten.neg %x : (tensor<8xf32>) -> tensor<9xf32>
  func.return
}

// -----

func.func @minus(%x: tensor<8xf32>) {
  %0 = aten.neg %x : (tensor<8xf32>) -> tensor<9xf32>
  // expected-error@-1 {{result shape [9]}}
  func.return
}

// -----

func.func @above(%x: tensor<8xf32>) {
  %0 = aten.neg %x : (tensor<8xf32>) -> tensor<9xf32>
  // expected-error @above {{result shape [9]}}
  func.return
}

// -----

func.func @below(%x: tensor<8xf32>) {
  // expected-error @below {{result shape [9]}}
  %0 = aten.neg %x : (tensor<8xf32>) -> tensor<9xf32>
  func.return
}

// -----

func.func @same_line(%x: tensor<8xf32>) {
  %0 = aten.neg %x : (tensor<8xf32>) -> tensor<9xf32> // expected-error {{result shape [9]}}
  func.return
}
