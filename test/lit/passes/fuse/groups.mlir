// RUN: mlc-opt %s --split-input-file --fuse="explain=true" | filecheck %s
// RUN: mlc-opt %s --split-input-file --fuse --convert-to-triton | mlc-opt --split-input-file | filecheck %s --check-prefix=KERNEL

// What --fuse groups, and the one kernel --convert-to-triton makes of each group.

// A vertical chain: three pointwise nodes, each reading the previous one where it writes it.
// CHECK-LABEL: buffer.graph @chain
// CHECK:       buffer.fused {
// CHECK-NEXT:    buffer.computed "buf0"
// CHECK:         buffer.computed "buf1"
// CHECK:         buffer.computed "buf2"
// CHECK:       } attributes {fusion = ["refused buf0 + buf2: [cycle] buf1 depends on one of buf0, buf2 and feeds the other: fusing would need it inside the kernel", "candidate buf0 + buf1: score (1, 256, -1), saves 1.50 us", "fused buf0 + buf1", "candidate buf0+buf1 + buf2: score (1, 256, -1), saves 1.50 us", "fused buf0+buf1 + buf2", "refusals: cycle: 1"]}
// KERNEL-LABEL: triton.kernel @triton_poi_fused_exp_mul_neg_0 pointwise(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 64
// KERNEL:         triton.store %out_ptr0[xindex]
// KERNEL-NEXT:  }
// KERNEL:         triton.launch @triton_poi_fused_exp_mul_neg_0(@x, @buf2) xnumel 64
buffer.graph @chain {
  buffer.input "x" #buffer.layout<[64], [1], f32>
  buffer.computed "buf0" #buffer.layout<[64], [1], f32> ranges [64] origins ["neg"] {
    %0 = buffer.load @x[i0] : f32
    %1 = arith.negf %0 : f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.computed "buf1" #buffer.layout<[64], [1], f32> ranges [64] origins ["exp"] {
    %0 = buffer.load @buf0[i0] : f32
    %1 = math.exp %0 : f32
    buffer.store @buf1[i0], %1 : f32
  }
  buffer.computed "buf2" #buffer.layout<[64], [1], f32> ranges [64] origins ["mul"] {
    %0 = buffer.load @buf1[i0] : f32
    %1 = buffer.load @x[i0] : f32
    %2 = arith.mulf %0, %1 : f32
    buffer.store @buf2[i0], %2 : f32
  }
  buffer.output @buf2
}

// -----

// A horizontal pair: amax and amin of one input share its read, and nothing else.
// CHECK-LABEL: buffer.graph @amax_amin
// CHECK:       buffer.fused {
// CHECK:       } attributes {fusion = ["candidate buf0 + buf1: score (1, 3200, -1), saves 1.50 us", "fused buf0 + buf1"]}
// KERNEL-LABEL: triton.kernel @triton_per_fused_amax_amin_0 persistent_reduction(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>, %out_ptr1: !triton.ptr<f32>) xnumel 8 r0_numel 100
// KERNEL:         triton.reduce max
// KERNEL:         triton.reduce min
// KERNEL:         triton.launch @triton_per_fused_amax_amin_0(@x, @buf0, @buf1) xnumel 8 r0_numel 100
buffer.graph @amax_amin {
  buffer.input "x" #buffer.layout<[8, 100], [100, 1], f32>
  buffer.computed "buf0" #buffer.layout<[8], [1], f32> ranges [8] reduce [100] origins ["amax"] {
    %0 = buffer.load @x[r0_0 + 100*i0] : f32
    %1 = buffer.reduce max %0 : f32 -> f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.computed "buf1" #buffer.layout<[8], [1], f32> ranges [8] reduce [100] origins ["amin"] {
    %0 = buffer.load @x[r0_0 + 100*i0] : f32
    %1 = buffer.reduce min %0 : f32 -> f32
    buffer.store @buf1[i0], %1 : f32
  }
  buffer.output @buf0, @buf1
}

// -----

