// RUN: mlc-opt %s --split-input-file --verify-diagnostics --realize

// realize takes loops IR; any other stage fails at its first op instead of passing through.

func.func @aten(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{realize expects loops IR (run --lower-aten first); found aten.neg}}
  %0 = aten.neg %x : (tensor<8xf32>) -> tensor<8xf32>
  func.return %0 : tensor<8xf32>
}

// -----

// expected-error@+1 {{realize expects loops IR (this is buffer IR, the output of --realize); found buffer.graph}}
buffer.graph @f {
  buffer.input "x" #buffer.layout<[8], [1], f32>
  buffer.output @x
}

// -----

// expected-error@+1 {{realize expects loops IR (this is triton IR, the output of --convert-to-triton); found triton.wrapper}}
triton.wrapper @call {
  triton.input "x" #buffer.layout<[8], [1], f32>
  triton.return @x
}
