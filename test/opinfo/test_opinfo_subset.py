"""A fixed subset of PyTorch's OpInfo ops through mlc, against eager (what `mlc-opinfo-sweep`
does for every op, here for ops that pass): pointwise, reductions, views, norms and losses,
the first samples of each, forward and backward (see `tools/opinfo_check.py`).

The whole sweep takes long under Triton's interpreter; this subset keeps a regression in the
common ops visible in `make test`. An op that starts failing here is a regression: run
`mlc-opinfo-sweep --ops NAME` for every sample and the cause.
"""

from __future__ import annotations

import os

import torch

if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"

from functools import cache  # noqa: E402
from typing import Any  # noqa: E402

import pytest  # noqa: E402

from mlc.tools.opinfo_check import check_sample, op_key  # noqa: E402

SAMPLES = 2
"""Samples per op (the first ones OpInfo makes: the common shapes and argument forms)."""

SUBSET = """
    abs add mul div.no_rounding_mode div.floor_rounding pow exp log log1p rsqrt sigmoid tanh
    sin erf neg clamp where maximum lerp addcmul remainder sign round nan_to_num
    sum mean prod amax var var_mean logsumexp max.reduction_with_dim argmax cumsum norm
    reshape permute transpose expand flip squeeze unsqueeze select slice cat stack split
    tile roll constant_pad_nd tril slice_scatter select_scatter
    softmax log_softmax nn.functional.layer_norm nn.functional.group_norm nn.functional.batch_norm
    nn.functional.rms_norm nn.functional.gelu nn.functional.silu nn.functional.hardtanh
    nn.functional.elu nn.functional.leaky_relu nn.functional.softplus
    nn.functional.mse_loss nn.functional.l1_loss nn.functional.nll_loss nn.functional.cross_entropy
    nn.functional.binary_cross_entropy_with_logits nn.functional.linear index_select gather
""".split()
"""Op_db keys (name or name.variant) that pass every sample of the sweep."""


@cache
def _ops() -> dict[str, Any]:
    from torch.testing._internal.common_methods_invocations import op_db

    return {op_key(op): op for op in op_db}


def _device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


@pytest.mark.parametrize("name", SUBSET)
def test_opinfo(name: str) -> None:
    op = _ops()[name]
    samples = op.sample_inputs(_device(), torch.float32, requires_grad=op.supports_autograd)
    outcomes = []
    for i, sample in enumerate(samples):
        if i == SAMPLES:
            break
        torch.manual_seed(0)
        outcomes += check_sample(op, sample, i)
    failed = [o for o in outcomes if o.status not in ("pass", "eager-error")]
    assert not failed, "\n".join(f"{o.phase} sample {o.sample}: {o.status}: {o.detail}" for o in failed)
    assert any(o.status == "pass" for o in outcomes), "no sample that eager runs"


class _WrongUnderCompile:
    """An op that computes something else when compiled: the check must say mismatch."""

    name, variant_test_name, supports_autograd = "wrong", "", True

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2 if torch.compiler.is_compiling() else x + x + 1e-3


def test_the_check_detects_a_mismatch() -> None:
    from torch.testing._internal.opinfo.core import SampleInput

    x = torch.randn(4, 8, device=_device(), requires_grad=True)
    forward, backward = check_sample(_WrongUnderCompile(), SampleInput(x), 0)
    assert (forward.status, backward.status) == ("mismatch", "pass")
    assert forward.cause == "mismatch: Tensor-likes are not close"


class _BreaksTheGraph:
    """An op Dynamo cannot trace whole (a graph break between two graphs)."""

    name, variant_test_name, supports_autograd = "breaks", "", True

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.sin(x)
        torch._dynamo.graph_break()
        return y * x.sum()


class _BreaksAndIsWrong(_BreaksTheGraph):
    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.sin(x) + (1e-3 if torch.compiler.is_compiling() else 0.0)
        torch._dynamo.graph_break()
        return y * x.sum()


def test_graph_breaks_pass_split_only_when_mlc_is_right() -> None:
    """fullgraph=True fails on the break (Dynamo's, not mlc's); allowed to break, the pieces go
    through mlc and the result is compared: `pass-split` if right, `dynamo` stays if wrong."""
    from torch.testing._internal.opinfo.core import SampleInput

    x = torch.randn(4, 8, device=_device(), requires_grad=True)
    forward, backward = check_sample(_BreaksTheGraph(), SampleInput(x), 0)
    assert (forward.status, backward.status) == ("pass-split", "pass-split")
    forward, _ = check_sample(_BreaksAndIsWrong(), SampleInput(x), 0)
    assert forward.status == "dynamo"
