// RUN: mlc-opt %s --deps --fuse="explain=true" | filecheck %s

// A scatter runs alone: neither the copy it writes into nor its reader joins its kernel. Its
// deps read the base whole and write its buffer whole.
// CHECK:       buffer.scatter "buf1"
// CHECK:       } attributes {reads = [#buffer.star<"buf0">, #buffer.memory<"i", c0, {c0: 30}>, #buffer.memory<"v", c0, {c0: 240}>], writes = [#buffer.star<"buf1">]}
// CHECK:       attributes {fusion = ["refused buf0 + buf1: [scatter] buf1 stores at loaded positions: it runs as its own kernel, or as a GEMM's epilogue", "refused buf1 + buf2: [scatter] buf1 stores at loaded positions: it runs as its own kernel, or as a GEMM's epilogue", "refusals: scatter: 2"]}
buffer.graph @index_put_acc {
  buffer.input "x" #buffer.layout<[20, 8], [8, 1], f32>
  buffer.input "i" #buffer.layout<[30], [1], i64>
  buffer.input "v" #buffer.layout<[30, 8], [8, 1], f32>
  buffer.computed "buf0" #buffer.layout<[20, 8], [8, 1], f32> ranges [20, 8] origins ["index_put"] {
    %0 = buffer.load @x[i1 + 8*i0] : f32
    buffer.store @buf0[i1 + 8*i0], %0 : f32
  }
  buffer.scatter "buf1" #buffer.layout<[20, 8], [8, 1], f32> = @buf0 ranges [30, 8] origins ["index_put"] {
    %1 = buffer.load @i[i0] : i64
    %2 = loops.indirect_index %1 size 20 : i64
    %3 = buffer.load @v[i1 + 8*i0] : f32
    buffer.store @buf1[i1 + 8*ind0] indirect(%2), %3 atomic_add : f32
  }
  buffer.computed "buf2" #buffer.layout<[20, 8], [8, 1], f32> ranges [20, 8] origins ["sin"] {
    %0 = buffer.load @buf1[i1 + 8*i0] : f32
    %1 = math.sin %0 : f32
    buffer.store @buf2[i1 + 8*i0], %1 : f32
  }
  buffer.output @buf2, @buf1
}
