// RUN: mlc-opt %s --split-input-file -p inline | filecheck %s --check-prefixes=ALL,CHECK
// RUN: mlc-opt %s --split-input-file -p 'inline{emulate-precision-casts=true}' | filecheck %s --check-prefixes=ALL,EMU

// --lower-aten computes f16/bf16 in f32: every op widens its loads (extf) and narrows its
// yield (truncf). Inlined, a chain has f32 -> f16 -> f32 round trips between its ops; Inductor
// rounds only where it stores, so by default they fold away. emulate-precision-casts=true keeps
// them (eager's numerics: every op rounds its result).

// An f16 chain (x * w -> exp -> + 1): one extf per load, one truncf before the yield.
// ALL-LABEL: func.func @f16_chain
func.func @f16_chain(%x: tensor<8x64xf16>, %w: tensor<64xf16>) -> tensor<8x64xf16> {
  // ALL:          loops.pointwise [8, 64] origins ["add", "exp", "mul"] -> tensor<8x64xf16> {
  // CHECK-NEXT:     %[[X:.*]] = loops.load %x[i0, i1] : tensor<8x64xf16>
  // CHECK-NEXT:     %[[XW:.*]] = arith.extf %[[X]] : f16 to f32
  // CHECK-NEXT:     %[[W:.*]] = loops.load %w[i1] : tensor<64xf16>
  // CHECK-NEXT:     %[[WW:.*]] = arith.extf %[[W]] : f16 to f32
  // CHECK-NEXT:     %[[M:.*]] = arith.mulf %[[XW]], %[[WW]] : f32
  // CHECK-NEXT:     %[[E:.*]] = math.exp %[[M]] : f32
  // CHECK-NEXT:     %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
  // CHECK-NEXT:     %[[A:.*]] = arith.addf %[[E]], %[[ONE]] : f32
  // CHECK-NEXT:     %[[N:.*]] = arith.truncf %[[A]] : f32 to f16
  // CHECK-NEXT:     loops.yield %[[N]] : f16
  // EMU:            %[[M:.*]] = arith.mulf
  // EMU-NEXT:       %[[MN:.*]] = arith.truncf %[[M]] : f32 to f16
  // EMU-NEXT:       %[[MW:.*]] = arith.extf %[[MN]] : f16 to f32
  // EMU-NEXT:       %[[E:.*]] = math.exp %[[MW]] : f32
  // EMU-NEXT:       %[[EN:.*]] = arith.truncf %[[E]] : f32 to f16
  // EMU-NEXT:       %[[EW:.*]] = arith.extf %[[EN]] : f16 to f32
  // EMU-NEXT:       arith.constant 1.000000e+00 : f32
  // EMU-NEXT:       arith.addf %[[EW]]
  // EMU-NEXT:       arith.truncf %{{.*}} : f32 to f16
  // EMU-NEXT:       loops.yield
  %0 = loops.pointwise [8, 64] origins ["mul"] -> tensor<8x64xf16> {
    %1 = loops.load %x[i0, i1] : tensor<8x64xf16>
    %2 = arith.extf %1 : f16 to f32
    %3 = loops.load %w[i1] : tensor<64xf16>
    %4 = arith.extf %3 : f16 to f32
    %5 = arith.mulf %2, %4 : f32
    %6 = arith.truncf %5 : f32 to f16
    loops.yield %6 : f16
  }
  %7 = loops.pointwise [8, 64] origins ["exp"] -> tensor<8x64xf16> {
    %8 = loops.load %0[i0, i1] : tensor<8x64xf16>
    %9 = arith.extf %8 : f16 to f32
    %10 = math.exp %9 : f32
    %11 = arith.truncf %10 : f32 to f16
    loops.yield %11 : f16
  }
  %12 = loops.pointwise [8, 64] origins ["add"] -> tensor<8x64xf16> {
    %13 = loops.load %7[i0, i1] : tensor<8x64xf16>
    %14 = arith.extf %13 : f16 to f32
    %15 = arith.constant 1.000000e+00 : f32
    %16 = arith.addf %14, %15 : f32
    %17 = arith.truncf %16 : f32 to f16
    loops.yield %17 : f16
  }
  func.return %12 : tensor<8x64xf16>
}

