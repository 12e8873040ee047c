"""mm and addmm as mlc's own Triton GEMMs (`gemm=triton`), forward and backward against eager.

The shapes cross what the matmul kernel distinguishes: sizes smaller than every block (every
mask on), M = 1 and K = 1, M past the largest YBLOCK (128) and K past R0_BLOCK (64) with a
ragged last step, N past the largest XBLOCK (256), tall-skinny and short-wide; f32, f16, bf16;
operands read transposed (a backward's `g.t() @ x`, `x.t() @ w.t()`); addmm's beta and alpha.
Each backward runs the transposed products as GEMMs of their own.
"""

from __future__ import annotations

import re

import pytest
import torch
import torch.nn.functional as F

import mlc


@pytest.fixture(autouse=True)
def _triton_gemm(monkeypatch):
    monkeypatch.setenv("MLC_GEMM", "triton")


@pytest.mark.parametrize(
    "m, n, k, dtype",
    [
        (37, 50, 29, torch.float32),  # below every block: all four masks
        (1, 33, 1, torch.float16),  # M = 1, K = 1
        (130, 70, 100, torch.bfloat16),  # M past YBLOCK 128, K past R0_BLOCK 64 with a ragged step
        (200, 8, 24, torch.float32),  # tall-skinny
        (8, 300, 40, torch.bfloat16),  # short-wide: N past XBLOCK 256
    ],
    ids=["odd-f32", "m1-k1-f16", "blocks-bf16", "tall-f32", "wide-bf16"],
)
def test_linear_gelu_forward_and_backward(check_grad, make, m, n, k, dtype):
    x = make(m, k, dtype=dtype, low=-1, high=1, grad=True)
    w = make(n, k, dtype=dtype, low=-1, high=1, grad=True)
    b = make(n, dtype=dtype, low=-1, high=1, grad=True)
    tol = {"atol": 2e-2, "rtol": 2e-2} if dtype != torch.float32 else {"atol": 1e-4, "rtol": 1e-4}
    check_grad(lambda x, w, b: F.gelu(F.linear(x, w, b)), x, w, b, **tol)


def test_transposed_operands_and_addmm_scales(check_grad, make):
    """Both operands read transposed, and addmm's beta and alpha in the epilogue."""
    a, b = make(24, 40, grad=True), make(56, 24, grad=True)
    c = make(40, 1, grad=True)  # a column bias, broadcast along N

    def fn(a, b, c):
        return torch.addmm(c, a.t(), b.t(), beta=0.5, alpha=2.0)

    check_grad(fn, a, b, c, atol=1e-4, rtol=1e-4)


def test_swiglu(check_grad, make):
    """Two GEMMs sharing x; `silu(a) * b` fuses into the second one's epilogue."""
    x = make(48, 32, dtype=torch.bfloat16, low=-1, high=1, grad=True)
    w1 = make(40, 32, dtype=torch.bfloat16, low=-1, high=1, grad=True)
    w3 = make(40, 32, dtype=torch.bfloat16, low=-1, high=1, grad=True)
    # Eager rounds each product and the silu to bf16; the fused epilogue keeps them in f32.
    check_grad(lambda x, w1, w3: F.silu(x @ w1.t()) * (x @ w3.t()), x, w1, w3, atol=5e-2, rtol=2e-2)


def test_mm_bias_gelu_is_one_kernel(make):
    """The whole forward is one GEMM kernel: no cuBLAS call, no separate epilogue kernel."""
    from torch.fx.experimental.proxy_tensor import make_fx

    x, w, b = make(64, 96), make(128, 96), make(128)
    fn = lambda x, w, b: F.gelu(F.linear(x, w, b))  # noqa: E731
    compiled = mlc.compile_fx(make_fx(fn)(x, w, b), [x, w, b])
    assert compiled.source.count("@triton.jit") == 1 and "tl.dot(" in compiled.source
    assert "aten.mm" not in compiled.source and "aten.addmm" not in compiled.source
    torch.testing.assert_close(compiled(x, w, b), fn(x, w, b), atol=1e-4, rtol=1e-4)


