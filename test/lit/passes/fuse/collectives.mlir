// RUN: mlc-opt %s --split-input-file --fuse="explain=true" | filecheck %s

// A collective's start reads its input whole and its wait defines the result every reader
// reads, so no fusion moves work across a wait it depends on: the kernel computing the
// all-reduce's input and the kernel reading its result (and that input again) would close a
// cycle through the start and the wait.
// CHECK-LABEL: buffer.graph @across_a_wait
// CHECK-NOT:   buffer.fused
// CHECK:       } attributes {fusion = [{{.*}}"refused buf0 + buf3: [cycle] buf1 depends on one of buf0, buf3 and feeds the other: fusing would need it inside the kernel", {{.*}}"refusals: cycle: 1", "refusals: extern: 3"]}
buffer.graph @across_a_wait {
  buffer.input "x" #buffer.layout<[64], [1], f32>
  buffer.computed "buf0" #buffer.layout<[64], [1], f32> ranges [64] origins ["relu"] {
    %0 = buffer.load @x[i0] : f32
    %1 = arith.constant 0.0 : f32
    %2 = arith.maximumf %0, %1 : f32
    buffer.store @buf0[i0], %2 : f32
  }
  buffer.extern "buf1" = "_c10d_functional::all_reduce.default" {args = [@buf0, "sum", "0"]} : #buffer.layout<[64], [1], f32>
  buffer.extern "buf2" = "_c10d_functional::wait_tensor.default" {args = [@buf1]} : #buffer.layout<[64], [1], f32>
  buffer.computed "buf3" #buffer.layout<[64], [1], f32> ranges [64] origins ["add"] {
    %0 = buffer.load @buf2[i0] : f32
    %1 = buffer.load @buf0[i0] : f32
    %2 = arith.addf %0, %1 : f32
    buffer.store @buf3[i0], %2 : f32
  }
  buffer.output @buf3
}

// -----

// A kernel independent of the collective still fuses with one before it (and runs there).
// CHECK-LABEL: buffer.graph @independent_of_the_wait
// CHECK:       buffer.fused {
// CHECK-NEXT:    buffer.computed "buf0"
// CHECK:         buffer.computed "buf3"
// CHECK:       buffer.extern "buf1" = "_c10d_functional::all_reduce.default"
// CHECK-NEXT:  buffer.extern "buf2" = "_c10d_functional::wait_tensor.default"
buffer.graph @independent_of_the_wait {
  buffer.input "x" #buffer.layout<[64], [1], f32>
  buffer.computed "buf0" #buffer.layout<[64], [1], f32> ranges [64] origins ["relu"] {
    %0 = buffer.load @x[i0] : f32
    %1 = arith.constant 0.0 : f32
    %2 = arith.maximumf %0, %1 : f32
    buffer.store @buf0[i0], %2 : f32
  }
  buffer.extern "buf1" = "_c10d_functional::all_reduce.default" {args = [@buf0, "sum", "0"]} : #buffer.layout<[64], [1], f32>
  buffer.extern "buf2" = "_c10d_functional::wait_tensor.default" {args = [@buf1]} : #buffer.layout<[64], [1], f32>
  buffer.computed "buf3" #buffer.layout<[64], [1], f32> ranges [64] origins ["exp"] {
    %0 = buffer.load @buf0[i0] : f32
    %1 = math.exp %0 : f32
    buffer.store @buf3[i0], %1 : f32
  }
  buffer.output @buf2, @buf3
}
