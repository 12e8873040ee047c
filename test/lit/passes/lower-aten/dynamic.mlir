// RUN: mlc-opt %s --lower-aten --verify-diagnostics

// Dynamic shapes are not supported yet: the pass fails at the op that has one.
func.func @dynamic_batch(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{lower-aten: aten.exp at loc("exp") has a dynamic shape (tensor<?x64xf32>); dynamic shapes are not supported yet}}
  %e = aten.exp %x : (tensor<?x64xf32>) -> tensor<?x64xf32> loc("exp")
  func.return %e : tensor<?x64xf32>
}