def test_gathered_rows_are_a_prologue(check_grad, make):
    """`x[idx] @ w.t()`, the rows a mixture of experts gathers for its experts: the gather is
    A's prologue (one kernel, positions loaded once per tile, before the K loop, masked by the
    rows alone), with M past YBLOCK 128, K ragged past R0_BLOCK 64 and repeated rows; the
    backward scatter-adds into x's gradient."""
    from torch.fx.experimental.proxy_tensor import make_fx

    x = make(90, 100, dtype=torch.bfloat16, low=-1, high=1, grad=True)
    w = make(70, 100, dtype=torch.bfloat16, low=-1, high=1, grad=True)
    idx = torch.randint(0, 90, (130,), device=x.device)
    fn = lambda x, w, idx: torch.relu(x[idx] @ w.t())  # noqa: E731
    args = [x.detach(), w.detach(), idx]
    source = mlc.compile_fx(make_fx(fn)(*args), args).source
    assert source.count("@triton.jit") == 1 and "aten.index" not in source, source
    body = source[source.index("def triton_mm"):]
    assert body.index("in_ptr0 + (yindex), ymask") < body.index("for r0_offset"), body
    check_grad(lambda x, w: fn(x, w, idx), x, w, atol=3e-2, rtol=2e-2)


@pytest.mark.parametrize("m, n, k, ends", [(150, 40, 72, (30, 30, 100, 150)), (256, 128, 64, (64, 64, 200, 256)),
                                           (1, 40, 72, (0, 1, 1, 1))], ids=["ragged", "aligned", "one-row"])
def test_grouped_mm_of_gathered_rows(check_grad, make, m, n, k, ends):
    """A mixture of experts' projection: `_grouped_mm` of gathered token rows by per-expert
    weights, a gelu after it. The gather is the prologue, gelu the epilogue: one GEMM kernel,
    whose K loop runs once per group among a tile's rows (once, unmasked, where they are of one). The groups' ends (30, 30, 100, 150)
    put an empty group first, and cross YBLOCK's 16 to 128 row tiles; K ragged past R0_BLOCK
    64; or every size a multiple of every block, so that only the groups mask A's rows; or one
    row (M = 1: its group a scalar load, still before the loop that runs over it). The
    backward's input gradient is a grouped product too; its weight gradient (groups along K)
    stays the extern."""
    from torch.fx.experimental.proxy_tensor import make_fx

    x = make(100, k, dtype=torch.bfloat16, low=-1, high=1, grad=True)
    w = make(4, n, k, dtype=torch.bfloat16, low=-0.25, high=0.25, grad=True)  # products of about 1
    idx = torch.randint(0, 100, (m,), device=x.device)
    offs = torch.tensor(ends, dtype=torch.int32, device=x.device)
    fn = lambda x, w: F.gelu(torch._grouped_mm(x[idx], w.transpose(1, 2), offs=offs))  # noqa: E731
    args = [x.detach(), w.detach()]
    source = mlc.compile_fx(make_fx(fn)(*args), args).source
    assert "aten._grouped_mm" not in source and "aten.index" not in source, source
    assert source.count("def triton_mm") == 1 and "if group_first == group_last:" in source
    assert "for group in range(group_first, group_last + 1):" in source
    check_grad(fn, x, w, atol=3e-2, rtol=2e-2)


