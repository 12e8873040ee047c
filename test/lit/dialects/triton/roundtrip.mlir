// RUN: mlc-opt %s | mlc-opt | filecheck %s
// RUN: mlc-opt %s --print-op-generic | mlc-opt | filecheck %s

// The seed-000 gelu as a pointwise kernel, a broadcast bias add (a bias as wide as the
// kernel's 128 columns), a cat-style masked load, and the host wrapper that launches them
// around an extern mm and a view.

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

// A 2-D tiled pointwise kernel (a transpose): `ynumel` rows by `xnumel` columns, yindex and
// ymask implicit, configs set YBLOCK and XBLOCK; a load along one tile dim masks only that dim.

triton.kernel @triton_poi_fused_permute_2 pointwise(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) ynumel 8 xnumel 64 origins ["permute"] configs [#triton.config<YBLOCK = 8, XBLOCK = 64, num_warps = 4, num_stages = 1>, #triton.config<YBLOCK = 1, XBLOCK = 64, num_warps = 1, num_stages = 1>] {
  triton.index y0 = yindex
  %0 = triton.load %in_ptr0[xindex + 64*y0] mask ymask, xmask : f32
  %1 = triton.load %in_ptr1[xindex] mask xmask evict_last : f32
  %2 = arith.addf %0, %1 : f32
  triton.store %out_ptr0[y0 + 8*xindex], %2 mask ymask, xmask : f32
}
// CHECK-LABEL: triton.kernel @triton_poi_fused_permute_2 pointwise(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) ynumel 8 xnumel 64 origins ["permute"] configs [#triton.config<YBLOCK = 8, XBLOCK = 64, num_warps = 4, num_stages = 1>, #triton.config<YBLOCK = 1, XBLOCK = 64, num_warps = 1, num_stages = 1>] {
// CHECK-NEXT:    triton.index y0 = yindex
// CHECK-NEXT:    %[[T0:.*]] = triton.load %in_ptr0[xindex + 64*y0] mask ymask, xmask : f32
// CHECK-NEXT:    %[[T1:.*]] = triton.load %in_ptr1[xindex] mask xmask evict_last : f32
// CHECK-NEXT:    %[[T2:.*]] = arith.addf %[[T0]], %[[T1]] : f32
// CHECK-NEXT:    triton.store %out_ptr0[y0 + 8*xindex], %[[T2]] mask ymask, xmask : f32
// CHECK-NEXT:  }

triton.wrapper @call {
  triton.input "arg0_1" #buffer.layout<[8, 64], [64, 1], f32>
  triton.input "arg1_1" #buffer.layout<[128], [1], f32>
  triton.input "arg2_1" #buffer.layout<[8], [1], i64>
  triton.alloc "buf0" #buffer.layout<[8, 64], [64, 1], f32>
  triton.launch @triton_poi_fused_gelu_0(@arg0_1, @buf0) xnumel 512
  triton.view "buf1" = @buf0 #buffer.layout<[64, 8], [1, 64], f32>
  triton.extern "buf2" = "mm.default" {args = [@buf0, @buf1]} : #buffer.layout<[8, 8], [8, 1], f32>
  triton.alloc "buf3" #buffer.layout<[8, 128], [128, 1], f32>
  triton.launch @triton_poi_fused_add_cat_1(@buf0, @arg1_1, @arg2_1, @buf3) xnumel 1024
  triton.alloc "buf4" #buffer.layout<[64, 8], [8, 1], f32>
  triton.launch @triton_poi_fused_permute_2(@buf0, @arg1_1, @buf4) ynumel 8 xnumel 64
  triton.free @buf1
  triton.reuse "buf5" = @buf0 #buffer.layout<[64, 8], [1, 64], f32>
  triton.launch @triton_poi_fused_gelu_0(@arg0_1, @buf5) xnumel 512
  triton.return @buf3, @buf2, @arg0_1, @buf4, @buf5
}
// CHECK-LABEL: triton.wrapper @call {
// CHECK-NEXT:    triton.input "arg0_1" #buffer.layout<[8, 64], [64, 1], f32>
// CHECK-NEXT:    triton.input "arg1_1" #buffer.layout<[128], [1], f32>
// CHECK-NEXT:    triton.input "arg2_1" #buffer.layout<[8], [1], i64>
// CHECK-NEXT:    triton.alloc "buf0" #buffer.layout<[8, 64], [64, 1], f32>
// CHECK-NEXT:    triton.launch @triton_poi_fused_gelu_0(@arg0_1, @buf0) xnumel 512
// CHECK-NEXT:    triton.view "buf1" = @buf0 #buffer.layout<[64, 8], [1, 64], f32>
// CHECK-NEXT:    triton.extern "buf2" = "mm.default" {args = [@buf0, @buf1]} : #buffer.layout<[8, 8], [8, 1], f32>
// CHECK-NEXT:    triton.alloc "buf3" #buffer.layout<[8, 128], [128, 1], f32>
// CHECK-NEXT:    triton.launch @triton_poi_fused_add_cat_1(@buf0, @arg1_1, @arg2_1, @buf3) xnumel 1024
// CHECK-NEXT:    triton.alloc "buf4" #buffer.layout<[64, 8], [8, 1], f32>
// CHECK-NEXT:    triton.launch @triton_poi_fused_permute_2(@buf0, @arg1_1, @buf4) ynumel 8 xnumel 64
// CHECK-NEXT:    triton.free @buf1
// CHECK-NEXT:    triton.reuse "buf5" = @buf0 #buffer.layout<[64, 8], [1, 64], f32>
// CHECK-NEXT:    triton.launch @triton_poi_fused_gelu_0(@arg0_1, @buf5) xnumel 512
// CHECK-NEXT:    triton.return @buf3, @buf2, @arg0_1, @buf4, @buf5
// CHECK-NEXT:  }

