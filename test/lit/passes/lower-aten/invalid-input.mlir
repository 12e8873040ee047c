// RUN: mlc-opt %s --split-input-file --verify-diagnostics --lower-aten

// lower-aten takes aten IR (and leaves loops ops, its own output, alone); IR of a later stage
// fails at its first op instead of passing through unchanged.

// expected-error@+1 {{lower-aten expects aten IR (this is buffer IR, the output of --realize); found buffer.graph}}
buffer.graph @f {
  buffer.input "x" #buffer.layout<[8], [1], f32>
  buffer.output @x
}

// -----

// expected-error@+1 {{lower-aten expects aten IR (this is triton IR, the output of --convert-to-triton); found triton.wrapper}}
triton.wrapper @call {
  triton.input "x" #buffer.layout<[8], [1], f32>
  triton.return @x
}

// -----

// A dimension the tensor does not have is the aten verifier's error, before any lowering.
func.func @sum_missing_dim(%x: tensor<8x64xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{aten.sum.dim_IntList: dim 2 is out of range for a rank-2 tensor (expected -2 to 1)}}
  %0 = aten.sum.dim_IntList %x {dim = array<i64: 2>} : (tensor<8x64xf32>) -> tensor<8xf32>
  func.return %0 : tensor<8xf32>
}

// -----

// A dynamic dim must be named: without a #sym.sizes encoding the pass fails at the op.
func.func @unnamed(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{lower-aten: aten.exp at loc("exp"): dynamic dims of tensor<?x64xf32> need a #sym.sizes<[...]> encoding naming their sizes}}
  %e = aten.exp %x : (tensor<?x64xf32>) -> tensor<?x64xf32> loc("exp")
  func.return %e : tensor<?x64xf32>
}
