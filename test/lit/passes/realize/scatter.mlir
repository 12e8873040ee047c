// RUN: mlc-opt %s --split-input-file --inline --realize="explain=true" | filecheck %s

// A scatter is always stored, into a copy of its input made for it: the copy is a computed
// buffer (never a view of x, which the scatter would then overwrite) and the scatter a
// buffer.scatter that takes its storage over (buf1 is buf0 once the adds are done).
// CHECK-LABEL: buffer.graph @index_put_acc
// CHECK:       buffer.computed "buf0" #buffer.layout<[20, 8], [8, 1], f32> ranges [20, 8] origins ["index_put"] {
// CHECK-NEXT:    %[[X:.*]] = buffer.load @x[i1 + 8*i0] : f32
// CHECK-NEXT:    buffer.store @buf0[i1 + 8*i0], %[[X]] : f32
// CHECK-NEXT:  } attributes {realize_reason = "written in place by a scatter"}
// CHECK-NEXT:  buffer.scatter "buf1" #buffer.layout<[20, 8], [8, 1], f32> = @buf0 ranges [30, 8] origins ["index_put"] {
// CHECK-NEXT:    %[[T:.*]] = buffer.load @i[i0] : i64
// CHECK-NEXT:    %[[P:.*]] = loops.indirect_index %[[T]] size 20 : i64
// CHECK-NEXT:    %[[V:.*]] = buffer.load @v[i1 + 8*i0] : f32
// CHECK-NEXT:    buffer.store @buf1[i1 + 8*ind0] indirect(%[[P]]), %[[V]] atomic_add : f32
// CHECK-NEXT:  } attributes {realize_reason = "scatter (writes at loaded positions)"}
// CHECK-NEXT:  buffer.output @buf1
func.func @index_put_acc(%x: tensor<20x8xf32>, %i: tensor<30xi64>, %v: tensor<30x8xf32>) -> tensor<20x8xf32> {
  %c = loops.pointwise [20, 8] origins ["index_put"] -> tensor<20x8xf32> {
    %0 = loops.load %x[i0, i1] : tensor<20x8xf32>
    loops.yield %0 : f32
  }
  %r = loops.scatter %c [30, 8] atomic_add origins ["index_put"] -> tensor<20x8xf32> {
    %0 = loops.load %i[i0] : tensor<30xi64>
    %1 = loops.indirect_index %0 size 20 : i64
    %2 = loops.load %v[i0, i1] : tensor<30x8xf32>
    loops.scatter_store [ind0, i1] indirect(%1), %2 : f32
  }
  func.return %r : tensor<20x8xf32>
}

