"""`--lower-aten` on reductions, normalizations and losses: structure and numerics.

Numerics: each program is traced as the torch.compile backend traces it -- AOTAutograd with
mlc's decomposition table, giving a forward graph and, when an input requires grad, a
backward graph -- then every graph is imported, lowered and run by `loops_interp`; its
outputs must match what torch computed for that graph on the same inputs. The native rules
for ops the table decomposes (`_softmax`, `native_layer_norm`, ...) are traced with make_fx
and no table, so the op itself reaches the pass. Every case runs with the default unroll
threshold (8: small reductions become pointwise chains) and with 1 (every reduction of two
or more elements is a `loops.reduction`), and no case may leave an extern behind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest
import sympy
import torch
import torch.nn.functional as F
from functorch.compile import aot_function, make_boxed_func
from torch.fx.experimental.proxy_tensor import make_fx
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp

from mlc.dialects.loops import ExternOp, LoadOp, PointwiseOp, ReduceOp, ReductionOp
from mlc.dialects.registry import make_context
from mlc.dialects.sym import symbol
from mlc.frontend.decompositions import _nll_loss_backward, decomposition_table
from mlc.frontend.importer import import_graph
from mlc.passes.lower_aten import LowerAtenPass
from mlc.test.passes import loops_interp as interp

aten = torch.ops.aten
i0, i1, i2 = (symbol(f"i{k}") for k in range(3))
r0, r1 = symbol("r0_0"), symbol("r0_1")
THRESHOLDS = [pytest.param(8, id="unroll8"), pytest.param(1, id="nounroll")]


# ---------------------------------------------------------------------------------------------
# Tracing, lowering, running


@dataclass
class Graph:
    gm: torch.fx.GraphModule
    inputs: list[Any]
    outputs: list[Any]


def _cloned(values: Any) -> list[Any]:
    return [v.detach().clone() if isinstance(v, torch.Tensor) else v for v in values]


def trace(fn: Callable[..., Any], args: list[Any]) -> list[Graph]:
    """The forward (and backward) graphs AOTAutograd gives `fn`, with the inputs each got."""
    graphs: list[Graph] = []

    def compiler(gm: torch.fx.GraphModule, _: Any) -> Callable[..., Any]:
        def run(*inputs: Any) -> Any:
            inputs = tuple(_cloned(inputs))  # AOTAutograd writes mutated inputs back later
            out = gm(*inputs)
            graphs.append(Graph(gm, _cloned(inputs), list(out)))
            return out

        return make_boxed_func(run)

    compiled = aot_function(fn, fw_compiler=compiler, bw_compiler=compiler, decompositions=decomposition_table())
    out = compiled(*args)
    leaves = [o for o in torch.utils._pytree.tree_leaves(out) if isinstance(o, torch.Tensor) and o.requires_grad]
    if leaves:
        sum((o.float().sum() * (k + 1) for k, o in enumerate(leaves)), torch.zeros(())).backward()
    return graphs


def trace_native(fn: Callable[..., Any], args: list[Any]) -> list[Graph]:
    """make_fx with no decomposition table: the aten ops `fn` calls reach the pass."""
    gm = make_fx(fn, decomposition_table={})(*args)
    return [Graph(gm, _cloned(args), torch.utils._pytree.tree_leaves(gm(*args)))]


def lower_graph(graph: Graph, threshold: int = 8) -> tuple[ModuleOp, list[Any], dict[int, torch.Tensor]]:
    """Import and lower `graph`; the module, its inputs, and the expected value per result."""
    imported = import_graph(graph.gm)
    module = imported.module
    LowerAtenPass(unroll_reductions_threshold=threshold).apply(make_context(), module)
    module.verify()
    inputs = [*graph.inputs, *imported.constants.values()]
    expected = {k: o for o, k in zip(graph.outputs, imported.output_spec) if k is not None}
    return module, inputs, expected


def check_graphs(graphs: list[Graph], threshold: int, tol: dict[str, float] | None = None) -> list[ModuleOp]:
    modules = []
    for graph in graphs:
        module, inputs, expected = lower_graph(graph, threshold)
        externs = [o.overload.data for o in module.walk() if isinstance(o, ExternOp)]
        assert not externs, f"extern calls left: {externs}"
        got = interp.run(module, inputs)
        for k, want in expected.items():
            assert got[k].dtype == want.dtype and got[k].shape == want.shape, (k, got[k].dtype, want.dtype)
            torch.testing.assert_close(got[k], want, equal_nan=True, **(tol or _tolerance(want)))
        modules.append(module)
    return modules


def _tolerance(t: torch.Tensor) -> dict[str, float]:
    if t.dtype in (torch.float16, torch.bfloat16):
        return {"rtol": 1e-2, "atol": 1e-2}
    if t.dtype == torch.float32:
        return {"rtol": 1e-5, "atol": 1e-5}  # sums in another order than eager's
    return {}  # integers and bools: exact (argmax ties pick the first index)


# ---------------------------------------------------------------------------------------------
# Inputs (deterministic)


def rand(*shape: int, dtype: torch.dtype = torch.float32, seed: int = 0, grad: bool = False) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        t = torch.rand(shape, generator=g) > 0.5
    elif dtype == torch.uint8:
        t = torch.randint(0, 256, shape, generator=g, dtype=dtype)
    elif dtype.is_floating_point:
        t = torch.randn(shape, generator=g).to(dtype)
    else:
        t = torch.randint(-5, 6, shape, generator=g, dtype=dtype)
    return t.requires_grad_(grad)


def ties(*shape: int) -> torch.Tensor:
    """Small integers as floats: every row has repeated maxima and minima."""
    return torch.randint(0, 3, shape, generator=torch.Generator().manual_seed(1)).float()


def with_nans() -> torch.Tensor:
    x = rand(4, 10)
    x[1, 3] = x[2, 0] = x[2, 7] = float("nan")
    return x


TARGET = torch.tensor([1, 3, 9, 3, 0, 3])


# ---------------------------------------------------------------------------------------------
# Numerics: reductions (forward graphs)

REDUCTIONS: dict[str, tuple[Callable[..., Any], Callable[[], list[Any]]]] = {
    # dims, keepdim, all dims, columns
    "sum_rows": (lambda x: x.sum(1), lambda: [rand(4, 10)]),
    "sum_columns": (lambda x: x.sum(0), lambda: [rand(4, 10)]),
    "sum_keepdim": (lambda x: (x.sum(-1, keepdim=True), x.sum(0, keepdim=True)), lambda: [rand(4, 10)]),
    "sum_all": (lambda x: x.sum(), lambda: [rand(3, 4, 5)]),
    "sum_dims_any_order": (lambda x: (x.sum((0, 2)), x.sum((-1, 0)), x.sum((2, 0), keepdim=True), x.sum((1, -1))), lambda: [rand(3, 4, 5)]),
    "sum_middle_dim": (lambda x: (x.sum(1), x.sum(1, keepdim=True)), lambda: [rand(3, 9, 5)]),
    "sum_dtype_arg": (lambda x: (x.sum(1, dtype=torch.float64), x.sum(dtype=torch.float16)), lambda: [rand(4, 10)]),
    "sum_int_to_int64": (lambda x: (x.sum(1), x.sum(), x.sum(0, dtype=torch.int32)), lambda: [rand(4, 10, dtype=torch.int32)]),
    "sum_bool_to_int64": (lambda x: (x.sum(1), x.sum()), lambda: [rand(4, 10, dtype=torch.bool)]),
    "sum_uint8": (lambda x: (x.sum(1), x.sum(0)), lambda: [rand(4, 10, dtype=torch.uint8)]),
    "sum_f16": (lambda x: (x.sum(1), x.sum(0), x.sum()), lambda: [rand(4, 300, dtype=torch.float16)]),
    "sum_bf16": (lambda x: (x.sum(1), x.sum(0)), lambda: [rand(4, 300, dtype=torch.bfloat16)]),
    "prod": (lambda x: (x.prod(1), x.prod(), x.prod(0, keepdim=True)), lambda: [rand(4, 10)]),
    "prod_int": (lambda x: (x.prod(1), x.prod()), lambda: [rand(3, 5, dtype=torch.int32)]),
    # max, min
    "amax_amin": (lambda x: (x.amax(1), x.amin(0), x.amax((0, 2)), x.amin(-1, keepdim=True)), lambda: [rand(3, 4, 9)]),
    "amax_f16_int_uint8_bool": (
        lambda h, i, u, b: (h.amax(1), i.amin(0), u.amax(1), u.amin(1), b.amax(1), b.amin(0)),
        lambda: [rand(4, 10, dtype=torch.float16), rand(4, 10, dtype=torch.int64),
                 rand(4, 10, dtype=torch.uint8), rand(4, 10, dtype=torch.bool)],
    ),
    "max_min_dim": (lambda x: (x.max(1), x.min(0), x.max(-1, keepdim=True)), lambda: [rand(4, 10)]),
    "max_dim_ties_first_index": (lambda x: (x.max(1), x.min(1), x.max(0)), lambda: [ties(6, 12)]),
    "max_dim_uint8_bool": (lambda u, b: (u.max(1), u.min(0), b.max(1)), lambda: [rand(4, 10, dtype=torch.uint8), rand(4, 10, dtype=torch.bool)]),
    "max_min_full": (lambda x: (x.max(), x.min()), lambda: [rand(3, 4, 5)]),
    "argmax_argmin": (lambda x: (x.argmax(1), x.argmin(0), x.argmax(-1, keepdim=True)), lambda: [rand(4, 10)]),
    "argmax_flat": (lambda x: (x.argmax(), x.argmin(), aten.argmax(x, None, True)), lambda: [rand(3, 4, 5)]),
    "argmax_ties_first_index": (lambda x: (x.argmax(1), x.argmin(1), x.argmax(0), x.argmax()), lambda: [ties(6, 12)]),
    "argmax_ties_small": (lambda x: (x.argmax(1), x.argmin(1), x.max(1)), lambda: [ties(6, 5)]),
    "nan_propagates": (lambda x: (x.amax(1), x.max(1), x.argmin(1), x.sum(1)), lambda: [with_nans()]),
    "nan_propagates_small": (lambda x: (x.amax(1), x.max(1), x.argmin(1)), lambda: [with_nans()[:, :6].contiguous()]),
    # any, all
    "any_all_bool": (
        lambda x: (x.any(1), x.all(1), x.any(), x.all(), x.any(0, keepdim=True), torch.any(x, dim=(0, 1))),
        lambda: [rand(4, 10, dtype=torch.bool)],
    ),
    "any_all_float_uint8": (lambda x, u: (x.any(1), x.all(0), (x > 0).all(), u.any(1), u.all(1)), lambda: [rand(4, 10), rand(4, 10, dtype=torch.uint8)]),
    # mean, var, std
    "mean": (lambda x: (x.mean(1), x.mean(), x.mean((0, 2), keepdim=True), x.mean(0, dtype=torch.float64)), lambda: [rand(3, 4, 9)]),
    "mean_f16": (lambda x: (x.mean(1), x.mean()), lambda: [rand(4, 300, dtype=torch.float16)]),
    "var_corrections": (
        lambda x: (x.var(1, correction=0), x.var(1), x.var(1, correction=2), x.std(1), x.std(0, correction=0)),
        lambda: [rand(4, 10)],
    ),
    "var_dims": (lambda x: (torch.var(x, (0, 2)), x.std((2, 1), keepdim=True), x.var(), torch.var_mean(x), torch.var_mean(x, -1, keepdim=True)), lambda: [rand(3, 4, 9)]),
    "var_mean_f16_bf16": (lambda h, b: (torch.var_mean(h, 1), b.var(0), h.std(1)), lambda: [rand(4, 300, dtype=torch.float16), rand(12, 9, dtype=torch.bfloat16)]),
    # Inductor's special cases: no elements, one element, few elements
    "numel_0": (
        lambda x: (x.sum(1), x.prod(1), x.mean(1), x.var(1), x.any(1), x.all(1), torch.var_mean(x, 1), x.sum(1, keepdim=True)),
        lambda: [rand(3, 0)],
    ),
    "numel_1": (
        lambda x: (x.sum(1), x.prod(1), x.mean(1), x.var(1), x.var(1, correction=0), x.amax(1), x.argmax(1), x.max(1), x.any(1)),
        lambda: [rand(3, 1)],
    ),
    "zero_dim_input": (lambda x: (x.sum(), x.amax(), x.argmax(), x.mean()), lambda: [rand()]),
    "small_reductions": (
        lambda x: (x.sum(1), x.prod(0), x.argmax(1), x.var(1), torch.var_mean(x, 0), x.max(1), x.any(1), x.all(0), x.var()),
        lambda: [ties(4, 5)],
    ),
    # long rows: the interpreter stays vectorized
    "rows_of_20000": (
        lambda x: (x.sum(1), x.amax(1), x.argmax(1), torch.var_mean(x, 1), x.mean(0), x.any(1)),
        lambda: [rand(3, 20000)],
    ),
    "columns_of_20000": (lambda x: (x.sum(0), x.argmin(0), x.var(0)), lambda: [rand(20000, 3)]),
}


@cache
def _traced(name: str, table: str) -> list[Graph]:
    fn, args = (REDUCTIONS | NORMS_AND_LOSSES)[name] if table == "aot" else NATIVE[name]
    return trace(fn, args()) if table == "aot" else trace_native(fn, args())


@pytest.mark.parametrize("threshold", THRESHOLDS)
@pytest.mark.parametrize("name", list(REDUCTIONS))
def test_reduction_numerics(name: str, threshold: int) -> None:
    check_graphs(_traced(name, "aot"), threshold)


# ---------------------------------------------------------------------------------------------
# Numerics: normalizations and losses, forward and backward


def _bn(training: bool) -> Callable[..., Any]:
    def fn(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, mean: torch.Tensor, var: torch.Tensor) -> Any:
        return F.batch_norm(x, mean, var, w, b, training=training), mean, var  # stats updated in training

    return fn


NORMS_AND_LOSSES: dict[str, tuple[Callable[..., Any], Callable[[], list[Any]]]] = {
    "softmax": (lambda x: (x.softmax(-1), x.softmax(0)), lambda: [rand(4, 10, grad=True)]),
    "log_softmax": (lambda x: x.log_softmax(1), lambda: [rand(4, 10, grad=True)]),
    "softmax_f16": (lambda x: x.softmax(-1), lambda: [rand(4, 30, dtype=torch.float16)]),
    "softmax_small_rows": (lambda x: x.softmax(-1), lambda: [rand(6, 5, grad=True)]),
    "softmax_rows_of_20000": (lambda x: x.softmax(-1), lambda: [rand(2, 20000, grad=True)]),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (10,), w, b), lambda: [rand(2, 3, 10, grad=True), rand(10, seed=1, grad=True), rand(10, seed=2, grad=True)]),
    "layer_norm_two_dims_no_affine": (lambda x: F.layer_norm(x, (3, 10)), lambda: [rand(2, 3, 10, grad=True)]),
    "layer_norm_f16": (lambda x, w, b: F.layer_norm(x, (64,), w, b), lambda: [rand(4, 64, dtype=torch.float16), rand(64, seed=1, dtype=torch.float16), rand(64, seed=2, dtype=torch.float16)]),
    "rms_norm": (lambda x, w: F.rms_norm(x, (10,), w, eps=1e-6), lambda: [rand(4, 10, grad=True), rand(10, seed=1, grad=True)]),
    "rms_norm_by_hand": (lambda x, w: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w, lambda: [rand(4, 10, grad=True), rand(10, seed=1, grad=True)]),
    "batch_norm_eval": (_bn(False), lambda: [rand(2, 6, 3, 3, grad=True), rand(6, seed=1, grad=True), rand(6, seed=2, grad=True), rand(6, seed=3), rand(6, seed=4).abs()]),
    "batch_norm_training": (_bn(True), lambda: [rand(2, 6, 3, 3, grad=True), rand(6, seed=1, grad=True), rand(6, seed=2, grad=True), rand(6, seed=3), rand(6, seed=4).abs()]),
    "group_norm": (lambda x, w, b: F.group_norm(x, 3, w, b), lambda: [rand(2, 6, 3, 3, grad=True), rand(6, seed=1, grad=True), rand(6, seed=2, grad=True)]),
    "cross_entropy_mean": (lambda x, t: F.cross_entropy(x, t), lambda: [rand(6, 10, grad=True), TARGET]),
    "cross_entropy_sum_ignore_index": (lambda x, t: F.cross_entropy(x, t, ignore_index=3, reduction="sum"), lambda: [rand(6, 10, grad=True), TARGET]),
    "cross_entropy_none_weight": (lambda x, t, w: F.cross_entropy(x, t, weight=w, reduction="none"), lambda: [rand(6, 10, grad=True), TARGET, rand(10, seed=1).abs()]),
    "cross_entropy_mean_weight_ignore_index": (lambda x, t, w: F.cross_entropy(x, t, weight=w, ignore_index=9), lambda: [rand(6, 10, grad=True), TARGET, rand(10, seed=1).abs()]),
    "cross_entropy_all_ignored_is_nan": (lambda x, t: F.cross_entropy(x, t, ignore_index=3), lambda: [rand(4, 10, grad=True), torch.full((4,), 3)]),
    "cross_entropy_few_classes": (lambda x, t: F.cross_entropy(x, t), lambda: [rand(6, 4, grad=True), TARGET % 4]),
    "cross_entropy_label_smoothing": (lambda x, t: F.cross_entropy(x, t, label_smoothing=0.1), lambda: [rand(6, 10, grad=True), TARGET]),
    "nll_loss_unbatched": (lambda x, t: F.nll_loss(x.log_softmax(0), t), lambda: [rand(10, grad=True), torch.tensor(3)]),
    "logsumexp": (lambda x: (torch.logsumexp(x, 1), torch.logsumexp(x, (0, 1), keepdim=True)), lambda: [rand(4, 10, grad=True)]),
    "normalize": (lambda x: F.normalize(x, dim=1), lambda: [rand(4, 10, grad=True)]),
}


@pytest.mark.parametrize("threshold", THRESHOLDS)
@pytest.mark.parametrize("name", list(NORMS_AND_LOSSES))
def test_norm_and_loss_numerics(name: str, threshold: int) -> None:
    graphs = _traced(name, "aot")
    assert graphs, "nothing was traced"
    check_graphs(graphs, threshold)


# ---------------------------------------------------------------------------------------------
# Numerics: the native rules (ops the table decomposes, lowered directly when they arrive)

W10 = lambda: rand(10, seed=1).abs()  # noqa: E731

NATIVE: dict[str, tuple[Callable[..., Any], Callable[[], list[Any]]]] = {
    "_softmax": (lambda x: (aten._softmax(x, 1, False), aten._log_softmax(x, 0, False), aten._softmax(x, -1, False)), lambda: [rand(4, 10)]),
    "_softmax_f16": (lambda x: (aten._softmax(x, 1, False), aten._log_softmax(x, 1, False)), lambda: [rand(4, 10, dtype=torch.float16)]),
    "logsumexp": (lambda x: (aten.logsumexp(x, [1]), aten.logsumexp(x, [0, 1], True)), lambda: [rand(4, 10)]),
    "logsumexp_infinities": (
        lambda x: aten.logsumexp(x, [1]),
        lambda: [torch.tensor([[float("-inf")] * 9, [1.0, float("inf")] + [2.0] * 7, [float(k) for k in range(9)]])],
    ),
    "logsumexp_int": (lambda x: aten.logsumexp(x, [1]), lambda: [rand(3, 9, dtype=torch.int64)]),
    "native_layer_norm": (lambda x, w, b: aten.native_layer_norm(x, [10], w, b, 1e-5), lambda: [rand(2, 3, 10), rand(10, seed=1), rand(10, seed=2)]),
    "native_layer_norm_no_affine": (lambda x: aten.native_layer_norm(x, [3, 10], None, None, 1e-5), lambda: [rand(2, 3, 10)]),
    "native_layer_norm_f16": (lambda x, w, b: aten.native_layer_norm(x, [10], w, b, 1e-5), lambda: [rand(2, 3, 10, dtype=torch.float16), rand(10, seed=1, dtype=torch.float16), rand(10, seed=2, dtype=torch.float16)]),
    "softmax_backwards": (
        lambda g, y: (aten._softmax_backward_data(g, y, 1, torch.float32), aten._log_softmax_backward_data(g, y, 1, torch.float32)),
        lambda: [rand(4, 10), rand(4, 10, seed=1).softmax(1)],
    ),
    "softmax_backward_f16": (lambda g, y: aten._softmax_backward_data(g, y, 1, torch.float16), lambda: [rand(4, 10, dtype=torch.float16), rand(4, 10, seed=1).softmax(1).half()]),
    "all": (lambda x: (aten.all.dim(x, 1), aten.all(x), aten.all.dim(x, 0, True)), lambda: [rand(4, 10) > -1]),
    "nll_loss_forward": (
        lambda x, t, w: [aten.nll_loss_forward(x, t, ww, r, ii) for r in (0, 1, 2) for ii in (-100, 3) for ww in (None, w)],
        lambda: [rand(6, 10).log_softmax(1), TARGET, W10()],
    ),
    "nll_loss_forward_unbatched": (
        lambda x, t, w: [aten.nll_loss_forward(x, t, ww, r, ii) for r in (0, 1, 2) for ii in (-100, 3) for ww in (None, w)],
        lambda: [rand(10).log_softmax(0), torch.tensor(3), W10()],
    ),
    "nll_loss_backward": (
        lambda gn, gs, x, t, w, tw: [
            aten.nll_loss_backward(g, x, t, ww, r, ii, tw) for r, g in ((0, gn), (1, gs), (2, gs)) for ii in (-100, 3) for ww in (None, w)
        ],
        lambda: [rand(6), rand(seed=1), rand(6, 10), TARGET, W10(), torch.tensor(3.0)],
    ),
    "nll_loss_backward_unbatched": (
        lambda gs, x, t, w, tw: [aten.nll_loss_backward(gs, x, t, ww, r, ii, tw) for r in (0, 1, 2) for ii in (-100, 3) for ww in (None, w)],
        lambda: [rand(), rand(10), torch.tensor(3), W10(), torch.tensor(3.0)],
    ),
    # Loads and stores at loaded positions (negative ones count from the end where torch allows
    # them; positions repeat where the op adds).
    "gather": (lambda x, i: aten.gather(x * 2, 1, i), lambda: [rand(6, 10), torch.arange(24).reshape(6, 4) * 7 % 10]),
    "index_two_tensors": (lambda x, i, j: aten.index(x, [None, i, j]), lambda: [rand(3, 5, 7), torch.tensor([[0], [-1]]), torch.tensor([6, 2, -3])]),
    "embedding": (lambda w, t: aten.embedding(w, t), lambda: [rand(10, 4), torch.arange(6).reshape(2, 3) * 3 % 10]),
    "index_put_accumulate": (lambda x, i, v: aten.index_put(x, [i], v, True), lambda: [rand(5, 3), torch.tensor([1, -1, 1, 0, 1]), rand(5, 3, seed=1)]),
    "scatter_add": (lambda x, i, v: aten.scatter_add(x, 0, i, v), lambda: [rand(4, 3), torch.arange(12).reshape(4, 3) % 2, rand(4, 3, seed=1)]),
    "scatter_value": (lambda x, i: aten.scatter(x, 1, i, 2.5), lambda: [rand(4, 6), torch.tensor([[0, 5], [1, 2], [3, 4], [2, 0]])]),
    "index_add_alpha": (lambda x, i, v: aten.index_add(x, 1, i, v, alpha=3), lambda: [rand(2, 4), torch.tensor([3, 3, 0]), rand(2, 3, seed=1)]),
    "embedding_dense_backward_padding": (
        lambda g, t: aten.embedding_dense_backward(g, t, 10, 3, False),
        lambda: [rand(2, 3, 4), torch.tensor([[3, 1, 1], [9, 3, 0]])],
    ),
    "embedding_dense_backward_scale_grad_by_freq": (
        lambda g, t: aten.embedding_dense_backward(g, t, 10, -1, True),
        lambda: [rand(2, 3, 4), torch.tensor([[3, 1, 1], [9, 3, 1]])],
    ),
    "as_strided_of_a_computed_tensor": (
        lambda x: (aten.as_strided(x * 2, [2, 6], [6, 1]), aten.as_strided(x + 1, [3, 2], [1, 3], 1)),
        lambda: [rand(2, 3, 2, 1)],
    ),
}


@pytest.mark.parametrize("threshold", THRESHOLDS)
@pytest.mark.parametrize("name", list(NATIVE))
def test_native_rule_numerics(name: str, threshold: int) -> None:
    check_graphs(_traced(name, "native"), threshold)


def test_softmax_half_to_float() -> None:
    """half_to_float (CUDA only in eager): the f16 input is read as f32, the result is f32."""
    x = rand(4, 10, dtype=torch.float16)
    gm = make_fx(lambda x: aten._softmax(x.float(), 1, False), decomposition_table={})(x)
    graph = Graph(gm, [x], [aten._softmax(x.float(), 1, False)])
    # The same graph with the op given the f16 tensor and half_to_float=True.
    for node in gm.graph.nodes:
        if node.target == aten._softmax.default:
            convert = node.args[0]
            node.args = (convert.args[0], 1, True)
            gm.graph.erase_node(convert)
    gm.recompile()
    check_graphs([graph], 8)


# ---------------------------------------------------------------------------------------------
# Structure: the decisions the loops IR pins down


def lowered(fn: Callable[..., Any], *args: Any, threshold: int = 8, native: bool = False) -> ModuleOp:
    graphs = trace_native(fn, list(args)) if native else trace(fn, list(args))
    return lower_graph(graphs[0], threshold)[0]


def ops_of(module: ModuleOp, cls: type) -> list[Any]:
    return [o for o in module.walk() if isinstance(o, cls)]


def body_names(op: Any) -> list[str]:
    return [o.name for o in op.body.block.ops]


def kinds(op: ReductionOp) -> list[str]:
    return [r.kind for r in op.reduce_ops()]


def load_indices(op: Any) -> list[list[sympy.Expr]]:
    return [o.index_exprs for o in op.body.block.ops if isinstance(o, LoadOp)]


def test_row_sum_is_one_reduction_over_the_last_dim() -> None:
    (red,) = ops_of(lowered(lambda x: x.sum(1), rand(3, 9)), ReductionOp)
    assert red.range_exprs == [3] and red.reduction_range_exprs == [9]
    assert kinds(red) == ["sum"] and load_indices(red) == [[i0, r0]]
    assert body_names(red) == ["loops.load", "loops.reduce", "loops.yield"]


def test_column_sum_loads_across_rows() -> None:
    (red,) = ops_of(lowered(lambda x: x.sum(0), rand(9, 3)), ReductionOp)
    assert red.range_exprs == [3] and red.reduction_range_exprs == [9]
    assert load_indices(red) == [[r0, i0]]


def test_keepdim_keeps_a_size_one_range_that_loads_ignore() -> None:
    (red,) = ops_of(lowered(lambda x: x.sum(1, keepdim=True), rand(3, 9, 4)), ReductionOp)
    assert red.range_exprs == [3, 1, 4] and red.reduction_range_exprs == [9]
    assert load_indices(red) == [[i0, r0, i2]]


def test_several_dims_in_any_order_reduce_in_the_tensors_order() -> None:
    (red,) = ops_of(lowered(lambda x: x.sum((-1, 0)), rand(9, 4, 10)), ReductionOp)
    assert red.range_exprs == [4] and red.reduction_range_exprs == [9, 10]
    assert load_indices(red) == [[r0, i0, r1]]


def test_full_reduction_has_no_ranges_and_a_0d_result() -> None:
    (red,) = ops_of(lowered(lambda x: x.mean(), rand(3, 9)), ReductionOp)
    assert red.range_exprs == [] and red.reduction_range_exprs == [3, 9]
    assert red.outputs[0].type.get_shape() == ()
    assert body_names(red) == ["loops.load", "loops.reduce", "arith.constant", "arith.divf", "loops.yield"]


def test_max_dim_is_one_reduction_with_two_results_of_one_load() -> None:
    (red,) = ops_of(lowered(lambda x: x.max(1), rand(3, 9)), ReductionOp)
    assert len(red.outputs) == 2 and kinds(red) == ["max", "argmax"]
    (load,) = [o for o in red.body.block.ops if isinstance(o, LoadOp)]
    assert all(r.value == load.result for r in red.reduce_ops())
    assert [str(o.type) for o in red.outputs] == ["tensor<3xf32>", "tensor<3xi64>"]


def test_var_mean_is_one_welford_and_an_epilogue() -> None:
    (red,) = ops_of(lowered(lambda x: torch.var_mean(x, 1), rand(3, 9)), ReductionOp)
    assert kinds(red) == ["welford"] and len(red.outputs) == 2
    ops = list(red.body.block.ops)
    reduce = next(o for o in ops if isinstance(o, ReduceOp))
    epilogue = ops[ops.index(reduce) + 1 :]
    assert [o.name for o in epilogue] == ["arith.constant", "arith.divf", "loops.yield"]
    const, div, yield_ = epilogue
    assert const.value.value.data == 8.0  # n - correction = 9 - 1
    assert div.lhs == reduce.results[1]  # m2 / (n - correction)
    assert list(yield_.values) == [div.result, reduce.results[0]]  # (var, mean)


@pytest.mark.parametrize("correction, n", [(0, 9.0), (2, 7.0)])
def test_var_correction_is_the_divisor(correction: int, n: float) -> None:
    (red,) = ops_of(lowered(lambda x: x.var(1, correction=correction), rand(3, 9)), ReductionOp)
    (const,) = [o for o in red.body.block.ops if isinstance(o, arith.ConstantOp)]
    assert const.value.value.data == n


def test_std_is_sqrt_of_var_in_the_epilogue() -> None:
    """The table decomposes std into var and sqrt; std.correction itself is one reduction."""
    (red,) = ops_of(lowered(lambda x: aten.std.correction(x, [1]), rand(3, 9), native=True), ReductionOp)
    assert body_names(red)[-2:] == ["math.sqrt", "loops.yield"]


def test_f16_widens_before_the_reduce_and_narrows_after() -> None:
    (red,) = ops_of(lowered(lambda x: x.sum(1), rand(3, 9, dtype=torch.float16)), ReductionOp)
    assert body_names(red) == ["loops.load", "arith.extf", "loops.reduce", "arith.truncf", "loops.yield"]
    (reduce,) = red.reduce_ops()
    assert str(reduce.value.type) == "f32"


def test_integer_sum_accumulates_in_int64() -> None:
    (red,) = ops_of(lowered(lambda x: x.sum(1), rand(3, 9, dtype=torch.int32)), ReductionOp)
    assert body_names(red) == ["loops.load", "arith.extsi", "loops.reduce", "loops.yield"]
    assert str(red.outputs[0].type) == "tensor<3xi64>"


def test_uint8_max_compares_widened_to_int32() -> None:
    (red,) = ops_of(lowered(lambda x: x.amax(1), rand(3, 9, dtype=torch.uint8)), ReductionOp)
    assert body_names(red) == ["loops.load", "arith.bitcast", "arith.extui", "loops.reduce", "arith.trunci", "arith.bitcast", "loops.yield"]


def test_all_is_not_any_not() -> None:
    (red,) = ops_of(lowered(lambda x: aten.all.dim(x, 1), rand(3, 9, dtype=torch.bool), native=True), ReductionOp)
    assert kinds(red) == ["any"]
    names = body_names(red)
    assert names == ["loops.load", "arith.constant", "arith.xori", "loops.reduce", "arith.xori", "loops.yield"]


def test_empty_reduction_is_the_identity_as_a_pointwise() -> None:
    module = lowered(lambda x: (x.sum(1), x.prod(1), x.any(1)), rand(3, 0))
    assert not ops_of(module, ReductionOp) and not ops_of(module, LoadOp)
    consts = [o.value.value.data for o in ops_of(module, arith.ConstantOp)]
    assert consts == [0.0, 1.0, 0]


def test_one_element_reduction_is_a_pointwise_load() -> None:
    module = lowered(lambda x: (x.sum(1), x.argmax(1)), rand(3, 1))
    assert not ops_of(module, ReductionOp)
    summed, argmax = ops_of(module, PointwiseOp)
    assert load_indices(summed) == [[i0, 0]] and body_names(argmax) == ["arith.constant", "loops.yield"]


def test_small_reductions_unroll_below_the_threshold() -> None:
    x = rand(4, 7)
    unrolled = lowered(lambda x: x.sum(1), x)
    assert not ops_of(unrolled, ReductionOp)
    (pw,) = ops_of(unrolled, PointwiseOp)
    assert load_indices(pw) == [[i0, k] for k in range(7)]
    assert body_names(pw).count("arith.addf") == 7  # from 0, as eager sums: 0 + x0 + ... + x6
    assert ops_of(lowered(lambda x: x.sum(1), x, threshold=1), ReductionOp)
    assert ops_of(lowered(lambda x: x.sum(1), rand(4, 8)), ReductionOp)  # 8 is not < 8


def test_variance_of_a_single_result_is_not_unrolled() -> None:
    """Inductor's use_two_step_variance: only when there are several results."""
    assert ops_of(lowered(lambda x: x.var(), rand(5)), ReductionOp)
    assert not ops_of(lowered(lambda x: x.var(1), rand(3, 5)), ReductionOp)