// Reductions. A persistent kernel reduces one R0_BLOCK slice per row with triton.reduce
// (sum with masks; argmax with its positions implicit in r0_index); a looped one carries
// accumulators through triton.rloop, updates them with triton.accumulate and reduces their
// lanes after the loop (welford: three of them).

triton.kernel @triton_per_fused_add_sum_3 persistent_reduction(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>, %out_ptr1: !triton.ptr<i64>) xnumel 3 r0_numel 9 origins ["add", "sum"] configs [#triton.config<XBLOCK = 1, num_warps = 2, num_stages = 1>] {
  triton.index x0 = xindex
  triton.index r0_0 = r0_index
  %0 = triton.load %in_ptr0[r0_0 + 9*x0] mask r0_mask, xmask other 0.0 evict_first : f32
  %1 = triton.reduce sum %0 mask r0_mask, xmask : f32 -> f32
  %2 = triton.reduce argmax %0 mask r0_mask, xmask : f32 -> i64
  triton.store %out_ptr0[x0], %1 mask xmask : f32
  triton.store %out_ptr1[x0], %2 mask xmask : i64
}
// CHECK-LABEL: triton.kernel @triton_per_fused_add_sum_3 persistent_reduction(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>, %out_ptr1: !triton.ptr<i64>) xnumel 3 r0_numel 9 origins ["add", "sum"] configs [#triton.config<XBLOCK = 1, num_warps = 2, num_stages = 1>] {
// CHECK-NEXT:    triton.index x0 = xindex
// CHECK-NEXT:    triton.index r0_0 = r0_index
// CHECK-NEXT:    %[[X:.*]] = triton.load %in_ptr0[r0_0 + 9*x0] mask r0_mask, xmask other 0.000000e+00 evict_first : f32
// CHECK-NEXT:    %[[S:.*]] = triton.reduce sum %[[X]] mask r0_mask, xmask : f32 -> f32
// CHECK-NEXT:    %[[A:.*]] = triton.reduce argmax %[[X]] mask r0_mask, xmask : f32 -> i64
// CHECK-NEXT:    triton.store %out_ptr0[x0], %[[S]] mask xmask : f32
// CHECK-NEXT:    triton.store %out_ptr1[x0], %[[A]] mask xmask : i64
// CHECK-NEXT:  }

