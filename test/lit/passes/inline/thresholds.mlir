// RUN: mlc-opt %s --split-input-file -p inline | filecheck %s --check-prefixes=ALL,CHECK
// RUN: mlc-opt %s --split-input-file -p 'inline{reads-threshold=2}' | filecheck %s --check-prefixes=ALL,R2
// RUN: mlc-opt %s --split-input-file -p 'inline{acc-reads-threshold=2}' | filecheck %s --check-prefixes=ALL,A2
// RUN: mlc-opt %s --split-input-file -p 'inline{opcount-threshold=4}' | filecheck %s --check-prefixes=ALL,O4
// RUN: mlc-opt %s --split-input-file -p 'inline{reads-threshold=5 acc-reads-threshold=9}' | filecheck %s --check-prefixes=ALL,HI

// Each case is a producer %p (origins "p") read by one or two consumers (c1, c2). Where %p is
// kept it stays a loops op; where it is inlined, c1's origins become ["c1", "p"]. Defaults:
// reads-threshold=4, acc-reads-threshold=8, opcount-threshold=30 (ops counted after CSE).

// Two consumers, 2 reads, 3 ops: at or under every threshold here.
// ALL-LABEL: func.func @reused_two_reads
// CHECK: loops.pointwise [8] origins ["c1", "p"]
// R2: loops.pointwise [8] origins ["c1", "p"]
// A2: loops.pointwise [8] origins ["c1", "p"]
// O4: loops.pointwise [8] origins ["c1", "p"]
func.func @reused_two_reads(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %p = loops.pointwise [8] origins ["p"] -> tensor<8xf32> {
    %0 = loops.load %a[i0] : tensor<8xf32>
    %1 = loops.load %b[i0] : tensor<8xf32>
    %2 = arith.addf %0, %1 : f32
    loops.yield %2 : f32
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

// Two consumers, 3 reads, 5 ops: over reads-threshold=2, acc-reads-threshold=2
// and opcount-threshold=4.
// ALL-LABEL: func.func @reused_three_reads
// CHECK: loops.pointwise [8] origins ["c1", "p"]
// R2: loops.pointwise [8] origins ["p"]
// A2: loops.pointwise [8] origins ["p"]
// O4: loops.pointwise [8] origins ["p"]
func.func @reused_three_reads(%a: tensor<8xf32>, %b: tensor<8xf32>, %c: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
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

// One consumer: reads-threshold does not apply; acc-reads-threshold and
// opcount-threshold do (3 > 2 reads, 5 > 4 ops, more than one nontrivial read).
// ALL-LABEL: func.func @single_use_three_reads
// CHECK: loops.pointwise [8] origins ["c1", "p"]
// R2: loops.pointwise [8] origins ["c1", "p"]
// A2: loops.pointwise [8] origins ["p"]
// O4: loops.pointwise [8] origins ["p"]
func.func @single_use_three_reads(%a: tensor<8xf32>, %b: tensor<8xf32>, %c: tensor<8xf32>) -> (tensor<8xf32>) {
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

// One consumer, one read, 5 ops: a single-input chain is never stopped below
// 100 ops (Inductor's realize_hint wants more than one nontrivial read).
// ALL-LABEL: func.func @single_use_one_read
// CHECK: loops.pointwise [8] origins ["c1", "p"]
// R2: loops.pointwise [8] origins ["c1", "p"]
// A2: loops.pointwise [8] origins ["c1", "p"]
// O4: loops.pointwise [8] origins ["c1", "p"]
func.func @single_use_one_read(%a: tensor<8xf32>) -> (tensor<8xf32>) {
  %p = loops.pointwise [8] origins ["p"] -> tensor<8xf32> {
    %0 = loops.load %a[i0] : tensor<8xf32>
    %1 = math.exp %0 : f32
    %2 = math.exp %1 : f32
    %3 = math.exp %2 : f32
    %4 = math.exp %3 : f32
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

// Two consumers, one read, 5 ops: only opcount-threshold=4 keeps it.
// ALL-LABEL: func.func @reused_one_read
// CHECK: loops.pointwise [8] origins ["c1", "p"]
// R2: loops.pointwise [8] origins ["c1", "p"]
// A2: loops.pointwise [8] origins ["c1", "p"]
// O4: loops.pointwise [8] origins ["p"]
func.func @reused_one_read(%a: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %p = loops.pointwise [8] origins ["p"] -> tensor<8xf32> {
    %0 = loops.load %a[i0] : tensor<8xf32>
    %1 = math.exp %0 : f32
    %2 = math.exp %1 : f32
    %3 = math.exp %2 : f32
    %4 = math.exp %3 : f32
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

// One consumer, 3 reads at constant indices: they are not nontrivial reads, so
// acc-reads-threshold=2 and opcount-threshold=4 do not apply.
// ALL-LABEL: func.func @constant_index_reads
// CHECK: loops.pointwise [8] origins ["c1", "p"]
// R2: loops.pointwise [8] origins ["c1", "p"]
// A2: loops.pointwise [8] origins ["c1", "p"]
// O4: loops.pointwise [8] origins ["c1", "p"]
func.func @constant_index_reads(%a: tensor<8xf32>, %b: tensor<8xf32>, %c: tensor<8xf32>) -> (tensor<8xf32>) {
  %p = loops.pointwise [8] origins ["p"] -> tensor<8xf32> {
    %0 = loops.load %a[0] : tensor<8xf32>
    %1 = loops.load %b[0] : tensor<8xf32>
    %2 = arith.addf %0, %1 : f32
    %3 = loops.load %c[0] : tensor<8xf32>
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

// Two consumers, 4 reads: at the default reads-threshold, inlined.
// ALL-LABEL: func.func @reused_four_reads
// CHECK: loops.pointwise [8] origins ["c1", "p"]
// R2: loops.pointwise [8] origins ["p"]
// HI: loops.pointwise [8] origins ["c1", "p"]
func.func @reused_four_reads(%a: tensor<8xf32>, %b: tensor<8xf32>, %c: tensor<8xf32>, %d: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %p = loops.pointwise [8] origins ["p"] -> tensor<8xf32> {
    %0 = loops.load %a[i0] : tensor<8xf32>
    %1 = loops.load %b[i0] : tensor<8xf32>
    %2 = arith.addf %0, %1 : f32
    %3 = loops.load %c[i0] : tensor<8xf32>
    %4 = arith.addf %2, %3 : f32
    %5 = loops.load %d[i0] : tensor<8xf32>
    %6 = arith.addf %4, %5 : f32
    loops.yield %6 : f32
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

// Two consumers, 5 reads: over the default reads-threshold, kept; not over 5.
// ALL-LABEL: func.func @reused_five_reads
// CHECK: loops.pointwise [8] origins ["p"]
// R2: loops.pointwise [8] origins ["p"]
// HI: loops.pointwise [8] origins ["c1", "p"]
func.func @reused_five_reads(%a: tensor<8xf32>, %b: tensor<8xf32>, %c: tensor<8xf32>, %d: tensor<8xf32>, %e: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %p = loops.pointwise [8] origins ["p"] -> tensor<8xf32> {
    %0 = loops.load %a[i0] : tensor<8xf32>
    %1 = loops.load %b[i0] : tensor<8xf32>
    %2 = arith.addf %0, %1 : f32
    %3 = loops.load %c[i0] : tensor<8xf32>
    %4 = arith.addf %2, %3 : f32
    %5 = loops.load %d[i0] : tensor<8xf32>
    %6 = arith.addf %4, %5 : f32
    %7 = loops.load %e[i0] : tensor<8xf32>
    %8 = arith.addf %6, %7 : f32
    loops.yield %8 : f32
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

// One consumer, 8 reads: at the default acc-reads-threshold, inlined.
// ALL-LABEL: func.func @single_use_eight_reads
// CHECK: loops.pointwise [8] origins ["c1", "p"]
// R2: loops.pointwise [8] origins ["c1", "p"]
// A2: loops.pointwise [8] origins ["p"]
// HI: loops.pointwise [8] origins ["c1", "p"]
func.func @single_use_eight_reads(%a: tensor<8xf32>, %b: tensor<8xf32>, %c: tensor<8xf32>, %d: tensor<8xf32>, %e: tensor<8xf32>, %f: tensor<8xf32>, %g: tensor<8xf32>, %h: tensor<8xf32>) -> (tensor<8xf32>) {
  %p = loops.pointwise [8] origins ["p"] -> tensor<8xf32> {
    %0 = loops.load %a[i0] : tensor<8xf32>
    %1 = loops.load %b[i0] : tensor<8xf32>
    %2 = arith.addf %0, %1 : f32
    %3 = loops.load %c[i0] : tensor<8xf32>
    %4 = arith.addf %2, %3 : f32
    %5 = loops.load %d[i0] : tensor<8xf32>
    %6 = arith.addf %4, %5 : f32
    %7 = loops.load %e[i0] : tensor<8xf32>
    %8 = arith.addf %6, %7 : f32
    %9 = loops.load %f[i0] : tensor<8xf32>
    %10 = arith.addf %8, %9 : f32
    %11 = loops.load %g[i0] : tensor<8xf32>
    %12 = arith.addf %10, %11 : f32
    %13 = loops.load %h[i0] : tensor<8xf32>
    %14 = arith.addf %12, %13 : f32
    loops.yield %14 : f32
  }
  %c1 = loops.pointwise [8] origins ["c1"] -> tensor<8xf32> {
    %0 = loops.load %p[i0] : tensor<8xf32>
    %1 = arith.negf %0 : f32
    loops.yield %1 : f32
  }
  func.return %c1 : tensor<8xf32>
}

// -----

// One consumer, 9 reads: over the default acc-reads-threshold, kept; not over 9.
// ALL-LABEL: func.func @single_use_nine_reads
// CHECK: loops.pointwise [8] origins ["p"]
// R2: loops.pointwise [8] origins ["p"]
// A2: loops.pointwise [8] origins ["p"]
// HI: loops.pointwise [8] origins ["c1", "p"]
func.func @single_use_nine_reads(%a: tensor<8xf32>, %b: tensor<8xf32>, %c: tensor<8xf32>, %d: tensor<8xf32>, %e: tensor<8xf32>, %f: tensor<8xf32>, %g: tensor<8xf32>, %h: tensor<8xf32>, %i: tensor<8xf32>) -> (tensor<8xf32>) {
  %p = loops.pointwise [8] origins ["p"] -> tensor<8xf32> {
    %0 = loops.load %a[i0] : tensor<8xf32>
    %1 = loops.load %b[i0] : tensor<8xf32>
    %2 = arith.addf %0, %1 : f32
    %3 = loops.load %c[i0] : tensor<8xf32>
    %4 = arith.addf %2, %3 : f32
    %5 = loops.load %d[i0] : tensor<8xf32>
    %6 = arith.addf %4, %5 : f32
    %7 = loops.load %e[i0] : tensor<8xf32>
    %8 = arith.addf %6, %7 : f32
    %9 = loops.load %f[i0] : tensor<8xf32>
    %10 = arith.addf %8, %9 : f32
    %11 = loops.load %g[i0] : tensor<8xf32>
    %12 = arith.addf %10, %11 : f32
    %13 = loops.load %h[i0] : tensor<8xf32>
    %14 = arith.addf %12, %13 : f32
    %15 = loops.load %i[i0] : tensor<8xf32>
    %16 = arith.addf %14, %15 : f32
    loops.yield %16 : f32
  }
  %c1 = loops.pointwise [8] origins ["c1"] -> tensor<8xf32> {
    %0 = loops.load %p[i0] : tensor<8xf32>
    %1 = arith.negf %0 : f32
    loops.yield %1 : f32
  }
  func.return %c1 : tensor<8xf32>
}

// -----

// A consumer nothing reads is no consumer: %dead (pad-mm's bypassed transpose, say) is erased
// before the uses are counted, so %p with 3 reads has one consumer and is inlined even where
// reads-threshold=2 would keep a producer that two live consumers share.
// ALL-LABEL: func.func @unread_consumer
// ALL-NOT: origins ["dead"]
// CHECK: loops.pointwise [8] origins ["c1", "p"]
// R2: loops.pointwise [8] origins ["c1", "p"]
// A2: loops.pointwise [8] origins ["p"]
// ALL-NOT: origins ["dead"]
func.func @unread_consumer(%a: tensor<8xf32>, %b: tensor<8xf32>, %c: tensor<8xf32>) -> tensor<8xf32> {
  %p = loops.pointwise [8] origins ["p"] -> tensor<8xf32> {
    %0 = loops.load %a[i0] : tensor<8xf32>
    %1 = loops.load %b[i0] : tensor<8xf32>
    %2 = arith.addf %0, %1 : f32
    %3 = loops.load %c[i0] : tensor<8xf32>
    %4 = arith.addf %2, %3 : f32
    loops.yield %4 : f32
  }
  %dead = loops.pointwise [8] origins ["dead"] -> tensor<8xf32> {
    %0 = loops.load %p[i0] : tensor<8xf32>
    loops.yield %0 : f32
  }
  %c1 = loops.pointwise [8] origins ["c1"] -> tensor<8xf32> {
    %0 = loops.load %p[i0] : tensor<8xf32>
    %1 = arith.negf %0 : f32
    loops.yield %1 : f32
  }
  func.return %c1 : tensor<8xf32>
}
