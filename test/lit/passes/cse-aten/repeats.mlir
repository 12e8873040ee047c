// RUN: mlc-opt %s --split-input-file -p cse-aten 2>/dev/null | filecheck %s
// RUN: mlc-opt %s --split-input-file -p cse-aten 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

// HF GPT-2's attention mask, built again for each layer: where(mask, 0, min) with its own two
// `full` scalars. Each op is computed once; both attention calls read the first mask, which
// realize then stores once instead of once per call.
// REMARK:      repeats.mlir:[[# @LINE + 11]]:3: remark: [cse-aten] computes aten.full once
// REMARK-NEXT: repeats.mlir:[[# @LINE + 11]]:3: remark: [cse-aten] computes aten.full once
// REMARK-NEXT: repeats.mlir:[[# @LINE + 11]]:3: remark: [cse-aten] computes aten.where.self once
// CHECK-LABEL: func.func @mask_per_layer
// CHECK-NEXT:    %0 = aten.full {{.*}}fill_value = 0.000000e+00
// CHECK-NEXT:    %1 = aten.full {{.*}}fill_value = -6.550400e+04
// CHECK-NEXT:    %2 = aten.where.self %m, %0, %1
// CHECK-NEXT:    %3 = aten.call "_scaled_dot_product_cudnn_attention.default" (%q, %q, %q, %2)
// CHECK-NEXT:    %4 = aten.call "_scaled_dot_product_cudnn_attention.default" (%q, %q, %q, %2)
// CHECK-NEXT:    func.return %3, %4
func.func @mask_per_layer(%q: tensor<2x2x16x16xbf16>, %m: tensor<2x1x16x16xi1>) -> (tensor<2x2x16x16xbf16>, tensor<2x2x16x16xbf16>) {
  %0 = aten.full {size = array<i64>, fill_value = 0.000000e+00 : f64, dtype = bf16, device = "cuda:0", pin_memory = false} : () -> tensor<bf16>
  %1 = aten.full {size = array<i64>, fill_value = -6.550400e+04 : f64, dtype = bf16, device = "cuda:0", pin_memory = false} : () -> tensor<bf16>
  %2 = aten.where.self %m, %0, %1 : (tensor<2x1x16x16xi1>, tensor<bf16>, tensor<bf16>) -> tensor<2x1x16x16xbf16>
  %3 = aten.call "_scaled_dot_product_cudnn_attention.default" (%q, %q, %q, %2) {args = [#aten.tensor, #aten.tensor, #aten.tensor, #aten.tensor, false]} attributes {fresh} : (tensor<2x2x16x16xbf16>, tensor<2x2x16x16xbf16>, tensor<2x2x16x16xbf16>, tensor<2x1x16x16xbf16>) -> tensor<2x2x16x16xbf16>
  %4 = aten.full {size = array<i64>, fill_value = 0.000000e+00 : f64, dtype = bf16, device = "cuda:0", pin_memory = false} : () -> tensor<bf16>
  %5 = aten.full {size = array<i64>, fill_value = -6.550400e+04 : f64, dtype = bf16, device = "cuda:0", pin_memory = false} : () -> tensor<bf16>
  %6 = aten.where.self %m, %4, %5 : (tensor<2x1x16x16xi1>, tensor<bf16>, tensor<bf16>) -> tensor<2x1x16x16xbf16>
  %7 = aten.call "_scaled_dot_product_cudnn_attention.default" (%q, %q, %q, %6) {args = [#aten.tensor, #aten.tensor, #aten.tensor, #aten.tensor, false]} attributes {fresh} : (tensor<2x2x16x16xbf16>, tensor<2x2x16x16xbf16>, tensor<2x2x16x16xbf16>, tensor<2x1x16x16xbf16>) -> tensor<2x2x16x16xbf16>
  func.return %3, %7 : tensor<2x2x16x16xbf16>, tensor<2x2x16x16xbf16>
}

// -----

// Ops that differ in an argument, an operand or a result type stay apart, and so do two
// empty_like (their contents are undefined) and two extern calls (aten.call: random ops and
// ops of unknown effect land there).
// CHECK-LABEL: func.func @different
// CHECK-NEXT:    aten.add.Tensor %x, %y
// CHECK-NEXT:    aten.add.Tensor %x, %y {alpha = 2 : i64}
// CHECK-NEXT:    aten.add.Tensor %y, %x
// CHECK-NEXT:    aten._to_copy %x {dtype = f32}
// CHECK-NEXT:    aten._to_copy %x {dtype = f16}
// CHECK-NEXT:    aten.empty_like %x
// CHECK-NEXT:    aten.empty_like %x
// CHECK-NEXT:    aten.call "rand_like.default" (%x)
// CHECK-NEXT:    aten.call "rand_like.default" (%x)
func.func @different(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf16>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %0 = aten.add.Tensor %x, %y : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %1 = aten.add.Tensor %x, %y {alpha = 2 : i64} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %2 = aten.add.Tensor %y, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %3 = aten._to_copy %x {dtype = f32} : (tensor<8xf32>) -> tensor<8xf32>
  %4 = aten._to_copy %x {dtype = f16} : (tensor<8xf32>) -> tensor<8xf16>
  %5 = aten.empty_like %x : (tensor<8xf32>) -> tensor<8xf32>
  %6 = aten.empty_like %x : (tensor<8xf32>) -> tensor<8xf32>
  %7 = aten.call "rand_like.default" (%x) {args = [#aten.tensor]} attributes {fresh} : (tensor<8xf32>) -> tensor<8xf32>
  %8 = aten.call "rand_like.default" (%x) {args = [#aten.tensor]} attributes {fresh} : (tensor<8xf32>) -> tensor<8xf32>
  func.return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf16>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// Two outputs stay two tensors, also through a view: eager returns separate storages, which
// the caller may write. An output may be the value a later copy is replaced by.
// REMARK-NEXT: repeats.mlir:[[# @LINE + 9]]:3: remark: [cse-aten] computes aten.mul.Tensor once
// REMARK-NOT:  remark
// CHECK-LABEL: func.func @outputs
// CHECK-NEXT:    %0 = aten.mul.Tensor %x, %x
// CHECK-NEXT:    %1 = aten.mul.Tensor %x, %x
// CHECK-NEXT:    %2 = aten.permute %1
// CHECK-NEXT:    %3 = aten.add.Tensor %0, %0
// CHECK-NEXT:    func.return %0, %2, %3
func.func @outputs(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<8x4xf32>, tensor<4x8xf32>) {
  %0 = aten.mul.Tensor %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = aten.mul.Tensor %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = aten.permute %1 {dims = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %3 = aten.mul.Tensor %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = aten.add.Tensor %0, %3 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %0, %2, %4 : tensor<4x8xf32>, tensor<8x4xf32>, tensor<4x8xf32>
}

// -----

// A call that may write its operands (not `fresh`: a functionalized graph's copy_ into an
// input) ends what earlier ops are known to compute: the add after it reads the new %x.
// CHECK-LABEL: func.func @after_a_write
// CHECK-NEXT:    aten.add.Tensor %x, %y
// CHECK-NEXT:    aten.call "copy_.default"
// CHECK-NEXT:    aten.add.Tensor %x, %y
func.func @after_a_write(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = aten.add.Tensor %x, %y : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %1 = aten.call "copy_.default" (%x, %y) {args = [#aten.tensor, #aten.tensor]} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %2 = aten.add.Tensor %x, %y : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return %0, %2 : tensor<8xf32>, tensor<8xf32>
}
