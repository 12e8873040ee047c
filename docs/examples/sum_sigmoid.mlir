builtin.module {
  func.func @forward(%x: tensor<3x9xf32> loc("x"), %y: tensor<3x9xf32> loc("y")) -> tensor<3xf32> {
    %0 = aten.add.Tensor %x, %y : (tensor<3x9xf32>, tensor<3x9xf32>) -> tensor<3x9xf32> loc("add")
    %1 = aten.sum.dim_IntList %0 {dim = array<i64: 1>} : (tensor<3x9xf32>) -> tensor<3xf32> loc("sum_1")
    %2 = aten.sigmoid %1 : (tensor<3xf32>) -> tensor<3xf32> loc("sigmoid")
    func.return %2 : tensor<3xf32> loc("output")
  } loc(unknown)
} loc(unknown)
