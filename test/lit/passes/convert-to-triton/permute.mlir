// RUN: mlc-opt %s --convert-to-triton | filecheck %s

// A transposed read (x.t() + 1): the load strides by 8 along xindex, so it is not coalesced
// and gets evict_last; the store stays contiguous. A size-1 dimension gets index 0 and no symbol.

buffer.graph @forward {
  buffer.input "arg0_1" #buffer.layout<[64, 8], [8, 1], f32>
  buffer.input "arg1_1" #buffer.layout<[4, 1, 16], [16, 16, 1], f32>
  buffer.computed "buf0" #buffer.layout<[8, 64], [64, 1], f32> ranges [8, 64] origins ["add", "permute"] {
    %0 = buffer.load @arg0_1[i0 + 8*i1] : f32
    %1 = arith.constant 1.0 : f32
    %2 = arith.addf %0, %1 : f32
    buffer.store @buf0[i1 + 64*i0], %2 : f32
  }
  buffer.computed "buf1" #buffer.layout<[16, 1, 4], [4, 4, 1], f32> ranges [16, 1, 4] origins ["permute", "relu"] {
    %0 = buffer.load @arg1_1[i0 + 16*i2 + 16*i1] : f32
    %1 = arith.constant 0.0 : f32
    %2 = arith.maximumf %0, %1 : f32
    buffer.store @buf1[i2 + 4*i1 + 4*i0], %2 : f32
  }
  buffer.output @buf0, @buf1
}

// CHECK:      builtin.module {
// CHECK-NEXT:   triton.kernel @triton_poi_fused_add_permute_0 pointwise(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 512 origins ["add", "permute"] configs [#triton.config<XBLOCK = 256, num_warps = 4, num_stages = 1>, #triton.config<XBLOCK = 128, num_warps = 4, num_stages = 1>] {
// CHECK-NEXT:     triton.index x0 = ModularIndexing(xindex, 1, 64)
// CHECK-NEXT:     triton.index x1 = FloorDiv(xindex, 64)
// CHECK-NEXT:     %[[V0:[0-9]+]] = triton.load %in_ptr0[x1 + 8*x0] mask xmask evict_last : f32
// CHECK-NEXT:     %[[V1:[0-9]+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:     %[[V2:[0-9]+]] = arith.addf %[[V0]], %[[V1]] : f32
// CHECK-NEXT:     triton.store %out_ptr0[xindex], %[[V2]] mask xmask : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   triton.kernel @triton_poi_fused_permute_relu_1 pointwise(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 64 origins ["permute", "relu"] configs [#triton.config<XBLOCK = 64, num_warps = 1, num_stages = 1>] {
// CHECK-NEXT:     triton.index x0 = ModularIndexing(xindex, 1, 4)
// CHECK-NEXT:     triton.index x1 = FloorDiv(xindex, 4)
// CHECK-NEXT:     %[[V0:[0-9]+]] = triton.load %in_ptr0[x1 + 16*x0] mask xmask evict_last : f32
// CHECK-NEXT:     %[[V1:[0-9]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:     %[[V2:[0-9]+]] = arith.maximumf %[[V0]], %[[V1]] : f32
// CHECK-NEXT:     triton.store %out_ptr0[xindex], %[[V2]] mask xmask : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   triton.wrapper @call {
// CHECK-NEXT:     triton.input "arg0_1" #buffer.layout<[64, 8], [8, 1], f32>
// CHECK-NEXT:     triton.input "arg1_1" #buffer.layout<[4, 1, 16], [16, 16, 1], f32>
// CHECK-NEXT:     triton.alloc "buf0" #buffer.layout<[8, 64], [64, 1], f32>
// CHECK-NEXT:     triton.launch @triton_poi_fused_add_permute_0(@arg0_1, @buf0) xnumel 512
// CHECK-NEXT:     triton.free @arg0_1
// CHECK-NEXT:     triton.alloc "buf1" #buffer.layout<[16, 1, 4], [4, 4, 1], f32>
// CHECK-NEXT:     triton.launch @triton_poi_fused_permute_relu_1(@arg1_1, @buf1) xnumel 64
// CHECK-NEXT:     triton.free @arg1_1
// CHECK-NEXT:     triton.return @buf0, @buf1
// CHECK-NEXT:   }
// CHECK-NEXT: }
