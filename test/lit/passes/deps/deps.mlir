// RUN: mlc-opt %s --split-input-file -p 'lower-aten,inline,realize,deps' | filecheck %s

// Seed 001: sigmoid(sum(x + y, 1)) on [3, 9]. The reduction reads x and y contiguously over
// its [3] x [9] loops: one loop of 27. It writes buf0 at i0: the reduced loop is trailing and
// unused, so the write is {c0: 3}, the very dep the sigmoid reads (what --fuse will match).
// CHECK-LABEL: buffer.graph @seed_001
// CHECK:       buffer.computed "buf0"
// CHECK:       } attributes {reads = [#buffer.memory<"x", c0, {c0: 27}>, #buffer.memory<"y", c0, {c0: 27}>], writes = [#buffer.memory<"buf0", c0, {c0: 3}>]}
// CHECK:       buffer.computed "buf1"
// CHECK:       } attributes {reads = [#buffer.memory<"buf0", c0, {c0: 3}>], writes = [#buffer.memory<"buf1", c0, {c0: 3}>]}
func.func @seed_001(%x: tensor<3x9xf32> loc("x"), %y: tensor<3x9xf32> loc("y")) -> tensor<3xf32> {
  %0 = aten.add.Tensor %x, %y : (tensor<3x9xf32>, tensor<3x9xf32>) -> tensor<3x9xf32> loc("add")
  %1 = aten.sum.dim_IntList %0 {dim = array<i64: 1>} : (tensor<3x9xf32>) -> tensor<3xf32> loc("sum_1")
  %2 = aten.sigmoid %1 : (tensor<3xf32>) -> tensor<3xf32> loc("sigmoid")
  func.return %2 : tensor<3xf32> loc("output")
}

// -----

// A transposed read does not merge (its strides are not the contiguous order's); the
// contiguous write does. A reduction over the first dim of [64, 32] reads with stride 32
// along the reduced loop: {c0: 32, c1: 64} with the index c0 + 32*c1.
// CHECK-LABEL: buffer.graph @strides
// CHECK:       buffer.computed "buf0"
// CHECK:       } attributes {reads = [#buffer.memory<"x", c0 + 64*c1, {c0: 64, c1: 32}>], writes = [#buffer.memory<"buf0", c0, {c0: 2048}>]}
// CHECK:       buffer.computed "buf1"
// CHECK:       } attributes {reads = [#buffer.memory<"buf0", c0 + 32*c1, {c0: 32, c1: 64}>], writes = [#buffer.memory<"buf1", c0, {c0: 32}>]}
func.func @strides(%x: tensor<32x64xf32> loc("x")) -> (tensor<64x32xf32>, tensor<32xf32>) {
  %t = aten.permute %x {dims = array<i64: 1, 0>} : (tensor<32x64xf32>) -> tensor<64x32xf32> loc("permute")
  %e = aten.exp %t : (tensor<64x32xf32>) -> tensor<64x32xf32> loc("exp")
  %s = aten.sum.dim_IntList %e {dim = array<i64: 0>} : (tensor<64x32xf32>) -> tensor<32xf32> loc("sum")
  func.return %e, %s : tensor<64x32xf32>, tensor<32xf32> loc("output")
}

// -----

// A view reads its source whole; the extern reading the view reads the view's name.
// CHECK-LABEL: buffer.graph @view
// CHECK:       buffer.extern "buf0" = "mm.default" {{.*}} attributes {reads = [#buffer.star<"x">, #buffer.star<"w">], writes = [#buffer.star<"buf0">]}
// CHECK-NEXT:  buffer.view "view0" = @buf0 {{.*}} {reads = [#buffer.star<"buf0">], writes = [#buffer.star<"view0">]}
// CHECK-NEXT:  buffer.extern "buf1" = "mm.default" {{.*}} attributes {reads = [#buffer.star<"view0">, #buffer.star<"w">], writes = [#buffer.star<"buf1">]}
func.func @view(%x: tensor<8x8xf32> loc("x"), %w: tensor<8x8xf32> loc("w")) -> tensor<8x8xf32> {
  %m = aten.mm %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc("mm")
  %t = aten.permute %m {dims = array<i64: 1, 0>} : (tensor<8x8xf32>) -> tensor<8x8xf32> loc("permute")
  %s = aten.mm %t, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32> loc("mm2")
  func.return %s : tensor<8x8xf32> loc("output")
}
