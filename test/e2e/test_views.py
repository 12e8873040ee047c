"""Views (re-indexing, never copies in mlc's IR), broadcasting and concatenation, against eager."""

from __future__ import annotations

import pytest
import torch

VIEWS = [
    ("view", lambda x: x.view(4, 2, 64) * 2),
    ("reshape", lambda x: x.reshape(64, 8) + 1),
    ("permute", lambda x: x.view(8, 8, 8).permute(2, 0, 1) * 3),
    ("transpose", lambda x: x.t().contiguous() - 1),
    ("transpose_mix", lambda x: x + x.view(64, 8).t().reshape(8, 64)),
    ("expand", lambda x: x[:, :1].expand(8, 64) + x),
    ("squeeze_unsqueeze", lambda x: x.unsqueeze(1).unsqueeze(0).squeeze(0) * x.unsqueeze(1)),
    ("slice_step", lambda x: x[1::2, 3:50:3] * 2),
    ("select", lambda x: x.select(1, 5).unsqueeze(1) + x[3]),
    ("narrow_negative_index", lambda x: x[-3:, -10:] + 1),
    ("flip", lambda x: torch.flip(x, [0, 1]) + x),
    ("cat", lambda x: torch.cat([x, x * 2, x[:, :5]], dim=1)),
    ("cat_dim0", lambda x: torch.cat([x[:3], x.sin()], dim=0)),
    ("view_output", lambda x: (x * 2).view(64, 8)),
]


@pytest.mark.parametrize("fn", [pytest.param(f, id=n) for n, f in VIEWS])
def test_view(check, make, fn):
    check(fn, make(8, 64))


def test_non_contiguous_input(check, make):
    x = make(64, 8).t()  # 8x64 with strides (1, 8)
    check(lambda x: x * 2 + 1, x)


def test_input_starting_inside_its_storage(check, make):
    """`base[1:]` is contiguous but starts 64 elements into its storage: the transposed view
    that the extern mm reads (and the returned view) count from the input's first element."""
    x = make(9, 64)[1:]
    w = make(8, 16)
    check(lambda x, w: ((x.t() @ w).sin(), x.t()[2:] * 1), x, w)


def test_output_aliases_input(check, make):
    """An output that is a view of an input (AOTAutograd regenerates the alias)."""
    x = make(8, 64)
    check(lambda x: (x.view(64, 8), x + 1), x)


SCATTERS = [
    ("slice_scatter", lambda x, s: torch.slice_scatter(x, s, dim=1, start=5, end=45) * 2, (8, 64), (8, 40)),
    ("slice_scatter_step_from_end", lambda x, s: torch.slice_scatter(x, s, 1, -20, None, 3), (8, 64), (8, 7)),
    ("slice_scatter_whole_dim", lambda x, s: torch.slice_scatter(x, s, 0) + x, (8, 64), (8, 64)),
    ("select_scatter_from_end", lambda x, s: torch.select_scatter(x.sin(), s, 0, -2), (8, 64), (64,)),
]


@pytest.mark.parametrize("fn, xs, ss", [pytest.param(f, a, b, id=n) for n, f, a, b in SCATTERS])
def test_scatter_into_a_slice(check, make, fn, xs, ss):
    check(fn, make(*xs), make(*ss))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_slice_backward_is_a_select_in_the_gradient_kernel(check_grad, make, monkeypatch, tmp_path, dtype):
    """rotate_half (Llama's rotary embedding) at odd sizes: the backward's slice_backward
    (zeros, then slice_scatter, per half) lowers to selects that fuse into the one kernel that
    writes x's gradient: no extern slice_scatter, no fill."""
    monkeypatch.setenv("MLC_DUMP_DIR", str(tmp_path))

    def rope(x, cos, sin):
        half = x.shape[-1] // 2
        return x * cos + torch.cat([-x[..., half:], x[..., :half]], -1) * sin

    tol = {"atol": 3e-2, "rtol": 2e-2} if dtype == torch.bfloat16 else {}  # an ulp or two of values up to 2
    x, cos, sin = (make(*shape, dtype=dtype, low=-1.0, high=1.0) for shape in [(2, 3, 37, 66), (37, 66), (37, 66)])
    check_grad(rope, x.requires_grad_(), cos, sin, **tol)
    [dumped] = tmp_path.glob("graph_*_backward/module.py")
    backward = dumped.read_text()
    assert "slice_scatter" not in backward and backward.count("    launch(") == 1, backward


@pytest.mark.parametrize("batch, seq, kv_heads, head_dim, dtype", [
    (4, 37, 2, 24, torch.float32),  # odd sizes: 1-D tiles
    (2, 128, 4, 64, torch.bfloat16),  # 2-D tiles
])
def test_rotary_backward_fuses_into_its_transposed_copy(check_grad, make, monkeypatch, tmp_path, batch, seq,
                                                        kv_heads, head_dim, dtype):
    """Llama's keys: projection, [B, S, H, D] -> [B, H, S, D], rotary, each head repeated for
    two query heads, attention. In the backward the rotary's gradient sums the two heads' (more
    reads than a consumer inlines, so it is stored, [B, H, S, D]) and is copied to [B, S, H, D]
    for the projection's matmul. Most of its accesses walk [B, S, H, D], so --reorder-loops runs
    it in the copy's order and the two are one kernel, which stores only the copy."""
    monkeypatch.setenv("MLC_DUMP_DIR", str(tmp_path))
    hidden = kv_heads * head_dim

    def attention(x, w, cos, sin, q, v):
        k = (x @ w.t()).view(batch, seq, kv_heads, head_dim).transpose(1, 2)
        half = head_dim // 2
        k = k * cos + torch.cat([-k[..., half:], k[..., :half]], -1) * sin
        k = k[:, :, None].expand(batch, kv_heads, 2, seq, head_dim).reshape(batch, -1, seq, head_dim)
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)

    x = make(batch, seq, hidden, dtype=dtype, low=-1.0, high=1.0).requires_grad_()
    w = make(hidden, hidden, dtype=dtype, low=-0.2, high=0.2).requires_grad_()
    cos, sin = (make(seq, head_dim, dtype=dtype, low=-1.0, high=1.0) for _ in range(2))
    q, v = (make(batch, seq, 2 * kv_heads, head_dim, dtype=dtype, low=-1.0, high=1.0).transpose(1, 2) for _ in range(2))
    tol = {"atol": 5e-2, "rtol": 2e-2} if dtype == torch.bfloat16 else {"atol": 1e-4, "rtol": 1e-4}
    check_grad(attention, x, w, cos, sin, q, v, **tol)
    [module] = tmp_path.glob("graph_*_backward/module.py")
    assert module.read_text().count("    launch(") == 1, module.read_text()


