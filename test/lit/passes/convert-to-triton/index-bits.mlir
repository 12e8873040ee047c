// RUN: mlc-opt %s --convert-to-triton --split-input-file | filecheck %s

// Index arithmetic is 32-bit unless a position could reach 2^31: then the kernel says
// `index_bits = 64` and its program ids and aranges are widened, so every index built on them
// is int64 (an int32 one would wrap around and read another element, with no error); see
// test/lit/codegen/emit-python/index-bits.mlir for the Python.

// 2^31 - 1 elements of u8: every position fits in int32.
// CHECK-LABEL: triton.kernel @triton_poi_fused_add_0
// CHECK-NOT:   index_bits
// CHECK:       triton.wrapper
buffer.graph @just_fits {
  buffer.input "x" #buffer.layout<[2147483647], [1], i8>
  buffer.computed "buf0" #buffer.layout<[2147483647], [1], i8> ranges [2147483647] origins ["add"] {
    %0 = buffer.load @x[i0] : i8
    %1 = arith.addi %0, %0 : i8
    buffer.store @buf0[i0], %1 : i8
  }
  buffer.output @buf0
}

// -----

// 2^31 elements: the kernel runs that many points.
// CHECK-LABEL: triton.kernel @triton_poi_fused_add_0
// CHECK:       } attributes {index_bits = 64 : i64}
buffer.graph @too_many_points {
  buffer.input "x" #buffer.layout<[2147483648], [1], i8>
  buffer.computed "buf0" #buffer.layout<[2147483648], [1], i8> ranges [2147483648] origins ["add"] {
    %0 = buffer.load @x[i0] : i8
    %1 = arith.addi %0, %0 : i8
    buffer.store @buf0[i0], %1 : i8
  }
  buffer.output @buf0
}

// -----

// 16 points, but they read the end of a 2^31-element input: the positions need 64 bits.
// CHECK-LABEL: triton.kernel @triton_poi_fused_add_0
// CHECK:       } attributes {index_bits = 64 : i64}
buffer.graph @a_large_storage {
  buffer.input "x" #buffer.layout<[2147483648], [1], i8>
  buffer.computed "buf0" #buffer.layout<[16], [1], i8> ranges [16] origins ["add"] {
    %0 = buffer.load @x[i0 + 2147483632] : i8
    %1 = arith.addi %0, %0 : i8
    buffer.store @buf0[i0], %1 : i8
  }
  buffer.output @buf0
}

// -----

// A row sum over 2 rows of 2^30 + 1 elements.
// CHECK-LABEL: triton.kernel @triton_red_fused_sum_0 reduction
// CHECK:       } attributes {index_bits = 64 : i64}
buffer.graph @long_rows {
  buffer.input "x" #buffer.layout<[2, 1073741825], [1073741825, 1], f32>
  buffer.computed "buf0" #buffer.layout<[2], [1], f32> ranges [2] reduce [1073741825] origins ["sum"] {
    %0 = buffer.load @x[r0_0 + 1073741825*i0] : f32
    %1 = buffer.reduce sum %0 : f32 -> f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.output @buf0
}
