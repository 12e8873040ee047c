// RUN: mlc-opt %s --split-input-file --fuse="explain=true" | filecheck %s

// One refusal of each kind, with its category and reason, and the count per category that
// ends the log. (`memory` and `different offset`: refusals-offset-memory.mlir; `too large`:
// too_large.mlir.)

// extern: a library kernel's result is read by a pointwise node; nothing fuses into an extern.
// CHECK-LABEL: buffer.graph @extern
// CHECK-NOT:   buffer.fused
// CHECK:       } attributes {fusion = ["refused buf0 + buf1: [extern] buf0 is a buffer.extern, not a kernel", "refusals: extern: 1"]}
buffer.graph @extern {
  buffer.input "a" #buffer.layout<[8, 8], [8, 1], f32>
  buffer.extern "buf0" = "mm.default" {args = [@a, @a]} : #buffer.layout<[8, 8], [8, 1], f32>
  buffer.computed "buf1" #buffer.layout<[8, 8], [8, 1], f32> ranges [64] origins ["relu"] {
    %0 = buffer.load @buf0[i0] : f32
    %1 = arith.constant 0.0 : f32
    %2 = arith.maximumf %0, %1 : f32
    buffer.store @buf1[i0], %2 : f32
  }
  buffer.output @buf1
}

// -----

// different numel: a cat reads two 64-element buffers into 128 elements.
// CHECK-LABEL: buffer.graph @cat
// CHECK-NOT:   buffer.fused
// CHECK:       } attributes {fusion = ["refused buf0 + buf1: [different numel] buf1 runs 128 elements, the kernel 64", "refusals: different numel: 1"]}
buffer.graph @cat {
  buffer.input "x" #buffer.layout<[64], [1], f32>
  buffer.computed "buf0" #buffer.layout<[64], [1], f32> ranges [64] origins ["exp"] {
    %0 = buffer.load @x[i0] : f32
    %1 = math.exp %0 : f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.computed "buf1" #buffer.layout<[128], [1], f32> ranges [128] origins ["cat"] {
    %c64 = arith.constant 64 : i64
    %i = loops.index i0 : i64
    %lt = arith.cmpi slt, %i, %c64 : i64
    %ge = arith.cmpi sge, %i, %c64 : i64
    %0 = buffer.load @buf0[i0] mask %lt : f32
    %1 = buffer.load @x[i0 - 64] mask %ge : f32
    %2 = arith.select %lt, %0, %1 : f32
    buffer.store @buf1[i0], %2 : f32
  }
  buffer.output @buf1
}

// -----

// reduction sizes: rows of 100 and rows of 200 of the same 800 elements.
// CHECK-LABEL: buffer.graph @reduction_sizes
// CHECK-NOT:   buffer.fused
// CHECK:       } attributes {fusion = ["refused buf0 + buf1: [reduction sizes] buf0 reduces 8 x 100, buf1 4 x 200", "refusals: reduction sizes: 1"]}
buffer.graph @reduction_sizes {
  buffer.input "x" #buffer.layout<[800], [1], f32>
  buffer.computed "buf0" #buffer.layout<[8], [1], f32> ranges [8] reduce [100] origins ["sum"] {
    %0 = buffer.load @x[r0_0 + 100*i0] : f32
    %1 = buffer.reduce sum %0 : f32 -> f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.computed "buf1" #buffer.layout<[4], [1], f32> ranges [4] reduce [200] origins ["sum"] {
    %0 = buffer.load @x[r0_0 + 200*i0] : f32
    %1 = buffer.reduce sum %0 : f32 -> f32
    buffer.store @buf1[i0], %1 : f32
  }
  buffer.output @buf0, @buf1
}

// -----

