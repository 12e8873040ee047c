// RUN: mlc-opt %s --split-input-file --verify-diagnostics

func.func @arity(%x: tensor<8xf32>) {
  %0 = loops.pointwise [8] -> tensor<8xf32> {
    // expected-error@+1 {{ModularIndexing takes 3 arguments, got 2}}
    %a = loops.load %x[ModularIndexing(i0, 2)] : tensor<8xf32>
    loops.yield %a : f32
  }
  func.return
}

// -----

func.func @unbalanced(%x: tensor<8xf32>) {
  %0 = loops.pointwise [8] -> tensor<8xf32> {
    // expected-error@+1 {{expected ')'}}
    %a = loops.load %x[(i0 + 1] : tensor<8xf32>
    loops.yield %a : f32
  }
  func.return
}

// -----

func.func @no_python(%x: tensor<8xf32>) {
  %0 = loops.pointwise [8] -> tensor<8xf32> {
    // Input text is never evaluated: Python syntax is just an error.
    // expected-error@+1 {{unknown function '__import__' in index expression}}
    %a = loops.load %x[__import__("os")] : tensor<8xf32>
    loops.yield %a : f32
  }
  func.return
}

// -----

// A size may only use size symbols.
// expected-error@+1 {{a size may only use size symbols s0, s1, ..., got 'i0'}}
func.func @index_as_size(%x: tensor<?xf32, #sym.sizes<[i0]>>) {
  func.return
}
