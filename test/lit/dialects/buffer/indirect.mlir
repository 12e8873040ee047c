// RUN: mlc-opt %s | mlc-opt | filecheck %s
// RUN: mlc-opt %s --print-op-generic | mlc-opt | filecheck %s

// Indirect indexing: an embedding's gather, a load at a loaded row.
// CHECK-LABEL: buffer.graph @embedding
buffer.graph @embedding {
  buffer.input "w" #buffer.layout<[50, 16], [16, 1], f32>
  buffer.input "ids" #buffer.layout<[12], [1], i64>
  // CHECK:      %[[K:.*]] = loops.indirect_index %{{.*}} size 50 : i64
  // CHECK-NEXT: buffer.load @w[i1 + 16*ind0] indirect(%[[K]]) : f32
  buffer.computed "buf0" #buffer.layout<[12, 16], [16, 1], f32> ranges [12, 16] {
    %0 = buffer.load @ids[i0] : i64
    %1 = loops.indirect_index %0 size 50 : i64
    %2 = buffer.load @w[i1 + 16*ind0] indirect(%1) : f32
    buffer.store @buf0[i1 + 16*i0], %2 : f32
  }
  buffer.output @buf0
}

// Its backward: zeros, then a scatter that adds each gradient row at its id's row of the
// zeros' storage (buf1 names that storage afterwards).
// CHECK-LABEL: buffer.graph @embedding_backward
// CHECK:       buffer.scatter "buf1" #buffer.layout<[50, 16], [16, 1], f32> = @buf0 ranges [12, 16] origins ["embedding_dense_backward"] {
// CHECK:         buffer.store @buf1[i1 + 16*ind0] indirect(%{{.*}}), %{{.*}} atomic_add : f32
buffer.graph @embedding_backward {
  buffer.input "g" #buffer.layout<[12, 16], [16, 1], f32>
  buffer.input "ids" #buffer.layout<[12], [1], i64>
  buffer.computed "buf0" #buffer.layout<[50, 16], [16, 1], f32> ranges [50, 16] {
    %0 = arith.constant 0.0 : f32
    buffer.store @buf0[i1 + 16*i0], %0 : f32
  }
  buffer.scatter "buf1" #buffer.layout<[50, 16], [16, 1], f32> = @buf0 ranges [12, 16] origins ["embedding_dense_backward"] {
    %0 = buffer.load @ids[i0] : i64
    %1 = loops.indirect_index %0 size 50 : i64
    %2 = buffer.load @g[i1 + 16*i0] : f32
    buffer.store @buf1[i1 + 16*ind0] indirect(%1), %2 atomic_add : f32
  }
  buffer.output @buf1
}
