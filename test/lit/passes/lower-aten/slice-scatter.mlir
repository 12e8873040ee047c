// RUN: mlc-opt %s --split-input-file --lower-aten | filecheck %s
// RUN: mlc-opt %s --split-input-file --lower-aten --inline | filecheck %s --check-prefix=INLINE

// slice_scatter is one pointwise, not an extern copy: the points inside the slice read src
// (a masked load at the position minus start), the others read self.
// CHECK-LABEL: func.func @slice_scatter_tail
func.func @slice_scatter_tail(%x: tensor<4x10xf32>, %s: tensor<4x6xf32>) -> tensor<4x10xf32> {
  // CHECK:      loops.pointwise [4, 10] origins ["slice_scatter"] -> tensor<4x10xf32> {
  // CHECK-NEXT:   %[[I:.*]] = loops.index i1 : i64
  // CHECK-NEXT:   %[[C4:.*]] = arith.constant 4 : i64
  // CHECK-NEXT:   %[[M:.*]] = arith.cmpi sge, %[[I]], %[[C4]] : i64
  // CHECK-NEXT:   %[[S:.*]] = loops.load %s[i0, i1 - 4] mask %[[M]] : tensor<4x6xf32>
  // CHECK-NEXT:   %[[X:.*]] = loops.load %x[i0, i1] : tensor<4x10xf32>
  // CHECK-NEXT:   %[[R:.*]] = arith.select %[[M]], %[[S]], %[[X]] : f32
  // CHECK-NEXT:   loops.yield %[[R]] : f32
  %r = aten.slice_scatter %x, %s {dim = 1 : i64, start = 4 : i64, end = 9223372036854775807 : i64} : (tensor<4x10xf32>, tensor<4x6xf32>) -> tensor<4x10xf32>
  func.return %r : tensor<4x10xf32>
}

// -----

// A step: the points between the steps read self too; src is read at (pos - start) / step.
// CHECK-LABEL: func.func @slice_scatter_step
func.func @slice_scatter_step(%x: tensor<9x4xbf16>, %s: tensor<3x4xbf16>) -> tensor<9x4xbf16> {
  // CHECK:      loops.pointwise [9, 4] origins ["slice_scatter"] -> tensor<9x4xbf16> {
  // CHECK:        %[[IN:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
  // CHECK-NEXT:   %[[MOD:.*]] = loops.index ModularIndexing(i0 - 1, 1, 3) : i64
  // CHECK-NEXT:   %[[ZERO:.*]] = arith.constant 0 : i64
  // CHECK-NEXT:   %[[ON:.*]] = arith.cmpi eq, %[[MOD]], %[[ZERO]] : i64
  // CHECK-NEXT:   %[[M:.*]] = arith.andi %[[IN]], %[[ON]] : i1
  // CHECK-NEXT:   %[[S:.*]] = loops.load %s[FloorDiv(i0 - 1, 3), i1] mask %[[M]] : tensor<3x4xbf16>
  // CHECK-NEXT:   %[[X:.*]] = loops.load %x[i0, i1] : tensor<9x4xbf16>
  // CHECK-NEXT:   arith.select %[[M]], %[[S]], %[[X]] : bf16
  %r = aten.slice_scatter %x, %s {dim = 0 : i64, start = 1 : i64, end = 8 : i64, step = 3 : i64} : (tensor<9x4xbf16>, tensor<3x4xbf16>) -> tensor<9x4xbf16>
  func.return %r : tensor<9x4xbf16>
}

// -----

// select_scatter: the points at the index read src (one dim fewer), the others self.
// CHECK-LABEL: func.func @select_scatter_negative_index
func.func @select_scatter_negative_index(%x: tensor<4x8xf32>, %s: tensor<4xf32>) -> tensor<4x8xf32> {
  // CHECK:      loops.pointwise [4, 8] origins ["select_scatter"] -> tensor<4x8xf32> {
  // CHECK-NEXT:   %[[I:.*]] = loops.index i1 : i64
  // CHECK-NEXT:   %[[C:.*]] = arith.constant 7 : i64
  // CHECK-NEXT:   %[[M:.*]] = arith.cmpi eq, %[[I]], %[[C]] : i64
  // CHECK-NEXT:   %[[S:.*]] = loops.load %s[i0] mask %[[M]] : tensor<4xf32>
  // CHECK-NEXT:   %[[X:.*]] = loops.load %x[i0, i1] : tensor<4x8xf32>
  // CHECK-NEXT:   arith.select %[[M]], %[[S]], %[[X]] : f32
  %r = aten.select_scatter %x, %s {dim = 1 : i64, index = -1 : i64} : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}

// -----

// slice_backward: zeros, then slice_scatter. After --inline the zeros are a constant in the
// select, and the gradient is one pointwise with one masked load.
// INLINE-LABEL: func.func @slice_backward
func.func @slice_backward(%g: tensor<2x64xbf16>) -> tensor<2x128xbf16> {
  // INLINE:      loops.pointwise [2, 128] origins ["full", "slice_scatter"] -> tensor<2x128xbf16> {
  // INLINE:        %[[S:.*]] = loops.load %g[i0, i1] mask %[[M:.*]] : tensor<2x64xbf16>
  // INLINE:        arith.select %[[M]], %[[S]], %{{.*}} : bf16
  // INLINE-NOT:  loops.pointwise
  %z = aten.full {size = array<i64: 2, 128>, fill_value = 0 : i64, dtype = bf16, layout = "strided", device = "cpu", pin_memory = false} : () -> tensor<2x128xbf16>
  %r = aten.slice_scatter %z, %g {dim = 1 : i64, start = 0 : i64, end = 64 : i64} : (tensor<2x128xbf16>, tensor<2x64xbf16>) -> tensor<2x128xbf16>
  func.return %r : tensor<2x128xbf16>
}
