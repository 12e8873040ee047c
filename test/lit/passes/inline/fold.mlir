// RUN: mlc-opt %s --split-input-file -p inline | filecheck %s

// A chain of single-use pointwise ops becomes one body, in producer-first order, and the
// consumer takes every producer's origins.
// CHECK-LABEL: func.func @chain_merges_origins
func.func @chain_merges_origins(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // CHECK-NOT:   origins ["neg"]
  // CHECK:       loops.pointwise [8, 64] origins ["erf", "mul", "neg"] -> tensor<8x64xf32> {
  // CHECK-NEXT:    %[[X:.*]] = loops.load %x[i0, i1] : tensor<8x64xf32>
  // CHECK-NEXT:    %[[N:.*]] = arith.negf %[[X]] : f32
  // CHECK-NEXT:    %[[E:.*]] = math.erf %[[N]] : f32
  // CHECK-NEXT:    %[[M:.*]] = arith.mulf %[[E]], %[[E]] : f32
  // CHECK-NEXT:    loops.yield %[[M]] : f32
  %n = loops.pointwise [8, 64] origins ["neg"] -> tensor<8x64xf32> {
    %0 = loops.load %x[i0, i1] : tensor<8x64xf32>
    %1 = arith.negf %0 : f32
    loops.yield %1 : f32
  }
  %e = loops.pointwise [8, 64] origins ["erf"] -> tensor<8x64xf32> {
    %0 = loops.load %n[i0, i1] : tensor<8x64xf32>
    %1 = math.erf %0 : f32
    loops.yield %1 : f32
  }
  %m = loops.pointwise [8, 64] origins ["mul"] -> tensor<8x64xf32> {
    %0 = loops.load %e[i0, i1] : tensor<8x64xf32>
    %1 = arith.mulf %0, %0 : f32
    loops.yield %1 : f32
  }
  func.return %m : tensor<8x64xf32>
}

// -----

// The producer's i0 := i1 and i1 := i0 happen at once: a transposed read of a transposed
// producer reads x in order again (one substitution after the other would give x[i0, i0]).
// CHECK-LABEL: func.func @simultaneous_substitution
func.func @simultaneous_substitution(%x: tensor<16x16xf32>) -> tensor<16x16xf32> {
  // CHECK:       loops.pointwise [16, 16] origins ["add", "permute"]
  // CHECK-NEXT:    loops.load %x[i0, i1] : tensor<16x16xf32>
  // CHECK-NEXT:    loops.index i1 : i64
  %t = loops.pointwise [16, 16] origins ["permute"] -> tensor<16x16xf32> {
    %0 = loops.load %x[i1, i0] : tensor<16x16xf32>
    %1 = loops.index i0 : i64
    %2 = arith.sitofp %1 : i64 to f32
    %3 = arith.addf %0, %2 : f32
    loops.yield %3 : f32
  }
  %a = loops.pointwise [16, 16] origins ["add"] -> tensor<16x16xf32> {
    %0 = loops.load %t[i1, i0] : tensor<16x16xf32>
    loops.yield %0 : f32
  }
  func.return %a : tensor<16x16xf32>
}

// -----

// A broadcast read (the producer is indexed by the consumer's i1 only) and an offset read.
// CHECK-LABEL: func.func @broadcast_and_offset
func.func @broadcast_and_offset(%b: tensor<64xf32>, %x: tensor<8x66xf32>) -> tensor<8x64xf32> {
  // CHECK:       loops.pointwise [8, 64] origins ["add", "exp", "slice"]
  // CHECK-DAG:     loops.load %b[i1] : tensor<64xf32>
  // CHECK-DAG:     loops.load %x[i0, 2 + i1] : tensor<8x66xf32>
  %e = loops.pointwise [64] origins ["exp"] -> tensor<64xf32> {
    %0 = loops.load %b[i0] : tensor<64xf32>
    %1 = math.exp %0 : f32
    loops.yield %1 : f32
  }
  %s = loops.pointwise [8, 64] origins ["slice"] -> tensor<8x64xf32> {
    %0 = loops.load %x[i0, i1 + 2] : tensor<8x66xf32>
    loops.yield %0 : f32
  }
  %a = loops.pointwise [8, 64] origins ["add"] -> tensor<8x64xf32> {
    %0 = loops.load %e[i1] : tensor<64xf32>
    %1 = loops.load %s[i0, i1] : tensor<8x64xf32>
    %2 = arith.addf %0, %1 : f32
    loops.yield %2 : f32
  }
  func.return %a : tensor<8x64xf32>
}

