// RUN: mlc-opt %s --convert-to-triton --split-input-file | filecheck %s
// RUN: mlc-opt %s --convert-to-triton --split-input-file | mlc-opt --split-input-file | filecheck %s

// Persistent reductions (triton_per_...): r0_numel is static and at most 1024, so one
// R0_BLOCK = next_pow2(r0_numel) slice holds each row and triton.reduce reduces it.

// Seed 001: sum(x + y, 1) over [3, 9]. x tiles are [XBLOCK, 1] (x0 = xindex), r tiles
// [1, R0_BLOCK] (r0_0 = r0_index); the loads read `other` = 0.0 (the identity of sum) where
// r0_mask fails and the reduce ignores those lanes. The one config's XBLOCK 1 divides the 3
// rows, so xmask is constant and dropped (a store never needs r0_mask).
// CHECK-LABEL: triton.kernel @triton_per_fused_add_sum_0 persistent_reduction(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 3 r0_numel 9 origins ["add", "sum"] configs [#triton.config<XBLOCK = 1, num_warps = 2, num_stages = 1>] {
// CHECK-NEXT:    triton.index x0 = xindex
// CHECK-NEXT:    triton.index r0_0 = r0_index
// CHECK-NEXT:    %[[X:.*]] = triton.load %in_ptr0[r0_0 + 9*x0] mask r0_mask other 0.000000e+00 evict_first : f32
// CHECK-NEXT:    %[[Y:.*]] = triton.load %in_ptr1[r0_0 + 9*x0] mask r0_mask other 0.000000e+00 evict_first : f32
// CHECK-NEXT:    %[[ADD:.*]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK-NEXT:    %[[SUM:.*]] = triton.reduce sum %[[ADD]] mask r0_mask : f32 -> f32
// CHECK-NEXT:    triton.store %out_ptr0[x0], %[[SUM]] : f32
// CHECK-NEXT:  }
// CHECK-NEXT:  triton.wrapper @call {
// CHECK-NEXT:    triton.input "arg0_1" #buffer.layout<[3, 9], [9, 1], f32>
// CHECK-NEXT:    triton.input "arg1_1" #buffer.layout<[3, 9], [9, 1], f32>
// CHECK-NEXT:    triton.alloc "buf0" #buffer.layout<[3], [1], f32>
// CHECK-NEXT:    triton.launch @triton_per_fused_add_sum_0(@arg0_1, @arg1_1, @buf0) xnumel 3 r0_numel 9
// CHECK-NEXT:    triton.free @arg0_1, @arg1_1
// CHECK-NEXT:    triton.return @buf0
// CHECK-NEXT:  }
buffer.graph @seed_001_sum {
  buffer.input "arg0_1" #buffer.layout<[3, 9], [9, 1], f32>
  buffer.input "arg1_1" #buffer.layout<[3, 9], [9, 1], f32>
  buffer.computed "buf0" #buffer.layout<[3], [1], f32> ranges [3] reduce [9] origins ["add", "sum"] {
    %0 = buffer.load @arg0_1[r0_0 + 9*i0] : f32
    %1 = buffer.load @arg1_1[r0_0 + 9*i0] : f32
    %2 = arith.addf %0, %1 : f32
    %3 = buffer.reduce sum %2 : f32 -> f32
    buffer.store @buf0[i0], %3 : f32
  }
  buffer.output @buf0
}

// -----

// Seed 001's fusion: the sigmoid of the sum runs in the same kernel, on the reduced column;
// buf0 never leaves registers (no store, no allocation).
// CHECK-LABEL: triton.kernel @triton_per_fused_add_sigmoid_sum_0 persistent_reduction(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 3 r0_numel 9
// CHECK:         %[[SUM:.*]] = triton.reduce sum %{{.*}} mask r0_mask : f32 -> f32
// CHECK-NEXT:    %[[NEG:.*]] = arith.negf %[[SUM]] : f32
// CHECK:         triton.store %out_ptr0[x0], %{{.*}} : f32
// CHECK-NEXT:  }
// CHECK:         triton.alloc "buf1"
// CHECK-NEXT:    triton.launch @triton_per_fused_add_sigmoid_sum_0(@arg0_1, @arg1_1, @buf1) xnumel 3 r0_numel 9
buffer.graph @seed_001_sum_sigmoid {
  buffer.input "arg0_1" #buffer.layout<[3, 9], [9, 1], f32>
  buffer.input "arg1_1" #buffer.layout<[3, 9], [9, 1], f32>
  buffer.fused {
    buffer.computed "buf0" #buffer.layout<[3], [1], f32> ranges [3] reduce [9] origins ["add", "sum"] {
      %0 = buffer.load @arg0_1[r0_0 + 9*i0] : f32
      %1 = buffer.load @arg1_1[r0_0 + 9*i0] : f32
      %2 = arith.addf %0, %1 : f32
      %3 = buffer.reduce sum %2 : f32 -> f32
      buffer.store @buf0[i0], %3 : f32
    }
    buffer.computed "buf1" #buffer.layout<[3], [1], f32> ranges [3] origins ["sigmoid"] {
      %0 = buffer.load @buf0[i0] : f32
      %1 = arith.negf %0 : f32
      %2 = math.exp %1 : f32
      %3 = arith.constant 1.0 : f32
      %4 = arith.addf %2, %3 : f32
      %5 = arith.divf %3, %4 : f32
      buffer.store @buf1[i0], %5 : f32
    }
  }
  buffer.output @buf1
}

