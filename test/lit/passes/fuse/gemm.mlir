// RUN: mlc-opt %s --split-input-file -p 'lower-aten{gemm=triton},inline,realize,reorder-loops,fuse{explain=true}' | filecheck %s

// GEMM epilogues: a contraction (buffer.dot) fuses with the pointwise nodes that read its
// [M, N] result at their own lane's element ("fused ... [gemm epilogue]"); it refuses a second
// contraction or a reduction ([gemm]) and an epilogue that reads its result at another element
// ([gemm epilogue]). gemm-refusals.mlir: the other [gemm] reasons, on buffer IR.

// mm + bias + gelu: the bias add and the gelu (one node after --inline) run in the GEMM's kernel.
// CHECK-LABEL: buffer.graph @mm_bias_gelu
// CHECK:       buffer.fused {
// CHECK-NEXT:    buffer.computed "buf0" {{.*}} ranges [64, 128] reduce [96] origins ["mm"] {
// CHECK:           buffer.dot
// CHECK:         buffer.computed "buf1" {{.*}} ranges [64, 128] origins ["add", "gelu"] {
// CHECK-NEXT:      buffer.load @buf0[i1 + 128*i0] : f32
// CHECK-NEXT:      buffer.load @b[i1] : f32
// CHECK:           math.erf
// CHECK:         }
// CHECK-NEXT:  }
// CHECK-NEXT:  buffer.output @buf1
// CHECK-NEXT:  } attributes {fusion = ["candidate buf0 + buf1: score (0, 32768, -1), saves 1.52 us", "fused buf0 + buf1 [gemm epilogue]"]}
func.func @mm_bias_gelu(%x: tensor<64x96xf32>, %w: tensor<96x128xf32>, %b: tensor<128xf32>) -> tensor<64x128xf32> {
  %y = aten.mm %x, %w : (tensor<64x96xf32>, tensor<96x128xf32>) -> tensor<64x128xf32>
  %z = aten.add.Tensor %y, %b : (tensor<64x128xf32>, tensor<128xf32>) -> tensor<64x128xf32>
  %g = aten.gelu %z : (tensor<64x128xf32>) -> tensor<64x128xf32>
  func.return %g : tensor<64x128xf32>
}

// -----

// SwiGLU: the two mm's are refused [gemm] (one GEMM per kernel); silu * mul fuses into x @ w3.t().
// CHECK-LABEL: buffer.graph @swiglu
// CHECK:       buffer.computed "buf0" {{.*}} ranges [32, 128] reduce [64] origins ["mm", "t"] {
// CHECK:       buffer.fused {
// CHECK-NEXT:    buffer.computed "buf1" {{.*}} ranges [32, 128] reduce [64] origins ["mm", "t"] {
// CHECK-NEXT:      buffer.load @x[r0_0 + 64*i0] : bf16
// CHECK-NEXT:      buffer.load @w3[r0_0 + 64*i1] : bf16
// CHECK:         buffer.computed "buf2" {{.*}} ranges [4096] origins ["mul", "silu"] {
// CHECK-NEXT:      buffer.load @buf0[i0] : bf16
// CHECK:           buffer.load @buf1[i0] : bf16
// CHECK:       } attributes {fusion = ["refused buf0 + buf1: [gemm] buf0 and buf1 are both contractions: one GEMM per kernel", "candidate buf1 + buf2: score (0, 8192, -1), saves 1.50 us", "fused buf1 + buf2 [gemm epilogue]", "candidate buf0 + buf1+buf2: score (0, 8192, -2), saves 1.50 us", "refused buf0 + buf1+buf2: [gemm] buf0 and buf1 are both contractions: one GEMM per kernel", "refusals: gemm: 2"]}
func.func @swiglu(%x: tensor<32x64xbf16>, %w1: tensor<128x64xbf16>, %w3: tensor<128x64xbf16>) -> tensor<32x128xbf16> {
  %w1t = aten.t %w1 : (tensor<128x64xbf16>) -> tensor<64x128xbf16>
  %h1 = aten.mm %x, %w1t : (tensor<32x64xbf16>, tensor<64x128xbf16>) -> tensor<32x128xbf16>
  %w3t = aten.t %w3 : (tensor<128x64xbf16>) -> tensor<64x128xbf16>
  %h3 = aten.mm %x, %w3t : (tensor<32x64xbf16>, tensor<64x128xbf16>) -> tensor<32x128xbf16>
  %s = aten.silu %h1 : (tensor<32x128xbf16>) -> tensor<32x128xbf16>
  %y = aten.mul.Tensor %s, %h3 : (tensor<32x128xbf16>, tensor<32x128xbf16>) -> tensor<32x128xbf16>
  func.return %y : tensor<32x128xbf16>
}

