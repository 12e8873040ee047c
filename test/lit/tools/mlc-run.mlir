// RUN: mlc-run %s --check | filecheck %s
// RUN: mlc-opt %s -p 'fold-addmm,lower-aten,inline,realize' -o %t.buffer.mlir
// RUN: mlc-run %t.buffer.mlir --check --reference %s | filecheck %s --check-prefix=BUFFER
// RUN: sed 's/arith.divf/arith.mulf/' %t.buffer.mlir > %t.wrong.mlir
// RUN: not mlc-run %t.wrong.mlir --check --reference %s 2>&1 | filecheck %s --check-prefix=WRONG

// A softmax: mlc-run compiles the aten IR, runs it on random inputs and compares with eager
// PyTorch; the buffer IR made from it checks against it through --reference, and fails once
// its last node multiplies by the row sum instead of dividing.
// CHECK:      aten IR; passes: cse-aten,fold-addmm,pad-mm,lower-aten,inline,propagate-indices,realize,split-reductions
// CHECK:      input {{.*}}: [4, 16] float32
// CHECK-NEXT: output 0 {{.*}}: [4, 16] float32  sum=4 mean=0.0625
// CHECK-NEXT: check output 0: ok
// CHECK-NEXT: check: passed: 1 of 1 outputs match PyTorch eager
// BUFFER:     buffer IR; passes: split-reductions,
// BUFFER:     check: passed: 1 of 1 outputs match PyTorch eager
// WRONG:      check output 0: MISMATCH with PyTorch eager
// WRONG:      error: {{.*}}: outputs differ from PyTorch eager
func.func @softmax(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = aten._softmax %x {dim = 1 : i64, half_to_float = false} : (tensor<4x16xf32>) -> tensor<4x16xf32>
  func.return %0 : tensor<4x16xf32>
}
