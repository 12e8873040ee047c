// RUN: mlc-opt %s --split-input-file -p plan-buffers | filecheck %s
// RUN: mlc-opt %s --split-input-file -p plan-buffers | mlc-opt --split-input-file | filecheck %s

// An allocation takes the storage of a dead buffer of the same dtype and extent, the most
// recently freed first (buf1 and buf0 die together: buf3 takes buf1, then buf4 takes buf0 with
// its own, transposed, layout); the source's free moves into the reuse, and a reused buffer is
// reused again (buf6 takes buf4's, buf0's storage). Inputs and outputs give nothing.
// CHECK-LABEL: triton.wrapper @call
// CHECK:         triton.launch @k(@buf1, @buf2) xnumel 64
// CHECK-NEXT:    triton.reuse "buf3" = @buf1 #buffer.layout<[8, 8], [8, 1], f32>
// CHECK-NEXT:    triton.launch @k(@buf2, @buf3) xnumel 64
// CHECK-NEXT:    triton.reuse "buf4" = @buf0 #buffer.layout<[8, 8], [1, 8], f32>
// CHECK-NEXT:    triton.launch @k(@buf3, @buf4) xnumel 64
// CHECK-NEXT:    triton.reuse "buf5" = @buf2 #buffer.layout<[8, 8], [8, 1], f32>
// CHECK-NEXT:    triton.launch @k(@buf4, @buf5) xnumel 64
// CHECK-NEXT:    triton.free @buf3
// CHECK-NEXT:    triton.reuse "buf6" = @buf4 #buffer.layout<[8, 8], [8, 1], f32>
// CHECK-NEXT:    triton.launch @k(@buf5, @buf6) xnumel 64
// CHECK-NEXT:    triton.return @buf5, @buf6
triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 64 configs [#triton.config<XBLOCK = 64, num_warps = 1, num_stages = 1>] {
  %0 = triton.load %in_ptr0[xindex] mask xmask : f32
  triton.store %out_ptr0[xindex], %0 mask xmask : f32
}
triton.wrapper @call {
  triton.input "x" #buffer.layout<[8, 8], [8, 1], f32>
  triton.alloc "buf0" #buffer.layout<[8, 8], [8, 1], f32>
  triton.launch @k(@x, @buf0) xnumel 64
  triton.alloc "buf1" #buffer.layout<[8, 8], [8, 1], f32>
  triton.launch @k(@buf0, @buf1) xnumel 64
  triton.alloc "buf2" #buffer.layout<[8, 8], [8, 1], f32>
  triton.launch @k(@buf1, @buf2) xnumel 64
  triton.free @buf0, @buf1
  triton.alloc "buf3" #buffer.layout<[8, 8], [8, 1], f32>
  triton.launch @k(@buf2, @buf3) xnumel 64
  triton.alloc "buf4" #buffer.layout<[8, 8], [1, 8], f32>
  triton.launch @k(@buf3, @buf4) xnumel 64
  triton.free @buf2
  triton.alloc "buf5" #buffer.layout<[8, 8], [8, 1], f32>
  triton.launch @k(@buf4, @buf5) xnumel 64
  triton.free @buf3, @buf4
  triton.alloc "buf6" #buffer.layout<[8, 8], [8, 1], f32>
  triton.launch @k(@buf5, @buf6) xnumel 64
  triton.return @buf5, @buf6
}

// -----

