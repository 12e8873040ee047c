"""mlc's decomposition table: what reaches --lower-aten."""

from __future__ import annotations

import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx

from mlc.frontend.decompositions import decomposition_table

aten = torch.ops.aten


def targets(fn, *args) -> list[str]:
    gm = make_fx(fn, decomposition_table=decomposition_table())(*args)
    return [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]


def test_table_is_a_fresh_plain_dict():
    table = decomposition_table()
    assert type(table) is dict
    table.clear()
    assert decomposition_table()


@pytest.mark.parametrize(
    "op",
    [aten.gelu.default, aten._softmax.default, aten.native_layer_norm.default, aten.linear.default],
)
def test_decomposed(op):
    assert op in decomposition_table()


@pytest.mark.parametrize(
    "op",
    [
        aten.silu.default,
        aten.clamp_min.default,
        aten.clamp_max.default,
        aten.sum.default,
        aten.split.Tensor,
        aten.squeeze.dim,
        aten.var_mean.correction,
        aten.arange.start,
        aten.flip.default,
    ],
)
def test_kept(op):
    assert op not in decomposition_table()


def test_traced_graphs_hold_aten_ops_only():
    x = torch.randn(4, 8)

    def fn(x):
        y = torch.nn.functional.layer_norm(x, [8]) + torch.arange(8) + x.flip(0)
        return torch.softmax(torch.nn.functional.gelu(y), -1).clamp(0, 1), torch.nn.functional.silu(
            x
        )

    ops = targets(fn, x)
    assert all(t.startswith("aten.") or "getitem" in t for t in ops), ops
    assert "aten.erf.default" in ops and "aten.var_mean.correction" in ops
    assert "aten.silu.default" in ops and "aten.arange.default" in ops


@pytest.mark.parametrize("shape", [(7, 11), (11,)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_nll_loss_backward_is_pointwise_and_exact(shape, dtype):
    """mlc's nll_loss_backward gives eager's gradient bit for bit, for every reduction, with and
    without a weight and an ignored class, and reads its `self` argument for the shape only (so
    AOTAutograd need not save the forward's log-softmax)."""
    torch.manual_seed(0)
    x = torch.randn(shape, dtype=dtype).log_softmax(-1)
    target = torch.tensor([3, 0, 10, 3, 5, 9, 1]) if len(shape) == 2 else torch.tensor(3)
    weight = torch.rand(shape[-1], dtype=dtype)
    backward = decomposition_table()[aten.nll_loss_backward.default]
    for reduction in (0, 1, 2):
        for ignore_index in (-100, 3):
            for w in (None, weight):
                out, total_weight = aten.nll_loss_forward(x, target, w, reduction, ignore_index)
                grad = torch.randn_like(out)
                args = (grad, x, target, w, reduction, ignore_index, total_weight)
                expected = aten.nll_loss_backward(*args)
                got = backward(*args)
                assert got.dtype == expected.dtype
                torch.testing.assert_close(got, expected, rtol=0, atol=0)
                gm = make_fx(lambda g, x, t, tw: backward(g, x, t, w, reduction, ignore_index, tw))(
                    grad, x, target, total_weight
                )
                (self_arg,) = [n for n in gm.graph.nodes if n.op == "placeholder" and n.name.startswith("x")]
                assert not self_arg.users, gm.code
