// RUN: mlc-opt %s --split-input-file | mlc-opt --split-input-file | filecheck %s
// RUN: mlc-opt %s --split-input-file --print-op-generic | mlc-opt --split-input-file | filecheck %s

// Symbolic sizes at each stage: a `?` dim named by #sym.sizes, a size argument !sym.int<s0>,
// size inputs of the buffer graph and of the wrapper, symbolic layouts and numels.
// CHECK-LABEL: func.func @aten
// CHECK-SAME:    (%n: !sym.int<s0>, %x: tensor<?x64xf32, #sym.sizes<[s0, 64]>>) -> tensor<?xf32, #sym.sizes<[64*s0]>>
func.func @aten(%n: !sym.int<s0>, %x: tensor<?x64xf32, #sym.sizes<[s0, 64]>>) -> tensor<?xf32, #sym.sizes<[64*s0]>> {
  // CHECK: aten.view %x {size = [#sym.expr<64*s0>]}
  %v = aten.view %x {size = [#sym.expr<64*s0>]} : (tensor<?x64xf32, #sym.sizes<[s0, 64]>>) -> tensor<?xf32, #sym.sizes<[64*s0]>>
  func.return %v : tensor<?xf32, #sym.sizes<[64*s0]>>
}

// -----

// CHECK-LABEL: buffer.graph @forward
// CHECK-NEXT:    buffer.size_input "n" <s0>
// CHECK-NEXT:    buffer.input "x" #buffer.layout<[s0, 64], [64, 1], f32>
buffer.graph @forward {
  buffer.size_input "n" <s0>
  buffer.input "x" #buffer.layout<[s0, 64], [64, 1], f32>
  buffer.output @x
}

// -----

// CHECK-LABEL: triton.wrapper @call
// CHECK-NEXT:    triton.size_input "n" s0
// CHECK-NEXT:    triton.input "x" #buffer.layout<[s0, 64], [64, 1], f32>
// CHECK-NEXT:    triton.alloc "buf0" #buffer.layout<[s0, 64], [64, 1], f32>
triton.wrapper @call {
  triton.size_input "n" s0
  triton.input "x" #buffer.layout<[s0, 64], [64, 1], f32>
  triton.alloc "buf0" #buffer.layout<[s0, 64], [64, 1], f32>
  triton.return @buf0
}

// -----

// A size whose expression is a call with several arguments: its commas are the call's.
// CHECK-LABEL: func.func @call_in_sizes
// CHECK-SAME:    tensor<2x?xf32, #sym.sizes<[2, 32*CeilDiv(s1, 32)]>>
func.func @call_in_sizes(%x: tensor<2x?xf32, #sym.sizes<[2, 32*CeilDiv(s1, 32)]>>) -> tensor<2x?xf32, #sym.sizes<[2, 32*CeilDiv(s1, 32)]>> {
  func.return %x : tensor<2x?xf32, #sym.sizes<[2, 32*CeilDiv(s1, 32)]>>
}