// cycle: buf2 reads buf0 directly and through the extern buf1; fusing buf0 and buf2 would
// need the matmul inside the kernel.
// CHECK-LABEL: buffer.graph @cycle
// CHECK-NOT:   buffer.fused
// CHECK:       } attributes {fusion = ["refused buf0 + buf1: [extern] buf1 is a buffer.extern, not a kernel", "refused buf0 + buf2: [cycle] buf1 depends on one of buf0, buf2 and feeds the other: fusing would need it inside the kernel", "refused buf1 + buf2: [extern] buf1 is a buffer.extern, not a kernel", "refusals: cycle: 1", "refusals: extern: 2"]}
buffer.graph @cycle {
  buffer.input "x" #buffer.layout<[8, 8], [8, 1], f32>
  buffer.computed "buf0" #buffer.layout<[8, 8], [8, 1], f32> ranges [64] origins ["exp"] {
    %0 = buffer.load @x[i0] : f32
    %1 = math.exp %0 : f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.extern "buf1" = "mm.default" {args = [@buf0, @buf0]} : #buffer.layout<[8, 8], [8, 1], f32>
  buffer.computed "buf2" #buffer.layout<[8, 8], [8, 1], f32> ranges [64] origins ["add"] {
    %0 = buffer.load @buf0[i0] : f32
    %1 = buffer.load @buf1[i0] : f32
    %2 = arith.addf %0, %1 : f32
    buffer.store @buf2[i0], %2 : f32
  }
  buffer.output @buf2
}

// -----

// cycle through two externs: the refusal names the latest one in program order (the search
// visits users in program order, so the message is the same in every run).
// CHECK-LABEL: buffer.graph @cycle_two_paths
// CHECK:       "refused buf0 + buf3: [cycle] buf2 depends on one of buf0, buf3 and feeds the other: fusing would need it inside the kernel"
buffer.graph @cycle_two_paths {
  buffer.input "x" #buffer.layout<[8, 8], [8, 1], f32>
  buffer.computed "buf0" #buffer.layout<[8, 8], [8, 1], f32> ranges [64] origins ["exp"] {
    %0 = buffer.load @x[i0] : f32
    %1 = math.exp %0 : f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.extern "buf1" = "mm.default" {args = [@buf0, @buf0]} : #buffer.layout<[8, 8], [8, 1], f32>
  buffer.extern "buf2" = "mm.default" {args = [@buf0, @x]} : #buffer.layout<[8, 8], [8, 1], f32>
  buffer.computed "buf3" #buffer.layout<[8, 8], [8, 1], f32> ranges [64] origins ["add"] {
    %0 = buffer.load @buf0[i0] : f32
    %1 = buffer.load @buf1[i0] : f32
    %2 = buffer.load @buf2[i0] : f32
    %3 = arith.addf %0, %1 : f32
    %4 = arith.addf %3, %2 : f32
    buffer.store @buf3[i0], %4 : f32
  }
  buffer.output @buf3
}

// -----

// broadcast: every element of a row reads the row's first element of buf0, which another lane
// of the kernel computes.
// CHECK-LABEL: buffer.graph @broadcast
// CHECK-NOT:   buffer.fused
// CHECK:       } attributes {fusion = ["refused buf0 + buf1: [broadcast] buf1 reads buf0 at 100*FloorDiv(X, 100) where buf0 writes X (X, R: the kernel's flat lanes)", "refusals: broadcast: 1"]}
buffer.graph @broadcast {
  buffer.input "x" #buffer.layout<[8, 100], [100, 1], f32>
  buffer.computed "buf0" #buffer.layout<[8, 100], [100, 1], f32> ranges [8, 100] origins ["exp"] {
    %0 = buffer.load @x[i1 + 100*i0] : f32
    %1 = math.exp %0 : f32
    buffer.store @buf0[i1 + 100*i0], %1 : f32
  }
  buffer.computed "buf1" #buffer.layout<[8, 100], [100, 1], f32> ranges [8, 100] origins ["sub"] {
    %0 = buffer.load @x[i1 + 100*i0] : f32
    %1 = buffer.load @buf0[100*i0] : f32
    %2 = arith.subf %0, %1 : f32
    buffer.store @buf1[i1 + 100*i0], %2 : f32
  }
  buffer.output @buf1
}

