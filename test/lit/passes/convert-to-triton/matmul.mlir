// RUN: mlc-opt %s --split-input-file --convert-to-triton | filecheck %s
// RUN: mlc-opt %s --split-input-file --convert-to-triton | mlc-opt --split-input-file | filecheck %s
// RUN: mlc-opt %s --split-input-file --convert-to-triton="tf32=true" | filecheck %s --check-prefix=TF32
// RUN: mlc-opt %s --split-input-file --convert-to-triton="gemm=measure" | filecheck %s --check-prefix=MEASURE

// GEMM kernels (triton_mm_...): a group holding a contraction is a `matmul` kernel, ynumel M
// rows by xnumel N columns over r0_numel K. Its triton.rloop loads the A tile along
// (r0_index, yindex) and the B tile along (r0_index_t, xindex) and accumulates their
// triton.dot in f32; the contraction's own epilogue and the fused members follow the loop on
// the accumulator tile, then the store. Masks only where some config's blocks do not divide
// M, N or K. tf32=true lets f32 products use TF32; bf16 products are exact ("ieee") anyway.

// bf16 addmm + relu, 256 x 256 over 128: every block divides, no mask; bias and relu after the loop.
// CHECK-LABEL: triton.kernel @triton_mm_fused_addmm_relu_t_0 matmul(%in_ptr0: !triton.ptr<bf16>, %in_ptr1: !triton.ptr<bf16>, %in_ptr2: !triton.ptr<bf16>, %out_ptr0: !triton.ptr<bf16>) ynumel 256 xnumel 256 r0_numel 128 origins ["addmm", "relu", "t"] configs [#triton.config<YBLOCK = 128, XBLOCK = 128, R0_BLOCK = 64, num_warps = 8, num_stages = 3>, #triton.config<YBLOCK = 128, XBLOCK = 256, R0_BLOCK = 64, num_warps = 8, num_stages = 3>, #triton.config<YBLOCK = 64, XBLOCK = 128, R0_BLOCK = 64, num_warps = 4, num_stages = 4>, #triton.config<YBLOCK = 128, XBLOCK = 64, R0_BLOCK = 64, num_warps = 4, num_stages = 4>, #triton.config<YBLOCK = 64, XBLOCK = 64, R0_BLOCK = 64, num_warps = 4, num_stages = 3>, #triton.config<YBLOCK = 64, XBLOCK = 64, R0_BLOCK = 32, num_warps = 4, num_stages = 2>] {
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[ACC:.*]] = triton.rloop iter_args(%[[A:.*]] = %[[ZERO]] : f32) {
// CHECK-NEXT:      %[[L:.*]] = triton.load %in_ptr0[r0_index + 128*yindex] : bf16
// CHECK-NEXT:      %[[R:.*]] = triton.load %in_ptr1[r0_index_t + 128*xindex] : bf16
// CHECK-NEXT:      %[[D:.*]] = triton.dot %[[L]], %[[R]] into %[[A]] "ieee" : bf16, bf16 -> f32
// CHECK-NEXT:      triton.yield %[[D]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[BIAS:.*]] = triton.load %in_ptr2[xindex] : bf16
// CHECK-NEXT:    %[[WIDE:.*]] = arith.extf %[[BIAS]] : bf16 to f32
// CHECK-NEXT:    %{{.*}} = arith.addf %[[ACC]], %[[WIDE]] : f32
// CHECK:         %[[RELU:.*]] = arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:    %[[OUT:.*]] = arith.truncf %[[RELU]] : f32 to bf16
// CHECK-NEXT:    triton.store %out_ptr0[xindex + 256*yindex], %[[OUT]] : bf16
// CHECK-NEXT:  }
// CHECK:         triton.launch @triton_mm_fused_addmm_relu_t_0(@x, @w, @b, @buf1) ynumel 256 xnumel 256 r0_numel 128
// TF32-LABEL: triton.kernel @triton_mm_fused_addmm_relu_t_0 matmul
// TF32:         triton.dot %{{.*}}, %{{.*}} into %{{.*}} "ieee" : bf16, bf16 -> f32
buffer.graph @aligned_bf16 {
  buffer.input "x" #buffer.layout<[256, 128], [128, 1], bf16>
  buffer.input "w" #buffer.layout<[256, 128], [128, 1], bf16>
  buffer.input "b" #buffer.layout<[256], [1], bf16>
  buffer.fused {
    buffer.computed "buf0" #buffer.layout<[256, 256], [256, 1], bf16> ranges [256, 256] reduce [128] origins ["addmm", "t"] {
      %0 = buffer.load @x[r0_0 + 128*i0] : bf16
      %1 = buffer.load @w[r0_0 + 128*i1] : bf16
      %2 = buffer.dot %0, %1 : bf16, bf16 -> f32
      %3 = buffer.load @b[i1] : bf16
      %4 = arith.extf %3 : bf16 to f32
      %5 = arith.addf %2, %4 : f32
      %6 = arith.truncf %5 : f32 to bf16
      buffer.store @buf0[i1 + 256*i0], %6 : bf16
    }
    buffer.computed "buf1" #buffer.layout<[256, 256], [256, 1], bf16> ranges [65536] origins ["relu"] {
      %7 = buffer.load @buf0[i0] : bf16
      %8 = arith.extf %7 : bf16 to f32
      %9 = arith.constant 0.000000e+00 : f32
      %10 = arith.maximumf %8, %9 : f32
      %11 = arith.truncf %10 : f32 to bf16
      buffer.store @buf1[i0], %11 : bf16
    }
  }
  buffer.output @buf1
}

