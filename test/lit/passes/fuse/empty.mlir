// RUN: mlc-opt %s --split-input-file --fuse="explain=true" | filecheck %s

// A node of zero elements (a size-0 dim: an empty tensor in a backward) runs no kernel, so
// it shares none: the pair is refused as empty, never given a kernel shape (whose digits
// would divide by the size 0).
// CHECK-LABEL: buffer.graph @zero_elements
// CHECK-NOT:   buffer.fused
// CHECK:       } attributes {fusion = ["refused buf0 + buf1: [empty] buf0 computes no elements: no kernel runs it", "refusals: empty: 1"]}
buffer.graph @zero_elements {
  buffer.input "t" #buffer.layout<[3], [1], f32>
  buffer.computed "buf0" #buffer.layout<[3, 0], [0, 1], f32> ranges [3, 0] origins ["expand"] {
    %0 = buffer.load @t[i0] : f32
    buffer.store @buf0[i1], %0 : f32
  }
  buffer.computed "buf1" #buffer.layout<[3, 0], [0, 1], f32> ranges [3, 0] origins ["add"] {
    %1 = buffer.load @buf0[i1] : f32
    buffer.store @buf1[i1], %1 : f32
  }
  buffer.output @buf1
}