def test_stored_sum_reruns_in_its_transposed_readers_order(check, make, monkeypatch, tmp_path):
    """A stored sum of nine slices (more reads than a consumer inlines: its own accesses keep
    its order) read transposed by a product whose store and other load walk the other way:
    --fuse re-runs the sum over the product's loops, one kernel that stores only the product."""
    monkeypatch.setenv("MLC_DUMP_DIR", str(tmp_path))

    def f(x, y):
        w = sum(x[:, k:k + 40] for k in range(9))
        return y * w.t()

    check(f, make(67, 48), make(40, 67), atol=1e-4, rtol=1e-4)
    [graph] = tmp_path.glob("graph_*")
    assert "to run in the order its reader reads it" in (graph / "fusion.txt").read_text()
    assert (graph / "module.py").read_text().count("    launch(") == 1


def test_transposed_read_in_a_reduction_prologue(check, make, monkeypatch, tmp_path):
    """A stored sum of nine slices (more reads than a consumer inlines), read transposed by a
    product that is both returned and summed over its rows: the sum re-runs over the product's
    loops, split into the reduction's rows and columns, and the three share one kernel."""
    monkeypatch.setenv("MLC_DUMP_DIR", str(tmp_path))

    def f(x, y):
        w = sum(x[:, k:k + 40] for k in range(9))
        p = w.t() * y
        return p, p.sum(-1)

    check(f, make(64, 48), make(40, 64), atol=1e-4, rtol=1e-4)
    [module] = tmp_path.glob("graph_*/module.py")
    assert module.read_text().count("    launch(") == 1, module.read_text()


def test_strided_slice_backward(check_grad, make):
    check_grad(lambda x: x[:, 1::3].sin() + x[:, -5:].sum(), make(5, 67, grad=True))


BROADCASTS = [
    ("row", lambda x, b: x + b, (8, 64), (64,)),
    ("column", lambda x, b: x * b, (8, 64), (8, 1)),
    ("outer", lambda x, b: x - b, (8, 1, 64), (1, 4, 64)),
    ("scalar_tensor", lambda x, b: x / b, (8, 64), ()),
]


@pytest.mark.parametrize("fn, xs, bs", [pytest.param(f, a, b, id=n) for n, f, a, b in BROADCASTS])
def test_broadcast(check, make, fn, xs, bs):
    check(fn, make(*xs), make(*bs, low=0.5, high=2.0))


@pytest.mark.parametrize("m, n", [(64, 48), (67, 45)])
def test_transposed_add_2d_tiles(check, make, m, n):
    """Large enough for a 2-D (y, x) tiled kernel: x.t() is read unit-stride along y."""
    check(lambda x, y: x.t() + y, make(n, m), make(m, n))


def test_permute_3d_2d_tiles(check, make):
    check(lambda x: x.permute(2, 0, 1) * 2, make(33, 40, 35))


def _storage_groups(outputs, inputs=()):
    """Which outputs share storage with which (and with an input): eager's aliasing, as data."""
    ptr = [t.untyped_storage().data_ptr() for t in outputs]
    inputs = {t.untyped_storage().data_ptr() for t in inputs}
    return [([j for j, q in enumerate(ptr) if q == p], p in inputs) for p in ptr]


ALIASING = [
    # Views of one intermediate are views of one buffer; the expand keeps its 0 stride.
    ("views_of_one_value", lambda x: ((y := x * 2 + 1).t(), y[:, ::2], y.unsqueeze(0).expand(3, -1, -1))),
    ("value_and_view", lambda x: ((y := x.exp()), y[1:], y.view(24))),
    # One load, but a new tensor in eager: never the input or another output.
    ("clone_of_input", lambda x: (x.clone(),)),
    ("input_and_clone", lambda x: (x, x.clone())),
    ("amax_of_0d", lambda x: ((t := x.sum() * 3).amax(0, keepdim=True), t)),
    # Free to recompute, stored all the same where returned views read it (mlc-fuzz seeds 1139, 501).
    ("views_of_a_full", lambda x: ((y := torch.full_like(x, 0.5) * 2), y.t(), y[:, ::2], y.unsqueeze(0).expand(3, -1, -1))),
    ("views_of_a_one_element_prod", lambda x: ((t := x[:1].prod(0)), t[::2], t.unsqueeze(0).expand(3, -1))),
]


@pytest.mark.parametrize("fn", [pytest.param(f, id=n) for n, f in ALIASING])
def test_outputs_alias_as_in_eager(compile, make, fn):
    x = make(4, 6)
    expected, actual = fn(x), compile(fn)(x)
    torch.testing.assert_close(actual, expected)
    assert _storage_groups(actual, [x]) == _storage_groups(expected, [x])
    assert [t.stride() for t in actual] == [t.stride() for t in expected]