// -----

// A masked load of a producer (cat's second half) masks the producer's loads and selects 0
// where the mask is off, since exp of the 0 a masked load reads is not 0.
// CHECK-LABEL: func.func @masked_load_selects_zero
func.func @masked_load_selects_zero(%x: tensor<8x32xf32>, %y: tensor<8x32xf32>) -> tensor<8x64xf32> {
  // CHECK:       loops.pointwise [8, 64] origins ["cat", "exp"]
  // CHECK:         %[[GE:.*]] = arith.cmpi sge
  // CHECK-NEXT:    %[[L:.*]] = loops.load %y[i0, i1 - 32] mask %[[GE]] : tensor<8x32xf32>
  // CHECK-NEXT:    %[[E:.*]] = math.exp %[[L]] : f32
  // CHECK-NEXT:    %[[Z:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK-NEXT:    %{{.*}} = arith.select %[[GE]], %[[E]], %[[Z]] : f32
  %ex = loops.pointwise [8, 32] origins ["exp"] -> tensor<8x32xf32> {
    %0 = loops.load %y[i0, i1] : tensor<8x32xf32>
    %1 = math.exp %0 : f32
    loops.yield %1 : f32
  }
  %cat = loops.pointwise [8, 64] origins ["cat"] -> tensor<8x64xf32> {
    %i = loops.index i1 : i64
    %c32 = arith.constant 32 : i64
    %lt = arith.cmpi slt, %i, %c32 : i64
    %a = loops.load %x[i0, i1] mask %lt : tensor<8x32xf32>
    %ge = arith.cmpi sge, %i, %c32 : i64
    %b = loops.load %ex[i0, i1 - 32] mask %ge : tensor<8x32xf32>
    %r = arith.select %lt, %a, %b : f32
    loops.yield %r : f32
  }
  func.return %cat : tensor<8x64xf32>
}

// -----

// A masked load of a producer that masks its own load: every copied load takes the outer
// mask, and the inner masked load needs both (andi).
// CHECK-LABEL: func.func @masked_load_of_masked_producer
func.func @masked_load_of_masked_producer(%x: tensor<8xf32>, %m: tensor<8xi1>) -> tensor<8xf32> {
  // CHECK:       loops.pointwise [8] origins ["inner", "outer"]
  // CHECK:         %[[OUTER:.*]] = arith.cmpi slt
  // CHECK:         %[[INNER:.*]] = loops.load %m[i0] mask %[[OUTER]] : tensor<8xi1>
  // CHECK-NEXT:    %[[BOTH:.*]] = arith.andi %[[INNER]], %[[OUTER]] : i1
  // CHECK-NEXT:    loops.load %x[i0] mask %[[BOTH]] : tensor<8xf32>
  %p = loops.pointwise [8] origins ["inner"] -> tensor<8xf32> {
    %0 = loops.load %m[i0] : tensor<8xi1>
    %1 = loops.load %x[i0] mask %0 : tensor<8xf32>
    loops.yield %1 : f32
  }
  %q = loops.pointwise [8] origins ["outer"] -> tensor<8xf32> {
    %i = loops.index i0 : i64
    %c4 = arith.constant 4 : i64
    %lt = arith.cmpi slt, %i, %c4 : i64
    %0 = loops.load %p[i0] mask %lt : tensor<8xf32>
    loops.yield %0 : f32
  }
  func.return %q : tensor<8xf32>
}

// -----

