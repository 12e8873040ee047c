// RUN: mlc-opt %s --split-input-file -p 'lower-aten,inline,realize,reorder-loops{explain=true}' | filecheck %s
// RUN: mlc-opt %s --split-input-file -p 'lower-aten,inline,realize,reorder-loops' | filecheck %s --check-prefix=QUIET

// QUIET-NOT: loops =

// Seed 002: the bias-add after the convolution. The size-1 batch loop is dropped; the two
// inner loops merge (every index steps 1 along the inner, 78 along the outer); the channel
// loop stays apart because the bias read steps 1 along it and 0 along the others.
// CHECK-LABEL: buffer.graph @seed_002
// CHECK:       buffer.computed "buf1" #buffer.layout<[1, 10, 88, 78], [68640, 6864, 78, 1], f32> ranges [10, 6864]
// CHECK-NEXT:    buffer.load @buf0[i1 + 6864*i0] : f32
// CHECK-NEXT:    buffer.load @primals_2[i0] : f32
// CHECK:         buffer.store @buf1[i1 + 6864*i0]
// CHECK-NEXT:  } attributes {loops = "[10, 6864] from [1, 10, 88, 78]: i0 dropped (size 1); i1 | i2 kept apart: @primals_2[i1] steps 1 along i1, not 0"}
func.func @seed_002(%primals_1: tensor<10x3x5x5xf32> loc("primals_1"), %primals_2: tensor<10xf32> loc("primals_2"), %primals_3: tensor<1x3x92x82xf32> loc("primals_3")) -> tensor<1x10x88x78xf32> {
  %c = aten.convolution %primals_3, %primals_1, none {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64} : (tensor<1x3x92x82xf32>, tensor<10x3x5x5xf32>) -> tensor<1x10x88x78xf32> loc("convolution")
  %b = aten.view %primals_2 {size = array<i64: 10, 1, 1>} : (tensor<10xf32>) -> tensor<10x1x1xf32> loc("view")
  %s = aten.add.Tensor %c, %b : (tensor<1x10x88x78xf32>, tensor<10x1x1xf32>) -> tensor<1x10x88x78xf32> loc("add")
  func.return %s : tensor<1x10x88x78xf32> loc("output")
}

// -----

// A transposed read keeps both loops: merging would need it to step 512 along i0.
// CHECK-LABEL: buffer.graph @transposed
// CHECK:       ranges [32, 16]
// CHECK:       } attributes {loops = "[32, 16] from [32, 16]: i0 | i1 kept apart: @x[i0 + 32*i1] steps 1 along i0, not 512"}
func.func @transposed(%x: tensor<16x32xf32> loc("x")) -> tensor<32x16xf32> {
  %t = aten.permute %x {dims = array<i64: 1, 0>} : (tensor<16x32xf32>) -> tensor<32x16xf32> loc("permute")
  %e = aten.exp %t : (tensor<32x16xf32>) -> tensor<32x16xf32> loc("exp")
  func.return %e : tensor<32x16xf32> loc("output")
}

// -----

// Reduction loops merge among themselves: a sum over [8, 16] of each row is one loop of 128.
// CHECK-LABEL: buffer.graph @reduction
// CHECK:       buffer.computed "buf0" #buffer.layout<[4], [1], f32> ranges [4] reduce [128]
// CHECK-NEXT:    buffer.load @x[r0_0 + 128*i0] : f32
// CHECK:       } attributes {loops = "[4] reduce [128] from [4] reduce [8, 16]"}
func.func @reduction(%x: tensor<4x8x16xf32> loc("x")) -> tensor<4xf32> {
  %s = aten.sum.dim_IntList %x {dim = array<i64: 1, 2>} : (tensor<4x8x16xf32>) -> tensor<4xf32> loc("sum")
  func.return %s : tensor<4xf32> loc("output")
}

// -----

// Views folded by --realize leave an affine index; the transposed read decides again. The
// returned view2 is a view of exp's result, as in eager: exp is stored in its [2, 2, 6] shape.
// CHECK-LABEL: buffer.graph @reshape
// CHECK:       ranges [4, 6]
// CHECK:       } attributes {loops = "[4, 6] from [2, 2, 6]: i1 | i2 kept apart: @x[i1 + 2*i0 + 4*i2] steps 1 along i1, not 24"}
// CHECK:       buffer.view "view0" = @buf0 #buffer.layout<[4, 6], [6, 1], f32>
func.func @reshape(%x: tensor<6x4xf32> loc("x")) -> tensor<4x6xf32> {
  %t = aten.permute %x {dims = array<i64: 1, 0>} : (tensor<6x4xf32>) -> tensor<4x6xf32> loc("permute")
  %v = aten.clone %t : (tensor<4x6xf32>) -> tensor<4x6xf32> loc("clone")
  %r = aten.view %v {size = array<i64: 2, 2, 6>} : (tensor<4x6xf32>) -> tensor<2x2x6xf32> loc("view")
  %e = aten.exp %r : (tensor<2x2x6xf32>) -> tensor<2x2x6xf32> loc("exp")
  %w = aten.view %e {size = array<i64: 4, 6>} : (tensor<2x2x6xf32>) -> tensor<4x6xf32> loc("view2")
  func.return %w : tensor<4x6xf32> loc("output")
}
