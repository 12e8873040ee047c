// RUN: mlc-opt %s --split-input-file --verify-diagnostics -p cse-aten

// cse-aten takes aten IR (it runs before --lower-aten); any other stage fails at its first
// op instead of passing through.

func.func @loops(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{cse-aten expects aten IR (this is loops IR, the output of --lower-aten); found loops.pointwise}}
  %0 = loops.pointwise [8] -> tensor<8xf32> {
    %1 = loops.load %x[i0] : tensor<8xf32>
    loops.yield %1 : f32
  }
  func.return %0 : tensor<8xf32>
}

// -----

// expected-error@+1 {{cse-aten expects aten IR (this is buffer IR, the output of --realize); found buffer.graph}}
buffer.graph @f {
  buffer.input "x" #buffer.layout<[8], [1], f32>
  buffer.output @x
}

// -----

// expected-error@+1 {{cse-aten expects aten IR (this is triton IR, the output of --convert-to-triton); found triton.wrapper}}
triton.wrapper @call {
  triton.input "x" #buffer.layout<[8], [1], f32>
  triton.return @x
}
