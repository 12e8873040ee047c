// RUN: mlc-opt %s -p 'lower-aten,inline,realize,deps' | filecheck %s

// Seed 002: a convolution without bias (an extern) over [1, 10, 88, 78], then the bias added
// per channel. The extern reads its arguments and writes its result whole (StarDep). The add
// reads buf0 and writes buf1 contiguously: their three loops merge into one of 68640. The
// bias read steps by 1 along the channel loop and not at all along the other two, so only
// those two merge, into a trailing loop the index does not use, which is dropped: {c0: 10}
// (today's Inductor; the seed's older one printed size=(10, 6864)).
func.func @forward(%primals_1: tensor<10x3x5x5xf32> loc("primals_1"), %primals_2: tensor<10xf32> loc("primals_2"), %primals_3: tensor<1x3x92x82xf32> loc("primals_3")) -> tensor<1x10x88x78xf32> {
  %c = aten.convolution %primals_3, %primals_1, none {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x3x92x82xf32>, tensor<10x3x5x5xf32>) -> tensor<1x10x88x78xf32> loc("convolution")
  %b = aten.view %primals_2 {size = array<i64: 10, 1, 1>} : (tensor<10xf32>) -> tensor<10x1x1xf32> loc("view")
  %s = aten.add.Tensor %c, %b : (tensor<1x10x88x78xf32>, tensor<10x1x1xf32>) -> tensor<1x10x88x78xf32> loc("add")
  func.return %s : tensor<1x10x88x78xf32> loc("output")
}

// CHECK-LABEL: buffer.graph @forward
// CHECK:       buffer.extern "buf0" = "convolution.default"
// CHECK-SAME:    reads = [#buffer.star<"primals_3">, #buffer.star<"primals_1">]
// CHECK-SAME:    writes = [#buffer.star<"buf0">]
// CHECK:       buffer.computed "buf1"
// CHECK:       } attributes {
// CHECK-SAME:    reads = [#buffer.memory<"buf0", c0, {c0: 68640}>, #buffer.memory<"primals_2", c0, {c0: 10}>]
// CHECK-SAME:    writes = [#buffer.memory<"buf1", c0, {c0: 68640}>]
