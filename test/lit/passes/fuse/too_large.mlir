// RUN: mlc-opt %s --fuse="explain=true max-fusion-size=1" | filecheck %s

// too large: max-fusion-size=1 allows no group (Inductor's max_fusion_size, 64 by default).

// CHECK-LABEL: buffer.graph @too_large
// CHECK-NOT:   buffer.fused
// CHECK:       } attributes {fusion = ["refused buf0 + buf1: [too large] 1 + 1 nodes > max_fusion_size 1", "refusals: too large: 1"]}
buffer.graph @too_large {
  buffer.input "x" #buffer.layout<[64], [1], f32>
  buffer.computed "buf0" #buffer.layout<[64], [1], f32> ranges [64] origins ["neg"] {
    %0 = buffer.load @x[i0] : f32
    %1 = arith.negf %0 : f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.computed "buf1" #buffer.layout<[64], [1], f32> ranges [64] origins ["exp"] {
    %0 = buffer.load @buf0[i0] : f32
    %1 = math.exp %0 : f32
    buffer.store @buf1[i0], %1 : f32
  }
  buffer.output @buf1
}