// A storage is dead only once every name holding it is freed: buf0 lives on in its view
// view0 until view0's free, and in mm's result buf2 (a call may return a view of its
// argument) until buf2's free. Another dtype or extent takes nothing (buf4, buf5).
// CHECK-LABEL: triton.wrapper @call
// CHECK:         triton.alloc "buf3" #buffer.layout<[8, 8], [8, 1], f32>
// CHECK:         triton.alloc "buf4" #buffer.layout<[8, 8], [8, 1], f16>
// CHECK:         triton.alloc "buf5" #buffer.layout<[4, 8], [8, 1], f32>
// CHECK:         triton.free @buf2
// CHECK-NEXT:    triton.reuse "buf6" = @buf0 #buffer.layout<[8, 8], [8, 1], f32>
// CHECK-NEXT:    triton.launch @k(@buf3, @buf6) xnumel 64
triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 64 configs [#triton.config<XBLOCK = 64, num_warps = 1, num_stages = 1>] {
  %0 = triton.load %in_ptr0[xindex] mask xmask : f32
  triton.store %out_ptr0[xindex], %0 mask xmask : f32
}
triton.kernel @h pointwise(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f16>) xnumel 64 configs [#triton.config<XBLOCK = 64, num_warps = 1, num_stages = 1>] {
  %0 = triton.load %in_ptr0[xindex] mask xmask : f32
  %1 = arith.truncf %0 : f32 to f16
  triton.store %out_ptr0[xindex], %1 mask xmask : f16
}
triton.kernel @q pointwise(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 32 configs [#triton.config<XBLOCK = 32, num_warps = 1, num_stages = 1>] {
  %0 = triton.load %in_ptr0[xindex] mask xmask : f32
  triton.store %out_ptr0[xindex], %0 mask xmask : f32
}
triton.wrapper @call {
  triton.input "x" #buffer.layout<[8, 8], [8, 1], f32>
  triton.alloc "buf0" #buffer.layout<[8, 8], [8, 1], f32>
  triton.launch @k(@x, @buf0) xnumel 64
  triton.view "view0" = @buf0 #buffer.layout<[8, 8], [1, 8], f32>
  triton.extern "buf2" = "mm.default" {args = [@view0, @x]} : #buffer.layout<[8, 8], [8, 1], f32>
  triton.free @buf0
  triton.alloc "buf3" #buffer.layout<[8, 8], [8, 1], f32>
  triton.launch @k(@view0, @buf3) xnumel 64
  triton.free @view0
  triton.alloc "buf4" #buffer.layout<[8, 8], [8, 1], f16>
  triton.launch @h(@buf3, @buf4) xnumel 64
  triton.alloc "buf5" #buffer.layout<[4, 8], [8, 1], f32>
  triton.launch @q(@buf2, @buf5) xnumel 32
  triton.free @buf2
  triton.alloc "buf6" #buffer.layout<[8, 8], [8, 1], f32>
  triton.launch @k(@buf3, @buf6) xnumel 64
  triton.free @buf3
  triton.return @buf4, @buf5, @buf6
}

// -----

// A `fresh` call's results hold nothing of its arguments: buf0 is dead at its free although
// mm's result lives on, and buf2 takes it.
// CHECK-LABEL: triton.wrapper @call
// CHECK:         triton.extern "buf1" = "mm.default" {args = [@buf0, @x], fresh}
// CHECK-NEXT:    triton.reuse "buf2" = @buf0 #buffer.layout<[8, 8], [8, 1], f32>
// CHECK-NEXT:    triton.launch @k(@buf1, @buf2) xnumel 64
triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 64 configs [#triton.config<XBLOCK = 64, num_warps = 1, num_stages = 1>] {
  %0 = triton.load %in_ptr0[xindex] mask xmask : f32
  triton.store %out_ptr0[xindex], %0 mask xmask : f32
}
triton.wrapper @call {
  triton.input "x" #buffer.layout<[8, 8], [8, 1], f32>
  triton.alloc "buf0" #buffer.layout<[8, 8], [8, 1], f32>
  triton.launch @k(@x, @buf0) xnumel 64
  triton.extern "buf1" = "mm.default" {args = [@buf0, @x], fresh} : #buffer.layout<[8, 8], [8, 1], f32>
  triton.free @buf0
  triton.alloc "buf2" #buffer.layout<[8, 8], [8, 1], f32>
  triton.launch @k(@buf1, @buf2) xnumel 64
  triton.free @buf1
  triton.return @buf2
}

// -----

// A dead storage is not held for a later allocation across the peak of live bytes: buf0 dies
// before buf2, the largest, is allocated; had buf3 taken buf0's storage, both would be live at
// buf2's peak (48 KiB, not 32). buf3 is allocated anew, buf0 freed where it dies; the caching
// allocator reuses the freed block anyway.
// CHECK-LABEL: triton.wrapper @call
// CHECK:         triton.free @buf0
// CHECK-NEXT:    triton.alloc "buf2" #buffer.layout<[64, 128], [128, 1], f32>
// CHECK:         triton.alloc "buf3" #buffer.layout<[64, 64], [64, 1], f32>
// CHECK-NOT:     triton.reuse
triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 64 configs [#triton.config<XBLOCK = 64, num_warps = 1, num_stages = 1>] {
  %0 = triton.load %in_ptr0[xindex] mask xmask : f32
  triton.store %out_ptr0[xindex], %0 mask xmask : f32
}
triton.wrapper @call {
  triton.input "x" #buffer.layout<[8, 8], [8, 1], f32>
  triton.alloc "buf0" #buffer.layout<[64, 64], [64, 1], f32>
  triton.launch @k(@x, @buf0) xnumel 64
  triton.alloc "buf1" #buffer.layout<[8, 8], [8, 1], f32>
  triton.launch @k(@buf0, @buf1) xnumel 64
  triton.free @buf0
  triton.alloc "buf2" #buffer.layout<[64, 128], [128, 1], f32>
  triton.launch @k(@buf1, @buf2) xnumel 64
  triton.free @buf1
  triton.alloc "buf3" #buffer.layout<[64, 64], [64, 1], f32>
  triton.launch @k(@buf2, @buf3) xnumel 64
  triton.free @buf2
  triton.return @buf3
}
