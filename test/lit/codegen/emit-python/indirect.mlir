// RUN: mlc-translate --emit-python %s | filecheck %s

// A loaded position: negative values wrap (tl.where), `check` asserts the bounds where the
// lane is live (Triton keeps device_assert only in debug mode, so the kernel is compiled with
// debug=True, and its launch says so for the interpreter's sake); the index names the tile.
// An atomic add at loaded positions is tl.atomic_add.

triton.kernel @triton_poi_fused_embedding_0 pointwise(%in_ptr0: !triton.ptr<i64>, %in_ptr1: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 192 configs [#triton.config<XBLOCK = 256, num_warps = 4, num_stages = 1>] {
  triton.index x0 = ModularIndexing(xindex, 1, 16)
  triton.index x1 = FloorDiv(xindex, 16)
  %0 = triton.load %in_ptr0[x1] mask xmask evict_last : i64
  %1 = triton.indirect_index %0 size 50 mask xmask check : i64
  %2 = triton.load %in_ptr1[x0 + 16*ind0] indirect(%1) mask xmask : f32
  triton.store %out_ptr0[xindex], %2 mask xmask : f32
}
triton.kernel @triton_poi_fused_index_add_1 pointwise(%in_ptr0: !triton.ptr<i64>, %in_ptr1: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 192 configs [#triton.config<XBLOCK = 256, num_warps = 4, num_stages = 1>] {
  triton.index x0 = ModularIndexing(xindex, 1, 16)
  triton.index x1 = FloorDiv(xindex, 16)
  %0 = triton.load %in_ptr0[x1] mask xmask evict_last : i64
  %1 = triton.indirect_index %0 size 50 mask xmask : i64
  %2 = triton.load %in_ptr1[xindex] mask xmask : f32
  triton.store %out_ptr0[x0 + 16*ind0] indirect(%1), %2 atomic_add mask xmask : f32
}
triton.wrapper @call {
  triton.input "ids" #buffer.layout<[12], [1], i64>
  triton.input "w" #buffer.layout<[50, 16], [16, 1], f32>
  triton.alloc "buf0" #buffer.layout<[12, 16], [16, 1], f32>
  triton.launch @triton_poi_fused_embedding_0(@ids, @w, @buf0) xnumel 192
  triton.return @buf0
}

// CHECK-NOT:  enable_device_asserts
// CHECK:      @triton.jit(debug=True)
// CHECK-NEXT: def triton_poi_fused_embedding_0(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):
// CHECK:          tmp0 = tl.load(in_ptr0 + (x1), xmask, eviction_policy='evict_last')
// CHECK-NEXT:     tmp1 = tl.where(tmp0 < 0, tmp0 + 50, tmp0)
// CHECK-NEXT:     tl.device_assert(((0 <= tmp1) & (tmp1 < 50)) | ~(xmask), "index out of bounds: 0 <= tmp1 < 50")
// CHECK-NEXT:     tmp2 = tl.load(in_ptr1 + (x0 + 16*tmp1), xmask)
// CHECK:      @triton.jit
// CHECK-NEXT: def triton_poi_fused_index_add_1(
// CHECK:          tmp1 = tl.where(tmp0 < 0, tmp0 + 50, tmp0)
// CHECK-NEXT:     tmp2 = tl.load(in_ptr1 + (xindex), xmask)
// CHECK-NEXT:     tl.atomic_add(out_ptr0 + (x0 + 16*tmp1), tmp2 + tl.full([XBLOCK], 0, tl.float32), xmask, sem='relaxed')
// CHECK:      launch(triton_poi_fused_embedding_0, triton_poi_fused_embedding_0_configs, 192, (ids, w, buf0, 192,), launches, debug=True)
