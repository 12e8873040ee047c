// RUN: mlc-opt %s --split-input-file --verify-diagnostics -p inline,realize

// A dynamic input dim must be named by a size symbol (#sym.sizes); it fails at the function.
// expected-error@+1 {{dynamic dims of tensor<?x64xf32> need a #sym.sizes<[...]> encoding naming their sizes}}
func.func @dynamic_input(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  func.return %x : tensor<?x64xf32>
}

// -----

// Only loops IR can be realized: an aten op left in the function fails (--inline, which runs
// first, says so; invalid-input.mlir has every stage).
func.func @aten_left(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{expects loops IR (run --lower-aten first); found aten.neg}}
  %0 = aten.neg %x : (tensor<8xf32>) -> tensor<8xf32>
  func.return %0 : tensor<8xf32>
}

// -----

// A scatter writes into a copy of its input that only it reads (lower-aten makes one); any
// other input would be overwritten under its other readers.
func.func @scatter_into_an_input(%x: tensor<8xf32>, %i: tensor<4xi64>, %v: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{loops.scatter: a scatter writes into a copy of its input that only it reads (loops.pointwise)}}
  %r = loops.scatter %x [4] -> tensor<8xf32> {
    %0 = loops.load %i[i0] : tensor<4xi64>
    %1 = loops.indirect_index %0 size 8 : i64
    %2 = loops.load %v[i0] : tensor<4xf32>
    loops.scatter_store [ind0] indirect(%1), %2 : f32
  }
  func.return %r : tensor<8xf32>
}

// -----

// The output strides on func.return must be one stride per dim of the result.
func.func @output_strides_rank(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = loops.pointwise [2, 3] origins ["neg"] -> tensor<2x3xf32> {
    %1 = loops.load %x[i0, i1] : tensor<2x3xf32>
    %2 = arith.negf %1 : f32
    loops.yield %2 : f32
  }
  // expected-error@+1 {{'strides' of value 0 are not strides of tensor<2x3xf32>: array<i64: 1>}}
  func.return {strides = [array<i64: 1>]} %0 : tensor<2x3xf32>
}

// -----

func.func @output_strides_count(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'strides' has 2 entries for 1 values}}
  func.return {strides = [array<i64>, array<i64>]} %x : tensor<2x3xf32>
}

// -----

// An extern's traced strides must be a dense layout of each result, one entry per result.
func.func @overlapping_result_strides(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'result_strides' of value 0 are not a dense layout of tensor<2x3xf32>: array<i64: 1, 1>}}
  %0 = loops.extern "neg.default" (%x) {args = [#aten.tensor]} attributes {result_strides = [array<i64: 1, 1>]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

// Symbolic strides must be proved dense: [s1, 1] of [s0, s1] is row-major, [1, 1] overlaps.
func.func @overlapping_symbolic_result_strides(%s0: !sym.int<s0>, %s1: !sym.int<s1>, %x: tensor<?x?xf32, #sym.sizes<[s0, s1]>>) -> tensor<?x?xf32, #sym.sizes<[s0, s1]>> {
  // expected-error@+1 {{'result_strides' of value 0 are not a dense layout of tensor<?x?xf32, #sym.sizes<[s0, s1]>>: #sym.sizes<[s1, s1]>}}
  %0 = loops.extern "neg.default" (%x) {args = [#aten.tensor]} attributes {result_strides = [#sym.sizes<[s1, s1]>]} : (tensor<?x?xf32, #sym.sizes<[s0, s1]>>) -> tensor<?x?xf32, #sym.sizes<[s0, s1]>>
  func.return %0 : tensor<?x?xf32, #sym.sizes<[s0, s1]>>
}

// -----

func.func @result_strides_count(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'result_strides' has 2 entries for 1 values}}
  %0 = loops.extern "neg.default" (%x) {args = [#aten.tensor]} attributes {result_strides = [array<i64>, array<i64>]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

// An input's strides: one non-negative stride per dim.
// expected-error@+1 {{'strides' of argument 0 are not strides of tensor<2x3xf32>: array<i64: 1>}}
func.func @input_strides_rank(%x: tensor<2x3xf32> {strides = array<i64: 1>}) -> tensor<2x3xf32> {
  func.return %x : tensor<2x3xf32>
}

// -----

// expected-error@+1 {{'strides' of argument 1 are not strides of tensor<2x3xf32>: array<i64: -1, 2>}}
func.func @input_strides_negative(%x: tensor<2x3xf32>, %y: tensor<2x3xf32> {strides = array<i64: -1, 2>}) -> tensor<2x3xf32> {
  func.return %y : tensor<2x3xf32>
}

// -----

// An extern's traced operand strides: one entry per tensor operand.
func.func @operand_strides_count(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'operand_strides' has 2 entries for 1 values}}
  %0 = loops.extern "neg.default" (%x) {args = [#aten.tensor]} attributes {operand_strides = [array<i64>, array<i64>]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
