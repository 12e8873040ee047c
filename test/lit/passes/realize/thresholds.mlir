// RUN: mlc-opt %s --split-input-file -p 'inline,realize{explain=true}' | filecheck %s --check-prefixes=ALL,CHECK
// RUN: mlc-opt %s --split-input-file --inline="reads-threshold=2" --realize="reads-threshold=2 explain=true" | filecheck %s --check-prefixes=ALL,R2
// RUN: mlc-opt %s --split-input-file -p 'inline{acc-reads-threshold=2},realize{acc-reads-threshold=2 explain=true}' | filecheck %s --check-prefixes=ALL,A2
// RUN: mlc-opt %s --split-input-file -p 'inline{opcount-threshold=4},realize{opcount-threshold=4 explain=true}' | filecheck %s --check-prefixes=ALL,O4

// With explain, each stored node says which rule stored it. The producer %p (origins "p")
// reads 3 tensors in 5 ops; the thresholds are set on both passes, as a pipeline should.

// Two consumers: each threshold set below 3 reads / 5 ops stores %p, with its own reason;
// under the defaults both consumers recompute it.
// ALL-LABEL: buffer.graph @reused_producer
// CHECK-NOT: origins ["p"]
// CHECK:     buffer.computed "buf0" {{.*}} origins ["c1", "p"] {
// CHECK:     } attributes {realize_reason = "graph output"}
// R2:        buffer.computed "buf0" {{.*}} origins ["p"] {
// R2:        } attributes {realize_reason = "reused by 2 consumers and reads 3 > 2 times"}
// A2:        buffer.computed "buf0" {{.*}} origins ["p"] {
// A2:        } attributes {realize_reason = "reads 3 > 2 times"}
// O4:        buffer.computed "buf0" {{.*}} origins ["p"] {
// O4:        } attributes {realize_reason = "reused by 2 consumers and body has 5 > 4 ops"}
func.func @reused_producer(%a: tensor<8xf32>, %b: tensor<8xf32>, %c: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %p = loops.pointwise [8] origins ["p"] -> tensor<8xf32> {
    %0 = loops.load %a[i0] : tensor<8xf32>
    %1 = loops.load %b[i0] : tensor<8xf32>
    %2 = arith.addf %0, %1 : f32
    %3 = loops.load %c[i0] : tensor<8xf32>
    %4 = arith.addf %2, %3 : f32
    loops.yield %4 : f32
  }
  %c1 = loops.pointwise [8] origins ["c1"] -> tensor<8xf32> {
    %0 = loops.load %p[i0] : tensor<8xf32>
    %1 = arith.negf %0 : f32
    loops.yield %1 : f32
  }
  %c2 = loops.pointwise [8] origins ["c2"] -> tensor<8xf32> {
    %0 = loops.load %p[i0] : tensor<8xf32>
    %1 = math.sqrt %0 : f32
    loops.yield %1 : f32
  }
  func.return %c1, %c2 : tensor<8xf32>, tensor<8xf32>
}

// -----

// One consumer: reads-threshold does not apply; acc-reads-threshold and opcount-threshold do
// (through Inductor's has_exceeded_max_reads, as %p has more than one nontrivial read).
// ALL-LABEL: buffer.graph @single_consumer
// CHECK:     buffer.computed "buf0" {{.*}} origins ["c1", "p"] {
// R2:        buffer.computed "buf0" {{.*}} origins ["c1", "p"] {
// A2:        buffer.computed "buf0" {{.*}} origins ["p"] {
// A2:        } attributes {realize_reason = "reads 3 > 2 times"}
// O4:        buffer.computed "buf0" {{.*}} origins ["p"] {
// O4:        } attributes {realize_reason = "body has 5 > 4 ops"}
func.func @single_consumer(%a: tensor<8xf32>, %b: tensor<8xf32>, %c: tensor<8xf32>) -> tensor<8xf32> {
  %p = loops.pointwise [8] origins ["p"] -> tensor<8xf32> {
    %0 = loops.load %a[i0] : tensor<8xf32>
    %1 = loops.load %b[i0] : tensor<8xf32>
    %2 = arith.addf %0, %1 : f32
    %3 = loops.load %c[i0] : tensor<8xf32>
    %4 = arith.addf %2, %3 : f32
    loops.yield %4 : f32
  }
  %c1 = loops.pointwise [8] origins ["c1"] -> tensor<8xf32> {
    %0 = loops.load %p[i0] : tensor<8xf32>
    %1 = arith.negf %0 : f32
    loops.yield %1 : f32
  }
  func.return %c1 : tensor<8xf32>
}

// -----

// Stored whatever the thresholds: a reduction, an extern's input (a view of one is a
// buffer.view, which says so too), a graph output.
// ALL-LABEL: buffer.graph @always_stored
// ALL:       buffer.computed "buf0" {{.*}} origins ["sum"] {
// ALL:       } attributes {realize_reason = "reduction"}
// ALL:       buffer.computed "buf1" {{.*}} origins ["relu"] {
// ALL:       } attributes {realize_reason = "read by extern 'mm.default'"}
// ALL:       buffer.view "view0" = @w {{.*}} {realize_reason = "read by extern 'mm.default'"}
// ALL:       buffer.computed "buf3" {{.*}} origins ["div"] {
// ALL:       } attributes {realize_reason = "graph output"}
func.func @always_stored(%x: tensor<8x32xf32>, %w: tensor<16x32xf32>) -> tensor<8x16xf32> {
  %s = loops.reduction [8] over [32] origins ["sum"] -> tensor<8xf32> {
    %0 = loops.load %x[i0, r0_0] : tensor<8x32xf32>
    %1 = loops.reduce sum %0 : f32 -> f32
    loops.yield %1 : f32
  }
  %r = loops.pointwise [8, 32] origins ["relu"] -> tensor<8x32xf32> {
    %0 = loops.load %x[i0, i1] : tensor<8x32xf32>
    %1 = arith.constant 0.000000e+00 : f32
    %2 = arith.maximumf %0, %1 : f32
    loops.yield %2 : f32
  }
  %t = loops.pointwise [32, 16] origins ["permute"] -> tensor<32x16xf32> {
    %0 = loops.load %w[i1, i0] : tensor<16x32xf32>
    loops.yield %0 : f32
  }
  %m = loops.extern "mm.default" (%r, %t) {args = [#aten.tensor, #aten.tensor]} : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  %d = loops.pointwise [8, 16] origins ["div"] -> tensor<8x16xf32> {
    %0 = loops.load %m[i0, i1] : tensor<8x16xf32>
    %1 = loops.load %s[i0] : tensor<8xf32>
    %2 = arith.divf %0, %1 : f32
    loops.yield %2 : f32
  }
  func.return %d : tensor<8x16xf32>
}
