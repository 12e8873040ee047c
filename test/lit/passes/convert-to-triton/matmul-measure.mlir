// RUN: mlc-opt %s --split-input-file --convert-to-triton="gemm=measure" | filecheck %s
// RUN: mlc-opt %s --split-input-file --convert-to-triton="gemm=measure" | mlc-opt --split-input-file | filecheck %s
// RUN: mlc-opt %s --split-input-file --convert-to-triton="gemm=measure" | mlc-translate --split-input-file --emit-python | filecheck %s --check-prefix=PY
// RUN: not mlc-opt %s --convert-to-triton="gemm=sometimes" 2>&1 | filecheck %s --check-prefix=BAD

// gemm=measure: a GEMM kernel is launched `against` a wrapper doing the same work unfused over
// the same buffers: views of the operands as the contraction reads them (B transposed here),
// aten's mm, and the epilogue (bias + gelu) as a pointwise kernel reading the product; the
// first run times both (`choose`).
// CHECK:       triton.kernel @triton_mm_fused_addmm_gelu_t_0 matmul(
// CHECK:       triton.kernel @triton_poi_fused_addmm_gelu_t_1 pointwise(
// CHECK:       triton.wrapper @triton_mm_fused_addmm_gelu_t_0_unfused0 {
// CHECK-NEXT:    triton.input "x" #buffer.layout<[64, 96], [96, 1], bf16>
// CHECK-NEXT:    triton.input "w" #buffer.layout<[128, 96], [96, 1], bf16>
// CHECK-NEXT:    triton.input "b" #buffer.layout<[128], [1], bf16>
// CHECK-NEXT:    triton.input "buf1" #buffer.layout<[64, 128], [128, 1], bf16>
// CHECK-NEXT:    triton.view "buf0_lhs" = @x #buffer.layout<[64, 96], [96, 1], bf16>
// CHECK-NEXT:    triton.view "buf0_rhs" = @w #buffer.layout<[96, 128], [1, 96], bf16>
// CHECK-NEXT:    triton.extern "buf0_mm" = "mm.default" {args = [@buf0_lhs, @buf0_rhs], fresh} : #buffer.layout<[64, 128], [128, 1], bf16>
// CHECK-NEXT:    triton.launch @triton_poi_fused_addmm_gelu_t_1(@buf0_mm, @b, @buf1) xnumel 8192
// CHECK-NEXT:    triton.free @buf0_lhs, @buf0_rhs, @buf0_mm
// CHECK-NEXT:    triton.return
// CHECK:       triton.wrapper @call {
// CHECK:         triton.launch @triton_mm_fused_addmm_gelu_t_0(@x, @w, @b, @buf1) ynumel 64 xnumel 128 r0_numel 96 against @triton_mm_fused_addmm_gelu_t_0_unfused0
// PY:          def triton_mm_fused_addmm_gelu_t_0_unfused0(args):
// PY:            buf0_mm = torch.mm(buf0_lhs, buf0_rhs)
// PY:            launch(triton_poi_fused_addmm_gelu_t_1,
// PY:          def call(args):
// PY:            choose(triton_mm_fused_addmm_gelu_t_0, lambda: launch(triton_mm_fused_addmm_gelu_t_0, {{.*}}, lambda: triton_mm_fused_addmm_gelu_t_0_unfused0([x, w, b, buf1]), (64, 128, 96), launches)
// BAD: gemm is fused or measure, got 'sometimes'
builtin.module {
  buffer.graph @mm_bias_gelu {
    buffer.input "x" #buffer.layout<[64, 96], [96, 1], bf16>
    buffer.input "w" #buffer.layout<[128, 96], [96, 1], bf16>
    buffer.input "b" #buffer.layout<[128], [1], bf16>
    buffer.fused {
      buffer.computed "buf0" #buffer.layout<[64, 128], [128, 1], bf16> ranges [64, 128] reduce [96] origins ["addmm", "t"] {
        %0 = buffer.load @x[r0_0 + 96*i0] : bf16
        %1 = buffer.load @w[r0_0 + 96*i1] : bf16
        %2 = buffer.dot %0, %1 : bf16, bf16 -> f32
        %3 = buffer.load @b[i1] : bf16
        %4 = arith.extf %3 : bf16 to f32
        %5 = arith.addf %2, %4 : f32
        %6 = arith.truncf %5 : f32 to bf16
        buffer.store @buf0[i1 + 128*i0], %6 : bf16
      }
      buffer.computed "buf1" #buffer.layout<[64, 128], [128, 1], bf16> ranges [8192] origins ["gelu"] {
        %7 = buffer.load @buf0[i0] : bf16
        %8 = arith.extf %7 : bf16 to f32
        %9 = arith.constant 5.000000e-01 : f32
        %10 = arith.constant 1.000000e+00 : f32
        %11 = arith.constant 0.707106769 : f32
        %12 = arith.mulf %8, %11 : f32
        %13 = math.erf %12 : f32
        %14 = arith.addf %10, %13 : f32
        %15 = arith.mulf %8, %9 : f32
        %16 = arith.mulf %15, %14 : f32
        %17 = arith.truncf %16 : f32 to bf16
        buffer.store @buf1[i0], %17 : bf16
      }
    }
    buffer.output @buf1
  }
}