// Softmax over rows of 2000 (looped): max, then the sum of exp(x - max), then the quotient
// over every element. One group; --convert-to-triton runs it as three loops in one kernel.
// CHECK-LABEL: buffer.graph @softmax
// CHECK:       buffer.fused {
// CHECK:       } attributes {fusion = [{{.*}}"fused buf0 + buf1", "candidate buf0+buf1 + buf2: score (0, 32032, -1), saves 1.51 us", "fused buf0+buf1 + buf2"
// KERNEL-LABEL: triton.kernel @triton_red_fused_amax_div_sum_0 reduction(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 4 r0_numel 2000
// KERNEL:         triton.rloop iter_args(
// KERNEL:           triton.load %in_ptr0[r0_0 + 2000*x0]
// KERNEL:           triton.accumulate max
// KERNEL:         %[[MAX:.*]] = triton.reduce max
// KERNEL:         triton.rloop iter_args(
// KERNEL:           triton.load %in_ptr0[r0_0 + 2000*x0]
// KERNEL:           arith.subf %{{.*}}, %[[MAX]]
// KERNEL:           triton.accumulate sum
// KERNEL:         %[[SUM:.*]] = triton.reduce sum
// KERNEL:         triton.rloop {
// KERNEL:           triton.load %in_ptr0[r0_0 + 2000*x0]
// KERNEL:           arith.divf %{{.*}}, %[[SUM]]
// KERNEL:           triton.store %out_ptr0[r0_0 + 2000*x0]
// KERNEL:         triton.launch @triton_red_fused_amax_div_sum_0(@x, @buf2) xnumel 4 r0_numel 2000
buffer.graph @softmax {
  buffer.input "x" #buffer.layout<[4, 2000], [2000, 1], f32>
  buffer.computed "buf0" #buffer.layout<[4], [1], f32> ranges [4] reduce [2000] origins ["amax"] {
    %0 = buffer.load @x[r0_0 + 2000*i0] : f32
    %1 = buffer.reduce max %0 : f32 -> f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.computed "buf1" #buffer.layout<[4], [1], f32> ranges [4] reduce [2000] origins ["sum"] {
    %0 = buffer.load @x[r0_0 + 2000*i0] : f32
    %1 = buffer.load @buf0[i0] : f32
    %2 = arith.subf %0, %1 : f32
    %3 = math.exp %2 : f32
    %4 = buffer.reduce sum %3 : f32 -> f32
    buffer.store @buf1[i0], %4 : f32
  }
  buffer.computed "buf2" #buffer.layout<[4, 2000], [2000, 1], f32> ranges [4, 2000] origins ["div"] {
    %0 = buffer.load @x[i1 + 2000*i0] : f32
    %1 = buffer.load @buf0[i0] : f32
    %2 = arith.subf %0, %1 : f32
    %3 = math.exp %2 : f32
    %4 = buffer.load @buf1[i0] : f32
    %5 = arith.divf %3, %4 : f32
    buffer.store @buf2[i1 + 2000*i0], %5 : f32
  }
  buffer.output @buf2
}

// -----

// A fusion that needs a loop reorder: the epilogue's loops were merged into one [800] loop,
// which straddles the reduction's kept/reduced boundary; --fuse cuts it into [8, 100].
// CHECK-LABEL: buffer.graph @cut
// CHECK:       buffer.computed "buf1" #buffer.layout<[8, 100], [100, 1], f32> ranges [8, 100] origins ["sub"]
// CHECK-NEXT:    buffer.load @x[i1 + 100*i0]
// CHECK-NEXT:    buffer.load @buf0[i0]
// CHECK:       attributes {fusion = ["candidate buf0 + buf1: score (0, 3200, -1), saves 1.50 us", "fused buf0 + buf1", "reordered buf1: loops [800] -> [8, 100] to run as 8 x 100 with its group"]}
// KERNEL-LABEL: triton.kernel @triton_per_fused_mean_sub_0 persistent_reduction
// KERNEL:         triton.store %out_ptr0[r0_0 + 100*x0]
// KERNEL:         triton.launch @triton_per_fused_mean_sub_0(@x, @buf1) xnumel 8 r0_numel 100
buffer.graph @cut {
  buffer.input "x" #buffer.layout<[8, 100], [100, 1], f32>
  buffer.computed "buf0" #buffer.layout<[8], [1], f32> ranges [8] reduce [100] origins ["mean"] {
    %0 = buffer.load @x[r0_0 + 100*i0] : f32
    %1 = buffer.reduce sum %0 : f32 -> f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.computed "buf1" #buffer.layout<[8, 100], [100, 1], f32> ranges [800] origins ["sub"] {
    %0 = buffer.load @x[i0] : f32
    %1 = buffer.load @buf0[FloorDiv(i0, 100)] : f32
    %2 = arith.subf %0, %1 : f32
    buffer.store @buf1[i0], %2 : f32
  }
  buffer.output @buf1
}

// -----

