// RUN: mlc-opt %s --split-input-file --overlap-comm | filecheck %s
// RUN: mlc-opt %s --split-input-file --overlap-comm="enabled=false" | filecheck %s --check-prefix=OFF
// RUN: mlc-opt %s --split-input-file --overlap-comm="explain=true" -o /dev/null 2>&1 | filecheck %s --check-prefix=REMARK

// A kernel that reads neither the all-reduce's input nor its result runs while it is in
// flight: the wait moves down to the node that reads the result. With enabled=false nothing moves.
// CHECK-LABEL: buffer.graph @independent_kernel
// CHECK:       buffer.computed "buf0"
// CHECK:       buffer.extern "buf1" = "_c10d_functional::all_reduce.default"
// CHECK-NEXT:  buffer.extern "buf3" = "mm.default"
// CHECK-NEXT:  buffer.extern "buf2" = "_c10d_functional::wait_tensor.default"
// CHECK-NEXT:  buffer.computed "buf4"
// OFF-LABEL:   buffer.graph @independent_kernel
// OFF:         buffer.extern "buf1" = "_c10d_functional::all_reduce.default"
// OFF-NEXT:    buffer.extern "buf2" = "_c10d_functional::wait_tensor.default"
// OFF-NEXT:    buffer.extern "buf3" = "mm.default"
// REMARK:      overlap.mlir:28:3: remark: [overlap-comm] all_reduce buf1 stays: right after buf0 (it reads buf0)
// REMARK-NEXT: overlap.mlir:28:3: remark: [overlap-comm] all_reduce buf1 is in flight over buf3
// REMARK-NEXT: overlap.mlir:29:3: remark: [overlap-comm] wait buf2 for buf1 moves 1 node later, right before buf4 (it reads buf2)
buffer.graph @independent_kernel {
  buffer.input "x" #buffer.layout<[8, 8], [8, 1], f32>
  buffer.computed "buf0" #buffer.layout<[8, 8], [8, 1], f32> ranges [64] origins ["relu"] {
    %0 = buffer.load @x[i0] : f32
    %1 = arith.constant 0.0 : f32
    %2 = arith.maximumf %0, %1 : f32
    buffer.store @buf0[i0], %2 : f32
  }
  buffer.extern "buf1" = "_c10d_functional::all_reduce.default" {args = [@buf0, "sum", "0"]} : #buffer.layout<[8, 8], [8, 1], f32>
  buffer.extern "buf2" = "_c10d_functional::wait_tensor.default" {args = [@buf1]} : #buffer.layout<[8, 8], [8, 1], f32>
  buffer.extern "buf3" = "mm.default" {args = [@x, @x]} : #buffer.layout<[8, 8], [8, 1], f32>
  buffer.computed "buf4" #buffer.layout<[8, 8], [8, 1], f32> ranges [64] origins ["mul"] {
    %0 = buffer.load @buf2[i0] : f32
    %1 = buffer.load @buf3[i0] : f32
    %2 = arith.mulf %0, %1 : f32
    buffer.store @buf4[i0], %2 : f32
  }
  buffer.output @buf4
}

// -----