// -----

// Where cuBLAS does the whole epilogue the unfused side is one call writing the output itself:
// addmm with the row bias (broadcast along M: a 1-D view) rounded once, and no pointwise kernel.
// CHECK-LABEL: triton.kernel @triton_mm_fused_addmm_t_0 matmul(
// CHECK-NOT:   triton.kernel
// CHECK:       triton.wrapper @triton_mm_fused_addmm_t_0_unfused0 {
// CHECK:         triton.view "buf0_lhs" = @x #buffer.layout<[64, 96], [96, 1], bf16>
// CHECK-NEXT:    triton.view "buf0_rhs" = @w #buffer.layout<[96, 128], [1, 96], bf16>
// CHECK-NEXT:    triton.view "buf0_bias" = @b #buffer.layout<[128], [1], bf16>
// CHECK-NEXT:    triton.extern "buf0_mm" = "addmm.default" {args = [@buf0_bias, @buf0_lhs, @buf0_rhs], kwargs = {out = @buf0}} : #buffer.layout<[64, 128], [128, 1], bf16>
// CHECK-NEXT:    triton.free @buf0_lhs, @buf0_rhs, @buf0_bias, @buf0_mm
// CHECK-NEXT:    triton.return
// PY:          def triton_mm_fused_addmm_t_0_unfused0(args):
// PY:            buf0_mm = torch.addmm(buf0_bias, buf0_lhs, buf0_rhs, out=buf0)
builtin.module {
  buffer.graph @mm_bias {
    buffer.input "x" #buffer.layout<[64, 96], [96, 1], bf16>
    buffer.input "w" #buffer.layout<[128, 96], [96, 1], bf16>
    buffer.input "b" #buffer.layout<[128], [1], bf16>
    buffer.computed "buf0" #buffer.layout<[64, 128], [128, 1], bf16> ranges [64, 128] reduce [96] origins ["addmm", "t"] {
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
}

// -----

// A plain f32 mm: torch.mm into the output.
// CHECK-LABEL: triton.kernel @triton_mm_fused_mm_0 matmul(
// CHECK:       triton.wrapper @triton_mm_fused_mm_0_unfused0 {
// CHECK:         triton.extern "buf0_mm" = "mm.default" {args = [@buf0_lhs, @buf0_rhs], kwargs = {out = @buf0}} : #buffer.layout<[64, 128], [128, 1], f32>
// CHECK-NEXT:    triton.free @buf0_lhs, @buf0_rhs, @buf0_mm
// PY:          def triton_mm_fused_mm_0_unfused0(args):
// PY:            buf0_mm = torch.mm(buf0_lhs, buf0_rhs, out=buf0)
builtin.module {
  buffer.graph @mm {
    buffer.input "x" #buffer.layout<[64, 96], [96, 1], f32>
    buffer.input "w" #buffer.layout<[96, 128], [128, 1], f32>
    buffer.computed "buf0" #buffer.layout<[64, 128], [128, 1], f32> ranges [64, 128] reduce [96] origins ["mm"] {
      %0 = buffer.load @x[r0_0 + 96*i0] : f32
      %1 = buffer.load @w[i1 + 128*r0_0] : f32
      %2 = buffer.dot %0, %1 : f32, f32 -> f32
      buffer.store @buf0[i1 + 128*i0], %2 : f32
    }
    buffer.output @buf0
  }
}

// -----

