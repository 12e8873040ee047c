"""One OpInfo sample through mlc against eager: forward, then backward; each failure classified.

    outcomes = check_sample(op, sample, device)     # [forward Outcome, backward Outcome?]

An `Outcome` says what happened to one phase of one sample, as plain data:

    status      pass | pass-split | mismatch | compile | runtime | dynamo | timeout | eager-error
    cause       the group it is counted under (the first line of the error, numbers and
                shapes stripped, so that one bug is one group)
    detail      the error's first line as it was

Only samples eager itself runs count: an error in eager gives `eager-error`, which the sweep
leaves out of every rate. `dynamo` is a graph break or an error in Dynamo's tracing (with
`fullgraph=True` every break is an error), which is not mlc's doing, and stays the status
only where a second try as a user runs it (`fullgraph=False`: Dynamo runs what it cannot
trace, a data-dependent shape or `.item()`, eagerly between graphs) fails too or gives mlc no
graph at all; where that try passes with at least one graph through mlc it is `pass-split`,
counted as a pass and reported apart. `compile` is an
`MlcCompileError` (mlc refused the graph) or an error inside the backend around it
(AOTAutograd, the decompositions); `runtime` is an error raised while the compiled code ran.

Random ops (bernoulli, dropout, rand_like, empty, ...) are compared by shape and dtype only:
their values are not a function of the inputs.

Used by `tools/opinfo_sweep.py` (every op of op_db) and `test/opinfo/test_opinfo_subset.py`.
"""

from __future__ import annotations

import re
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any

import torch
import torch.utils._pytree as pytree

ATOL = 1e-5
RTOL = 1e-5
"""float32 tolerances, as test/e2e's `check`: transcendental functions and sums in another
order differ by an ulp or a few between ATen and the generated kernels."""

RANDOM_OPS = frozenset(
    """
    bernoulli cauchy empty empty_like empty_permuted empty_strided exponential geometric
    log_normal multinomial new_empty new_empty_strided normal uniform rand_like randint
    randint_like randn randn_like nn.functional.dropout nn.functional.dropout2d
    nn.functional.dropout3d nn.functional.alpha_dropout nn.functional.feature_alpha_dropout
    nn.functional.fractional_max_pool2d nn.functional.fractional_max_pool3d nn.functional.rrelu
    pca_lowrank svd_lowrank resize_ resize_as_
    """.split()
)
"""op_db names whose outputs are random (or uninitialised memory): shapes and dtypes only."""

STATUSES = ("pass", "pass-split", "mismatch", "compile", "runtime", "dynamo", "timeout", "eager-error")


@dataclass
class Outcome:
    """What happened to one phase ("forward" or "backward") of one sample of one op."""

    op: str
    sample: int
    phase: str
    status: str
    cause: str = ""
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class SampleTimeout(Exception):
    """A sample ran past its time limit (raised by `time_limit`)."""


def op_key(op: Any) -> str:
    """An op_db entry's unique name: `name` or `name.variant` ("div.floor_rounding")."""
    return f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name


