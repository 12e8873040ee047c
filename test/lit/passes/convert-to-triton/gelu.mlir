// RUN: mlc-opt %s --convert-to-triton | filecheck %s
// RUN: mlc-opt %s --convert-to-triton | mlc-opt | filecheck %s

// Seed 000: Linear -> gelu. The addmm stays an extern call writing buf4; the gelu body (tmp0 ..
// tmp9 of the seed, both loads of buf4 CSE'd into one) becomes one pointwise kernel over
// 8*64 = 512 elements, xindex split into x0 (the 64-wide inner dim) and x1.

buffer.graph @forward {
  buffer.input "primals_1" #buffer.layout<[64, 32], [32, 1], f32>
  buffer.input "primals_2" #buffer.layout<[64], [1], f32>
  buffer.input "primals_3" #buffer.layout<[8, 32], [32, 1], f32>
  buffer.view "view0" = @primals_1 #buffer.layout<[32, 64], [1, 32], f32>
  buffer.extern "buf4" = "addmm.default" {args = [@primals_2, @primals_3, @view0]} : #buffer.layout<[8, 64], [64, 1], f32>
  buffer.computed "buf5" #buffer.layout<[8, 64], [64, 1], f32> ranges [8, 64] origins ["gelu"] {
    %0 = buffer.load @buf4[i1 + 64*i0] : f32
    %1 = arith.constant 0.5 : f32
    %2 = arith.mulf %0, %1 : f32
    %3 = buffer.load @buf4[i1 + 64*i0] : f32
    %4 = arith.constant 0.7071067811865476 : f32
    %5 = arith.mulf %3, %4 : f32
    %6 = math.erf %5 : f32
    %7 = arith.constant 1.0 : f32
    %8 = arith.addf %6, %7 : f32
    %9 = arith.mulf %2, %8 : f32
    buffer.store @buf5[i1 + 64*i0], %9 : f32
  }
  buffer.output @buf5, @buf4
}

// CHECK:      builtin.module {
// CHECK-NEXT:   triton.kernel @triton_poi_fused_gelu_0 pointwise(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 512 origins ["gelu"] configs [#triton.config<XBLOCK = 256, num_warps = 4, num_stages = 1>, #triton.config<XBLOCK = 128, num_warps = 4, num_stages = 1>] {
// CHECK-NEXT:     %[[TMP0:.*]] = triton.load %in_ptr0[xindex] mask xmask : f32
// CHECK-NEXT:     %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:     %[[TMP2:.*]] = arith.mulf %[[TMP0]], %[[HALF]] : f32
// CHECK-NEXT:     %[[RSQRT2:.*]] = arith.constant 0.707106769 : f32
// CHECK-NEXT:     %[[TMP5:.*]] = arith.mulf %[[TMP0]], %[[RSQRT2]] : f32
// CHECK-NEXT:     %[[TMP6:.*]] = math.erf %[[TMP5]] : f32
// CHECK-NEXT:     %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:     %[[TMP8:.*]] = arith.addf %[[TMP6]], %[[ONE]] : f32
// CHECK-NEXT:     %[[TMP9:.*]] = arith.mulf %[[TMP2]], %[[TMP8]] : f32
// CHECK-NEXT:     triton.store %out_ptr0[xindex], %[[TMP9]] mask xmask : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   triton.wrapper @call {
// CHECK-NEXT:     triton.input "primals_1" #buffer.layout<[64, 32], [32, 1], f32>
// CHECK-NEXT:     triton.input "primals_2" #buffer.layout<[64], [1], f32>
// CHECK-NEXT:     triton.input "primals_3" #buffer.layout<[8, 32], [32, 1], f32>
// CHECK-NEXT:     triton.view "view0" = @primals_1 #buffer.layout<[32, 64], [1, 32], f32>
// CHECK-NEXT:     triton.free @primals_1
// CHECK-NEXT:     triton.extern "buf4" = "addmm.default" {args = [@primals_2, @primals_3, @view0]} : #buffer.layout<[8, 64], [64, 1], f32>
// CHECK-NEXT:     triton.free @primals_2, @primals_3, @view0
// CHECK-NEXT:     triton.alloc "buf5" #buffer.layout<[8, 64], [64, 1], f32>
// CHECK-NEXT:     triton.launch @triton_poi_fused_gelu_0(@buf4, @buf5) xnumel 512
// CHECK-NEXT:     triton.return @buf5, @buf4
// CHECK-NEXT:   }
// CHECK-NEXT: }
