// RUN: mlc-translate --emit-python %s | filecheck %s

// Extern calls: the matmul family through torch's own functions (`torch.mm`: its generated
// binding, not the OpOverload's boxed call, a few microseconds less per call), anything else
// through its OpOverload; each result gets the layout the IR fixed for it.

triton.wrapper @call {
  triton.input "a" #buffer.layout<[8, 16], [16, 1], f32>
  triton.input "b" #buffer.layout<[16, 4], [4, 1], f32>
  triton.input "c" #buffer.layout<[4], [1], f32>
  triton.extern "buf0" = "mm" {args = [@a, @b]} : #buffer.layout<[8, 4], [4, 1], f32>
  triton.extern "buf1" = "addmm.default" {args = [@c, @a, @b], kwargs = {beta = 2 : i64}} : #buffer.layout<[8, 4], [4, 1], f32>
  triton.extern "buf2" = "add.Tensor" {args = [@buf0, @buf1]} : #buffer.layout<[8, 4], [4, 1], f32>
  triton.return @buf2
}

// CHECK:      buf0 = torch.mm(a, b)
// CHECK-NEXT: buf0 = ensure_layout(buf0, (8, 4), (4, 1), 0)
// CHECK-NEXT: buf1 = torch.addmm(c, a, b, beta=2)
// CHECK-NEXT: buf1 = ensure_layout(buf1, (8, 4), (4, 1), 0)
// CHECK-NEXT: buf2 = aten.add.Tensor(buf0, buf1)
