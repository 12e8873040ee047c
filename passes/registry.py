"""Every mlc pass and named pipeline, by its command-line name; pipeline text into passes.

Adding a pass is one module in `passes/` and one line here. Tools (`mlc-opt`, the backend,
embedders) read this table; `register_pass` adds a pass of one's own.

A named pipeline (MLIR's `PassPipelineRegistration`) stands for a pipeline text wherever a
pipeline names a pass: `-p default`, `mlc.run_passes(module, "default")`, or an element of a
longer pipeline (`-p 'default,my-pass'`). `default` is the torch.compile backend's pipeline,
`DEFAULT_PIPELINE`; `register_pipeline` adds one of one's own.
"""

from __future__ import annotations

import dataclasses
import importlib
import types
import typing
from collections.abc import Callable, Sequence
from typing import Any

from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.arg_spec import ArgSpec, ParameterListType, ParameterType
from xdsl.utils.arg_spec import parse_pipeline as parse_specs

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
    "convert-to-triton": "mlc.passes.to_triton:ConvertToTritonPass",
    "rank-configs": "mlc.passes.rank_configs:RankConfigsPass",
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

DEFAULT_PIPELINE = ("cse-aten,fold-addmm,pad-mm,lower-aten,inline,propagate-indices,realize,split-reductions,"
                    "reorder-loops,fuse,overlap-comm,convert-to-triton,online-softmax,cse,plan-buffers")
"""The backend's pipeline, aten to triton: `-p default`."""


@dataclasses.dataclass(frozen=True)
class NamedPipeline:
    """A pipeline registered by name: its text, and the line `mlc-opt --help` shows for it."""

    spec: str
    summary: str


# name -> pipeline (the order `--help` lists them).
PIPELINES: dict[str, NamedPipeline] = {
    "default": NamedPipeline(DEFAULT_PIPELINE, "the torch.compile backend's pipeline: aten IR to triton IR"),
}


def register_pass(cls: type[ModulePass]) -> type[ModulePass]:
    """Make a pass of one's own available to pipelines by its `name` (usable as a decorator)."""
    PASSES[cls.name] = lambda: cls
    return cls


def register_pipeline(name: str, spec: str, summary: str = "") -> None:
    """Make pipeline `spec` available by `name`, wherever a pipeline names a pass."""
    if name in PASSES:
        raise PipelineError(f"pipeline '{name}': a pass has that name")
    PIPELINES[name] = NamedPipeline(spec, summary)


def pass_summary(cls: type[ModulePass]) -> str:
    """The first line of a pass's docstring, for `--help`."""
    doc = (cls.__doc__ or "").strip()
    return doc.splitlines()[0] if doc else ""


def parse_pipeline(spec: str) -> PassPipeline:
    """`'lower-aten,inline,fuse{explain}'` -> the passes, with their options (a bare option
    means `=true`); a pipeline's name stands for its passes (`'default'`). The syntax is xDSL's
    (a malformed spec raises its `ArgSpecParseError`); an unknown pass or option, or a value
    of the wrong type, raises `PipelineError`."""
    return PassPipeline(tuple(make_pass(s) for s in _expanded(parse_specs(spec), ())))


def _expanded(specs: Sequence[ArgSpec], within: tuple[str, ...]) -> list[ArgSpec]:
    """`specs` with each named pipeline replaced by its passes (`within`: the names being
    expanded, outermost first, so that a pipeline that names itself is an error)."""
    out: list[ArgSpec] = []
    for spec in specs:
        if spec.name in PASSES or spec.name not in PIPELINES:
            out.append(spec)  # a pass, or an unknown name `make_pass` reports
        elif spec.parameters:
            raise PipelineError(f"pipeline '{spec.name}' takes no options (options go to its passes)")
        elif spec.name in within:
            raise PipelineError(f"pipeline '{spec.name}' names itself: {' -> '.join((*within, spec.name))}")
        else:
            out += _expanded(parse_specs(PIPELINES[spec.name].spec), (*within, spec.name))
    return out


class PipelineError(ValueError):
    """A pipeline names a pass or option that does not exist, or gives an option a bad value."""


def option_name(field_name: str) -> str:
    """An option as pipelines spell it: `check_indices` -> `check-indices`."""
    return field_name.replace("_", "-")


def make_pass(spec: ArgSpec) -> ModulePass:
    """The pass `spec` names, built with its options (MLIR's spelling `check-indices`, or
    xDSL's `check_indices`)."""
    if spec.name not in PASSES:
        raise PipelineError(f"unknown pass '{spec.name}' (mlc-opt --help lists the passes and pipelines)")
    cls = PASSES[spec.name]()
    options = {f.name: f for f in dataclasses.fields(cls) if f.init and f.name != "name"}
    types_of = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for key, given in spec.parameters.items():
        field_name = key.replace("-", "_")
        if field_name not in options:
            known = ", ".join(option_name(n) for n in options) or "none"
            raise PipelineError(f"pass '{spec.name}' has no option '{option_name(field_name)}' (its options: {known})")
        where = f"option '{option_name(field_name)}' of pass '{spec.name}'"
        values[field_name] = _option_value(where, types_of[field_name], given)
    missing = sorted(cls.required_fields() - values.keys())
    if missing:
        raise PipelineError(f"pass '{spec.name}' needs option '{option_name(missing[0])}'")
    try:
        return cls(**values)
    except ValueError as e:  # a pass's own check of its options (`__post_init__`)
        raise PipelineError(f"pass '{spec.name}': {e}") from e


_WORDS: dict[Any, str] = {bool: "a boolean (true/false)", int: "an integer", float: "a number", str: "a string"}
_PLURALS: dict[Any, str] = {bool: "booleans", int: "integers", float: "numbers", str: "strings"}


def _option_value(where: str, typ: Any, given: ParameterListType) -> Any:
    """`given` (the values after `=`, none for a bare name) as an option of type `typ`:
    a bool, int, float or str, a `tuple[T, ...]` of them, or one of these `| None`."""
    if typing.get_origin(typ) in (typing.Union, types.UnionType):
        if not given and type(None) in typing.get_args(typ):
            return None
        typ = next(t for t in typing.get_args(typ) if t is not type(None))
    if typing.get_origin(typ) is tuple:
        item = typing.get_args(typ)[0]
        return tuple(_scalar(where, item, v, f"a comma-separated list of {_PLURALS.get(item, item)}") for v in given)
    if typ is bool and not given:
        return True  # a bare option name: MLIR's `pass{flag}`
    if len(given) != 1:
        got = f"'{_spec_text(given)}'" if given else "no value"
        raise PipelineError(f"{where} expects {_WORDS.get(typ, typ)}, got {got}")
    return _scalar(where, typ, given[0], _WORDS.get(typ, str(typ)))


def _scalar(where: str, typ: Any, value: ParameterType, expected: str) -> Any:
    if typ is str:
        return _spec_text((value,))  # any word is a string: `fallback=gelu,1`
    if typ is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(typ, type) and isinstance(value, typ) and (typ is bool or not isinstance(value, bool)):
        return value
    raise PipelineError(f"{where} expects {expected}, got '{_spec_text((value,))}'")


def _spec_text(values: ParameterListType) -> str:
    """Values as they were written: `true`, `3`, `gelu`."""
    return ",".join(str(v).lower() if isinstance(v, bool) else str(v) for v in values)
