// RUN: mlc-opt %s --split-input-file --convert-to-triton | filecheck %s
// RUN: mlc-opt %s --split-input-file --convert-to-triton | mlc-opt --split-input-file | filecheck %s
// RUN: mlc-opt %s --split-input-file -p 'convert-to-triton{tile-2d=false}' | filecheck %s --check-prefix=OFF

// A transposed add (x.t() + y on [64, 32]): x is read with stride 64 along the inner dim, so the
// kernel is tiled 2-D -- ynumel 64 (the outer dim) by xnumel 32 -- and both the transposed read
// (unit stride along yindex) and the contiguous read and write (unit stride along xindex) merge
// to plain affine indices; the transposed read is evict_last (the next tile along y reads the
// rest of its lines), the contiguous one is not. A 3-D permute (x.permute(2, 0, 1) on [40, 48, 36] -> [36, 40, 48])
// reads unit-stride along its outer dim, so it splits after it (y 36, x 40*48; f16 alike). A broadcast add reads coalesced or broadcast along xindex
// everywhere and stays 1-D. With tile-2d=false every kernel is 1-D.

buffer.graph @forward {
  buffer.input "arg0_1" #buffer.layout<[32, 64], [64, 1], f32>
  buffer.input "arg1_1" #buffer.layout<[64, 32], [32, 1], f32>
  buffer.computed "buf0" #buffer.layout<[64, 32], [32, 1], f32> ranges [64, 32] origins ["add", "permute"] {
    %0 = buffer.load @arg0_1[i0 + 64*i1] : f32
    %1 = buffer.load @arg1_1[i1 + 32*i0] : f32
    %2 = arith.addf %0, %1 : f32
    buffer.store @buf0[i1 + 32*i0], %2 : f32
  }
  buffer.output @buf0
}

// -----

buffer.graph @forward {
  buffer.input "arg0_1" #buffer.layout<[40, 48, 36], [1728, 36, 1], f16>
  buffer.computed "buf0" #buffer.layout<[36, 40, 48], [1920, 48, 1], f16> ranges [36, 40, 48] origins ["permute"] {
    %0 = buffer.load @arg0_1[i0 + 36*i2 + 1728*i1] : f16
    buffer.store @buf0[i2 + 48*i1 + 1920*i0], %0 : f16
  }
  buffer.output @buf0
}

// -----

buffer.graph @forward {
  buffer.input "arg0_1" #buffer.layout<[64, 32], [32, 1], f32>
  buffer.input "arg1_1" #buffer.layout<[32], [1], f32>
  buffer.computed "buf0" #buffer.layout<[64, 32], [32, 1], f32> ranges [64, 32] origins ["add"] {
    %0 = buffer.load @arg0_1[i1 + 32*i0] : f32
    %1 = buffer.load @arg1_1[i1] : f32
    %2 = arith.addf %0, %1 : f32
    buffer.store @buf0[i1 + 32*i0], %2 : f32
  }
  buffer.output @buf0
}

