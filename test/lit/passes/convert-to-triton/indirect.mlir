// RUN: mlc-opt %s --split-input-file --convert-to-triton="check-indices=true" | filecheck %s

// nll_loss's sum over 100 rows of x[n, t[n]]: the position varies along r0, so its load and
// its bounds check take the r0 mask (any live lane may hold any position; xnumel is 1, so
// there is no xmask), and the masked-off lanes read the sum's identity.
// CHECK-LABEL: triton.kernel @triton_per_fused_nll_loss_forward_0 persistent_reduction
// CHECK:         %[[T:.*]] = triton.load %in_ptr0[r0_0] mask r0_mask other 0 evict_first : i64
// CHECK-NEXT:    %[[K:.*]] = triton.indirect_index %[[T]] size 1000 mask r0_mask check : i64
// CHECK-NEXT:    %{{.*}} = triton.load %in_ptr1[ind0 + 1000*r0_0] indirect(%[[K]]) mask r0_mask other 0.000000e+00 evict_first : f32
buffer.graph @nll_sum {
  buffer.input "x" #buffer.layout<[100, 1000], [1000, 1], f32>
  buffer.input "t" #buffer.layout<[100], [1], i64>
  buffer.computed "buf0" #buffer.layout<[], [], f32> ranges [] reduce [100] origins ["nll_loss_forward"] {
    %0 = buffer.load @t[r0_0] : i64
    %1 = loops.indirect_index %0 size 1000 : i64
    %2 = buffer.load @x[ind0 + 1000*r0_0] indirect(%1) : f32
    %3 = arith.negf %2 : f32
    %4 = buffer.reduce sum %3 : f32 -> f32
    buffer.store @buf0[0], %4 : f32
  }
  buffer.output @buf0
}

// -----

// An embedding in a 2-D tile (its output is written transposed): the position is loaded per
// row of ids, but its load takes both tile masks.
// CHECK-LABEL: triton.kernel @triton_poi_fused_embedding_0 pointwise
// CHECK:         %[[T:.*]] = triton.load %in_ptr0[yindex] mask ymask evict_last : i64
// CHECK-NEXT:    %[[K:.*]] = triton.indirect_index %[[T]] size 50 mask ymask, xmask check : i64
// CHECK-NEXT:    triton.load %in_ptr1[x0 + 64*ind0] indirect(%[[K]]) mask ymask, xmask evict_last : f32
buffer.graph @embedding_transposed {
  buffer.input "w" #buffer.layout<[50, 64], [64, 1], f32>
  buffer.input "ids" #buffer.layout<[96], [1], i64>
  buffer.computed "buf0" #buffer.layout<[96, 64], [1, 96], f32> ranges [96, 64] origins ["embedding"] {
    %0 = buffer.load @ids[i0] : i64
    %1 = loops.indirect_index %0 size 50 : i64
    %2 = buffer.load @w[i1 + 64*ind0] indirect(%1) : f32
    buffer.store @buf0[i0 + 96*i1], %2 : f32
  }
  buffer.output @buf0
}
