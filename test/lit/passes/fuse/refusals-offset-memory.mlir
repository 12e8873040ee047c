// RUN: mlc-opt %s --split-input-file --fuse="explain=true max-distance=1" | filecheck %s
// RUN: mlc-opt %s --split-input-file --fuse="explain=true max-distance=1" -o /dev/null 2>&1 | filecheck %s --check-prefix=REMARK

// mlc-opt prints each decision as a remark at the op it is about (the reading node, the graph
// for the counts):
// REMARK:      refusals-offset-memory.mlir:25:3: remark: [fuse] refused buf0 + buf1: [different offset] buf1 reads buf0 at X - 1
// REMARK-NEXT: refusals-offset-memory.mlir:18:1: remark: [fuse] refusals: different offset: 1
// REMARK-NEXT: refusals-offset-memory.mlir:{{[0-9]+}}:3: remark: [fuse] refused buf0 + buf2: [memory]
// REMARK-NEXT: refusals-offset-memory.mlir:{{[0-9]+}}:1: remark: [fuse] refusals: memory: 1

// The two refusal categories the graphs of refusals.mlir cannot show at default thresholds.

// different offset: buf1 reads buf0 one element back (a shift, as torch.roll or a difference
// along a dim): lane X would need the value lane X - 1 computes.
// CHECK-LABEL: buffer.graph @shift
// CHECK-NOT:   buffer.fused
// CHECK:       } attributes {fusion = ["refused buf0 + buf1: [different offset] buf1 reads buf0 at X - 1 where buf0 writes X (X, R: the kernel's flat lanes)", "refusals: different offset: 1"]}
buffer.graph @shift {
  buffer.input "x" #buffer.layout<[64], [1], f32>
  buffer.computed "buf0" #buffer.layout<[64], [1], f32> ranges [64] origins ["exp"] {
    %0 = buffer.load @x[i0] : f32
    %1 = math.exp %0 : f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.computed "buf1" #buffer.layout<[64], [1], f32> ranges [64] origins ["diff"] {
    %c1 = arith.constant 1 : i64
    %i = loops.index i0 : i64
    %ge = arith.cmpi sge, %i, %c1 : i64
    %0 = buffer.load @buf0[i0] : f32
    %1 = buffer.load @buf0[i0 - 1] mask %ge : f32
    %2 = arith.subf %0, %1 : f32
    buffer.store @buf1[i0], %2 : f32
  }
  buffer.output @buf0, @buf1
}

// -----

// memory: buf0 and buf2 read x at the same index (a horizontal pair) but with max-distance=1
// they are too far apart; fusing them would keep what lies between them alive. buf1 between
// reads y only.
// CHECK-LABEL: buffer.graph @far
// CHECK:       "refused buf0 + buf2: [memory] buf0 and buf2 are more than 1 nodes apart: fusing keeps their buffers alive in between"
// CHECK-NOT:   buffer.fused
// CHECK-SAME:  "refusals: memory: 1"
buffer.graph @far {
  buffer.input "x" #buffer.layout<[64], [1], f32>
  buffer.input "y" #buffer.layout<[64], [1], f32>
  buffer.computed "buf0" #buffer.layout<[64], [1], f32> ranges [64] origins ["exp"] {
    %0 = buffer.load @x[i0] : f32
    %1 = math.exp %0 : f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.computed "buf1" #buffer.layout<[64], [1], f32> ranges [64] origins ["neg"] {
    %0 = buffer.load @y[i0] : f32
    %1 = arith.negf %0 : f32
    buffer.store @buf1[i0], %1 : f32
  }
  buffer.computed "buf2" #buffer.layout<[64], [1], f32> ranges [64] origins ["sin"] {
    %0 = buffer.load @x[i0] : f32
    %1 = math.sin %0 : f32
    buffer.store @buf2[i0], %1 : f32
  }
  buffer.output @buf0, @buf1, @buf2
}