triton.kernel @triton_red_fused_var_mean_4 reduction(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 3 r0_numel 20000 configs [#triton.config<XBLOCK = 1, R0_BLOCK = 2048, num_warps = 16, num_stages = 1>] {
  triton.index x0 = xindex
  %zero = arith.constant 0.0 : f32
  %mean, %m2, %weight = triton.rloop iter_args(%a = %zero : f32, %b = %zero : f32, %c = %zero : f32) {
    triton.index r0_0 = r0_index
    %0 = triton.load %in_ptr0[r0_0 + 20000*x0] mask r0_mask, xmask other 0.0 evict_first : f32
    %1, %2, %3 = triton.accumulate welford %0 into %a, %b, %c mask r0_mask, xmask : f32 -> f32, f32, f32
    triton.yield %1, %2, %3 : f32, f32, f32
  }
  %4, %5, %6 = triton.reduce welford %mean, %m2, %weight : f32, f32, f32 -> f32, f32, f32
  %7 = arith.divf %5, %6 : f32
  triton.store %out_ptr0[x0], %7 mask xmask : f32
}
// CHECK-LABEL: triton.kernel @triton_red_fused_var_mean_4 reduction(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 3 r0_numel 20000 configs [#triton.config<XBLOCK = 1, R0_BLOCK = 2048, num_warps = 16, num_stages = 1>] {
// CHECK-NEXT:    triton.index x0 = xindex
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[M:.*]], %[[M2:.*]], %[[W:.*]] = triton.rloop iter_args(%[[A:.*]] = %[[Z]] : f32, %[[B:.*]] = %[[Z]] : f32, %[[C:.*]] = %[[Z]] : f32) {
// CHECK-NEXT:      triton.index r0_0 = r0_index
// CHECK-NEXT:      %[[X:.*]] = triton.load %in_ptr0[r0_0 + 20000*x0] mask r0_mask, xmask other 0.000000e+00 evict_first : f32
// CHECK-NEXT:      %[[N1:.*]], %[[N2:.*]], %[[N3:.*]] = triton.accumulate welford %[[X]] into %[[A]], %[[B]], %[[C]] mask r0_mask, xmask : f32 -> f32, f32, f32
// CHECK-NEXT:      triton.yield %[[N1]], %[[N2]], %[[N3]] : f32, f32, f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %{{.*}}, %[[R2:.*]], %[[RW:.*]] = triton.reduce welford %[[M]], %[[M2]], %[[W]] : f32, f32, f32 -> f32, f32, f32
// CHECK-NEXT:    %[[V:.*]] = arith.divf %[[R2]], %[[RW]] : f32
// CHECK-NEXT:    triton.store %out_ptr0[x0], %[[V]] mask xmask : f32
// CHECK-NEXT:  }

triton.kernel @triton_red_fused_argmin_any_5 reduction(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<i64>, %out_ptr1: !triton.ptr<i1>) xnumel 3 r0_numel 20000 configs [#triton.config<XBLOCK = 1, R0_BLOCK = 2048, num_warps = 16, num_stages = 1>] {
  triton.index x0 = xindex
  %inf = arith.constant 0x7F800000 : f32
  %big = arith.constant 9223372036854775807 : i64
  %false = arith.constant false
  %v, %i, %any = triton.rloop iter_args(%a = %inf : f32, %ai = %big : i64, %b = %false : i1) {
    %0 = triton.load %in_ptr0[r0_index + 20000*x0] mask r0_mask, xmask other inf : f32
    %1, %2 = triton.accumulate argmin %0 into %a, %ai mask r0_mask, xmask : f32 -> f32, i64
    %3 = arith.cmpf une, %0, %0 : f32
    %4 = triton.accumulate any %3 into %b mask r0_mask, xmask : i1 -> i1
    triton.yield %1, %2, %4 : f32, i64, i1
  }
  %5 = triton.reduce argmin %v, %i : f32, i64 -> i64
  %6 = triton.reduce any %any : i1 -> i1
  triton.store %out_ptr0[x0], %5 mask xmask : i64
  triton.store %out_ptr1[x0], %6 mask xmask : i1
}
// CHECK-LABEL: triton.kernel @triton_red_fused_argmin_any_5 reduction
// CHECK:           %{{.*}}, %{{.*}} = triton.accumulate argmin %{{.*}} into %{{.*}}, %{{.*}} mask r0_mask, xmask : f32 -> f32, i64
// CHECK:           %{{.*}} = triton.accumulate any %{{.*}} into %{{.*}} mask r0_mask, xmask : i1 -> i1
// CHECK:         %{{.*}} = triton.reduce argmin %{{.*}}, %{{.*}} : f32, i64 -> i64
// CHECK-NEXT:    %{{.*}} = triton.reduce any %{{.*}} : i1 -> i1

// Indirect indexing: a loaded position (wrapped, checked in debug) named ind0 by the load
// that uses it, and an atomic add at loaded positions.
triton.kernel @triton_poi_fused_embedding_6 pointwise(%in_ptr0: !triton.ptr<i64>, %in_ptr1: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 192 {
  triton.index x0 = ModularIndexing(xindex, 1, 16)
  triton.index x1 = FloorDiv(xindex, 16)
  %0 = triton.load %in_ptr0[x1] mask xmask evict_last : i64
  %1 = triton.indirect_index %0 size 50 mask xmask check : i64
  %2 = triton.load %in_ptr1[x0 + 16*ind0] indirect(%1) mask xmask : f32
  %3 = triton.expr x0 + 16*ind0 indirect(%1) : i64
  triton.store %out_ptr0[x0 + 16*ind0] indirect(%1), %2 atomic_add mask xmask : f32
}
// CHECK-LABEL: triton.kernel @triton_poi_fused_embedding_6 pointwise
// CHECK:         %[[K:.*]] = triton.indirect_index %{{.*}} size 50 mask xmask check : i64
// CHECK-NEXT:    %{{.*}} = triton.load %in_ptr1[x0 + 16*ind0] indirect(%[[K]]) mask xmask : f32
// CHECK-NEXT:    %{{.*}} = triton.expr x0 + 16*ind0 indirect(%[[K]]) : i64
// CHECK-NEXT:    triton.store %out_ptr0[x0 + 16*ind0] indirect(%[[K]]), %{{.*}} atomic_add mask xmask : f32

// A persistent kernel over a symbolic r0_numel (R0_BLOCK in each config) with the looped
// kernel its launch runs above the bound.

triton.kernel @triton_per_fused_sum_0 persistent_reduction(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 8 r0_numel s0 configs [#triton.config<XBLOCK = 1, R0_BLOCK = 1, num_warps = 2, num_stages = 1>, #triton.config<XBLOCK = 1, R0_BLOCK = 2, num_warps = 2, num_stages = 1>, #triton.config<XBLOCK = 1, R0_BLOCK = 4, num_warps = 2, num_stages = 1>] {
  triton.index x0 = xindex
  %0 = triton.load %in_ptr0[r0_index + s0*x0] mask r0_mask, xmask other 0.0 : f32
  %1 = triton.reduce sum %0 mask r0_mask, xmask : f32 -> f32
  triton.store %out_ptr0[x0], %1 mask xmask : f32
}
triton.kernel @triton_red_fused_sum_1 reduction(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 8 r0_numel s0 configs [#triton.config<XBLOCK = 1, R0_BLOCK = 64, num_warps = 2, num_stages = 1>] {
}
triton.wrapper @call_dynamic {
  triton.size_input "arg0_1" s0
  triton.input "arg1_1" #buffer.layout<[8, s0], [s0, 1], f32>
  triton.alloc "buf0" #buffer.layout<[8], [1], f32>
  triton.launch @triton_per_fused_sum_0(@arg1_1, @buf0) xnumel 8 r0_numel s0 else @triton_red_fused_sum_1 when r0_numel > 4
  triton.return @buf0
}
// CHECK-LABEL: triton.kernel @triton_per_fused_sum_0 persistent_reduction({{.*}}) xnumel 8 r0_numel s0 configs [#triton.config<XBLOCK = 1, R0_BLOCK = 1, num_warps = 2, num_stages = 1>,
// CHECK:         triton.launch @triton_per_fused_sum_0(@arg1_1, @buf0) xnumel 8 r0_numel s0 else @triton_red_fused_sum_1 when r0_numel > 4
