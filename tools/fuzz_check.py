"""Run a fuzz program (tools/fuzz_program.py) through mlc and eager, compare, and shrink failures.

    outcome = check_program(program)         # Outcome(kind, cause, detail)
    small = shrink(program, outcome)         # a minimal program failing the same way
    print(pytest_case(small))                # ready to paste into test/e2e

Kinds of outcome: `ok`; `mismatch` (a forward output differs: the thing hunted) and
`grad_mismatch` (an input's gradient differs); `compile_error` (MlcCompileError, grouped by
the message with numbers and names stripped); `crash` (any other exception from the compiled
program: a bug too); `invalid` (eager itself failed: a generator bug, not mlc's; or
torch.compile fails without mlc too, with backend "aot_eager": Dynamo's refusal);
`as_inductor` (mlc differs from eager, but Inductor, run on the same inputs, gives mlc's
values: rounding where both compilers store an intermediate, in a program too ill-conditioned
for its dtype; counted apart, with the mismatch's detail).

Tolerances (`tolerance`): float32 rtol 1e-4, float16 1e-2, bfloat16 2e-2 (mlc computes in f32
without rounding between fused ops, as Inductor does), with an absolute floor of rtol times
a tenth of the output's largest magnitude; integers and bools exactly; NaN positions must
match. Beyond that, mlc is only wrong where it is further from the truth than eager's own
rounding explains: the program also runs eagerly in float64 (`widen`), and an element passes
when mlc is within tolerance plus twice eager's error there of eager, or within tolerance plus
twice eager's largest error on that tensor of the float64 result (a long f32 sum, or an f16
chain rounded after every op in eager but not inside an mlc kernel, differ by rounding alone;
a wrong index or formula differs by far more). Where that still fails, the float64 result gets
a margin of four times `rounding_noise` there (Monte Carlo arithmetic: how far perturbing
every op's result by the dtype's unit roundoff moves it; wide only where rounding decides the
value, as in a sum that cancels to zero), and last Inductor is asked (`as_inductor`).
Gradients: the same on each input's grad, after `sum((k + 1) * out_k.float().sum())` over the
outputs (test/e2e/conftest.py's `check_grad`).

Under Triton's interpreter, `fast_interpreter_reductions()` replaces the interpreter's
element-by-element `tl.reduce` (a Python call per element: seconds for a 2048-wide tile)
with a pairwise tree calling the same combine function on half-tiles: the same results as on
a GPU, which reduces by a tree too.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

from mlc.tools.fuzz_ops import SIGN_UNSETTLED, lit  # noqa: E402
from mlc.tools.fuzz_program import Input, Program, Stmt  # noqa: E402


@dataclass(frozen=True)
class Outcome:
    """What running one program gave: `kind` (see the module docstring), `cause` (the
    grouping key: the message with numbers and names stripped), `detail` (the message)."""

    kind: str
    cause: str = ""
    detail: str = ""

    @property
    def failed(self) -> bool:
        return self.kind not in ("ok", "invalid", "as_inductor")

    @property
    def signature(self) -> tuple[str, str]:
        return (self.kind, self.cause)


def device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


# -- tolerances and comparison ----------------------------------------------------------------

RTOL = {torch.float32: 1e-4, torch.float64: 1e-6, torch.float16: 1e-2, torch.bfloat16: 2e-2}


def tolerance(expected: torch.Tensor, dtypes: set[torch.dtype] = frozenset()) -> tuple[float, float]:
    """(rtol, atol) for comparing with `expected`, a value computed from values of `dtypes`
    (the least precise of them and of `expected` decides; see the module docstring)."""
    if not expected.dtype.is_floating_point:
        return 0.0, 0.0
    rtol = max(RTOL.get(d, 0.0) for d in {expected.dtype, *dtypes})
    finite = expected.detach()[torch.isfinite(expected.detach())].float()
    scale = float(finite.abs().max()) if finite.numel() else 0.0
    return rtol, rtol * max(1.0, scale) * 0.1


def compare(actual: Any, expected: torch.Tensor, what: str, dtypes: set[torch.dtype] = frozenset(),
            widened: torch.Tensor | None = None, noise: torch.Tensor | None = None) -> str | None:
    """None when `actual` matches `expected`, else a one-line description.

    Floats: |actual - expected| <= atol + rtol * |expected| (`tolerance`) plus twice eager's
    rounding error at that element, |expected - widened| where `widened` is the program run in
    float64; or |actual - widened| within tolerance plus twice eager's largest rounding error
    on the tensor, plus four times `noise` there (`rounding_noise`). NaN where expected (or
    widened) is NaN."""
    if not isinstance(actual, torch.Tensor):
        return f"{what}: {type(actual).__name__} instead of a tensor"
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        return f"{what}: {tuple(actual.shape)} {actual.dtype} instead of {tuple(expected.shape)} {expected.dtype}"
    if not isinstance(widened, torch.Tensor) or widened.shape != expected.shape:
        widened = noise = None
    a, e = actual.detach().cpu(), expected.detach().cpu()
    if not e.dtype.is_floating_point:
        bad = a != e
    else:
        rtol, atol = tolerance(expected, dtypes)
        a, e = a.double(), e.double()
        bad = ~((a == e) | (a.isnan() & e.isnan()) | ((a - e).abs() <= atol + rtol * e.abs()))
        if widened is not None and bad.any():
            w = widened.detach().cpu().double()
            error = (e - w).abs().nan_to_num(nan=float("inf"), posinf=float("inf"))
            worst = float(error[torch.isfinite(error)].max()) if torch.isfinite(error).any() else 0.0
            # Where eager overflowed to inf/NaN and float64 did not, eager's own error is unbounded:
            # it says nothing about mlc's value there (an f16 sum of inf times a saturated tanh's
            # zero derivative is NaN in eager, 0 in mlc, finite in float64).
            eager_lost = ~torch.isfinite(e) & torch.isfinite(w)
            spread = 0.0 if noise is None else 4 * noise.detach().cpu().double().nan_to_num(nan=0.0)
            bad &= ~(((a - e).abs() <= atol + rtol * e.abs() + 2 * error) | (a == w) | (a.isnan() & w.isnan()) |
                     ((a - w).abs() <= atol + rtol * w.abs() + 2 * worst + spread) | eager_lost)
    if not bad.any():
        return None
    index = tuple(int(i) for i in bad.nonzero()[0]) if bad.dim() else ()
    where = f" at {index}: mlc {a[index].item()!r}, eager {e[index].item()!r}"
    if widened is not None:
        where += f", eager in f64 {widened.detach().cpu()[index].item()!r}"
    tol = f" (rtol {tolerance(expected, dtypes)[0]:.0e})" if e.dtype.is_floating_point else ""
    return f"{what} ({expected.dtype}, {tuple(e.shape)}): {int(bad.sum())} of {e.numel()} differ{where}{tol}"


def zero_sign_problem(actual: torch.Tensor, expected: torch.Tensor, what: str,
                      widened: torch.Tensor | None = None) -> str | None:
    """None when every element that is zero in both `actual` and `expected` has the same sign
    in both, else a one-line description. Only zeros that the float64 run (`widened`, when
    given) also computes, with eager's sign, count: a zero that rounding made (a f16 product
    underflowing, x - mean cancelling) has whichever sign the rounding error had."""
    if not (isinstance(actual, torch.Tensor) and actual.dtype.is_floating_point and actual.shape == expected.shape):
        return None
    a, e = actual.detach().cpu(), expected.detach().cpu()
    settled = (a == 0) & (e == 0)
    if isinstance(widened, torch.Tensor) and widened.shape == expected.shape:
        w = widened.detach().cpu()
        settled &= (w == 0) & (w.signbit() == e.signbit())
    bad = settled & (a.signbit() != e.signbit())
    if not bad.any():
        return None
    index = tuple(int(i) for i in bad.nonzero()[0]) if bad.dim() else ()
    return (f"{what} ({expected.dtype}, {tuple(e.shape)}): {int(bad.sum())} of {int(settled.sum())} zeros have the "
            f"wrong sign, at {index}: mlc {a[index].item()!r}, eager {e[index].item()!r}")


def _storage(t: torch.Tensor) -> int | None:
    """Where `t`'s memory starts (its storage's), None for a tensor of no elements."""
    return t.untyped_storage().data_ptr() if t.numel() else None


def aliasing(outputs: Sequence[Any]) -> set[tuple[int, int]]:
    """The pairs (j, k), j < k, of outputs sharing memory (views of one storage)."""
    where = [_storage(o) if isinstance(o, torch.Tensor) else None for o in outputs]
    return {(j, k) for k in range(len(where)) for j in range(k) if where[j] is not None and where[j] == where[k]}


def _layout(t: torch.Tensor) -> tuple[tuple[int, int], ...]:
    """(size, stride) of the dims of more than one element (a size-1 dim's stride is free, and
    every stride of a tensor of no elements)."""
    return tuple((d, st) for d, st in zip(t.shape, t.stride()) if d > 1) if t.numel() else ()


def layout_problem(actual: Sequence[Any], expected: Sequence[torch.Tensor]) -> tuple[str, str] | None:
    """(cause, description) when mlc's outputs are laid out unlike eager's where that is
    observable: outputs sharing memory in eager must share it in mlc and be the same views of it
    (a write to one shows in the other), and no others; a broadcast (stride 0 over a dim of
    several elements) stays one. None when they agree."""
    eager, mlc = aliasing(expected), aliasing(actual)
    if eager != mlc:
        return "aliasing", f"outputs sharing memory: mlc {sorted(mlc)}, eager {sorted(eager)}"
    viewed = {k for pair in eager for k in pair}
    for k, (a, e) in enumerate(zip(actual, expected)):
        broadcast = any(st == 0 for _, st in _layout(e))
        if (k in viewed or broadcast) and _layout(a) != _layout(e):
            return "strides", (f"output {k}: (size, stride) {_layout(a)} in mlc, {_layout(e)} in eager "
                               f"({'a view of another output' if k in viewed else 'a broadcast'})")
    return None


# -- running ----------------------------------------------------------------------------------


def widen(program: Program) -> Program:
    """`program` with its float dtype parameters made float64 (fed float64 inputs, it is the
    program computed almost without rounding: the reference of `compare`)."""

    def wide(value: Any) -> Any:
        return torch.float64 if isinstance(value, torch.dtype) and value.is_floating_point else value

    stmts = tuple(replace(s, params=tuple((k, wide(v)) for k, v in s.params), dtype=wide(s.dtype))
                  for s in program.stmts)
    return replace(program, stmts=stmts)


def _loss(outputs: Sequence[torch.Tensor]) -> torch.Tensor | None:
    terms = [o.float().sum() * (k + 1) for k, o in enumerate(outputs) if o.requires_grad]
    return sum(terms) if terms else None  # type: ignore[return-value]


def _run(fn: Callable[..., Any], inputs: list[torch.Tensor], backward: bool) -> tuple[list[torch.Tensor], bool]:
    outputs = list(fn(*inputs))
    loss = _loss(outputs) if backward else None
    if loss is not None:
        loss.backward()
    return outputs, loss is not None


def compile_mlc(program: Program) -> Callable[..., Any]:
    """`torch.compile` of the program with mlc, caches reset first (one program at a time)."""
    torch._dynamo.reset()
    from mlc.codegen import runtime

    runtime._LOADED.clear()  # emitted modules of earlier programs are never called again

    def f(*args: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return program(*args)

    return torch.compile(f, backend="mlc", fullgraph=True, dynamic=False)


def normalize(message: str) -> str:
    """A message as a grouping key: numbers, graph names and quoted names replaced."""
    first = message.strip().splitlines()[0] if message.strip() else ""
    first = re.sub(r"graph_\d+", "graph_N", first)
    first = re.sub(r"\b(buf|arg|tmp|t|x)\d+(_\d+)?\b", r"\1N", first)
    first = re.sub(r"\d+", "N", first)
    return first[:200]


def _classify(e: BaseException) -> Outcome:
    from mlc.frontend.backend import MlcCompileError

    chain, seen = e, set()
    while chain is not None and id(chain) not in seen:
        seen.add(id(chain))
        if isinstance(chain, MlcCompileError):
            message = str(chain)
            return Outcome("compile_error", normalize(message.split(": ", 2)[-1]), message[:2000])
        chain = chain.__cause__ or chain.__context__
    text = f"{type(e).__name__}: {e}"
    return Outcome("crash", normalize(text), text[:2000])


def _dynamo_compiles(program: Program, dev: torch.device, backward: bool) -> bool:
    """Whether Dynamo and AOTAutograd take the program at all (backend "aot_eager": no mlc)."""
    torch._dynamo.reset()
    try:
        _run(torch.compile(lambda *args: program(*args), backend="aot_eager", fullgraph=True, dynamic=False),
             program.make_inputs(dev), backward)
    except Exception:  # noqa: BLE001 -- any failure: mlc was never reached
        return False
    return True


def _dynamo_refused(e: BaseException) -> Outcome:
    """A program torch.compile fails on without mlc (Dynamo 2.11's "Observed exception" on a
    training-mode batch norm): torch's, not mlc's; counted with the invalid ones."""
    text = f"torch.compile without mlc: {type(e).__name__}: {e}"
    return Outcome("invalid", normalize(text), text[:2000])


def check_program(program: Program, dev: torch.device | None = None) -> Outcome:
    """Run `program` eagerly and through mlc on `dev`; compare outputs and gradients."""
    dev = dev or device()
    eager_in = program.make_inputs(dev)
    try:
        expected, backward = _run(program, eager_in, program.backward)
    except Exception as e:  # noqa: BLE001 -- any eager failure is the generator's
        return Outcome("invalid", normalize(f"{type(e).__name__}: {e}"), str(e)[:2000])
    mlc_in = program.make_inputs(dev)
    try:
        actual, _ = _run(compile_mlc(program), mlc_in, backward)
    except Exception as e:  # noqa: BLE001 -- classified: compile error or crash
        return _classify(e) if _dynamo_compiles(program, dev, backward) else _dynamo_refused(e)
    reference = (expected, eager_in)
    wide = float64_run(program, dev, backward)
    outcome = _compare_runs(program, (actual, mlc_in), reference, wide)
    if outcome.kind in ("mismatch", "grad_mismatch") and wide is not None:
        noise = rounding_noise(program, wide, backward)
        outcome = _compare_runs(program, (actual, mlc_in), reference, wide, noise)
    if outcome.kind in ("mismatch", "grad_mismatch"):
        return _unless_as_inductor(program, dev, backward, (actual, mlc_in), outcome)
    if outcome.kind == "ok" and (layout := layout_problem(actual, expected)) is not None:
        return Outcome("mismatch", *layout)
    if outcome.kind == "ok":
        return _compare_zero_signs(program, (actual, mlc_in), reference, wide)
    return outcome


@contextlib.contextmanager
def _default_dtype(dtype: torch.dtype) -> Iterator[None]:
    old = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(old)


Run = tuple[list[Any], list[Any]]  # (outputs, inputs holding their .grad)


def float64_run(program: Program, dev: torch.device, backward: bool, perturb: Any = None) -> Run | None:
    """The program and its gradients computed in float64 (`widen`; integers promoted to floats
    widen too: the cos of an int), under the dispatch mode `perturb` if given; None where the
    program has no float values or float64 fails."""
    if not any(d.is_floating_point for o in program.outputs for d in program.dtypes_behind(o)):
        return None
    inputs = [t.detach().double().requires_grad_(t.requires_grad) if t.dtype.is_floating_point else t
              for t in program.make_inputs(dev)]
    try:
        with _default_dtype(torch.float64), perturb or contextlib.nullcontext():
            outputs, _ = _run(widen(program), inputs, backward)
    except Exception:  # noqa: BLE001 -- no reference then: plain tolerances
        return None
    return outputs, inputs


def _compare_runs(program: Program, mlc: Run, reference: Run, widened: Run | None, noise: Run | None = None) -> Outcome:
    """Outputs, then each input's gradient, of `mlc` against `reference` (eager, with its
    float64 twin `widened` and that twin's `rounding_noise`, or Inductor alone)."""
    actual, mlc_in = mlc
    expected, eager_in = reference
    widened_out, widened_in = widened or ([None] * len(expected), [None] * len(program.inputs))
    noise_out, noise_in = noise or ([None] * len(expected), [None] * len(program.inputs))
    if len(actual) != len(expected):
        return Outcome("mismatch", "output count", f"{len(actual)} outputs instead of {len(expected)}")
    for k, (a, e) in enumerate(zip(actual, expected)):
        problem = compare(a, e, f"output {k} ({program.outputs[k]})", program.dtypes_behind(program.outputs[k]),
                          widened_out[k], noise_out[k])
        if problem:
            return Outcome("mismatch", "forward", problem)
    everything = set().union(*(program.dtypes_behind(o) for o in program.outputs))
    for inp, e, a, w, n in zip(program.inputs, eager_in, mlc_in, widened_in, noise_in):
        if not inp.grad:
            continue
        if a.grad is None and e.grad is None:
            continue
        if a.grad is None or e.grad is None:
            grads = (a.grad, e.grad)
            if all(g is None or not g.any() for g in grads):
                continue
            return Outcome("grad_mismatch", "missing grad", f"grad of {inp.name}: mlc {a.grad is not None}, eager "
                           f"{e.grad is not None}")
        problem = compare(a.grad, e.grad, f"grad of {inp.name}", everything, None if w is None else w.grad,
                          None if n is None else n.grad)
        if problem:
            return Outcome("grad_mismatch", "backward", problem)
    return Outcome("ok")