// A pointwise feeding a column sum (relu's backward and its bias gradient): the pointwise's
// loops ([6400], row-major) do not split into the reduction's 100 columns x 64 rows, so --fuse
// re-runs it over the reduction's loops ([100, 64]: column outer) where Inductor would refuse
// or need its loop-ordering-after-fusion round; one kernel computes both.
// CHECK-LABEL: buffer.graph @column_sum_prologue
// CHECK:       buffer.computed "buf0" #buffer.layout<[64, 100], [100, 1], f32> ranges [100, 64] origins ["threshold_backward"]
// CHECK-NEXT:    buffer.load @y[i0 + 100*i1]
// CHECK:         buffer.store @buf0[i0 + 100*i1]
// CHECK:       } attributes {fusion = ["candidate buf0 + buf1: score (0, 25600, -1), saves 1.51 us", "fused buf0 + buf1", "reordered buf0: loops [6400] -> [100, 64] to run in the order its reader reads it"]}
// KERNEL-LABEL: triton.kernel @triton_per_fused_sum_threshold_backward_0 persistent_reduction
// KERNEL:         triton.launch @triton_per_fused_sum_threshold_backward_0(@y, @g, @buf0, @buf1) xnumel 100 r0_numel 64
buffer.graph @column_sum_prologue {
  buffer.input "g" #buffer.layout<[64, 100], [100, 1], f32>
  buffer.input "y" #buffer.layout<[64, 100], [100, 1], f32>
  buffer.computed "buf0" #buffer.layout<[64, 100], [100, 1], f32> ranges [6400] origins ["threshold_backward"] {
    %0 = buffer.load @y[i0] : f32
    %1 = buffer.load @g[i0] : f32
    %2 = arith.constant 0.0 : f32
    %3 = arith.cmpf ole, %0, %2 : f32
    %4 = arith.select %3, %2, %1 : f32
    buffer.store @buf0[i0], %4 : f32
  }
  buffer.computed "buf1" #buffer.layout<[100], [1], f32> ranges [100] reduce [64] origins ["sum"] {
    %0 = buffer.load @buf0[i0 + 100*r0_0] : f32
    %1 = buffer.reduce sum %0 : f32 -> f32
    buffer.store @buf1[i0], %1 : f32
  }
  buffer.output @buf0, @buf1
}

// -----

// A pointwise read transposed by a copy (Llama's rotary backward, stored [B, H, S, D], then
// copied to [B, S, H, D] for the projection's matmul): --fuse re-runs the producer over the
// copy's loops (Inductor's loop reordering after fusion), so one kernel reads the attention
// gradient in its own [B, S, H, D] order and writes only the copy; buf0 is never stored.
// CHECK-LABEL: buffer.graph @transposed_copy
// CHECK:       buffer.fused {
// CHECK-NEXT:    buffer.computed "buf0" #buffer.layout<[2, 4, 32, 64], [8192, 2048, 64, 1], f32> ranges [2, 32, 4, 64] origins ["mul"]
// CHECK-NEXT:      buffer.load @g[i3 + 64*i2 + 256*i1 + 8192*i0]
// CHECK-NEXT:      buffer.load @cos[i3 + 64*i1]
// CHECK:           buffer.store @buf0[i3 + 64*i1 + 2048*i2 + 8192*i0]
// CHECK:         buffer.computed "buf1"
// CHECK:       } attributes {fusion = ["candidate buf0 + buf1: score (1, 65536, -1), saves 1.54 us", "fused buf0 + buf1", "reordered buf0: loops [2, 4, 32, 64] -> [2, 32, 4, 64] to run in the order its reader reads it"]}
// KERNEL-LABEL: triton.kernel @triton_poi_fused_clone_mul_0
// KERNEL:         triton.load %in_ptr0[xindex]
// KERNEL:         triton.store %out_ptr0[xindex]
// KERNEL-NOT:     triton.store
// KERNEL:       triton.wrapper @call
// KERNEL-NOT:     "buf0"
// KERNEL:         triton.alloc "buf1"
// KERNEL-NEXT:    triton.launch @triton_poi_fused_clone_mul_0(@g, @cos, @buf1) xnumel 16384
buffer.graph @transposed_copy {
  buffer.input "g" #buffer.layout<[2, 32, 4, 64], [8192, 256, 64, 1], f32>
  buffer.input "cos" #buffer.layout<[32, 64], [64, 1], f32>
  buffer.computed "buf0" #buffer.layout<[2, 4, 32, 64], [8192, 2048, 64, 1], f32> ranges [2, 4, 32, 64] origins ["mul"] {
    %0 = buffer.load @g[i3 + 64*i1 + 256*i2 + 8192*i0] : f32
    %1 = buffer.load @cos[i3 + 64*i2] : f32
    %2 = arith.mulf %0, %1 : f32
    buffer.store @buf0[i3 + 64*i2 + 2048*i1 + 8192*i0], %2 : f32
  }
  buffer.computed "buf1" #buffer.layout<[2, 32, 4, 64], [8192, 256, 64, 1], f32> ranges [2, 32, 4, 64] origins ["clone"] {
    %0 = buffer.load @buf0[i3 + 64*i1 + 2048*i2 + 8192*i0] : f32
    buffer.store @buf1[i3 + 64*i2 + 256*i1 + 8192*i0], %0 : f32
  }
  buffer.output @buf1
}