// Alpha scales the product: more than cuBLAS's epilogue here, so mm and a pointwise kernel.
// CHECK-LABEL: triton.kernel @triton_mm_fused_addmm_0 matmul(
// CHECK:       triton.kernel @triton_poi_fused_addmm_1 pointwise(
// CHECK:       triton.wrapper @triton_mm_fused_addmm_0_unfused0 {
// CHECK:         triton.extern "buf0_mm" = "mm.default" {args = [@buf0_lhs, @buf0_rhs], fresh} : #buffer.layout<[64, 128], [128, 1], f32>
// CHECK-NEXT:    triton.launch @triton_poi_fused_addmm_1(@buf0_mm, @b, @buf0) xnumel 8192
builtin.module {
  buffer.graph @mm_scaled {
    buffer.input "x" #buffer.layout<[64, 96], [96, 1], f32>
    buffer.input "w" #buffer.layout<[96, 128], [128, 1], f32>
    buffer.input "b" #buffer.layout<[64, 128], [128, 1], f32>
    buffer.computed "buf0" #buffer.layout<[64, 128], [128, 1], f32> ranges [64, 128] reduce [96] origins ["addmm"] {
      %0 = buffer.load @x[r0_0 + 96*i0] : f32
      %1 = buffer.load @w[i1 + 128*r0_0] : f32
      %2 = buffer.dot %0, %1 : f32, f32 -> f32
      %3 = arith.constant 2.000000e+00 : f32
      %4 = arith.mulf %2, %3 : f32
      %5 = buffer.load @b[i1 + 128*i0] : f32
      %6 = arith.addf %4, %5 : f32
      buffer.store @buf0[i1 + 128*i0], %6 : f32
    }
    buffer.output @buf0
  }
}

// -----

// bmm (a batched contraction): a matmul kernel over znumel products, each program's zindex
// picking its product; the unfused side is torch.bmm into the output.
// CHECK-LABEL: triton.kernel @triton_mm_fused_bmm_0 matmul(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) znumel 3 ynumel 37 xnumel 50 r0_numel 29
// CHECK:           triton.load %in_ptr0[r0_index + 29*yindex + 1073*zindex] mask ymask, r0_mask other 0.000000e+00 : f32
// CHECK-NEXT:      triton.load %in_ptr1[r0_index_t + 29*xindex + 1450*zindex] mask xmask, r0_mask_t other 0.000000e+00 : f32
// CHECK:         triton.store %out_ptr0[xindex + 50*yindex + 1850*zindex], %{{.*}} mask ymask, xmask : f32
// CHECK:       triton.wrapper @triton_mm_fused_bmm_0_unfused0 {
// CHECK:         triton.view "buf0_lhs" = @a #buffer.layout<[3, 37, 29], [1073, 29, 1], f32>
// CHECK-NEXT:    triton.view "buf0_rhs" = @b #buffer.layout<[3, 29, 50], [1450, 1, 29], f32>
// CHECK-NEXT:    triton.extern "buf0_mm" = "bmm.default" {args = [@buf0_lhs, @buf0_rhs], kwargs = {out = @buf0}} : #buffer.layout<[3, 37, 50], [1850, 50, 1], f32>
// CHECK:         triton.launch @triton_mm_fused_bmm_0(@a, @b, @buf0) znumel 3 ynumel 37 xnumel 50 r0_numel 29 against @triton_mm_fused_bmm_0_unfused0
// PY:          def triton_mm_fused_bmm_0(in_ptr0, in_ptr1, out_ptr0, znumel, ynumel, xnumel, r0_numel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr, R0_BLOCK: tl.constexpr):
// PY:            zindex = tl.program_id(2)
// PY-NEXT:       pid = tl.program_id(0) + tl.program_id(1) * tl.num_programs(0)
// PY:            buf0_mm = torch.bmm(buf0_lhs, buf0_rhs, out=buf0)
// PY:            choose(triton_mm_fused_bmm_0, lambda: launch(triton_mm_fused_bmm_0, triton_mm_fused_bmm_0_configs, 50, (a, b, buf0, 3, 37, 50, 29,), launches, ynumel=37, znumel=3), lambda: triton_mm_fused_bmm_0_unfused0([a, b, buf0]), (3, 37, 50, 29), launches)
builtin.module {
  buffer.graph @bmm {
    buffer.input "a" #buffer.layout<[3, 37, 29], [1073, 29, 1], f32>
    buffer.input "b" #buffer.layout<[3, 50, 29], [1450, 29, 1], f32>
    buffer.computed "buf0" #buffer.layout<[3, 37, 50], [1850, 50, 1], f32> ranges [3, 37, 50] reduce [29] origins ["bmm"] {
      %0 = buffer.load @a[r0_0 + 29*i1 + 1073*i0] : f32
      %1 = buffer.load @b[r0_0 + 29*i2 + 1450*i0] : f32
      %2 = buffer.dot %0, %1 : f32, f32 -> f32
      buffer.store @buf0[i2 + 50*i1 + 1850*i0], %2 : f32
    }
    buffer.output @buf0
  }
}