def test_auto_times_a_grouped_product_against_grouped_mm(check_grad, make, monkeypatch, tmp_path):
    """`gemm=auto`: a grouped product's kernel (gathered rows in, gelu out) is timed against
    torch's `_grouped_mm` of the stored gather and the groups' ends, then gelu's kernel (what
    the interpreter runs); the dump's fusion.txt has the choice; forward and backward (whose
    input gradient is timed the same way) against eager."""
    from torch.fx.experimental.proxy_tensor import make_fx

    monkeypatch.setenv("MLC_GEMM", "auto")
    monkeypatch.setenv("MLC_DUMP_DIR", str(tmp_path))
    x = make(100, 72, dtype=torch.bfloat16, low=-1, high=1, grad=True)
    w = make(4, 40, 72, dtype=torch.bfloat16, low=-0.25, high=0.25, grad=True)
    idx = torch.randint(0, 100, (150,), device=x.device)
    offs = torch.tensor((30, 30, 100, 150), dtype=torch.int32, device=x.device)
    fn = lambda x, w: F.gelu(torch._grouped_mm(x[idx], w.transpose(1, 2), offs=offs))  # noqa: E731
    args = [x.detach(), w.detach()]
    compiled = mlc.compile_fx(make_fx(fn)(*args), args)
    unfused = compiled.source[compiled.source.index("_unfused0(args):"):]
    unfused = unfused[:unfused.index("\n\n")]
    assert "_grouped_mm" in unfused and unfused.count("launch(triton_poi") == 2, unfused  # the gather, gelu
    compiled(*args)
    (fusion,) = tmp_path.glob("*/fusion.txt")
    assert re.search(r"gemm choice triton_mm_\w+ at \(150, 40, 72\): ", fusion.read_text()), fusion.read_text()
    monkeypatch.delenv("MLC_DUMP_DIR")
    check_grad(fn, x, w, atol=3e-2, rtol=2e-2)


@pytest.mark.parametrize("gemm", ["triton", "auto"])
def test_weighted_scatter_add_is_an_epilogue(check_grad, make, monkeypatch, gemm):
    """A mixture of experts' combine (torchtitan's): the experts' rows of a grouped product,
    each scaled by its routing weight, scatter-added into their tokens' rows. The scatter is
    the GEMM's epilogue: one kernel adds each accumulator tile into the f32 rows, with 150
    rows (top-2 of 75 tokens) past YBLOCK 128 in groups that start with an empty one, K ragged
    past R0_BLOCK 64. `auto` times the kernel's configs and both sides on a GPU, restoring
    the rows it adds into (the interpreter runs the unfused side). Forward and backward, whose
    product of the rows' gradients scatters nothing: the gather it reads is its prologue."""
    from torch.fx.experimental.proxy_tensor import make_fx

    monkeypatch.setenv("MLC_GEMM", gemm)
    h = make(150, 72, dtype=torch.bfloat16, low=-1, high=1, grad=True)
    w = make(4, 40, 72, dtype=torch.bfloat16, low=-0.25, high=0.25, grad=True)
    weights = make(150, dtype=torch.bfloat16, low=0, high=1, grad=True)
    tok = torch.randperm(150, device=h.device) // 2
    offs = torch.tensor((0, 30, 100, 150), dtype=torch.int32, device=h.device)

    def fn(h, w, weights):
        rows = torch._grouped_mm(h, w.transpose(1, 2), offs=offs).float() * weights[:, None]
        return torch.zeros(75, 40, dtype=h.dtype, device=h.device).scatter_add(0, tok[:, None].expand(-1, 40),
                                                                                rows.to(h.dtype))

    args = [h.detach(), w.detach(), weights.detach()]
    source = mlc.compile_fx(make_fx(fn)(*args), args).source
    kernels = source.split("@triton.jit")[1:]
    adds = sorted(re.match(r"\s*def triton_([a-z]+)_", k).group(1) for k in kernels if "tl.atomic_add" in k)
    assert adds == (["mm"] if gemm == "triton" else ["mm", "poi"]), source  # auto: the unfused side's kernel too
    check_grad(fn, h, w, weights, atol=3e-2, rtol=2e-2)


def test_index_add_of_a_product_is_an_epilogue(check_grad, make):
    """`index_add` of an f32 product with a bias, rows repeated: one GEMM kernel whose
    epilogue adds its tiles into the target's rows, which start from a computed tensor (a
    copy the scatter takes over); M, N, K below every block (all masks on)."""
    x = make(37, 29, grad=True)
    w = make(50, 29, grad=True)
    b = make(50, grad=True)
    base = make(20, 50, grad=True)
    idx = torch.randint(0, 20, (37,), device=x.device)
    fn = lambda x, w, b, base: (base * 2).index_add(0, idx, F.linear(x, w, b))  # noqa: E731
    out = torch.compile(fn, backend="mlc", fullgraph=True)(x, w, b, base)
    torch.testing.assert_close(out, fn(x, w, b, base), atol=1e-4, rtol=1e-4)
    check_grad(fn, x, w, b, base, atol=1e-4, rtol=1e-4)


