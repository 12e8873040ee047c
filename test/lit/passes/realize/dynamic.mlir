// RUN: mlc-opt %s --split-input-file -p "realize{explain=true}" | filecheck %s
// RUN: mlc-opt %s --split-input-file -p realize | mlc-opt --split-input-file | filecheck %s --check-prefix=ROUND

// Dynamic shapes: sizes s0, s1 stay symbols in layouts and indices. A reshape back from
// [s0*s1, 32] to [s0, s1, 32] (an mm's result viewed as batch x sequence x features) is a
// view with the symbolic stride 32*s1, not a copy.
// CHECK-LABEL: buffer.graph @view_back
// CHECK-NEXT:    buffer.size_input "a" <s0>
// CHECK-NEXT:    buffer.size_input "b" <s1>
// CHECK-NEXT:    buffer.input "x" #buffer.layout<[s0*s1, 32], [32, 1], f32>
// CHECK-NEXT:    buffer.view "view0" = @x #buffer.layout<[s0, s1, 32], [32*s1, 32, 1], f32> {realize_reason = "graph output"}
// CHECK-NEXT:    buffer.output @view0
// ROUND-LABEL: buffer.graph @view_back
func.func @view_back(%a: !sym.int<s0>, %b: !sym.int<s1>, %x: tensor<?x32xf32, #sym.sizes<[s0*s1, 32]>>) -> tensor<?x?x32xf32, #sym.sizes<[s0, s1, 32]>> {
  %0 = loops.pointwise [s0, s1, 32] origins ["view"] -> tensor<?x?x32xf32, #sym.sizes<[s0, s1, 32]>> {
    %1 = loops.load %x[i1 + i0*s1 + FloorDiv(i2, 32), ModularIndexing(i2, 1, 32)] : tensor<?x32xf32, #sym.sizes<[s0*s1, 32]>>
    loops.yield %1 : f32
  }
  func.return %0 : tensor<?x?x32xf32, #sym.sizes<[s0, s1, 32]>>
}

// -----

