// RUN: mlc-opt %s --convert-to-triton | filecheck %s

// relu(x) and relu(y) compile to the same source: one kernel, launched twice (Inductor's
// src_to_kernel); the counter only counts distinct kernels. 4096 elements: every XBLOCK divides
// xnumel, so no xmask.

buffer.graph @forward {
  buffer.input "arg0_1" #buffer.layout<[4096], [1], f32>
  buffer.input "arg1_1" #buffer.layout<[4096], [1], f32>
  buffer.computed "buf0" #buffer.layout<[4096], [1], f32> ranges [4096] origins ["relu"] {
    %0 = buffer.load @arg0_1[i0] : f32
    %1 = arith.constant 0.0 : f32
    %2 = arith.maximumf %0, %1 : f32
    buffer.store @buf0[i0], %2 : f32
  }
  buffer.computed "buf1" #buffer.layout<[4096], [1], f32> ranges [4096] origins ["mul"] {
    %0 = buffer.load @buf0[i0] : f32
    %1 = buffer.load @arg1_1[i0] : f32
    %2 = arith.mulf %0, %1 : f32
    buffer.store @buf1[i0], %2 : f32
  }
  buffer.computed "buf2" #buffer.layout<[4096], [1], f32> ranges [4096] origins ["relu_1"] {
    %0 = buffer.load @arg1_1[i0] : f32
    %1 = arith.constant 0.0 : f32
    %2 = arith.maximumf %0, %1 : f32
    buffer.store @buf2[i0], %2 : f32
  }
  buffer.output @buf1, @buf2
}

// CHECK:      builtin.module {
// CHECK-NEXT:   triton.kernel @triton_poi_fused_relu_0 pointwise(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 4096 origins ["relu"] configs [#triton.config<XBLOCK = 256, num_warps = 4, num_stages = 1>, #triton.config<XBLOCK = 128, num_warps = 4, num_stages = 1>] {
// CHECK-NEXT:     %[[V0:[0-9]+]] = triton.load %in_ptr0[xindex] : f32
// CHECK-NEXT:     %[[V1:[0-9]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:     %[[V2:[0-9]+]] = arith.maximumf %[[V0]], %[[V1]] : f32
// CHECK-NEXT:     triton.store %out_ptr0[xindex], %[[V2]] : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   triton.kernel @triton_poi_fused_mul_1 pointwise(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 4096 origins ["mul"] configs [#triton.config<XBLOCK = 256, num_warps = 4, num_stages = 1>, #triton.config<XBLOCK = 128, num_warps = 4, num_stages = 1>] {
// CHECK-NEXT:     %[[V0:[0-9]+]] = triton.load %in_ptr0[xindex] : f32
// CHECK-NEXT:     %[[V1:[0-9]+]] = triton.load %in_ptr1[xindex] : f32
// CHECK-NEXT:     %[[V2:[0-9]+]] = arith.mulf %[[V0]], %[[V1]] : f32
// CHECK-NEXT:     triton.store %out_ptr0[xindex], %[[V2]] : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   triton.wrapper @call {
// CHECK-NEXT:     triton.input "arg0_1" #buffer.layout<[4096], [1], f32>
// CHECK-NEXT:     triton.input "arg1_1" #buffer.layout<[4096], [1], f32>
// CHECK-NEXT:     triton.alloc "buf0" #buffer.layout<[4096], [1], f32>
// CHECK-NEXT:     triton.launch @triton_poi_fused_relu_0(@arg0_1, @buf0) xnumel 4096
// CHECK-NEXT:     triton.free @arg0_1
// CHECK-NEXT:     triton.alloc "buf1" #buffer.layout<[4096], [1], f32>
// CHECK-NEXT:     triton.launch @triton_poi_fused_mul_1(@buf0, @arg1_1, @buf1) xnumel 4096
// CHECK-NEXT:     triton.free @buf0
// CHECK-NEXT:     triton.alloc "buf2" #buffer.layout<[4096], [1], f32>
// CHECK-NEXT:     triton.launch @triton_poi_fused_relu_0(@arg1_1, @buf2) xnumel 4096
// CHECK-NEXT:     triton.free @arg1_1
// CHECK-NEXT:     triton.return @buf1, @buf2
// CHECK-NEXT:   }
// CHECK-NEXT: }
