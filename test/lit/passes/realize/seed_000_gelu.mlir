// RUN: mlc-opt %s --inline --realize | filecheck %s
// RUN: mlc-opt %s --inline --realize --print-debuginfo | filecheck %s --check-prefix=LOC
// RUN: mlc-opt %s --inline --realize | mlc-opt | filecheck %s

// Seed 000: five nn.Linear layers then gelu, as --lower-aten leaves them: each weight's
// transpose is a single-load view, each addmm an extern, and gelu's decomposition five
// pointwise ops loading each other. Inductor's result: the five addmm outputs are buf0..buf4
// (the transposes are ReinterpretViews, no buffers) and the whole gelu is ComputedBuffer buf5,
// loading buf4 at i1 + 64*i0 twice (tmp0 and tmp3), origin node mul_2.

// CHECK-LABEL: buffer.graph @forward {
// CHECK-NEXT:    buffer.input "primals_1" #buffer.layout<[64, 32], [32, 1], f32>
// CHECK-NEXT:    buffer.input "primals_2" #buffer.layout<[64], [1], f32>
// CHECK-NEXT:    buffer.input "primals_3" #buffer.layout<[8, 32], [32, 1], f32>
// CHECK:         buffer.input "primals_11" #buffer.layout<[64], [1], f32>
// CHECK-NEXT:    buffer.view "view0" = @primals_1 #buffer.layout<[32, 64], [1, 32], f32>
// CHECK-NEXT:    buffer.extern "buf0" = "addmm.default" {args = [@primals_2, @primals_3, @view0], origins = ["addmm"]} : #buffer.layout<[8, 64], [64, 1], f32>
// CHECK-NEXT:    buffer.view "view1" = @primals_4 #buffer.layout<[64, 64], [1, 64], f32>
// CHECK-NEXT:    buffer.extern "buf1" = "addmm.default" {args = [@primals_5, @buf0, @view1], origins = ["addmm"]}
// CHECK:         buffer.extern "buf4" = "addmm.default" {args = [@primals_11, @buf3, @view4], origins = ["addmm"]}
// CHECK-NEXT:    buffer.computed "buf5" #buffer.layout<[8, 64], [64, 1], f32> ranges [8, 64] origins ["gelu"] {
// CHECK-NEXT:      %[[TMP0:.*]] = buffer.load @buf4[i1 + 64*i0] : f32
// CHECK-NEXT:      %[[C0:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:      %[[TMP2:.*]] = arith.mulf %[[TMP0]], %[[C0]] : f32
// CHECK-NEXT:      %[[TMP3:.*]] = buffer.load @buf4[i1 + 64*i0] : f32
// CHECK-NEXT:      %[[C1:.*]] = arith.constant 0.707106769 : f32
// CHECK-NEXT:      %[[TMP5:.*]] = arith.mulf %[[TMP3]], %[[C1]] : f32
// CHECK-NEXT:      %[[TMP6:.*]] = math.erf %[[TMP5]] : f32
// CHECK-NEXT:      %[[C2:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[TMP8:.*]] = arith.addf %[[TMP6]], %[[C2]] : f32
// CHECK-NEXT:      %[[TMP9:.*]] = arith.mulf %[[TMP2]], %[[TMP8]] : f32
// CHECK-NEXT:      buffer.store @buf5[i1 + 64*i0], %[[TMP9]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    buffer.output @buf5
// CHECK-NEXT:  }

