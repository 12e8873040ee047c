// RUN: mlc-opt %s --split-input-file --lower-aten="gemm=triton" --inline --realize="explain=true" | filecheck %s

// A computed operand of a contraction is folded into the GEMM (a prologue) only where it reads
// at most 1.1x the bytes it writes (Inductor's prologue rule): folded in, it is recomputed and
// its inputs re-read for every tile of the other dim. SwiGLU's silu(a) * b reads two tensors
// per element it writes, so it is stored and the GEMM reads it.
// CHECK-LABEL: buffer.graph @product_of_two_tensors
// CHECK:       buffer.computed "buf0" #buffer.layout<[64, 96], [96, 1], bf16> ranges [64, 96] origins ["mul", "silu"] {
// CHECK:       } attributes {realize_reason = "operand of a contraction reading 2x the bytes it writes"}
// CHECK:       buffer.computed "buf1" {{.*}} ranges [64, 48] reduce [96] origins ["mm"] {
// CHECK:         buffer.load @buf0[r0_0 + 96*i0] : bf16
// CHECK:         buffer.dot
func.func @product_of_two_tensors(%a: tensor<64x96xbf16>, %b: tensor<64x96xbf16>, %w: tensor<96x48xbf16>) -> tensor<64x48xbf16> {
  %s = aten.silu %a attributes {origin = "silu"} : (tensor<64x96xbf16>) -> tensor<64x96xbf16>
  %m = aten.mul.Tensor %s, %b attributes {origin = "mul"} : (tensor<64x96xbf16>, tensor<64x96xbf16>) -> tensor<64x96xbf16>
  %0 = aten.mm %m, %w attributes {origin = "mm"} : (tensor<64x96xbf16>, tensor<96x48xbf16>) -> tensor<64x48xbf16>
  func.return %0 : tensor<64x48xbf16>
}

// -----

// An upcast reads half the bytes it writes, and a per-column scale (1/64 of a read per
// element) adds little: both fold into the GEMM, which reads the bf16 input itself.
// CHECK-LABEL: buffer.graph @upcast_and_scale
// CHECK-NOT:   realize_reason = "operand
// CHECK:       buffer.computed "buf0" {{.*}} ranges [64, 48] reduce [96] origins ["_to_copy", "mm", "mul"] {
// CHECK:         buffer.load @a[r0_0 + 96*i0] : bf16
// CHECK:         buffer.load @scale[r0_0] : f32
// CHECK:         buffer.dot
func.func @upcast_and_scale(%a: tensor<64x96xbf16>, %scale: tensor<96xf32>, %w: tensor<96x48xf32>) -> tensor<64x48xf32> {
  %c = aten._to_copy %a {dtype = 6 : i64} attributes {origin = "_to_copy"} : (tensor<64x96xbf16>) -> tensor<64x96xf32>
  %m = aten.mul.Tensor %c, %scale attributes {origin = "mul"} : (tensor<64x96xf32>, tensor<96xf32>) -> tensor<64x96xf32>
  %0 = aten.mm %m, %w attributes {origin = "mm"} : (tensor<64x96xf32>, tensor<96x48xf32>) -> tensor<64x48xf32>
  func.return %0 : tensor<64x48xf32>
}

// -----

// A downcast reads twice the bytes it writes: the bf16 copy is stored (the GEMM reads 2 bytes
// per element, not 4, for every tile).
// CHECK-LABEL: buffer.graph @downcast
// CHECK:       buffer.computed "buf0" #buffer.layout<[64, 96], [96, 1], bf16> ranges [64, 96] origins ["_to_copy"] {
// CHECK:       } attributes {realize_reason = "operand of a contraction reading 2x the bytes it writes"}
func.func @downcast(%a: tensor<64x96xf32>, %w: tensor<96x48xbf16>) -> tensor<64x48xbf16> {
  %c = aten._to_copy %a {dtype = 15 : i64} attributes {origin = "_to_copy"} : (tensor<64x96xf32>) -> tensor<64x96xbf16>
  %0 = aten.mm %c, %w attributes {origin = "mm"} : (tensor<64x96xbf16>, tensor<96x48xbf16>) -> tensor<64x48xbf16>
  func.return %0 : tensor<64x48xbf16>
}