// A start that reads only a graph input moves to the top, above kernels it does not read:
// they run while it is in flight. Its wait stays right before its reader.
// CHECK-LABEL: buffer.graph @start_of_an_input
// CHECK:       buffer.input "x"
// CHECK-NEXT:  buffer.extern "buf2" = "_c10d_functional::all_gather_into_tensor.default"
// CHECK-NEXT:  buffer.computed "buf0"
// CHECK:       buffer.computed "buf1"
// CHECK:       buffer.extern "buf3" = "_c10d_functional::wait_tensor.default"
// REMARK:      remark: [overlap-comm] all_gather_into_tensor buf2 moves 2 nodes earlier, first in the graph (it reads only inputs)
// REMARK-NEXT: remark: [overlap-comm] all_gather_into_tensor buf2 is in flight over buf0, buf1
// REMARK-NEXT: remark: [overlap-comm] wait buf3 for buf2 stays: right before buf4 (it reads buf3)
buffer.graph @start_of_an_input {
  buffer.input "x" #buffer.layout<[4, 8], [8, 1], f32>
  buffer.computed "buf0" #buffer.layout<[4, 8], [8, 1], f32> ranges [32] origins ["exp"] {
    %0 = buffer.load @x[i0] : f32
    %1 = math.exp %0 : f32
    buffer.store @buf0[i0], %1 : f32
  }
  buffer.computed "buf1" #buffer.layout<[4], [1], f32> ranges [4] reduce [8] origins ["sum"] {
    %0 = buffer.load @buf0[r0_0 + 8*i0] : f32
    %1 = buffer.reduce sum %0 : f32 -> f32
    buffer.store @buf1[i0], %1 : f32
  }
  buffer.extern "buf2" = "_c10d_functional::all_gather_into_tensor.default" {args = [@x, 2 : i64, "0"]} : #buffer.layout<[8, 8], [8, 1], f32>
  buffer.extern "buf3" = "_c10d_functional::wait_tensor.default" {args = [@buf2]} : #buffer.layout<[8, 8], [8, 1], f32>
  buffer.computed "buf4" #buffer.layout<[8, 8], [8, 1], f32> ranges [8, 8] origins ["add"] {
    %0 = buffer.load @buf3[i1 + 8*i0] : f32
    %1 = buffer.load @buf1[ModularIndexing(i0, 1, 4)] : f32
    %2 = arith.addf %0, %1 : f32
    buffer.store @buf4[i1 + 8*i0], %2 : f32
  }
  buffer.output @buf4
}

// -----

// Collectives start in program order (the same on every rank): the second all-reduce moves up
// to right after the first, not past it, although it reads only an input. Both waits, which
// only the output reads, sink to the end, in their order.
// CHECK-LABEL: buffer.graph @starts_keep_their_order
// CHECK:       buffer.extern "buf0" = "_c10d_functional::all_reduce.default"
// CHECK-NEXT:  buffer.extern "buf3" = "_c10d_functional::all_reduce.default"
// CHECK-NEXT:  buffer.computed "buf2"
// CHECK:       buffer.extern "buf1" = "_c10d_functional::wait_tensor.default"
// CHECK-NEXT:  buffer.extern "buf4" = "_c10d_functional::wait_tensor.default"
// CHECK-NEXT:  buffer.output @buf1, @buf4
// REMARK:      remark: [overlap-comm] all_reduce buf0 stays: first in the graph (it reads only inputs)
// REMARK-NEXT: remark: [overlap-comm] all_reduce buf0 is in flight over buf3, buf2
// REMARK-NEXT: remark: [overlap-comm] all_reduce buf3 moves 2 nodes earlier, right after buf0 (collectives start in program order)
// REMARK-NEXT: remark: [overlap-comm] all_reduce buf3 is in flight over buf2, buf1
// REMARK-NEXT: remark: [overlap-comm] wait buf1 for buf0 moves 2 nodes later, last in the graph (only the output reads it)
// REMARK-NEXT: remark: [overlap-comm] wait buf4 for buf3 moves 1 node later, last in the graph (only the output reads it)
buffer.graph @starts_keep_their_order {
  buffer.input "x" #buffer.layout<[8], [1], f32>
  buffer.input "y" #buffer.layout<[8], [1], f32>
  buffer.extern "buf0" = "_c10d_functional::all_reduce.default" {args = [@x, "sum", "0"]} : #buffer.layout<[8], [1], f32>
  buffer.extern "buf1" = "_c10d_functional::wait_tensor.default" {args = [@buf0]} : #buffer.layout<[8], [1], f32>
  buffer.computed "buf2" #buffer.layout<[8], [1], f32> ranges [8] origins ["neg"] {
    %0 = buffer.load @y[i0] : f32
    %1 = arith.negf %0 : f32
    buffer.store @buf2[i0], %1 : f32
  }
  buffer.extern "buf3" = "_c10d_functional::all_reduce.default" {args = [@y, "max", "0"]} : #buffer.layout<[8], [1], f32>
  buffer.extern "buf4" = "_c10d_functional::wait_tensor.default" {args = [@buf3]} : #buffer.layout<[8], [1], f32>
  buffer.output @buf1, @buf4
}

// -----

