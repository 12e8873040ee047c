// RUN: mlc-opt %s -p inline | filecheck %s

// Dynamic shapes: inlining composes index maps over symbolic sizes. The view to [s0*s1, 32],
// the add and relu, and the view back to [s0, s1, 32] inline into their readers: four
// stored ops remain (the softmax's two reductions and its output, the column sum), each
// loading the input through both views' digits (realize folds them to flat indices).
// CHECK:      loops.reduction [s0, s1, 1] over [32] origins ["_softmax", "add", "relu", "view"]
// CHECK-NEXT:   loops.load %arg2.1[FloorDiv(32*i1 + 32*FloorDiv(r0_0, 32) + 32*i0*s1 + ModularIndexing(r0_0, 1, 32), 32*s1), ModularIndexing(32*i1 + 32*FloorDiv(r0_0, 32) + 32*i0*s1 + ModularIndexing(r0_0, 1, 32), 32, s1), ModularIndexing(ModularIndexing(r0_0, 1, 32), 1, 32)]
// CHECK:      loops.reduction [s0, s1, 1] over [32]
// CHECK:      loops.pointwise [s0, s1, 32] origins ["_softmax", "add", "relu", "view"]
// CHECK:      loops.reduction [s0, 32] over [s1] origins ["add", "relu", "sum", "view"]
// CHECK-NOT:  loops.pointwise
// CHECK:      func.return
func.func @forward(%arg0.1: !sym.int<s0>, %arg1.1: !sym.int<s1>, %arg2.1: tensor<?x?x32xf32, #sym.sizes<[s0, s1, 32]>>, %arg3.1: tensor<32xf32>) -> (tensor<?x?x32xf32, #sym.sizes<[s0, s1, 32]>>, tensor<?x32xf32, #sym.sizes<[s0, 32]>>) {
  %0 = loops.pointwise [s0*s1, 32] origins ["view"] -> tensor<?x32xf32, #sym.sizes<[s0*s1, 32]>> {
    %1 = loops.load %arg2.1[FloorDiv(i1 + 32*i0, 32*s1), ModularIndexing(i1 + 32*i0, 32, s1), ModularIndexing(i1, 1, 32)] : tensor<?x?x32xf32, #sym.sizes<[s0, s1, 32]>>
    loops.yield %1 : f32
  }
  %2 = loops.pointwise [s0*s1, 32] origins ["add"] -> tensor<?x32xf32, #sym.sizes<[s0*s1, 32]>> {
    %3 = loops.load %0[i0, i1] : tensor<?x32xf32, #sym.sizes<[s0*s1, 32]>>
    %4 = loops.load %arg3.1[i1] : tensor<32xf32>
    %5 = arith.addf %3, %4 : f32
    loops.yield %5 : f32
  }
  %6 = loops.pointwise [s0*s1, 32] origins ["relu"] -> tensor<?x32xf32, #sym.sizes<[s0*s1, 32]>> {
    %7 = loops.load %2[i0, i1] : tensor<?x32xf32, #sym.sizes<[s0*s1, 32]>>
    %8 = arith.constant 0.000000e+00 : f32
    %9 = arith.maximumf %7, %8 : f32
    loops.yield %9 : f32
  }
  %10 = loops.pointwise [s0, s1, 32] origins ["view"] -> tensor<?x?x32xf32, #sym.sizes<[s0, s1, 32]>> {
    %11 = loops.load %6[i1 + i0*s1 + FloorDiv(i2, 32), ModularIndexing(i2, 1, 32)] : tensor<?x32xf32, #sym.sizes<[s0*s1, 32]>>
    loops.yield %11 : f32
  }
  %12 = loops.reduction [s0, s1, 1] over [32] origins ["_softmax"] -> tensor<?x?x1xf32, #sym.sizes<[s0, s1, 1]>> {
    %13 = loops.load %10[i0, i1, r0_0] : tensor<?x?x32xf32, #sym.sizes<[s0, s1, 32]>>
    %14 = loops.reduce max %13 : f32 -> f32
    loops.yield %14 : f32
  }
  %15 = loops.pointwise [s0, s1, 32] origins ["_softmax"] -> tensor<?x?x32xf32, #sym.sizes<[s0, s1, 32]>> {
    %16 = loops.load %10[i0, i1, i2] : tensor<?x?x32xf32, #sym.sizes<[s0, s1, 32]>>
    %17 = loops.load %12[i0, i1, 0] : tensor<?x?x1xf32, #sym.sizes<[s0, s1, 1]>>
    %18 = arith.subf %16, %17 : f32
    loops.yield %18 : f32
  }
  %19 = loops.pointwise [s0, s1, 32] origins ["_softmax"] -> tensor<?x?x32xf32, #sym.sizes<[s0, s1, 32]>> {
    %20 = loops.load %15[i0, i1, i2] : tensor<?x?x32xf32, #sym.sizes<[s0, s1, 32]>>
    %21 = math.exp %20 : f32
    loops.yield %21 : f32
  }
  %22 = loops.reduction [s0, s1, 1] over [32] origins ["_softmax"] -> tensor<?x?x1xf32, #sym.sizes<[s0, s1, 1]>> {
    %23 = loops.load %19[i0, i1, r0_0] : tensor<?x?x32xf32, #sym.sizes<[s0, s1, 32]>>
    %24 = loops.reduce sum %23 : f32 -> f32
    loops.yield %24 : f32
  }
  %25 = loops.pointwise [s0, s1, 32] origins ["_softmax"] -> tensor<?x?x32xf32, #sym.sizes<[s0, s1, 32]>> {
    %26 = loops.load %19[i0, i1, i2] : tensor<?x?x32xf32, #sym.sizes<[s0, s1, 32]>>
    %27 = loops.load %22[i0, i1, 0] : tensor<?x?x1xf32, #sym.sizes<[s0, s1, 1]>>
    %28 = arith.divf %26, %27 : f32
    loops.yield %28 : f32
  }
  %29 = loops.reduction [s0, 32] over [s1] origins ["sum"] -> tensor<?x32xf32, #sym.sizes<[s0, 32]>> {
    %30 = loops.load %10[i0, r0_0, i1] : tensor<?x?x32xf32, #sym.sizes<[s0, s1, 32]>>
    %31 = loops.reduce sum %30 : f32 -> f32
    loops.yield %31 : f32
  }
  func.return %25, %29 : tensor<?x?x32xf32, #sym.sizes<[s0, s1, 32]>>, tensor<?x32xf32, #sym.sizes<[s0, 32]>>
}
