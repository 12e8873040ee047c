// RUN: mlc-opt %s --split-input-file -p realize | filecheck %s --check-prefixes=CHECK,COPY
// RUN: mlc-opt %s --split-input-file -p realize | mlc-opt --split-input-file | filecheck %s --check-prefixes=CHECK,COPY
// RUN: mlc-opt %s --split-input-file -p 'realize{keep-padded-outputs=true}' | filecheck %s --check-prefixes=CHECK,KEEP

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

// -----

// A returned view keeps the promised strides or is copied into them: pad-mm's sliced result
// (rows 10 apart, where 7 are promised) is stored by a kernel, which fusion may merge with
// the reads of the same rows, instead of a copy after the call (AOTAutograd hands a forward's
// outputs to the backward with the promised strides). With keep-padded-outputs (an inference
// graph) the padded view is returned as it is.
// CHECK-LABEL: buffer.graph @padded_slice
// COPY:          buffer.computed "buf0" #buffer.layout<[4, 7], [7, 1], f32> ranges [4, 7] origins ["slice"]
// COPY:            buffer.load @p[i1 + 10*i0]
// COPY:          buffer.output @buf0
// KEEP:          buffer.view "view0" = @p #buffer.layout<[4, 7], [10, 1], f32>
// KEEP:          buffer.output @view0
func.func @padded_slice(%p: tensor<4x10xf32>) -> tensor<4x7xf32> {
  %0 = loops.pointwise [4, 7] origins ["slice"] -> tensor<4x7xf32> {
    %1 = loops.load %p[i0, i1] : tensor<4x10xf32>
    loops.yield %1 : f32
  }
  func.return %0 : tensor<4x7xf32>
}

// -----

// A transposed view is returned as it is, where its strides are the promised ones (eager's
// `w.t()`) and where func.return states no preference (an empty entry): only padded rows
// are copied. Size-1 dims' strides are free.
// CHECK-LABEL: buffer.graph @transposed_views
// CHECK-NEXT:    buffer.input "w"
// CHECK-NEXT:    buffer.view "view0" = @w #buffer.layout<[6, 4], [1, 6], f32>
// CHECK-NEXT:    buffer.view "view1" = @w #buffer.layout<[6, 4], [1, 6], f32>
// CHECK-NEXT:    buffer.view "view2" = @w #buffer.layout<[1, 24], [0, 1], f32>
// CHECK-NEXT:    buffer.output @view0, @view1, @view2
func.func @transposed_views(%w: tensor<4x6xf32>) -> (tensor<6x4xf32>, tensor<6x4xf32>, tensor<1x24xf32>) {
  %0 = loops.pointwise [6, 4] origins ["permute"] -> tensor<6x4xf32> {
    %1 = loops.load %w[i1, i0] : tensor<4x6xf32>
    loops.yield %1 : f32
  }
  %2 = loops.pointwise [6, 4] origins ["permute"] -> tensor<6x4xf32> {
    %3 = loops.load %w[i1, i0] : tensor<4x6xf32>
    loops.yield %3 : f32
  }
  %4 = loops.pointwise [1, 24] origins ["view"] -> tensor<1x24xf32> {
    %5 = loops.load %w[FloorDiv(i1, 6), ModularIndexing(i1, 1, 6)] : tensor<4x6xf32>
    loops.yield %5 : f32
  }
  func.return {strides = [array<i64: 1, 6>, array<i64>, array<i64: 24, 1>]} %0, %2, %4 : tensor<6x4xf32>, tensor<6x4xf32>, tensor<1x24xf32>
}

// -----

// Eager's strides need not be dense: the importer states a slice's (`x[:, :5]` of a [4, 8]
// input has rows 8 apart in eager too), and a view with exactly those strides is returned as
// it is, unlike pad-mm's padded rows above, whose promise is row-major. A computed result
// cannot be stored with strides of no dense layout: it is row-major, and the caller copies.
// CHECK-LABEL: buffer.graph @eager_slices
// CHECK-NEXT:    buffer.input "x"
// CHECK-NEXT:    buffer.view "view0" = @x #buffer.layout<[4, 5], [8, 1], f32>
// CHECK-NEXT:    buffer.computed "buf0" #buffer.layout<[4, 5], [5, 1], f32> ranges [4, 5] origins ["neg"]
// CHECK:         buffer.output @view0, @buf0
func.func @eager_slices(%x: tensor<4x8xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>) {
  %0 = loops.pointwise [4, 5] origins ["slice"] -> tensor<4x5xf32> {
    %1 = loops.load %x[i0, i1] : tensor<4x8xf32>
    loops.yield %1 : f32
  }
  %2 = loops.pointwise [4, 5] origins ["neg"] -> tensor<4x5xf32> {
    %3 = loops.load %x[i0, i1] : tensor<4x8xf32>
    %4 = arith.negf %3 : f32
    loops.yield %4 : f32
  }
  func.return {strides = [array<i64: 8, 1>, array<i64: 8, 1>]} %0, %2 : tensor<4x5xf32>, tensor<4x5xf32>
}