// A node that reads the storage a collective is filling (the start's own buffer, the same
// storage the wait returns) keeps the wait above it, as a reader of the wait's result does.
// CHECK-LABEL: buffer.graph @reader_of_the_started_buffer
// CHECK:       buffer.extern "buf1" = "_c10d_functional::wait_tensor.default"
// CHECK-NEXT:  buffer.computed "buf2"
// REMARK:      remark: [overlap-comm] wait buf1 for buf0 stays: right before buf2 (it reads buf0)
buffer.graph @reader_of_the_started_buffer {
  buffer.input "x" #buffer.layout<[8], [1], f32>
  buffer.extern "buf0" = "_c10d_functional::broadcast.default" {args = [@x, 0 : i64, "0"]} : #buffer.layout<[8], [1], f32>
  buffer.extern "buf1" = "_c10d_functional::wait_tensor.default" {args = [@buf0]} : #buffer.layout<[8], [1], f32>
  buffer.computed "buf2" #buffer.layout<[8], [1], f32> ranges [8] origins ["neg"] {
    %0 = buffer.load @buf0[i0] : f32
    %1 = arith.negf %0 : f32
    buffer.store @buf2[i0], %1 : f32
  }
  buffer.output @buf1, @buf2
}

// -----

// A fused group moves as one node; a coalesced collective has one wait per result. The
// reduce-scatter starts above the group, which does not read it, and both waits sink below
// the group and buf6, which do not read them, keeping their order.
// CHECK-LABEL: buffer.graph @fused_and_coalesced
// CHECK:       buffer.extern "buf2", "buf3" = "_c10d_functional::reduce_scatter_tensor_coalesced.default"
// CHECK-NEXT:  buffer.fused {
// CHECK:       buffer.computed "buf6"
// CHECK:       buffer.extern "buf4" = "_c10d_functional::wait_tensor.default" {args = [@buf2]}
// CHECK-NEXT:  buffer.extern "buf5" = "_c10d_functional::wait_tensor.default" {args = [@buf3]}
// CHECK-NEXT:  buffer.output
// REMARK:      remark: [overlap-comm] reduce_scatter_tensor_coalesced buf2+buf3 moves 1 node earlier, first in the graph (it reads only inputs)
// REMARK-NEXT: remark: [overlap-comm] reduce_scatter_tensor_coalesced buf2+buf3 is in flight over buf0+buf1, buf6
// REMARK-NEXT: remark: [overlap-comm] wait buf4 for buf2 moves 2 nodes later, last in the graph (only the output reads it)
// REMARK-NEXT: remark: [overlap-comm] wait buf5 for buf3 moves 2 nodes later, last in the graph (only the output reads it)
buffer.graph @fused_and_coalesced {
  buffer.input "x" #buffer.layout<[8], [1], f32>
  buffer.input "y" #buffer.layout<[8], [1], f32>
  buffer.fused {
    buffer.computed "buf0" #buffer.layout<[8], [1], f32> ranges [8] origins ["exp"] {
      %0 = buffer.load @x[i0] : f32
      %1 = math.exp %0 : f32
      buffer.store @buf0[i0], %1 : f32
    }
    buffer.computed "buf1" #buffer.layout<[8], [1], f32> ranges [8] origins ["neg"] {
      %0 = buffer.load @buf0[i0] : f32
      %1 = arith.negf %0 : f32
      buffer.store @buf1[i0], %1 : f32
    }
  }
  buffer.extern "buf2", "buf3" = "_c10d_functional::reduce_scatter_tensor_coalesced.default" {args = [[@x, @y], "sum", 2 : i64, "0"]} : #buffer.layout<[4], [1], f32>, #buffer.layout<[4], [1], f32>
  buffer.extern "buf4" = "_c10d_functional::wait_tensor.default" {args = [@buf2]} : #buffer.layout<[4], [1], f32>
  buffer.extern "buf5" = "_c10d_functional::wait_tensor.default" {args = [@buf3]} : #buffer.layout<[4], [1], f32>
  buffer.computed "buf6" #buffer.layout<[8], [1], f32> ranges [8] origins ["exp"] {
    %0 = buffer.load @buf1[i0] : f32
    %1 = math.exp %0 : f32
    buffer.store @buf6[i0], %1 : f32
  }
  buffer.output @buf4, @buf5, @buf6
}
