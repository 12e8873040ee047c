// RUN: mlc-opt %s | mlc-opt | filecheck %s
// RUN: mlc-opt %s --print-op-generic | mlc-opt | filecheck %s

// The seed-000 gelu as a pointwise kernel, a broadcast bias add, a cat-style masked load, and
// the host wrapper that launches them around an extern mm and a view.

triton.kernel @triton_poi_fused_gelu_0 pointwise(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 512 origins ["gelu"] configs [#triton.config<XBLOCK = 256, num_warps = 4, num_stages = 1>, #triton.config<XBLOCK = 128, num_warps = 4, num_stages = 1>] {
  triton.index x0 = ModularIndexing(xindex, 1, 64)
  triton.index x1 = FloorDiv(xindex, 64)
  %0 = triton.load %in_ptr0[x0 + 64*x1] mask xmask : f32
  %1 = arith.constant 5.000000e-01 : f32
  %2 = arith.mulf %0, %1 : f32
  %3 = arith.constant 0.70710678118654757 : f32
  %4 = arith.mulf %0, %3 : f32
  %5 = math.erf %4 : f32
  %6 = arith.constant 1.000000e+00 : f32
  %7 = arith.addf %5, %6 : f32
  %8 = arith.mulf %2, %7 : f32
  triton.store %out_ptr0[x0 + 64*x1], %8 mask xmask : f32
}
// CHECK-LABEL: triton.kernel @triton_poi_fused_gelu_0 pointwise(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 512 origins ["gelu"] configs [#triton.config<XBLOCK = 256, num_warps = 4, num_stages = 1>, #triton.config<XBLOCK = 128, num_warps = 4, num_stages = 1>] {
// CHECK-NEXT:    triton.index x0 = ModularIndexing(xindex, 1, 64)
// CHECK-NEXT:    triton.index x1 = FloorDiv(xindex, 64)
// CHECK-NEXT:    %[[X:.*]] = triton.load %in_ptr0[x0 + 64*x1] mask xmask : f32
// CHECK:         %[[E:.*]] = math.erf %{{.*}} : f32
// CHECK:         triton.store %out_ptr0[x0 + 64*x1], %{{.*}} mask xmask : f32
// CHECK-NEXT:  }

triton.kernel @triton_poi_fused_add_cat_1 pointwise(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>, %in_ptr2: !triton.ptr<i64>, %out_ptr0: !triton.ptr<f32>) xnumel 1024 {
  triton.index x0 = ModularIndexing(xindex, 1, 128)
  triton.index x1 = FloorDiv(xindex, 128)
  %0 = triton.expr x0 : i64
  %1 = arith.constant 64 : i64
  %2 = arith.cmpi slt, %0, %1 : i64
  %3 = triton.load %in_ptr0[x0 + 64*x1] mask xmask, %2 other 0.0 : f32
  %4 = triton.load %in_ptr1[x0] mask xmask evict_last : f32
  %5 = triton.load %in_ptr2[x1] mask %2 other -1 evict_first : i64
  %6 = arith.addf %3, %4 : f32
  %7 = arith.select %2, %6, %4 : f32
  triton.store %out_ptr0[xindex], %7 mask xmask : f32
}
// CHECK-LABEL: triton.kernel @triton_poi_fused_add_cat_1 pointwise(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>, %in_ptr2: !triton.ptr<i64>, %out_ptr0: !triton.ptr<f32>) xnumel 1024 {
// CHECK:         %[[I:.*]] = triton.expr x0 : i64
// CHECK:         %[[M:.*]] = arith.cmpi slt, %[[I]], %{{.*}} : i64
// CHECK-NEXT:    %{{.*}} = triton.load %in_ptr0[x0 + 64*x1] mask xmask, %[[M]] other 0.000000e+00 : f32
// CHECK-NEXT:    %{{.*}} = triton.load %in_ptr1[x0] mask xmask evict_last : f32
// CHECK-NEXT:    %{{.*}} = triton.load %in_ptr2[x1] mask %[[M]] other -1 evict_first : i64
// CHECK:         triton.store %out_ptr0[xindex], %{{.*}} mask xmask : f32

triton.kernel @triton_poi_fused_2 pointwise() xnumel s0 {
}
// CHECK-LABEL: triton.kernel @triton_poi_fused_2 pointwise() xnumel s0 {
// CHECK-NEXT:  }

triton.wrapper @call {
  triton.input "arg0_1" #buffer.layout<[8, 64], [64, 1], f32>
  triton.input "arg1_1" #buffer.layout<[64], [1], f32>
  triton.input "arg2_1" #buffer.layout<[8], [1], i64>
  triton.alloc "buf0" #buffer.layout<[8, 64], [64, 1], f32>
  triton.launch @triton_poi_fused_gelu_0(@arg0_1, @buf0) xnumel 512
  triton.view "buf1" = @buf0 #buffer.layout<[64, 8], [1, 64], f32>
  triton.extern "buf2" = "mm.default" {args = [@buf0, @buf1]} : #buffer.layout<[8, 8], [8, 1], f32>
  triton.alloc "buf3" #buffer.layout<[8, 128], [128, 1], f32>
  triton.launch @triton_poi_fused_add_cat_1(@buf0, @arg1_1, @arg2_1, @buf3) xnumel 1024
  triton.free @buf0, @buf1
  triton.return @buf3, @buf2, @arg0_1
}
// CHECK-LABEL: triton.wrapper @call {
// CHECK-NEXT:    triton.input "arg0_1" #buffer.layout<[8, 64], [64, 1], f32>
// CHECK-NEXT:    triton.input "arg1_1" #buffer.layout<[64], [1], f32>
// CHECK-NEXT:    triton.input "arg2_1" #buffer.layout<[8], [1], i64>
// CHECK-NEXT:    triton.alloc "buf0" #buffer.layout<[8, 64], [64, 1], f32>
// CHECK-NEXT:    triton.launch @triton_poi_fused_gelu_0(@arg0_1, @buf0) xnumel 512
// CHECK-NEXT:    triton.view "buf1" = @buf0 #buffer.layout<[64, 8], [1, 64], f32>
// CHECK-NEXT:    triton.extern "buf2" = "mm.default" {args = [@buf0, @buf1]} : #buffer.layout<[8, 8], [8, 1], f32>
// CHECK-NEXT:    triton.alloc "buf3" #buffer.layout<[8, 128], [128, 1], f32>
// CHECK-NEXT:    triton.launch @triton_poi_fused_add_cat_1(@buf0, @arg1_1, @arg2_1, @buf3) xnumel 1024
// CHECK-NEXT:    triton.free @buf0, @buf1
// CHECK-NEXT:    triton.return @buf3, @buf2, @arg0_1
// CHECK-NEXT:  }
