"""Ops that run as extern calls, forward and backward: attention (the ops CPU and CUDA pick for
`scaled_dot_product_attention`, several outputs, some of them None or numbers on CUDA) and
convolution's backward when the input needs no gradient (None outputs) — issue 8."""

from __future__ import annotations

import re

import pytest
import torch
import torch.nn.functional as F
from torch import nn


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"is_causal": True}, {"scale": 0.3}, {"mask": True}],
    ids=["plain", "causal", "scale", "mask"],
)
def test_attention_backward(check_grad, make, device, kwargs):
    q, k, v = (make(2, 3, 24, 16, grad=True) for _ in range(3))
    mask = make(24, 24) > 0 if kwargs.pop("mask", False) else None

    def attention(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, **kwargs)

    check_grad(attention, q, k, v, atol=1e-4, rtol=1e-4)


def test_attention_inside_a_block(check_grad, make):
    """Projections and a residual around attention: elementwise work in mlc kernels around it."""
    x, w = make(2, 16, 32, grad=True), make(96, 32, grad=True)

    def block(x, w):
        q, k, v = (x @ w.t()).view(2, 16, 3, 2, 16).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return x + y.transpose(1, 2).reshape(2, 16, 32).relu()

    check_grad(block, x, w, atol=1e-4, rtol=1e-4)


def test_attention_result_comes_back_as_traced(check_grad, make, monkeypatch):
    """A Llama-style query: a projection viewed [B, S, H, D], transposed to [B, H, S, D] and
    rotated (a kernel of mlc's). It is stored with the strides attention was traced reading it
    with ([B, S, H, D] order), so the call returns its output as traced and the module does not
    copy it (`ensure_layout`). Stored row-major, CUDA's cuDNN attention, whose output follows
    the query's layout, returned [B, H, S, D], copied after every call. Forward and backward in
    bfloat16 (cuDNN's dtype on the GPU; on CPU the attention returns [B, S, H, D] either way)."""
    import mlc.codegen.triton_helpers as helpers

    copies = []
    ensure_layout = helpers.ensure_layout

    def copy_spy(t, size, stride, offset=0):
        out = ensure_layout(t, size, stride, offset)
        if out is not t:
            copies.append((tuple(size), tuple(stride), t.stride()))
        return out

    monkeypatch.setattr(helpers, "ensure_layout", copy_spy)
    x = make(2, 64, 128, dtype=torch.bfloat16, low=-1, high=1, grad=True)
    w = make(384, 128, dtype=torch.bfloat16, low=-0.1, high=0.1, grad=True)
    cos, sin = make(64, 32, dtype=torch.bfloat16), make(64, 32, dtype=torch.bfloat16)

    def block(x, w):
        q, k, v = ((x @ w.t()).view(2, 64, 3, 4, 32).permute(2, 0, 3, 1, 4))
        q = q * cos + torch.cat([-q[..., 16:], q[..., :16]], dim=-1) * sin
        y = F.scaled_dot_product_attention(q, k.contiguous(), v.contiguous(), is_causal=True)
        return y.transpose(1, 2).reshape(2, 64, 128)

    check_grad(block, x, w, atol=5e-2, rtol=5e-2)
    assert not copies, copies


