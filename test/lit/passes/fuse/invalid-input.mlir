// RUN: mlc-opt %s --verify-diagnostics --fuse

// fuse takes buffer IR; any other stage fails at its first op instead of passing through.

func.func @aten(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{fuse expects buffer IR (run --lower-aten, --inline, --realize first); found aten.neg}}
  %0 = aten.neg %x : (tensor<8xf32>) -> tensor<8xf32>
  func.return %0 : tensor<8xf32>
}
