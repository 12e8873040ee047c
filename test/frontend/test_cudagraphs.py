"""The CUDA-graph policy of `mlc.frontend.cudagraphs`: when a call is recorded, replayed, or run
normally. On CPU a stand-in recorder (`cudagraph_standin.py`) imitates a replay by writing the
call's new results into the recorded memory, as a CUDA graph does: a replay over an output
someone still holds would show up as that output changing. On a GPU the real recorder runs
the same checks through `torch.compile`; the training loops are in `test_cudagraphs_training.py`."""

from __future__ import annotations

import gc
import weakref

import pytest
import torch
from cudagraph_standin import InPlaceRecorder  # registered by conftest.py

from mlc.frontend import cudagraphs
from mlc.frontend.cudagraphs import CudaGraphCall


def double_and_sum(args):
    (x,) = args
    return [x * 2, x.sum().reshape(1)]


def graphed(recorder, max_recordings=2):
    return CudaGraphCall(double_and_sum, recorder, max_recordings=max_recordings, device_type="cpu")


def test_first_call_runs_normally_then_records_once_and_replays():
    rec = InPlaceRecorder()
    g = graphed(rec)
    x = torch.arange(4.0)
    for i in range(5):
        out = g([x])
        torch.testing.assert_close(out[0], x * 2)
        del out
    assert (rec.records, rec.replays) == (1, 4)  # a recording is replayed at once for its call
    assert g.calls == {"first": 1, "recorded": 1, "replayed": 3}


def test_held_outputs_are_never_overwritten():
    rec = InPlaceRecorder()
    g = graphed(rec)
    x = torch.arange(4.0)
    g([x])  # warm-up
    kept = []
    for i in range(4):
        x.add_(1)  # in place: the same address, new values
        kept.append((g([x])[0], x * 2))
    for out, expected in kept:
        torch.testing.assert_close(out, expected)
    # two recordings (the first call's outputs were held by then), then the normal path
    assert rec.records == 2
    assert g.calls == {"first": 1, "recorded": 2, "busy": 2}


def test_a_call_that_runs_normally_for_held_outputs_says_which_once():
    """A loop that keeps every step's output (a loss in a list) makes both recordings busy and
    the calls run normally, 3x slower on a host-bound step, without an error: the first such
    call says so, naming the outputs held, in the dump's cudagraphs.txt and a warning."""
    said: list[str] = []
    g = CudaGraphCall(double_and_sum, InPlaceRecorder(), device_type="cpu", name="graph_7", report=said.append)
    x = torch.arange(4.0)
    g([x])
    kept = [g([x]) for _ in range(2)]  # both recordings' outputs held
    with pytest.warns(UserWarning, match=r"graph_7: cudagraphs: a call runs normally") as caught:
        kept += [g([x]) for _ in range(3)]
    assert len(caught) == 1 and len(said) == 1, said
    assert "recording 1: its last outputs are still referenced: output 0 (float32 [4]), output 1 (float32 [1])" in said[0]
    assert "recording 2: its last outputs are still referenced" in said[0] and "`.item()`" in said[0]
    assert g.calls == {"first": 1, "recorded": 2, "busy": 3}


def test_a_replayed_recording_held_is_named_too():
    """The same report for a recording whose outputs a replay rebuilt (counted by references,
    not weak ones): only the view kept of output 1 holds it."""
    said: list[str] = []
    g = CudaGraphCall(double_and_sum, InPlaceRecorder(), device_type="cpu", report=said.append)
    x = torch.arange(4.0)
    g([x]), g([x])  # first, recorded
    kept = g([x])[1][:1]  # replayed; a view of output 1 kept
    held = g([x])  # a second recording, held
    with pytest.warns(UserWarning, match="runs normally"):
        g([x])
    assert g.calls == {"first": 1, "recorded": 2, "replayed": 1, "busy": 1}
    assert "recording 1: its last outputs are still referenced: output 1 (float32 [1]);" in said[0], said
    del kept, held