@pytest.mark.parametrize("input_grad", [False, True], ids=["image", "feature"])
def test_convolution_training_step(device, input_grad):
    """An image needs no gradient: convolution_backward returns None for it."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 4, 3, stride=2)).to(device)
    x = torch.randn(2, 3, 12, 12, device=device, requires_grad=input_grad)
    compiled = torch.compile(model, backend="mlc", fullgraph=True, dynamic=False)
    expected_grads = _grads(model, x)
    actual_grads = _grads(compiled, x)
    for name, expected in expected_grads.items():
        torch.testing.assert_close(actual_grads[name], expected, atol=1e-4, rtol=1e-4, msg=name)


def _grads(model, x) -> dict[str, torch.Tensor]:
    for p in model.parameters():
        p.grad = None
    x = x.detach().requires_grad_(x.requires_grad)
    (model(x) ** 2).sum().backward()
    grads = {n.removeprefix("_orig_mod."): p.grad.clone() for n, p in model.named_parameters()}
    if x.requires_grad:
        grads["input"] = x.grad.clone()
    return grads


@torch.library.custom_op("mlc_test::scaled_cumsum", mutates_args=())
def scaled_cumsum(x: torch.Tensor, scale: float) -> torch.Tensor:
    return torch.cumsum(x, -1) * scale


@scaled_cumsum.register_fake
def _(x, scale):
    return torch.empty_like(x)


def test_custom_op_runs_as_an_extern(check, make):
    """An op outside aten (a custom op, or torch_nn's) runs through torch.ops, its neighbours
    in mlc kernels."""
    check(lambda x: scaled_cumsum(x.sin(), 0.5) + 1, make(4, 16))


def test_an_extern_result_nothing_reads_is_left_alone(check, make):
    """Only sort's indices are read: its values name no buffer and get no layout check (cuDNN
    attention returns None for a logsumexp it was not asked for, where tracing saw a tensor)."""
    from mlc.frontend.backend import compile_graph
    from torch.fx.experimental.proxy_tensor import make_fx

    def indices(x):
        return torch.sort(x, -1)[1] * 2

    x = make(4, 8)
    check(indices, x)
    source = compile_graph(make_fx(indices)(x), [x]).source
    assert "_, buf0 = aten.sort.default(" in source, source


def test_complex_scalar_arguments(check, device):
    """torch.polar multiplies by 1j (a complex scalar argument): the complex ops run as externs,
    the real math around them in mlc kernels."""
    a = torch.rand(37, device=device) + 0.5
    b = torch.rand(37, device=device) * 6
    check(lambda a, b: torch.polar(a.exp(), b * 2), a, b)
    check(lambda a: (a.to(torch.complex64) * (2 - 1j)).abs() + 1, a)


def test_numbers_read_out_of_results(compile, make):
    """`.item()` of a result is host work after mlc's kernels: a float (Dynamo wraps it in a
    float64 scalar_tensor), an index, a bool (Dynamo checks its range with `_assert_scalar`),
    next to tensor outputs."""
    x = make(37, 1000)

    def numbers(x):
        return x.sum().item(), x.argmax().item(), (x.amax() > 0).item(), x.amin(1) * 2

    with torch._dynamo.config.patch(capture_scalar_outputs=True):
        total, index, positive, mins = compile(numbers)(x)
    assert isinstance(total, float) and isinstance(index, int) and isinstance(positive, bool)
    assert total == pytest.approx(x.sum().item(), rel=1e-5)
    assert (index, positive) == (x.argmax().item(), (x.amax() > 0).item())
    torch.testing.assert_close(mins, x.amin(1) * 2)


def test_a_number_computed_with_is_a_clear_error(compile, make):
    """A tensor op on a number read out of a tensor is data-dependent: refused by name."""

    def data_dependent(x):
        return x + (x.sum() > 0).long().item()

    with (torch._dynamo.config.patch(capture_scalar_outputs=True),
          pytest.raises(Exception, match="MlcCompileError.*data-dependent values are not supported yet")):
        compile(data_dependent)(make(8))


@pytest.mark.parametrize("bias", [False, True], ids=["mm", "addmm"])
def test_mm_with_unaligned_sizes_is_padded(check_grad, make, monkeypatch, tmp_path, bias):
    """pad-mm: [250, 512] @ [512, 1023] in f32 (M and N not multiples of 4, compute bound): the
    operands (and an addmm's bias) are padded to 252 and 1024 for cuBLAS, the result sliced
    back; forward and backward (whose mms pad K as well) match eager."""
    monkeypatch.setenv("MLC_DUMP_DIR", str(tmp_path))
    x, w, b = make(250, 512, grad=True), make(1023, 512, grad=True), make(1023, grad=bias)
    check_grad(lambda x, w, b: torch.tanh(F.linear(x, w, b if bias else None)), x, w, b, atol=1e-4, rtol=1e-4)
    padded = [p for p in tmp_path.glob("graph_*/*-pad-mm.mlir") if "aten.constant_pad_nd" in p.read_text()]
    assert len(padded) == 2, sorted(str(p) for p in tmp_path.glob("graph_*/*-pad-mm.mlir"))  # forward and backward


def test_padded_mm_result_is_returned_padded(compile, make, monkeypatch, tmp_path):
    """pad-mm's sliced result is returned as the padded view (as Inductor, whose pad_mm rewrites
    the FX graph): no copy of the logits, in inference and in training. A training forward tells
    AOTAutograd the strides it returns (Inductor's `report_output_strides`), so the backward is
    compiled for the padded logits it is handed (GPT-2's LM head: 206 MB not copied)."""
    monkeypatch.setenv("MLC_DUMP_DIR", str(tmp_path))
    x, w = make(256, 1024, dtype=torch.bfloat16), make(1023, 1024, dtype=torch.bfloat16)
    t = torch.randint(0, 1023, (256,), device=x.device)

    def logits_and_loss(x, w):
        logits = F.linear(x, w)
        return logits, F.cross_entropy(logits.float(), t)

    with torch.no_grad():
        inferred, _ = compile(logits_and_loss)(x, w)
    torch.testing.assert_close(inferred, F.linear(x, w), atol=2e-2, rtol=2e-2)
    assert inferred.stride() == (1024, 1)
    results = []
    for fn in (compile(logits_and_loss), logits_and_loss):
        weight = w.clone().requires_grad_()
        logits, loss = fn(x, weight)
        (loss + logits.float().pow(2).mean()).backward()  # the logits' own gradient too
        results.append((logits, loss, weight.grad))
    torch.testing.assert_close(results[0], results[1], atol=2e-2, rtol=2e-2)
    assert results[0][0].stride() == (1024, 1)
    graphs = sorted(tmp_path.glob("graph_*_*ward"), key=lambda d: int(d.name.split("_")[1]))
    forward, backward = ((d / "module.py").read_text() for d in graphs[-2:])
    assert "(256, 1023), (1023, 1)" not in forward, forward  # no dense copy of the logits
    assert re.search(r"assert_size_stride\(\w+, \(256, 1023\), \(1024, 1\)\)", backward), backward
    assert "constant_pad_nd" in forward and "torch.mm(" in forward, forward  # the weight padded to 1024 rows


def test_linear_with_unaligned_outputs_writes_padded_rows(make, monkeypatch, tmp_path):
    """nn.Linears with 1023 outputs in bf16, without and with a bias (cuBLAS reads the weight
    rows 1024 apart), under pad-mm{result-only=true}: only the results' rows are unaligned, so
    pad-mm copies nothing and the mm and the addmm write their results into rows 1024 apart
    (`out=`), under dynamic shapes, where the row count is a symbol. Both row counts match
    eager; one graph serves both."""
    from mlc.passes.registry import DEFAULT_PIPELINE

    monkeypatch.setenv("MLC_DUMP_DIR", str(tmp_path))
    monkeypatch.setenv("MLC_PIPELINE", DEFAULT_PIPELINE.replace("pad-mm,", "pad-mm{result-only=true},"))
    heads = torch.nn.ModuleList([torch.nn.Linear(1024, 1023, bias=False), torch.nn.Linear(1024, 1023)])
    heads = heads.to(make(1).device, torch.bfloat16)  # a module's parameters: static sizes under dynamic=True

    def both(x):
        return [head(x).relu() for head in heads]

    compiled = torch.compile(both, backend="mlc", dynamic=True)
    with torch.no_grad():
        for rows in (256, 384):
            x = make(rows, 1024, dtype=torch.bfloat16)
            torch.testing.assert_close(compiled(x), both(x), atol=2e-2, rtol=2e-2)
    (module,) = [(d / "module.py").read_text() for d in tmp_path.glob("graph_*")]
    assert module.count("1023), (1024, 1), torch.bfloat16)") == 2 and module.count("out=") == 2, module
    assert "torch.mm(" in module and "torch.addmm(" in module and "constant_pad_nd" not in module, module


def test_tied_lm_head_gradient_is_written_padded(check_grad, make, monkeypatch, tmp_path):
    """GPT-2's LM head in training: the embedding's weight [V, D] is also the head's, and V = 1023
    is padded for cuBLAS. The backward writes the logits' gradient (log_softmax's backward)
    straight into the padded buffer both mms read, not into a buffer a second kernel pads, and
    no pad is a transposed 2-D copy (a tied weight reaching an mm as `t().t()` is padded in its
    own order: lit pad-mm/pad.mlir). Forward and backward match eager."""
    monkeypatch.setenv("MLC_DUMP_DIR", str(tmp_path))
    ids, w = torch.randint(0, 1023, (250,), device=make(1).device), make(1023, 512, grad=True)

    def lm_loss(w):
        logits = F.linear(torch.tanh(F.embedding(ids, w)), w)
        return F.cross_entropy(logits, ids.roll(1))

    check_grad(lm_loss, w, atol=1e-4, rtol=1e-4)
    (backward,) = [(d / "module.py").read_text() for d in tmp_path.glob("graph_*_backward")]
    pads = re.findall(r"def (triton_\w*constant_pad_nd\w*)\((.*)\)", backward)
    assert [name for name, _ in pads if "log_softmax_backward" in name], pads
    assert all("ynumel" not in params for _, params in pads), pads  # no 2-D (transposing) pad


def test_bf16_loss_head_saves_logits_not_log_softmax(check_grad, make, monkeypatch, tmp_path):
    """BERT's loss head: cross_entropy over bf16 logits, rows of 5,003 classes (looped), some
    targets ignored. With nll_loss_forward decomposed (as Inductor's table does), AOTAutograd's
    partitioner saves the logits and each row's max and log-sum-exp, and the backward recomputes
    the log-softmax as it reads the logits: the forward writes no [rows, classes] tensor (kept
    whole, the op made it save a bf16 log-softmax the forward wrote only for the backward).
    Forward and backward match eager."""
    monkeypatch.setenv("MLC_DUMP_DIR", str(tmp_path))
    h, w = make(128, 64, dtype=torch.bfloat16, grad=True), make(5003, 64, dtype=torch.bfloat16, grad=True)
    target = torch.randint(0, 5003, (128,), device=h.device)
    target[::7] = -100

    check_grad(lambda h, w: F.cross_entropy(h @ w.t(), target), h, w, atol=5e-2, rtol=2e-2)
    (forward,) = [(d / "module.py").read_text() for d in tmp_path.glob("graph_*_forward")]
    stores = re.findall(r"tl\.store\((\w+) \+ \((.*?)\),", forward)
    assert stores and not [s for s in stores if "r0_" in s[1]], stores  # per-row values only


def test_attention_probabilities_are_stored_once(check_grad, make, monkeypatch, tmp_path):
    """Hand-written attention in training (BERT's under math SDPA): the probabilities feed the
    bmm through an expand and a view, and the backward saves them. One buffer holds them, which
    the bmm and the backward read as views: the softmax kernel stores them once, not twice."""
    monkeypatch.setenv("MLC_DUMP_DIR", str(tmp_path))
    q, k, v = (make(2, 3, 40, 16, grad=True) for _ in range(3))
    mask = torch.where(make(40, 40) > 0, 0.0, float("-inf"))

    def attention(q, k, v):
        return torch.softmax(q @ k.transpose(-2, -1) * 0.25 + mask, dim=-1) @ v

    check_grad(attention, q, k, v, atol=1e-4, rtol=1e-4)
    (forward,) = [(d / "module.py").read_text() for d in tmp_path.glob("graph_*_forward")]
    kernels = re.split(r"\n(?=@triton.jit)", forward)
    (softmax,) = [kernel for kernel in kernels if re.search(r"def triton_\w*softmax", kernel)]
    assert softmax.count("tl.store(") == 1, softmax


def test_a_mask_built_per_layer_is_stored_once(check, make):
    """HF's per-layer attention mask: the same where(mask, x, -1) before each layer's extern.
    cse-aten computes it once, so it is stored once for both calls (not twice)."""
    from mlc.frontend.backend import compile_graph
    from torch.fx.experimental.proxy_tensor import make_fx

    def layers(x, m, w1, w2):
        y1 = torch.where(m, x, torch.full((), -1.0, device=x.device)) @ w1
        y2 = torch.where(m, x, torch.full((), -1.0, device=x.device)) @ w2
        return y1.sin(), y2.cos()

    args = (make(37, 24), make(37, 24) > 0, make(24, 16), make(24, 16))
    check(layers, *args)
    source = compile_graph(make_fx(layers)(*args), list(args)).source
    assert source.count("tl.store(") == 3, source  # the mask once, then sin and cos
    assert len(re.findall(r"= torch\.mm\(buf0, ", source)) == 2, source


def test_equal_outputs_stay_separate_tensors(compile, make):
    """Two outputs computed alike are two tensors, as in eager: writing one leaves the other."""
    x = make(8, 16)
    a, b = compile(lambda x: (x * 2, x * 2))(x)
    assert a.data_ptr() != b.data_ptr()
    a.add_(1)
    torch.testing.assert_close(b, x * 2)
