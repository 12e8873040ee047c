// RUN: mlc-opt %s --split-input-file --verify-diagnostics --split-reductions

// split-reductions takes buffer IR; any other stage fails at its first op instead of passing through.

func.func @aten(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{split-reductions expects buffer IR (run --lower-aten, --inline, --realize first); found aten.neg}}
  %0 = aten.neg %x : (tensor<8xf32>) -> tensor<8xf32>
  func.return %0 : tensor<8xf32>
}

// -----

func.func @loops(%x: tensor<8x64xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{split-reductions expects buffer IR (run --inline, --realize first); found loops.reduction}}
  %0 = loops.reduction [8] over [64] -> tensor<8xf32> {
    %1 = loops.load %x[i0, r0_0] : tensor<8x64xf32>
    %2 = loops.reduce sum %1 : f32 -> f32
    loops.yield %2 : f32
  }
  func.return %0 : tensor<8xf32>
}

// -----

// A function without loops ops is loops IR too: --realize makes it a graph.
// expected-error@+1 {{split-reductions expects buffer IR (run --inline, --realize first); found func.func}}
func.func @identity(%x: tensor<8xf32>) -> tensor<8xf32> {
  func.return %x : tensor<8xf32>
}

// -----

// expected-error@+1 {{split-reductions expects buffer IR (this is triton IR, the output of --convert-to-triton); found triton.wrapper}}
triton.wrapper @call {
  triton.input "x" #buffer.layout<[8], [1], f32>
  triton.return @x
}