// -----

// f32 mm * c, 37 x 50 over 29: A masked by ymask, r0_mask; B by xmask, r0_mask_t; epilogue and store by both.
// CHECK-LABEL: triton.kernel @triton_mm_fused_mm_mul_0 matmul(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>, %in_ptr2: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) ynumel 37 xnumel 50 r0_numel 29 origins ["mm", "mul"] configs [#triton.config<YBLOCK = 64, XBLOCK = 64, R0_BLOCK = 32, num_warps = 8, num_stages = 3>, #triton.config<YBLOCK = 64, XBLOCK = 64, R0_BLOCK = 32, num_warps = 4, num_stages = 4>, #triton.config<YBLOCK = 64, XBLOCK = 64, R0_BLOCK = 32, num_warps = 4, num_stages = 3>, #triton.config<YBLOCK = 64, XBLOCK = 64, R0_BLOCK = 16, num_warps = 4, num_stages = 2>] {
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[ACC:.*]] = triton.rloop iter_args(%[[A:.*]] = %[[ZERO]] : f32) {
// CHECK-NEXT:      %[[L:.*]] = triton.load %in_ptr0[r0_index + 29*yindex] mask ymask, r0_mask other 0.000000e+00 : f32
// CHECK-NEXT:      %[[R:.*]] = triton.load %in_ptr1[xindex + 50*r0_index_t] mask xmask, r0_mask_t other 0.000000e+00 : f32
// CHECK-NEXT:      %[[D:.*]] = triton.dot %[[L]], %[[R]] into %[[A]] "ieee" : f32, f32 -> f32
// CHECK-NEXT:      triton.yield %[[D]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[C:.*]] = triton.load %in_ptr2[xindex + 50*yindex] mask ymask, xmask other 0.000000e+00 : f32
// CHECK-NEXT:    %[[P:.*]] = arith.mulf %[[ACC]], %[[C]] : f32
// CHECK-NEXT:    triton.store %out_ptr0[xindex + 50*yindex], %[[P]] mask ymask, xmask : f32
// CHECK-NEXT:  }
// CHECK:         triton.launch @triton_mm_fused_mm_mul_0(@a, @b, @c, @buf1) ynumel 37 xnumel 50 r0_numel 29
// TF32-LABEL: triton.kernel @triton_mm_fused_mm_mul_0 matmul
// TF32:         triton.dot %{{.*}}, %{{.*}} into %{{.*}} "tf32" : f32, f32 -> f32
buffer.graph @odd_f32 {
  buffer.input "a" #buffer.layout<[37, 29], [29, 1], f32>
  buffer.input "b" #buffer.layout<[29, 50], [50, 1], f32>
  buffer.input "c" #buffer.layout<[37, 50], [50, 1], f32>
  buffer.fused {
    buffer.computed "buf0" #buffer.layout<[37, 50], [50, 1], f32> ranges [37, 50] reduce [29] origins ["mm"] {
      %0 = buffer.load @a[r0_0 + 29*i0] : f32
      %1 = buffer.load @b[i1 + 50*r0_0] : f32
      %2 = buffer.dot %0, %1 : f32, f32 -> f32
      buffer.store @buf0[i1 + 50*i0], %2 : f32
    }
    buffer.computed "buf1" #buffer.layout<[37, 50], [50, 1], f32> ranges [1850] origins ["mul"] {
      %3 = buffer.load @buf0[i0] : f32
      %4 = buffer.load @c[i0] : f32
      %5 = arith.mulf %3, %4 : f32
      buffer.store @buf1[i0], %5 : f32
    }
  }
  buffer.output @buf1
}