// -----

// Operands the GEMM computes in its K loop (a prologue: A upcast and scaled per column, B a
// reshape of a transpose, no strided window on its input) are stored by kernels of their own on
// the unfused side, A over [M, K] and B over [K, N], r0_0 renamed to their own loop variable,
// before cuBLAS reads them; the temporaries are freed after the call.
// CHECK-LABEL: triton.kernel @triton_mm_fused_mm_0 matmul
// CHECK:       triton.kernel @triton_poi_fused_mm_1 pointwise(%in_ptr0: !triton.ptr<bf16>, %in_ptr1: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 2784
// CHECK:         triton.index x0 = ModularIndexing(xindex, 1, 29)
// CHECK:         triton.load %in_ptr0[xindex] mask xmask : bf16
// CHECK:         triton.load %in_ptr1[x0] mask xmask evict_last : f32
// CHECK:       triton.kernel @triton_poi_fused_mm_2 pointwise(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 1450
// CHECK:         triton.load %in_ptr0[x1 + 29*FloorDiv(x0, 25) + 58*ModularIndexing(x0, 1, 25)]
// CHECK:         triton.store %out_ptr0[xindex]
// CHECK:       triton.wrapper @triton_mm_fused_mm_0_unfused0 {
// CHECK:         triton.alloc "buf0_lhs" #buffer.layout<[96, 29], [29, 1], f32>
// CHECK-NEXT:    triton.launch @triton_poi_fused_mm_1(@a, @s, @buf0_lhs) xnumel 2784
// CHECK-NEXT:    triton.alloc "buf0_rhs" #buffer.layout<[29, 50], [50, 1], f32>
// CHECK-NEXT:    triton.launch @triton_poi_fused_mm_2(@b, @buf0_rhs) xnumel 1450
// CHECK-NEXT:    triton.extern "buf0_mm" = "mm.default" {args = [@buf0_lhs, @buf0_rhs], kwargs = {out = @buf0}}
// CHECK-NEXT:    triton.free @buf0_lhs, @buf0_rhs, @buf0_mm
// CHECK:         triton.launch @triton_mm_fused_mm_0(@a, @s, @b, @buf0) ynumel 96 xnumel 50 r0_numel 29 against @triton_mm_fused_mm_0_unfused0
// PY:          def triton_mm_fused_mm_0_unfused0(args):
// PY:            launch(triton_poi_fused_mm_1,
// PY:            launch(triton_poi_fused_mm_2,
// PY:            buf0_mm = torch.mm(buf0_lhs, buf0_rhs, out=buf0)
builtin.module {
  buffer.graph @prologues {
    buffer.input "a" #buffer.layout<[96, 29], [29, 1], bf16>
    buffer.input "s" #buffer.layout<[29], [1], f32>
    buffer.input "b" #buffer.layout<[25, 2, 29], [58, 29, 1], f32>
    buffer.computed "buf0" #buffer.layout<[96, 50], [50, 1], f32> ranges [96, 50] reduce [29] origins ["mm"] {
      %0 = buffer.load @a[r0_0 + 29*i0] : bf16
      %1 = arith.extf %0 : bf16 to f32
      %2 = buffer.load @s[r0_0] : f32
      %3 = arith.mulf %1, %2 : f32
      %4 = buffer.load @b[r0_0 + 29*FloorDiv(i1, 25) + 58*ModularIndexing(i1, 1, 25)] : f32
      %5 = buffer.dot %3, %4 : f32, f32 -> f32
      buffer.store @buf0[i1 + 50*i0], %5 : f32
    }
    buffer.output @buf0
  }
}

// -----

