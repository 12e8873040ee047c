// RUN: mlc-opt %s --lower-aten --inline --realize | filecheck %s
// RUN: mlc-opt %s -p 'lower-aten,inline,realize,split-reductions,convert-to-triton' | filecheck %s --check-prefix=KERNEL

// Seed 001: `torch.sigmoid(torch.sum(x + y, 1))` on [3, 9] inputs. The add is inlined into the
// reduction's body; the sum is realized as buf0, a reduction with ranges [3] over [9] whose
// body loads both inputs at r0_0 + 9*i0; the sigmoid reads buf0 at i0.
func.func @forward(%x: tensor<3x9xf32> loc("x"), %y: tensor<3x9xf32> loc("y")) -> tensor<3xf32> {
  %0 = aten.add.Tensor %x, %y : (tensor<3x9xf32>, tensor<3x9xf32>) -> tensor<3x9xf32> loc("add")
  %1 = aten.sum.dim_IntList %0 {dim = array<i64: 1>} : (tensor<3x9xf32>) -> tensor<3xf32> loc("sum_1")
  %2 = aten.sigmoid %1 : (tensor<3xf32>) -> tensor<3xf32> loc("sigmoid")
  func.return %2 : tensor<3xf32> loc("output")
}

// CHECK-LABEL: buffer.graph @forward
// CHECK:       buffer.computed "buf0" #buffer.layout<[3], [1], f32> ranges [3] reduce [9] origins ["add", "sum"] {
// CHECK-NEXT:    %[[X:.*]] = buffer.load @x[r0_0 + 9*i0] : f32
// CHECK-NEXT:    %[[Y:.*]] = buffer.load @y[r0_0 + 9*i0] : f32
// CHECK-NEXT:    %[[ADD:.*]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK-NEXT:    %[[SUM:.*]] = buffer.reduce sum %[[ADD]] : f32 -> f32
// CHECK-NEXT:    buffer.store @buf0[i0], %[[SUM]] : f32
// CHECK:       buffer.computed "buf1" #buffer.layout<[3], [1], f32> ranges [3] origins ["sigmoid"] {
// CHECK-NEXT:    buffer.load @buf0[i0] : f32
// CHECK:         math.exp
// CHECK:       buffer.output @buf1

// A 9-long row fits one block: a persistent reduction (R0_BLOCK = 16), then the sigmoid.
// KERNEL:      triton.kernel @triton_per_fused_add_sum_0 persistent_reduction(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 3 r0_numel 9
// KERNEL:        triton.load %in_ptr0[r0_0 + 9*x0] mask r0_mask other 0.000000e+00
// KERNEL:        triton.load %in_ptr1[r0_0 + 9*x0] mask r0_mask other 0.000000e+00
// KERNEL:        triton.reduce sum %{{.*}} mask r0_mask : f32 -> f32
// KERNEL:        triton.store %out_ptr0[x0]
// KERNEL:      triton.kernel @triton_poi_fused_sigmoid_1 pointwise
// KERNEL:      triton.launch @triton_per_fused_add_sum_0(@x, @y, @buf0) xnumel 3 r0_numel 9
// KERNEL:      triton.launch @triton_poi_fused_sigmoid_1(@buf0, @buf1) xnumel 3