def _compare_zero_signs(program: Program, mlc: Run, reference: Run, widened: Run | None) -> Outcome:
    """The signs of the zeros (`zero_sign_problem`) of the outputs, then of the gradients, of
    `mlc` against eager's, where no op behind them leaves the sign to the implementation
    (fuzz_ops.SIGN_UNSETTLED; gradients: none in the whole program)."""
    (actual, mlc_in), (expected, eager_in) = mlc, reference
    widened_out, widened_in = widened or ([None] * len(expected), [None] * len(program.inputs))
    for k, (a, e, w) in enumerate(zip(actual, expected, widened_out)):
        if not program.ops_behind([program.outputs[k]]) & SIGN_UNSETTLED:
            if problem := zero_sign_problem(a, e, f"output {k} ({program.outputs[k]})", w):
                return Outcome("mismatch", "zero sign", problem)
    if program.ops_behind(program.outputs) & SIGN_UNSETTLED:
        return Outcome("ok")
    for inp, e, a, w in zip(program.inputs, eager_in, mlc_in, widened_in):
        if inp.grad and a.grad is not None and e.grad is not None:
            if problem := zero_sign_problem(a.grad, e.grad, f"grad of {inp.name}", getattr(w, "grad", None)):
                return Outcome("grad_mismatch", "zero sign", problem)
    return Outcome("ok")


