"""Indirect indexing (loads and stores whose index is a loaded value) against eager.

Advanced indexing (`aten.index.Tensor`: several index tensors, broadcast, negative), index_select,
gather and take_along_dim, embedding and its backward (`embedding_dense_backward`, repeated
ids), cross_entropy (`nll_loss_forward/backward`), and the stores: scatter, scatter_add,
index_add, index_put (accumulate with repeated indices; without, unique ones). Then fusion with
the elementwise work around them, a check that none of them is left as an extern call, and
out-of-range indices caught by `MLC_DEBUG=1`. Shapes cross the kernels' thresholds (odd sizes,
1000x300, 4096 rows, 2,000 classes in a looped reduction); the largest cross_entropy shapes run
on a GPU only. Index tensors are int64 and int32 (torch takes both, except take_along_dim).

Gradients: `check_grad` backpropagates ones, which cannot tell which source element went where;
so the backward cases square their result (the gradient is then 2 * out, a different value per
element).
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import pytest
import torch
import torch.nn.functional as F

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
INTERPRETED = not torch.cuda.is_available()  # as conftest: Triton's interpreter on CPU tensors
# Reduction kernels under the interpreter cost ~20-250 ms a row: the largest shapes only on a GPU.
GPU_ONLY = pytest.mark.skipif(INTERPRETED, reason="too slow under Triton's interpreter")


@pytest.fixture(autouse=True)
def _fresh_dynamo() -> None:
    """Each test compiles afresh: the backward cases share one wrapper (`_squared`), whose code
    Dynamo would otherwise recompile past its limit; and the tests that set MLC_DUMP_DIR or
    MLC_DEBUG need a compile that reads them."""
    torch._dynamo.reset()


INDEX_DTYPES = [pytest.param(torch.int64, id="int64"), pytest.param(torch.int32, id="int32")]


def _index(make, shape, size, dtype=torch.int64, negative=False):
    """Random indices into a dim of `size`: 0 (twice: a repeated index) and size - 1 always
    present, and -1 and -size when `negative`."""
    i = make(*shape, dtype=dtype, low=-size if negative else 0, high=size - 1)
    pins = [0, size - 1, 0] + ([-1, -size] if negative else [])
    n = min(len(pins), i.numel())
    i.view(-1)[:n] = torch.tensor(pins[:n], dtype=dtype)
    return i


def _unique(rows, size, k, dtype=torch.int64):
    """k distinct indices into `size` in each of `rows` rows (scatter with repeats is racy)."""
    return torch.rand(rows, size, device=DEVICE).argsort(1)[:, :k].to(dtype)


def _squared(fn):
    return lambda *args: fn(*args).square()


# -- loads: x[i, j], index_select, gather, take_along_dim ------------------------------------

# name, fn, x's shape, the index tensors as (shape, size of the dim they index), negatives allowed
LOADS = [
    ("rows", lambda x, i: x[i], (37, 129), [((20,), 37)], True),
    ("rows_2d_index", lambda x, i: x[i], (37, 129), [((6, 9), 37)], True),
    ("columns", lambda x, i: x[:, i], (37, 129), [((50,), 129)], True),
    ("points_ij", lambda x, i, j: x[i, j], (37, 129), [((50,), 37), ((50,), 129)], True),
    ("broadcast_ij", lambda x, i, j: x[i, j], (37, 129), [((4, 1), 37), ((1, 5), 129)], True),
    ("non_adjacent_i_j", lambda x, i, j: x[i, :, j], (6, 7, 8), [((4, 1), 6), ((1, 5), 8)], True),
    ("inner_i_j", lambda x, i, j: x[:, i, j], (6, 7, 8), [((4, 1), 7), ((1, 5), 8)], True),
    ("three_ijk", lambda x, i, j, k: x[i, j, k], (6, 7, 8), [((10,), 6), ((10,), 7), ((1,), 8)], True),
    ("index_and_strided_slice", lambda x, i: x[i, 3:60:2], (37, 129), [((20,), 37)], True),
    ("rows_1000x300", lambda x, i: x[i], (1000, 300), [((600,), 1000)], True),
    ("pick_per_row_4096x1000", lambda x, i: x[torch.arange(4096, device=x.device), i], (4096, 1000),
     [((4096,), 1000)], True),
    ("index_select_dim0", lambda x, i: torch.index_select(x, 0, i), (37, 129), [((20,), 37)], False),
    ("index_select_dim1", lambda x, i: torch.index_select(x, 1, i), (37, 129), [((50,), 129)], False),
    ("index_select_middle", lambda x, i: x.index_select(1, i), (6, 7, 8), [((11,), 7)], False),
    ("gather_dim1", lambda x, i: torch.gather(x, 1, i), (37, 129), [((37, 50), 129)], False),
    ("gather_dim0", lambda x, i: torch.gather(x, 0, i), (37, 129), [((20, 129), 37)], False),
    ("gather_index_smaller", lambda x, i: torch.gather(x, 1, i), (37, 129), [((20, 50), 129)], False),
    ("gather_3d_middle", lambda x, i: torch.gather(x, 1, i), (6, 7, 8), [((6, 11, 8), 7)], False),
    ("gather_1000x300", lambda x, i: torch.gather(x, 1, i), (1000, 300), [((1000, 300), 300)], False),
    # take_along_dim wants int64 indices: the cast is part of the graph
    ("take_along_dim", lambda x, i: torch.take_along_dim(x, i.long(), 1), (37, 129), [((37, 50), 129)], False),
    ("take_along_dim_broadcast", lambda x, i: torch.take_along_dim(x, i.long(), 1), (37, 129),
     [((1, 50), 129)], False),
    ("take_along_dim_flat", lambda x, i: torch.take_along_dim(x, i.long()), (37, 129), [((100,), 37 * 129)], False),
]


@pytest.mark.parametrize("dtype", INDEX_DTYPES)
@pytest.mark.parametrize("fn, shape, indices, negative", [pytest.param(*c[1:], id=c[0]) for c in LOADS])
def test_load(check_grad, make, fn, shape, indices, negative, dtype):
    """Forward, and the backward: index_put(accumulate=True) / scatter_add at repeated indices."""
    x = make(*shape, grad=True)
    ix = [_index(make, s, n, dtype, negative) for s, n in indices]
    check_grad(_squared(fn), x, *ix)


# -- embedding ---------------------------------------------------------------------------------

EMBEDDING_KWARGS = {
    "plain": {},
    "padding_idx": {"padding_idx": 3},
    "padding_idx_negative": {"padding_idx": -1},  # row 999, pinned in the ids
    "scale_grad_by_freq": {"scale_grad_by_freq": True},
}


@pytest.mark.parametrize("dtype", INDEX_DTYPES)
@pytest.mark.parametrize("kwargs", EMBEDDING_KWARGS.values(), ids=EMBEDDING_KWARGS.keys())
def test_embedding(check_grad, make, kwargs, dtype):
    """The backward (embedding_dense_backward) adds every repeated id's rows; padding_idx's
    row gets no gradient."""
    w, ids = make(1000, 64, grad=True), _index(make, (8, 50), 1000, dtype)
    ids[1, :5] = 3
    check_grad(_squared(lambda w, ids: F.embedding(ids, w, **kwargs)), w, ids)


def test_embedding_large(check_grad, make):
    w, ids = make(4096, 1000, grad=True), _index(make, (4, 128), 4096)
    check_grad(_squared(F.embedding), ids, w)


# -- cross_entropy (nll_loss_forward / nll_loss_backward) -------------------------------------

def _targets(make, rows, classes, ignore=None):
    t = _index(make, (rows,), classes)
    if ignore is not None:
        t[3::4] = ignore
    return t


CE_VARIANTS = {
    "plain": (False, None),
    "weight_ignore_index": (True, -100),  # targets of -100 present, skipped
    "ignore_index_is_a_class": (False, 4),
}


def _cross_entropy_case(make, rows, classes, variant, reduction):
    weighted, ignore = CE_VARIANTS[variant]
    x, t = make(rows, classes, grad=True), _targets(make, rows, classes, ignore)
    w = make(classes, low=0.1, high=2.0) if weighted else None
    kwargs = {"reduction": reduction, "ignore_index": -100 if ignore is None else ignore}
    return (lambda x, t, w: F.cross_entropy(x, t, weight=w, **kwargs)), x, t, w


@pytest.mark.parametrize("variant", CE_VARIANTS)
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_cross_entropy(check_grad, make, reduction, variant):
    check_grad(*_cross_entropy_case(make, 37, 129, variant, reduction))


@pytest.mark.parametrize("rows, classes", [
    pytest.param(8, 2000, id="8x2000_looped"),
    pytest.param(1000, 300, id="1000x300", marks=GPU_ONLY),
    pytest.param(4096, 1000, id="4096x1000", marks=GPU_ONLY),
])
def test_cross_entropy_sizes(check_grad, make, rows, classes):
    check_grad(*_cross_entropy_case(make, rows, classes, "weight_ignore_index", "mean"))


def test_cross_entropy_spatial(check_grad, make):
    """(N, C, L) inputs go through nll_loss2d, which keeps its gather decomposition."""
    x, t = make(4, 10, 6, grad=True), _index(make, (4, 6), 10)
    check_grad(lambda x, t: F.cross_entropy(x, t), x, t)


# -- stores: scatter, scatter_add, index_add, index_put ----------------------------------------

def _setitem_unique_ij(x, i, j, v):
    y = x.clone()
    y[i, j] = v
    return y


def _unique_pairs(k, rows, cols, dtype):
    """k distinct (i, j) positions of a rows x cols tensor."""
    p = torch.randperm(rows * cols, device=DEVICE)[:k]
    return (p // cols).to(dtype), (p % cols).to(dtype)


def _unique_negative(size, k, dtype):
    """k distinct indices into `size`, every other one written as its negative alias."""
    i = torch.randperm(size, device=DEVICE)[:k]
    i[::2] -= size
    return i.to(dtype)


# name, fn, x's shape, args(make, dtype) -> the inputs after x (values with a gradient)
STORES = [
    ("scatter_src", lambda x, i, s: x.scatter(1, i, s), (37, 129),
     lambda make, dt: [_unique(37, 129, 50, dt), make(37, 50, grad=True)]),
    ("scatter_src_dim0", lambda x, i, s: x.scatter(0, i, s), (37, 129),
     lambda make, dt: [_unique(129, 37, 20, dt).t(), make(20, 129, grad=True)]),
    ("scatter_value", lambda x, i: x.scatter(1, i, 2.5), (37, 129), lambda make, dt: [_unique(37, 129, 50, dt)]),
    ("scatter_add", lambda x, i, s: x.scatter_add(1, i, s), (37, 129),
     lambda make, dt: [_index(make, (37, 200), 129, dt), make(37, 200, grad=True)]),
    ("scatter_add_dim0_1000x300", lambda x, i, s: x.scatter_add(0, i, s), (1000, 300),
     lambda make, dt: [_index(make, (2000, 300), 1000, dt), make(2000, 300, grad=True)]),
    ("index_add_alpha", lambda x, i, s: x.index_add(0, i, s, alpha=0.5), (37, 129),
     lambda make, dt: [_index(make, (60,), 37, dt), make(60, 129, grad=True)]),
    ("index_add_dim1", lambda x, i, s: x.index_add(1, i, s), (37, 129),
     lambda make, dt: [_index(make, (200,), 129, dt), make(37, 200, grad=True)]),
    ("index_put_accumulate", lambda x, i, v: x.index_put((i,), v, accumulate=True), (37, 129),
     lambda make, dt: [_index(make, (60,), 37, dt, negative=True), make(60, 129, grad=True)]),
    ("index_put_accumulate_ij", lambda x, i, j, v: x.index_put((i, j), v, accumulate=True), (37, 129),
     lambda make, dt: [_index(make, (300,), 37, dt, negative=True), _index(make, (300,), 129, dt, negative=True),
                       make(300, grad=True)]),
    ("index_put_accumulate_broadcast_value", lambda x, i, v: x.index_put((i,), v, accumulate=True), (37, 129),
     lambda make, dt: [_index(make, (60,), 37, dt), make(129, grad=True)]),
    ("index_put_accumulate_1000x300", lambda x, i, v: x.index_put((i,), v, accumulate=True), (1000, 300),
     lambda make, dt: [_index(make, (2000,), 1000, dt), make(2000, 300, grad=True)]),
    ("index_put_unique", lambda x, i, v: x.index_put((i,), v), (37, 129),
     lambda make, dt: [_unique_negative(37, 20, dt), make(20, 129, grad=True)]),
    ("setitem_unique_ij", _setitem_unique_ij, (37, 129),
     lambda make, dt: [*_unique_pairs(100, 37, 129, dt), make(100, grad=True)]),
]


@pytest.mark.parametrize("dtype", INDEX_DTYPES)
@pytest.mark.parametrize("fn, shape, args", [pytest.param(*c[1:], id=c[0]) for c in STORES])
def test_store(check_grad, make, fn, shape, args, dtype):
    """Forward, and the gradients of x and of the stored values (a gather / index of the grad)."""
    check_grad(_squared(fn), make(*shape, grad=True), *args(make, dtype))


# -- fusion with the elementwise work around -------------------------------------------------

def _fusion_gather(x, i, y):
    return (torch.gather(x.exp(), 1, i) * 2 + y).sin()


def _fusion_embedding(w, ids, pos):
    return F.embedding(ids, w) * 8.0 + pos


# name, fn, args(make), tolerances
FUSIONS = [
    ("gather_exp_mul_add_sin", _fusion_gather,
     lambda make: [make(1000, 300, low=-1, high=1, grad=True), _index(make, (1000, 128), 300),
                   make(1000, 128, grad=True)], {"atol": 1e-4, "rtol": 1e-5}),
    ("embedding_scale_position", _fusion_embedding,
     lambda make: [make(1000, 64, grad=True), _index(make, (4, 50), 1000), make(50, 64, grad=True)], {}),
    ("gather_into_a_reduction", lambda x, i: torch.gather(x * 3, 1, i).sum(1),
     lambda make: [make(37, 129, grad=True), _index(make, (37, 50), 129)], {}),
    ("index_of_a_loaded_index", lambda x, i, j: x[i[j]] + 1,
     lambda make: [make(37, 129, grad=True), _index(make, (20,), 37, negative=True),
                   _index(make, (30,), 20)], {}),
    ("computed_index", lambda x, i: x[(i * 7 + 3) % 37, 1:] * 2,
     lambda make: [make(37, 129, grad=True), _index(make, (20,), 1000)], {}),
    ("index_from_argmax", lambda x, y: torch.gather(y, 1, x.argmax(1, keepdim=True)) - x.amax(1, keepdim=True),
     lambda make: [make(16, 129, grad=True), make(16, 129, grad=True)], {}),
    ("scatter_add_of_computed_values",
     lambda s, i: torch.zeros(37, 129, device=s.device).scatter_add(1, i, s.exp()) * 3,
     lambda make: [make(37, 200, grad=True), _index(make, (37, 200), 129)], {}),
]


@pytest.mark.parametrize("fn, args, tol", [pytest.param(*c[1:], id=c[0]) for c in FUSIONS])
def test_fusion(check_grad, make, fn, args, tol):
    # tol: exp and sin differ by an ulp between ATen and Triton, and x's gradient 4 sin cos exp
    # adds those up at repeated indices: eager's own float32 gradient is 9e-6 off float64's.
    check_grad(_squared(fn), *args(make), **tol)


# -- nothing goes to aten ------------------------------------------------------------------------

# `loops.extern "gather.default"` (from lower-aten on), `buffer.extern "buf1" = "gather.default"`,
# `triton.extern "buf1" = ...` and, in module.py, `buf1 = aten.gather.default(...)`.
EXTERN = re.compile(r'(?:loops\.extern|(?:buffer|triton)\.extern "\w+" =) "([\w.]+)"|\baten\.(\w+\.\w+)\(')

NO_EXTERN = {
    "cross_entropy": (lambda x, t: F.cross_entropy(x, t),
                      lambda make: [make(37, 129, grad=True), _targets(make, 37, 129, -100)]),
    "embedding": (lambda w, ids: F.embedding(ids, w),
                  lambda make: [make(1000, 64, grad=True), _index(make, (8, 50), 1000)]),
    "gather": (lambda x, i: torch.gather(x, 1, i),
               lambda make: [make(37, 129, grad=True), _index(make, (37, 50), 129)]),
    "index_ij": (lambda x, i, j: x[i, j],
                 lambda make: [make(37, 129, grad=True), _index(make, (4, 1), 37, negative=True),
                               _index(make, (1, 5), 129, negative=True)]),
}


@pytest.mark.parametrize("fn, args", NO_EXTERN.values(), ids=NO_EXTERN.keys())
def test_no_extern_call(tmp_path, monkeypatch, make, fn, args):
    """Forward and backward graphs (nll_loss_forward/backward, embedding and its dense backward,
    gather and scatter_add, index and index_put) compile to mlc kernels, no aten call."""
    monkeypatch.setenv("MLC_DUMP_DIR", str(tmp_path))
    torch.compile(fn, backend="mlc", fullgraph=True, dynamic=False)(*args(make)).square().sum().backward()
    graphs = sorted(p for p in tmp_path.iterdir() if p.is_dir())
    assert len(graphs) == 2, graphs  # forward and backward
    externs: dict[str, str] = {}  # the op -> the first file that calls it
    for f in sorted(f for graph in graphs for f in graph.iterdir() if f.suffix in (".mlir", ".py")):
        for m in EXTERN.finditer(f.read_text()):
            externs.setdefault(m.group(1) or m.group(2), f"{f.parent.name}/{f.name}")
    assert not externs, externs


def test_positions_from_aranges_are_read_directly(tmp_path, monkeypatch, check_grad, make):
    """Positions an arange computes read at index expressions (`--propagate-indices`): rows of
    a position embedding, columns in reverse, and columns counted from the end (negative
    positions, which wrap); forward and backward match eager, and the forward kernel loads
    without a gather's wrap of negative positions."""
    monkeypatch.setenv("MLC_DUMP_DIR", str(tmp_path))

    def fn(w, x):
        rows, cols = x.shape
        pos = torch.arange(rows, device=x.device)
        backwards = torch.arange(cols - 1, -1, -1, device=x.device)
        from_end = -1 - torch.arange(cols, device=x.device)
        return (w[pos] + x) * x[:, backwards] - x[:, from_end].sin()

    check_grad(_squared(fn), make(300, 129, grad=True), make(37, 129, grad=True))
    forward = (sorted(p for p in tmp_path.iterdir() if p.is_dir())[0] / "module.py").read_text()
    assert "tl.where(" not in forward, forward  # no wrap: every position is an index expression
    assert "(128 + 129*x2 - x1)" in forward, forward  # both reversals: column 128 - i of row x2