def test_grouped_mm_of_strided_operands(make):
    """A read through a transposed view, B in its stored [G, K, N] order (not a weight's
    transpose), and the last group ending before the last row: the rows the groups cover
    match eager (torch leaves the others unspecified). Eager multiplies a contiguous copy: torch's
    CUDA kernel asks a column-major A for groups of whole 16-byte runs of rows, which these are not."""
    a = make(24, 72, dtype=torch.bfloat16, low=-1, high=1).t()[:70]
    w = make(3, 24, 40, dtype=torch.bfloat16, low=-1, high=1)
    offs = torch.tensor([10, 50, 60], dtype=torch.int32, device=a.device)
    fn = lambda a, w: torch._grouped_mm(a, w, offs=offs)  # noqa: E731
    out = torch.compile(fn, backend="mlc", fullgraph=True)(a, w)
    torch.testing.assert_close(out[:60], fn(a.contiguous(), w)[:60], atol=2e-2, rtol=2e-2)


def test_tf32_where_torch_allows_it(make):
    """f32 products multiply as TF32 exactly where torch's allow_tf32 says so at compile time."""
    from torch.fx.experimental.proxy_tensor import make_fx

    x, w = make(64, 64), make(64, 64)
    saved = torch.backends.cuda.matmul.allow_tf32
    for allowed in (False, True):
        torch.backends.cuda.matmul.allow_tf32 = allowed
        try:
            compiled = mlc.compile_fx(make_fx(torch.mm)(x, w), [x, w])
        finally:
            torch.backends.cuda.matmul.allow_tf32 = saved
        precision = "tf32" if allowed else "ieee"
        assert f'input_precision="{precision}"' in compiled.source
        tol = 1e-2 if allowed else 1e-4
        torch.testing.assert_close(compiled(x, w), x @ w, atol=tol * 8, rtol=tol)