// softmax(relu(x.view(-1, 32) + b).view(s0, s1, 32)) and its sum over s1, after --inline: the
// reshape's digits over the symbolic extents fold to flat loads (r0_0 + 32*i1 + 32*i0*s1);
// the reductions over 32 store [s0, s1, 1] results, the column sum reduces over s1.
// CHECK-LABEL: buffer.graph @forward
// CHECK:         buffer.input "arg2.1" #buffer.layout<[s0, s1, 32], [32*s1, 32, 1], f32>
// CHECK:         buffer.computed "buf0" #buffer.layout<[s0, s1, 1], [s1, 1, 1], f32> ranges [s0, s1, 1] reduce [32]
// CHECK-NEXT:      buffer.load @arg2.1[r0_0 + 32*i1 + 32*i0*s1]
// CHECK:           buffer.store @buf0[i1 + i2 + i0*s1]
// CHECK:         buffer.computed "buf2" #buffer.layout<[s0, s1, 32], [32*s1, 32, 1], f32> ranges [s0, s1, 32]
// CHECK-NEXT:      buffer.load @arg2.1[i2 + 32*i1 + 32*i0*s1]
// CHECK:         buffer.computed "buf3" #buffer.layout<[s0, 32], [32, 1], f32> ranges [s0, 32] reduce [s1]
// CHECK-NEXT:      buffer.load @arg2.1[i1 + 32*r0_0 + 32*i0*s1]
// CHECK:         buffer.output @buf2, @buf3
// ROUND-LABEL: buffer.graph @forward
func.func @forward(%arg0.1: !sym.int<s0>, %arg1.1: !sym.int<s1>, %arg2.1: tensor<?x?x32xf32, #sym.sizes<[s0, s1, 32]>>, %arg3.1: tensor<32xf32>) -> (tensor<?x?x32xf32, #sym.sizes<[s0, s1, 32]>>, tensor<?x32xf32, #sym.sizes<[s0, 32]>>) {
  %0 = loops.reduction [s0, s1, 1] over [32] origins ["_softmax", "add", "relu", "view"] -> tensor<?x?x1xf32, #sym.sizes<[s0, s1, 1]>> {
    %1 = loops.load %arg2.1[FloorDiv(32*i1 + 32*FloorDiv(r0_0, 32) + 32*i0*s1 + ModularIndexing(r0_0, 1, 32), 32*s1), ModularIndexing(32*i1 + 32*FloorDiv(r0_0, 32) + 32*i0*s1 + ModularIndexing(r0_0, 1, 32), 32, s1), ModularIndexing(ModularIndexing(r0_0, 1, 32), 1, 32)] : tensor<?x?x32xf32, #sym.sizes<[s0, s1, 32]>>
    %2 = loops.load %arg3.1[ModularIndexing(r0_0, 1, 32)] : tensor<32xf32>
    %3 = arith.addf %1, %2 : f32
    %4 = arith.constant 0.000000e+00 : f32
    %5 = arith.maximumf %3, %4 : f32
    %6 = loops.reduce max %5 : f32 -> f32
    loops.yield %6 : f32
  }
  %7 = loops.reduction [s0, s1, 1] over [32] origins ["_softmax", "add", "relu", "view"] -> tensor<?x?x1xf32, #sym.sizes<[s0, s1, 1]>> {
    %8 = loops.load %arg2.1[FloorDiv(32*i1 + 32*FloorDiv(r0_0, 32) + 32*i0*s1 + ModularIndexing(r0_0, 1, 32), 32*s1), ModularIndexing(32*i1 + 32*FloorDiv(r0_0, 32) + 32*i0*s1 + ModularIndexing(r0_0, 1, 32), 32, s1), ModularIndexing(ModularIndexing(r0_0, 1, 32), 1, 32)] : tensor<?x?x32xf32, #sym.sizes<[s0, s1, 32]>>
    %9 = loops.load %arg3.1[ModularIndexing(r0_0, 1, 32)] : tensor<32xf32>
    %10 = arith.addf %8, %9 : f32
    %11 = arith.constant 0.000000e+00 : f32
    %12 = arith.maximumf %10, %11 : f32
    %13 = loops.load %0[i0, i1, 0] : tensor<?x?x1xf32, #sym.sizes<[s0, s1, 1]>>
    %14 = arith.subf %12, %13 : f32
    %15 = math.exp %14 : f32
    %16 = loops.reduce sum %15 : f32 -> f32
    loops.yield %16 : f32
  }
  %17 = loops.pointwise [s0, s1, 32] origins ["_softmax", "add", "relu", "view"] -> tensor<?x?x32xf32, #sym.sizes<[s0, s1, 32]>> {
    %18 = loops.load %arg2.1[FloorDiv(32*i1 + 32*FloorDiv(i2, 32) + 32*i0*s1 + ModularIndexing(i2, 1, 32), 32*s1), ModularIndexing(32*i1 + 32*FloorDiv(i2, 32) + 32*i0*s1 + ModularIndexing(i2, 1, 32), 32, s1), ModularIndexing(ModularIndexing(i2, 1, 32), 1, 32)] : tensor<?x?x32xf32, #sym.sizes<[s0, s1, 32]>>
    %19 = loops.load %arg3.1[ModularIndexing(i2, 1, 32)] : tensor<32xf32>
    %20 = arith.addf %18, %19 : f32
    %21 = arith.constant 0.000000e+00 : f32
    %22 = arith.maximumf %20, %21 : f32
    %23 = loops.load %0[i0, i1, 0] : tensor<?x?x1xf32, #sym.sizes<[s0, s1, 1]>>
    %24 = arith.subf %22, %23 : f32
    %25 = math.exp %24 : f32
    %26 = loops.load %7[i0, i1, 0] : tensor<?x?x1xf32, #sym.sizes<[s0, s1, 1]>>
    %27 = arith.divf %25, %26 : f32
    loops.yield %27 : f32
  }
  %28 = loops.reduction [s0, 32] over [s1] origins ["add", "relu", "sum", "view"] -> tensor<?x32xf32, #sym.sizes<[s0, 32]>> {
    %29 = loops.load %arg2.1[FloorDiv(32*r0_0 + 32*FloorDiv(i1, 32) + 32*i0*s1 + ModularIndexing(i1, 1, 32), 32*s1), ModularIndexing(32*r0_0 + 32*FloorDiv(i1, 32) + 32*i0*s1 + ModularIndexing(i1, 1, 32), 32, s1), ModularIndexing(ModularIndexing(i1, 1, 32), 1, 32)] : tensor<?x?x32xf32, #sym.sizes<[s0, s1, 32]>>
    %30 = loops.load %arg3.1[ModularIndexing(i1, 1, 32)] : tensor<32xf32>
    %31 = arith.addf %29, %30 : f32
    %32 = arith.constant 0.000000e+00 : f32
    %33 = arith.maximumf %31, %32 : f32
    %34 = loops.reduce sum %33 : f32 -> f32
    loops.yield %34 : f32
  }
  func.return %17, %28 : tensor<?x?x32xf32, #sym.sizes<[s0, s1, 32]>>, tensor<?x32xf32, #sym.sizes<[s0, 32]>>
}
