"""Inputs a graph writes (a batch norm's running statistics, a cache updated in place): the
compiled graph computes the new values and copies them into the inputs (`fx_graph.input_mutations`)."""

from __future__ import annotations

import copy

import pytest
import torch
from torch.fx.experimental.proxy_tensor import make_fx

from mlc.frontend import fx_graph


def functional_graph(f, *inputs) -> torch.fx.GraphModule:
    """`f` traced as AOTAutograd keeps input mutations: functional ops, then `copy_` into the
    inputs."""
    return make_fx(torch.func.functionalize(f, remove="mutations_and_views"), tracing_mode="fake")(*inputs)


def test_a_copy_into_an_input_becomes_an_output():
    def update(stats, x):
        stats.mul_(0.9).add_(x.mean(0), alpha=0.1)
        return (x * 2,)  # AOTAutograd's graphs return a tuple

    gm = functional_graph(update, torch.zeros(4), torch.randn(3, 4))
    assert any(n.target is torch.ops.aten.copy_.default for n in gm.graph.nodes)
    rewritten, mutated = fx_graph.input_mutations(gm)
    assert mutated == [0]
    assert not any(n.target is torch.ops.aten.copy_.default for n in rewritten.graph.nodes)
    stats, x = torch.zeros(4), torch.randn(3, 4)
    doubled, new_stats = rewritten(stats.clone(), x)
    torch.testing.assert_close(doubled, x * 2)
    torch.testing.assert_close(new_stats, 0.1 * x.mean(0))


def test_a_broadcasting_copy_stays():
    """A copy that broadcasts is not a write-back of a value of the input's shape: left for the
    importer (which refuses in-place ops with a message)."""
    def fill(buffer, row, other):
        buffer.copy_(row)
        return (other * 2,)

    gm = make_fx(fill, tracing_mode="fake")(torch.zeros(3, 4), torch.randn(4), torch.randn(2))
    assert [n for n in gm.graph.nodes if n.target is torch.ops.aten.copy_.default]
    assert fx_graph.input_mutations(gm)[1] == []


@pytest.fixture
def foreach_copies(monkeypatch):
    """The lists each `_foreach_copy_` call wrote."""
    calls: list[int] = []
    real = torch._foreach_copy_

    def counted(targets, sources, *args, **kwargs):
        calls.append(len(targets))
        return real(targets, sources, *args, **kwargs)

    monkeypatch.setattr(torch, "_foreach_copy_", counted)
    return calls


def test_batch_norm_statistics_written_back_per_dtype(device, foreach_copies):
    """Training steps of a batch norm: its running mean and variance (float) and its count of
    batches (int64) are written by two copies, one per dtype, and equal eager's every step."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.ReLU()).to(device)
    reference = copy.deepcopy(model)
    compiled = torch.compile(model, backend="mlc", fullgraph=True, dynamic=False)
    x = torch.randn(2, 3, 9, 9, device=device)
    for step in range(2):
        compiled(x + step).square().sum().backward()
        reference(x + step).square().sum().backward()
        bn, ref = model[1], reference[1]
        torch.testing.assert_close(bn.running_mean, ref.running_mean)
        torch.testing.assert_close(bn.running_var, ref.running_var)
        assert bn.num_batches_tracked.item() == ref.num_batches_tracked.item() == step + 1
        torch.testing.assert_close(model[0].weight.grad, reference[0].weight.grad, atol=1e-4, rtol=1e-4)
    assert sorted(foreach_copies) == [1, 1, 2, 2]


def test_a_cache_written_in_place_without_grad(device):
    """Inference that writes a row of a cache (an input): the cache holds the row after the call."""
    def write(cache, position, row):
        cache[position].copy_(row)
        return cache.sum(0)

    compiled = torch.compile(write, backend="mlc", fullgraph=True, dynamic=False)
    cache, expected = torch.zeros(4, 8, device=device), torch.zeros(4, 8, device=device)
    for position in (1, 2):
        row = torch.randn(8, device=device)
        with torch.no_grad():
            torch.testing.assert_close(compiled(cache, position, row), write(expected, position, row))
        torch.testing.assert_close(cache, expected)


def _add_returned(x):
    x.add_(1)
    return x


def _views_written(x, y):
    x[0].mul_(2)
    y.t().add_(1)
    return x.sum() + y.sum()


def _written_and_viewed(x):
    y = x.add_(1)
    return y.view(-1, 1), x * 2


@pytest.mark.parametrize("f, shapes", [
    (_add_returned, [(3,)]),  # the graph returns the copy: the input itself, written
    (_views_written, [(2, 3), (3, 3)]),  # writes through views: the whole input is the value
    (_written_and_viewed, [(3,)]),  # a view of the written input, returned
])
def test_inputs_written_in_place_as_eager_writes_them(device, f, shapes):
    inputs = [torch.randn(*s, device=device) for s in shapes]
    expected_inputs = [t.clone() for t in inputs]
    compiled = torch.compile(f, backend="mlc", fullgraph=True, dynamic=False)
    with torch.no_grad():
        got, want = compiled(*inputs), f(*expected_inputs)
    for a, b in zip(inputs, expected_inputs):
        torch.testing.assert_close(a, b)
    got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b)
    if f is _add_returned:
        assert got[0] is inputs[0]
    if f is _written_and_viewed:  # the view is of the input: writing it writes the input
        got[0].zero_()
        assert not inputs[0].any()
