// RUN: mlc-opt %s --pad-mm --split-input-file | filecheck %s

// Dynamic shapes: GPT-2's LM head over s0*s1 rows (batch times sequence). The row count is
// symbolic and stays (its alignment is unknown until run time, as in Inductor); N = 50257 is
// static and padded to 50264, the intensity judged with the rows at the size hint 8192. The
// slice back keeps the symbolic rows.
// CHECK-LABEL: func.func @lm_head
// CHECK:      %[[W:.*]] = aten.constant_pad_nd %w {pad = array<i64: 0, 7, 0, 0>, value = 0.000000e+00 : f64} : (tensor<768x50257xbf16>) -> tensor<768x50264xbf16>
// CHECK-NEXT: %[[MM:.*]] = aten.mm %x, %[[W]] : (tensor<?x768xbf16, #sym.sizes<[s0*s1, 768]>>, tensor<768x50264xbf16>) -> tensor<?x50264xbf16, #sym.sizes<[s0*s1, 50264]>>
// CHECK-NEXT: aten.slice.Tensor %[[MM]] {dim = 1 : i64, start = 0 : i64, end = 50257 : i64, step = 1 : i64} : (tensor<?x50264xbf16, #sym.sizes<[s0*s1, 50264]>>) -> tensor<?x50257xbf16, #sym.sizes<[s0*s1, 50257]>>
func.func @lm_head(%x: tensor<?x768xbf16, #sym.sizes<[s0*s1, 768]>>, %w: tensor<768x50257xbf16>) -> tensor<?x50257xbf16, #sym.sizes<[s0*s1, 50257]>> {
  %0 = aten.mm %x, %w : (tensor<?x768xbf16, #sym.sizes<[s0*s1, 768]>>, tensor<768x50257xbf16>) -> tensor<?x50257xbf16, #sym.sizes<[s0*s1, 50257]>>
  func.return %0 : tensor<?x50257xbf16, #sym.sizes<[s0*s1, 50257]>>
}

// -----

// A symbolic K with static, unaligned M and N: K may be anything, so only M and N could be
// padded; 13 rows are too few for the mm to be compute bound at any K: left alone.
// CHECK-LABEL: func.func @symbolic_k
// CHECK-NOT:  aten.constant_pad_nd
// CHECK:      aten.mm %x, %w : (tensor<13x?xbf16, #sym.sizes<[13, s0]>>, tensor<?x50257xbf16, #sym.sizes<[s0, 50257]>>) -> tensor<13x50257xbf16>
func.func @symbolic_k(%x: tensor<13x?xbf16, #sym.sizes<[13, s0]>>, %w: tensor<?x50257xbf16, #sym.sizes<[s0, 50257]>>) -> tensor<13x50257xbf16> {
  %0 = aten.mm %x, %w : (tensor<13x?xbf16, #sym.sizes<[13, s0]>>, tensor<?x50257xbf16, #sym.sizes<[s0, 50257]>>) -> tensor<13x50257xbf16>
  func.return %0 : tensor<13x50257xbf16>
}