// -----

// different loop order: buf1 adds buf0 to its transpose (x + x.T). Re-running buf0 in the
// transposed order (a transposed copy fuses so: groups.mlir @transposed_copy) meets one read
// and misses the other.
// CHECK-LABEL: buffer.graph @transpose
// CHECK-NOT:   buffer.fused
// CHECK:       } attributes {fusion = ["refused buf0 + buf1: [different loop order] buf1 reads buf0 at X where buf0 writes FloorDiv(X, 16) + 16*ModularIndexing(X, 1, 16) (X, R: the kernel's flat lanes)", "refusals: different loop order: 1"]}
buffer.graph @transpose {
  buffer.input "x" #buffer.layout<[16, 16], [16, 1], f32>
  buffer.computed "buf0" #buffer.layout<[16, 16], [16, 1], f32> ranges [16, 16] origins ["exp"] {
    %0 = buffer.load @x[i1 + 16*i0] : f32
    %1 = math.exp %0 : f32
    buffer.store @buf0[i1 + 16*i0], %1 : f32
  }
  buffer.computed "buf1" #buffer.layout<[16, 16], [16, 1], f32> ranges [16, 16] origins ["add"] {
    %0 = buffer.load @buf0[i1 + 16*i0] : f32
    %1 = buffer.load @buf0[i0 + 16*i1] : f32
    %2 = arith.addf %0, %1 : f32
    buffer.store @buf1[i1 + 16*i0], %2 : f32
  }
  buffer.output @buf1
}

// -----

// no shared data: both halves of x, each read by its own node.
// CHECK-LABEL: buffer.graph @halves
// CHECK-NOT:   buffer.fused
// CHECK:       } attributes {fusion = ["refused buf0 + buf1: [no shared data] buf0 and buf1 touch no buffer at the same index", "refusals: no shared data: 1"]}
buffer.graph @halves {
  buffer.input "x" #buffer.layout<[128], [1], f32>
  buffer.computed "buf0" #buffer.layout<[64], [1], f32> ranges [64] origins ["exp"] {
    %0 = buffer.load @x[i0] : f32
    %1 = math.exp %0 : f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.computed "buf1" #buffer.layout<[64], [1], f32> ranges [64] origins ["neg"] {
    %0 = buffer.load @x[i0 + 64] : f32
    %1 = arith.negf %0 : f32
    buffer.store @buf1[i0], %1 : f32
  }
  buffer.output @buf0, @buf1
}

// -----

// different loop order, after a re-run: buf0 would have to run column-major for the prod,
// but buf1, already in its group, reads it row-major.
// CHECK-LABEL: buffer.graph @reindex_conflict
// CHECK:       "refused buf0+buf1 + buf2: [different loop order] buf1 reads buf0 at R + 16*X where buf0 writes 3*R + X (X, R: the kernel's flat lanes)"
buffer.graph @reindex_conflict {
  buffer.input "x" #buffer.layout<[16, 3], [3, 1], f32>
  buffer.computed "buf0" #buffer.layout<[16, 3], [3, 1], f32> ranges [48] origins ["tanh"] {
    %0 = buffer.load @x[i0] : f32
    %1 = math.tanh %0 : f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.computed "buf1" #buffer.layout<[16, 3], [3, 1], f32> ranges [48] origins ["neg"] {
    %0 = buffer.load @buf0[i0] : f32
    %1 = arith.negf %0 : f32
    buffer.store @buf1[i0], %1 : f32
  }
  buffer.computed "buf2" #buffer.layout<[3], [1], f32> ranges [3] reduce [16] origins ["prod"] {
    %0 = buffer.load @buf0[i0 + 3*r0_0] : f32
    %1 = buffer.reduce prod %0 : f32 -> f32
    buffer.store @buf2[i0], %1 : f32
  }
  buffer.output @buf1, @buf2
}
