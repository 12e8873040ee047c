// RUN: mlc-opt %s --split-input-file -p propagate-indices | filecheck %s
// RUN: mlc-opt %s --split-input-file -p propagate-indices | mlc-opt --split-input-file | filecheck %s

// A position computed from the loop indices (an arange, plus 0, as the attention mask's
// `index` lowers) is read directly: the load becomes affine and the integer ops go.
// CHECK-LABEL: func.func @arange_position
// CHECK-NEXT:    loops.pointwise [4, 512]
// CHECK-NEXT:      %{{.*}} = loops.load %mask[0, i1] : tensor<1x512xi64>
// CHECK-NEXT:      loops.yield
func.func @arange_position(%mask: tensor<1x512xi64>) -> tensor<4x512xi64> {
  %0 = loops.pointwise [4, 512] -> tensor<4x512xi64> {
    %1 = loops.index 0 : i64
    %2 = loops.indirect_index %1 size 1 : i64
    %3 = loops.index i1 : i64
    %4 = arith.constant 0 : i64
    %5 = arith.addi %3, %4 : i64
    %6 = loops.indirect_index %5 size 512 : i64
    %7 = loops.load %mask[ind0, ind1] indirect(%2, %6) : tensor<1x512xi64>
    loops.yield %7 : i64
  }
  func.return %0 : tensor<4x512xi64>
}

// -----

// A range inside [-size, 0) counts from the end, as indirect_index wraps it (`x[-1 - i0]`);
// a reduction's r0 counts too; an i32 position widened by extsi is followed.
// CHECK-LABEL: func.func @from_the_end
// CHECK:         loops.load %x[7 - i0, 1 + 2*r0_0] : tensor<8x16xf32>
func.func @from_the_end(%x: tensor<8x16xf32>) -> tensor<8xf32> {
  %0 = loops.reduction [8] over [8] -> tensor<8xf32> {
    %1 = loops.index i0 : i64
    %2 = arith.constant -1 : i64
    %3 = arith.subi %2, %1 : i64
    %4 = loops.indirect_index %3 size 8 : i64
    %5 = loops.index r0_0 : i32
    %6 = arith.constant 2 : i32
    %7 = arith.muli %5, %6 : i32
    %8 = arith.constant 1 : i32
    %9 = arith.addi %7, %8 : i32
    %10 = arith.extsi %9 : i32 to i64
    %11 = loops.indirect_index %10 size 16 : i64
    %12 = loops.load %x[ind0, ind1] indirect(%4, %11) : tensor<8x16xf32>
    %13 = loops.reduce sum %12 : f32 -> f32
    loops.yield %13 : f32
  }
  func.return %0 : tensor<8xf32>
}

// -----

// What stays indirect: a range that crosses 0 (`i0 - 2` is -2 for i0 = 0, a wrap, and 5 for
// i0 = 7), one past the dim, and a position read from memory. A position also used as a
// value keeps its arithmetic for that use; loops.index at the position takes the expression.
// CHECK-LABEL: func.func @kept
// CHECK:         %[[A:.*]] = loops.indirect_index %{{.*}} size 8 : i64
// CHECK:         %[[B:.*]] = loops.indirect_index %{{.*}} size 7 : i64
// CHECK:         %[[C:.*]] = loops.indirect_index %{{.*}} size 8 : i64
// CHECK:         loops.load %x[ind0, ind1] indirect(%[[A]], %[[C]]) : tensor<8x8xf32>
// CHECK:         loops.load %y[ind0] indirect(%[[B]]) : tensor<7xf32>
// CHECK:         loops.index 1 + i0 : i64
func.func @kept(%x: tensor<8x8xf32>, %y: tensor<7xf32>, %k: tensor<8xi64>) -> (tensor<8xf32>, tensor<8xi64>) {
  %0 = loops.pointwise [8] -> tensor<8xf32> {
    %1 = loops.index i0 : i64
    %2 = arith.constant 2 : i64
    %3 = arith.subi %1, %2 : i64
    %4 = loops.indirect_index %3 size 8 : i64
    %5 = loops.indirect_index %1 size 7 : i64
    %6 = loops.load %k[i0] : tensor<8xi64>
    %7 = loops.indirect_index %6 size 8 : i64
    %8 = loops.load %x[ind0, ind1] indirect(%4, %7) : tensor<8x8xf32>
    %9 = loops.load %y[ind0] indirect(%5) : tensor<7xf32>
    %10 = arith.addf %8, %9 : f32
    loops.yield %10 : f32
  }
  %11 = loops.pointwise [8] -> tensor<8xi64> {
    %12 = loops.index i0 : i64
    %13 = arith.constant 1 : i64
    %14 = arith.addi %12, %13 : i64
    %15 = loops.indirect_index %14 size 9 : i64
    %16 = loops.index ind0 indirect(%15) : i64
    %17 = arith.addi %16, %14 : i64
    loops.yield %17 : i64
  }
  func.return %0, %11 : tensor<8xf32>, tensor<8xi64>
}
