// RUN: mlc-opt %s --split-reductions --split-input-file | filecheck %s
// RUN: mlc-opt %s --split-reductions="num-sms=4" --split-input-file | filecheck %s --check-prefix=FOUR

// Outer reductions (every read strides along the reduction by more than 1): Inductor's outer
// rule, 4 values per thread and 128 outputs per block. Reductions with at least 64 * num-sms
// outputs get the DEFAULT hint and are never split. num-sms scales both rules.

// x.sum(0) of [65536, 64]: 4M elements, at most 32 per thread of a 132-SM GPU, so pieces of
// 4 x 32 = 128 (4 r-values per thread): 512 of them. With 4 SMs the same work is 512 per
// thread: pieces of 4 x 512, 32 of them.
// The partials are laid out as the read walks memory (Inductor's fill order of a flexible
// layout): columns innermost, so neighbouring lanes store neighbouring columns and the final
// reduction reads them the same way. Both pieces keep the OUTER hint (the final's 512
// partials into 64 outputs make it OUTER_TINY, Inductor's second-step rule), which
// convert-to-triton's configs follow.
// CHECK-LABEL: buffer.graph @columns
// CHECK:         buffer.computed "buf1" #buffer.layout<[64, 512], [1, 64], f32> ranges [64, 512] reduce [128] origins ["sum"] {
// CHECK-NEXT:      %[[X:.*]] = buffer.load @x[i0 + 64*r0_0 + 8192*i1] : f32
// CHECK-NEXT:      %[[P:.*]] = buffer.reduce sum %[[X]] : f32 -> f32
// CHECK-NEXT:      buffer.store @buf1[i0 + 64*i1], %[[P]] : f32
// CHECK-NEXT:    } attributes {hint = "outer"}
// CHECK:         buffer.computed "buf0" #buffer.layout<[64], [1], f32> ranges [64] reduce [512] origins ["sum"] {
// CHECK-NEXT:      %[[Q:.*]] = buffer.load @buf1[i0 + 64*r0_0] : f32
// CHECK:         } attributes {hint = "outer_tiny"}
// FOUR-LABEL: buffer.graph @columns
// FOUR:         buffer.computed "buf1" {{.*}} ranges [64, 32] reduce [2048]
buffer.graph @columns {
  buffer.input "x" #buffer.layout<[65536, 64], [64, 1], f32>
  buffer.computed "buf0" #buffer.layout<[64], [1], f32> ranges [64] reduce [65536] origins ["sum"] {
    %0 = buffer.load @x[i0 + 64*r0_0] : f32
    %1 = buffer.reduce sum %0 : f32 -> f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.output @buf0
}

// -----

// 8448 = 64 * 132 columns: DEFAULT hint, no split.
// CHECK-LABEL: buffer.graph @many_columns
// CHECK-NEXT:    buffer.input "x"
// CHECK-NEXT:    buffer.computed "buf0" {{.*}} ranges [8448] reduce [100000]
// CHECK-NOT:     buffer.computed
buffer.graph @many_columns {
  buffer.input "x" #buffer.layout<[100000, 8448], [8448, 1], f32>
  buffer.computed "buf0" #buffer.layout<[8448], [1], f32> ranges [8448] reduce [100000] origins ["sum"] {
    %0 = buffer.load @x[i0 + 8448*r0_0] : f32
    %1 = buffer.reduce sum %0 : f32 -> f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.output @buf0
}

// -----

// 8447 columns: OUTER. 845M elements, past 512 per thread of the GPU: 500 (a divisor of
// 100000 within 50 of 512) values per thread, 100000 / (4 * 500) = 50 pieces of 2000.
// CHECK-LABEL: buffer.graph @fewer_columns
// CHECK:         buffer.computed "buf1" #buffer.layout<[8447, 50], [1, 8447], f32> ranges [8447, 50] reduce [2000]
// CHECK:         buffer.store @buf1[i0 + 8447*i1]
// CHECK:         buffer.computed "buf0" #buffer.layout<[8447], [1], f32> ranges [8447] reduce [50]
// CHECK:         } attributes {hint = "outer"}
buffer.graph @fewer_columns {
  buffer.input "x" #buffer.layout<[100000, 8447], [8447, 1], f32>
  buffer.computed "buf0" #buffer.layout<[8447], [1], f32> ranges [8447] reduce [100000] origins ["sum"] {
    %0 = buffer.load @x[i0 + 8447*r0_0] : f32
    %1 = buffer.reduce sum %0 : f32 -> f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.output @buf0
}

// -----

// 8 rows of 100000 (inner): split into 13 pieces of 7693 (masked) for 132 SMs, the pieces of
// a row side by side; with num-sms=4, 8 rows = 2 per SM are enough: no split.
// CHECK-LABEL: buffer.graph @eight_rows
// CHECK:         buffer.computed "buf1" #buffer.layout<[8, 13], [13, 1], f32> ranges [8, 13] reduce [7693]
// CHECK:         } attributes {hint = "inner"}
// FOUR-LABEL: buffer.graph @eight_rows
// FOUR-NEXT:    buffer.input "x"
// FOUR-NEXT:    buffer.computed "buf0" {{.*}} ranges [8] reduce [100000]
// FOUR-NOT:     buffer.computed
buffer.graph @eight_rows {
  buffer.input "x" #buffer.layout<[8, 100000], [100000, 1], f32>
  buffer.computed "buf0" #buffer.layout<[8], [1], f32> ranges [8] reduce [100000] origins ["sum"] {
    %0 = buffer.load @x[r0_0 + 100000*i0] : f32
    %1 = buffer.reduce sum %0 : f32 -> f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.output @buf0
}