// -----

// A column reduction, amax(x, 0) of a [60, 64] tensor: the reduction index strides by 64
// (loads at x0 + 64*r0_0), so the reduction hint is OUTER and only the largest config stays
// (XBLOCK 32: 32 x 64 within the 4096-element persistent tile). Masked lanes read -inf.
// CHECK-LABEL: triton.kernel @triton_per_fused_amax_0 persistent_reduction(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 64 r0_numel 60 origins ["amax"] configs [#triton.config<XBLOCK = 32, num_warps = 8, num_stages = 1>] {
// CHECK-NEXT:    triton.index x0 = xindex
// CHECK-NEXT:    triton.index r0_0 = r0_index
// CHECK-NEXT:    %[[X:.*]] = triton.load %in_ptr0[x0 + 64*r0_0] mask r0_mask other -inf evict_first : f32
// CHECK-NEXT:    %[[MAX:.*]] = triton.reduce max %[[X]] mask r0_mask : f32 -> f32
// CHECK-NEXT:    triton.store %out_ptr0[x0], %[[MAX]] : f32
// CHECK-NEXT:  }
buffer.graph @column {
  buffer.input "x" #buffer.layout<[60, 64], [64, 1], f32>
  buffer.computed "buf0" #buffer.layout<[64], [1], f32> ranges [64] reduce [60] origins ["amax"] {
    %0 = buffer.load @x[i0 + 64*r0_0] : f32
    %1 = buffer.reduce max %0 : f32 -> f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.output @buf0
}

// -----

// The same over 100 rows: an OUTER reduction past 64 is looped, as Inductor's
// (`should_use_persistent_reduction`: 1024 for INNER hints, 64 for the others), with the OUTER
// config (`outer_config_opt`: few columns, XBLOCK 2, for an x this small).
// CHECK-LABEL: triton.kernel @triton_red_fused_amax_0 reduction({{.*}}) xnumel 64 r0_numel 100 origins ["amax"] configs [#triton.config<XBLOCK = 2, R0_BLOCK = 64, num_warps = 2, num_stages = 1>] {
// CHECK:         triton.rloop
// CHECK:           triton.accumulate max
buffer.graph @column_looped {
  buffer.input "x" #buffer.layout<[100, 64], [64, 1], f32>
  buffer.computed "buf0" #buffer.layout<[64], [1], f32> ranges [64] reduce [100] origins ["amax"] {
    %0 = buffer.load @x[i0 + 64*r0_0] : f32
    %1 = buffer.reduce max %0 : f32 -> f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.output @buf0
}

// -----

// Two reduced dimensions, x.sum((0, 2)) and the argmin over them of a [3, 4, 5] tensor: r0_index
// runs over the 15 flattened positions (innermost fastest), split into r0_0 (size 5) and r0_1
// (size 3); argmin gives the flattened position, masked lanes reading +inf.
// CHECK-LABEL: triton.kernel @triton_per_fused_sum_0 persistent_reduction
// CHECK-SAME:    xnumel 4 r0_numel 15
// CHECK-NEXT:    triton.index x0 = xindex
// CHECK-NEXT:    triton.index r0_0 = ModularIndexing(r0_index, 1, 5)
// CHECK-NEXT:    triton.index r0_1 = FloorDiv(r0_index, 5)
// CHECK-NEXT:    %[[X:.*]] = triton.load %in_ptr0[r0_0 + 5*x0 + 20*r0_1] mask r0_mask other 0.000000e+00 evict_first : f32
// CHECK-NEXT:    %{{.*}} = triton.reduce sum %[[X]] mask r0_mask : f32 -> f32
// CHECK-LABEL: triton.kernel @triton_per_fused_argmin_1 persistent_reduction
// CHECK:         %[[Y:.*]] = triton.load %in_ptr0[r0_0 + 5*x0 + 20*r0_1] mask r0_mask other inf evict_first : f32
// CHECK-NEXT:    %[[I:.*]] = triton.reduce argmin %[[Y]] mask r0_mask : f32 -> i64
// CHECK-NEXT:    triton.store %out_ptr0[x0], %[[I]] : i64
buffer.graph @multi_dim {
  buffer.input "x" #buffer.layout<[3, 4, 5], [20, 5, 1], f32>
  buffer.computed "buf0" #buffer.layout<[4], [1], f32> ranges [4] reduce [3, 5] origins ["sum"] {
    %0 = buffer.load @x[r0_1 + 5*i0 + 20*r0_0] : f32
    %1 = buffer.reduce sum %0 : f32 -> f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.computed "buf1" #buffer.layout<[4], [1], i64> ranges [4] reduce [3, 5] origins ["argmin"] {
    %0 = buffer.load @x[r0_1 + 5*i0 + 20*r0_0] : f32
    %1 = buffer.reduce argmin %0 : f32 -> i64
    buffer.store @buf1[i0], %1 : i64
  }
  buffer.output @buf0, @buf1
}

