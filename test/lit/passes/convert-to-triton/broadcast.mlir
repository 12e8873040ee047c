// RUN: mlc-opt %s --convert-to-triton | filecheck %s

// x + bias[None, :] + rowscale[:, None] + scalar: the broadcast reads index with fewer symbols
// (`in_ptr1[x0]`, `in_ptr2[x1]`, `in_ptr3[0]`) and are kept in cache (evict_last), as Inductor does.

buffer.graph @forward {
  buffer.input "arg0_1" #buffer.layout<[8, 64], [64, 1], f32>
  buffer.input "arg1_1" #buffer.layout<[64], [1], f32>
  buffer.input "arg2_1" #buffer.layout<[8], [1], f32>
  buffer.input "arg3_1" #buffer.layout<[], [], f32>
  buffer.computed "buf0" #buffer.layout<[8, 64], [64, 1], f32> ranges [8, 64] origins ["add", "mul"] {
    %0 = buffer.load @arg0_1[i1 + 64*i0] : f32
    %1 = buffer.load @arg1_1[i1] : f32
    %2 = arith.addf %0, %1 : f32
    %3 = buffer.load @arg2_1[i0] : f32
    %4 = arith.mulf %2, %3 : f32
    %5 = buffer.load @arg3_1[0] : f32
    %6 = arith.addf %4, %5 : f32
    buffer.store @buf0[i1 + 64*i0], %6 : f32
  }
  buffer.output @buf0
}

// CHECK:      builtin.module {
// CHECK-NEXT:   triton.kernel @triton_poi_fused_add_mul_0 pointwise(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>, %in_ptr2: !triton.ptr<f32>, %in_ptr3: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 512 origins ["add", "mul"] configs [#triton.config<XBLOCK = 256, num_warps = 4, num_stages = 1>, #triton.config<XBLOCK = 128, num_warps = 4, num_stages = 1>] {
// CHECK-NEXT:     triton.index x0 = ModularIndexing(xindex, 1, 64)
// CHECK-NEXT:     triton.index x1 = FloorDiv(xindex, 64)
// CHECK-NEXT:     %[[V0:[0-9]+]] = triton.load %in_ptr0[xindex] mask xmask : f32
// CHECK-NEXT:     %[[V1:[0-9]+]] = triton.load %in_ptr1[x0] mask xmask evict_last : f32
// CHECK-NEXT:     %[[V2:[0-9]+]] = arith.addf %[[V0]], %[[V1]] : f32
// CHECK-NEXT:     %[[V3:[0-9]+]] = triton.load %in_ptr2[x1] mask xmask evict_last : f32
// CHECK-NEXT:     %[[V4:[0-9]+]] = arith.mulf %[[V2]], %[[V3]] : f32
// CHECK-NEXT:     %[[V5:[0-9]+]] = triton.load %in_ptr3[0] mask xmask evict_last : f32
// CHECK-NEXT:     %[[V6:[0-9]+]] = arith.addf %[[V4]], %[[V5]] : f32
// CHECK-NEXT:     triton.store %out_ptr0[xindex], %[[V6]] mask xmask : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   triton.wrapper @call {
// CHECK-NEXT:     triton.input "arg0_1" #buffer.layout<[8, 64], [64, 1], f32>
// CHECK-NEXT:     triton.input "arg1_1" #buffer.layout<[64], [1], f32>
// CHECK-NEXT:     triton.input "arg2_1" #buffer.layout<[8], [1], f32>
// CHECK-NEXT:     triton.input "arg3_1" #buffer.layout<[], [], f32>
// CHECK-NEXT:     triton.alloc "buf0" #buffer.layout<[8, 64], [64, 1], f32>
// CHECK-NEXT:     triton.launch @triton_poi_fused_add_mul_0(@arg0_1, @arg1_1, @arg2_1, @arg3_1, @buf0) xnumel 512
// CHECK-NEXT:     triton.free @arg0_1, @arg1_1, @arg2_1, @arg3_1
// CHECK-NEXT:     triton.return @buf0
// CHECK-NEXT:   }
// CHECK-NEXT: }
