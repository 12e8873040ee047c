"""The decomposition table against the ops it replaces (`tools/decomp_audit.py`).

Each entry of `decomposition_table()` must return what its op returns (outputs, dtypes,
shapes, values) on the calls that OpInfo samples make, forward and backward ops alike; for an
entry decomposed above autograd (CompositeImplicitAutograd), gradients through it must also
match. `make test` checks the calls made by the OpInfos of the ops mlc decomposes on purpose
(`SUBSET`); `python -m mlc.tools.decomp_audit` checks every op_db entry (minutes) and prints
what no sample reaches.
"""

from __future__ import annotations

import warnings
from functools import cache
from typing import Any

import pytest
import torch

from mlc.frontend.decompositions import decomposition_table
from mlc.tools.decomp_audit import Finding, above_autograd, audit, check_call

SUBSET = """
    nn.functional.gelu softmax log_softmax nn.functional.layer_norm nn.functional.group_norm
    nn.functional.batch_norm nn.functional.elu nn.functional.hardtanh nn.functional.leaky_relu
    index_select addcmul addcdiv lerp addmv linalg.vector_norm nn.functional.silu
    nn.functional.mse_loss nn.functional.binary_cross_entropy nn.functional.hardswish
    nn.functional.softplus nn.functional.mish nn.functional.logsigmoid var_mean std
    nn.functional.cross_entropy nn.functional.nll_loss torch.ops.aten._safe_softmax.default
""".split()
"""OpInfos (op_db keys) whose samples reach the entries mlc relies on: its ADDITIONS and the
backward ops of the common layers."""

SAMPLES = 2

KNOWN_VIOLATIONS: dict[str, str] = {}
"""Entries known to break their contract (op -> what is wrong), until decompositions.py drops
or fixes them; an entry here that holds again fails the test, so the list stays true."""


@cache
def _opinfos() -> dict[str, Any]:
    from torch.testing._internal.common_methods_invocations import op_db

    return {_key(op): op for op in op_db if torch.float32 in op.supported_dtypes("cpu")}


def _key(op: Any) -> str:
    return f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name


def _audit(names: list[str], samples: int) -> tuple[list[Finding], dict[Any, int]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return audit(decomposition_table(), [_opinfos()[n] for n in names], samples)


def _check(findings: list[Finding], checked: dict[Any, int]) -> None:
    new = [f for f in findings if f.op not in KNOWN_VIOLATIONS]
    assert not new, "\n".join(f"{f.op} ({f.phase}): {f.what}\n    call: {f.call}" for f in new)
    found = {f.op for f in findings}
    fixed = [op for op in map(str, checked) if op in KNOWN_VIOLATIONS and op not in found]
    assert not fixed, f"no longer violated, remove from KNOWN_VIOLATIONS: {fixed}"


@pytest.mark.parametrize("name", SUBSET)
def test_decompositions_reached_by(name: str) -> None:
    findings, checked = _audit([name], SAMPLES)
    assert checked, f"the samples of {name} reach no entry of the table"
    _check(findings, checked)


def test_a_wrong_decomposition_is_reported() -> None:
    """The check itself: a decomposition off by a little, or returning one output too few."""
    x = torch.randn(4, 8)
    op = torch.ops.aten.gelu.default
    (finding,) = check_call(op, lambda t, **kw: torch.ops.aten.gelu.default(t) * 1.001, (x,), {})
    assert finding.phase == "forward" and "values differ" in finding.what
    layer_norm = torch.ops.aten.native_layer_norm.default
    args = (x, [8], None, None, 1e-5)
    (finding,) = check_call(layer_norm, lambda *a: layer_norm(*a)[:2], args, {})
    assert finding.what == "2 outputs, the op returns 3"


def test_composite_entries_are_checked_through_autograd() -> None:
    """An entry decomposed above autograd is differentiated through: wrong gradients with the
    right values are a violation (`linear` written with a detached weight)."""
    linear = torch.ops.aten.linear.default
    assert above_autograd(linear)
    x, w = torch.randn(3, 4), torch.randn(5, 4)
    (finding,) = check_call(linear, lambda a, b, bias=None: a @ b.detach().t(), (x, w), {})
    assert finding.phase == "backward"