// -----

// An unmarked round trip before math does not round either (Inductor's to_dtype casts to
// the compute type, f32, unless emulate_precision_casts).
// ALL-LABEL: func.func @explicit_round_trip
func.func @explicit_round_trip(%x: tensor<8xf32>) -> tensor<8xf32> {
  // ALL:          loops.pointwise [8] origins ["_to_copy", "mul"] -> tensor<8xf32> {
  // CHECK-NEXT:     %[[A:.*]] = loops.load %x[i0] : tensor<8xf32>
  // CHECK-NEXT:     %[[B:.*]] = loops.load %x[i0] : tensor<8xf32>
  // CHECK-NEXT:     arith.mulf %[[A]], %[[B]] : f32
  // EMU-NEXT:       %[[A:.*]] = loops.load %x[i0] : tensor<8xf32>
  // EMU-NEXT:       %[[AN:.*]] = arith.truncf %[[A]] : f32 to f16
  // EMU-NEXT:       %[[AW:.*]] = arith.extf %[[AN]] : f16 to f32
  // EMU-NEXT:       %[[B:.*]] = loops.load %x[i0] : tensor<8xf32>
  // EMU-NEXT:       %[[BN:.*]] = arith.truncf %[[B]] : f32 to f16
  // EMU-NEXT:       %[[BW:.*]] = arith.extf %[[BN]] : f16 to f32
  // EMU-NEXT:       arith.mulf %[[AW]], %[[BW]] : f32
  // ALL-NEXT:       loops.yield
  %0 = loops.pointwise [8] origins ["_to_copy"] -> tensor<8xf16> {
    %1 = loops.load %x[i0] : tensor<8xf32>
    %2 = arith.truncf %1 : f32 to f16
    loops.yield %2 : f16
  }
  %3 = loops.pointwise [8] origins ["_to_copy"] -> tensor<8xf32> {
    %4 = loops.load %0[i0] : tensor<8xf16>
    %5 = arith.extf %4 : f16 to f32
    loops.yield %5 : f32
  }
  %6 = loops.pointwise [8] origins ["mul"] -> tensor<8xf32> {
    %7 = loops.load %3[i0] : tensor<8xf32>
    %8 = loops.load %3[i0] : tensor<8xf32>
    %9 = arith.mulf %7, %8 : f32
    loops.yield %9 : f32
  }
  func.return %6 : tensor<8xf32>
}

// -----