def test_a_view_of_an_output_keeps_it_busy():
    rec = InPlaceRecorder()
    g = graphed(rec, max_recordings=1)
    x = torch.arange(4.0)
    g([x])
    first = g([x])[0][1:]  # only a view survives
    x.add_(10)
    second = g([x])
    torch.testing.assert_close(first, torch.arange(4.0)[1:] * 2)
    torch.testing.assert_close(second[0], x * 2)
    assert rec.replays == 1  # the second call's; the third found the recording busy and ran normally


def add_one(args):
    (x,) = args
    return [x + 1]


def test_a_reader_of_outputs_is_captured_into_their_pool():
    """A call reading another's outputs (a backward, its forward's activations) shares its pool;
    a call on other inputs has one of its own."""
    rec = InPlaceRecorder()
    forward, backward, other = graphed(rec), CudaGraphCall(add_one, rec, device_type="cpu"), graphed(rec)
    x = torch.arange(4.0)
    for _ in range(3):
        out = forward([x])
        torch.testing.assert_close(backward([out[0]])[0], x * 2 + 1)
        other([x + 10])
        del out
    assert backward.recordings[0].pool is forward.recordings[0].pool
    assert other.recordings[0].pool is not forward.recordings[0].pool
    assert forward.calls == backward.calls == {"first": 1, "recorded": 1, "replayed": 1}


def test_outputs_of_a_later_recording_in_the_pool_are_never_overwritten():
    """The forward's replay may write where the backward's outputs lie (its temporaries'
    memory): while the caller holds those (last step's gradients) the forward takes another
    recording, then the normal path; once they are dropped it replays its first again."""
    rec = InPlaceRecorder()
    forward, backward = graphed(rec), CudaGraphCall(add_one, rec, device_type="cpu")
    x = torch.arange(4.0)
    held = []
    for step in range(4):
        x.add_(1)
        out = forward([x])
        held.append((backward([out[0]])[0], x * 2 + 1))
        del out
    for grad, expected in held:
        torch.testing.assert_close(grad, expected)  # no NaN: never overwritten
    held.clear()
    x.add_(1)
    out = forward([x])
    torch.testing.assert_close(out[0], x * 2)
    assert forward.calls["replayed"] == 1 and forward.calls["busy"] >= 1, forward.calls


def plus_one_consuming(args):
    """As an emitted call: the inputs leave the list, so one nobody else holds dies at its read."""
    (x,) = args
    args.clear()
    return [x + 1]


def test_a_reader_takes_the_memory_of_inputs_it_frees_unless_someone_holds_them():
    """A backward frees the activations it reads (nobody else holds them), and its capture takes
    their memory. A later step whose caller also holds the activation must not replay over it:
    the reader records again (in a pool of its own), and the held tensor keeps its values."""
    rec = InPlaceRecorder()
    forward, backward = graphed(rec), CudaGraphCall(plus_one_consuming, rec, device_type="cpu")
    x = torch.arange(4.0)
    for step in range(4):
        x.add_(1)
        args = [forward([x])[0]]
        kept = args[0] if step == 3 else None  # the last step's caller keeps the activation
        torch.testing.assert_close(backward(args)[0], x * 2 + 1)
        if kept is not None:
            torch.testing.assert_close(kept, x * 2)  # not overwritten by the backward's replay
    first = backward.recordings[0]
    assert first.consumed == [0] and first.free_at_capture == {0: frozenset({0, 1})}
    assert forward.calls == {"first": 1, "recorded": 1, "replayed": 2}
    assert backward.calls == {"first": 1, "recorded": 2, "replayed": 1}, backward.calls
    assert backward.recordings[1].pool is not first.pool  # the forward's replayed outputs are in use


def rows_doubled(args):
    x, n = args  # a graph of symbolic sizes gets them as numbers besides its tensors
    return [x[:n] * 2]