// The gelu node keeps the location of the op that consumed the others (Inductor's origin_node).
// LOC: buffer.extern "buf4" {{.*}} loc("addmm_4")
// LOC: buffer.computed "buf5" {{.*}} {
// LOC: } loc("mul_2")
func.func @forward(%primals_1: tensor<64x32xf32> loc("primals_1"), %primals_2: tensor<64xf32> loc("primals_2"), %primals_3: tensor<8x32xf32> loc("primals_3"), %primals_4: tensor<64x64xf32> loc("primals_4"), %primals_5: tensor<64xf32> loc("primals_5"), %primals_6: tensor<64x64xf32> loc("primals_6"), %primals_7: tensor<64xf32> loc("primals_7"), %primals_8: tensor<64x64xf32> loc("primals_8"), %primals_9: tensor<64xf32> loc("primals_9"), %primals_10: tensor<64x64xf32> loc("primals_10"), %primals_11: tensor<64xf32> loc("primals_11")) -> tensor<8x64xf32> {
  %t0 = loops.pointwise [32, 64] origins ["permute"] -> tensor<32x64xf32> {
    %0 = loops.load %primals_1[i1, i0] : tensor<64x32xf32>
    loops.yield %0 : f32
  } loc("permute")
  %addmm0 = loops.extern "addmm.default" (%primals_2, %primals_3, %t0) {args = [#aten.tensor, #aten.tensor, #aten.tensor]} : (tensor<64xf32>, tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32> loc("addmm")
  %t1 = loops.pointwise [64, 64] origins ["permute"] -> tensor<64x64xf32> {
    %0 = loops.load %primals_4[i1, i0] : tensor<64x64xf32>
    loops.yield %0 : f32
  } loc("permute_1")
  %addmm1 = loops.extern "addmm.default" (%primals_5, %addmm0, %t1) {args = [#aten.tensor, #aten.tensor, #aten.tensor]} : (tensor<64xf32>, tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("addmm_1")
  %t2 = loops.pointwise [64, 64] origins ["permute"] -> tensor<64x64xf32> {
    %0 = loops.load %primals_6[i1, i0] : tensor<64x64xf32>
    loops.yield %0 : f32
  } loc("permute_2")
  %addmm2 = loops.extern "addmm.default" (%primals_7, %addmm1, %t2) {args = [#aten.tensor, #aten.tensor, #aten.tensor]} : (tensor<64xf32>, tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("addmm_2")
  %t3 = loops.pointwise [64, 64] origins ["permute"] -> tensor<64x64xf32> {
    %0 = loops.load %primals_8[i1, i0] : tensor<64x64xf32>
    loops.yield %0 : f32
  } loc("permute_3")
  %addmm3 = loops.extern "addmm.default" (%primals_9, %addmm2, %t3) {args = [#aten.tensor, #aten.tensor, #aten.tensor]} : (tensor<64xf32>, tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("addmm_3")
  %t4 = loops.pointwise [64, 64] origins ["permute"] -> tensor<64x64xf32> {
    %0 = loops.load %primals_10[i1, i0] : tensor<64x64xf32>
    loops.yield %0 : f32
  } loc("permute_4")
  %addmm4 = loops.extern "addmm.default" (%primals_11, %addmm3, %t4) {args = [#aten.tensor, #aten.tensor, #aten.tensor]} : (tensor<64xf32>, tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32> loc("addmm_4")
  %mul = loops.pointwise [8, 64] origins ["gelu"] -> tensor<8x64xf32> {
    %0 = loops.load %addmm4[i0, i1] : tensor<8x64xf32>
    %1 = arith.constant 5.000000e-01 : f32
    %2 = arith.mulf %0, %1 : f32
    loops.yield %2 : f32
  } loc("mul")
  %mul_1 = loops.pointwise [8, 64] origins ["gelu"] -> tensor<8x64xf32> {
    %0 = loops.load %addmm4[i0, i1] : tensor<8x64xf32>
    %1 = arith.constant 0.7071067811865476 : f32
    %2 = arith.mulf %0, %1 : f32
    loops.yield %2 : f32
  } loc("mul_1")
  %erf = loops.pointwise [8, 64] origins ["gelu"] -> tensor<8x64xf32> {
    %0 = loops.load %mul_1[i0, i1] : tensor<8x64xf32>
    %1 = math.erf %0 : f32
    loops.yield %1 : f32
  } loc("erf")
  %add = loops.pointwise [8, 64] origins ["gelu"] -> tensor<8x64xf32> {
    %0 = loops.load %erf[i0, i1] : tensor<8x64xf32>
    %1 = arith.constant 1.000000e+00 : f32
    %2 = arith.addf %0, %1 : f32
    loops.yield %2 : f32
  } loc("add")
  %mul_2 = loops.pointwise [8, 64] origins ["gelu"] -> tensor<8x64xf32> {
    %0 = loops.load %mul[i0, i1] : tensor<8x64xf32>
    %1 = loops.load %add[i0, i1] : tensor<8x64xf32>
    %2 = arith.mulf %0, %1 : f32
    loops.yield %2 : f32
  } loc("mul_2")
  func.return %mul_2 : tensor<8x64xf32>
}
