// RUN: mlc-opt %s --split-input-file --lower-aten | filecheck %s

// Symbolic sizes (dynamic shapes): a `?` dim named by the type's #sym.sizes encoding becomes a
// symbolic range; a mean divides by the size's value at run time (`loops.index s1`).
// CHECK-LABEL: func.func @dynamic_rows
// CHECK:       loops.pointwise [s0, 64] origins ["exp"] -> tensor<?x64xf32, #sym.sizes<[s0, 64]>>
// CHECK:         loops.load %{{.*}}[i0, i1] : tensor<?x64xf32, #sym.sizes<[s0, 64]>>
func.func @dynamic_rows(%n: !sym.int<s0>, %x: tensor<?x64xf32, #sym.sizes<[s0, 64]>>) -> tensor<?x64xf32, #sym.sizes<[s0, 64]>> {
  %e = aten.exp %x : (tensor<?x64xf32, #sym.sizes<[s0, 64]>>) -> tensor<?x64xf32, #sym.sizes<[s0, 64]>> loc("exp")
  func.return %e : tensor<?x64xf32, #sym.sizes<[s0, 64]>>
}

// -----

// CHECK-LABEL: func.func @mean_over_a_dynamic_row
// CHECK:       loops.reduction [s0] over [s1]
// CHECK:         loops.reduce sum
// CHECK:         %[[N:.*]] = loops.index s1 : i64
// CHECK:         arith.sitofp %[[N]] : i64 to f32
// CHECK:         arith.divf
func.func @mean_over_a_dynamic_row(%a: !sym.int<s0>, %b: !sym.int<s1>, %x: tensor<?x?xf32, #sym.sizes<[s0, s1]>>) -> tensor<?xf32, #sym.sizes<[s0]>> {
  %m = aten.mean.dim %x {dim = array<i64: 1>} : (tensor<?x?xf32, #sym.sizes<[s0, s1]>>) -> tensor<?xf32, #sym.sizes<[s0]>> loc("mean")
  func.return %m : tensor<?xf32, #sym.sizes<[s0]>>
}

