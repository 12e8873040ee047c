"""CUDA-graph replays in training loops through torch.compile, compared step by step with eager
on a twin model: the patterns that would catch a replay over memory someone still uses. On a
GPU the calls replay real CUDA graphs (`MLC_CUDAGRAPHS=1`); on CPU the backend's graphs take the
stand-in recorder (`cudagraph_standin.py`), whose replays fill with NaN what other recordings of
their pool hold in the memory they write. The stand-in reads inputs where the recording saw
them, so the loops refill one input tensor in place."""

from __future__ import annotations

import copy

import pytest
import torch
from cudagraph_standin import InPlaceRecorder  # registered by conftest.py

from mlc.frontend import cudagraphs
from mlc.frontend.cudagraphs import CudaGraphCall

GPU = torch.cuda.is_available()
DEVICE = "cuda" if GPU else "cpu"


@pytest.fixture
def replayed(monkeypatch) -> list[CudaGraphCall]:
    """Every graph the backend compiles replays CUDA graphs (on CPU: the stand-in's); the
    CudaGraphCalls it makes, in order."""
    torch._dynamo.reset()
    made: list[CudaGraphCall] = []
    init = CudaGraphCall.__init__
    recorder = InPlaceRecorder()

    def remember(self, *args, **kwargs):
        if not GPU:
            kwargs.update(recorder=recorder, device_type="cpu")
        init(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(CudaGraphCall, "__init__", remember)
    if GPU:
        monkeypatch.setenv("MLC_CUDAGRAPHS", "1")
    else:
        monkeypatch.setattr(cudagraphs, "policy", lambda *args, **kwargs: cudagraphs.Decision("asked", "the test"))
    return made


def twins(seed: int = 0) -> tuple[torch.nn.Module, torch.nn.Module]:
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 8)).to(DEVICE)
    return model, copy.deepcopy(model)


def close(a: torch.Tensor, b: torch.Tensor) -> None:
    torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)


def sgd(model: torch.nn.Module) -> None:
    with torch.no_grad():
        for p in model.parameters():
            p -= 0.1 * p.grad
            p.grad = None


def train_step_against_eager(compiled, model: torch.nn.Module, reference: torch.nn.Module, x: torch.Tensor) -> None:
    """One step of `compiled` (of `model`) and of its eager twin `reference` on `x`: equal losses,
    then each updated by its gradients."""
    got = compiled(x).square().mean()
    got.backward()
    want = reference(x).square().mean()
    want.backward()
    close(got, want)
    sgd(model), sgd(reference)


def test_outputs_held_across_steps(replayed):
    """Every step's output and loss are kept to the end: none may be overwritten by a later
    step's replay."""
    model, reference = twins()
    compiled = torch.compile(model, backend="mlc")
    x = torch.randn(8, 16, device=DEVICE)
    kept = []
    for step in range(5):
        x.add_(0.25)
        for m in (compiled, reference):
            out = m(x)
            loss = out.square().mean()
            loss.backward()
            kept.append((out, loss))
            sgd(model if m is compiled else reference)
    for (out, loss), (ref_out, ref_loss) in zip(kept[0::2], kept[1::2]):
        close(out, ref_out)
        close(loss, ref_loss)
    assert sum(g.calls["recorded"] for g in replayed) >= 2


def test_train_and_eval_alternate(replayed):
    """A training step, then an evaluation without gradients (another graph), each step."""
    model, reference = twins(1)
    compiled = torch.compile(model, backend="mlc")
    x = torch.randn(8, 16, device=DEVICE)
    for step in range(4):
        x.add_(0.5)
        for m, r in ((compiled, model), (reference, reference)):
            r.train()
            m(x).square().mean().backward()
            sgd(r)
        model.eval(), reference.eval()
        with torch.no_grad():
            close(compiled(x), reference(x))
        model.train(), reference.train()
    for p, q in zip(model.parameters(), reference.parameters()):
        close(p, q)
    assert len(replayed) == 3 and all(g.calls["replayed"] for g in replayed), [g.calls for g in replayed]


def test_gradients_accumulated_over_steps(replayed):
    """Three backward passes add into the same `.grad` (the first replay's may be the
    recording's memory, lent to autograd) before each update."""
    model, reference = twins(2)
    compiled = torch.compile(model, backend="mlc")
    x = torch.randn(8, 16, device=DEVICE)
    for step in range(3):
        for micro in range(3):
            x.add_(0.1)
            compiled(x).square().mean().backward()
            reference(x).square().mean().backward()
        for p, q in zip(model.parameters(), reference.parameters()):
            close(p.grad, q.grad)
        sgd(model), sgd(reference)
    for p, q in zip(model.parameters(), reference.parameters()):
        close(p, q)