def test_each_size_gets_its_recordings_up_to_max_sizes(monkeypatch):
    """A graph of symbolic sizes, called at sizes in turn: each records and then replays (two
    recordings per sizes, as for one); past MAX_SIZES sizes the new ones run normally."""
    monkeypatch.setattr(cudagraphs, "MAX_SIZES", 3)
    rec = InPlaceRecorder()
    g = CudaGraphCall(rows_doubled, rec, device_type="cpu")
    inputs = {n: torch.arange(float(n)) for n in (2, 3, 4, 5)}
    g([inputs[2], 2])
    for _ in range(3):
        for n, x in inputs.items():
            torch.testing.assert_close(g([x, n])[0], x * 2)
    assert rec.records == 3 and g.calls["too many sizes"] == 3, g.calls
    assert g.calls["replayed"] == 6 and g.calls["busy"] == 0, g.calls


def test_inputs_elsewhere_get_their_own_recording():
    rec = InPlaceRecorder()
    g = graphed(rec)
    a, b = torch.arange(4.0), torch.arange(4.0) + 100
    g([a])
    for _ in range(3):
        torch.testing.assert_close(g([a])[0], a * 2)
        torch.testing.assert_close(g([b])[0], b * 2)
    assert (rec.records, rec.replays) == (2, 6)


def test_inputs_off_the_device_run_normally():
    rec = InPlaceRecorder()
    g = CudaGraphCall(double_and_sum, rec, device_type="cuda")  # the inputs below are on the CPU
    x = torch.arange(4.0)
    for _ in range(3):
        torch.testing.assert_close(g([x])[0], x * 2)
    assert g.calls == {"first": 1, "elsewhere": 2} and rec.records == 0


def test_outputs_are_lent_to_autograd_and_outlive_their_graph():
    """A replay's outputs (the capture's are the caller's alone) are lent to autograd; held past
    their graph's end, they keep its pool (and so its memory) until they are dropped."""
    g = graphed(InPlaceRecorder())
    x = torch.arange(4.0)
    g([x])
    assert not torch._C._is_cached_tensor(g([x])[0])
    out = g([x])[0]
    assert torch._C._is_cached_tensor(out)
    pool = weakref.ref(g.recordings[0].pool)
    del g
    gc.collect()
    assert pool() is not None and torch._C._is_cached_tensor(out)
    del out
    other = graphed(InPlaceRecorder())
    other([x]), other([x])  # a capture prunes the pools kept
    gc.collect()
    assert pool() is None


def test_a_capture_that_fails_runs_normally_for_good():
    rec = InPlaceRecorder(fail=True)
    g = graphed(rec)
    x = torch.arange(4.0)
    with pytest.warns(UserWarning, match="cannot be captured"):
        for _ in range(3):
            torch.testing.assert_close(g([x])[0], x * 2)
    assert g.reason is not None and "capturing" in g.reason
    assert g.calls == {"first": 1, "not captured": 2}
    assert rec.records == 0


def test_a_capture_nobody_asked_for_fails_quietly():
    """No warning; the reason goes to `report` (the dump's cudagraphs.txt), once."""
    reported: list[str] = []
    g = CudaGraphCall(double_and_sum, InPlaceRecorder(fail=True), device_type="cpu", warn=False,
                      report=reported.append)
    x = torch.arange(4.0)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            torch.testing.assert_close(g([x])[0], x * 2)
    assert g.calls == {"first": 1, "not captured": 2}
    assert reported == ["the call cannot be captured, it runs normally from now on: "
                        "RuntimeError: operation not permitted when stream is capturing"]


def scaled(args):
    x, tangent = args
    return [x * tangent]


def test_a_staged_input_is_copied_in_wherever_it_lies():
    """A backward's tangent comes at a new address each step: the recording reads its own copy,
    refilled from the call's tensor before every replay, so one recording serves every step."""
    rec = InPlaceRecorder()
    g = CudaGraphCall(scaled, rec, device_type="cpu", staged=(1,))
    x = torch.arange(4.0)
    kept = []  # keeps the allocator from handing out one address again
    for step in range(5):
        tangent = torch.full((4,), float(step + 1))
        kept.append(tangent)
        torch.testing.assert_close(g([x, tangent])[0], x * (step + 1))
    assert g.calls == {"first": 1, "recorded": 1, "replayed": 3} and rec.records == 1
    # the caller's tensors are only read
    assert [t[0].item() for t in kept] == [1.0, 2.0, 3.0, 4.0, 5.0]


