// RUN: mlc-opt %s | mlc-opt | filecheck %s
// RUN: mlc-opt %s --print-op-generic | mlc-opt | filecheck %s

// A pointwise body reads tensors at logical indices over the implicit i0, i1.
// CHECK-LABEL: func.func @gelu_body
func.func @gelu_body(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // CHECK:      loops.pointwise [8, 64] origins ["gelu"] -> tensor<8x64xf32> {
  // CHECK-NEXT:   %{{.*}} = loops.load %x[i0, i1] : tensor<8x64xf32>
  // CHECK:        math.erf
  // CHECK:        loops.yield %{{.*}} : f32
  %0 = loops.pointwise [8, 64] origins ["gelu"] -> tensor<8x64xf32> {
    %a = loops.load %x[i0, i1] : tensor<8x64xf32>
    %h = arith.constant 0.5 : f32
    %m = arith.mulf %a, %h : f32
    %e = math.erf %m : f32
    loops.yield %e : f32
  }
  func.return %0 : tensor<8x64xf32>
}

// Views are index maps: a reshape reads its source through FloorDiv/ModularIndexing.
// CHECK-LABEL: func.func @reshape_view
func.func @reshape_view(%x: tensor<8x64xf32>) -> tensor<512xf32> {
  // CHECK: loops.load %x[FloorDiv(i0, 64), ModularIndexing(i0, 1, 64)] : tensor<8x64xf32>
  %0 = loops.pointwise [512] -> tensor<512xf32> {
    %a = loops.load %x[FloorDiv(i0, 64), ModularIndexing(i0, 1, 64)] : tensor<8x64xf32>
    loops.yield %a : f32
  }
  func.return %0 : tensor<512xf32>
}

// A masked load reads 0 where the mask is false (cat without copies).
// CHECK-LABEL: func.func @cat_masked
func.func @cat_masked(%a: tensor<4x2xf32>, %b: tensor<4x3xf32>) -> tensor<4x5xf32> {
  // CHECK: loops.load %b[i0, i1 - 2] mask %{{.*}} : tensor<4x3xf32>
  %0 = loops.pointwise [4, 5] -> tensor<4x5xf32> {
    %i = loops.index i1 : i64
    %two = arith.constant 2 : i64
    %lo = arith.cmpi slt, %i, %two : i64
    %hi = arith.cmpi sge, %i, %two : i64
    %va = loops.load %a[i0, i1] mask %lo : tensor<4x2xf32>
    %vb = loops.load %b[i0, i1 - 2] mask %hi : tensor<4x3xf32>
    %v = arith.select %lo, %va, %vb : f32
    loops.yield %v : f32
  }
  func.return %0 : tensor<4x5xf32>
}

// Reductions name their reduction indices r0_0, r0_1, ...; loops.reduce combines over them and
// the ops after it (the epilogue) work on reduced values; each yielded value is one result.
// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<3x9xf32>) {
  // CHECK:      loops.reduction [3] over [9] -> tensor<3xf32> {
  // CHECK-NEXT:   loops.load %x[i0, r0_0] : tensor<3x9xf32>
  // CHECK-NEXT:   loops.reduce sum %{{.*}} : f32 -> f32
  // CHECK:        arith.divf
  %mean = loops.reduction [3] over [9] -> tensor<3xf32> {
    %a = loops.load %x[i0, r0_0] : tensor<3x9xf32>
    %s = loops.reduce sum %a : f32 -> f32
    %n = arith.constant 9.0 : f32
    %m = arith.divf %s, %n : f32
    loops.yield %m : f32
  }
  // CHECK: loops.reduction [3] over [9] -> (tensor<3xf32>, tensor<3xi64>)
  // CHECK: loops.reduce max %{{.*}} : f32 -> f32
  // CHECK: loops.reduce argmax %{{.*}} : f32 -> i64
  %v, %i = loops.reduction [3] over [9] -> (tensor<3xf32>, tensor<3xi64>) {
    %a = loops.load %x[i0, r0_0] : tensor<3x9xf32>
    %mx = loops.reduce max %a : f32 -> f32
    %am = loops.reduce argmax %a : f32 -> i64
    loops.yield %mx, %am : f32, i64
  }
  // CHECK: loops.reduction [1] over [3, 9] -> (tensor<1xf32>, tensor<1xf32>)
  // CHECK: loops.reduce welford %{{.*}} : f32 -> (f32, f32, f32)
  %wm, %wv = loops.reduction [1] over [3, 9] -> (tensor<1xf32>, tensor<1xf32>) {
    %a = loops.load %x[r0_0, r0_1] : tensor<3x9xf32>
    %mean1, %m2, %w = loops.reduce welford %a : f32 -> (f32, f32, f32)
    %var = arith.divf %m2, %w : f32
    loops.yield %mean1, %var : f32, f32
  }
  func.return
}

