"""Every mlc pass, by its command-line name: one flat table of lazily imported classes.

Adding a pass is one module in `passes/` and one line here. Tools (`mlc-opt`, the backend,
embedders) read this table; `register_pass` adds a pass of one's own.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from xdsl.passes import ModulePass, PassPipeline

# name -> "module:Class", in pipeline order (the order `--help` lists them).
_BUILTIN: dict[str, str] = {
    "cse-aten": "mlc.passes.cse_aten:CseAtenPass",
    "fold-addmm": "mlc.passes.fold_addmm:FoldAddmmPass",
    "pad-mm": "mlc.passes.pad_mm:PadMmPass",
    "lower-aten": "mlc.passes.lower_aten:LowerAtenPass",
    "inline": "mlc.passes.inline:InlinePass",
    "propagate-indices": "mlc.passes.propagate_indices:PropagateIndicesPass",
    "realize": "mlc.passes.realize:RealizePass",
    "split-reductions": "mlc.passes.split_reductions:SplitReductionsPass",
    "reorder-loops": "mlc.passes.reorder_loops:ReorderLoopsPass",
    "deps": "mlc.passes.deps:DepsPass",
    "fuse": "mlc.passes.fuse:FusePass",
    "overlap-comm": "mlc.passes.overlap_comm:OverlapCommPass",
    "convert-to-triton": "mlc.passes.convert_to_triton:ConvertToTritonPass",
    "online-softmax": "mlc.passes.online_softmax:OnlineSoftmaxPass",
    "cse": "mlc.passes.cse:CsePass",
    "plan-buffers": "mlc.passes.plan_buffers:PlanBuffersPass",
}

PASSES: dict[str, Callable[[], type[ModulePass]]] = {}


def _loader(target: str) -> Callable[[], type[ModulePass]]:
    module, cls = target.split(":")
    return lambda: getattr(importlib.import_module(module), cls)


for _name, _target in _BUILTIN.items():
    PASSES[_name] = _loader(_target)


def register_pass(cls: type[ModulePass]) -> type[ModulePass]:
    """Make a pass of one's own available to pipelines by its `name` (usable as a decorator)."""
    PASSES[cls.name] = lambda: cls
    return cls


def pass_summary(cls: type[ModulePass]) -> str:
    """The first line of a pass's docstring, for `--help`."""
    doc = (cls.__doc__ or "").strip()
    return doc.splitlines()[0] if doc else ""


def parse_pipeline(spec: str) -> PassPipeline:
    """`'lower-aten,inline,fuse{explain=true}'` -> the passes, with their options."""
    return PassPipeline.parse_spec(PASSES, spec)