// -----

// An inlined exp prologue on A (exp(0) = 1): the dot masks its lhs with r0_mask; the plain B load needs none.
// CHECK-LABEL: triton.kernel @triton_mm_fused_exp_mm_0 matmul
// CHECK:           %[[L:.*]] = triton.load %in_ptr0[r0_index + 29*yindex] mask ymask, r0_mask other 0.000000e+00 : f32
// CHECK-NEXT:      %[[E:.*]] = math.exp %[[L]] : f32
// CHECK-NEXT:      %[[R:.*]] = triton.load %in_ptr1[xindex + 50*r0_index_t] mask xmask, r0_mask_t other 0.000000e+00 : f32
// CHECK-NEXT:      %{{.*}} = triton.dot %[[E]], %[[R]] into %{{.*}} mask r0_mask "ieee" : f32, f32 -> f32
// TF32-LABEL: triton.kernel @triton_mm_fused_exp_mm_0 matmul
// TF32:         triton.dot %{{.*}}, %{{.*}} into %{{.*}} mask r0_mask "tf32" : f32, f32 -> f32
buffer.graph @prologue {
  buffer.input "a" #buffer.layout<[37, 29], [29, 1], f32>
  buffer.input "b" #buffer.layout<[29, 50], [50, 1], f32>
  buffer.computed "buf0" #buffer.layout<[37, 50], [50, 1], f32> ranges [37, 50] reduce [29] origins ["exp", "mm"] {
    %0 = buffer.load @a[r0_0 + 29*i0] : f32
    %1 = math.exp %0 : f32
    %2 = buffer.load @b[i1 + 50*r0_0] : f32
    %3 = buffer.dot %1, %2 : f32, f32 -> f32
    buffer.store @buf0[i1 + 50*i0], %3 : f32
  }
  buffer.output @buf0
}

// -----

// A batched contraction with a fused epilogue whose loops are merged into one flat range: its
// lanes read the product at X = M*N*zindex + N*yindex + xindex.
// CHECK-LABEL: triton.kernel @triton_mm_fused_bmm_relu_0 matmul({{.*}}) znumel 2 ynumel 64 xnumel 64 r0_numel 64
// CHECK:         arith.maximumf
// CHECK-NEXT:    %[[R:.*]] = arith.truncf
// CHECK-NEXT:    triton.store %out_ptr0[xindex + 64*yindex + 4096*zindex], %[[R]] : bf16
// CHECK:         triton.launch @triton_mm_fused_bmm_relu_0(@a, @b, @buf1) znumel 2 ynumel 64 xnumel 64 r0_numel 64
builtin.module {
  buffer.graph @bmm_relu {
    buffer.input "a" #buffer.layout<[2, 64, 64], [4096, 64, 1], bf16>
    buffer.input "b" #buffer.layout<[2, 64, 64], [4096, 64, 1], bf16>
    buffer.fused {
      buffer.computed "buf0" #buffer.layout<[2, 64, 64], [4096, 64, 1], bf16> ranges [2, 64, 64] reduce [64] origins ["bmm"] {
        %0 = buffer.load @a[r0_0 + 64*i1 + 4096*i0] : bf16
        %1 = buffer.load @b[i2 + 64*r0_0 + 4096*i0] : bf16
        %2 = buffer.dot %0, %1 : bf16, bf16 -> f32
        %3 = arith.truncf %2 : f32 to bf16
        buffer.store @buf0[i2 + 64*i1 + 4096*i0], %3 : bf16
      }
      buffer.computed "buf1" #buffer.layout<[2, 64, 64], [4096, 64, 1], bf16> ranges [8192] origins ["relu"] {
        %4 = buffer.load @buf0[i0] : bf16
        %5 = arith.extf %4 : bf16 to f32
        %6 = arith.constant 0.000000e+00 : f32
        %7 = arith.maximumf %5, %6 : f32
        %8 = arith.truncf %7 : f32 to bf16
        buffer.store @buf1[i0], %8 : bf16
      }
    }
    buffer.output @buf1
  }
}