def test_a_staged_input_with_a_broadcast_dim():
    """A tangent may come expanded (a stride 0, the gradient of a sum): its copy has the same
    layout, and each replay copies its distinct elements in (a copy cannot write one element
    of an expanded tensor twice)."""
    rec = InPlaceRecorder()
    g = CudaGraphCall(scaled, rec, device_type="cpu", staged=(1,))
    x = torch.arange(8.0).reshape(2, 4)
    for step in range(4):
        tangent = torch.tensor([1.0, 2.0, 3.0, 4.0]).mul(step + 1).expand(2, 4)
        torch.testing.assert_close(g([x, tangent])[0], x * tangent)
    assert g.calls == {"first": 1, "recorded": 1, "replayed": 2} and rec.records == 1
    assert g.recordings[0].staged[1].stride == (0, 1)


def test_an_unstaged_input_at_a_new_address_is_another_recording():
    rec = InPlaceRecorder()
    g = CudaGraphCall(scaled, rec, device_type="cpu", max_recordings=2)
    x = torch.arange(4.0)
    tangents = [torch.full((4,), float(step + 1)) for step in range(4)]
    for step, tangent in enumerate(tangents):
        torch.testing.assert_close(g([x, tangent])[0], x * (step + 1))
    assert g.calls == {"first": 1, "recorded": 2, "busy": 1}


def test_an_output_that_is_a_staged_copy_keeps_its_recording_busy():
    """A backward may return a tangent as a gradient (that of `x + b` with respect to x): a
    replay returns the recording's copy, which the next replay refills, so while the caller
    holds it the recording is busy."""
    rec = InPlaceRecorder()
    g = CudaGraphCall(lambda args: [args[1], args[0] * args[1]], rec, device_type="cpu", staged=(1,))
    x = torch.arange(4.0)
    g([x, torch.ones(4)])
    held = g([x, torch.full((4,), 2.0)])[0]  # recorded: held is the staged copy
    for step in range(3):
        out = g([x, torch.full((4,), 3.0 + step)])
        torch.testing.assert_close(out[0], torch.full((4,), 3.0 + step))
    torch.testing.assert_close(held, torch.full((4,), 2.0))
    # the first recording stays busy; the second serves every other call (the one between
    # runs while `out` still holds the second's outputs)
    assert g.calls == {"first": 1, "recorded": 2, "busy": 1, "replayed": 1}


def test_a_staged_input_of_other_strides_is_another_recording():
    rec = InPlaceRecorder()
    g = CudaGraphCall(scaled, rec, device_type="cpu", staged=(1,))
    x = torch.ones(2, 2)
    g([x, torch.ones(2, 2)])
    g([x, torch.ones(2, 2)])
    torch.testing.assert_close(g([x, torch.arange(4.0).reshape(2, 2).t()])[0], torch.tensor([[0.0, 2], [1, 3]]))
    assert g.calls == {"first": 1, "recorded": 2}


def _doubling_function(g: CudaGraphCall):
    """An autograd function y = 2x whose backward is `g` (2 * the tangent, staged)."""

    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, tangent):
            return g([tangent])[0]

    return Double


def test_autograd_keeps_a_replayed_gradient_without_copying_it():
    """Gradients set to None before each step: autograd keeps the replay's output as `.grad`
    (no copy per parameter), and since that is the recording's memory, the recording waits
    until the next step drops it."""
    rec = InPlaceRecorder()
    g = CudaGraphCall(lambda args: [args[0] * 2], rec, device_type="cpu", staged=(0,))
    double = _doubling_function(g)
    p = torch.ones(4, requires_grad=True)
    for step in range(5):
        p.grad = None
        (double.apply(p) * (step + 1)).sum().backward()
        torch.testing.assert_close(p.grad, torch.full((4,), 2.0 * (step + 1)))
        if step >= 1:
            assert p.grad.data_ptr() == g.recordings[0].pooled.addresses[0]  # kept, not copied
    assert g.calls == {"first": 1, "recorded": 1, "replayed": 3}


