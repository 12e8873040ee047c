// RUN: mlc-opt %s --split-input-file -p realize | filecheck %s
// RUN: mlc-opt %s --split-input-file -p realize | mlc-opt --split-input-file | filecheck %s

// The importer records on func.return the strides the FX graph promises for each result when
// they are a dense layout other than row-major (`x.t() + y` is column-major in eager). A
// returned computed buffer is laid out with them and its store follows: no copy into the
// promised layout after the call.
// CHECK-LABEL: buffer.graph @transposed_output
// CHECK:         buffer.computed "buf0" #buffer.layout<[4, 6], [1, 4], f32> ranges [4, 6]
// CHECK:           buffer.store @buf0[i0 + 4*i1], %{{.*}} : f32
// CHECK:         buffer.output @buf0
func.func @transposed_output(%x: tensor<6x4xf32>, %y: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = loops.pointwise [4, 6] origins ["add"] -> tensor<4x6xf32> {
    %1 = loops.load %x[i1, i0] : tensor<6x4xf32>
    %2 = loops.load %y[i0, i1] : tensor<4x6xf32>
    %3 = arith.addf %1, %2 : f32
    loops.yield %3 : f32
  }
  func.return {strides = [array<i64: 1, 4>]} %0 : tensor<4x6xf32>
}

// -----

// An empty entry is row-major (no preference); a value returned twice keeps its first
// entry; an input returned as is keeps its own layout.
// CHECK-LABEL: buffer.graph @two_results
// CHECK:         buffer.computed "buf0" #buffer.layout<[2, 3], [3, 1], f32>
// CHECK:         buffer.computed "buf1" #buffer.layout<[2, 3], [1, 2], f32>
// CHECK:         buffer.output @buf0, @buf1, @buf1, @x
func.func @two_results(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = loops.pointwise [2, 3] origins ["sin"] -> tensor<2x3xf32> {
    %1 = loops.load %x[i0, i1] : tensor<2x3xf32>
    %2 = math.sin %1 : f32
    loops.yield %2 : f32
  }
  %3 = loops.pointwise [2, 3] origins ["cos"] -> tensor<2x3xf32> {
    %4 = loops.load %x[i0, i1] : tensor<2x3xf32>
    %5 = math.cos %4 : f32
    loops.yield %5 : f32
  }
  func.return {strides = [array<i64>, array<i64: 1, 2>, array<i64: 3, 1>, array<i64: 1, 2>]} %0, %3, %3, %x : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}