UNIT_ROUNDOFF = {torch.float64: 2.0**-53, torch.float32: 2.0**-24, torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8}


def rounding_noise(program: Program, wide: Run, backward: bool, runs: int = 2) -> Run:
    """How far rounding alone can move each output and gradient: the float64 program run `runs`
    more times with every op's result perturbed by a random relative amount up to the unit
    roundoff of the program's least precise float dtype (Monte Carlo arithmetic, as
    Verificarlo and CADNA estimate the significant digits of a result), the largest distance
    from `wide` per element (outputs; inputs whose `.grad` holds it). A value that cancels to
    zero (the weight gradient of a batch norm over a near-constant channel: a sum of
    normalized noise times rsqrt(eps)) gets the wide margin it needs; a well-conditioned one
    keeps eager's tolerance."""
    floats = {d for o in program.outputs for d in program.dtypes_behind(o) if d.is_floating_point}
    eps = max(UNIT_ROUNDOFF.get(d, 2.0**-24) for d in floats) if floats else 2.0**-24
    outputs, grads = wide[0], [getattr(t, "grad", None) for t in wide[1]]
    spread_out = [torch.zeros_like(o.detach()) if _is_float(o) else None for o in outputs]
    spread_grad = [torch.zeros_like(g) if _is_float(g) else None for g in grads]
    dev = next(t.device for t in wide[1] if isinstance(t, torch.Tensor))
    for k in range(runs):
        perturbed = float64_run(program, dev, backward, _PerturbResults(eps, program.seed * runs + k))
        if perturbed is None:
            break
        pairs = [*zip(spread_out, outputs, perturbed[0]),
                 *zip(spread_grad, grads, [getattr(t, "grad", None) for t in perturbed[1]])]
        for spread, ref, new in pairs:
            if spread is not None and new is not None and new.shape == ref.shape:
                torch.maximum(spread, (new.detach() - ref.detach()).abs(), out=spread)
    return spread_out, [_GradHolder(g) for g in spread_grad]


