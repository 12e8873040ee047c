// RUN: mlc-opt %s --deps --fuse="explain=true" | filecheck %s

// A gather from a computed tensor (a row permutation of exp(x)) cannot share its producer's
// kernel: a lane reads an element another lane computes. Its dep on buf0 keeps the loaded
// position (ind0), and the refusal says why.
// CHECK-LABEL: buffer.graph @gather_of_computed
// CHECK:       reads = [#buffer.memory<"idx", c0, {c0: 512}>, #buffer.memory<"buf0", ind0 + 64*c0, {c0: 8}>]
// CHECK-NOT:   buffer.fused
// CHECK:       } attributes {fusion = ["refused buf0 + buf1: [indirect] buf1 reads buf0 at positions loaded from memory (ind0 + 64*i0): any lane may need any element", "refusals: indirect: 1"]}
buffer.graph @gather_of_computed {
  buffer.input "x" #buffer.layout<[8, 64], [64, 1], f32>
  buffer.input "idx" #buffer.layout<[8, 64], [64, 1], i64>
  buffer.computed "buf0" #buffer.layout<[8, 64], [64, 1], f32> ranges [8, 64] origins ["exp"] {
    %0 = buffer.load @x[i1 + 64*i0] : f32
    %1 = math.exp %0 : f32
    buffer.store @buf0[i1 + 64*i0], %1 : f32
  }
  buffer.computed "buf1" #buffer.layout<[8, 64], [64, 1], f32> ranges [8, 64] origins ["gather"] {
    %0 = buffer.load @idx[i1 + 64*i0] : i64
    %1 = loops.indirect_index %0 size 64 : i64
    %2 = buffer.load @buf0[ind0 + 64*i0] indirect(%1) : f32
    buffer.store @buf1[i1 + 64*i0], %2 : f32
  }
  buffer.output @buf0, @buf1
}
