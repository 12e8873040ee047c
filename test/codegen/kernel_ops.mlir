triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>, %in_ptr2: !triton.ptr<i32>, %in_ptr3: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>, %out_ptr1: !triton.ptr<i1>, %out_ptr2: !triton.ptr<i32>, %out_ptr3: !triton.ptr<bf16>, %out_ptr4: !triton.ptr<f32>) xnumel 100 configs [#triton.config<XBLOCK = 128, num_warps = 4, num_stages = 1>] {
  %a = triton.load %in_ptr0[xindex] mask xmask : f32
  %b = triton.load %in_ptr1[xindex] mask xmask : f32
  %i = triton.load %in_ptr2[xindex] mask xmask : i32
  %s = triton.load %in_ptr3[0] mask xmask : f32
  %ueq = arith.cmpf ueq, %a, %b : f32
  %one = arith.cmpf one, %a, %b : f32
  %x = arith.xori %ueq, %one : i1
  %mx = arith.maximumf %a, %b : f32
  %ms = arith.addf %mx, %s : f32
  triton.store %out_ptr0[xindex], %ms mask xmask : f32
  triton.store %out_ptr1[xindex], %x mask xmask : i1
  %c7 = arith.constant 7 : i32
  %fd = arith.floordivsi %i, %c7 : i32
  %neg = arith.extsi %x : i1 to i32
  %low = arith.trunci %i : i32 to i1
  %lowi = arith.extui %low : i1 to i32
  %sum = arith.addi %fd, %neg : i32
  %sum2 = arith.addi %sum, %lowi : i32
  triton.store %out_ptr2[xindex], %sum2 mask xmask : i32
  %h = arith.truncf %a : f32 to bf16
  triton.store %out_ptr3[xindex], %h mask xmask : bf16
  %nz = arith.constant -0.000000e+00 : f32
  %inf = arith.constant 0x7F800000 : f32
  %sel = arith.select %x, %nz, %inf : f32
  triton.store %out_ptr4[0], %s mask xmask : f32
  triton.store %out_ptr4[xindex + 1], %sel mask xmask : f32
}
triton.wrapper @call {
  triton.input "a" #buffer.layout<[100], [1], f32>
  triton.input "b" #buffer.layout<[100], [1], f32>
  triton.input "i" #buffer.layout<[100], [1], i32>
  triton.input "s" #buffer.layout<[], [], f32>
  triton.alloc "buf0" #buffer.layout<[100], [1], f32>
  triton.alloc "buf1" #buffer.layout<[100], [1], i1>
  triton.alloc "buf2" #buffer.layout<[100], [1], i32>
  triton.alloc "buf3" #buffer.layout<[100], [1], bf16>
  triton.alloc "buf4" #buffer.layout<[101], [1], f32>
  triton.launch @k(@a, @b, @i, @s, @buf0, @buf1, @buf2, @buf3, @buf4) xnumel 100
  triton.view "buf5" = @buf4 #buffer.layout<[10, 10], [10, 1], f32, offset 1>
  triton.extern "buf6" = "add.Tensor" {args = [@buf5, @buf5], kwargs = {alpha = 2 : i64}} : #buffer.layout<[10, 10], [10, 1], f32>
  triton.free @buf4
  triton.return @buf0, @buf1, @buf2, @buf3, @buf5, @buf6
}
