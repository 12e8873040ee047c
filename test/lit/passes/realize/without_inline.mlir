// RUN: mlc-opt %s -p 'realize{explain=true}' | filecheck %s

// Without --inline, realize is still correct, only less fused: every producer is stored and
// loaded, and explain says that no rule asked for it. A view is still no copy: its consumer
// reads the root storage through it, and the unused dead op is dropped.
// CHECK-LABEL: buffer.graph @unfused
func.func @unfused(%x: tensor<8x64xf32>) -> tensor<64x8xf32> {
  // CHECK:      buffer.computed "buf0" {{.*}} origins ["exp"] {
  // CHECK:      } attributes {realize_reason = "no rule realizes it: --inline would recompute it in its consumers"}
  %e = loops.pointwise [8, 64] origins ["exp"] -> tensor<8x64xf32> {
    %0 = loops.load %x[i0, i1] : tensor<8x64xf32>
    %1 = math.exp %0 : f32
    loops.yield %1 : f32
  }
  %t = loops.pointwise [64, 8] origins ["permute"] -> tensor<64x8xf32> {
    %0 = loops.load %e[i1, i0] : tensor<8x64xf32>
    loops.yield %0 : f32
  }
  %dead = loops.pointwise [64, 8] origins ["dead"] -> tensor<64x8xf32> {
    %0 = loops.load %t[i0, i1] : tensor<64x8xf32>
    loops.yield %0 : f32
  }
  // CHECK-NOT:  buffer.view
  // CHECK-NEXT: buffer.computed "buf1" {{.*}} origins ["neg"] {
  // CHECK-NEXT:   buffer.load @buf0[i0 + 64*i1] : f32
  // CHECK:      } attributes {realize_reason = "graph output"}
  // CHECK-NOT:  origins ["dead"]
  %n = loops.pointwise [64, 8] origins ["neg"] -> tensor<64x8xf32> {
    %0 = loops.load %t[i0, i1] : tensor<64x8xf32>
    %1 = arith.negf %0 : f32
    loops.yield %1 : f32
  }
  func.return %n : tensor<64x8xf32>
}