// -----

// A pair that re-runs a member comes after every pair that does not: buf1 (a log_softmax's
// gradient, the epilogue of its row sum buf0) joins buf0 first; its transposed copy buf2 (for
// the weight gradient's matmul) then cannot pull it into column order, so the row sum and its
// epilogue stay one kernel reading rows (re-run first, buf1 would run transposed, apart from
// the reduction it needs).
// CHECK-LABEL: buffer.graph @reduction_before_reorder
// CHECK:       buffer.fused {
// CHECK-NEXT:    buffer.computed "buf0"
// CHECK:         buffer.computed "buf1" #buffer.layout<[64, 1000], [1000, 1], f32> ranges [64, 1000]
// CHECK:           buffer.store @buf1[i1 + 1000*i0]
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-NEXT:  buffer.computed "buf2"
// CHECK:       } attributes {fusion = ["candidate buf0 + buf1: score (0, 256256, -1), saves 1.58 us", "fused buf0 + buf1", "candidate buf0+buf1 + buf2: score (1, 256000, -1), saves 1.58 us", "refused buf0+buf1 + buf2: [different loop order] buf2's loops [1000, 64] do not split into the kernel's 64 x 1000", "refusals: different loop order: 1"]}
buffer.graph @reduction_before_reorder {
  buffer.input "g" #buffer.layout<[64, 1000], [1000, 1], f32>
  buffer.input "p" #buffer.layout<[64, 1000], [1000, 1], f32>
  buffer.computed "buf0" #buffer.layout<[64], [1], f32> ranges [64] reduce [1000] origins ["sum"] {
    %0 = buffer.load @g[r0_0 + 1000*i0] : f32
    %1 = buffer.reduce sum %0 : f32 -> f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.computed "buf1" #buffer.layout<[64, 1000], [1000, 1], f32> ranges [64, 1000] origins ["_log_softmax_backward_data"] {
    %0 = buffer.load @g[i1 + 1000*i0] : f32
    %1 = buffer.load @p[i1 + 1000*i0] : f32
    %2 = buffer.load @buf0[i0] : f32
    %3 = arith.mulf %1, %2 : f32
    %4 = arith.subf %0, %3 : f32
    buffer.store @buf1[i1 + 1000*i0], %4 : f32
  }
  buffer.computed "buf2" #buffer.layout<[1000, 64], [64, 1], f32> ranges [1000, 64] origins ["clone"] {
    %0 = buffer.load @buf1[i0 + 1000*i1] : f32
    buffer.store @buf2[i1 + 64*i0], %0 : f32
  }
  buffer.output @buf1, @buf2
}

// -----

