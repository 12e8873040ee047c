// RUN: mlc-opt %s --convert-to-triton | filecheck %s

// torch.cat([a, b], dim=1): the two masked loads keep their own mask next to xmask and read 0
// where it is false (other 0.0); loops.index becomes triton.expr.

buffer.graph @forward {
  buffer.input "arg0_1" #buffer.layout<[8, 64], [64, 1], f32>
  buffer.input "arg1_1" #buffer.layout<[8, 64], [64, 1], f32>
  buffer.computed "buf0" #buffer.layout<[8, 128], [128, 1], f32> ranges [8, 128] origins ["cat"] {
    %0 = loops.index i1 : i64
    %1 = arith.constant 64 : i64
    %2 = arith.cmpi slt, %0, %1 : i64
    %3 = buffer.load @arg0_1[i1 + 64*i0] mask %2 : f32
    %4 = arith.cmpi sge, %0, %1 : i64
    %5 = buffer.load @arg1_1[i1 - 64 + 64*i0] mask %4 : f32
    %6 = arith.select %2, %3, %5 : f32
    buffer.store @buf0[i1 + 128*i0], %6 : f32
  }
  buffer.output @buf0
}

// CHECK:      builtin.module {
// CHECK-NEXT:   triton.kernel @triton_poi_fused_cat_0 pointwise(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 1024 origins ["cat"] configs [#triton.config<XBLOCK = 256, num_warps = 4, num_stages = 1>, #triton.config<XBLOCK = 128, num_warps = 4, num_stages = 1>] {
// CHECK-NEXT:     triton.index x0 = ModularIndexing(xindex, 1, 128)
// CHECK-NEXT:     triton.index x1 = FloorDiv(xindex, 128)
// CHECK-NEXT:     %[[V0:[0-9]+]] = triton.expr x0 : i64
// CHECK-NEXT:     %[[V1:[0-9]+]] = arith.constant 64 : i64
// CHECK-NEXT:     %[[V2:[0-9]+]] = arith.cmpi slt, %[[V0]], %[[V1]] : i64
// CHECK-NEXT:     %[[V3:[0-9]+]] = triton.load %in_ptr0[x0 + 64*x1] mask xmask, %[[V2]] other 0.000000e+00 : f32
// CHECK-NEXT:     %[[V4:[0-9]+]] = arith.cmpi sge, %[[V0]], %[[V1]] : i64
// CHECK-NEXT:     %[[V5:[0-9]+]] = triton.load %in_ptr1[x0 + 64*x1 - 64] mask xmask, %[[V4]] other 0.000000e+00 : f32
// CHECK-NEXT:     %[[V6:[0-9]+]] = arith.select %[[V2]], %[[V3]], %[[V5]] : f32
// CHECK-NEXT:     triton.store %out_ptr0[xindex], %[[V6]] mask xmask : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   triton.wrapper @call {
// CHECK-NEXT:     triton.input "arg0_1" #buffer.layout<[8, 64], [64, 1], f32>
// CHECK-NEXT:     triton.input "arg1_1" #buffer.layout<[8, 64], [64, 1], f32>
// CHECK-NEXT:     triton.alloc "buf0" #buffer.layout<[8, 128], [128, 1], f32>
// CHECK-NEXT:     triton.launch @triton_poi_fused_cat_0(@arg0_1, @arg1_1, @buf0) xnumel 1024
// CHECK-NEXT:     triton.free @arg0_1, @arg1_1
// CHECK-NEXT:     triton.return @buf0
// CHECK-NEXT:   }
// CHECK-NEXT: }