def compile_mlc(fn: Callable[..., Any], graphs: list[int] | None = None) -> Callable[..., Any]:
    """As test/e2e: the whole function to mlc (no eager piece), static shapes. Given `graphs`,
    Dynamo may break the function into graphs, and each one mlc compiles is appended there."""
    if graphs is None:
        return torch.compile(fn, backend="mlc", fullgraph=True, dynamic=False)
    from mlc.frontend.backend import mlc_backend

    def counting(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
        graphs.append(len(graphs))
        return mlc_backend(gm, example_inputs)

    return torch.compile(fn, backend=counting, fullgraph=False, dynamic=False)


# ---------------------------------------------------------------------------------------------
# One sample


def check_sample(op: Any, sample: Any, index: int, timeout: float = 0.0) -> list[Outcome]:
    """The forward outcome of `sample`, and the backward one when the op has autograd and the
    sample has a float input that requires grad (both counted only when eager runs them)."""
    key = op_key(op)
    random = op.name in RANDOM_OPS or key in RANDOM_OPS
    forward = _phase(key, index, "forward", timeout, lambda graphs: _check_forward(op, sample, random, graphs))
    outcomes = [forward]
    if op.supports_autograd and not random and _grad_leaves(_clone_inputs(sample)):
        outcomes.append(_phase(key, index, "backward", timeout, lambda graphs: _check_backward(op, sample, graphs)))
    return outcomes


def _phase(key: str, index: int, phase: str, timeout: float, run: Callable[[list[int] | None], str | None]) -> Outcome:
    """Run one phase (which returns "eager-error" or None) and classify what it raised; a
    Dynamo failure is tried again with graph breaks allowed (see the module docstring)."""
    torch._dynamo.reset()  # a fresh cache: no recompile limit, no stale graph
    try:
        with time_limit(timeout):
            skipped = run(None)
    except Exception as e:  # noqa: BLE001 -- every failure is classified, none is fatal
        status, cause, detail = classify(e)
        if status == "dynamo" and _passes_split(run, timeout):
            return Outcome(key, index, phase, "pass-split", cause, detail)
        return Outcome(key, index, phase, status, cause, detail)
    if skipped is not None:
        return Outcome(key, index, phase, "eager-error", "eager raised", skipped)
    return Outcome(key, index, phase, "pass")


def _passes_split(run: Callable[[list[int] | None], str | None], timeout: float) -> bool:
    """Whether the phase passes with Dynamo's graph breaks, at least one graph through mlc."""
    torch._dynamo.reset()
    graphs: list[int] = []
    try:
        with time_limit(timeout):
            return run(graphs) is None and bool(graphs)
    except Exception:  # noqa: BLE001 -- the first failure stands
        return False


def _check_forward(op: Any, sample: Any, random: bool, graphs: list[int] | None = None) -> str | None:
    args, kwargs = _clone_inputs(sample)
    try:
        expected = op(*args, **kwargs)
    except Exception as e:  # noqa: BLE001
        return first_line(e)
    args, kwargs = _clone_inputs(sample)
    actual = _call_compiled(op, args, kwargs, graphs)
    _compare(actual, expected, random, lambda: _widened_forward(op, sample))
    return None


def _check_backward(op: Any, sample: Any, graphs: list[int] | None = None) -> str | None:
    try:
        expected = _grads(op, sample, compiled=False, cotangents=None)
    except Exception as e:  # noqa: BLE001
        return first_line(e)
    if expected is None:  # no output depends on an input that requires grad
        return "no differentiable output"
    grads, cotangents = expected
    actual, _ = _grads(op, sample, compiled=True, cotangents=cotangents, graphs=graphs)  # type: ignore[misc]
    _compare(actual, grads, False, lambda: _widened_grads(op, sample, cotangents))
    return None


def _grads(op: Any, sample: Any, compiled: bool, cotangents: list[torch.Tensor] | None,
           graphs: list[int] | None = None) -> Any:
    """Gradients of every input that requires grad, through eager or mlc, for cotangents drawn
    once (from eager's outputs) and reused, so that both sides differentiate the same sum."""
    args, kwargs = _clone_inputs(sample)
    leaves = _grad_leaves((args, kwargs))
    outputs = _call_compiled(op, args, kwargs, graphs) if compiled else op(*args, **kwargs)
    diff = [t for t in pytree.tree_leaves(outputs) if isinstance(t, torch.Tensor) and t.grad_fn is not None]
    if not diff:
        return None
    if cotangents is None:
        generator = torch.Generator(device=diff[0].device).manual_seed(0)
        cotangents = [torch.randn(t.shape, dtype=t.dtype, device=t.device, generator=generator) for t in diff]
    with _stage("backward" if compiled else "eager"):
        grads = torch.autograd.grad(diff, leaves, cotangents, allow_unused=True)
    return [g if g is not None else torch.zeros_like(x) for g, x in zip(grads, leaves)], cotangents


def _call_compiled(op: Any, args: list[Any], kwargs: dict[str, Any], graphs: list[int] | None = None) -> Any:
    compiled = compile_mlc(lambda *a, **k: op(*a, **k), graphs)
    with _seed_outside_graph():
        return compiled(*args, **kwargs)


@contextmanager
def _seed_outside_graph() -> Iterator[None]:
    """OpInfo wraps random ops (dropout, bernoulli, SDPA, ...) in `wrapper_set_seed`, whose
    `torch.manual_seed` Dynamo will not trace; for the compiled run the wrapper only calls the
    op, and the same seed is set before the call."""
    from torch.testing._internal import common_methods_invocations as cmi
    from torch.testing._utils import freeze_rng_state

    saved = cmi.wrapper_set_seed
    cmi.wrapper_set_seed = lambda fn, *a, **k: fn(*a, **k)
    try:
        with freeze_rng_state():
            torch.manual_seed(42)
            yield
    finally:
        cmi.wrapper_set_seed = saved


def _compare(actual: Any, expected: Any, random: bool, widened: Callable[[], Any] | None = None) -> None:
    """Random ops by shape and dtype; others with ATOL/RTOL, or else against `widened()` (the
    same computed in float64): an element within ATOL/RTOL of float64 plus twice eager's own
    largest float64 error on that tensor is rounding, not a bug (a kron gradient summing 200
    products of magnitude 20 to -0.65: eager is off by 4e-6, mlc by 2e-5, both ulps of the
    terms), as the fuzzer compares."""
    with _stage("compare"):
        if random:
            a, e = pytree.tree_leaves(actual), pytree.tree_leaves(expected)
            assert len(a) == len(e), f"{len(a)} outputs, eager has {len(e)}"
            for x, y in zip(a, e):
                if isinstance(y, torch.Tensor):
                    assert isinstance(x, torch.Tensor) and (x.shape, x.dtype) == (y.shape, y.dtype), (
                        f"random op: {tuple(x.shape)} {x.dtype} vs eager's {tuple(y.shape)} {y.dtype}"
                    )
            return
        try:
            torch.testing.assert_close(actual, expected, equal_nan=True, atol=ATOL, rtol=RTOL)
        except AssertionError:
            wide = widened() if widened is not None else None
            if wide is None or not _within_rounding(actual, expected, wide):
                raise


def _within_rounding(actual: Any, expected: Any, wide: Any) -> bool:
    a, e, w = (pytree.tree_leaves(x) for x in (actual, expected, wide))
    if not len(a) == len(e) == len(w):
        return False
    for x, y, z in zip(a, e, w):
        if not isinstance(y, torch.Tensor) or not y.is_floating_point():
            continue
        if not isinstance(x, torch.Tensor) or not isinstance(z, torch.Tensor) or x.shape != z.shape:
            return False
        x, y, z = x.detach().double(), y.detach().double(), z.detach().double()
        eager_error = (y - z).abs().nan_to_num(nan=0.0, posinf=0.0).max() if y.numel() else 0.0
        ok = ((x - z).abs() <= ATOL + RTOL * z.abs() + 2 * eager_error) | (x.isnan() & z.isnan())
        if not bool(ok.all()):
            return False
    return True


def _widened_forward(op: Any, sample: Any) -> Any:
    """The op's outputs from float64 copies of the sample's float tensors (None if it fails)."""
    args, kwargs = _clone_inputs(sample.transform(_double))
    try:
        return op(*args, **kwargs)
    except Exception:  # noqa: BLE001 -- no float64 reference: the failure stands
        return None


def _widened_grads(op: Any, sample: Any, cotangents: list[torch.Tensor]) -> Any:
    try:
        result = _grads(op, sample.transform(_double), compiled=False, cotangents=[c.double() for c in cotangents])
    except Exception:  # noqa: BLE001
        return None
    return None if result is None else result[0]


def _double(x: Any) -> Any:
    if isinstance(x, torch.Tensor) and x.dtype == torch.float32:
        return x.detach().double().requires_grad_(x.requires_grad)
    return x


# ---------------------------------------------------------------------------------------------
# Inputs


def _clone_inputs(sample: Any) -> tuple[list[Any], dict[str, Any]]:
    """Fresh copies of the sample's arguments (leaves that keep requires_grad), so that eager
    and mlc each get their own and an in-place op cannot leak into the other run."""
    args = [sample.input, *sample.args]
    return pytree.tree_map(_fresh, args), pytree.tree_map(_fresh, dict(sample.kwargs))


def _fresh(x: Any) -> Any:
    if not isinstance(x, torch.Tensor):
        return x
    copy = x.detach().clone()
    return copy.requires_grad_(x.requires_grad and (x.is_floating_point() or x.is_complex()))


def _grad_leaves(inputs: Any) -> list[torch.Tensor]:
    return [
        t for t in pytree.tree_leaves(inputs)
        if isinstance(t, torch.Tensor) and t.requires_grad and t.dtype.is_floating_point
    ]


# ---------------------------------------------------------------------------------------------
# Classifying failures


class _StageError(Exception):
    """An exception tagged with the stage that raised it ("compare": a mismatch)."""

    def __init__(self, stage: str, inner: BaseException):
        super().__init__(str(inner))
        self.stage = stage
        self.inner = inner


@contextmanager
def _stage(name: str) -> Iterator[None]:
    try:
        yield
    except _StageError:
        raise
    except Exception as e:  # noqa: BLE001
        raise _StageError(name, e) from e


def classify(e: BaseException) -> tuple[str, str, str]:
    """(status, cause, detail) of an exception raised by a phase."""
    stage = e.stage if isinstance(e, _StageError) else None
    inner = e.inner if isinstance(e, _StageError) else e
    detail = first_line(inner)
    if isinstance(inner, SampleTimeout):
        return "timeout", "timeout", detail
    if stage == "compare" and isinstance(inner, AssertionError):
        return "mismatch", _mismatch_cause(inner), detail
    mlc = _find_in_chain(inner, _is_mlc_error)
    if mlc is not None:
        return "compile", normalize(_strip_graph(first_line(mlc))), first_line(mlc)
    if _find_in_chain(inner, _is_dynamo_error) is not None:
        return "dynamo", normalize(f"{type(inner).__name__}: {detail}"), detail
    if _find_in_chain(inner, _is_backend_failure) is not None:  # AOTAutograd, decompositions
        cause = _backend_cause(inner)
        return "compile", normalize(cause), cause
    return "runtime", normalize(f"{type(inner).__name__}: {detail}"), detail


def first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def normalize(text: str) -> str:
    """A group key: numbers, shapes and tensor types replaced, so that samples group."""
    text = re.sub(r"tensor<[^>]*>", "tensor<..>", text)
    text = re.sub(r"0x[0-9a-f]+", "0x..", text)
    text = re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "N", text)
    return text[:160]


