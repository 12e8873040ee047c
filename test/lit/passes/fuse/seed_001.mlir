// RUN: mlc-opt %s -p 'lower-aten,inline,realize,reorder-loops,fuse{explain=true}' | filecheck %s
// RUN: mlc-opt %s -p 'lower-aten,inline,realize,reorder-loops,fuse,convert-to-triton' | filecheck %s --check-prefix=KERNEL

// Seed 001 ("how are sum and sigmoid fused"): the sigmoid reads the sum at the element the sum
// writes (buf0[i0], one value per row), so it runs in the reduction's kernel on the reduced
// column; buf0 is read only there and is never stored.
// CHECK-LABEL: buffer.graph @seed_001
// CHECK:       buffer.fused {
// CHECK-NEXT:    buffer.computed "buf0" {{.*}} ranges [3] reduce [9]
// CHECK:         buffer.computed "buf1" {{.*}} ranges [3] origins ["sigmoid"]
// CHECK:       } attributes {fusion = ["candidate buf0 + buf1: score (0, 12, -1), saves 1.50 us", "fused buf0 + buf1"]}

// KERNEL:      triton.kernel @triton_per_fused_add_sigmoid_sum_0 persistent_reduction({{.*}}) xnumel 3 r0_numel 9
// KERNEL:        triton.reduce sum
// KERNEL:        math.exp
// KERNEL:        triton.store %out_ptr0[x0]
// KERNEL-NOT:  triton.kernel
// KERNEL:      triton.wrapper @call
// KERNEL-NEXT:   triton.input "x"
// KERNEL-NEXT:   triton.input "y"
// KERNEL-NEXT:   triton.alloc "buf1"
// KERNEL-NEXT:   triton.launch @triton_per_fused_add_sigmoid_sum_0(@x, @y, @buf1) xnumel 3 r0_numel 9
// KERNEL-NEXT:   triton.free @x, @y
// KERNEL-NEXT:   triton.return @buf1
func.func @seed_001(%x: tensor<3x9xf32> loc("x"), %y: tensor<3x9xf32> loc("y")) -> tensor<3xf32> {
  %0 = aten.add.Tensor %x, %y : (tensor<3x9xf32>, tensor<3x9xf32>) -> tensor<3x9xf32> loc("add")
  %1 = aten.sum.dim_IntList %0 {dim = array<i64: 1>} : (tensor<3x9xf32>) -> tensor<3xf32> loc("sum_1")
  %2 = aten.sigmoid %1 : (tensor<3xf32>) -> tensor<3xf32> loc("sigmoid")
  func.return %2 : tensor<3xf32> loc("output")
}