// bf16 through cat: the masked loads of inlined producers select between bf16 roundings (and
// the 0 of masked-off lanes); the selects move to f32 and the roundings fold.
// ALL-LABEL: func.func @bf16_cat_selects
func.func @bf16_cat_selects(%x: tensor<4x8xbf16>, %y: tensor<4x8xbf16>) -> tensor<8x8xbf16> {
  // ALL:          loops.pointwise [8, 8] origins ["cat", "exp", "neg", "sigmoid"] -> tensor<8x8xbf16> {
  // CHECK:          %[[LT:.*]] = arith.cmpi slt
  // CHECK-NEXT:     %[[X:.*]] = loops.load %x[i0, i1] mask %[[LT]] : tensor<4x8xbf16>
  // CHECK-NEXT:     %[[XW:.*]] = arith.extf %[[X]] : bf16 to f32
  // CHECK-NEXT:     %[[E:.*]] = math.exp %[[XW]] : f32
  // CHECK-NEXT:     %[[GE:.*]] = arith.cmpi sge
  // CHECK-NEXT:     %[[Y:.*]] = loops.load %y[i0 - 4, i1] mask %[[GE]] : tensor<4x8xbf16>
  // CHECK-NEXT:     %[[YW:.*]] = arith.extf %[[Y]] : bf16 to f32
  // CHECK-NEXT:     %[[N:.*]] = arith.negf %[[YW]] : f32
  // CHECK-NEXT:     %[[Z1:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK-NEXT:     %[[S1:.*]] = arith.select %[[LT]], %[[E]], %[[Z1]] : f32
  // CHECK-NEXT:     %[[Z2:.*]] = arith.constant 0.000000e+00 : f32
  // CHECK-NEXT:     %[[S2:.*]] = arith.select %[[GE]], %[[N]], %[[Z2]] : f32
  // CHECK-NEXT:     %[[S:.*]] = arith.select %[[LT]], %[[S1]], %[[S2]] : f32
  // CHECK-NOT:      arith.truncf
  // CHECK:          arith.negf %[[S]] : f32
  // CHECK:          %[[R:.*]] = arith.truncf %{{.*}} : f32 to bf16
  // CHECK-NEXT:     loops.yield %[[R]] : bf16
  // EMU:            arith.select %{{.*}} : bf16
  // EMU:            arith.extf %{{.*}} : bf16 to f32
  %0 = loops.pointwise [4, 8] origins ["exp"] -> tensor<4x8xbf16> {
    %1 = loops.load %x[i0, i1] : tensor<4x8xbf16>
    %2 = arith.extf %1 : bf16 to f32
    %3 = math.exp %2 : f32
    %4 = arith.truncf %3 : f32 to bf16
    loops.yield %4 : bf16
  }
  %5 = loops.pointwise [4, 8] origins ["neg"] -> tensor<4x8xbf16> {
    %6 = loops.load %y[i0, i1] : tensor<4x8xbf16>
    %7 = arith.extf %6 : bf16 to f32
    %8 = arith.negf %7 : f32
    %9 = arith.truncf %8 : f32 to bf16
    loops.yield %9 : bf16
  }
  %10 = loops.pointwise [8, 8] origins ["cat"] -> tensor<8x8xbf16> {
    %11 = loops.index i0 : i64
    %12 = arith.constant 4 : i64
    %13 = arith.cmpi slt, %11, %12 : i64
    %14 = loops.load %0[i0, i1] mask %13 : tensor<4x8xbf16>
    %15 = arith.cmpi sge, %11, %12 : i64
    %16 = loops.load %5[i0 - 4, i1] mask %15 : tensor<4x8xbf16>
    %17 = arith.select %13, %14, %16 : bf16
    loops.yield %17 : bf16
  }
  %18 = loops.pointwise [8, 8] origins ["sigmoid"] -> tensor<8x8xbf16> {
    %19 = loops.load %10[i0, i1] : tensor<8x8xbf16>
    %20 = arith.extf %19 : bf16 to f32
    %21 = arith.constant 1.000000e+00 : f32
    %22 = arith.negf %20 : f32
    %23 = math.exp %22 : f32
    %24 = arith.addf %21, %23 : f32
    %25 = arith.divf %21, %24 : f32
    %26 = arith.truncf %25 : f32 to bf16
    loops.yield %26 : bf16
  }
  func.return %18 : tensor<8x8xbf16>
}

// -----

