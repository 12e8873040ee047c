// RUN: mlc-opt %s -p "reorder-loops{explain=true}" | filecheck %s

// Dynamic shapes: loops merge and stay apart over symbolic sizes by the same rule as over
// integers. The row reductions' [s0, s1, 1] merge into [s0*s1] (every access steps s1 times
// as far along i0 as along i1); the bias read keeps the softmax's [s0, s1] and 32 apart; the
// column sum keeps i0 and i1 apart, its input stepping 32*s1 along i0.
// CHECK:      buffer.computed "buf0" {{.*}} ranges [s0*s1] reduce [32]
// CHECK-NEXT:   buffer.load @arg2_1[r0_0 + 32*i0]
// CHECK:      loops = "[s0*s1] reduce [32] from [s0, s1, 1] reduce [32]: i2 dropped (size 1)"
// CHECK:      buffer.computed "buf2" {{.*}} ranges [s0*s1, 32]
// CHECK-NEXT:   buffer.load @arg2_1[i1 + 32*i0]
// CHECK:      loops = "[s0*s1, 32] from [s0, s1, 32]: i1 | i2 kept apart: @arg3_1[i2] steps 0 along i1, not 32"
// CHECK:      buffer.computed "buf3" {{.*}} ranges [s0, 32] reduce [s1]
// CHECK:      loops = "[s0, 32] reduce [s1] from [s0, 32] reduce [s1]: i0 | i1 kept apart: @arg2_1[i1 + 32*r0_0 + 32*i0*s1] steps 32*s1 along i0, not 32"
buffer.graph @forward {
  buffer.size_input "arg0_1" <s0>
  buffer.size_input "arg1_1" <s1>
  buffer.input "arg2_1" #buffer.layout<[s0, s1, 32], [32*s1, 32, 1], f32>
  buffer.input "arg3_1" #buffer.layout<[32], [1], f32>
  buffer.computed "buf0" #buffer.layout<[s0, s1, 1], [s1, 1, 1], f32> ranges [s0, s1, 1] reduce [32] origins ["_softmax", "add", "relu", "view"] {
    %0 = buffer.load @arg2_1[r0_0 + 32*i1 + 32*i0*s1] : f32
    %1 = buffer.load @arg3_1[r0_0] : f32
    %2 = arith.addf %0, %1 : f32
    %3 = arith.constant 0.000000e+00 : f32
    %4 = arith.maximumf %2, %3 : f32
    %5 = buffer.reduce max %4 : f32 -> f32
    buffer.store @buf0[i1 + i2 + i0*s1], %5 : f32
  }
  buffer.computed "buf1" #buffer.layout<[s0, s1, 1], [s1, 1, 1], f32> ranges [s0, s1, 1] reduce [32] origins ["_softmax", "add", "relu", "view"] {
    %6 = buffer.load @arg2_1[r0_0 + 32*i1 + 32*i0*s1] : f32
    %7 = buffer.load @arg3_1[r0_0] : f32
    %8 = arith.addf %6, %7 : f32
    %9 = arith.constant 0.000000e+00 : f32
    %10 = arith.maximumf %8, %9 : f32
    %11 = buffer.load @buf0[i1 + i0*s1] : f32
    %12 = arith.subf %10, %11 : f32
    %13 = math.exp %12 : f32
    %14 = buffer.reduce sum %13 : f32 -> f32
    buffer.store @buf1[i1 + i2 + i0*s1], %14 : f32
  }
  buffer.computed "buf2" #buffer.layout<[s0, s1, 32], [32*s1, 32, 1], f32> ranges [s0, s1, 32] origins ["_softmax", "add", "relu", "view"] {
    %15 = buffer.load @arg2_1[i2 + 32*i1 + 32*i0*s1] : f32
    %16 = buffer.load @arg3_1[i2] : f32
    %17 = arith.addf %15, %16 : f32
    %18 = arith.constant 0.000000e+00 : f32
    %19 = arith.maximumf %17, %18 : f32
    %20 = buffer.load @buf0[i1 + i0*s1] : f32
    %21 = arith.subf %19, %20 : f32
    %22 = math.exp %21 : f32
    %23 = buffer.load @buf1[i1 + i0*s1] : f32
    %24 = arith.divf %22, %23 : f32
    buffer.store @buf2[i2 + 32*i1 + 32*i0*s1], %24 : f32
  }
  buffer.computed "buf3" #buffer.layout<[s0, 32], [32, 1], f32> ranges [s0, 32] reduce [s1] origins ["add", "relu", "sum", "view"] {
    %25 = buffer.load @arg2_1[i1 + 32*r0_0 + 32*i0*s1] : f32
    %26 = buffer.load @arg3_1[i1] : f32
    %27 = arith.addf %25, %26 : f32
    %28 = arith.constant 0.000000e+00 : f32
    %29 = arith.maximumf %27, %28 : f32
    %30 = buffer.reduce sum %29 : f32 -> f32
    buffer.store @buf3[i1 + 32*i0], %30 : f32
  }
  buffer.output @buf2, @buf3
}
