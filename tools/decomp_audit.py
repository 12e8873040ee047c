"""Audit of mlc's decomposition table: each decomposition against the op it replaces.

    python -m mlc.tools.decomp_audit            # every entry; prints violations and coverage
    python -m mlc.tools.decomp_audit --ops gelu,_softmax

An entry's contract: for the same inputs, the decomposition returns what the op returns (the
same number of outputs, dtypes and shapes, values within float32 tolerance), and gradients
through the decomposition equal gradients through the op (AOTAutograd differentiates the
decomposed graph, so a decomposition that returns the right forward values but from which
autograd derives other gradients still computes wrong gradients).

Inputs come from OpInfo: the samples of op_db are run eagerly (forward and backward) under a
dispatch mode that records the arguments of every call of an op in the table, so an entry is
checked on the very calls that real programs make, backward ops (gelu_backward, ...) included.
Entries no sample reaches are reported as unchecked.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import torch
import torch.utils._pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode

ATOL = 1e-5
RTOL = 1e-5
CALLS_PER_OP = 4
"""Recorded calls kept per table entry: enough to cover a few shapes and argument forms."""

RANDOM = ("bernoulli", "rrelu", "new_empty", "empty", "native_dropout")
"""Packets whose outputs are random or uninitialised: shapes and dtypes only."""


@dataclass
class Finding:
    """A table entry whose contract does not hold on one recorded call."""

    op: str
    phase: str  # "forward" | "backward"
    what: str
    call: str  # the argument shapes of the call


# ---------------------------------------------------------------------------------------------
# Recording calls


class _Recorder(TorchDispatchMode):
    """Records (args, kwargs) copies of calls of the ops in `table`, a few per op."""

    def __init__(self, table: dict[Any, Callable[..., Any]]):
        super().__init__()
        self.table = table
        self.calls: dict[Any, list[tuple[Any, Any]]] = defaultdict(list)

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if func in self.table and len(self.calls[func]) < CALLS_PER_OP:
            self.calls[func].append(_copy((args, kwargs)))
        return func(*args, **kwargs)


def _copy(tree: Any) -> Any:
    return pytree.tree_map(lambda x: x.detach().clone() if isinstance(x, torch.Tensor) else x, tree)


def record_calls(
    table: dict[Any, Callable[..., Any]], opinfos: Iterable[Any], samples_per_op: int = 0
) -> dict[Any, list[tuple[Any, Any]]]:
    """The calls of table ops made by running the float32 CPU samples of `opinfos` eagerly,
    forward and (where the op supports autograd) backward."""
    recorder = _Recorder(table)
    for op in opinfos:
        try:
            samples = list(op.sample_inputs("cpu", torch.float32, requires_grad=op.supports_autograd))
        except Exception:  # noqa: BLE001 -- an OpInfo that cannot make samples records nothing
            continue
        for sample in samples[: samples_per_op or None]:
            with recorder:
                _run_sample(op, sample)
    return recorder.calls


def _run_sample(op: Any, sample: Any) -> None:
    try:
        out = op(sample.input, *sample.args, **sample.kwargs)
        diff = [t for t in pytree.tree_leaves(out) if isinstance(t, torch.Tensor) and t.grad_fn is not None]
        if diff:
            torch.autograd.backward(diff, [torch.ones_like(t) for t in diff])
    except Exception:  # noqa: BLE001 -- a sample eager rejects records what it reached
        pass


# ---------------------------------------------------------------------------------------------
# Checking one call


def check_call(op: Any, decomp: Callable[..., Any], args: Any, kwargs: Any) -> list[Finding]:
    """Forward (and, for a functional op with float inputs, backward) of `decomp` against `op`."""
    name = str(op)
    call = _describe(args, kwargs)
    try:
        expected = op(*_copy(args), **_copy(kwargs))
    except Exception:  # noqa: BLE001 -- the op itself rejects this call (recorded mid-error)
        return []
    try:
        actual = decomp(*_copy(args), **_copy(kwargs))
    except Exception as e:  # noqa: BLE001
        return [Finding(name, "forward", f"raises {type(e).__name__}: {_first_line(e)}", call)]
    problem = compare(actual, expected, random=any(r in name for r in RANDOM))
    if problem:
        return [Finding(name, "forward", problem, call)]
    if not above_autograd(op) or not _differentiable(op) or any(r in name for r in RANDOM):
        return []
    problem = _check_grads(op, decomp, args, kwargs)
    return [Finding(name, "backward", problem, call)] if problem else []


def above_autograd(op: Any) -> bool:
    """Whether AOTAutograd differentiates through the decomposition of `op`: only for an op
    decomposed above autograd (CompositeImplicitAutograd). Any other op is differentiated with
    its own derivative formula, and the backward ops that formula calls are decomposed (and
    audited, being recorded from the backward runs) in turn."""
    return torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), "CompositeImplicitAutograd")


def compare(actual: Any, expected: Any, random: bool = False) -> str | None:
    """None when `actual` matches `expected` (structure, dtypes, shapes, values), else why."""
    a, e = pytree.tree_leaves(actual), pytree.tree_leaves(expected)
    if len(a) != len(e):
        return f"{len(a)} outputs, the op returns {len(e)}"
    for k, (x, y) in enumerate(zip(a, e)):
        if not isinstance(y, torch.Tensor):
            continue
        if not isinstance(x, torch.Tensor):
            return f"output {k}: {type(x).__name__}, the op returns a tensor"
        if (x.shape, x.dtype) != (y.shape, y.dtype):
            return f"output {k}: {tuple(x.shape)} {x.dtype}, the op returns {tuple(y.shape)} {y.dtype}"
        if random or y.numel() == 0:
            continue
        try:
            torch.testing.assert_close(x, y, equal_nan=True, atol=ATOL, rtol=RTOL)
        except AssertionError as err:
            return f"output {k}: values differ ({_mismatch(err)})"
    return None


def _check_grads(op: Any, decomp: Callable[..., Any], args: Any, kwargs: Any) -> str | None:
    grads_op = _grads(op, args, kwargs, None)
    if grads_op is None:  # the op has no derivative here: nothing to hold the decomposition to
        return None
    expected, cotangents = grads_op
    try:
        got = _grads(decomp, args, kwargs, cotangents)
    except Exception as e:  # noqa: BLE001
        return f"autograd through the decomposition raises {type(e).__name__}: {_first_line(e)}"
    if got is None:
        return "no output of the decomposition is differentiable, the op's are"
    for k, (x, y) in enumerate(zip(got[0], expected)):
        try:
            torch.testing.assert_close(x, y, equal_nan=True, atol=ATOL, rtol=RTOL)
        except AssertionError as err:
            return f"grad of float input {k} differs ({_mismatch(err)})"
    return None


def _grads(fn: Callable[..., Any], args: Any, kwargs: Any, cotangents: Any) -> Any:
    """Grads of every float input through `fn` for fixed random cotangents; None when no output
    is differentiable or `fn` (the op, with cotangents None) has no derivative."""
    reference = cotangents is None
    args, kwargs = _copy(args), _copy(kwargs)
    leaves = [t for t in pytree.tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor) and t.is_floating_point()]
    for t in leaves:
        t.requires_grad_(True)
    try:
        out = fn(*args, **kwargs)
        diff = [t for t in pytree.tree_leaves(out) if isinstance(t, torch.Tensor) and t.grad_fn is not None]
        if not diff:
            return None
        if cotangents is None:
            gen = torch.Generator().manual_seed(0)
            cotangents = [torch.randn(t.shape, dtype=t.dtype, generator=gen) for t in diff]
        if len(cotangents) != len(diff):
            raise RuntimeError(f"{len(diff)} differentiable outputs, the op has {len(cotangents)}")
        grads = torch.autograd.grad(diff, leaves, cotangents, allow_unused=True)
    except Exception:
        if reference:
            return None
        raise
    return [g if g is not None else torch.zeros_like(x) for g, x in zip(grads, leaves)], cotangents


def _differentiable(op: Any) -> bool:
    """Functional ops only: in-place and out= overloads are not differentiated by AOTAutograd."""
    schema = op._schema
    return not schema.name.endswith("_") and not any(a.is_out for a in schema.arguments) and not any(
        a.alias_info is not None and a.alias_info.is_write for a in schema.arguments
    )


def _describe(args: Any, kwargs: Any) -> str:
    def show(x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            return f"T{list(x.shape)}:{str(x.dtype).removeprefix('torch.')}"
        return x

    parts = [repr(pytree.tree_map(show, a)) for a in args] + [
        f"{k}={pytree.tree_map(show, v)!r}" for k, v in kwargs.items()
    ]
    return ", ".join(parts).replace("'", "")[:200]


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0][:160] if text else ""


def _mismatch(err: AssertionError) -> str:
    lines = [ln.strip() for ln in str(err).splitlines() if "Greatest absolute" in ln or "Mismatched" in ln]
    return "; ".join(lines)[:160] or _first_line(err)


# ---------------------------------------------------------------------------------------------
# The whole table


def audit(
    table: dict[Any, Callable[..., Any]], opinfos: Iterable[Any], samples_per_op: int = 0
) -> tuple[list[Finding], dict[Any, int]]:
    """Findings for the entries of `table` reached by the samples, and how many calls of each
    entry were checked (entries absent from the dict were reached by none)."""
    calls = record_calls(table, opinfos, samples_per_op)
    findings: list[Finding] = []
    checked: dict[Any, int] = {}
    for op, recorded in calls.items():
        checked[op] = len(recorded)
        for args, kwargs in recorded:
            found = check_call(op, table[op], args, kwargs)
            findings += found
            if found:
                break  # one finding per entry is enough to report it
    return findings, checked


def main(argv: list[str] | None = None) -> int:
    import warnings

    from torch.testing._internal.common_methods_invocations import op_db

    from mlc.frontend.decompositions import decomposition_table

    parser = argparse.ArgumentParser(prog="decomp_audit", description=__doc__.split("\n")[0])
    parser.add_argument("--ops", default="", help="only these table entries (packet names)")
    parser.add_argument("--samples", type=int, default=0, help="samples per OpInfo (0: all)")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    table = decomposition_table()
    wanted = {s for s in args.ops.split(",") if s}
    if wanted:
        table = {k: v for k, v in table.items() if _packet(k) in wanted}
    opinfos = [op for op in op_db if torch.float32 in op.supported_dtypes("cpu")]
    findings, checked = audit(table, opinfos, args.samples)
    for f in findings:
        print(f"VIOLATION {f.op} ({f.phase}): {f.what}\n    call: {f.call}")
    unchecked = sorted(str(k) for k in table if k not in checked)
    print(f"\n{len(table)} entries: {len(checked)} checked on OpInfo calls, {len(findings)} violate the contract, "
          f"{len(unchecked)} reached by no sample")
    return 1 if findings else 0


def _packet(op: Any) -> str:
    return getattr(op, "_opname", str(op).split(".")[1] if "." in str(op) else str(op))


if __name__ == "__main__":
    sys.exit(main())