// CHECK:      builtin.module {
// CHECK-NEXT:   triton.kernel @triton_poi_fused_add_permute_0 pointwise(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) ynumel 64 xnumel 32 origins ["add", "permute"] configs [#triton.config<YBLOCK = 32, XBLOCK = 32, num_warps = 4, num_stages = 1>, #triton.config<YBLOCK = 64, XBLOCK = 32, num_warps = 8, num_stages = 1>, #triton.config<YBLOCK = 16, XBLOCK = 32, num_warps = 4, num_stages = 1>, #triton.config<YBLOCK = 64, XBLOCK = 16, num_warps = 4, num_stages = 1>, #triton.config<YBLOCK = 8, XBLOCK = 32, num_warps = 4, num_stages = 1>, #triton.config<YBLOCK = 64, XBLOCK = 4, num_warps = 4, num_stages = 1>] {
// CHECK-NEXT:     %0 = triton.load %in_ptr0[yindex + 64*xindex] mask ymask, xmask evict_last : f32
// CHECK-NEXT:     %1 = triton.load %in_ptr1[xindex + 32*yindex] mask ymask, xmask : f32
// CHECK-NEXT:     %2 = arith.addf %0, %1 : f32
// CHECK-NEXT:     triton.store %out_ptr0[xindex + 32*yindex], %2 mask ymask, xmask : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   triton.wrapper @call {
// CHECK-NEXT:     triton.input "arg0_1" #buffer.layout<[32, 64], [64, 1], f32>
// CHECK-NEXT:     triton.input "arg1_1" #buffer.layout<[64, 32], [32, 1], f32>
// CHECK-NEXT:     triton.alloc "buf0" #buffer.layout<[64, 32], [32, 1], f32>
// CHECK-NEXT:     triton.launch @triton_poi_fused_add_permute_0(@arg0_1, @arg1_1, @buf0) ynumel 64 xnumel 32
// CHECK-NEXT:     triton.free @arg0_1, @arg1_1
// CHECK-NEXT:     triton.return @buf0
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK:      builtin.module {
// CHECK-NEXT:   triton.kernel @triton_poi_fused_permute_0 pointwise(%in_ptr0: !triton.ptr<f16>, %out_ptr0: !triton.ptr<f16>) ynumel 36 xnumel 1920 origins ["permute"] configs [#triton.config<YBLOCK = 32, XBLOCK = 32, num_warps = 4, num_stages = 1>, #triton.config<YBLOCK = 64, XBLOCK = 64, num_warps = 8, num_stages = 1>, #triton.config<YBLOCK = 16, XBLOCK = 256, num_warps = 8, num_stages = 1>, #triton.config<YBLOCK = 1, XBLOCK = 1024, num_warps = 4, num_stages = 1>, #triton.config<YBLOCK = 64, XBLOCK = 16, num_warps = 4, num_stages = 1>] {
// CHECK-NEXT:     %0 = triton.load %in_ptr0[yindex + 36*xindex] mask ymask, xmask evict_last : f16
// CHECK-NEXT:     triton.store %out_ptr0[xindex + 1920*yindex], %0 mask ymask, xmask : f16
// CHECK-NEXT:   }
// CHECK-NEXT:   triton.wrapper @call {
// CHECK-NEXT:     triton.input "arg0_1" #buffer.layout<[40, 48, 36], [1728, 36, 1], f16>
// CHECK-NEXT:     triton.alloc "buf0" #buffer.layout<[36, 40, 48], [1920, 48, 1], f16>
// CHECK-NEXT:     triton.launch @triton_poi_fused_permute_0(@arg0_1, @buf0) ynumel 36 xnumel 1920
// CHECK-NEXT:     triton.free @arg0_1
// CHECK-NEXT:     triton.return @buf0
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK:      builtin.module {
// CHECK-NEXT:   triton.kernel @triton_poi_fused_add_0 pointwise(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 2048 origins ["add"] configs [#triton.config<XBLOCK = 256, num_warps = 4, num_stages = 1>, #triton.config<XBLOCK = 128, num_warps = 4, num_stages = 1>] {
// CHECK-NEXT:     triton.index x0 = ModularIndexing(xindex, 1, 32)
// CHECK-NEXT:     %0 = triton.load %in_ptr0[xindex] mask xmask : f32
// CHECK-NEXT:     %1 = triton.load %in_ptr1[x0] mask xmask evict_last : f32
// CHECK-NEXT:     %2 = arith.addf %0, %1 : f32
// CHECK-NEXT:     triton.store %out_ptr0[xindex], %2 mask xmask : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   triton.wrapper @call {
// CHECK-NEXT:     triton.input "arg0_1" #buffer.layout<[64, 32], [32, 1], f32>
// CHECK-NEXT:     triton.input "arg1_1" #buffer.layout<[32], [1], f32>
// CHECK-NEXT:     triton.alloc "buf0" #buffer.layout<[64, 32], [32, 1], f32>
// CHECK-NEXT:     triton.launch @triton_poi_fused_add_0(@arg0_1, @arg1_1, @buf0) xnumel 2048
// CHECK-NEXT:     triton.free @arg0_1, @arg1_1
// CHECK-NEXT:     triton.return @buf0
// CHECK-NEXT:   }
// CHECK-NEXT: }

// OFF:      triton.kernel @triton_poi_fused_add_permute_0 pointwise({{.*}}) xnumel 2048 origins
// OFF:        triton.load %in_ptr0[x1 + 64*x0] mask xmask evict_last : f32
// OFF:      triton.launch @triton_poi_fused_add_permute_0(@arg0_1, @arg1_1, @buf0) xnumel 2048
// OFF:      triton.kernel @triton_poi_fused_permute_0 pointwise({{.*}}) xnumel 69120 origins
// OFF:      triton.kernel @triton_poi_fused_add_0 pointwise({{.*}}) xnumel 2048 origins