def test_outputs_mutated_by_the_user(replayed):
    """The user scales each step's output in place and keeps it: a replay may neither write
    over it nor read the mutation back."""
    model, reference = twins(3)
    compiled = torch.compile(model, backend="mlc")
    x = torch.randn(8, 16, device=DEVICE)
    kept = []
    with torch.no_grad():
        for step in range(4):
            x.add_(1.0)
            out, ref = compiled(x), reference(x)
            out.mul_(step + 2), ref.mul_(step + 2)
            kept.append((out, ref))
    for out, ref in kept:
        close(out, ref)
    assert replayed[0].calls["busy"] >= 1  # past its recordings, every one's outputs held


def test_two_models_in_one_process(replayed):
    """Steps of two compiled models interleave (their recordings in pools of their own)."""
    first, first_ref = twins(4)
    second, second_ref = twins(5)
    a, b = torch.compile(first, backend="mlc"), torch.compile(second, backend="mlc")
    x = torch.randn(8, 16, device=DEVICE)
    for step in range(4):
        x.add_(0.3)
        train_step_against_eager(a, first, first_ref, x)
        train_step_against_eager(b, second, second_ref, x)
    # one architecture: Dynamo's graphs serve both, a recording for each model's parameters
    assert all(g.calls["recorded"] == 2 and g.calls["replayed"] >= 4 for g in replayed), [g.calls for g in replayed]


def test_a_new_batch_size_mid_run(replayed):
    """The batch size changes at step 2 and back at step 4 (Dynamo compiles the new size, whose
    graphs record their own; the old ones replay again)."""
    model, reference = twins(6)
    compiled = torch.compile(model, backend="mlc", dynamic=False)
    inputs = {8: torch.randn(8, 16, device=DEVICE), 5: torch.randn(5, 16, device=DEVICE)}
    for step, batch in enumerate((8, 8, 5, 5, 8, 8)):
        x = inputs[batch]
        x.add_(0.2)
        train_step_against_eager(compiled, model, reference, x)
    assert len(replayed) == 4  # forward and backward at each size
    assert all(g.calls["replayed"] >= 2 for g in replayed[:2]), [g.calls for g in replayed]


def test_a_compiled_optimizer_step(replayed):
    """The optimizer's step compiled too (SGD with momentum: its buffers and the parameters
    updated in place, the gradients read where the backward's replay left them), every step
    against eager's. (On CPU fewer calls replay: Triton's interpreter keeps a launch's arguments
    until the next launch, so the step's last gradient stays referenced after `zero_grad` and
    keeps the backward's first recording busy; the forward records twice, then runs normally.)"""
    model, reference = twins(7)
    compiled = torch.compile(model, backend="mlc")
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    ref_opt = torch.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    step = torch.compile(opt.step, backend="mlc")
    x = torch.randn(8, 16, device=DEVICE)
    for _ in range(5):
        x.add_(0.1)
        for m, o, s in ((compiled, opt, step), (reference, ref_opt, ref_opt.step)):
            o.zero_grad()
            m(x).square().mean().backward()
            s()
        for p, q in zip(model.parameters(), reference.parameters()):
            close(p, q)
    assert sum(g.calls["replayed"] for g in replayed) >= 3, [g.calls for g in replayed]


def test_dropout_draws_a_new_mask_at_every_replay(replayed):
    """A step with dropout (an extern, aten's `native_dropout`, in the graph): every replayed step
    draws a new mask, as CUDA's generator advances its offset for each replay of a captured
    graph (a capture that froze the random state would train on one mask for good, without an
    error), and the backward scales the gradient by the mask its forward drew."""
    x = torch.ones(64, 64, device=DEVICE, requires_grad=True)

    def fn(x):
        return torch.nn.functional.dropout(x * 3, 0.5, training=True)

    compiled = torch.compile(fn, backend="mlc", fullgraph=True, dynamic=False)
    masks = []
    for _ in range(5):
        out = compiled(x)
        out.backward(torch.ones_like(out))
        kept = out != 0
        torch.testing.assert_close(out, kept * 6.0)  # 3 * 1 / (1 - 0.5) where kept
        torch.testing.assert_close(x.grad, kept * 6.0)
        assert 0.4 < kept.float().mean().item() < 0.6
        masks.append(kept)
        x.grad = None
        del out
    assert all(not torch.equal(a, b) for a, b in zip(masks, masks[1:]))
    assert all(g.calls["replayed"] >= 3 for g in replayed), [g.calls for g in replayed]


