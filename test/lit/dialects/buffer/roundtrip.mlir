// RUN: mlc-opt %s | mlc-opt | filecheck %s
// RUN: mlc-opt %s --print-op-generic | mlc-opt | filecheck %s

// Seed 000's gelu as a realized node, a reduction over it, an extern, a view and a fused group.
// CHECK-LABEL: buffer.graph @forward
buffer.graph @forward {
  // CHECK-NEXT: buffer.input "buf4" #buffer.layout<[8, 64], [64, 1], f32>
  buffer.input "buf4" #buffer.layout<[8, 64], [64, 1], f32>
  // CHECK-NEXT: buffer.computed "buf5" #buffer.layout<[8, 64], [64, 1], f32> ranges [8, 64] origins ["gelu"] {
  // CHECK-NEXT:   %{{.*}} = buffer.load @buf4[i1 + 64*i0] : f32
  // CHECK:        buffer.store @buf5[i1 + 64*i0], %{{.*}} : f32
  buffer.computed "buf5" #buffer.layout<[8, 64], [64, 1], f32> ranges [8, 64] origins ["gelu"] {
    %0 = buffer.load @buf4[i1 + 64*i0] : f32
    %1 = arith.constant 0.5 : f32
    %2 = arith.mulf %0, %1 : f32
    buffer.store @buf5[i1 + 64*i0], %2 : f32
  }
  // CHECK:      buffer.computed "buf6" #buffer.layout<[8], [1], f32> ranges [8] reduce [64] {
  // CHECK:        %{{.*}} = buffer.reduce sum %{{.*}} : f32 -> f32
  // CHECK:      } attributes {reads = [#buffer.memory<"buf5", r0_0 + 64*i0, {i0: 8, r0_0: 64}>, #buffer.star<"buf4">, #buffer.weak<"buf4", "buf5">]}
  buffer.computed "buf6" #buffer.layout<[8], [1], f32> ranges [8] reduce [64] {
    %0 = buffer.load @buf5[r0_0 + 64*i0] : f32
    %1 = buffer.reduce sum %0 : f32 -> f32
    buffer.store @buf6[i0], %1 : f32
  } attributes {reads = [#buffer.memory<"buf5", r0_0 + 64*i0, {i0: 8, r0_0: 64}>, #buffer.star<"buf4">, #buffer.weak<"buf4", "buf5">]}
  // CHECK: buffer.view "buf7" = @buf5 #buffer.layout<[64, 8], [1, 64], f32, offset 8>
  buffer.view "buf7" = @buf5 #buffer.layout<[64, 8], [1, 64], f32, offset 8>
  // CHECK: buffer.extern "buf8" = "mm.default" {args = [@buf5, @buf7]} : #buffer.layout<[8, 8], [8, 1], f32>
  buffer.extern "buf8" = "mm.default" {args = [@buf5, @buf7]} : #buffer.layout<[8, 8], [8, 1], f32>
  // CHECK: buffer.extern "buf20" = "mm.default" {args = [@buf5, @buf7], fresh, out} : #buffer.layout<[8, 8], [16, 1], f32>
  buffer.extern "buf20" = "mm.default" {args = [@buf5, @buf7], fresh, out} : #buffer.layout<[8, 8], [16, 1], f32>
  // CHECK: buffer.extern "buf9", "buf10" = "max.dim" {args = [@buf5, 1 : i64]} : #buffer.layout<[8], [1], f32>, #buffer.layout<[8], [1], i64>
  buffer.extern "buf9", "buf10" = "max.dim" {args = [@buf5, 1 : i64]} : #buffer.layout<[8], [1], f32>, #buffer.layout<[8], [1], i64>
  // A call that returns None (or a number) in some positions names no buffer there.
  // CHECK: buffer.extern none, "buf12", none = "convolution_backward.default" {args = [@buf8, @buf8, @buf8, [8 : i64], [1 : i64], [0 : i64], [1 : i64], false, [0 : i64], 1 : i64, [false, true, false]]} : #buffer.layout<[8, 8], [8, 1], f32>
  buffer.extern none, "buf12", none = "convolution_backward.default" {args = [@buf8, @buf8, @buf8, [8 : i64], [1 : i64], [0 : i64], [1 : i64], false, [0 : i64], 1 : i64, [false, true, false]]} : #buffer.layout<[8, 8], [8, 1], f32>
  // A call whose every result is `none` (run for its effect, as scatter's result nothing reads)
  // has no layouts; its attributes (--deps') still print and parse back.
  // CHECK: buffer.extern none = "neg.default" {args = [@buf8]} attributes {reads = [#buffer.star<"buf8">], writes = []}
  buffer.extern none = "neg.default" {args = [@buf8]} attributes {reads = [#buffer.star<"buf8">], writes = []}
  // CHECK:      buffer.fused {
  // CHECK-NEXT:   buffer.computed "buf11"
  buffer.fused {
    buffer.computed "buf11" #buffer.layout<[8], [1], f32> ranges [8] {
      %0 = buffer.load @buf6[i0] : f32
      %m = arith.constant true
      %1 = buffer.load @buf9[i0] mask %m : f32
      %2 = arith.addf %0, %1 : f32
      buffer.store @buf11[i0], %2 : f32
    }
  }
  // CHECK: buffer.output @buf11, @buf8, @buf4
  buffer.output @buf11, @buf8, @buf4
}
