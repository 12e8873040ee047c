// RUN: mlc-opt %s --convert-to-triton --split-input-file | filecheck %s
// RUN: mlc-opt %s --convert-to-triton --split-input-file | mlc-opt --split-input-file | filecheck %s

// Looped reductions (triton_red_...): r0_numel above 1024 (or not static). A triton.rloop
// walks the row in R0_BLOCK steps carrying [XBLOCK, R0_BLOCK] accumulators; triton.reduce
// combines their lanes after the loop, and the epilogue and the store follow it.

// mean(x + b[:, None], 1) over rows of 20,000: the x-only load of b and the constants are
// hoisted before the loop; masked lanes keep the accumulator (triton.accumulate ... mask).
// The reduction hint is INNER: the contiguous config, R0_BLOCK 2048 and 2048 / 128 = 16 warps;
// three rows of >= 8192 are few (at most 4 an SM), so wider slices are timed beside it.
// 20,000 is not a multiple of 2048 (nor of a power of two >= 256): r0_mask stays. XBLOCK 1
// divides the 3 rows, so xmask is constant and dropped.
// CHECK-LABEL: triton.kernel @triton_red_fused_add_mean_0 reduction(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 3 r0_numel 20000 origins ["add", "mean"] configs [#triton.config<XBLOCK = 1, R0_BLOCK = 2048, num_warps = 16, num_stages = 1>, #triton.config<XBLOCK = 1, R0_BLOCK = 4096, num_warps = 16, num_stages = 1>, #triton.config<XBLOCK = 1, R0_BLOCK = 8192, num_warps = 32, num_stages = 1>] {
// CHECK-NEXT:    triton.index x0 = xindex
// CHECK-NEXT:    %[[B:.*]] = triton.load %in_ptr1[x0] evict_last : f32
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[N:.*]] = arith.constant 2.000000e+04 : f32
// CHECK-NEXT:    %[[ACC:.*]] = triton.rloop iter_args(%[[A:.*]] = %[[ZERO]] : f32) {
// CHECK-NEXT:      triton.index r0_0 = r0_index
// CHECK-NEXT:      %[[X:.*]] = triton.load %in_ptr0[r0_0 + 20000*x0] mask r0_mask other 0.000000e+00 evict_first : f32
// CHECK-NEXT:      %[[V:.*]] = arith.addf %[[X]], %[[B]] : f32
// CHECK-NEXT:      %[[NEXT:.*]] = triton.accumulate sum %[[V]] into %[[A]] mask r0_mask : f32 -> f32
// CHECK-NEXT:      triton.yield %[[NEXT]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[SUM:.*]] = triton.reduce sum %[[ACC]] : f32 -> f32
// CHECK-NEXT:    %[[MEAN:.*]] = arith.divf %[[SUM]], %[[N]] : f32
// CHECK-NEXT:    triton.store %out_ptr0[x0], %[[MEAN]] : f32
// CHECK-NEXT:  }
// CHECK:         triton.launch @triton_red_fused_add_mean_0(@x, @b, @buf0) xnumel 3 r0_numel 20000
buffer.graph @long_rows {
  buffer.input "x" #buffer.layout<[3, 20000], [20000, 1], f32>
  buffer.input "b" #buffer.layout<[3], [1], f32>
  buffer.computed "buf0" #buffer.layout<[3], [1], f32> ranges [3] reduce [20000] origins ["add", "mean"] {
    %0 = buffer.load @x[r0_0 + 20000*i0] : f32
    %1 = buffer.load @b[i0] : f32
    %2 = arith.addf %0, %1 : f32
    %3 = buffer.reduce sum %2 : f32 -> f32
    %4 = arith.constant 20000.0 : f32
    %5 = arith.divf %3, %4 : f32
    buffer.store @buf0[i0], %5 : f32
  }
  buffer.output @buf0
}

// -----