// -----

// A grouped product (_grouped_mm) of gathered rows: each row's group (%g, from buf0) and its
// gathered position (%p) are loaded once, before the loop, masked by the rows alone; the
// loop runs over the groups of the tile's rows (`groups(%g)`), and B's tile is read at the
// group with no row mask. The tiles are bf16's (R0_BLOCK 64): the i64 loads of the groups
// and positions are not in the tiles. No extern side under gemm=measure: the groups come from
// an input here, not counted from the groups' ends that torch's _grouped_mm takes
// (matmul-measure.mlir has one that is); the fused kernel runs.
// CHECK-LABEL: triton.kernel @triton_mm_fused__grouped_mm_index_0 matmul({{.*}}) ynumel 150 xnumel 72 r0_numel 40 origins ["_grouped_mm", "index"] configs [#triton.config<YBLOCK = 128, XBLOCK = 128, R0_BLOCK = 64, num_warps = 8, num_stages = 3>,
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[GL:.*]] = triton.load %in_ptr0[yindex] mask ymask other 0 : i64
// CHECK-NEXT:    %[[G:.*]] = triton.indirect_index %[[GL]] size 4 mask ymask : i64
// CHECK-NEXT:    %[[PL:.*]] = triton.load %in_ptr1[yindex] mask ymask other 0 : i64
// CHECK-NEXT:    %[[P:.*]] = triton.indirect_index %[[PL]] size 100 mask ymask : i64
// CHECK-NEXT:    %{{.*}} = triton.rloop groups(%[[G]]) iter_args(%[[A:.*]] = %[[ZERO]] : f32) {
// CHECK-NEXT:      %[[L:.*]] = triton.load %in_ptr2[r0_index + 40*ind0] indirect(%[[P]]) mask ymask, r0_mask other 0.000000e+00 : bf16
// CHECK-NEXT:      %[[R:.*]] = triton.load %in_ptr3[r0_index_t + 40*xindex + 2880*ind0] indirect(%[[G]]) mask xmask, r0_mask_t other 0.000000e+00 : bf16
// CHECK-NEXT:      %[[D:.*]] = triton.dot %[[L]], %[[R]] into %[[A]] "ieee" : bf16, bf16 -> f32
// CHECK-NEXT:      triton.yield %[[D]] : f32
// CHECK-NEXT:    }
// MEASURE-LABEL: triton.kernel @triton_mm_fused__grouped_mm_index_0
// MEASURE:         triton.launch @triton_mm_fused__grouped_mm_index_0(@buf0, @idx, @x, @w, @buf1) ynumel 150 xnumel 72 r0_numel 40{{$}}
// MEASURE-NOT:     against
buffer.graph @grouped {
  buffer.input "x" #buffer.layout<[100, 40], [40, 1], bf16>
  buffer.input "idx" #buffer.layout<[150], [1], i64>
  buffer.input "w" #buffer.layout<[4, 72, 40], [2880, 40, 1], bf16>
  buffer.input "buf0" #buffer.layout<[150], [1], i64>
  buffer.computed "buf1" #buffer.layout<[150, 72], [72, 1], bf16> ranges [150, 72] reduce [40] origins ["_grouped_mm", "index"] {
    %0 = buffer.load @idx[i0] : i64
    %1 = loops.indirect_index %0 size 100 : i64
    %2 = buffer.load @x[r0_0 + 40*ind0] indirect(%1) : bf16
    %3 = buffer.load @buf0[i0] : i64
    %4 = loops.indirect_index %3 size 4 : i64
    %5 = buffer.load @w[r0_0 + 40*i1 + 2880*ind0] indirect(%4) : bf16
    %6 = buffer.dot %2, %5 : bf16, bf16 -> f32
    %7 = arith.truncf %6 : f32 to bf16
    buffer.store @buf1[i1 + 72*i0], %7 : bf16
  }
  buffer.output @buf1
}

