// RUN: mlc-opt %s --convert-to-triton | filecheck %s
// RUN: mlc-opt %s --convert-to-triton | mlc-opt | filecheck %s

// The host side: allocations before each launch, an extern mm reading a view, a kernel reading
// that view through its root storage, a fused group whose intermediate never leaves registers,
// frees after last use (never inputs or outputs), and the outputs (one of them a view).

buffer.graph @forward {
  buffer.input "arg0_1" #buffer.layout<[8, 8], [8, 1], f32>
  buffer.input "arg1_1" #buffer.layout<[8, 8], [8, 1], f32>
  buffer.computed "buf0" #buffer.layout<[8, 8], [8, 1], f32> ranges [8, 8] origins ["sin"] {
    %0 = buffer.load @arg0_1[i1 + 8*i0] : f32
    %1 = math.sin %0 : f32
    buffer.store @buf0[i1 + 8*i0], %1 : f32
  }
  buffer.view "buf1" = @buf0 #buffer.layout<[8, 8], [1, 8], f32>
  buffer.extern "buf2" = "mm.default" {args = [@buf1, @arg1_1]} : #buffer.layout<[8, 8], [8, 1], f32>
  buffer.fused {
    buffer.computed "buf3" #buffer.layout<[8, 8], [8, 1], f32> ranges [8, 8] origins ["mul"] {
      %0 = buffer.load @buf2[i1 + 8*i0] : f32
      %1 = buffer.load @buf1[i0 + 8*i1] : f32
      %2 = arith.mulf %0, %1 : f32
      buffer.store @buf3[i1 + 8*i0], %2 : f32
    }
    buffer.computed "buf4" #buffer.layout<[8, 8], [8, 1], f32> ranges [8, 8] origins ["add"] {
      %0 = buffer.load @buf3[i1 + 8*i0] : f32
      %1 = buffer.load @arg1_1[i1 + 8*i0] : f32
      %2 = arith.addf %0, %1 : f32
      buffer.store @buf4[i1 + 8*i0], %2 : f32
    }
  }
  buffer.view "buf5" = @buf4 #buffer.layout<[64], [1], f32>
  buffer.output @buf5, @buf2
}

// CHECK:      builtin.module {
// CHECK-NEXT:   triton.kernel @triton_poi_fused_sin_0 pointwise(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 64 origins ["sin"] configs [#triton.config<XBLOCK = 64, num_warps = 1, num_stages = 1>] {
// CHECK-NEXT:     %[[V0:[0-9]+]] = triton.load %in_ptr0[xindex] mask xmask : f32
// CHECK-NEXT:     %[[V1:[0-9]+]] = math.sin %[[V0]] : f32
// CHECK-NEXT:     triton.store %out_ptr0[xindex], %[[V1]] mask xmask : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   triton.kernel @triton_poi_fused_add_mul_1 pointwise(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>, %in_ptr2: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 64 origins ["add", "mul"] configs [#triton.config<XBLOCK = 64, num_warps = 1, num_stages = 1>] {
// CHECK-NEXT:     triton.index x0 = ModularIndexing(xindex, 1, 8)
// CHECK-NEXT:     triton.index x1 = FloorDiv(xindex, 8)
// CHECK-NEXT:     %[[V0:[0-9]+]] = triton.load %in_ptr0[xindex] mask xmask : f32
// CHECK-NEXT:     %[[V1:[0-9]+]] = triton.load %in_ptr1[x1 + 8*x0] mask xmask evict_last : f32
// CHECK-NEXT:     %[[V2:[0-9]+]] = arith.mulf %[[V0]], %[[V1]] : f32
// CHECK-NEXT:     %[[V3:[0-9]+]] = triton.load %in_ptr2[xindex] mask xmask : f32
// CHECK-NEXT:     %[[V4:[0-9]+]] = arith.addf %[[V2]], %[[V3]] : f32
// CHECK-NEXT:     triton.store %out_ptr0[xindex], %[[V4]] mask xmask : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   triton.wrapper @call {
// CHECK-NEXT:     triton.input "arg0_1" #buffer.layout<[8, 8], [8, 1], f32>
// CHECK-NEXT:     triton.input "arg1_1" #buffer.layout<[8, 8], [8, 1], f32>
// CHECK-NEXT:     triton.alloc "buf0" #buffer.layout<[8, 8], [8, 1], f32>
// CHECK-NEXT:     triton.launch @triton_poi_fused_sin_0(@arg0_1, @buf0) xnumel 64
// CHECK-NEXT:     triton.free @arg0_1
// CHECK-NEXT:     triton.view "buf1" = @buf0 #buffer.layout<[8, 8], [1, 8], f32>
// CHECK-NEXT:     triton.extern "buf2" = "mm.default" {args = [@buf1, @arg1_1]} : #buffer.layout<[8, 8], [8, 1], f32>
// CHECK-NEXT:     triton.free @buf1
// CHECK-NEXT:     triton.alloc "buf4" #buffer.layout<[8, 8], [8, 1], f32>
// CHECK-NEXT:     triton.launch @triton_poi_fused_add_mul_1(@buf2, @buf0, @arg1_1, @buf4) xnumel 64
// CHECK-NEXT:     triton.free @arg1_1, @buf0
// CHECK-NEXT:     triton.view "buf5" = @buf4 #buffer.layout<[64], [1], f32>
// CHECK-NEXT:     triton.free @buf4
// CHECK-NEXT:     triton.return @buf5, @buf2
// CHECK-NEXT:   }
// CHECK-NEXT: }