// A grouped product (_grouped_mm, each row's group counted from the ends `offs` by buf0's
// reduction) + relu: the unfused side is torch's _grouped_mm of A, B's [G, K, N] view and the
// ends, into a fresh product that relu's kernel reads. The kernel reads each row's group, not
// the ends: the launch names them after `also`, and the wrapper takes them after its buffers;
// the ends live until that launch.
// CHECK-LABEL: triton.wrapper @triton_mm_fused__grouped_mm_relu_1_unfused0 {
// CHECK-NEXT:    triton.input "buf0" #buffer.layout<[24], [1], i64>
// CHECK-NEXT:    triton.input "a" #buffer.layout<[24, 32], [32, 1], bf16>
// CHECK-NEXT:    triton.input "b" #buffer.layout<[4, 32, 16], [512, 16, 1], bf16>
// CHECK-NEXT:    triton.input "buf2" #buffer.layout<[24, 16], [16, 1], bf16>
// CHECK-NEXT:    triton.input "offs" #buffer.layout<[4], [1], i32>
// CHECK-NEXT:    triton.view "buf1_lhs" = @a #buffer.layout<[24, 32], [32, 1], bf16>
// CHECK-NEXT:    triton.view "buf1_rhs" = @b #buffer.layout<[4, 32, 16], [512, 16, 1], bf16>
// CHECK-NEXT:    triton.extern "buf1_mm" = "_grouped_mm.default" {args = [@buf1_lhs, @buf1_rhs, @offs], fresh} : #buffer.layout<[24, 16], [16, 1], bf16>
// CHECK-NEXT:    triton.launch @triton_poi_fused__grouped_mm_relu_2(@buf1_mm, @buf2) xnumel 384
// CHECK:       triton.wrapper @call {
// CHECK:         triton.launch @triton_per_fused__grouped_mm_0(@offs, @buf0) xnumel 24 r0_numel 4
// CHECK:         triton.launch @triton_mm_fused__grouped_mm_relu_1(@buf0, @a, @b, @buf2) ynumel 24 xnumel 16 r0_numel 32 against @triton_mm_fused__grouped_mm_relu_1_unfused0 also(@offs)
// CHECK-NEXT:    triton.free @a, @b, @offs, @buf0
// PY:          def triton_mm_fused__grouped_mm_relu_1_unfused0(args):
// PY:            buf1_mm = aten._grouped_mm.default(buf1_lhs, buf1_rhs, offs)
// PY:            choose(triton_mm_fused__grouped_mm_relu_1, {{.*}}, lambda: triton_mm_fused__grouped_mm_relu_1_unfused0([buf0, a, b, buf2, offs]), (24, 16, 32), launches)
builtin.module {
  buffer.graph @grouped_mm {
    buffer.input "a" #buffer.layout<[24, 32], [32, 1], bf16>
    buffer.input "b" #buffer.layout<[4, 32, 16], [512, 16, 1], bf16>
    buffer.input "offs" #buffer.layout<[4], [1], i32>
    buffer.computed "buf0" #buffer.layout<[24], [1], i64> ranges [24] reduce [4] origins ["_grouped_mm"] {
      %0 = buffer.load @offs[r0_0] : i32
      %1 = arith.extsi %0 : i32 to i64
      %2 = loops.index i0 : i64
      %3 = arith.cmpi sle, %1, %2 : i64
      %4 = arith.extui %3 : i1 to i64
      %5 = buffer.reduce sum %4 : i64 -> i64
      %6 = arith.constant 3 : i64
      %7 = arith.minsi %5, %6 : i64
      buffer.store @buf0[i0], %7 : i64
    }
    buffer.fused {
      buffer.computed "buf1" #buffer.layout<[24, 16], [16, 1], bf16> ranges [24, 16] reduce [32] origins ["_grouped_mm"] {
        %8 = buffer.load @a[r0_0 + 32*i0] : bf16
        %9 = buffer.load @buf0[i0] : i64
        %10 = loops.indirect_index %9 size 4 : i64
        %11 = buffer.load @b[i1 + 16*r0_0 + 512*ind0] indirect(%10) : bf16
        %12 = buffer.dot %8, %11 : bf16, bf16 -> f32
        %13 = arith.truncf %12 : f32 to bf16
        buffer.store @buf1[i1 + 16*i0], %13 : bf16
      }
      buffer.computed "buf2" #buffer.layout<[24, 16], [16, 1], bf16> ranges [384] origins ["relu"] {
        %14 = buffer.load @buf1[i0] : bf16
        %15 = arith.extf %14 : bf16 to f32
        %16 = arith.constant 0.000000e+00 : f32
        %17 = arith.maximumf %15, %16 : f32
        %18 = arith.truncf %17 : f32 to bf16
        buffer.store @buf2[i0], %18 : bf16
      }
    }
    buffer.output @buf2
  }
}