// A reduction inlines its pointwise input but is never inlined itself; exp has two consumers
// and one read, so both recompute it (Inductor's softmax numerator).
// CHECK-LABEL: func.func @reduction_boundary
func.func @reduction_boundary(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // CHECK:       %[[S:.*]] = loops.reduction [8] over [64] origins ["exp", "sum"]
  // CHECK-NEXT:    loops.load %x[i0, r0_0] : tensor<8x64xf32>
  // CHECK-NEXT:    math.exp
  // CHECK-NEXT:    loops.reduce sum
  // CHECK:       loops.pointwise [8, 64] origins ["div", "exp"]
  // CHECK:         loops.load %[[S]][i0] : tensor<8xf32>
  %e = loops.pointwise [8, 64] origins ["exp"] -> tensor<8x64xf32> {
    %0 = loops.load %x[i0, i1] : tensor<8x64xf32>
    %1 = math.exp %0 : f32
    loops.yield %1 : f32
  }
  %s = loops.reduction [8] over [64] origins ["sum"] -> tensor<8xf32> {
    %0 = loops.load %e[i0, r0_0] : tensor<8x64xf32>
    %1 = loops.reduce sum %0 : f32 -> f32
    loops.yield %1 : f32
  }
  %d = loops.pointwise [8, 64] origins ["div"] -> tensor<8x64xf32> {
    %0 = loops.load %e[i0, i1] : tensor<8x64xf32>
    %1 = loops.load %s[i0] : tensor<8xf32>
    %2 = arith.divf %0, %1 : f32
    loops.yield %2 : f32
  }
  func.return %d : tensor<8x64xf32>
}

// -----

// A body without loads (arange) is recomputed by every consumer, and stays only because it
// is also a graph output.
// CHECK-LABEL: func.func @zero_reads_recomputed
func.func @zero_reads_recomputed() -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  // CHECK:       %[[R:.*]] = loops.pointwise [8] origins ["arange"]
  // CHECK:       loops.pointwise [8] origins ["arange", "neg"]
  // CHECK-NOT:     loops.load
  // CHECK:       loops.pointwise [8] origins ["arange", "exp"]
  // CHECK-NOT:     loops.load
  // CHECK:       func.return %[[R]], %{{.*}}, %{{.*}}
  %r = loops.pointwise [8] origins ["arange"] -> tensor<8xf32> {
    %0 = loops.index i0 : i64
    %1 = arith.sitofp %0 : i64 to f32
    loops.yield %1 : f32
  }
  %n = loops.pointwise [8] origins ["neg"] -> tensor<8xf32> {
    %0 = loops.load %r[i0] : tensor<8xf32>
    %1 = arith.negf %0 : f32
    loops.yield %1 : f32
  }
  %e = loops.pointwise [8] origins ["exp"] -> tensor<8xf32> {
    %0 = loops.load %r[i0] : tensor<8xf32>
    %1 = math.exp %0 : f32
    loops.yield %1 : f32
  }
  func.return %r, %n, %e : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// An extern's input is kept for the extern; a view (one load) is still re-indexed into its
