// RUN: mlc-opt %s | mlc-opt | filecheck %s
// RUN: mlc-opt %s --print-op-generic | mlc-opt | filecheck %s

// A matmul kernel (convert-to-triton's output for addmm + gelu, and for a 37x50x29 f32 mm +
// relu): ynumel M rows by xnumel N columns over r0_numel K; its triton.rloop loads an A tile
// (r0_index, yindex) and a B tile (r0_index_t, xindex) and triton.dot accumulates their
// product; the epilogue and the store follow the loop (invalid-matmul.mlir: what is refused).

// Every block divides M, N (not K): only the loads along K are masked.
triton.kernel @triton_mm_fused_addmm_gelu_t_0 matmul(%in_ptr0: !triton.ptr<bf16>, %in_ptr1: !triton.ptr<bf16>, %in_ptr2: !triton.ptr<bf16>, %out_ptr0: !triton.ptr<bf16>) ynumel 64 xnumel 128 r0_numel 96 origins ["addmm", "gelu", "t"] configs [#triton.config<YBLOCK = 64, XBLOCK = 128, R0_BLOCK = 64, num_warps = 8, num_stages = 3>, #triton.config<YBLOCK = 64, XBLOCK = 64, R0_BLOCK = 32, num_warps = 4, num_stages = 2>] {
  %0 = arith.constant 0.000000e+00 : f32
  %1 = triton.rloop iter_args(%2 = %0 : f32) {
    %3 = triton.load %in_ptr0[r0_index + 96*yindex] mask r0_mask other 0.000000e+00 : bf16
    %4 = triton.load %in_ptr1[r0_index_t + 96*xindex] mask r0_mask_t other 0.000000e+00 : bf16
    %5 = triton.dot %3, %4 into %2 "ieee" : bf16, bf16 -> f32
    triton.yield %5 : f32
  }
  %6 = triton.load %in_ptr2[xindex] : bf16
  %7 = arith.extf %6 : bf16 to f32
  %8 = arith.addf %1, %7 : f32
  %9 = arith.truncf %8 : f32 to bf16
  %10 = arith.extf %9 : bf16 to f32
  %11 = arith.constant 5.000000e-01 : f32
  %12 = arith.constant 1.000000e+00 : f32
  %13 = arith.constant 0.707106769 : f32
  %14 = arith.mulf %10, %13 : f32
  %15 = math.erf %14 : f32
  %16 = arith.addf %12, %15 : f32
  %17 = arith.mulf %10, %11 : f32
  %18 = arith.mulf %17, %16 : f32
  %19 = arith.truncf %18 : f32 to bf16
  triton.store %out_ptr0[xindex + 128*yindex], %19 : bf16
}
// CHECK-LABEL: triton.kernel @triton_mm_fused_addmm_gelu_t_0 matmul(%in_ptr0: !triton.ptr<bf16>, %in_ptr1: !triton.ptr<bf16>, %in_ptr2: !triton.ptr<bf16>, %out_ptr0: !triton.ptr<bf16>) ynumel 64 xnumel 128 r0_numel 96 origins ["addmm", "gelu", "t"] configs [#triton.config<YBLOCK = 64, XBLOCK = 128, R0_BLOCK = 64, num_warps = 8, num_stages = 3>, #triton.config<YBLOCK = 64, XBLOCK = 64, R0_BLOCK = 32, num_warps = 4, num_stages = 2>] {
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[ACC:.*]] = triton.rloop iter_args(%[[A:.*]] = %[[Z]] : f32) {
// CHECK-NEXT:      %[[L:.*]] = triton.load %in_ptr0[r0_index + 96*yindex] mask r0_mask other 0.000000e+00 : bf16
// CHECK-NEXT:      %[[R:.*]] = triton.load %in_ptr1[r0_index_t + 96*xindex] mask r0_mask_t other 0.000000e+00 : bf16
// CHECK-NEXT:      %[[D:.*]] = triton.dot %[[L]], %[[R]] into %[[A]] "ieee" : bf16, bf16 -> f32
// CHECK-NEXT:      triton.yield %[[D]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[BIAS:.*]] = triton.load %in_ptr2[xindex] : bf16
// CHECK-NEXT:    %[[WIDE:.*]] = arith.extf %[[BIAS]] : bf16 to f32
// CHECK-NEXT:    %{{.*}} = arith.addf %[[ACC]], %[[WIDE]] : f32
// CHECK:         math.erf
// CHECK:         triton.store %out_ptr0[xindex + 128*yindex], %{{.*}} : bf16
// CHECK-NEXT:  }

// Odd M, N, K: every tile mask; the dot masks K itself (operands computed past K) and may use TF32.
triton.kernel @triton_mm_fused_mm_relu_1 matmul(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) ynumel 37 xnumel 50 r0_numel 29 origins ["mm", "relu"] configs [#triton.config<YBLOCK = 64, XBLOCK = 64, R0_BLOCK = 32, num_warps = 8, num_stages = 3>] {
  %0 = arith.constant 0.000000e+00 : f32
  %1 = triton.rloop iter_args(%2 = %0 : f32) {
    %3 = triton.load %in_ptr0[r0_index + 29*yindex] mask ymask, r0_mask other 0.000000e+00 : f32
    %4 = triton.load %in_ptr1[xindex + 50*r0_index_t] mask xmask, r0_mask_t other 0.000000e+00 : f32
    %5 = math.exp %3 : f32
    %6 = triton.dot %5, %4 into %2 mask r0_mask "tf32" : f32, f32 -> f32
    triton.yield %6 : f32
  }
  %7 = arith.maximumf %1, %0 : f32
  triton.store %out_ptr0[xindex + 50*yindex], %7 mask ymask, xmask : f32
}
// CHECK-LABEL: triton.kernel @triton_mm_fused_mm_relu_1 matmul({{.*}}) ynumel 37 xnumel 50 r0_numel 29 origins ["mm", "relu"] configs [#triton.config<YBLOCK = 64, XBLOCK = 64, R0_BLOCK = 32, num_warps = 8, num_stages = 3>] {
// CHECK:           %{{.*}} = triton.load %in_ptr0[r0_index + 29*yindex] mask ymask, r0_mask other 0.000000e+00 : f32
// CHECK-NEXT:      %{{.*}} = triton.load %in_ptr1[xindex + 50*r0_index_t] mask xmask, r0_mask_t other 0.000000e+00 : f32
// CHECK-NEXT:      %[[E:.*]] = math.exp %{{.*}} : f32
// CHECK-NEXT:      %{{.*}} = triton.dot %[[E]], %{{.*}} into %{{.*}} mask r0_mask "tf32" : f32, f32 -> f32
// CHECK:         triton.store %out_ptr0[xindex + 50*yindex], %{{.*}} mask ymask, xmask : f32

// The wrapper launches it over ynumel M, xnumel N, r0_numel K.
triton.wrapper @call {
  triton.input "a" #buffer.layout<[37, 29], [29, 1], f32>
  triton.input "b" #buffer.layout<[29, 50], [50, 1], f32>
  triton.alloc "buf1" #buffer.layout<[37, 50], [50, 1], f32>
  triton.launch @triton_mm_fused_mm_relu_1(@a, @b, @buf1) ynumel 37 xnumel 50 r0_numel 29
  triton.free @a, @b
  triton.return @buf1
}
// CHECK-LABEL: triton.wrapper @call
// CHECK:         triton.launch @triton_mm_fused_mm_relu_1(@a, @b, @buf1) ynumel 37 xnumel 50 r0_numel 29

// A batched kernel (bmm): znumel products, each program's `zindex` (a scalar) picks its
// product's A, B and output; the launch says znumel too.
triton.kernel @triton_mm_fused_bmm_2 matmul(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) znumel 3 ynumel 64 xnumel 64 r0_numel 32 origins ["bmm"] configs [#triton.config<YBLOCK = 64, XBLOCK = 64, R0_BLOCK = 32, num_warps = 4, num_stages = 3>] {
  %0 = arith.constant 0.000000e+00 : f32
  %1 = triton.rloop iter_args(%2 = %0 : f32) {
    %3 = triton.load %in_ptr0[r0_index + 32*yindex + 2048*zindex] : f32
    %4 = triton.load %in_ptr1[xindex + 64*r0_index_t + 2048*zindex] : f32
    %5 = triton.dot %3, %4 into %2 "ieee" : f32, f32 -> f32
    triton.yield %5 : f32
  }
  triton.store %out_ptr0[xindex + 64*yindex + 4096*zindex], %1 : f32
}
triton.wrapper @call_bmm {
  triton.input "a" #buffer.layout<[3, 64, 32], [2048, 32, 1], f32>
  triton.input "b" #buffer.layout<[3, 32, 64], [2048, 64, 1], f32>
  triton.alloc "buf0" #buffer.layout<[3, 64, 64], [4096, 64, 1], f32>
  triton.launch @triton_mm_fused_bmm_2(@a, @b, @buf0) znumel 3 ynumel 64 xnumel 64 r0_numel 32
  triton.return @buf0
}
// CHECK-LABEL: triton.kernel @triton_mm_fused_bmm_2 matmul({{.*}}) znumel 3 ynumel 64 xnumel 64 r0_numel 32
// CHECK:           triton.load %in_ptr0[r0_index + 32*yindex + 2048*zindex] : f32
// CHECK:         triton.store %out_ptr0[xindex + 64*yindex + 4096*zindex], %{{.*}} : f32
// CHECK-LABEL: triton.wrapper @call_bmm
// CHECK:         triton.launch @triton_mm_fused_bmm_2(@a, @b, @buf0) znumel 3 ynumel 64 xnumel 64 r0_numel 32