def _strip_graph(text: str) -> str:
    return re.sub(r"^mlc: graph_\d+: ", "", text)


def _mismatch_cause(e: AssertionError) -> str:
    text = str(e)
    for kind in ("dtype", "shape", "stride", "device", "NaN", "Scalars are not", "Tensor-likes are not close"):
        if kind in text:
            return f"mismatch: {kind}"
    return "mismatch: " + normalize(first_line(e))


def _chain(e: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    stack = [e]
    while stack:
        cur = stack.pop()
        if cur is None or id(cur) in seen:
            continue
        seen.add(id(cur))
        yield cur
        stack += [getattr(cur, "inner_exception", None), cur.__cause__, cur.__context__]


def _find_in_chain(e: BaseException, pred: Callable[[BaseException], bool]) -> BaseException | None:
    return next((x for x in _chain(e) if pred(x)), None)


def _is_mlc_error(e: BaseException) -> bool:
    return type(e).__name__ == "MlcCompileError"


def _is_backend_failure(e: BaseException) -> bool:
    return type(e).__name__ == "BackendCompilerFailed"


def _is_dynamo_error(e: BaseException) -> bool:
    from torch._dynamo import exc

    dynamo_errors = (exc.Unsupported, exc.UserError, exc.TorchRuntimeError, exc.InternalTorchDynamoError)
    return isinstance(e, dynamo_errors) and not _is_backend_failure(e)


def _backend_cause(e: BaseException) -> str:
    inner = getattr(_find_in_chain(e, _is_backend_failure), "inner_exception", None) or e
    return f"backend: {type(inner).__name__}: {first_line(inner)}"


# ---------------------------------------------------------------------------------------------
# Time limit


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise SampleTimeout in the main thread after `seconds` (0: no limit). Python code only
    is interrupted; the sweep's parent process kills a worker stuck in native code."""
    if seconds <= 0:
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise SampleTimeout(f"sample ran over {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
