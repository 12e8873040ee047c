// RUN: mlc-opt %s --pad-mm --split-input-file | filecheck %s
// RUN: mlc-opt %s --pad-mm="min-intensity-16bit=1000" --split-input-file | filecheck %s --check-prefix=HIGH
// RUN: mlc-opt %s --pad-mm="result-only=true" --split-input-file | filecheck %s --check-prefix=RESULT

// GPT-2's LM head in bf16: N = 50257 is not a multiple of 8. M*N*K / (M*K + K*N + M*N) = 553
// flops per element moved, above 148: the weight gets 7 zero columns, the mm runs on 50264
// columns and its result is sliced back to 50257 (a view, no copy). With a threshold of 1000
// it is left alone.
// CHECK-LABEL: func.func @lm_head
// CHECK-NEXT:    %[[W:.*]] = aten.constant_pad_nd %w {pad = array<i64: 0, 7, 0, 0>, value = 0.000000e+00 : f64} : (tensor<768x50257xbf16>) -> tensor<768x50264xbf16>
// CHECK-NEXT:    %[[MM:.*]] = aten.mm %x, %[[W]] attributes {origin = "linear"} : (tensor<2048x768xbf16>, tensor<768x50264xbf16>) -> tensor<2048x50264xbf16>
// CHECK-NEXT:    %[[OUT:.*]] = aten.slice.Tensor %[[MM]] {dim = 1 : i64, start = 0 : i64, end = 50257 : i64, step = 1 : i64} : (tensor<2048x50264xbf16>) -> tensor<2048x50257xbf16>
// CHECK-NEXT:    func.return %[[OUT]]
// HIGH-LABEL: func.func @lm_head
// HIGH-NEXT:    aten.mm %x, %w
func.func @lm_head(%x: tensor<2048x768xbf16>, %w: tensor<768x50257xbf16>) -> tensor<2048x50257xbf16> {
  %0 = aten.mm %x, %w attributes {origin = "linear"} : (tensor<2048x768xbf16>, tensor<768x50257xbf16>) -> tensor<2048x50257xbf16> loc("mm")
  func.return %0 : tensor<2048x50257xbf16>
}

// -----

// The LM head's input gradient: K = 50257 is padded in both operands, M and N stay.
// CHECK-LABEL: func.func @lm_head_input_grad
// CHECK-NEXT:    %[[G:.*]] = aten.constant_pad_nd %g {pad = array<i64: 0, 7, 0, 0>, {{.*}}} : (tensor<2048x50257xbf16>) -> tensor<2048x50264xbf16>
// CHECK-NEXT:    %[[W:.*]] = aten.constant_pad_nd %w {pad = array<i64: 0, 0, 0, 7>, {{.*}}} : (tensor<50257x768xbf16>) -> tensor<50264x768xbf16>
// CHECK-NEXT:    %[[MM:.*]] = aten.mm %[[G]], %[[W]] : (tensor<2048x50264xbf16>, tensor<50264x768xbf16>) -> tensor<2048x768xbf16>
// CHECK-NEXT:    func.return %[[MM]]
func.func @lm_head_input_grad(%g: tensor<2048x50257xbf16>, %w: tensor<50257x768xbf16>) -> tensor<2048x768xbf16> {
  %0 = aten.mm %g, %w : (tensor<2048x50257xbf16>, tensor<50257x768xbf16>) -> tensor<2048x768xbf16>
  func.return %0 : tensor<2048x768xbf16>
}

// -----