// -----

// var(x, 1) with correction 1, persistent: Inductor's two-pass welford fallback (sum -> mean,
// then the sum of squared deviations; the weight is r0_numel), then the epilogue
// m2 / (n - 1) on the reduced columns. r0_numel 100 pads to R0_BLOCK 128.
// CHECK-LABEL: triton.kernel @triton_per_fused_var_mean_0 persistent_reduction(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 8 r0_numel 100 origins ["var_mean"] configs [#triton.config<XBLOCK = 1, num_warps = 2, num_stages = 1>, #triton.config<XBLOCK = 8, num_warps = 2, num_stages = 1>] {
// CHECK:         %[[X:.*]] = triton.load %in_ptr0[r0_0 + 100*x0] mask r0_mask other 0.000000e+00 evict_first : f32
// CHECK-NEXT:    %[[SUM:.*]] = triton.reduce sum %[[X]] mask r0_mask : f32 -> f32
// CHECK-NEXT:    %[[N:.*]] = arith.constant 1.000000e+02 : f32
// CHECK-NEXT:    %[[MEAN:.*]] = arith.divf %[[SUM]], %[[N]] : f32
// CHECK-NEXT:    %[[D:.*]] = arith.subf %[[X]], %[[MEAN]] : f32
// CHECK-NEXT:    %[[D2:.*]] = arith.mulf %[[D]], %[[D]] : f32
// CHECK-NEXT:    %[[M2:.*]] = triton.reduce sum %[[D2]] mask r0_mask : f32 -> f32
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    %[[DOF:.*]] = arith.subf %[[N]], %[[ONE]] : f32
// CHECK-NEXT:    %[[VAR:.*]] = arith.divf %[[M2]], %[[DOF]] : f32
// CHECK-NEXT:    triton.store %out_ptr0[x0], %[[VAR]] : f32
buffer.graph @var {
  buffer.input "x" #buffer.layout<[8, 100], [100, 1], f32>
  buffer.computed "buf0" #buffer.layout<[8], [1], f32> ranges [8] reduce [100] origins ["var_mean"] {
    %0 = buffer.load @x[r0_0 + 100*i0] : f32
    %1, %2, %3 = buffer.reduce welford %0 : f32 -> (f32, f32, f32)
    %4 = arith.constant 1.0 : f32
    %5 = arith.subf %3, %4 : f32
    %6 = arith.divf %2, %5 : f32
    buffer.store @buf0[i0], %6 : f32
  }
  buffer.output @buf0
}

// -----

// r0_numel 64 is a power of two >= 32: R0_BLOCK covers it exactly, so r0_mask is constant
// and dropped; 12 rows still need xmask (the configs' XBLOCK 8 does not divide them).
// CHECK-LABEL: triton.kernel @triton_per_fused_prod_0 persistent_reduction
// CHECK:         %[[X:.*]] = triton.load %in_ptr0[r0_0 + 64*x0] mask xmask other 1.000000e+00 evict_first : f32
// CHECK-NEXT:    %{{.*}} = triton.reduce prod %[[X]] mask xmask : f32 -> f32
buffer.graph @constant_r_mask {
  buffer.input "x" #buffer.layout<[12, 64], [64, 1], f32>
  buffer.computed "buf0" #buffer.layout<[12], [1], f32> ranges [12] reduce [64] origins ["prod"] {
    %0 = buffer.load @x[r0_0 + 64*i0] : f32
    %1 = buffer.reduce prod %0 : f32 -> f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.output @buf0
}