// argmax over long rows carries (value, index) accumulators, starting at (-inf, INT64_MAX):
// each lane keeps its first maximum, and the final reduce keeps the lowest index on ties.
// CHECK-LABEL: triton.kernel @triton_red_fused_argmax_0 reduction
// CHECK:         %[[NINF:.*]] = arith.constant 0xff800000 : f32
// CHECK-NEXT:    %[[BIG:.*]] = arith.constant 9223372036854775807 : i64
// CHECK-NEXT:    %[[ACC:.*]], %[[IDX:.*]] = triton.rloop iter_args(%[[A:.*]] = %[[NINF]] : f32, %[[AI:.*]] = %[[BIG]] : i64) {
// CHECK:           %[[X:.*]] = triton.load %in_ptr0[r0_0 + 20000*x0] mask r0_mask other -inf evict_first : f32
// CHECK-NEXT:      %[[V:.*]], %[[I:.*]] = triton.accumulate argmax %[[X]] into %[[A]], %[[AI]] mask r0_mask : f32 -> f32, i64
// CHECK-NEXT:      triton.yield %[[V]], %[[I]] : f32, i64
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[R:.*]] = triton.reduce argmax %[[ACC]], %[[IDX]] : f32, i64 -> i64
// CHECK-NEXT:    triton.store %out_ptr0[x0], %[[R]] : i64
buffer.graph @long_argmax {
  buffer.input "x" #buffer.layout<[3, 20000], [20000, 1], f32>
  buffer.computed "buf0" #buffer.layout<[3], [1], i64> ranges [3] reduce [20000] origins ["argmax"] {
    %0 = buffer.load @x[r0_0 + 20000*i0] : f32
    %1 = buffer.reduce argmax %0 : f32 -> i64
    buffer.store @buf0[i0], %1 : i64
  }
  buffer.output @buf0
}

// -----

// var over long rows: (mean, m2, weight) accumulators updated one sample per lane
// (welford_reduce), combined across lanes after the loop (welford), then the epilogue.
// CHECK-LABEL: triton.kernel @triton_red_fused_var_0 reduction
// CHECK:         %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[M:.*]], %[[M2:.*]], %[[W:.*]] = triton.rloop iter_args(%[[A:.*]] = %[[Z]] : f32, %[[B:.*]] = %[[Z]] : f32, %[[C:.*]] = %[[Z]] : f32) {
// CHECK:           %{{.*}}, %{{.*}}, %{{.*}} = triton.accumulate welford %{{.*}} into %[[A]], %[[B]], %[[C]] mask r0_mask : f32 -> f32, f32, f32
// CHECK:         }
// CHECK-NEXT:    %{{.*}}, %[[RM2:.*]], %[[RW:.*]] = triton.reduce welford %[[M]], %[[M2]], %[[W]] : f32, f32, f32 -> f32, f32, f32
// CHECK-NEXT:    %[[DOF:.*]] = arith.subf %[[RW]], %{{.*}} : f32
// CHECK-NEXT:    %[[VAR:.*]] = arith.divf %[[RM2]], %[[DOF]] : f32
// CHECK-NEXT:    triton.store %out_ptr0[x0], %[[VAR]] : f32
buffer.graph @long_var {
  buffer.input "x" #buffer.layout<[3, 20000], [20000, 1], f32>
  buffer.computed "buf0" #buffer.layout<[3], [1], f32> ranges [3] reduce [20000] origins ["var"] {
    %0 = buffer.load @x[r0_0 + 20000*i0] : f32
    %1, %2, %3 = buffer.reduce welford %0 : f32 -> (f32, f32, f32)
    %4 = arith.constant 1.0 : f32
    %5 = arith.subf %3, %4 : f32
    %6 = arith.divf %2, %5 : f32
    buffer.store @buf0[i0], %6 : f32
  }
  buffer.output @buf0
}

// -----

// A long column sum of f16 (x.sum(0) of [2048, 32]): the body widens to f32 before the
// reduce and narrows the result; the accumulator is f32. The hint is OUTER: Inductor's
// outer_config_opt gives XBLOCK 2 (few columns), R0_BLOCK 64. Both divide their sizes (32
// columns, 2048 rows): no load, accumulation or store is masked.
// CHECK-LABEL: triton.kernel @triton_red_fused_sum_0 reduction(%in_ptr0: !triton.ptr<f16>, %out_ptr0: !triton.ptr<f16>) xnumel 32 r0_numel 2048 origins ["sum"] configs [#triton.config<XBLOCK = 2, R0_BLOCK = 64, num_warps = 2, num_stages = 1>] {
// CHECK:           %[[X:.*]] = triton.load %in_ptr0[x0 + 32*r0_0] evict_first : f16
// CHECK-NEXT:      %[[W:.*]] = arith.extf %[[X]] : f16 to f32
// CHECK-NEXT:      %{{.*}} = triton.accumulate sum %[[W]] into %{{.*}} : f32 -> f32
// CHECK:         %[[S:.*]] = triton.reduce sum %{{.*}} : f32 -> f32
// CHECK-NEXT:    %[[H:.*]] = arith.truncf %[[S]] : f32 to f16
// CHECK-NEXT:    triton.store %out_ptr0[x0], %[[H]] : f16
buffer.graph @long_columns_f16 {
  buffer.input "x" #buffer.layout<[2048, 32], [32, 1], f16>
  buffer.computed "buf0" #buffer.layout<[32], [1], f16> ranges [32] reduce [2048] origins ["sum"] {
    %0 = buffer.load @x[i0 + 32*r0_0] : f16
    %1 = arith.extf %0 : f16 to f32
    %2 = buffer.reduce sum %1 : f32 -> f32
    %3 = arith.truncf %2 : f32 to f16
    buffer.store @buf0[i0], %3 : f16
  }
  buffer.output @buf0
}