// What stays: a rounding that is stored (a realized producer is loaded back, and a view of an
// f16 producer yields the f16 value), a cast that does not restore f32 (f16 -> f64), and f64
// -> f32 -> f64 (f32 is a compute type: Inductor rounds there too).
// ALL-LABEL: func.func @kept
func.func @kept(%x: tensor<8xf16>, %d: tensor<8xf64>) -> (tensor<8xf16>, tensor<8xf16>, tensor<8xf16>, tensor<8xf64>, tensor<8xf64>) {
  // ALL:          %[[P:.*]] = loops.pointwise [8] origins ["p"] -> tensor<8xf16> {
  // ALL:            arith.truncf %{{.*}} : f32 to f16
  // ALL:          loops.pointwise [8] origins ["c1"] -> tensor<8xf16> {
  // ALL-NEXT:       loops.load %[[P]][i0] : tensor<8xf16>
  // ALL-NEXT:       arith.extf %{{.*}} : f16 to f32
  // ALL:          loops.pointwise [8] origins ["e", "v"] -> tensor<8xf16> {
  // ALL:            %[[T:.*]] = arith.truncf %{{.*}} : f32 to f16
  // ALL-NEXT:       loops.yield %[[T]] : f16
  // ALL:          loops.pointwise [8] origins ["c2", "e"] -> tensor<8xf64> {
  // ALL:            %[[T2:.*]] = arith.truncf %{{.*}} : f32 to f16
  // ALL-NEXT:       arith.extf %[[T2]] : f16 to f64
  // ALL:          loops.pointwise [8] origins ["c3", "q"] -> tensor<8xf64> {
  // ALL:            %[[T3:.*]] = arith.truncf %{{.*}} : f64 to f32
  // ALL-NEXT:       arith.extf %[[T3]] : f32 to f64
  %p = loops.pointwise [8] origins ["p"] -> tensor<8xf16> {
    %0 = loops.load %x[i0] : tensor<8xf16>
    %1 = arith.extf %0 : f16 to f32
    %2 = math.exp %1 : f32
    %3 = arith.truncf %2 : f32 to f16
    loops.yield %3 : f16
  }
  %c1 = loops.pointwise [8] origins ["c1"] -> tensor<8xf16> {
    %0 = loops.load %p[i0] : tensor<8xf16>
    %1 = arith.extf %0 : f16 to f32
    %2 = arith.negf %1 : f32
    %3 = arith.truncf %2 : f32 to f16
    loops.yield %3 : f16
  }
  %e = loops.pointwise [8] origins ["e"] -> tensor<8xf16> {
    %0 = loops.load %x[i0] : tensor<8xf16>
    %1 = arith.extf %0 : f16 to f32
    %2 = math.sin %1 : f32
    %3 = arith.truncf %2 : f32 to f16
    loops.yield %3 : f16
  }
  %v = loops.pointwise [8] origins ["v"] -> tensor<8xf16> {
    %0 = loops.load %e[7 - i0] : tensor<8xf16>
    loops.yield %0 : f16
  }
  %c2 = loops.pointwise [8] origins ["c2"] -> tensor<8xf64> {
    %0 = loops.load %e[i0] : tensor<8xf16>
    %1 = arith.extf %0 : f16 to f64
    loops.yield %1 : f64
  }
  %q = loops.pointwise [8] origins ["q"] -> tensor<8xf32> {
    %0 = loops.load %d[i0] : tensor<8xf64>
    %1 = arith.truncf %0 : f64 to f32
    loops.yield %1 : f32
  }
  %c3 = loops.pointwise [8] origins ["c3"] -> tensor<8xf64> {
    %0 = loops.load %q[i0] : tensor<8xf32>
    %1 = arith.extf %0 : f32 to f64
    loops.yield %1 : f64
  }
  func.return %p, %c1, %v, %c2, %c3 : tensor<8xf16>, tensor<8xf16>, tensor<8xf16>, tensor<8xf64>, tensor<8xf64>
}

// -----

// A conversion the program asked for (`_to_copy`: --lower-aten marks its truncf
// explicit_rounding) rounds, as eager does, wherever the value is inlined.
// ALL-LABEL: func.func @marked_round_trip
func.func @marked_round_trip(%x: tensor<8xf32>) -> tensor<8xf32> {
  // ALL:          loops.pointwise [8] origins ["_to_copy", "mul"] -> tensor<8xf32> {
  // ALL-NEXT:       %[[A:.*]] = loops.load %x[i0] : tensor<8xf32>
  // ALL-NEXT:       %[[AN:.*]] = arith.truncf %[[A]] {explicit_rounding} : f32 to f16
  // ALL-NEXT:       %[[AW:.*]] = arith.extf %[[AN]] : f16 to f32
  // ALL-NEXT:       arith.mulf %[[AW]], %[[AW]] : f32
  // ALL-NEXT:       loops.yield
  %0 = loops.pointwise [8] origins ["_to_copy"] -> tensor<8xf16> {
    %1 = loops.load %x[i0] : tensor<8xf32>
    %2 = arith.truncf %1 {explicit_rounding} : f32 to f16
    loops.yield %2 : f16
  }
  %3 = loops.pointwise [8] origins ["_to_copy"] -> tensor<8xf32> {
    %4 = loops.load %0[i0] : tensor<8xf16>
    %5 = arith.extf %4 : f16 to f32
    loops.yield %5 : f32
  }
  %6 = loops.pointwise [8] origins ["mul"] -> tensor<8xf32> {
    %7 = loops.load %3[i0] : tensor<8xf32>
    %8 = arith.mulf %7, %7 : f32
    loops.yield %8 : f32
  }
  func.return %6 : tensor<8xf32>
}
