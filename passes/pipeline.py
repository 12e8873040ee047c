"""Running a pass pipeline: the one loop `mlc.run_passes`, `mlc-opt` and the backend share.

    passes = load_pipeline("lower-aten,inline{reads-threshold=1},realize")
    run_pipeline(module, passes, ctx, verify=module_verify, after_pass=dump)

Each pass is applied, then `after_pass(pass, module)` runs (a dump, `--print-ir-after-all`:
before verification, so that IR a pass broke can be seen), then the module is verified. With
`verify_each=False` (MLIR's `PassManager::enableVerifier(false)`, but keeping one check) the
module is verified once, after the last pass: a JIT pays for one verification instead of one per
pass, and a failure says only that the pipeline's output does not verify (`PassFailed.located`
is False); a driver reruns with `verify_each=True` to name the pass.

A pass explains its decisions with `remark(op, message)` (MLIR's `op->emitRemark()`): each goes
to the running pipeline's `on_remark` as a `Remark` naming the pass and the op it is about;
mlc-opt prints them as `file:line:col: remark: ...`, the backend writes them to its dump.
Outside a pipeline, or with no `on_remark`, remarks are dropped.

Python's cycle collector is paused while a pipeline runs (`gc_paused`): passes make and drop
millions of small IR objects, and the collector's passes over them, and over the rest of the
heap (a model, torch), were 40% of the pipeline's time on GPT-2's backward (3.5 s instead of
6.0 s, for 25 MB more at the peak).

With a `Timing`, each pass's wall time (its verification apart) is recorded in pipeline order,
and `Timing.report()` prints them as MLIR's `-mlir-timing` does: one row per pass, its share of
the total, the total last.

A failure is a `PassFailed` that names the pass and says
whether the pass itself raised (`in_verify=False`) or left IR that does not verify
(`in_verify=True`); each driver turns it into its own kind of error (a diagnostic with
file:line:col in mlc-opt, `MlcCompileError` in the backend) without re-deciding what failed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
import gc
import time
from dataclasses import dataclass, field
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass


def option(default: Any, help: str) -> Any:
    """A pass option (a field of the pass's dataclass) with the sentence `mlc-opt --help`
    prints after its default, as `mlir-opt --help` describes each pass option."""
    return field(default=default, metadata={"help": help})


@dataclass(frozen=True)
class Remark:
    """A decision a pass explains: which pass, about which op, and what it decided."""

    pass_name: str
    op: Operation
    message: str


_REMARKS: ContextVar[Callable[[Operation, str], None] | None] = ContextVar("mlc_remarks", default=None)


def remark(op: Operation, message: str) -> None:
    """Report `message` about `op` to the running pipeline (see the module docstring)."""
    sink = _REMARKS.get()
    if sink is not None:
        sink(op, message)


@contextmanager
def _remarks_of(pass_name: str, on_remark: Callable[[Remark], None] | None) -> Iterator[None]:
    sink = None if on_remark is None else (lambda op, message: on_remark(Remark(pass_name, op, message)))
    token = _REMARKS.set(sink)
    try:
        yield
    finally:
        _REMARKS.reset(token)


@dataclass
class Timing:
    """Wall seconds per step, in order (MLIR's pass timing): a pass, its verification, or a
    step of a driver (the backend adds emitting Python and the first call)."""

    rows: list[tuple[str, float]] = field(default_factory=list)

    def add(self, name: str, seconds: float) -> None:
        self.rows.append((name, seconds))

    @property
    def total(self) -> float:
        return sum(seconds for _, seconds in self.rows)

    def report(self) -> str:
        total = self.total
        lines = ["===" + "-" * 70 + "===", "Execution time report".center(76).rstrip(), "===" + "-" * 70 + "===",
                 f"  Total Execution Time: {total:.4f} seconds", "", "  ----Wall Time----  ----Name----"]
        for name, seconds in [*self.rows, ("Total", total)]:
            share = 100 * seconds / total if total > 0 else 0.0
            lines.append(f"  {seconds:8.4f} ({share:5.1f}%)  {name}")
        return "\n".join(lines) + "\n"


class PassFailed(Exception):
    """`pass_name` (the pipeline's pass number `index`, from 0) raised `cause`, or
    (`in_verify`) its output failed to verify with `cause`."""

    def __init__(self, pass_name: str, cause: BaseException, in_verify: bool = False, index: int = 0,
                 located: bool = True):
        super().__init__(f"pass '{pass_name}' {'left IR that does not verify' if in_verify else 'failed'}: {cause}")
        self.pass_name, self.cause, self.in_verify, self.index = pass_name, cause, in_verify, index
        self.located = located  # False: verified only after the last pass, so any pass may be at fault


def load_pipeline(*specs: str) -> list[ModulePass]:
    """The passes of one or more pipeline specs, in order, a registered pipeline's name (`default`)
    standing for its passes (`registry.parse_pipeline`: a malformed spec raises xDSL's
    `ArgSpecParseError`, an unknown pass or option or a bad value `PipelineError`)."""
    from mlc.passes.registry import parse_pipeline

    return [p for spec in specs for p in parse_pipeline(spec).passes]


def run_pipeline(
    module: ModuleOp,
    passes: Sequence[ModulePass],
    ctx: Context,
    verify: Callable[[ModuleOp], None] = ModuleOp.verify,
    after_pass: Callable[[ModulePass, ModuleOp], None] | None = None,
    on_remark: Callable[[Remark], None] | None = None,
    timing: Timing | None = None,
    verify_each: bool = True,
) -> None:
    """Apply `passes` to `module` in place, verifying after each, or with `verify_each=False`
    after the last (see the module docstring)."""
    with gc_paused():
        for index, p in enumerate(passes):
            start = time.perf_counter()
            try:
                with _remarks_of(p.name, on_remark):
                    p.apply(ctx, module)
            except Exception as e:
                raise PassFailed(p.name, e, index=index) from e
            applied = time.perf_counter()
            if after_pass is not None:
                after_pass(p, module)
            if timing is not None:
                timing.add(p.name, applied - start)
            if verify_each:
                _verify(module, verify, p.name, index, timing)
        if not verify_each and passes:
            _verify(module, verify, passes[-1].name, len(passes) - 1, timing, located=False)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cycle collector off inside (see the module docstring), as it was after; what
    it would have freed meanwhile waits for its next collection."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _verify(module: ModuleOp, verify: Callable[[ModuleOp], None], pass_name: str, index: int,
            timing: Timing | None, located: bool = True) -> None:
    start = time.perf_counter()
    try:
        verify(module)
    except Exception as e:
        raise PassFailed(pass_name, e, in_verify=True, index=index, located=located) from e
    if timing is not None:
        timing.add(f"{pass_name} (verify)" if located else "verify the pipeline's output", time.perf_counter() - start)
