"""Which stage of the pipeline IR is at, and the one check every pass makes of its input.

mlc's IR moves through four stages, each a dialect: `aten` (the imported graph, in
`func.func`), `loops` (after `--lower-aten`, still in `func.func`), `buffer` (a `buffer.graph`,
after `--realize`) and `triton` (kernels and the host wrapper, after `--convert-to-triton`).
A pass names the stages it accepts (`ACCEPTS`, a class attribute) and calls
`check_stage(self, module)` first: IR of any other stage fails at the first such op, with
what to run instead, rather than passing through unchanged.

    convert-to-triton expects buffer IR (run --lower-aten, --inline, --realize first); found aten.add.Tensor

An op's stage is that of the outermost op of one of these dialects that holds it (or itself):
`loops.index` inside a `buffer.computed` is buffer IR. A `func.func` without such ops (an
identity function) is loops IR, which `--realize` turns into a graph, and aten IR too. Other dialects (func,
arith, math, builtin) belong to every stage.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.utils.exceptions import PassFailedException

# In pipeline order; each with the passes that take IR of the stage before to it.
STAGES = ("aten", "loops", "buffer", "triton")
MADE_BY = {
    "aten": ("mlc-import",),
    "loops": ("--lower-aten",),
    "buffer": ("--inline", "--realize"),
    "triton": ("--convert-to-triton",),
}


def stage_of(op: Operation) -> str | None:
    """The stage whose dialect `op` is of, or None for the dialects every stage uses."""
    dialect = op.name.split(".")[0]
    return dialect if dialect in STAGES else None


def staged_ops(module: ModuleOp) -> Iterator[tuple[Operation, str]]:
    """Each outermost op of a stage dialect, with its stage, in program order.

    A `func.func` holding none of them stands for the loops stage itself."""
    for op in module.body.block.ops:
        if (stage := stage_of(op)) is not None:
            yield op, stage
        elif isinstance(op, func.FuncOp) and op.body.blocks:  # a declaration is no stage
            inner = list(_outermost(op))
            yield from inner or [(op, "loops")]


def _outermost(op: Operation) -> Iterator[tuple[Operation, str]]:
    for region in op.regions:
        for block in region.blocks:
            for inner in block.ops:
                if (stage := stage_of(inner)) is not None:
                    yield inner, stage
                else:
                    yield from _outermost(inner)


def _hint(found: str, expected: str) -> str:
    """What turns IR of stage `found` into IR of stage `expected`, or why nothing does."""
    at, want = STAGES.index(found), STAGES.index(expected)
    if at < want:
        passes = [p for s in STAGES[at + 1 : want + 1] for p in MADE_BY[s]]
        return f"run {', '.join(passes)} first"
    return f"this is {found} IR, the output of {MADE_BY[found][-1]}"


def stage_error(pass_name: str, op: Operation, found: str, accepts: Sequence[str]) -> PassFailedException:
    """The failure for IR of stage `found` given to a pass that takes `accepts` (first: its own)."""
    expected = accepts[0]
    error = PassFailedException(
        f"{pass_name} expects {expected} IR ({_hint(found, expected)}); found {op.name}"
    )
    error.op = op  # type: ignore[attr-defined]  # tools point at op's position
    return error


def check_stage(pass_: object, module: ModuleOp) -> None:
    """Fail unless every staged op of `module` is of a stage `pass_.ACCEPTS` names."""
    accepts: Sequence[str] = getattr(pass_, "ACCEPTS")
    name: str = getattr(pass_, "name")
    for op, stage in staged_ops(module):
        if isinstance(op, func.FuncOp) and "aten" in accepts:
            continue  # an identity function is aten IR as well as loops IR
        if stage not in accepts:
            raise stage_error(name, op, stage, accepts)