// f32 pads to multiples of 4; M and N both padded: two slices, rows then columns.
// CHECK-LABEL: func.func @f32_m_and_n
// CHECK-NEXT:    %[[A:.*]] = aten.constant_pad_nd %a {pad = array<i64: 0, 0, 0, 2>, {{.*}}} : (tensor<1022x512xf32>) -> tensor<1024x512xf32>
// CHECK-NEXT:    %[[B:.*]] = aten.constant_pad_nd %b {pad = array<i64: 0, 1, 0, 0>, {{.*}}} : (tensor<512x1023xf32>) -> tensor<512x1024xf32>
// CHECK-NEXT:    %[[MM:.*]] = aten.mm %[[A]], %[[B]] : (tensor<1024x512xf32>, tensor<512x1024xf32>) -> tensor<1024x1024xf32>
// CHECK-NEXT:    %[[ROWS:.*]] = aten.slice.Tensor %[[MM]] {dim = 0 : i64, start = 0 : i64, end = 1022 : i64, step = 1 : i64} : (tensor<1024x1024xf32>) -> tensor<1022x1024xf32>
// CHECK-NEXT:    %[[COLS:.*]] = aten.slice.Tensor %[[ROWS]] {dim = 1 : i64, start = 0 : i64, end = 1023 : i64, step = 1 : i64} : (tensor<1022x1024xf32>) -> tensor<1022x1023xf32>
// CHECK-NEXT:    func.return %[[COLS]]
func.func @f32_m_and_n(%a: tensor<1022x512xf32>, %b: tensor<512x1023xf32>) -> tensor<1022x1023xf32> {
  %0 = aten.mm %a, %b : (tensor<1022x512xf32>, tensor<512x1023xf32>) -> tensor<1022x1023xf32>
  func.return %0 : tensor<1022x1023xf32>
}

// -----

// Left alone: sizes already aligned; a bandwidth-bound mm (8 rows: 7.9 flops per element);
// a dim of 1 (it squeezes away); mixed dtypes; integers (no fast kernel to reach).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     aten.constant_pad_nd
// CHECK-NOT:     aten.slice
func.func @left_alone(%a: tensor<64x512xbf16>, %b: tensor<512x1024xbf16>, %c: tensor<8x1023xbf16>, %d: tensor<1023x1023xbf16>,
                      %e: tensor<1x1024xf32>, %f: tensor<1024x1xf32>, %g: tensor<1024x1023xf32>, %h: tensor<1023x1023xf16>,
                      %i: tensor<1023x1023xi64>) -> (tensor<64x1024xbf16>, tensor<8x1023xbf16>, tensor<1x1xf32>, tensor<1024x1023xf32>, tensor<1023x1023xi64>) {
  %0 = aten.mm %a, %b : (tensor<64x512xbf16>, tensor<512x1024xbf16>) -> tensor<64x1024xbf16>
  %1 = aten.mm %c, %d : (tensor<8x1023xbf16>, tensor<1023x1023xbf16>) -> tensor<8x1023xbf16>
  %2 = aten.mm %e, %f : (tensor<1x1024xf32>, tensor<1024x1xf32>) -> tensor<1x1xf32>
  %3 = aten.mm %g, %h : (tensor<1024x1023xf32>, tensor<1023x1023xf16>) -> tensor<1024x1023xf32>
  %4 = aten.mm %i, %i : (tensor<1023x1023xi64>, tensor<1023x1023xi64>) -> tensor<1023x1023xi64>
  func.return %0, %1, %2, %3, %4 : tensor<64x1024xbf16>, tensor<8x1023xbf16>, tensor<1x1xf32>, tensor<1024x1023xf32>, tensor<1023x1023xi64>
}

// -----