def test_softmax_is_two_reductions_and_pointwise() -> None:
    module = lowered(lambda x: aten._softmax(x, 1, False), rand(3, 9), native=True)
    maxed, summed = ops_of(module, ReductionOp)
    assert kinds(maxed) == ["max"] and kinds(summed) == ["sum"]
    assert maxed.range_exprs == [3, 1] and summed.range_exprs == [3, 1]
    (pw,) = ops_of(module, PointwiseOp)
    assert load_indices(pw) == [[i0, i1], [i0, 0], [i0, 0]]


def test_cross_entropy_reads_one_element_per_row() -> None:
    x, t = rand(12, 10, grad=True), TARGET.repeat(2)  # 12 rows: a reduction over them, not unrolled
    graphs = trace(lambda x, t: F.cross_entropy(x, t, ignore_index=3), [x, t])
    forward_ops = {str(n.target) for n in graphs[0].gm.graph.nodes}
    backward_ops = {str(n.target) for n in graphs[1].gm.graph.nodes}
    assert "aten.gather.default" in forward_ops and "aten.nll_loss_forward.default" not in forward_ops
    assert "aten.nll_loss_backward.default" not in backward_ops and "aten.scatter.value" not in backward_ops
    module = lower_graph(graphs[0])[0]
    (pick,) = [o for o in ops_of(module, PointwiseOp) if any(load.indirect for load in o.body.walk() if isinstance(load, LoadOp))]
    assert pick.range_exprs == [12, 1] and pick.origin_names == ["nll_loss_forward"]  # x[n, t[n]]: one element of the row
    totals = [o for o in ops_of(module, ReductionOp) if o.origin_names == ["nll_loss_forward"]]
    assert [(o.range_exprs, o.reduction_range_exprs, kinds(o)) for o in totals] == [([], [12], ["sum"])] * 2  # loss, total_weight


