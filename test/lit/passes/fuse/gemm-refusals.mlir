// RUN: mlc-opt %s --split-input-file --fuse="explain=true" | filecheck %s

// The [gemm] refusals other than two contractions (gemm.mlir), on buffer IR: a contraction's
// kernel takes pointwise epilogues over its M*N outputs only, and an epilogue reads the
// result only at its own lane's element.

// A reduction of the GEMM's very kernel shape (64 x 16) that reads the product: not an epilogue.
// CHECK-LABEL: buffer.graph @reduction_same_shape
// CHECK-NOT:   buffer.fused
// CHECK:       } attributes {fusion = ["refused buf0 + buf1: [gemm] buf1 reduces: a contraction's kernel takes pointwise epilogues only", "refusals: gemm: 1"]}
buffer.graph @reduction_same_shape {
  buffer.input "x" #buffer.layout<[8, 16], [16, 1], f32>
  buffer.input "w" #buffer.layout<[16, 8], [8, 1], f32>
  buffer.input "z" #buffer.layout<[64, 16], [16, 1], f32>
  buffer.computed "buf0" #buffer.layout<[8, 8], [8, 1], f32> ranges [8, 8] reduce [16] origins ["mm"] {
    %0 = buffer.load @x[r0_0 + 16*i0] : f32
    %1 = buffer.load @w[i1 + 8*r0_0] : f32
    %2 = buffer.dot %0, %1 : f32, f32 -> f32
    buffer.store @buf0[i1 + 8*i0], %2 : f32
  }
  buffer.computed "buf1" #buffer.layout<[8, 8], [8, 1], f32> ranges [64] reduce [16] origins ["sum"] {
    %0 = buffer.load @z[r0_0 + 16*i0] : f32
    %1 = buffer.reduce sum %0 : f32 -> f32
    %2 = buffer.load @buf0[i0] : f32
    %3 = arith.addf %1, %2 : f32
    buffer.store @buf1[i0], %3 : f32
  }
  buffer.output @buf1
}

// -----

// A pointwise the K loop reads (a prologue, of as many elements as the output): not fused.
// CHECK-LABEL: buffer.graph @prologue
// CHECK-NOT:   buffer.fused
// CHECK:       } attributes {fusion = ["refused buf0 + buf1: [gemm] buf1 reads buf0 in its K loop: prologues are not fused (--inline folds one that is cheap to recompute)", "refusals: gemm: 1"]}
buffer.graph @prologue {
  buffer.input "x" #buffer.layout<[8, 8], [8, 1], f32>
  buffer.input "w" #buffer.layout<[8, 8], [8, 1], f32>
  buffer.computed "buf0" #buffer.layout<[8, 8], [8, 1], f32> ranges [64] origins ["exp"] {
    %0 = buffer.load @x[i0] : f32
    %1 = math.exp %0 : f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.computed "buf1" #buffer.layout<[8, 8], [8, 1], f32> ranges [8, 8] reduce [8] origins ["mm"] {
    %0 = buffer.load @buf0[r0_0 + 8*i0] : f32
    %1 = buffer.load @w[i1 + 8*r0_0] : f32
    %2 = buffer.dot %0, %1 : f32, f32 -> f32
    buffer.store @buf1[i1 + 8*i0], %2 : f32
  }
  buffer.output @buf0, @buf1
}

// -----

// A pointwise of M*N*K elements fits the kernel's (numel, rnumel) but not the GEMM's tile.
// CHECK-LABEL: buffer.graph @other_numel
// CHECK-NOT:   buffer.fused
// CHECK:       } attributes {fusion = ["refused buf0 + buf1: [gemm] buf1 runs 1024 elements, not the contraction's 64 outputs", "refusals: gemm: 1"]}
buffer.graph @other_numel {
  buffer.input "x" #buffer.layout<[8, 16], [16, 1], f32>
  buffer.input "w" #buffer.layout<[16, 8], [8, 1], f32>
  buffer.computed "buf0" #buffer.layout<[8, 8], [8, 1], f32> ranges [8, 8] reduce [16] origins ["mm"] {
    %0 = buffer.load @x[r0_0 + 16*i0] : f32
    %1 = buffer.load @w[i1 + 8*r0_0] : f32
    %2 = buffer.dot %0, %1 : f32, f32 -> f32
    buffer.store @buf0[i1 + 8*i0], %2 : f32
  }
  buffer.computed "buf1" #buffer.layout<[64, 16], [16, 1], f32> ranges [64, 16] origins ["mul"] {
    %0 = buffer.load @buf0[i0] : f32
    %1 = buffer.load @x[i1] : f32
    %2 = arith.mulf %0, %1 : f32
    buffer.store @buf1[i1 + 16*i0], %2 : f32
  }
  buffer.output @buf1
}

// -----

// An epilogue reading the product's first column (a row broadcast) reads another tile's element.
// CHECK-LABEL: buffer.graph @row_broadcast
// CHECK-NOT:   buffer.fused
// CHECK:       } attributes {fusion = ["refused buf0 + buf1: [gemm epilogue] buf1 reads buf0 at 8*FloorDiv(X, 8): another output tile than its lane's", "refusals: gemm epilogue: 1"]}
buffer.graph @row_broadcast {
  buffer.input "x" #buffer.layout<[8, 16], [16, 1], f32>
  buffer.input "w" #buffer.layout<[16, 8], [8, 1], f32>
  buffer.computed "buf0" #buffer.layout<[8, 8], [8, 1], f32> ranges [8, 8] reduce [16] origins ["mm"] {
    %0 = buffer.load @x[r0_0 + 16*i0] : f32
    %1 = buffer.load @w[i1 + 8*r0_0] : f32
    %2 = buffer.dot %0, %1 : f32, f32 -> f32
    buffer.store @buf0[i1 + 8*i0], %2 : f32
  }
  buffer.computed "buf1" #buffer.layout<[8, 8], [8, 1], f32> ranges [8, 8] origins ["mul"] {
    %0 = buffer.load @buf0[i1 + 8*i0] : f32
    %1 = buffer.load @buf0[8*i0] : f32
    %2 = arith.mulf %0, %1 : f32
    buffer.store @buf1[i1 + 8*i0], %2 : f32
  }
  buffer.output @buf1
}
