// mlc-reduce's test input: a function of unrelated ops and one op lower-aten rejects (a sum
// over a tensor with a dynamic dimension); the reduced module keeps that op and little else.
func.func @forward(%x: tensor<8x64xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>, %d: tensor<?x32xf32>) -> (tensor<8x32xf32>, tensor<8xf32>, tensor<8x64xf32>) {
  %mm = aten.mm %x, %w : (tensor<8x64xf32>, tensor<64x32xf32>) -> tensor<8x32xf32> loc("mm")
  %add = aten.add.Tensor %mm, %b : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32> loc("add")
  %relu = aten.relu %add : (tensor<8x32xf32>) -> tensor<8x32xf32> loc("relu")
  %sig = aten.sigmoid %relu : (tensor<8x32xf32>) -> tensor<8x32xf32> loc("sigmoid")
  %mul = aten.mul.Tensor %sig, %relu : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32> loc("mul")
  %dyn = aten.sum.dim_IntList %d {dim = array<i64: 0>} : (tensor<?x32xf32>) -> tensor<32xf32> loc("dyn_sum")
  %add2 = aten.add.Tensor %mul, %dyn : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32> loc("add_1")
  %exp = aten.exp %x : (tensor<8x64xf32>) -> tensor<8x64xf32> loc("exp")
  %amax = aten.amax %exp {dim = array<i64: 1>, keepdim = true} : (tensor<8x64xf32>) -> tensor<8x1xf32> loc("amax")
  %sub = aten.sub.Tensor %exp, %amax : (tensor<8x64xf32>, tensor<8x1xf32>) -> tensor<8x64xf32> loc("sub")
  %tanh = aten.tanh %sub : (tensor<8x64xf32>) -> tensor<8x64xf32> loc("tanh")
  %neg = aten.neg %tanh : (tensor<8x64xf32>) -> tensor<8x64xf32> loc("neg")
  %sum = aten.sum.dim_IntList %neg {dim = array<i64: 1>} : (tensor<8x64xf32>) -> tensor<8xf32> loc("sum")
  %sqrt = aten.sqrt %sum : (tensor<8xf32>) -> tensor<8xf32> loc("sqrt")
  %abs = aten.abs %add2 : (tensor<8x32xf32>) -> tensor<8x32xf32> loc("abs")
  func.return %abs, %sqrt, %neg : tensor<8x32xf32>, tensor<8xf32>, tensor<8x64xf32>
}