// -----

// A piece of batch-norm statistics after --split-reductions (var_mean over 8 rows of 56x56 of
// one channel, 25,088 = 2^9 * 49 elements): 2048 does not divide it, 512 does, so the loop
// takes R0_BLOCK 512 (dividing_r0_block) and every slice is full: no r0_mask, no masked
// welford update. XBLOCK 1 divides the 512 pieces: no xmask either. 512 programs of 4 warps
// would hold a quarter of the H100's warp slots: fill_sms doubles them to 8.
// CHECK-LABEL: triton.kernel @triton_red_fused_var_mean_0 reduction
// CHECK-SAME:    xnumel 512 r0_numel 25088 origins ["var_mean"] configs [#triton.config<XBLOCK = 1, R0_BLOCK = 512, num_warps = 8, num_stages = 1>]
// CHECK:           %[[X:.*]] = triton.load %in_ptr0[{{.*}}] evict_first : f32
// CHECK-NEXT:      %{{.*}}, %{{.*}}, %{{.*}} = triton.accumulate welford %[[X]] into %{{.*}}, %{{.*}}, %{{.*}} : f32 -> f32, f32, f32
// CHECK:         triton.store %out_ptr0[{{.*}}], %{{.*}} : f32
buffer.graph @channel_piece {
  buffer.input "x" #buffer.layout<[64, 64, 56, 56], [200704, 3136, 56, 1], f32>
  buffer.computed "buf0" #buffer.layout<[64, 8], [1, 64], f32> ranges [64, 8] reduce [25088] origins ["var_mean"] {
    %0 = buffer.load @x[3136*i0 + 200704*FloorDiv(r0_0, 3136) + 1605632*i1 + ModularIndexing(r0_0, 1, 3136)] : f32
    %1, %2, %3 = buffer.reduce welford %0 : f32 -> (f32, f32, f32)
    buffer.store @buf0[i0 + 64*i1], %1 : f32
  } attributes {hint = "inner"}
  buffer.output @buf0
}

// -----

// The same loop over 3 x 20,000 with the DEFAULT hint: five configs, whose XBLOCKs 2 and 4
// do not divide 3 rows: xmask stays wherever an index uses x.
// CHECK-LABEL: triton.kernel @triton_red_fused_sum_0 reduction
// CHECK-SAME:    xnumel 3 r0_numel 20000
// CHECK:           triton.load %in_ptr0[r0_0 + 20000*x0] mask r0_mask, xmask other 0.000000e+00
// CHECK:         triton.store %out_ptr0[x0], %{{.*}} mask xmask : f32
buffer.graph @default_hint {
  buffer.input "x" #buffer.layout<[3, 20000], [20000, 1], f32>
  buffer.computed "buf0" #buffer.layout<[3], [1], f32> ranges [3] reduce [20000] origins ["sum"] {
    %0 = buffer.load @x[r0_0 + 20000*i0] : f32
    %1 = buffer.reduce sum %0 : f32 -> f32
    buffer.store @buf0[i0], %1 : f32
  } attributes {hint = "default"}
  buffer.output @buf0
}

// -----

// RMSNorm over rows of 4096 fused into one looped kernel: the first loop sums x^2, the second
// reads x again to scale it. The first loop's read keeps x's lines in L2 (evict_last) for the
// second, whose read is the last (evict_first), as Inductor's two loops do.
// CHECK-LABEL: triton.kernel @triton_red_fused_mean_mul_0 reduction
// CHECK:         triton.rloop
// CHECK-NEXT:      triton.index r0_0 = r0_index
// CHECK-NEXT:      %{{.*}} = triton.load %in_ptr0[r0_0 + 4096*x0] evict_last : f32
// CHECK:         triton.rloop
// CHECK-NEXT:      triton.index r0_0 = r0_index
// CHECK-NEXT:      %{{.*}} = triton.load %in_ptr0[r0_0 + 4096*x0] evict_first : f32
// CHECK:           triton.store %out_ptr0[r0_0 + 4096*x0]
buffer.graph @rms_norm_two_loops {
  buffer.input "x" #buffer.layout<[64, 4096], [4096, 1], f32>
  buffer.fused {
    buffer.computed "buf0" #buffer.layout<[64, 1], [1, 1], f32> ranges [64] reduce [4096] origins ["mean"] {
      %0 = buffer.load @x[r0_0 + 4096*i0] : f32
      %1 = arith.mulf %0, %0 : f32
      %2 = buffer.reduce sum %1 : f32 -> f32
      buffer.store @buf0[i0], %2 : f32
    }
    buffer.computed "buf1" #buffer.layout<[64, 4096], [4096, 1], f32> ranges [64, 4096] origins ["mul"] {
      %3 = buffer.load @x[i1 + 4096*i0] : f32
      %4 = buffer.load @buf0[i0] : f32
      %5 = math.rsqrt %4 : f32
      %6 = arith.mulf %3, %5 : f32
      buffer.store @buf1[i1 + 4096*i0], %6 : f32
    }
  }
  buffer.output @buf1
}

