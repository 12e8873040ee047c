"""Reductions, normalizations and losses through torch.compile(backend="mlc"), against eager.

Every program reduces: sums, products, extremes with their indices, any/all, means,
variances over rows, columns, several dims, every dim, with keepdim, in f32, f16, bf16,
integers and bools; rows of 20,000+ elements; Inductor's special cases (no element, one
element, a few elements); softmax, layer/rms/batch/group norm, cross_entropy and nll_loss
with ignore_index and each reduction mode, logsumexp, normalize; and backward passes of
softmax, log_softmax, layer_norm and cross_entropy. None of them may leave an extern call in
the compiled graph (see `test_no_extern_calls`).
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from mlc.dialects.loops import ExternOp


def ties(*shape: int, device: torch.device) -> torch.Tensor:
    """Small integers as floats: rows with repeated maxima and minima (argmax must take the first)."""
    g = torch.Generator().manual_seed(3)
    return torch.randint(0, 3, shape, generator=g).float().to(device)


# name, fn, shapes (or (shape, dtype, low, high) tuples)
F32 = torch.float32
REDUCTIONS = [
    # dims, keepdim, all dims, columns
    ("sum_rows", lambda x: x.sum(1), [(8, 64)]),
    ("sum_columns", lambda x: x.sum(0), [(64, 8)]),
    ("sum_keepdim", lambda x: x.sum(-1, keepdim=True) + x.sum(0, keepdim=True), [(8, 64)]),
    ("sum_all", lambda x: x.sum(), [(8, 64)]),
    ("sum_dims_any_order", lambda x: (x.sum((2, 0)), x.sum((-1, 1), keepdim=True)), [(4, 8, 16)]),
    ("sum_middle_dim", lambda x: x.sum(1), [(4, 33, 16)]),
    ("sum_rows_of_20000", lambda x: x.sum(1), [(4, 20000)]),
    ("sum_columns_of_20000", lambda x: x.sum(0), [(20000, 4)]),
    ("sum_all_of_20000", lambda x: x.sum(), [(20000,)]),
    # OUTER reductions: persistent up to 64 rows, looped past; split into partials stored
    # column-innermost (odd column counts, a piece that does not divide the rows)
    ("sum_columns_of_64", lambda x: x.sum(0), [(64, 300)]),
    ("sum_columns_of_65", lambda x: x.sum(0), [(65, 300)]),
    ("sum_columns_split", lambda x: (x.sum(0), x.amax(0)), [(6000, 37)]),
    ("sum_columns_split_bf16", lambda x: x.sum(0), [((3001, 96), torch.bfloat16, -1, 1)]),
    ("sum_channels_nchw", lambda x: x.sum((0, 2, 3)), [(8, 6, 30, 30)]),
    # split welford (pieces that tile the reduction), and one that cannot be split evenly
    ("var_mean_channels_split", lambda x: torch.var_mean(x, dim=(0, 2, 3)), [(16, 6, 40, 40)]),
    # pieces of 7168 = 7 * 1024 rows: R0_BLOCK 1024 divides them, nothing is masked
    ("var_mean_channels_split_unmasked", lambda x: torch.var_mean(x * 2 + 3, dim=(0, 2, 3)), [(16, 4, 56, 56)]),
    ("sum_rows_of_1536_unmasked", lambda x: (x.sum(1), x.amax(1)), [(5, 1536)]),
    ("var_rows_split", lambda x: (x.var(1, correction=0), x.std(1)), [(3, 50000)]),
    ("var_mean_offset_split", lambda x: torch.var_mean(x * 0.1 + 1000.0, 1), [(2, 60000)]),
    ("var_mean_prime_rows", lambda x: torch.var_mean(x, 1), [(3, 50021)]),
    ("var_mean_split_bf16", lambda x: torch.var_mean(x, 1), [((2, 60000), torch.bfloat16, -1, 1)]),
    ("sum_dtype_arg", lambda x: x.sum(1, dtype=torch.float64), [(8, 64)]),
    ("prod_rows", lambda x: x.prod(1), [((8, 16), F32, 0.5, 1.5)]),
    ("prod_all", lambda x: x.prod(), [((4, 16), F32, 0.8, 1.2)]),
    ("amax_amin", lambda x: (x.amax(1), x.amin(0), x.amax((0, 1))), [(8, 64)]),
    ("max_min_dim", lambda x: (x.max(1), x.min(0)), [(8, 64)]),
    ("max_dim_keepdim", lambda x: x.max(-1, keepdim=True).values - x, [(8, 64)]),
    ("max_min_full", lambda x: (x.max(), x.min()), [(8, 64)]),
    ("argmax_argmin", lambda x: (x.argmax(1), x.argmin(0), x.argmax(-1, keepdim=True)), [(8, 64)]),
    ("argmax_flat", lambda x: (x.argmax(), x.argmin()), [(8, 64)]),
    ("argmax_rows_of_20000", lambda x: (x.argmax(1), x.amax(1)), [(3, 20000)]),
    ("any_all_dims", lambda x: (x.any(1), x.all(0), x.any(), x.all(), x.any(0, keepdim=True)), [((8, 64), torch.bool, 0, 1)]),
    ("any_all_of_floats", lambda x: ((x > 2.5).any(1), (x > -2.9).all(1)), [(8, 64)]),
    ("mean", lambda x: (x.mean(1), x.mean(0), x.mean(), x.mean((0, 2), keepdim=True)), [(4, 8, 16)]),
    ("var_std_corrections", lambda x: (x.var(1), x.var(1, correction=0), x.std(0), x.std(1, correction=2)), [(8, 64)]),
    ("var_mean", lambda x: torch.var_mean(x, 1), [(8, 64)]),
    ("var_mean_dims_keepdim", lambda x: torch.var_mean(x, (0, 2), keepdim=True, correction=0), [(4, 8, 16)]),
    ("var_all_dims", lambda x: (x.var(), torch.var_mean(x)), [(8, 64)]),
    ("var_mean_rows_of_20000", lambda x: torch.var_mean(x, 1), [(2, 20000)]),
    # Inductor's special cases
    ("no_elements", lambda x: (x.sum(1), x.prod(1), x.mean(1), x.any(1)), [(8, 0)]),
    ("one_element", lambda x: (x.sum(1), x.amax(1), x.argmax(1), x.var(1, correction=0)), [(8, 1)]),
    ("few_elements_unrolled", lambda x: (x.sum(1), x.argmax(1), x.var(1), x.max(1)), [(8, 5)]),
    # fusion with producers and consumers
    ("producer_and_epilogue", lambda x, y: ((x * y).sum(1) / 3 + 1, (x - y).abs().amax(0)), [(8, 64), (8, 64)]),
]

DTYPES = [
    ("sum_int32_to_int64", lambda x: (x.sum(1), x.sum()), [((8, 64), torch.int32, -100, 100)]),
    ("sum_bool_to_int64", lambda x: (x.sum(1), x.sum(0)), [((8, 64), torch.bool, 0, 1)]),
    ("sum_mean_f16", lambda x: (x.sum(1), x.mean(0)), [((8, 256), torch.float16, -1, 1)]),
    ("sum_mean_bf16", lambda x: (x.sum(1), x.mean(0)), [((8, 64), torch.bfloat16, -1, 1)]),
    ("var_f16", lambda x: (x.var(1), torch.var_mean(x, 0)), [((8, 256), torch.float16, -1, 1)]),
    ("amax_argmax_int", lambda x: (x.amax(1), x.argmax(1), x.min(0)), [((8, 64), torch.int64, -1000, 1000)]),
    ("amax_argmax_uint8", lambda x: (x.amax(1), x.argmax(1), x.amin(0)), [((8, 64), torch.uint8, 0, 255)]),
]


def _inputs(make, shapes):
    out = []
    for s in shapes:
        if isinstance(s[0], tuple):
            shape, dtype, low, high = s
            out.append(make(*shape, dtype=dtype, low=low, high=high))
        else:
            out.append(make(*s))
    return out


@pytest.mark.parametrize("fn, shapes", [pytest.param(f, s, id=n) for n, f, s in REDUCTIONS + DTYPES])
def test_reduction(check, make, fn, shapes):
    half = any(isinstance(s[0], tuple) and s[1] in (torch.float16, torch.bfloat16) for s in shapes)
    # Sums of many float32 elements in another order than ATen's differ in the last bits.
    check(fn, *_inputs(make, shapes), **({} if half else {"atol": 1e-4, "rtol": 1e-4}))


def test_argmax_ties_take_the_first_index(check, device):
    x = ties(8, 64, device=device)
    check(lambda x: (x.argmax(1), x.argmin(1), x.max(1).indices, x.argmax(0), x.argmax()), x)


def test_argmax_ties_unrolled(check, device):
    x = ties(8, 5, device=device)
    check(lambda x: (x.argmax(1), x.min(1).indices), x)


# -- normalizations and losses ----------------------------------------------------------------

NORMS = [
    ("softmax", lambda x: x.softmax(-1), [(8, 64)]),
    ("softmax_columns", lambda x: x.softmax(0), [(64, 8)]),
    ("log_softmax", lambda x: x.log_softmax(1), [(8, 64)]),
    ("softmax_rows_of_20000", lambda x: x.softmax(-1), [(2, 20000)]),
    ("softmax_f16", lambda x: x.softmax(-1), [((8, 64), torch.float16, -3, 3)]),
    ("layer_norm", lambda x, w, b: F.layer_norm(x, (64,), w, b), [(8, 64), (64,), (64,)]),
    ("layer_norm_two_dims", lambda x: F.layer_norm(x, (8, 16)), [(4, 8, 16)]),
    ("rms_norm", lambda x, w: F.rms_norm(x, (64,), w, eps=1e-6), [(8, 64), (64,)]),
    ("rms_norm_by_hand", lambda x, w: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w, [(8, 64), (64,)]),
    ("group_norm", lambda x, w, b: F.group_norm(x, 4, w, b), [(2, 8, 4, 4), (8,), (8,)]),
    ("logsumexp", lambda x: (torch.logsumexp(x, 1), torch.logsumexp(x, 0, keepdim=True)), [(8, 64)]),
    ("normalize", lambda x: F.normalize(x, dim=1), [(8, 64)]),
]


@pytest.mark.parametrize("fn, shapes", [pytest.param(f, s, id=n) for n, f, s in NORMS])
def test_norm(check, make, fn, shapes):
    check(fn, *_inputs(make, shapes))


def test_layer_norm_f16(check, make):
    x, w, b = (make(*s, dtype=torch.float16, low=-2, high=2) for s in [(8, 64), (64,), (64,)])
    check(lambda x, w, b: F.layer_norm(x, (64,), w, b), x, w, b)


def test_batch_norm_eval(check, make):
    x, w, b = make(4, 8, 5, 5), make(8), make(8)
    mean, var = make(8), make(8, low=0.5, high=2.0)
    check(lambda x, w, b, m, v: F.batch_norm(x, m, v, w, b, training=False), x, w, b, mean, var)


def test_batch_norm_training_updates_running_stats(compile, make):
    x, w, b = make(4, 8, 5, 5), make(8), make(8)
    mean, var = make(8), make(8, low=0.5, high=2.0)
    fn = lambda x, w, b, m, v: F.batch_norm(x, m, v, w, b, training=True, momentum=0.2)  # noqa: E731
    m_eager, v_eager = mean.clone(), var.clone()
    expected = fn(x, w, b, m_eager, v_eager)
    actual = compile(fn)(x, w, b, mean, var)
    torch.testing.assert_close(actual, expected, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(mean, m_eager, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(var, v_eager, atol=1e-5, rtol=1e-5)


def _target(make, n, classes, ignore=None):
    t = make(n, dtype=torch.int64, low=0, high=classes - 1)
    if ignore is not None:
        t[::3] = ignore
    return t


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy(check, make, reduction):
    x, t = make(16, 10), _target(make, 16, 10)
    check(lambda x, t: F.cross_entropy(x, t, reduction=reduction), x, t)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_ignore_index_and_weight(check, make, reduction):
    x, t, w = make(16, 10), _target(make, 16, 10, ignore=-100), make(10, low=0.1, high=2.0)
    check(lambda x, t, w: F.cross_entropy(x, t, weight=w, ignore_index=-100, reduction=reduction), x, t, w)


def test_cross_entropy_ignore_index_is_a_class(check, make):
    x, t = make(16, 10), _target(make, 16, 10, ignore=4)
    check(lambda x, t: F.cross_entropy(x, t, ignore_index=4), x, t)


def test_cross_entropy_many_classes(check, make):
    x, t = make(4, 32000), _target(make, 4, 32000)
    check(lambda x, t: F.cross_entropy(x, t), x, t, atol=1e-4, rtol=1e-4)


def test_nll_loss(check, make):
    x, t = make(16, 10), _target(make, 16, 10, ignore=-100)
    check(lambda x, t: (F.nll_loss(x.log_softmax(1), t), F.nll_loss(x, t, reduction="none")), x, t)


# -- backward ---------------------------------------------------------------------------------


def test_softmax_backward(check_grad, make):
    check_grad(lambda x: x.softmax(-1) * torch.arange(64, device=x.device), make(8, 64, grad=True))


def test_log_softmax_backward(check_grad, make):
    check_grad(lambda x: x.log_softmax(1) * torch.arange(64, device=x.device), make(8, 64, grad=True))


def test_layer_norm_backward(check_grad, make):
    x, w, b = make(8, 64, grad=True), make(64, grad=True), make(64, grad=True)
    check_grad(lambda x, w, b: F.layer_norm(x, (64,), w, b) ** 2, x, w, b, atol=1e-4, rtol=1e-4)


def test_cross_entropy_backward(check_grad, make):
    x, t = make(16, 10, grad=True), _target(make, 16, 10, ignore=-100)
    check_grad(lambda x, t: F.cross_entropy(x, t), x, t)


def test_cross_entropy_backward_weight_sum(check_grad, make):
    x, t, w = make(16, 10, grad=True), _target(make, 16, 10, ignore=2), make(10, low=0.1, high=2.0)
    check_grad(lambda x, t, w: F.cross_entropy(x, t, weight=w, ignore_index=2, reduction="sum"), x, t, w)


def test_rms_norm_backward(check_grad, make):
    x, w = make(8, 64, grad=True), make(64, grad=True)
    check_grad(lambda x, w: F.rms_norm(x, (64,), w, eps=1e-6), x, w, atol=1e-4, rtol=1e-4)


def test_var_mean_backward(check_grad, make):
    check_grad(lambda x: torch.var_mean(x, 1), make(8, 64, grad=True))


# -- split reductions (issue 8: the split kernels indexed `(r0_0 + 8000*x0 // 1000)`) --------


def test_split_reduction_of_a_broadcast_difference(check, make):
    """32 rows of 1000: the full sum is split, and its first kernel reads `FloorDiv(r + k*x, 1000)`."""
    check(lambda x: (x - x.amax(-1, keepdim=True)).sum(), make(32, 1000), atol=1e-2, rtol=1e-5)


@pytest.mark.parametrize("classes", [512, 1000])
def test_cross_entropy_backward_split(check_grad, make, classes):
    x, t = make(32, classes, grad=True), _target(make, 32, classes, ignore=-100)
    check_grad(lambda x, t: F.cross_entropy(x, t), x, t, atol=1e-5, rtol=1e-4)


# -- nothing goes to aten -----------------------------------------------------------------------


def test_no_extern_calls(make, monkeypatch):
    """The graphs of a softmax/layer_norm/cross_entropy training step lower with no extern."""
    from mlc.frontend import backend
    from mlc.passes.lower_aten import LowerAtenPass

    seen: list[str] = []
    original = backend.run_pipeline

    def spy(module, spec, *args, **kwargs):
        from mlc.dialects.registry import make_context

        probe = module.clone()
        LowerAtenPass().apply(make_context(), probe)
        seen.extend(op.overload.data for op in probe.walk() if isinstance(op, ExternOp))
        return original(module, spec, *args, **kwargs)

    monkeypatch.setattr(backend, "run_pipeline", spy)
    x, w, t = make(8, 64, grad=True), make(64, grad=True), _target(make, 8, 64, ignore=-100)

    def fn(x, w, t):
        h = F.layer_norm(x, (64,), w).softmax(-1)
        return F.cross_entropy(h, t) + torch.var_mean(x, 0)[0].sum()

    torch.compile(fn, backend="mlc", fullgraph=True, dynamic=False)(x, w, t).backward()
    assert not seen, seen


def _online_softmax_kernels(source: str) -> int:
    return source.count("triton_helpers.online_softmax(")


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "logsumexp"])
def test_online_softmax_looped_rows(check, make, name):
    """Rows of 2,000 (looped, not split): one loop finds the max and the rescaled sum of exp
    (--online-softmax), with rows that are all -inf, start with -inf, hold +inf or NaN."""
    fn = {"softmax": lambda x: x.softmax(-1), "log_softmax": lambda x: x.log_softmax(-1),
          "logsumexp": lambda x: torch.logsumexp(x, -1)}[name]
    x = make(9, 2000, low=-20, high=20)
    x[0] = float("-inf")
    x[1, :700] = float("-inf")
    x[2, 1999] = float("inf")
    x[3, 5] = float("nan")
    check(fn, x)


def test_online_softmax_is_chosen_for_a_looped_kernel(make):
    from torch.fx.experimental.proxy_tensor import make_fx

    from mlc.frontend.backend import compile_graph

    x = make(9, 2000)
    assert _online_softmax_kernels(compile_graph(make_fx(lambda x: x.softmax(-1))(x), [x]).source) == 1
    small = make(9, 64)  # persistent: the row is read once either way
    assert _online_softmax_kernels(compile_graph(make_fx(lambda x: x.softmax(-1))(small), [small]).source) == 0


def test_online_softmax_f16_and_cross_entropy_backward(check, check_grad, make, device):
    check(lambda x: x.log_softmax(-1), make(7, 3000, dtype=torch.float16, low=-8, high=8))
    t = torch.randint(0, 3000, (7,), device=device)
    check_grad(lambda x: F.cross_entropy(x * 3, t), make(7, 3000, grad=True))