// pointwise consumers, a computed input (relu) is loaded by them instead.
// CHECK-LABEL: func.func @extern_inputs
func.func @extern_inputs(%x: tensor<8x32xf32>, %w: tensor<16x32xf32>) -> (tensor<8x16xf32>, tensor<32x16xf32>, tensor<8x32xf32>) {
  // CHECK:       %[[T:.*]] = loops.pointwise [32, 16] origins ["permute"]
  // CHECK:       %[[R:.*]] = loops.pointwise [8, 32] origins ["relu"]
  // CHECK:       loops.extern "mm" (%[[R]], %[[T]])
  // CHECK:       loops.pointwise [32, 16] origins ["neg", "permute"]
  // CHECK-NEXT:    loops.load %w[i1, i0] : tensor<16x32xf32>
  // CHECK:       loops.pointwise [8, 32] origins ["exp"]
  // CHECK-NEXT:    loops.load %[[R]][i0, i1] : tensor<8x32xf32>
  %t = loops.pointwise [32, 16] origins ["permute"] -> tensor<32x16xf32> {
    %0 = loops.load %w[i1, i0] : tensor<16x32xf32>
    loops.yield %0 : f32
  }
  %r = loops.pointwise [8, 32] origins ["relu"] -> tensor<8x32xf32> {
    %0 = loops.load %x[i0, i1] : tensor<8x32xf32>
    %1 = arith.constant 0.000000e+00 : f32
    %2 = arith.maximumf %0, %1 : f32
    loops.yield %2 : f32
  }
  %mm = loops.extern "mm" (%r, %t) {args = [#aten.tensor, #aten.tensor]} : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  %n = loops.pointwise [32, 16] origins ["neg"] -> tensor<32x16xf32> {
    %0 = loops.load %t[i0, i1] : tensor<32x16xf32>
    %1 = arith.negf %0 : f32
    loops.yield %1 : f32
  }
  %e = loops.pointwise [8, 32] origins ["exp"] -> tensor<8x32xf32> {
    %0 = loops.load %r[i0, i1] : tensor<8x32xf32>
    %1 = math.exp %0 : f32
    loops.yield %1 : f32
  }
  func.return %mm, %n, %e : tensor<8x16xf32>, tensor<32x16xf32>, tensor<8x32xf32>
}

// -----

// What no one reads is erased once inlined (and a dead op from the start too); an extern is
// kept even when its result is unused.
// CHECK-LABEL: func.func @dead_ops_erased
func.func @dead_ops_erased(%x: tensor<8xf32>) -> tensor<8xf32> {
  // CHECK-NOT:   origins ["unused"]
  // CHECK:       loops.extern "print_tensor"
  // CHECK-NEXT:  loops.pointwise [8] origins ["exp", "neg"]
  // CHECK-NOT:   loops.pointwise
  // CHECK:       func.return
  %u = loops.pointwise [8] origins ["unused"] -> tensor<8xf32> {
    %0 = loops.load %x[i0] : tensor<8xf32>
    %1 = math.sqrt %0 : f32
    loops.yield %1 : f32
  }
  %p = loops.extern "print_tensor" (%x) {args = [#aten.tensor]} : (tensor<8xf32>) -> tensor<8xf32>
  %n = loops.pointwise [8] origins ["neg"] -> tensor<8xf32> {
    %0 = loops.load %x[i0] : tensor<8xf32>
    %1 = arith.negf %0 : f32
    loops.yield %1 : f32
  }
  %e = loops.pointwise [8] origins ["exp"] -> tensor<8xf32> {
    %0 = loops.load %n[i0] : tensor<8xf32>
    %1 = math.exp %0 : f32
    loops.yield %1 : f32
  }
  func.return %e : tensor<8xf32>
}

// -----

// pad-mm's zero padding read by a contraction stays a stored operand (realize_reason:
// "padded operand of a contraction"): the GEMM reads it aligned, and gemm=measure keeps
// cuBLAS as a choice, which it times only against operands that are plain reads. The
// transpose (a view) folds into the pad first.
// CHECK-LABEL: func.func @padded_operand_of_a_contraction
// CHECK:       %[[PAD:.*]] = loops.pointwise [96, 104] origins ["constant_pad_nd", "permute"]
// CHECK:         loops.load %w[i1, i0] mask
// CHECK:       loops.reduction [64, 104] over [96]
// CHECK-NEXT:    loops.load %x[i0, r0_0]
// CHECK-NEXT:    loops.load %[[PAD]][r0_0, i1]
// CHECK-NEXT:    loops.dot
func.func @padded_operand_of_a_contraction(%x: tensor<64x96xbf16>, %w: tensor<100x96xbf16>) -> tensor<64x100xbf16> {
  %0 = loops.pointwise [104, 96] origins ["constant_pad_nd"] -> tensor<104x96xbf16> {
    %1 = loops.index i0 : i64
    %2 = arith.constant 100 : i64
    %3 = arith.cmpi slt, %1, %2 : i64
    %4 = loops.load %w[i0, i1] mask %3 : tensor<100x96xbf16>
    %5 = arith.extf %4 : bf16 to f32
    %6 = arith.constant 0.000000e+00 : f32
    %7 = arith.select %3, %5, %6 : f32
    %8 = arith.truncf %7 : f32 to bf16
    loops.yield %8 : bf16
  }
  %9 = loops.pointwise [96, 104] origins ["permute"] -> tensor<96x104xbf16> {
    %10 = loops.load %0[i1, i0] : tensor<104x96xbf16>
    loops.yield %10 : bf16
  }
  %11 = loops.reduction [64, 104] over [96] origins ["mm"] -> tensor<64x104xbf16> {
    %12 = loops.load %x[i0, r0_0] : tensor<64x96xbf16>
    %13 = loops.load %9[r0_0, i1] : tensor<96x104xbf16>
    %14 = loops.dot %12, %13 : bf16, bf16 -> f32
    %15 = arith.truncf %14 : f32 to bf16
    loops.yield %15 : bf16
  }
  %16 = loops.pointwise [64, 100] origins ["slice"] -> tensor<64x100xbf16> {
    %17 = loops.load %11[i0, i1] : tensor<64x104xbf16>
    loops.yield %17 : bf16
  }
  func.return %16 : tensor<64x100xbf16>
}