def _is_float(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and value.dtype.is_floating_point


@dataclass
class _GradHolder:
    """A gradient spread where `_compare_runs` looks for it (`.grad`)."""

    grad: torch.Tensor | None


# Ops whose results are elements of their inputs or constants: exact in every dtype, so never
# perturbed (a perturbed amin would no longer equal any element, and its backward's mask
# `x == amin` would count none: 1/0).
EXACT_OPS = frozenset("""
    abs adaptive_max_pool2d adaptive_max_pool2d_backward amax amin cat ceil clamp clamp_max
    clamp_min clone constant_pad_nd copy cummax cummin detach diagonal_scatter empty empty_like
    expand fill flip floor fmax fmin full full_like gather hardtanh hardtanh_backward index
    index_put index_select kthvalue lift_fresh_copy masked_fill max max_pool2d_with_indices
    max_pool2d_with_indices_backward maximum median min minimum mode nanmedian neg new_empty
    new_full new_ones new_zeros ones ones_like relu repeat roll round scalar_tensor scatter
    select_scatter sgn sign slice_scatter sort stack threshold_backward topk tril triu trunc where
    zeros zeros_like _to_copy _unsafe_view
""".split())


def _value_hash(t: torch.Tensor, seed: int) -> torch.Tensor:
    """A number in [0, 1) per element that depends only on the element's value and `seed`:
    rounding is a function of the value, so equal values must move together (12,000 copies of
    40 distinct values, seed 201994, round 40 ways, not 12,000; independent draws would average
    their error away). 0.5 (no move) for inf and NaN."""
    u = torch.frac(torch.sin(t.detach().double() * 12.9898 + (seed % 1000) * 78.233) * 43758.5453).abs()
    return u.nan_to_num(nan=0.5).to(t.dtype)


class _PerturbResults(torch.utils._python_dispatch.TorchDispatchMode):
    """Multiplies every floating result of a rounding op (not in EXACT_OPS, not a view, not
    mutating) by (1 + eps*u), u in [-1, 1) a function of the value and `seed` (`_value_hash`)."""

    def __init__(self, eps: float, seed: int):
        super().__init__()
        self.eps, self.seed = eps, seed

    def _perturb(self, t: Any) -> Any:
        if not isinstance(t, torch.Tensor) or not t.dtype.is_floating_point or t.numel() == 0:
            return t
        return t * (1 + self.eps * (2 * _value_hash(t, self.seed) - 1))

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        result = func(*args, **(kwargs or {}))
        schema = func._schema
        name = func.__name__.split(".")[0]
        if name in EXACT_OPS or name.removesuffix("_copy") in EXACT_OPS or schema.is_mutable or any(r.alias_info is not None for r in schema.returns):
            return result
        return torch.utils._pytree.tree_map(self._perturb, result)


def _unless_as_inductor(program: Program, dev: torch.device, backward: bool, mlc: Run, outcome: Outcome) -> Outcome:
    """`outcome`, or `as_inductor` where Inductor's outputs and gradients equal mlc's (within the
    same tolerances): the program is so ill-conditioned in its dtype that rounding an
    intermediate where both compilers store it moves the result past eager's tolerance (seed
    102906: an f16 buffer of 4,072 values summed against its own inputs, to -0.345 in both and
    -0.363 in eager; float64 says -0.364). Reported apart from mismatches, never silently."""
    inductor_in = program.make_inputs(dev)
    try:
        torch._dynamo.reset()
        compiled = torch.compile(lambda *args: program(*args), fullgraph=True, dynamic=False)
        inductor = _run(compiled, inductor_in, backward)[0]
    except Exception:  # noqa: BLE001 -- no second opinion: the mismatch stands
        return outcome
    if _compare_runs(program, mlc, (inductor, inductor_in), None).kind != "ok":
        return outcome
    return Outcome("as_inductor", outcome.cause, outcome.detail)


# -- shrinking --------------------------------------------------------------------------------


def eager_values(program: Program) -> dict[str, torch.Tensor] | None:
    """Every named value of the program, run eagerly on CPU (None when eager fails)."""
    env: dict[str, torch.Tensor] = {i.name: i.make().detach() for i in program.inputs}
    try:
        with torch.no_grad():
            for s in program.stmts:
                from mlc.tools.fuzz_ops import apply

                env[s.out] = apply(s.op, [env[a] for a in s.args], s.p)
            outputs = [env[o] for o in program.outputs]
    except Exception:  # noqa: BLE001 -- an invalid candidate
        return None
    return env if all(isinstance(o, torch.Tensor) for o in outputs) else None


def _as_input(program: Program, stmt: Stmt, value: torch.Tensor) -> Program:
    """`program` with `stmt`'s value becoming a fresh input of the same shape, dtype and range,
    and the special values (`special_values`) it holds, as often."""
    if value.numel() == 0:
        low, high = 0, 1
    elif value.dtype.is_floating_point:
        finite = value[torch.isfinite(value)].float()
        low, high = (round(float(finite.min()), 3), round(float(finite.max()), 3)) if finite.numel() else (0.0, 1.0)
    else:
        low, high = int(value.min()), int(value.max())
    grad = program.backward and value.dtype.is_floating_point
    seed = program.seed * 1000 + 500 + len(program.inputs)
    specials, fraction = special_values(value)
    inp = Input(stmt.out, tuple(value.shape), value.dtype, low, high, grad, seed, specials, fraction)
    stmts = tuple(s for s in program.stmts if s is not stmt)
    return replace(program, inputs=program.inputs + (inp,), stmts=stmts).pruned()


def special_values(value: torch.Tensor) -> tuple[tuple[float, ...], float]:
    """The non-finite values and negative zeros `value` holds, and their share of its elements."""
    if not value.dtype.is_floating_point or value.numel() == 0:
        return (), 0.0
    kinds = {-0.0: (value == 0) & value.signbit(), float("inf"): value == float("inf"),
             float("-inf"): value == float("-inf"), float("nan"): value.isnan()}
    present = {v: mask for v, mask in kinds.items() if mask.any()}
    if not present:
        return (), 0.0
    share = float(sum(mask.sum() for mask in present.values())) / value.numel()
    return tuple(present), round(share, 3)


def _renamed(program: Program, old: str, new: str) -> Program:
    stmts = tuple(Stmt(s.out, s.op, tuple(new if a == old else a for a in s.args), s.params)
                  for s in program.stmts if s.out != old)
    outputs = tuple(dict.fromkeys(new if o == old else o for o in program.outputs))
    return replace(program, stmts=stmts, outputs=outputs).pruned()


def _resized(program: Program, size: int, to: int) -> Program:
    """Every input dim (and size parameter) equal to `size` set to `to`."""
    inputs = tuple(replace(i, shape=tuple(to if d == size else d for d in i.shape)) for i in program.inputs)

    def param(value: Any) -> Any:
        if isinstance(value, tuple):
            return tuple(param(v) for v in value)
        return to if isinstance(value, int) and not isinstance(value, bool) and value == size else value

    stmts = tuple(replace(s, params=tuple((k, param(v) if k in ("n", "shape", "sizes", "arg") else v)
                                          for k, v in s.params)) for s in program.stmts)
    return replace(program, inputs=inputs, stmts=stmts)


def candidates(program: Program) -> Iterator[Program]:
    """Smaller variants of `program`, the ones removing most first."""
    if len(program.outputs) > 1:
        for o in program.outputs:
            yield replace(program, outputs=tuple(x for x in program.outputs if x != o)).pruned()
    by_out = {s.out: s for s in program.stmts}
    for k, o in enumerate(program.outputs):  # return what an output is computed from instead
        for arg in by_out[o].args if o in by_out else ():
            if arg in by_out:
                outputs = tuple(dict.fromkeys(program.outputs[:k] + (arg,) + program.outputs[k + 1:]))
                yield replace(program, outputs=outputs).pruned()
    values = eager_values(program)
    if values is None:
        return
    for stmt in program.stmts:
        yield _as_input(program, stmt, values[stmt.out])
    sizes = sorted({d for i in program.inputs for d in i.shape if d > 1}, reverse=True)
    for size in sizes:
        for to in dict.fromkeys((1, 2, 3, size // 8, size // 2, size - 1)):
            if 0 < to < size:
                yield _resized(program, size, to)
    for stmt in program.stmts:
        for arg in dict.fromkeys(stmt.args):
            v, a = values[stmt.out], values[arg]
            if v.shape == a.shape and v.dtype == a.dtype:
                yield _renamed(program, stmt.out, arg)
    if program.backward:
        yield replace(program, inputs=tuple(replace(i, grad=False) for i in program.inputs))
        for k, i in enumerate(program.inputs):
            if i.grad and sum(j.grad for j in program.inputs) > 1:
                yield replace(program, inputs=program.inputs[:k] + (replace(i, grad=False),) + program.inputs[k + 1:])
    for k, i in enumerate(program.inputs):
        if i.dtype in (torch.float16, torch.bfloat16):
            yield replace(program, inputs=program.inputs[:k] + (replace(i, dtype=torch.float32),) + program.inputs[k + 1:])


def shrink(program: Program, outcome: Outcome, check: Callable[[Program], Outcome] = check_program,
           max_tries: int = 200, max_seconds: float = 600.0, log: Callable[[str], None] | None = None) -> Program:
    """The smallest variant of `program` found whose `check` fails with `outcome`'s signature
    (greedy: take the first candidate that still fails, start over, until none does)."""
    start, tries, current = time.monotonic(), 0, program
    progress = True
    while progress:
        progress = False
        for candidate in candidates(current):
            if tries >= max_tries or time.monotonic() - start > max_seconds:
                return current
            if candidate == current or not candidate.stmts or eager_values(candidate) is None:
                continue
            tries += 1
            if check(candidate).signature == outcome.signature:
                current, progress = candidate, True
                if log:
                    log(f"  shrunk to {len(current.stmts)} statements, {current.numel()} input elements")
                break
    return current


# -- the pytest case --------------------------------------------------------------------------


def _input_source(i: Input) -> str:
    """The lines making input `i` as `Input.make` does (special values: `with_specials`)."""
    g = f"torch.Generator().manual_seed({i.seed})"
    grad = ".requires_grad_()" if i.grad else ""
    if i.dtype == torch.bool:
        value = f"torch.rand({i.shape}, generator={g}) > 0.5"
    elif i.specials:
        specials = ", ".join(lit(v) for v in i.specials)
        return "\n    ".join([
            f"g = {g}",
            f"{i.name} = torch.rand({i.shape}, generator=g) * {i.high - i.low!r} + {i.low!r}",
            f"chosen = torch.rand({i.shape}, generator=g) < {i.special_fraction!r}",
            f"special = torch.tensor([{specials}])[torch.randint({len(i.specials)}, {i.shape}, generator=g)]",
            f"{i.name} = torch.where(chosen, special, {i.name})",
            f"{i.name} = {i.name}.to({i.dtype}).to(device){grad}",
        ])
    elif i.dtype.is_floating_point:
        value = f"(torch.rand({i.shape}, generator={g}) * {i.high - i.low!r} + {i.low!r}).to({i.dtype})"
    else:
        value = f"torch.randint({int(i.low)}, {int(i.high) + 1}, {i.shape}, generator={g}).to({i.dtype})"
    return f"{i.name} = ({value}).to(device){grad}"


def pytest_case(program: Program, outcome: Outcome | None = None) -> str:
    """`program` as a test for test/e2e (fixtures `check` / `check_grad` and `device`)."""
    fixture = "check_grad" if program.backward else "check"
    values = eager_values(program) or {}
    tols = [tolerance(values[o], program.dtypes_behind(o)) for o in program.outputs
            if o in values and values[o].dtype.is_floating_point]
    rtol = max((t[0] for t in tols), default=1e-4)
    atol = max((t[1] for t in tols), default=1e-5)
    body = program.source("f").replace("\n", "\n    ")
    lines = [f"def test_fuzz_seed_{program.seed}({fixture}, device):"]
    if outcome is not None:
        lines.append(f'    """mlc-fuzz seed {program.seed}: {outcome.kind}: {outcome.detail.splitlines()[0][:150]}"""')
    lines.append(f"    {body}")
    lines += [f"    {_input_source(i)}" for i in program.inputs]
    args = ", ".join(i.name for i in program.inputs)
    lines.append(f"    {fixture}(f, {args}, rtol={rtol!r}, atol={atol:.3g})")
    return "\n".join(lines)


# -- a faster interpreter ---------------------------------------------------------------------


@contextlib.contextmanager
def interpreter_speedups() -> Iterator[None]:
    """`fast_interpreter_reductions` and `largest_interpreter_blocks` inside the block only."""
    undo = [fast_interpreter_reductions(), largest_interpreter_blocks()]
    try:
        yield
    finally:
        for restore in undo:
            restore()


def fast_interpreter_reductions() -> Callable[[], None]:
    """Make the Triton interpreter's `tl.reduce` a pairwise tree over half-tiles (see the
    module docstring); returns what undoes it (a no-op when it was installed already)."""
    import numpy as np
    from triton.runtime import interpreter

    ops = interpreter.ReduceOps
    if getattr(ops.generic_reduce, "_mlc_fast", False):
        return lambda: None
    element_wise = ops.generic_reduce

    def generic_reduce(self: Any, input: Any) -> Any:
        original_axis = self.axis
        tensors, axis = self.unravel(input, self.axis)
        shape = tensors[0].handle.data.shape
        if 0 in shape:
            return element_wise(self, input)
        dtypes = [t.dtype for t in tensors]
        data = [np.moveaxis(t.handle.data, axis, -1) for t in tensors]
        while data[0].shape[-1] > 1:
            half = data[0].shape[-1] // 2
            left = tuple(self.to_tensor(d[..., :half], t) for d, t in zip(data, dtypes))
            right = tuple(self.to_tensor(d[..., half:2 * half], t) for d, t in zip(data, dtypes))
            combined = self.combine_fn.fn(*left, *right)
            combined = combined if isinstance(combined, tuple) else (combined,)
            data = [np.concatenate([np.broadcast_to(_np(c), d[..., :half].shape).astype(d.dtype), d[..., 2 * half:]],
                                   axis=-1) for d, c in zip(data, combined)]
        results = []
        for d, t in zip(data, dtypes):
            d = d[..., 0]
            if self.keep_dims:
                d = np.expand_dims(d, axis) if original_axis is not None else d.reshape((1,) * len(shape))
            elif original_axis is None:
                d = d.item()
            results.append(self.to_tensor(d, t))
        return results

    generic_reduce._mlc_fast = True  # type: ignore[attr-defined]
    ops.generic_reduce = generic_reduce

    def restore() -> None:
        ops.generic_reduce = element_wise

    return restore


def largest_interpreter_blocks() -> Callable[[], None]:
    """Under the interpreter, launch each kernel with its configuration of the largest tile
    (fewest programs: the interpreter's cost is per program) instead of the first; a GPU
    autotunes over all of them, so each must be right. Generated modules bind `launch` when
    they are loaded: call this before compiling. Returns what undoes it (and forgets the
    modules loaded meanwhile, which hold the replaced `launch`)."""
    from mlc.codegen import runtime, triton_helpers

    if not triton_helpers.INTERPRETING or getattr(triton_helpers.launch, "_mlc_fast", False):
        return lambda: None
    launch = triton_helpers.launch

    def largest(kernel: Any, configs: tuple[dict, ...], *rest: Any, **options: Any) -> None:
        def size(c: dict) -> int:
            return c.get("XBLOCK", 1) * c.get("YBLOCK", 1) * c.get("R0_BLOCK", 1)

        return launch(kernel, (max(configs, key=size),), *rest, **options)  # `launch`'s own arguments

    largest._mlc_fast = True  # type: ignore[attr-defined]
    triton_helpers.launch = largest

    def restore() -> None:
        triton_helpers.launch = launch
        runtime._LOADED.clear()

    return restore


def _np(value: Any) -> Any:
    return value.handle.data if hasattr(value, "handle") else value