// -----

// A scatter epilogue (a mixture of experts' combine): after the K loop, each tile of relu(x @ w)
// is added into the rows of buf1 its rows' positions name. The scatter's result is buf1 itself,
// written in place: no allocation, the kernel takes buf1 as its out pointer, and the graph's
// output is a view of it. The product stays in registers. Under gemm=measure, the unfused side
// is cuBLAS and the scatter's own kernel, adding into the same buf1.
// CHECK-LABEL: triton.kernel @triton_mm_fused_expand_mm_relu_scatter_add_unsqueeze_0 matmul(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>, %in_ptr2: !triton.ptr<i64>, %out_ptr0: !triton.ptr<f32>) ynumel 30 xnumel 8 r0_numel 16
// CHECK:           triton.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[PL:.*]] = triton.load %in_ptr2[yindex] mask ymask other 0 : i64
// CHECK-NEXT:    %[[P:.*]] = triton.indirect_index %[[PL]] size 20 mask ymask : i64
// CHECK:         triton.store %out_ptr0[xindex + 8*ind0] indirect(%[[P]]), %{{.*}} atomic_add mask ymask, xmask : f32
// CHECK-NEXT:  }
// CHECK:       triton.wrapper @call {
// CHECK-NOT:     triton.alloc "buf2"
// CHECK:         triton.launch @triton_mm_fused_expand_mm_relu_scatter_add_unsqueeze_0(@x, @w, @i, @buf1) ynumel 30 xnumel 8 r0_numel 16
// CHECK:         triton.view "buf2" = @buf1 #buffer.layout<[20, 8], [8, 1], f32>
// CHECK:         triton.return @buf2
// MEASURE-LABEL: triton.kernel @triton_poi_fused_expand_mm_relu_scatter_add_unsqueeze_1 pointwise
// MEASURE:         triton.store %out_ptr0[x0 + 8*ind0] indirect(%{{.*}}), %{{.*}} atomic_add mask xmask : f32
// MEASURE:       triton.wrapper @triton_mm_fused_expand_mm_relu_scatter_add_unsqueeze_0_unfused0 {
// MEASURE:         triton.extern "buf0_mm" = "mm.default" {args = [@buf0_lhs, @buf0_rhs], fresh}
// MEASURE-NEXT:    triton.launch @triton_poi_fused_expand_mm_relu_scatter_add_unsqueeze_1(@buf0_mm, @i, @buf1) xnumel 240
// MEASURE:         triton.launch @triton_mm_fused_expand_mm_relu_scatter_add_unsqueeze_0(@x, @w, @i, @buf1) ynumel 30 xnumel 8 r0_numel 16 against @triton_mm_fused_expand_mm_relu_scatter_add_unsqueeze_0_unfused0
buffer.graph @mm_scatter_add {
  buffer.input "x" #buffer.layout<[30, 16], [16, 1], f32>
  buffer.input "w" #buffer.layout<[16, 8], [8, 1], f32>
  buffer.input "i" #buffer.layout<[30], [1], i64>
  buffer.input "buf1" #buffer.layout<[20, 8], [8, 1], f32>
  buffer.fused {
    buffer.computed "buf0" #buffer.layout<[30, 8], [8, 1], f32> ranges [30, 8] reduce [16] origins ["mm"] {
      %1 = buffer.load @x[r0_0 + 16*i0] : f32
      %2 = buffer.load @w[i1 + 8*r0_0] : f32
      %3 = buffer.dot %1, %2 : f32, f32 -> f32
      buffer.store @buf0[i1 + 8*i0], %3 : f32
    }
    buffer.scatter "buf2" #buffer.layout<[20, 8], [8, 1], f32> = @buf1 ranges [30, 8] origins ["expand", "relu", "scatter_add", "unsqueeze"] {
      %4 = buffer.load @i[i0] : i64
      %5 = loops.indirect_index %4 size 20 : i64
      %6 = buffer.load @buf0[i1 + 8*i0] : f32
      %7 = arith.constant 0.000000e+00 : f32
      %8 = arith.maximumf %6, %7 : f32
      buffer.store @buf2[i1 + 8*ind0] indirect(%5), %8 atomic_add : f32
    }
  }
  buffer.output @buf2
}