def test_decomposition_table_decomposes_nll_loss_forward_and_writes_its_gradient_pointwise() -> None:
    table = decomposition_table()
    assert aten.nll_loss_forward.default in table  # a gather: the partitioner may recompute what it reads
    assert table[aten.nll_loss_backward.default] is _nll_loss_backward
    assert aten._softmax_backward_data.default not in table
    for op in (aten._log_softmax_backward_data.default, aten.native_layer_norm_backward.default,
               aten.native_batch_norm_backward.default, aten.native_group_norm_backward.default):
        assert op in table


def test_as_strided_of_an_input_stays_extern() -> None:
    module = lowered(lambda x: aten.as_strided(x, [2, 6], [6, 1]), rand(2, 3, 2, 1), native=True)
    assert [o.overload.data for o in ops_of(module, ExternOp)] == ["as_strided.default"]


def test_interpreter_epilogue_may_use_row_values_from_the_prologue() -> None:
    """A value that does not vary with r0_ (a load at i0) may be used after the reduce."""
    text = """func.func @f(%x: tensor<3x9xf32>, %s: tensor<3xf32>) -> tensor<3xf32> {
  %r = loops.reduction [3] over [9] -> tensor<3xf32> {
    %a = loops.load %x[i0, r0_0] : tensor<3x9xf32>
    %b = loops.load %s[i0] : tensor<3xf32>
    %c = loops.reduce max %a : f32 -> f32
    %d = arith.mulf %c, %b : f32
    loops.yield %d : f32
  }
  func.return %r : tensor<3xf32>
}"""
    from xdsl.parser import Parser

    module = Parser(make_context(), text).parse_module()
    module.verify()
    x, s = rand(3, 9), rand(3, seed=1)
    (got,) = interp.run(module, [x, s])
    torch.testing.assert_close(got, x.amax(1) * s)
