// RUN: mlc-opt %s --split-input-file | mlc-opt --split-input-file | filecheck %s
// RUN: mlc-opt %s --split-input-file --print-op-generic | mlc-opt --split-input-file | filecheck %s

// A realized contraction: a buffer.computed [M, N] reduce [K] whose buffer.dot multiplies the
// A tile (loads at i0, r0_0) by the B tile (loads at r0_0, i1); the ops after it are its
// epilogue (invalid-dot.mlir: what the verifier refuses).

// addmm with a bias over N, as realize writes it from lower-aten{gemm=triton}.
// CHECK-LABEL: buffer.graph @addmm
// CHECK:      buffer.computed "buf0" #buffer.layout<[64, 128], [128, 1], bf16> ranges [64, 128] reduce [96] origins ["addmm"] {
// CHECK-NEXT:   %[[A:.*]] = buffer.load @x[r0_0 + 96*i0] : bf16
// CHECK-NEXT:   %[[B:.*]] = buffer.load @w[r0_0 + 96*i1] : bf16
// CHECK-NEXT:   %[[D:.*]] = buffer.dot %[[A]], %[[B]] : bf16, bf16 -> f32
// CHECK-NEXT:   %[[BIAS:.*]] = buffer.load @b[i1] : bf16
// CHECK-NEXT:   %[[WIDE:.*]] = arith.extf %[[BIAS]] : bf16 to f32
// CHECK-NEXT:   %[[SUM:.*]] = arith.addf %[[D]], %[[WIDE]] : f32
// CHECK-NEXT:   %[[OUT:.*]] = arith.truncf %[[SUM]] : f32 to bf16
// CHECK-NEXT:   buffer.store @buf0[i1 + 128*i0], %[[OUT]] : bf16
// CHECK-NEXT: }
buffer.graph @addmm {
  buffer.input "x" #buffer.layout<[64, 96], [96, 1], bf16>
  buffer.input "w" #buffer.layout<[128, 96], [96, 1], bf16>
  buffer.input "b" #buffer.layout<[128], [1], bf16>
  buffer.computed "buf0" #buffer.layout<[64, 128], [128, 1], bf16> ranges [64, 128] reduce [96] origins ["addmm"] {
    %0 = buffer.load @x[r0_0 + 96*i0] : bf16
    %1 = buffer.load @w[r0_0 + 96*i1] : bf16
    %2 = buffer.dot %0, %1 : bf16, bf16 -> f32
    %3 = buffer.load @b[i1] : bf16
    %4 = arith.extf %3 : bf16 to f32
    %5 = arith.addf %2, %4 : f32
    %6 = arith.truncf %5 : f32 to bf16
    buffer.store @buf0[i1 + 128*i0], %6 : bf16
  }
  buffer.output @buf0
}

// -----

// A contraction with a fused pointwise epilogue (a relu over its flat output) in one group.
// CHECK-LABEL: buffer.graph @mm_relu
// CHECK:      buffer.fused {
// CHECK-NEXT:   buffer.computed "buf0" #buffer.layout<[4, 16], [16, 1], f32> ranges [4, 16] reduce [8] {
// CHECK-NEXT:     %{{.*}} = buffer.load @x[r0_0 + 8*i0] : f32
// CHECK-NEXT:     %{{.*}} = buffer.load @w[i1 + 16*r0_0] : f32
// CHECK-NEXT:     %[[D:.*]] = buffer.dot %{{.*}}, %{{.*}} : f32, f32 -> f32
// CHECK-NEXT:     buffer.store @buf0[i1 + 16*i0], %[[D]] : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   buffer.computed "buf1" #buffer.layout<[4, 16], [16, 1], f32> ranges [64] origins ["relu"] {
// CHECK-NEXT:     %{{.*}} = buffer.load @buf0[i0] : f32
buffer.graph @mm_relu {
  buffer.input "x" #buffer.layout<[4, 8], [8, 1], f32>
  buffer.input "w" #buffer.layout<[8, 16], [16, 1], f32>
  buffer.fused {
    buffer.computed "buf0" #buffer.layout<[4, 16], [16, 1], f32> ranges [4, 16] reduce [8] {
      %0 = buffer.load @x[r0_0 + 8*i0] : f32
      %1 = buffer.load @w[i1 + 16*r0_0] : f32
      %2 = buffer.dot %0, %1 : f32, f32 -> f32
      buffer.store @buf0[i1 + 16*i0], %2 : f32
    }
    buffer.computed "buf1" #buffer.layout<[4, 16], [16, 1], f32> ranges [64] origins ["relu"] {
      %0 = buffer.load @buf0[i0] : f32
      %1 = arith.constant 0.0 : f32
      %2 = arith.maximumf %0, %1 : f32
      buffer.store @buf1[i0], %2 : f32
    }
  }
  buffer.output @buf1
}

// -----

// A contraction with a scatter epilogue (a mixture of experts' combine): its tiles added into
// buf1's rows at loaded positions.
// CHECK-LABEL: buffer.graph @mm_scatter_add
// CHECK:      buffer.fused {
// CHECK-NEXT:   buffer.computed "buf0" #buffer.layout<[30, 8], [8, 1], f32> ranges [30, 8] reduce [16] {
// CHECK:        buffer.scatter "buf2" #buffer.layout<[20, 8], [8, 1], f32> = @buf1 ranges [30, 8] {
// CHECK:          buffer.store @buf2[i1 + 8*ind0] indirect(%{{.*}}), %{{.*}} atomic_add : f32
buffer.graph @mm_scatter_add {
  buffer.input "x" #buffer.layout<[30, 16], [16, 1], f32>
  buffer.input "w" #buffer.layout<[16, 8], [8, 1], f32>
  buffer.input "i" #buffer.layout<[30], [1], i64>
  buffer.input "buf1" #buffer.layout<[20, 8], [8, 1], f32>
  buffer.fused {
    buffer.computed "buf0" #buffer.layout<[30, 8], [8, 1], f32> ranges [30, 8] reduce [16] {
      %0 = buffer.load @x[r0_0 + 16*i0] : f32
      %1 = buffer.load @w[i1 + 8*r0_0] : f32
      %2 = buffer.dot %0, %1 : f32, f32 -> f32
      buffer.store @buf0[i1 + 8*i0], %2 : f32
    }
    buffer.scatter "buf2" #buffer.layout<[20, 8], [8, 1], f32> = @buf1 ranges [30, 8] {
      %0 = buffer.load @i[i0] : i64
      %1 = loops.indirect_index %0 size 20 : i64
      %2 = buffer.load @buf0[i1 + 8*i0] : f32
      buffer.store @buf2[i1 + 8*ind0] indirect(%1), %2 atomic_add : f32
    }
  }
  buffer.output @buf2
}