// -----

// y + y.t() for a square y = a @ b: reads y at the transposed element, another tile's: [gemm epilogue].
// CHECK-LABEL: buffer.graph @mm_plus_transpose
// CHECK-NOT:   buffer.fused
// CHECK:       } attributes {fusion = ["refused buf0 + buf1: [gemm epilogue] buf1 reads buf0 at FloorDiv(X, 64) + 64*ModularIndexing(X, 1, 64): another output tile than its lane's", "refusals: gemm epilogue: 1"]}
func.func @mm_plus_transpose(%a: tensor<64x32xf32>, %b: tensor<32x64xf32>) -> tensor<64x64xf32> {
  %y = aten.mm %a, %b : (tensor<64x32xf32>, tensor<32x64xf32>) -> tensor<64x64xf32>
  %yt = aten.t %y : (tensor<64x64xf32>) -> tensor<64x64xf32>
  %s = aten.add.Tensor %y, %yt : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  func.return %s : tensor<64x64xf32>
}

// -----

// mm(a, b).t() + c: refused [gemm epilogue] too, though each element reads only its own product element.
// CHECK-LABEL: buffer.graph @mm_transposed_epilogue
// CHECK-NOT:   buffer.fused
// CHECK:       } attributes {fusion = ["refused buf0 + buf1: [gemm epilogue] buf1 reads buf0 at FloorDiv(X, 64) + 48*ModularIndexing(X, 1, 64): another output tile than its lane's", "refusals: gemm epilogue: 1"]}
func.func @mm_transposed_epilogue(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>, %c: tensor<48x64xf32>) -> tensor<48x64xf32> {
  %y = aten.mm %a, %b : (tensor<64x32xf32>, tensor<32x48xf32>) -> tensor<64x48xf32>
  %yt = aten.t %y : (tensor<64x48xf32>) -> tensor<48x64xf32>
  %s = aten.add.Tensor %yt, %c : (tensor<48x64xf32>, tensor<48x64xf32>) -> tensor<48x64xf32>
  func.return %s : tensor<48x64xf32>
}

// -----

