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
