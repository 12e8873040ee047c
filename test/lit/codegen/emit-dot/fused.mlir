// RUN: mlc-translate --emit-dot %s | filecheck %s
// RUN: mlc-opt %s -p deps,fuse{explain=true} | mlc-translate --emit-dot | filecheck %s --check-prefix=FUSED

// A buffer graph as Graphviz dot: inputs as ellipses, each kernel a cluster holding its
// computed nodes as boxes (origins, sizes, dtype), an extern as a 3-D box, edges from writer to
// reader labelled with the dependency's kind (an extern reads whole buffers: star), the output
// last.
// CHECK:       digraph "rms" {
// CHECK:         "x" [shape=ellipse, label="x\n[64, 4096] f32"];
// CHECK:         subgraph "cluster_0" {
// CHECK-NEXT:      label="kernel 0: buf0";
// CHECK:           "buf0" [label="buf0\nmean\n[64] reduce [4096] f32"];
// CHECK:         subgraph "cluster_1" {
// CHECK-NEXT:      label="kernel 1: buf1";
// CHECK:           "buf1" [label="buf1\nmul\n[64, 4096] f32"];
// CHECK:         "buf2" [shape=box3d, label="buf2\nextern mm.default"];
// CHECK:         "output" [shape=doubleoctagon, label="output: buf2"];
// CHECK:         "x" -> "buf0" [label="memory"];
// CHECK-NEXT:    "x" -> "buf1" [label="memory"];
// CHECK-NEXT:    "buf0" -> "buf1" [label="memory"];
// CHECK-NEXT:    "buf1" -> "buf2" [label="star"];
// CHECK-NEXT:    "w" -> "buf2" [label="star"];
// CHECK-NEXT:    "buf2" -> "output";
// CHECK-NEXT:  }

// After --fuse{explain=true}: the reduction and its consumer are one kernel (a cluster), and
// the refused pair with the extern is a dashed edge labelled with the refusal's category.
// FUSED:       subgraph "cluster_0" {
// FUSED-NEXT:    label="kernel 0: buf0 + buf1";
// FUSED-NOT:   cluster_1
// FUSED:         "buf1" -> "buf2" [style=dashed, color=red, fontcolor=red, constraint=false, dir=none, label="extern", tooltip="buf2 is a buffer.extern, not a kernel"];
buffer.graph @rms {
  buffer.input "x" #buffer.layout<[64, 4096], [4096, 1], f32>
  buffer.input "w" #buffer.layout<[4096, 8], [8, 1], f32>
  buffer.computed "buf0" #buffer.layout<[64, 1], [1, 1], f32> ranges [64] reduce [4096] origins ["mean"] {
    %0 = buffer.load @x[r0_0 + 4096*i0] : f32
    %1 = arith.mulf %0, %0 : f32
    %2 = buffer.reduce sum %1 : f32 -> f32
    buffer.store @buf0[i0], %2 : f32
  }
  buffer.computed "buf1" #buffer.layout<[64, 4096], [4096, 1], f32> ranges [64, 4096] origins ["mul"] {
    %3 = buffer.load @x[i1 + 4096*i0] : f32
    %4 = buffer.load @buf0[i0] : f32
    %5 = math.rsqrt %4 : f32
    %6 = arith.mulf %3, %5 : f32
    buffer.store @buf1[i1 + 4096*i0], %6 : f32
  }
  buffer.extern "buf2" = "mm.default" {args = [@buf1, @w], origins = ["mm"]} : #buffer.layout<[64, 8], [8, 1], f32>
  buffer.output @buf2
}