// The reader that fixes the order may be a pointwise member of a reduction group: buf1 reads
// buf0 transposed and is the prologue of the row sum buf2 (its loops split 40 | 64 into the
// kernel's X and R); buf0 re-runs over buf1's loops with the same split, one kernel for all three.
// CHECK-LABEL: buffer.graph @pointwise_reader_in_a_reduction
// CHECK:       buffer.fused {
// CHECK-NEXT:    buffer.computed "buf0" #buffer.layout<[64, 40], [40, 1], f32> ranges [40, 64] origins ["exp"]
// CHECK-NEXT:      buffer.load @x[i0 + 40*i1]
// CHECK:         buffer.computed "buf1"
// CHECK:         buffer.computed "buf2"
// CHECK:       } attributes {fusion = ["candidate buf1 + buf2: score (0, 10240, -1), saves 1.50 us", "fused buf1 + buf2", "candidate buf0 + buf1+buf2: score (1, 10240, -1), saves 1.51 us", "fused buf0 + buf1+buf2", "reordered buf0: loops [64, 40] -> [40, 64] to run in the order its reader reads it"]}
// KERNEL-LABEL: triton.kernel @triton_per_fused_exp_mul_sum_0
// KERNEL:       triton.launch @triton_per_fused_exp_mul_sum_0(@x, @y, @buf1, @buf2) xnumel 40 r0_numel 64
buffer.graph @pointwise_reader_in_a_reduction {
  buffer.input "x" #buffer.layout<[64, 40], [40, 1], f32>
  buffer.input "y" #buffer.layout<[40, 64], [64, 1], f32>
  buffer.computed "buf0" #buffer.layout<[64, 40], [40, 1], f32> ranges [64, 40] origins ["exp"] {
    %0 = buffer.load @x[i1 + 40*i0] : f32
    %1 = math.exp %0 : f32
    buffer.store @buf0[i1 + 40*i0], %1 : f32
  }
  buffer.computed "buf1" #buffer.layout<[40, 64], [64, 1], f32> ranges [40, 64] origins ["mul"] {
    %0 = buffer.load @buf0[i0 + 40*i1] : f32
    %1 = buffer.load @y[i1 + 64*i0] : f32
    %2 = arith.mulf %0, %1 : f32
    buffer.store @buf1[i1 + 64*i0], %2 : f32
  }
  buffer.computed "buf2" #buffer.layout<[40], [1], f32> ranges [40] reduce [64] origins ["sum"] {
    %0 = buffer.load @buf1[r0_0 + 64*i0] : f32
    %1 = buffer.reduce sum %0 : f32 -> f32
    buffer.store @buf2[i0], %1 : f32
  }
  buffer.output @buf1, @buf2
}

// -----

// A chain: buf1 (stored column-major, so reorder-loops runs it as [64, 40], buf0's order) fuses
// with buf0 first; the group then meets the row sum buf2, which reads buf1 across its loops.
// buf1 re-runs over buf2's loops, then buf0 over buf1's new loops: one kernel for all three.
// CHECK-LABEL: buffer.graph @rerun_chain
// CHECK:       buffer.fused {
// CHECK-NEXT:    buffer.computed "buf0" #buffer.layout<[64, 40], [40, 1], f32> ranges [40, 64] origins ["exp"]
// CHECK:         buffer.computed "buf1" #buffer.layout<[40, 64], [1, 40], f32> ranges [40, 64] origins ["mul"]
// CHECK:         buffer.computed "buf2"
// CHECK:       } attributes {fusion = ["candidate buf0 + buf1: score (1, 10240, -1), saves 1.51 us", "fused buf0 + buf1", "candidate buf0+buf1 + buf2: score (0, 10240, -1), saves 1.50 us", "fused buf0+buf1 + buf2", "reordered buf1: loops [64, 40] -> [40, 64] to run in the order its reader reads it", "reordered buf0: loops [64, 40] -> [40, 64] to run in the order its reader reads it"]}
// KERNEL-LABEL: triton.kernel @triton_per_fused_exp_mul_sum_0
// KERNEL:       triton.launch @triton_per_fused_exp_mul_sum_0(@x, @y, @buf1, @buf2) xnumel 40 r0_numel 64
buffer.graph @rerun_chain {
  buffer.input "x" #buffer.layout<[64, 40], [40, 1], f32>
  buffer.input "y" #buffer.layout<[40, 64], [64, 1], f32>
  buffer.computed "buf0" #buffer.layout<[64, 40], [40, 1], f32> ranges [64, 40] origins ["exp"] {
    %0 = buffer.load @x[i1 + 40*i0] : f32
    %1 = math.exp %0 : f32
    buffer.store @buf0[i1 + 40*i0], %1 : f32
  }
  buffer.computed "buf1" #buffer.layout<[40, 64], [1, 40], f32> ranges [64, 40] origins ["mul"] {
    %0 = buffer.load @buf0[i1 + 40*i0] : f32
    %1 = buffer.load @y[i0 + 64*i1] : f32
    %2 = arith.mulf %0, %1 : f32
    buffer.store @buf1[i1 + 40*i0], %2 : f32
  }
  buffer.computed "buf2" #buffer.layout<[40], [1], f32> ranges [40] reduce [64] origins ["sum"] {
    %0 = buffer.load @buf1[i0 + 40*r0_0] : f32
    %1 = buffer.reduce sum %0 : f32 -> f32
    buffer.store @buf2[i0], %1 : f32
  }
  buffer.output @buf1, @buf2
}