def test_gradients_accumulated_into_a_kept_one_are_never_overwritten():
    """The recording's output kept as `.grad` becomes the running sum when later steps do not
    drop it: that recording stays busy for good, and a second one serves the steps, its outputs
    added into the sum."""
    rec = InPlaceRecorder()
    g = CudaGraphCall(lambda args: [args[0] * 2], rec, device_type="cpu", staged=(0,))
    double = _doubling_function(g)
    p = torch.ones(4, requires_grad=True)
    total = 0.0
    for step in range(6):
        if step <= 1:  # the second step's gradient is the recording's output, kept
            p.grad, total = None, 0.0
        (double.apply(p) * (step + 1)).sum().backward()
        total += 2.0 * (step + 1)
        torch.testing.assert_close(p.grad, torch.full((4,), total))
    assert p.grad.data_ptr() == g.recordings[0].pooled.addresses[0]
    assert g.calls == {"first": 1, "recorded": 2, "replayed": 3}


def transposed_and_doubled(args):
    (x,) = args
    return [x.t(), x * 2]


def test_an_output_that_is_an_input_does_not_keep_its_recording_busy():
    """A training forward returns the weights it saves for the backward: the caller's memory,
    which no replay writes, so references to it (here: views kept) do not make the call busy."""
    rec = InPlaceRecorder()
    g = CudaGraphCall(transposed_and_doubled, rec, device_type="cpu")
    x = torch.arange(4.0).reshape(2, 2)
    kept = []
    for _ in range(4):
        view, doubled = g([x])
        kept.append(view)
        torch.testing.assert_close(doubled, x * 2)
        del doubled
    assert g.calls == {"first": 1, "recorded": 1, "replayed": 2}
    assert all(v.data_ptr() == x.data_ptr() for v in kept)


def moved_where_the_input_was(args):
    """Frees its input and returns its values in a new storage over the same memory, as an
    allocator hands a backward's gradient the block of an activation it has read (the values
    stay: the stand-in runs a call at its capture and again at its replay)."""
    (x,) = args
    args.clear()
    out = cudagraphs.alias(x)
    del x
    return [out]


def test_a_capture_that_fails_after_its_call_freed_the_inputs_still_computes():
    """A backward's capture may fail after its call has freed the activations it read: a capture
    runs nothing, so their memory still holds them, and the normal run reads them there."""
    rec = InPlaceRecorder()
    forward = graphed(rec)
    backward = CudaGraphCall(plus_one_consuming, InPlaceRecorder(fail_after_call=True), device_type="cpu",
                             warn=False)
    x = torch.arange(4.0)
    for step in range(3):
        x.add_(1)
        args = [forward([x])[0]]  # the forward's capture at step 1: the backward's input is its output
        torch.testing.assert_close(backward(args)[0], x * 2 + 1)
    assert forward.calls == {"first": 1, "recorded": 1, "replayed": 1}
    assert backward.calls == {"first": 1, "not captured": 2} and "previous error" in backward.reason


def test_an_output_where_a_freed_input_lay_is_the_recordings():
    """An output is the caller's memory only if it is an input's storage, not if it lies where
    an input the call freed lay: that one is the recording's (it gives no reference to it,
    so autograd may keep it as a gradient without a copy)."""
    backing = torch.zeros(4)  # the memory, kept valid; the call's input is another storage over it
    g = CudaGraphCall(moved_where_the_input_was, InPlaceRecorder(), device_type="cpu")
    for step in range(4):
        backing.copy_(torch.arange(4.0) + step)
        out = g([cudagraphs.alias(backing)])[0]
        torch.testing.assert_close(out, torch.arange(4.0) + step)
        del out
    recording = g.recordings[0]
    assert recording.pooled_at == [0] and recording.outputs == [None]
    assert g.calls == {"first": 1, "recorded": 1, "replayed": 2}


