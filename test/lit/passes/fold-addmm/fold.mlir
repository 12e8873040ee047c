// RUN: mlc-opt %s --split-input-file -p fold-addmm | filecheck %s
// RUN: mlc-opt %s --split-input-file -p fold-addmm --print-debuginfo | filecheck %s --check-prefix=LOC

// The mm on the left folds: the addmm takes the add's location and origin, the mm is gone.
// CHECK-LABEL: func.func @mm_on_left
// CHECK-NEXT:    %0 = aten.addmm %c, %a, %b attributes {origin = "linear"} : (tensor<8x64xf32>, tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
// CHECK-NEXT:    func.return %0 : tensor<8x64xf32>
// LOC-LABEL:   func.func @mm_on_left
// LOC:           aten.addmm {{.*}} loc("add")
func.func @mm_on_left(%a: tensor<8x32xf32>, %b: tensor<32x64xf32>, %c: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %0 = aten.mm %a, %b : (tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32> loc("mm")
  %1 = aten.add.Tensor %0, %c attributes {origin = "linear"} : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32> loc("add")
  func.return %1 : tensor<8x64xf32>
}

// -----

// The mm on the right folds the same way; alpha = 1 written out is the default.
// CHECK-LABEL: func.func @mm_on_right
// CHECK-NEXT:    %0 = aten.addmm %c, %a, %b : (tensor<8x64xf32>, tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
// CHECK-NEXT:    func.return %0
func.func @mm_on_right(%a: tensor<8x32xf32>, %b: tensor<32x64xf32>, %c: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %0 = aten.mm %a, %b : (tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
  %1 = aten.add.Tensor %c, %0 {alpha = 1 : i64} : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  func.return %1 : tensor<8x64xf32>
}

// -----

// x.grad of x feeding two Linear layers: the right product accumulates into the left one.
// CHECK-LABEL: func.func @two_products
// CHECK-NEXT:    %0 = aten.mm %g1, %w1
// CHECK-NEXT:    %1 = aten.addmm %0, %g2, %w2 : (tensor<8x64xf32>, tensor<8x16xf32>, tensor<16x64xf32>) -> tensor<8x64xf32>
// CHECK-NEXT:    func.return %1
func.func @two_products(%g1: tensor<8x32xf32>, %w1: tensor<32x64xf32>, %g2: tensor<8x16xf32>, %w2: tensor<16x64xf32>) -> tensor<8x64xf32> {
  %0 = aten.mm %g1, %w1 : (tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
  %1 = aten.mm %g2, %w2 : (tensor<8x16xf32>, tensor<16x64xf32>) -> tensor<8x64xf32>
  %2 = aten.add.Tensor %0, %1 : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  func.return %2 : tensor<8x64xf32>
}

// -----

// Three products (q/k/v): the outer add folds first, so the inner one feeds an addmm and folds too.
// CHECK-LABEL: func.func @three_products
// CHECK-NEXT:    %0 = aten.mm %g, %w
// CHECK-NEXT:    %1 = aten.addmm %0, %g, %w
// CHECK-NEXT:    %2 = aten.addmm %1, %g, %w
// CHECK-NEXT:    func.return %2
func.func @three_products(%g: tensor<8x32xf32>, %w: tensor<32x64xf32>) -> tensor<8x64xf32> {
  %0 = aten.mm %g, %w : (tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
  %1 = aten.mm %g, %w : (tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
  %2 = aten.mm %g, %w : (tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
  %3 = aten.add.Tensor %0, %1 : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  %4 = aten.add.Tensor %3, %2 : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  func.return %4 : tensor<8x64xf32>
}

// -----

// A 1-D bias whose sum is returned (a use that is not pointwise) folds: it expands to [8, 64].
// CHECK-LABEL: func.func @bias_to_output
// CHECK-NEXT:    %0 = aten.addmm %bias, %a, %b : (tensor<64xf32>, tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
// CHECK-NEXT:    %1 = aten.relu %0
// CHECK-NEXT:    func.return %0, %1
func.func @bias_to_output(%a: tensor<8x32xf32>, %b: tensor<32x64xf32>, %bias: tensor<64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>) {
  %0 = aten.mm %a, %b : (tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
  %1 = aten.add.Tensor %0, %bias : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  %2 = aten.relu %1 : (tensor<8x64xf32>) -> tensor<8x64xf32>
  func.return %1, %2 : tensor<8x64xf32>, tensor<8x64xf32>
}

// -----

// Not folded (should_prefer_unfused_addmm): every use is pointwise, so the bias add fuses
// into the relu's kernel instead.
// CHECK-LABEL: func.func @bias_into_pointwise
// CHECK-NEXT:    %0 = aten.mm %a, %b
// CHECK-NEXT:    %1 = aten.add.Tensor %0, %bias
// CHECK-NEXT:    %2 = aten.relu %1
func.func @bias_into_pointwise(%a: tensor<8x32xf32>, %b: tensor<32x64xf32>, %bias: tensor<64xf32>) -> tensor<8x64xf32> {
  %0 = aten.mm %a, %b : (tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
  %1 = aten.add.Tensor %0, %bias : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  %2 = aten.relu %1 : (tensor<8x64xf32>) -> tensor<8x64xf32>
  func.return %2 : tensor<8x64xf32>
}

// -----

// Not folded: uses through a view count as the view's uses, here a pointwise mul.
// CHECK-LABEL: func.func @through_view_into_pointwise
// CHECK-NEXT:    %0 = aten.mm %a, %b
// CHECK-NEXT:    %1 = aten.add.Tensor %0, %bias
func.func @through_view_into_pointwise(%a: tensor<8x32xf32>, %b: tensor<32x64xf32>, %bias: tensor<1x64xf32>) -> tensor<64x8xf32> {
  %0 = aten.mm %a, %b : (tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
  %1 = aten.add.Tensor %0, %bias : (tensor<8x64xf32>, tensor<1x64xf32>) -> tensor<8x64xf32>
  %2 = aten.permute %1 {dims = array<i64: 1, 0>} : (tensor<8x64xf32>) -> tensor<64x8xf32>
  %3 = aten.mul.Tensor %2, %2 : (tensor<64x8xf32>, tensor<64x8xf32>) -> tensor<64x8xf32>
  func.return %3 : tensor<64x8xf32>
}

// -----

// Not folded: the mm's result is also returned, so it must be computed on its own anyway.
// CHECK-LABEL: func.func @mm_used_twice
// CHECK-NEXT:    %0 = aten.mm %a, %b
// CHECK-NEXT:    %1 = aten.add.Tensor %0, %c
func.func @mm_used_twice(%a: tensor<8x32xf32>, %b: tensor<32x64xf32>, %c: tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>) {
  %0 = aten.mm %a, %b : (tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
  %1 = aten.add.Tensor %0, %c : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  func.return %0, %1 : tensor<8x64xf32>, tensor<8x64xf32>
}

// -----

// Not folded: alpha scales the other operand, which addmm cannot express with beta = 1.
// CHECK-LABEL: func.func @alpha_two
// CHECK-NEXT:    %0 = aten.mm %a, %b
// CHECK-NEXT:    %1 = aten.add.Tensor %0, %c {alpha = 2 : i64}
func.func @alpha_two(%a: tensor<8x32xf32>, %b: tensor<32x64xf32>, %c: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %0 = aten.mm %a, %b : (tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
  %1 = aten.add.Tensor %0, %c {alpha = 2 : i64} : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  func.return %1 : tensor<8x64xf32>
}

// -----

// Not folded: an f16 product plus an f32 tensor (cuBLAS's addmm takes one dtype).
// CHECK-LABEL: func.func @dtypes_differ
// CHECK-NEXT:    %0 = aten.mm %a, %b
// CHECK-NEXT:    %1 = aten.add.Tensor %0, %c
func.func @dtypes_differ(%a: tensor<8x32xf16>, %b: tensor<32x64xf16>, %c: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %0 = aten.mm %a, %b : (tensor<8x32xf16>, tensor<32x64xf16>) -> tensor<8x64xf16>
  %1 = aten.add.Tensor %0, %c : (tensor<8x64xf16>, tensor<8x64xf32>) -> tensor<8x64xf32>
  func.return %1 : tensor<8x64xf32>
}

// -----

// Not folded: the other operand is [2, 8, 64], so the sum is larger than the product.
// CHECK-LABEL: func.func @not_expandable
// CHECK-NEXT:    %0 = aten.mm %a, %b
// CHECK-NEXT:    %1 = aten.add.Tensor %0, %c
func.func @not_expandable(%a: tensor<8x32xf32>, %b: tensor<32x64xf32>, %c: tensor<2x8x64xf32>) -> tensor<2x8x64xf32> {
  %0 = aten.mm %a, %b : (tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
  %1 = aten.add.Tensor %0, %c : (tensor<8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  func.return %1 : tensor<2x8x64xf32>
}