// -----

// A reduction that reads no row it reduces: the row sum of nll_loss's pointwise gradient,
// select(r0 == target[n], -g, 0), reads each row's target and a scalar. Its accesses are all
// contiguous (a constant, or the loop's flat index), so its hint is INNER, as Inductor's
// SIMDKernelFeatures makes it: the contiguous config, not DEFAULT's five to tune (64 rows of
// 30,000 are few: the wider slices of LONG_ROW_TUNING follow it).
// CHECK-LABEL: triton.kernel @triton_red_fused_nll_loss_backward_sum_0 reduction
// CHECK-SAME:    configs [#triton.config<XBLOCK = 1, R0_BLOCK = 2048, num_warps = 16, num_stages = 1>, #triton.config<XBLOCK = 1, R0_BLOCK = 4096, num_warps = 16, num_stages = 1>, #triton.config<XBLOCK = 1, R0_BLOCK = 8192, num_warps = 32, num_stages = 1>] {
buffer.graph @gradient_row_sum {
  buffer.input "target" #buffer.layout<[64], [1], i64>
  buffer.input "g" #buffer.layout<[], [], f32>
  buffer.computed "buf0" #buffer.layout<[64, 1], [1, 1], f32> ranges [64] reduce [30000] origins ["nll_loss_backward", "sum"] {
    %0 = loops.index r0_0 : i64
    %1 = buffer.load @target[i0] : i64
    %2 = arith.cmpi eq, %0, %1 : i64
    %3 = buffer.load @g[0] : f32
    %4 = arith.negf %3 : f32
    %5 = arith.constant 0.000000e+00 : f32
    %6 = arith.select %2, %4, %5 : f32
    %7 = buffer.reduce sum %6 : f32 -> f32
    buffer.store @buf0[i0], %7 : f32
  }
  buffer.output @buf0
}

// -----

// The same sum fused with a pointwise over the whole [64, 30000] that reads x transposed
// (stride 64 along its last dim): the rule does not apply (as Inductor's
// has_non_contiguous_pw_in_reduction_kernel), and the hint stays DEFAULT, whose configs are tuned.
// CHECK-LABEL: triton.kernel @triton_red_fused_mul_nll_loss_backward_sum_0 reduction
// CHECK-SAME:    configs [#triton.config<XBLOCK = 1, R0_BLOCK = 2048, num_warps = 16, num_stages = 1>, #triton.config<
buffer.graph @gradient_row_sum_and_transposed_read {
  buffer.input "target" #buffer.layout<[64], [1], i64>
  buffer.input "g" #buffer.layout<[], [], f32>
  buffer.input "x" #buffer.layout<[30000, 64], [64, 1], f32>
  buffer.fused {
    buffer.computed "buf0" #buffer.layout<[64, 1], [1, 1], f32> ranges [64] reduce [30000] origins ["nll_loss_backward", "sum"] {
      %0 = loops.index r0_0 : i64
      %1 = buffer.load @target[i0] : i64
      %2 = arith.cmpi eq, %0, %1 : i64
      %3 = buffer.load @g[0] : f32
      %4 = arith.negf %3 : f32
      %5 = arith.constant 0.000000e+00 : f32
      %6 = arith.select %2, %4, %5 : f32
      %7 = buffer.reduce sum %6 : f32 -> f32
      buffer.store @buf0[i0], %7 : f32
    }
    buffer.computed "buf1" #buffer.layout<[64, 30000], [30000, 1], f32> ranges [64, 30000] origins ["mul"] {
      %0 = buffer.load @x[i0 + 64*i1] : f32
      %1 = buffer.load @buf0[i0] : f32
      %2 = arith.mulf %0, %1 : f32
      buffer.store @buf1[i1 + 30000*i0], %2 : f32
    }
  }
  buffer.output @buf1
}
