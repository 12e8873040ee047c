// RUN: mlc-opt %s -p convert-to-triton | filecheck %s

// Dynamic shapes: each kernel runs over symbolic numels and masks by them. The softmax over
// 32 columns stays persistent (its r0_numel is static) over s0*s1 rows. The column sum over
// s1 rows gets two kernels: persistent up to 64 rows (the bound of a reduction along a
// strided dim), R0_BLOCK in each config (one set per power of two up to 64), and looped
// above; the launch picks by s1 at run time. Every kernel indexes in 64 bits (a symbolic
// extent may pass 2^31). The column sum's input steps 32*s1 per output row: the kernels take
// s1 as an argument. The wrapper takes the sizes and allocates symbolic layouts.
// CHECK:      triton.kernel @triton_per_fused__softmax_add_relu_view_0 persistent_reduction({{.*}}) xnumel s0*s1 r0_numel 32
// CHECK:        triton.load %in_ptr0[r0_0 + 32*x0] mask xmask
// CHECK:      } attributes {index_bits = 64 : i64}
// CHECK:      triton.kernel @triton_per_fused_add_relu_sum_view_1 persistent_reduction({{.*}}) xnumel 32*s0 r0_numel s1 origins [{{.*}}] configs [#triton.config<XBLOCK = 1, R0_BLOCK = 1, {{.*}}, #triton.config<XBLOCK = 128, R0_BLOCK = 32, {{.*}} R0_BLOCK = 64, {{[^R]*}}] {
// CHECK:        triton.load %in_ptr0[x0 + 32*r0_0 + 32*s1*x1] mask r0_mask, xmask
// CHECK:        triton.reduce sum
// CHECK:      } attributes {index_bits = 64 : i64}
// CHECK:      triton.kernel @triton_red_fused_add_relu_sum_view_2 reduction({{.*}}) xnumel 32*s0 r0_numel s1
// CHECK:        triton.rloop
// CHECK:        triton.load %in_ptr0[x0 + 32*r0_0 + 32*s1*x1] mask r0_mask, xmask
// CHECK:      } attributes {index_bits = 64 : i64}
// CHECK:      triton.wrapper @call {
// CHECK-NEXT:   triton.size_input "arg0_1" s0
// CHECK-NEXT:   triton.size_input "arg1_1" s1
// CHECK:        triton.alloc "buf2" #buffer.layout<[s0, s1, 32], [32*s1, 32, 1], f32>
// CHECK-NEXT:   triton.launch @triton_per_fused__softmax_add_relu_view_0(@arg2_1, @arg3_1, @buf2) xnumel s0*s1 r0_numel 32
// CHECK-NEXT:   triton.alloc "buf3" #buffer.layout<[s0, 32], [32, 1], f32>
// CHECK-NEXT:   triton.launch @triton_per_fused_add_relu_sum_view_1(@arg2_1, @arg3_1, @buf3) xnumel 32*s0 r0_numel s1 else @triton_red_fused_add_relu_sum_view_2 when r0_numel > 64
buffer.graph @forward {
  buffer.size_input "arg0_1" <s0>
  buffer.size_input "arg1_1" <s1>
  buffer.input "arg2_1" #buffer.layout<[s0, s1, 32], [32*s1, 32, 1], f32>
  buffer.input "arg3_1" #buffer.layout<[32], [1], f32>
  buffer.fused {
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
  }
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
} attributes {fusion = ["refused buf0 + buf2: [cycle] buf1 depends on one of buf0, buf2 and feeds the other: fusing would need it inside the kernel", "refused buf0 + buf3: [reduction sizes] buf0 reduces s0*s1 x 32, buf3 32*s0 x s1", "refused buf1 + buf3: [reduction sizes] buf1 reduces s0*s1 x 32, buf3 32*s0 x s1", "refused buf2 + buf3: [different loop order] buf2's loops [s0*s1, 32] do not split into the kernel's 32*s0 x s1", "candidate buf0 + buf1: score (0, 0, -1)", "fused buf0 + buf1", "candidate buf0+buf1 + buf2: score (0, 0, -1)", "fused buf0+buf1 + buf2", "refused buf0+buf1+buf2 + buf3: [reduction sizes] buf0 reduces s0*s1 x 32, buf3 32*s0 x s1", "refusals: cycle: 1", "refusals: different loop order: 1", "refusals: reduction sizes: 3"]}