# -- out-of-range indices in debug mode ------------------------------------------------------------

OUT_OF_RANGE = {
    "index_too_large": ("lambda x, i: x[i] * 2", "torch.tensor([0, 36, 37, 5])"),
    "index_too_negative": ("lambda x, i: x[i] * 2", "torch.tensor([0, -37, -38, 5])"),
    "gather_too_large": ("lambda x, i: torch.gather(x, 1, i) * 2", "torch.full((37, 3), 129)"),
}


@pytest.mark.parametrize("fn, index", OUT_OF_RANGE.values(), ids=OUT_OF_RANGE.keys())
def test_out_of_range_index_raises_in_debug_mode(monkeypatch, fn, index):
    """MLC_DEBUG=1 checks each loaded index against its dim (after wrapping negatives). On CUDA
    the device-side assert spoils the process's CUDA context: run it in a subprocess."""
    code = textwrap.dedent(f"""
        import torch
        x = torch.randn(37, 129, device="{DEVICE.type}")
        i = {index}.to("{DEVICE.type}")
        out = torch.compile({fn}, backend="mlc", fullgraph=True, dynamic=False)(x, i)
        torch.cuda.synchronize() if x.is_cuda else None
    """)
    monkeypatch.setenv("MLC_DEBUG", "1")
    if INTERPRETED:
        with pytest.raises(Exception, match="index out of bounds"):
            exec(code, {})
    else:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
        assert proc.returncode != 0 and "index out of bounds" in proc.stderr, proc.stderr[-3000:]


def test_debug_mode_passes_indices_in_range(monkeypatch, check, make):
    """The bounds check of MLC_DEBUG=1 lets every index in range through, negative ones too."""
    monkeypatch.setenv("MLC_DEBUG", "1")
    x = make(37, 129)
    check(lambda x, i, j: x[i] + torch.gather(x, 1, j), x, _index(make, (37,), 37, negative=True),
          _index(make, (37, 129), 129))
