// RUN: mlc-opt %s --verify-diagnostics --overlap-comm

// overlap-comm takes buffer IR (after --fuse); any other stage fails at its first op.

func.func @aten(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{overlap-comm expects buffer IR (run --lower-aten, --inline, --realize first); found aten.call}}
  %0 = aten.call "_c10d_functional::all_reduce" (%x) {args = [#aten.tensor, "sum", "0"]} : (tensor<8xf32>) -> tensor<8xf32>
  func.return %0 : tensor<8xf32>
}