// An nn.Linear weight reaches the mm transposed ([50257, 768] read as [768, 50257]): cuBLAS
// reads its rows 768 apart, so only the result's rows are unaligned. By default the weight is
// still padded (as its own [50264, 768] copy, transposed back: cuBLAS picks its align1 kernel
// for an N that is not a multiple of 8 whatever the result's rows). With result-only=true
// nothing is padded or copied: the mm, and the addmm of a Linear with a bias (broadcast as it
// is), write their results with rows 50264 apart (`out`: --realize lays the buffer out with the
// result_strides, the call writes into it).
// CHECK-LABEL: func.func @linear_head
// CHECK-NEXT:    %[[P:.*]] = aten.constant_pad_nd %w {pad = array<i64: 0, 0, 0, 7>, {{.*}}} : (tensor<50257x768xbf16>) -> tensor<50264x768xbf16>
// CHECK-NEXT:    %[[T:.*]] = aten.permute %[[P]] {dims = array<i64: 1, 0>} : (tensor<50264x768xbf16>) -> tensor<768x50264xbf16>
// CHECK-NEXT:    %[[MM:.*]] = aten.mm %x, %[[T]] : (tensor<2048x768xbf16>, tensor<768x50264xbf16>) -> tensor<2048x50264xbf16>
// CHECK-NEXT:    aten.slice.Tensor %[[MM]] {dim = 1 : i64, {{.*}}} : (tensor<2048x50264xbf16>) -> tensor<2048x50257xbf16>
// CHECK:         aten.addmm {{.*}} -> tensor<2048x50264xbf16>
// RESULT-LABEL: func.func @linear_head
// RESULT-NOT:     aten.constant_pad_nd
// RESULT:         aten.mm %x, %t attributes {result_strides = [array<i64: 50264, 1>], out} : (tensor<2048x768xbf16>, tensor<768x50257xbf16>) -> tensor<2048x50257xbf16>
// RESULT-NEXT:    aten.addmm %b, %x, %t attributes {result_strides = [array<i64: 50264, 1>], out} : (tensor<50257xbf16>, tensor<2048x768xbf16>, tensor<768x50257xbf16>) -> tensor<2048x50257xbf16>
// RESULT-NEXT:    func.return
func.func @linear_head(%x: tensor<2048x768xbf16>, %w: tensor<50257x768xbf16>, %b: tensor<50257xbf16>) -> (tensor<2048x50257xbf16>, tensor<2048x50257xbf16>) {
  %t = aten.permute %w {dims = array<i64: 1, 0>} : (tensor<50257x768xbf16>) -> tensor<768x50257xbf16>
  %0 = aten.mm %x, %t : (tensor<2048x768xbf16>, tensor<768x50257xbf16>) -> tensor<2048x50257xbf16>
  %1 = aten.addmm %b, %x, %t : (tensor<50257xbf16>, tensor<2048x768xbf16>, tensor<768x50257xbf16>) -> tensor<2048x50257xbf16>
  func.return %0, %1 : tensor<2048x50257xbf16>, tensor<2048x50257xbf16>
}

// -----

// A weight transposed twice (a tied weight read as `t().t()`: rows 50257 apart, unaligned)
// is padded as the tensor it is, in its own order, and the result sliced back.
// CHECK-LABEL: func.func @twice_transposed
// CHECK-NEXT:    %[[P:.*]] = aten.constant_pad_nd %w {pad = array<i64: 0, 7, 0, 0>, {{.*}}} : (tensor<768x50257xbf16>) -> tensor<768x50264xbf16>
// CHECK-NEXT:    %[[MM:.*]] = aten.mm %x, %[[P]] : (tensor<2048x768xbf16>, tensor<768x50264xbf16>) -> tensor<2048x50264xbf16>
// CHECK-NEXT:    aten.slice.Tensor %[[MM]] {dim = 1 : i64, {{.*}}} : (tensor<2048x50264xbf16>) -> tensor<2048x50257xbf16>
func.func @twice_transposed(%x: tensor<2048x768xbf16>, %w: tensor<768x50257xbf16>) -> tensor<2048x50257xbf16> {
  %t = aten.permute %w {dims = array<i64: 1, 0>} : (tensor<768x50257xbf16>) -> tensor<50257x768xbf16>
  %tt = aten.permute %t {dims = array<i64: 1, 0>} : (tensor<50257x768xbf16>) -> tensor<768x50257xbf16>
  %0 = aten.mm %x, %tt : (tensor<2048x768xbf16>, tensor<768x50257xbf16>) -> tensor<2048x50257xbf16>
  func.return %0 : tensor<2048x50257xbf16>
}