def test_a_backward_run_twice_with_retain_graph(replayed):
    """`backward(retain_graph=True)`, then again: the saved activations outlive the first
    backward (autograd keeps them), so its replay must not take their memory; the gradients add
    up as eager's do."""
    model, reference = twins(8)
    compiled = torch.compile(model, backend="mlc")
    x = torch.randn(8, 16, device=DEVICE)
    for step in range(4):
        x.add_(0.1)
        for m, r in ((compiled, model), (reference, reference)):
            r.zero_grad()
            loss = m(x).square().mean()
            loss.backward(retain_graph=True)
            loss.backward()
        for p, q in zip(model.parameters(), reference.parameters()):
            close(p.grad, q.grad)
        sgd(model), sgd(reference)


@pytest.mark.skipif(GPU, reason="a stand-in recorder whose replays run nothing")
def test_a_replay_writes_the_inputs_it_updates(monkeypatch):
    """The running statistics a batch norm updates are written by the recorded call itself, so a
    CUDA graph's replay writes them with its kernels and the host launches no copy around it:
    with a stand-in whose replays run nothing, they keep the first (unrecorded) call's values."""

    class Inert(InPlaceRecorder):
        def record(self, call, args, pool, staged=()):
            _, handed, staged_memory = super().record(call, args, pool, staged)
            return (lambda: None), handed, staged_memory

    recorder = Inert()
    init = CudaGraphCall.__init__
    monkeypatch.setattr(CudaGraphCall, "__init__", lambda self, *a, **k: init(self, *a, **{**k, "recorder": recorder,
                                                                                            "device_type": "cpu"}))
    monkeypatch.setattr(cudagraphs, "policy", lambda *args, **kwargs: cudagraphs.Decision("asked", "the test"))
    torch._dynamo.reset()
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.BatchNorm1d(32)).train()
    compiled = torch.compile(model, backend="mlc", fullgraph=True)
    x = torch.randn(8, 16)
    with torch.no_grad():
        compiled(x)  # the first call runs normally
        after_first = model[1].running_mean.clone()
        for _ in range(2):  # recorded, then replayed: the (inert) replays write the statistics
            compiled(x)
    assert recorder.records == 1
    assert model[1].num_batches_tracked.item() == 1
    torch.testing.assert_close(model[1].running_mean, after_first, rtol=0, atol=0)


def test_inputs_the_graph_updates_in_place(replayed):
    """A batch norm in training updates its running statistics in place (inputs the forward
    mutates): every replay must update the module's own tensors, as eager does, step by step."""
    torch.manual_seed(9)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.BatchNorm1d(32), torch.nn.ReLU(),
                                torch.nn.Linear(32, 8)).to(DEVICE)
    reference = copy.deepcopy(model)
    compiled = torch.compile(model, backend="mlc")
    x = torch.randn(8, 16, device=DEVICE)
    for _ in range(4):
        x.add_(0.2)
        train_step_against_eager(compiled, model, reference, x)
        bn, ref_bn = model[1], reference[1]
        close(bn.running_mean, ref_bn.running_mean)
        close(bn.running_var, ref_bn.running_var)
        assert bn.num_batches_tracked.item() == ref_bn.num_batches_tracked.item()
    assert all(g.calls["replayed"] >= 1 for g in replayed), [g.calls for g in replayed]


def test_two_forwards_before_one_backward(replayed):
    """Two forwards (their activations held meanwhile), then one backward through both: each
    forward call has its own recording, and the backwards read activations of either."""
    model, reference = twins(10)
    compiled = torch.compile(model, backend="mlc")
    x = torch.randn(8, 16, device=DEVICE)
    y = torch.randn(8, 16, device=DEVICE)
    for _ in range(4):
        x.add_(0.1), y.sub_(0.1)
        for m, r in ((compiled, model), (reference, reference)):
            (m(x).square().mean() + m(y).abs().mean()).backward()
        for p, q in zip(model.parameters(), reference.parameters()):
            close(p.grad, q.grad)
        sgd(model), sgd(reference)


class TwoOutputs(torch.nn.Module):
    """Returns its hidden activation (which its backward reads) beside its output."""

    def __init__(self):
        super().__init__()
        self.first, self.second = torch.nn.Linear(16, 32), torch.nn.Linear(32, 8)

    def forward(self, x):
        hidden = torch.nn.functional.gelu(self.first(x))
        return self.second(hidden), hidden


