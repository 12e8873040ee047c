// RUN: mlc-opt %s -p lower-aten | filecheck %s --check-prefix=LOOPS
// RUN: mlc-opt %s -p lower-aten,inline,realize,deps | filecheck %s --check-prefix=BUFFER
// RUN: mlc-opt %s -p lower-aten,inline,realize,deps,fuse,overlap-comm,convert-to-triton | filecheck %s --check-prefix=WRAPPER

// A collective through the stages, as the importer writes it: a start and a wait, each an
// extern call of torch's op (the group by its name, "0"), ordered by their StarDeps alone.
// The mm does not need the all-reduce: in the wrapper it runs while the all-reduce is in flight.

// LOOPS:      loops.extern "_c10d_functional::all_reduce.default" (%{{.*}}) {args = [#aten.tensor, "sum", "0"]}
// LOOPS:      loops.extern "_c10d_functional::wait_tensor.default" (%{{.*}}) {args = [#aten.tensor]}

// BUFFER:     buffer.extern "buf1" = "_c10d_functional::all_reduce.default" {args = [@buf0, "sum", "0"], {{.*}}} : #buffer.layout<[4, 8], [8, 1], f32> attributes {reads = [#buffer.star<"buf0">], writes = [#buffer.star<"buf1">]}
// BUFFER-NEXT: buffer.extern "buf2" = "_c10d_functional::wait_tensor.default" {args = [@buf1], {{.*}}} : #buffer.layout<[4, 8], [8, 1], f32> attributes {reads = [#buffer.star<"buf1">], writes = [#buffer.star<"buf2">]}

// WRAPPER:      triton.wrapper @call {
// WRAPPER:        triton.launch @triton_poi_fused_relu_0
// WRAPPER-NEXT:   triton.extern "buf1" = "_c10d_functional::all_reduce.default" {args = [@buf0, "sum", "0"]}
// WRAPPER-NEXT:   triton.free @buf0
// WRAPPER-NEXT:   triton.extern "buf3" = "mm.default" {args = [@x, @w], fresh}
// WRAPPER-NEXT:   triton.free @x, @w
// WRAPPER-NEXT:   triton.extern "buf2" = "_c10d_functional::wait_tensor.default" {args = [@buf1]}
// WRAPPER:        triton.launch @triton_poi_fused_add_1
func.func @forward(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %0 = aten.relu %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = aten.call "_c10d_functional::all_reduce" (%0) {args = [#aten.tensor, "sum", "0"]} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = aten.call "_c10d_functional::wait_tensor" (%1) {args = [#aten.tensor]} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = aten.mm %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %4 = aten.add.Tensor %2, %3 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %4 : tensor<4x8xf32>
}
