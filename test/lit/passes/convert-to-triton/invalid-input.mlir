// RUN: mlc-opt %s --split-input-file --verify-diagnostics --convert-to-triton

// convert-to-triton takes buffer IR; any other stage fails at its first op instead of passing through.

func.func @aten(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{convert-to-triton expects buffer IR (run --lower-aten, --inline, --realize first); found aten.neg}}
  %0 = aten.neg %x : (tensor<8xf32>) -> tensor<8xf32>
  func.return %0 : tensor<8xf32>
}

// -----

func.func @loops(%x: tensor<8x64xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{convert-to-triton expects buffer IR (run --inline, --realize first); found loops.reduction}}
  %0 = loops.reduction [8] over [64] -> tensor<8xf32> {
    %1 = loops.load %x[i0, r0_0] : tensor<8x64xf32>
    %2 = loops.reduce sum %1 : f32 -> f32
    loops.yield %2 : f32
  }
  func.return %0 : tensor<8xf32>
}

// -----

// A function without loops ops is loops IR too: --realize makes it a graph.
// expected-error@+1 {{convert-to-triton expects buffer IR (run --inline, --realize first); found func.func}}
func.func @identity(%x: tensor<8xf32>) -> tensor<8xf32> {
  func.return %x : tensor<8xf32>
}

// -----

// expected-error@+1 {{convert-to-triton expects buffer IR (this is triton IR, the output of --convert-to-triton); found triton.wrapper}}
triton.wrapper @call {
  triton.input "x" #buffer.layout<[8], [1], f32>
  triton.return @x
}

// -----

// Buffer IR with an op no kernel can compute: the error names the node and the op. (A
// function declaration is no stage: it does not count as loops IR.)
buffer.graph @f {
  buffer.input "x" #buffer.layout<[8], [1], f32>
  buffer.computed "buf0" #buffer.layout<[8], [1], f32> ranges [8] {
    %0 = buffer.load @x[i0] : f32
    // expected-error@+1 {{convert-to-triton: 'buf0': func.call has no Triton form}}
    %1 = func.call @g(%0) : (f32) -> f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.output @buf0
}
func.func private @g(f32) -> f32
