// RUN: mlc-opt %s | filecheck %s
// RUN: mlc-opt %s | mlc-opt | filecheck %s

// Expressions print in Inductor's notation, simplified by sympy, and read back identically.
// CHECK-LABEL: func.func @notation
func.func @notation(%x: tensor<512xf32>) {
  %0 = loops.pointwise [8, 64] -> tensor<8x64xf32> {
    // CHECK: loops.load %x[i1 + 64*i0]
    %a = loops.load %x[64*i0 + i1] : tensor<512xf32>
    // CHECK: loops.load %x[ModularIndexing(i1 + 64*i0, 1, 64)]
    %b = loops.load %x[ModularIndexing(i1 + 64*i0, 1, 64)] : tensor<512xf32>
    // FloorDiv folds exact multiples and constants.
    // CHECK: loops.load %x[2*i0]
    %c = loops.load %x[FloorDiv(128*i0, 64)] : tensor<512xf32>
    // CHECK: loops.load %x[511 - i1]
    %d = loops.load %x[-(i1 - 511)] : tensor<512xf32>
    // CHECK: loops.load %x[Max(0, i1 - 4)]
    %e = loops.load %x[Max(0, i1 - 4)] : tensor<512xf32>
    // CHECK: loops.load %x[3 + 3*i0 + FloorDiv(i1, 2)]
    %f = loops.load %x[3*(i0 + 1) + FloorDiv(i1, 2)] : tensor<512xf32>
    loops.yield %a : f32
  }
  func.return
}