def test_a_backwards_tangents_and_rng_state_are_staged():
    names = ["primals_1", "view", "getitem_3", "tangents_1", "tangents_2", "bwd_seed", "bwd_base_offset"]
    assert cudagraphs.staged_inputs("backward", names) == (3, 4, 5, 6)
    assert cudagraphs.staged_inputs("forward", ["primals_1", "primals_2"]) == ()
    assert cudagraphs.staged_inputs("inference", ["tangents_like_a_name"]) == ()


def _on_a_gpu_with(monkeypatch, env: str | None) -> None:
    """A GPU is "available" and MLC_CUDAGRAPHS is `env` (None: unset)."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    if env is None:
        monkeypatch.delenv("MLC_CUDAGRAPHS", raising=False)
    else:
        monkeypatch.setenv("MLC_CUDAGRAPHS", env)


@pytest.mark.parametrize("env, kind, static, expected", [
    (None, "inference", True, "auto"),
    (None, "inference", False, None),  # one recording per size
    (None, "forward", True, "auto"),  # a training step: the backward shares the forward's pool
    (None, "backward", True, "auto"),
    (None, "forward", False, None),
    ("", "inference", True, "auto"),
    ("0", "inference", True, None),
    ("1", "forward", False, "asked"),
    ("1", "backward", True, "asked"),
])
def test_the_policy_takes_static_graphs_unless_told(monkeypatch, env, kind, static, expected):
    _on_a_gpu_with(monkeypatch, env)
    assert cudagraphs.policy(kind, static).mode == expected


@pytest.mark.parametrize("env, launches, expected", [
    (None, (1, 0), None),  # one Triton kernel: a replay saves no launch
    (None, (2, 0), "auto"),
    (None, (0, 1), "auto"),  # an extern call's host path is longer than a replay's
    (None, (1, 1), "auto"),
    ("1", (1, 0), "asked"),
])
def test_a_call_of_one_kernel_launches_it(monkeypatch, env, launches, expected):
    _on_a_gpu_with(monkeypatch, env)
    assert cudagraphs.policy("inference", True, launches).mode == expected


def test_a_call_inside_the_callers_capture_runs_normally():
    """Replaying or recording while the stream captures another graph is an error in CUDA: the
    call runs normally (its kernels join the caller's graph), and later calls replay again."""
    rec = InPlaceRecorder()
    g = graphed(rec)
    x = torch.arange(4.0)
    g([x]), g([x])  # first, recorded
    rec.capturing_now = True
    out = g([x])
    torch.testing.assert_close(out[0], x * 2)
    assert (rec.records, rec.replays) == (1, 1) and g.calls["inside a capture"] == 1
    del out
    rec.capturing_now = False
    g([x])
    assert (rec.records, rec.replays) == (1, 2) and g.reason is None


def _traced(f, *inputs):
    from torch.fx.experimental.proxy_tensor import make_fx

    return make_fx(f, tracing_mode="fake")(*inputs)


@pytest.mark.parametrize("f, blocked_by", [
    (lambda x, m: (x * 2).sum(), None),
    (lambda x, m: torch.ops.aten._local_scalar_dense.default(x.sum()), "which the host has to wait for"),
    (lambda x, m: torch.ops.aten.index_put.default(x, [m], x[0]), "boolean mask"),
    (lambda x, m: torch.ops.aten.index_put.default(x, [m.long()], x[0]), None),  # integer indices: fine
    (lambda x, m: torch.ops.aten.nonzero.default(x), "size given by the data"),
    (lambda x, m: (x * 2).to("meta"), "a meta tensor"),  # another device than the inputs'
])
def test_a_graph_that_a_capture_cannot_hold_is_named(f, blocked_by):
    gm = _traced(f, torch.randn(4), torch.tensor([True, False, True, False]))
    found = cudagraphs.capture_blocker(gm)
    assert found is None if blocked_by is None else blocked_by in found, found


def test_the_policy_refuses_a_blocked_graph_even_when_asked(monkeypatch):
    _on_a_gpu_with(monkeypatch, "1")
    decision = cudagraphs.policy("inference", True, blocker="item = aten._local_scalar_dense.default, which ...")
    assert decision.mode is None and decision.reason.startswith("a capture would fail: item")


def test_no_gpu_no_cuda_graphs(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setenv("MLC_CUDAGRAPHS", "1")
    assert cudagraphs.policy("inference", True) == cudagraphs.Decision(None, "no GPU")


@pytest.fixture
def graphs(monkeypatch) -> list[CudaGraphCall]:
    """Every CudaGraphCall the backend makes during the test, in order."""
    made: list[CudaGraphCall] = []
    init = CudaGraphCall.__init__

    def remember(self, *args, **kwargs):
        init(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(CudaGraphCall, "__init__", remember)
    return made


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA graphs need a GPU")
def test_inference_replays_cuda_graphs_by_default(monkeypatch, graphs):
    monkeypatch.delenv("MLC_CUDAGRAPHS", raising=False)
    torch._dynamo.reset()

    def f(x, w):
        return torch.softmax(x @ w, dim=-1).sum(0), x.relu()[:, :5]

    compiled = torch.compile(f, backend="mlc")
    x = torch.randn(64, 96, device="cuda")
    w = torch.randn(96, 3000, device="cuda")
    with torch.no_grad():
        for step in range(5):
            x.add_(0.5)  # same addresses, new values: a replay must read them
            got = compiled(x, w)
            torch.testing.assert_close(got, f(x, w), rtol=1e-4, atol=1e-5)
            del got  # its memory is free for the next replay
    assert len(graphs) == 1 and graphs[0].reason is None
    assert graphs[0].calls["replayed"] >= 2, graphs[0].calls


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA graphs need a GPU")
def test_an_inference_call_captured_by_the_caller(monkeypatch, graphs):
    """The caller records its own CUDA graph around a compiled call whose graph already replays
    one of mlc's (`triton.testing.do_bench_cudagraph` does this): the capture holds the call's
    kernels, and replaying it gives eager's result for new input values."""
    monkeypatch.delenv("MLC_CUDAGRAPHS", raising=False)
    torch._dynamo.reset()

    def f(x):  # two kernels (a call of one kernel is launched, not replayed): softmax rows, sum columns
        return torch.softmax(x * 2, dim=-1).sum(0)

    compiled = torch.compile(f, backend="mlc")
    x = torch.randn(64, 3000, device="cuda")
    with torch.no_grad():
        for _ in range(3):  # first, recorded, replayed
            compiled(x)
        assert len(graphs) == 1 and graphs[0].calls["replayed"] == 1, graphs
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = compiled(x)
        x.add_(1.0)
        graph.replay()
        torch.testing.assert_close(out, f(x), rtol=1e-4, atol=1e-5)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA graphs need a GPU")
def test_training_steps_from_cuda_graphs_match_eager(monkeypatch):
    monkeypatch.setenv("MLC_CUDAGRAPHS", "1")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.Linear(128, 64)).cuda()
    reference = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.Linear(128, 64)).cuda()
    reference.load_state_dict(model.state_dict())
    compiled = torch.compile(model, backend="mlc")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    ref_opt = torch.optim.SGD(reference.parameters(), lr=0.1)
    x = torch.randn(32, 64, device="cuda")
    losses = []
    for step in range(6):
        for m, o in ((compiled, opt), (reference, ref_opt)):
            o.zero_grad()
            loss = m(x).square().mean()
            # two forwards before one backward: the first's activations are held meanwhile
            loss2 = m(x + 1).square().mean()
            (loss + loss2).backward()
            o.step()
            losses.append(loss.detach().clone())
        torch.testing.assert_close(losses[-2], losses[-1], rtol=1e-4, atol=1e-5)
    for p, q in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-4, atol=1e-5)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA graphs need a GPU")