// Extern calls run aten at run time; index values for arange-like bodies.
// CHECK-LABEL: func.func @extern_and_index
func.func @extern_and_index(%a: tensor<8x32xf32>, %b: tensor<32x16xf32>) {
  // CHECK: loops.extern "mm.default" (%a, %b) {args = [#aten.tensor, #aten.tensor]} : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  %0 = loops.extern "mm.default" (%a, %b) {args = [#aten.tensor, #aten.tensor]} : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  // CHECK: loops.index 1 + 2*i0 : i64
  %1 = loops.pointwise [5] -> tensor<5xi64> {
    %k = loops.index 1 + 2*i0 : i64
    loops.yield %k : i64
  }
  func.return
}

// Indirect indexing: a loaded integer becomes a position (negative ones count from the end)
// that the load's index names as ind0; an index value inlined at that position names it too.
// CHECK-LABEL: func.func @gather_rows
func.func @gather_rows(%x: tensor<50x16xf32>, %ids: tensor<4x3xi32>) -> tensor<4x3x16xf32> {
  // CHECK:      %[[T:.*]] = loops.load %ids[i0, i1] : tensor<4x3xi32>
  // CHECK-NEXT: %[[K:.*]] = loops.indirect_index %[[T]] size 50 : i32
  // CHECK-NEXT: loops.load %x[ind0, i2] indirect(%[[K]]) : tensor<50x16xf32>
  // CHECK-NEXT: loops.index i2 + 16*ind0 indirect(%[[K]]) : i64
  %0 = loops.pointwise [4, 3, 16] -> tensor<4x3x16xf32> {
    %t = loops.load %ids[i0, i1] : tensor<4x3xi32>
    %k = loops.indirect_index %t size 50 : i32
    %v = loops.load %x[ind0, i2] indirect(%k) : tensor<50x16xf32>
    %p = loops.index 16*ind0 + i2 indirect(%k) : i64
    loops.yield %v : f32
  }
  func.return %0 : tensor<4x3x16xf32>
}

// A scatter: a copy of its input, then values stored (here added) at loaded positions over
// the source's shape.
// CHECK-LABEL: func.func @embedding_backward
func.func @embedding_backward(%ids: tensor<12xi64>, %g: tensor<12x16xf32>) -> tensor<50x16xf32> {
  // CHECK:      loops.scatter %{{.*}} [12, 16] atomic_add origins ["embedding_dense_backward"] -> tensor<50x16xf32> {
  // CHECK:        loops.scatter_store [ind0, i1] indirect(%{{.*}}), %{{.*}} : f32
  %z = loops.pointwise [50, 16] -> tensor<50x16xf32> {
    %c = arith.constant 0.0 : f32
    loops.yield %c : f32
  }
  %r = loops.scatter %z [12, 16] atomic_add origins ["embedding_dense_backward"] -> tensor<50x16xf32> {
    %0 = loops.load %ids[i0] : tensor<12xi64>
    %1 = loops.indirect_index %0 size 50 : i64
    %2 = loops.load %g[i0, i1] : tensor<12x16xf32>
    loops.scatter_store [ind0, i1] indirect(%1), %2 : f32
  }
  func.return %r : tensor<50x16xf32>
}
