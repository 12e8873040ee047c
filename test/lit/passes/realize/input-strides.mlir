// RUN: mlc-opt %s --split-input-file -p realize | filecheck %s
// RUN: mlc-opt %s --split-input-file -p realize | mlc-opt --split-input-file | filecheck %s

// The importer records an input's strides in its argument attributes when it is not row-major
// (AOTAutograd saves `q` as a view of the fused qkv projection, [4, 12, 512, 64] with strides
// [1179648, 64, 2304, 1]: gaps between rows). The input is laid out with them and loads index
// it so: the call takes the tensor as it comes, uncopied.
// CHECK-LABEL: buffer.graph @saved_view
// CHECK-NEXT:    buffer.input "q" #buffer.layout<[2, 3, 4], [48, 4, 12], f32>
// CHECK-NEXT:    buffer.input "w" #buffer.layout<[4, 6], [1, 4], f32>
// CHECK-NEXT:    buffer.input "b" #buffer.layout<[2, 3, 4], [12, 4, 1], f32>
// CHECK:           buffer.load @q[4*i1 + 12*i2 + 48*i0] : f32
// CHECK:           buffer.load @b[i2 + 4*i1 + 12*i0] : f32
func.func @saved_view(%q: tensor<2x3x4xf32> {strides = array<i64: 48, 4, 12>}, %w: tensor<4x6xf32> {strides = array<i64: 1, 4>}, %b: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<4x6xf32>) {
  %0 = loops.pointwise [2, 3, 4] origins ["add"] -> tensor<2x3x4xf32> {
    %1 = loops.load %q[i0, i1, i2] : tensor<2x3x4xf32>
    %2 = loops.load %b[i0, i1, i2] : tensor<2x3x4xf32>
    %3 = arith.addf %1, %2 : f32
    loops.yield %3 : f32
  }
  func.return %0, %w : tensor<2x3x4xf32>, tensor<4x6xf32>
}

// -----

// A view of a strided input composes with its strides (a transposed weight's transpose is the
// weight, row-major), and an expanded input (stride 0) is read where it is.
// CHECK-LABEL: buffer.graph @view_of_strided
// CHECK-NEXT:    buffer.input "wt" #buffer.layout<[6, 4], [1, 6], f32>
// CHECK-NEXT:    buffer.input "e" #buffer.layout<[4, 6], [0, 1], f32>
// CHECK:           buffer.load @wt[i1 + 6*i0] : f32
// CHECK:           buffer.load @e[i1] : f32
func.func @view_of_strided(%wt: tensor<6x4xf32> {strides = array<i64: 1, 6>}, %e: tensor<4x6xf32> {strides = array<i64: 0, 1>}) -> tensor<4x6xf32> {
  %0 = loops.pointwise [4, 6] origins ["add"] -> tensor<4x6xf32> {
    %1 = loops.load %wt[i1, i0] : tensor<6x4xf32>
    %2 = loops.load %e[i0, i1] : tensor<4x6xf32>
    %3 = arith.addf %1, %2 : f32
    loops.yield %3 : f32
  }
  func.return %0 : tensor<4x6xf32>
}