def test_auto_times_each_gemm_against_its_unfused_work(check_grad, make, monkeypatch, tmp_path):
    """`gemm=auto`: each GEMM kernel is launched through `choose`, against the same work as
    cuBLAS plus its epilogue's own kernel (which runs under the interpreter; a GPU times both);
    the dump's fusion.txt ends with the choice; forward and backward against eager."""
    from torch.fx.experimental.proxy_tensor import make_fx

    monkeypatch.setenv("MLC_GEMM", "auto")
    monkeypatch.setenv("MLC_DUMP_DIR", str(tmp_path))
    x, w, b = make(40, 24, grad=True), make(56, 24, grad=True), make(56, grad=True)
    fn = lambda x, w, b: F.gelu(F.linear(x, w, b))  # noqa: E731
    compiled = mlc.compile_fx(make_fx(fn)(x.detach(), w.detach(), b.detach()), [x.detach(), w.detach(), b.detach()])
    assert "choose(" in compiled.source and "_unfused0([" in compiled.source and "torch.mm(" in compiled.source
    compiled(x.detach(), w.detach(), b.detach())
    (fusion,) = tmp_path.glob("*/fusion.txt")
    times = r"fused \d+\.\d+ ms, cuBLAS \+ epilogue \d+\.\d+ ms: (fused kernel|cuBLAS \+ epilogue) runs"
    untimed = r"not timed \(interpreter\): cuBLAS \+ epilogue ran"
    choice = rf"gemm choice triton_mm_\w+ at \(40, 56, 24\): ({times if torch.cuda.is_available() else untimed})\n"
    assert re.search(choice + r"\Z", fusion.read_text()), fusion.read_text()
    monkeypatch.delenv("MLC_DUMP_DIR")
    check_grad(fn, x, w, b, atol=1e-4, rtol=1e-4)
    # Only a bias add after the product: the unfused side is addmm writing the output itself.
    linear = make_fx(F.linear)(x.detach(), w.detach(), b.detach())
    source = mlc.compile_fx(linear, [x.detach(), w.detach(), b.detach()]).source
    assert re.search(r"torch\.addmm\(\w+_bias, \w+_lhs, \w+_rhs, out=buf\d+\)", source), source
    check_grad(F.linear, x, w, b, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("batched", [False, True], ids=["mm", "bmm"])
def test_auto_stores_prologues_for_cublas(check_grad, make, monkeypatch, batched):
    """`gemm=auto` with operands the GEMM computes in its K loop: A upcast from bf16 and scaled
    per column, B a reshape of a transpose (no strided window on its input). The unfused side
    (what the interpreter runs) stores each by a kernel of its own before cuBLAS (over [B,] M, K
    and [B,] K, N); forward and backward against eager."""
    from torch.fx.experimental.proxy_tensor import make_fx

    monkeypatch.setenv("MLC_GEMM", "auto")
    if batched:
        x, s, w = make(3, 40, 24, dtype=torch.bfloat16, grad=True), make(24, grad=True), make(3, 2, 24, 14, grad=True)
        fn = lambda x, s, w: torch.bmm(x.float() * s, w.transpose(2, 3).reshape(3, 28, 24).transpose(1, 2))  # noqa: E731
    else:
        x, s, w = make(40, 24, dtype=torch.bfloat16, grad=True), make(24, grad=True), make(2, 24, 28, grad=True)
        fn = lambda x, s, w: (x.float() * s) @ w.transpose(1, 2).reshape(56, 24).t()  # noqa: E731
    args = [x.detach(), s.detach(), w.detach()]
    source = mlc.compile_fx(make_fx(fn)(*args), args).source
    unfused = source[source.index("_unfused0(args):"):]
    unfused = unfused[:unfused.index("\n\n")]
    extern = "torch.bmm(" if batched else "torch.mm("
    assert unfused.count("launch(triton_poi") == 2 and extern in unfused, unfused
    check_grad(fn, x, s, w, atol=1e-4, rtol=1e-4)


def test_baddbmm_forward_and_backward(check_grad, make):
    """A batched product (the grid's z) below every block, every mask on, with baddbmm's bias
    broadcast over the batch, its beta and alpha, and a relu epilogue; the backward's bmm of
    transposed operands are batched GEMMs too."""
    from torch.fx.experimental.proxy_tensor import make_fx

    a, b, c = make(3, 37, 29, grad=True), make(3, 29, 50, grad=True), make(37, 50, grad=True)
    fn = lambda a, b, c: torch.relu(torch.baddbmm(c, a, b, beta=0.5, alpha=2.0))  # noqa: E731
    compiled = mlc.compile_fx(make_fx(fn)(a.detach(), b.detach(), c.detach()), [a.detach(), b.detach(), c.detach()])
    assert compiled.source.count("@triton.jit") == 1 and "zindex = tl.program_id(2)" in compiled.source
    assert "bmm" not in compiled.source.replace("baddbmm", "")
    check_grad(fn, a, b, c, atol=1e-4, rtol=1e-4)


def test_matmul_4d_bf16(check_grad, make):
    """`q @ k.transpose(-1, -2)` over (2, 3) batch dimensions: a bmm of 6 products, M past
    YBLOCK 128 and K past R0_BLOCK 64, with a scaled epilogue."""
    q = make(2, 3, 130, 72, dtype=torch.bfloat16, low=-1, high=1, grad=True)
    k = make(2, 3, 40, 72, dtype=torch.bfloat16, low=-1, high=1, grad=True)
    check_grad(lambda q, k: (q @ k.transpose(-1, -2)) * 0.125, q, k, atol=2e-2, rtol=2e-2)


def test_bmm_dynamic_rows(make):
    """A symbolic M with a static batch: one compile serves both sizes (the kernel counts its
    products in z rows, past which a symbolic M's y programs could wrap)."""
    compiled = torch.compile(torch.bmm, backend="mlc", fullgraph=True)
    for m in (33, 70):
        a, b = make(4, m, 24), make(4, 24, 40)
        torch._dynamo.mark_dynamic(a, 1)
        torch.testing.assert_close(compiled(a, b), torch.bmm(a, b), atol=1e-4, rtol=1e-4)
