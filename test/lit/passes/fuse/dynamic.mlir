// RUN: mlc-opt %s -p "fuse{explain=true}" | filecheck %s

// Dynamic shapes: the softmax's max, sum and normalisation fuse into one kernel over s0*s1
// rows; the column sum over s1 stays apart (its reduction is 32*s0 x s1, not s0*s1 x 32).
// Bytes are scored with each size at the size hint 8192, so shared reads of 32*s0*s1
// elements rank first, as Inductor ranks by size hints.
// CHECK:      buffer.fused {
// CHECK-NEXT: {{^      }}buffer.computed "buf0"
// CHECK:      {{^      }}buffer.computed "buf1"
// CHECK:      {{^      }}buffer.computed "buf2"
// CHECK:      {{^    }}buffer.computed "buf3"
// CHECK:      "refused buf0 + buf3: [reduction sizes] buf0 reduces s0*s1 x 32, buf3 32*s0 x s1"
// CHECK-SAME: "candidate buf0 + buf1: score (1, 17448304640, -1), saves 2645.79 us", "fused buf0 + buf1"
// CHECK-SAME: "fused buf0+buf1 + buf2"
buffer.graph @forward {
  buffer.size_input "arg0_1" <s0>
  buffer.size_input "arg1_1" <s1>
  buffer.input "arg2_1" #buffer.layout<[s0, s1, 32], [32*s1, 32, 1], f32>
  buffer.input "arg3_1" #buffer.layout<[32], [1], f32>
  buffer.computed "buf0" #buffer.layout<[s0, s1, 1], [s1, 1, 1], f32> ranges [s0*s1] reduce [32] origins ["_softmax", "add", "relu", "view"] {
    %0 = buffer.load @arg2_1[r0_0 + 32*i0] : f32
    %1 = buffer.load @arg3_1[r0_0] : f32
    %2 = arith.addf %0, %1 : f32
    %3 = arith.constant 0.000000e+00 : f32
    %4 = arith.maximumf %2, %3 : f32
    %5 = buffer.reduce max %4 : f32 -> f32
    buffer.store @buf0[i0], %5 : f32
  } attributes {reads = [#buffer.memory<"arg2_1", c0, {c0: 32*s0*s1}>, #buffer.memory<"arg3_1", c1, {c0: s0*s1, c1: 32}>], writes = [#buffer.memory<"buf0", c0, {c0: s0*s1}>]}
  buffer.computed "buf1" #buffer.layout<[s0, s1, 1], [s1, 1, 1], f32> ranges [s0*s1] reduce [32] origins ["_softmax", "add", "relu", "view"] {
    %6 = buffer.load @arg2_1[r0_0 + 32*i0] : f32
    %7 = buffer.load @arg3_1[r0_0] : f32
    %8 = arith.addf %6, %7 : f32
    %9 = arith.constant 0.000000e+00 : f32
    %10 = arith.maximumf %8, %9 : f32
    %11 = buffer.load @buf0[i0] : f32
    %12 = arith.subf %10, %11 : f32
    %13 = math.exp %12 : f32
    %14 = buffer.reduce sum %13 : f32 -> f32
    buffer.store @buf1[i0], %14 : f32
  } attributes {reads = [#buffer.memory<"arg2_1", c0, {c0: 32*s0*s1}>, #buffer.memory<"arg3_1", c1, {c0: s0*s1, c1: 32}>, #buffer.memory<"buf0", c0, {c0: s0*s1}>], writes = [#buffer.memory<"buf1", c0, {c0: s0*s1}>]}
  buffer.computed "buf2" #buffer.layout<[s0, s1, 32], [32*s1, 32, 1], f32> ranges [s0*s1, 32] origins ["_softmax", "add", "relu", "view"] {
    %15 = buffer.load @arg2_1[i1 + 32*i0] : f32
    %16 = buffer.load @arg3_1[i1] : f32
    %17 = arith.addf %15, %16 : f32
    %18 = arith.constant 0.000000e+00 : f32
    %19 = arith.maximumf %17, %18 : f32
    %20 = buffer.load @buf0[i0] : f32
    %21 = arith.subf %19, %20 : f32
    %22 = math.exp %21 : f32
    %23 = buffer.load @buf1[i0] : f32
    %24 = arith.divf %22, %23 : f32
    buffer.store @buf2[i1 + 32*i0], %24 : f32
  } attributes {reads = [#buffer.memory<"arg2_1", c0, {c0: 32*s0*s1}>, #buffer.memory<"arg3_1", c1, {c0: s0*s1, c1: 32}>, #buffer.memory<"buf0", c0, {c0: s0*s1}>, #buffer.memory<"buf1", c0, {c0: s0*s1}>], writes = [#buffer.memory<"buf2", c0, {c0: 32*s0*s1}>]}
  buffer.computed "buf3" #buffer.layout<[s0, 32], [32, 1], f32> ranges [s0, 32] reduce [s1] origins ["add", "relu", "sum", "view"] {
    %25 = buffer.load @arg2_1[i1 + 32*r0_0 + 32*i0*s1] : f32
    %26 = buffer.load @arg3_1[i1] : f32
    %27 = arith.addf %25, %26 : f32
    %28 = arith.constant 0.000000e+00 : f32
    %29 = arith.maximumf %27, %28 : f32
    %30 = buffer.reduce sum %29 : f32 -> f32
    buffer.store @buf3[i1 + 32*i0], %30 : f32
  } attributes {reads = [#buffer.memory<"arg2_1", c1 + 32*c2 + 32*c0*s1, {c0: s0, c1: 32, c2: s1}>, #buffer.memory<"arg3_1", c1, {c0: s0, c1: 32}>], writes = [#buffer.memory<"buf3", c0, {c0: 32*s0}>]}
  buffer.output @buf2, @buf3
}
