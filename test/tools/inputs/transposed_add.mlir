// Buffer IR whose input %x is stored transposed (strides [1, 4]): mlc-run must make it so, and
// `buffer.load @x[i0 + 4*i1]` reads x[i0, i1]. Its aten IR: transposed_add.aten.mlir.
buffer.graph @forward {
  buffer.input "x" #buffer.layout<[4, 8], [1, 4], f32>
  buffer.input "y" #buffer.layout<[8], [1], f32>
  buffer.computed "buf0" #buffer.layout<[4, 8], [8, 1], f32> ranges [4, 8] {
    %0 = buffer.load @x[i0 + 4*i1] : f32
    %1 = buffer.load @y[i1] : f32
    %2 = arith.addf %0, %1 : f32
    buffer.store @buf0[i1 + 8*i0], %2 : f32
  }
  buffer.output @buf0
}