def test_a_backward_replays_though_its_tangents_move(monkeypatch, graphs):
    """Between steps the loop allocates (here: tensors it keeps), so autograd's tangents come at
    new addresses: the backward still replays one recording, and the gradients match eager's.
    The forward returns the weights it saves (an input, not the recording's memory): what the
    caller does with them does not keep its recording busy."""
    monkeypatch.setenv("MLC_CUDAGRAPHS", "1")
    torch._dynamo.reset()  # the test above compiled this architecture: Dynamo would reuse its graphs
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.Linear(128, 64)).cuda()
    compiled = torch.compile(model, backend="mlc")
    x = torch.randn(32, 64, device="cuda")
    kept = []
    for step in range(6):
        model.zero_grad(set_to_none=True)
        out = compiled(x)
        kept.append(torch.empty(1024 * (step + 1), device="cuda"))  # moves the allocator on
        (out * (step + 1)).sum().backward()
        del out  # the step's output dies with it: the next forward can replay the same recording
        grads = [p.grad.clone() for p in model.parameters()]
        if step >= 2:  # replayed: autograd kept the recording's outputs as the gradients
            recording = graphs[1].recordings[0]
            lent = set(recording.pooled.addresses)  # a staged tangent returned as a gradient too
            assert all(p.grad.untyped_storage().data_ptr() in lent for p in model.parameters())
        model.zero_grad(set_to_none=True)
        (model(x) * (step + 1)).sum().backward()
        for got, expected in zip(grads, (p.grad for p in model.parameters())):
            torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)
    forward, backward = graphs
    assert forward.staged == () and len(backward.staged) == 1
    expected = {"first": 1, "recorded": 1, "replayed": 4}
    assert forward.calls == backward.calls == expected, (forward.calls, backward.calls)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="torch's C++ comparison is in its CUDA builds")