// softmax over the rows of a @ b: refused as [reduction sizes] (64 x 128 vs 8192 x 32), before any [gemm] check.
// CHECK-LABEL: buffer.graph @mm_softmax
// CHECK:       buffer.computed "buf0" {{.*}} ranges [64, 128] reduce [32] origins ["mm"] {
// CHECK:       buffer.fused {
// CHECK-NEXT:    buffer.computed "buf1" {{.*}} ranges [64] reduce [128] origins ["_softmax"] {
// CHECK:       } attributes {fusion = ["refused buf0 + buf1: [reduction sizes] buf0 reduces 8192 x 32, buf1 64 x 128", "refused buf0 + buf2: [reduction sizes] buf0 reduces 8192 x 32, buf2 64 x 128", "refused buf0 + buf3: [cycle] buf2 depends on one of buf0, buf3 and feeds the other: fusing would need it inside the kernel", "refused buf1 + buf3: [cycle] buf2 depends on one of buf1, buf3 and feeds the other: fusing would need it inside the kernel", "candidate buf1 + buf2: score (1, 33024, -1), saves 1.51 us", "fused buf1 + buf2", "candidate buf1+buf2 + buf3: score (0, 33280, -1), saves 1.51 us", "fused buf1+buf2 + buf3", "refused buf0 + buf1+buf2+buf3: [reduction sizes] buf0 reduces 8192 x 32, buf1 64 x 128", "refusals: cycle: 2", "refusals: reduction sizes: 3"]}
func.func @mm_softmax(%a: tensor<64x32xf32>, %b: tensor<32x128xf32>) -> tensor<64x128xf32> {
  %y = aten.mm %a, %b : (tensor<64x32xf32>, tensor<32x128xf32>) -> tensor<64x128xf32>
  %s = aten._softmax %y {dim = 1 : i64, half_to_float = false} : (tensor<64x128xf32>) -> tensor<64x128xf32>
  func.return %s : tensor<64x128xf32>
}

// -----

// A scatter-add of the product (a mixture of experts' combine) is its epilogue: the kernel
// adds each tile into the rows of its base. The copy into the base runs before that kernel,
// and the reader of the sums after it, both refused [scatter]; so is the scatter with either
// of them alone.
// CHECK-LABEL: buffer.graph @mm_scatter_add
// CHECK:       buffer.computed "buf1" {{.*}} origins ["scatter_add"] {
// CHECK:       buffer.fused {
// CHECK-NEXT:    buffer.computed "buf0" {{.*}} ranges [30, 8] reduce [16] origins ["mm"] {
// CHECK:         buffer.scatter "buf2" {{.*}} = @buf1 ranges [30, 8] origins ["expand", "relu", "scatter_add", "unsqueeze"] {
// CHECK:           buffer.load @buf0[i1 + 8*i0] : f32
// CHECK:           buffer.store @buf2[i1 + 8*ind0] indirect(%{{.*}}), %{{.*}} atomic_add : f32
// CHECK:       buffer.computed "buf3" {{.*}} origins ["sin"] {
// CHECK:       } attributes {fusion = ["refused buf1 + buf2: [scatter] buf2 stores at loaded positions: it runs as its own kernel, or as a GEMM's epilogue", "refused buf2 + buf3: [scatter] buf2 stores at loaded positions: it runs as its own kernel, or as a GEMM's epilogue", "candidate buf0 + buf2: score (0, 960, -2), saves 1.50 us", "fused buf0 + buf2 [gemm epilogue]", "refused buf0+buf2 + buf1: [scatter] buf1 writes buf1, which buf2 adds into: it is complete before that kernel starts", "refused buf0+buf2 + buf3: [scatter] buf3 reads buf2, where buf2 adds from any lane", "refusals: scatter: 4"]}
func.func @mm_scatter_add(%x: tensor<30x16xf32>, %w: tensor<16x8xf32>, %i: tensor<30xi64>, %base: tensor<20x8xf32>) -> tensor<20x8xf32> {
  %y = aten.mm %x, %w : (tensor<30x16xf32>, tensor<16x8xf32>) -> tensor<30x8xf32>
  %r = aten.relu %y : (tensor<30x8xf32>) -> tensor<30x8xf32>
  %iu = aten.unsqueeze %i {dim = 1 : i64} : (tensor<30xi64>) -> tensor<30x1xi64>
  %ie = aten.expand %iu {size = array<i64: -1, 8>} : (tensor<30x1xi64>) -> tensor<30x8xi64>
  %o = aten.scatter_add %base, %ie, %r {dim = 0 : i64} : (tensor<20x8xf32>, tensor<30x8xi64>, tensor<30x8xf32>) -> tensor<20x8xf32>
  %s = aten.sin %o : (tensor<20x8xf32>) -> tensor<20x8xf32>
  func.return %s : tensor<20x8xf32>
}
