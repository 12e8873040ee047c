// RUN: mlc-opt %s --convert-to-triton | filecheck %s

// A scatter is its own kernel over the source's points: it writes its base's storage (no
// allocation of its own) with atomic adds at the loaded rows, masked as every lane. Kernels
// that read it read the base; the wrapper names it (a view of the base) only because it is
// an output. It has one config: autotuning re-runs a kernel, and re-running adds would add twice.
// CHECK-LABEL: triton.kernel @triton_poi_fused_index_put_1 pointwise
// CHECK-SAME:    configs [#triton.config<XBLOCK = 256, num_warps = 4, num_stages = 1>] {
// CHECK:         %[[T:.*]] = triton.load %in_ptr0[x1] mask xmask evict_last : i64
// CHECK-NEXT:    %[[P:.*]] = triton.indirect_index %[[T]] size 20 mask xmask : i64
// CHECK-NEXT:    %[[V:.*]] = triton.load %in_ptr1[xindex] mask xmask : f32
// CHECK-NEXT:    triton.store %out_ptr0[x0 + 8*ind0] indirect(%[[P]]), %[[V]] atomic_add mask xmask : f32
// CHECK:       triton.wrapper @call {
// CHECK:         triton.alloc "buf0" #buffer.layout<[20, 8], [8, 1], f32>
// CHECK-NEXT:    triton.launch @triton_poi_fused_index_put_0(@x, @buf0) xnumel 160
// CHECK-NEXT:    triton.free @x
// CHECK-NEXT:    triton.launch @triton_poi_fused_index_put_1(@i, @v, @buf0) xnumel 240
// CHECK-NEXT:    triton.free @i, @v
// CHECK-NEXT:    triton.view "buf1" = @buf0 #buffer.layout<[20, 8], [8, 1], f32>
// CHECK-NEXT:    triton.alloc "buf2" #buffer.layout<[20, 8], [8, 1], f32>
// CHECK-NEXT:    triton.launch @triton_poi_fused_sin_2(@buf0, @buf2) xnumel 160
// CHECK-NOT:     triton.alloc "buf1"
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