def test_addresses_are_compared_in_cpp_as_in_python():
    assert cudagraphs._DATA_PTRS_EQUAL is not None
    a, b = torch.ones(4, device="cuda"), torch.ones(4, device="cuda")
    args = [a, 3, b]
    for addresses in ([a.data_ptr(), None, b.data_ptr()], [a.data_ptr(), None, a.data_ptr()]):
        python = all(args[i].data_ptr() == addresses[i] for i in (0, 2))
        assert cudagraphs._same_addresses(args, addresses, [0, 2]) is python


def test_a_meta_value_that_is_no_tensor_is_passed_over():
    """Values beside tensors and sizes in a node's meta (a device, a string) say nothing about
    capture."""
    gm = _traced(lambda x, m: (x * 2).sum(), torch.randn(4), torch.tensor([True, False, True, False]))
    for node in gm.graph.nodes:
        if node.op == "call_function":
            node.meta["val"] = (node.meta["val"], torch.device("cpu"), "a note", None)
    assert cudagraphs.capture_blocker(gm) is None


def test_an_output_made_on_the_host_is_the_captures_every_replay():
    """Attention without dropout returns its random seed and offset as CPU tensors, made on the
    host: a capture makes them once and a replay runs no host code, so every replay returns the
    capture's (not a tensor rebuilt over memory the host has freed). Here a meta tensor stands
    for them, a device other than the call's."""
    rec = InPlaceRecorder()
    made = []

    def call(args):
        (x,) = args
        made.append(torch.empty((), dtype=torch.long, device="meta"))
        return [x * 2, made[-1]]

    g = CudaGraphCall(call, rec, device_type="cpu")
    x = torch.arange(4.0)
    seeds = []
    for _ in range(4):
        out, seed = g([x])
        torch.testing.assert_close(out, x * 2)
        seeds.append(seed)
        del out
    assert g.calls == {"first": 1, "recorded": 1, "replayed": 2}
    assert seeds[1] is made[1] and all(s is made[1] for s in seeds[2:])