def test_an_activation_the_caller_keeps_across_the_backward(replayed):
    """The backward's capture freed the hidden activation (nobody else held it then) and took its
    memory; a later step whose caller keeps the activation across the backward must still
    read its values afterwards."""
    torch.manual_seed(11)
    model = TwoOutputs().to(DEVICE)
    reference = copy.deepcopy(model)
    compiled = torch.compile(model, backend="mlc")
    x = torch.randn(8, 16, device=DEVICE)
    for step in range(5):
        x.add_(0.1)
        kept = {}
        for m, r in ((compiled, model), (reference, reference)):
            out, hidden = m(x)
            if step >= 3:  # the first steps drop it before the backward
                kept[m is compiled] = hidden
            del hidden
            out.square().mean().backward()
            del out
        if kept:
            close(kept[True], kept[False])
        for p, q in zip(model.parameters(), reference.parameters()):
            close(p.grad, q.grad)
        sgd(model), sgd(reference)


def test_a_number_from_the_host_wherever_it_lands(replayed):
    """A 0-d CPU tensor input (a scale) is moved to the GPU for each call, wherever the allocator
    puts it: the recording copies it in (a staged input) and replays every step, with the
    number of that step."""
    model, reference = twins(12)
    compiled = torch.compile(lambda x, scale: model(x) * scale, backend="mlc")
    x = torch.randn(8, 16, device=DEVICE)
    kept = []  # moves the allocator's next free block, as other work between steps does
    for step in range(5):
        scale = torch.tensor(1.0 + step)
        got = compiled(x, scale).square().mean()
        got.backward()
        want = (reference(x) * scale.to(DEVICE)).square().mean()
        want.backward()
        close(got, want)
        for p, q in zip(model.parameters(), reference.parameters()):
            close(p.grad, q.grad)
        sgd(model), sgd(reference)
        kept.append(torch.empty(64 + step, device=DEVICE))
    if GPU:  # on CPU nothing is moved: the scale is read where it is
        assert all(g.calls["replayed"] >= 2 for g in replayed), [g.calls for g in replayed]


def test_an_input_copied_into_the_layout_the_kernels_index(replayed):
    """A graph of symbolic sizes indexes its inputs row-major and copies one that comes
    otherwise (a transposed view) on each call; the copy is part of the recording, made in its
    memory, so that the call replays every step wherever the allocator would have put a copy
    (a BERT backward's saved tensors, on the GPU, went busy once other work moved the
    allocator's free blocks)."""
    model, reference = twins(13)
    compiled = torch.compile(model, backend="mlc", dynamic=True)
    x = torch.randn(16, 64, device=DEVICE)
    kept = []  # moves the allocator's next free block, as other work between steps does
    for step in range(6):
        x.add_(0.1)
        train_step_against_eager(compiled, model, reference, x.t())
        kept.append(torch.empty(4096 * (step + 1), device=DEVICE))
    assert all(g.calls["replayed"] >= 3 for g in replayed), [g.calls for g in replayed]


class ScaledTwoOutputs(torch.nn.Module):
    """TwoOutputs without its matmuls: a first capture in a process that runs cuBLAS allocates
    cuBLAS's workspaces for the capturing stream and thread (tens of MB, for good), which would
    hide the memory a test of the pool measures."""

    def __init__(self):
        super().__init__()
        self.first, self.second = torch.nn.Parameter(torch.randn(16)), torch.nn.Parameter(torch.randn(16))

    def forward(self, x):
        hidden = torch.nn.functional.gelu(x * self.first)
        return hidden * self.second, hidden


def test_a_tangent_is_copied_into_memory_the_backward_reuses(replayed):
    """The loss reads one output, not the other (a language model's logits): autograd gives the
    backward zeros as large as that output for its tangent, which the recording copies in
    before each replay. The copy lies in the pool, freed at its last read like a temporary, so
    between steps nothing is allocated that the first (normal) step did not hold."""
    torch.manual_seed(14)
    model = ScaledTwoOutputs().to(DEVICE)
    reference = copy.deepcopy(model)
    compiled = torch.compile(model, backend="mlc")
    rows = 8192 if GPU else 64  # on the GPU hidden is 512 KiB of float32, the memory checked
    x = torch.randn(rows, 16, device=DEVICE)
    between = []
    for step in range(5):
        x.add_(0.1)
        for m in (compiled, reference):
            out, hidden = m(x)
            out.square().mean().backward()
            del out, hidden
        for p, q in zip(model.parameters(), reference.parameters()):
            close(p.grad, q.grad)
        sgd(model), sgd(reference)
        between.append(torch.cuda.memory_allocated() if GPU else 0)
    assert all(g.calls["replayed"] >= 2 for g in replayed), [g.calls for g in replayed]
    assert max(between[2:]) - between[0] < rows * 16 * 4 / 2, between
