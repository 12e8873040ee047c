"""What one `torch.compile` asks of mlc: its `mode` and `options`, over the environment.

    torch.compile(model, backend="mlc", mode="reduce-overhead")
    torch.compile(model, backend="mlc", options={"cudagraphs": True, "dump_dir": "/tmp/dump"})
    mlc.compile_fx(gm, example_inputs, mode="max-autotune")

torch.compile hands a backend `mode` and `options` as keyword arguments whenever they are
given (`_TorchCompileWrapper`: `mode` unless it is "default", `options` unless empty; it
refuses both at once). `compile_settings` resolves them into a `Settings`, the plain record
that each graph's compile reads: the environment variables give the defaults, the mode
overrides them, an option overrides both. Resolved when Dynamo hands mlc a graph, so that its
forward and backward compile alike.

The modes are Inductor's, mapped to what mlc has:

    default                      the environment's settings
    reduce-overhead              cudagraphs: every graph's calls replay a CUDA graph (MLC_CUDAGRAPHS=1)
    max-autotune                 max_autotune and cudagraphs
    max-autotune-no-cudagraphs   max_autotune, and no CUDA graphs (MLC_CUDAGRAPHS=0)

`max_autotune` asks convert-to-triton for every config it can offer the launch's autotuner
(`autotune-pointwise=true`); that is its default already: mlc has no wider search
(reduction configs come from fixed heuristics, and nothing like Inductor's matmul templates or
coordinate-descent tuning).

`gemm` (MLC_GEMM) says what runs mm and addmm: "extern" (the default) cuBLAS calls, with the
pointwise work around them as separate kernels; "triton" mlc's own tiled `tl.dot` kernels with
their epilogues fused (`passes/lowering/matmul.py`), `_grouped_mm` (a mixture of experts')
too; "auto" those kernels, each timed at its first run against the same work as cuBLAS plus
the epilogue's own kernel (a grouped product's: torch's `_grouped_mm`), the faster kept
(`convert-to-triton{gemm=measure}`, `triton_helpers.choose`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Settings:
    """mlc's settings for one compile; each field is an `options` key."""

    cudagraphs: bool | None = None  # MLC_CUDAGRAPHS: True every graph, False none, None graphs of static sizes (policy)
    max_autotune: bool = False  # every config convert-to-triton can offer the autotuner
    pipeline: str | None = None  # MLC_PIPELINE: a pass pipeline instead of the default
    fallback: bool = False  # MLC_FALLBACK: a graph mlc cannot compile runs eagerly, with a warning
    dump_dir: str | None = None  # MLC_DUMP_DIR: every graph's IR after each pass (frontend/dump.py)
    debug: bool = False  # MLC_DEBUG: kernels assert loaded positions are in bounds; IR verified after each pass
    # MLC_CHANNELS_LAST=0 turns it off: convolutions in channels-last where Inductor's rules say so
    # (frontend/channels_last.py), as Inductor's layout optimization does by default
    channels_last: bool = True
    # MLC_GEMM: mm/addmm as cuBLAS calls ("extern"), as mlc's Triton GEMMs with their epilogues fused
    # ("triton"), or those timed against cuBLAS plus the epilogue at their first run ("auto")
    gemm: str = "extern"
    # MLC_COST_TARGET: a calibration's JSON (`bench/cost.py calibrate`) the dump's cost.txt
    # predicts kernel times with, instead of the H100's datasheet
    cost_target: str | None = None
    # MLC_FUSION: the order fuse merges legal pairs in: "score" (Inductor's) or "model" (the cost
    # model's predicted time saved, passes/fuse.py's priority)
    fusion: str = "score"
    # MLC_TUNE: the configs the runtime times per kernel: "all" the heuristics offer, the two the
    # cost model ranks fastest ("top-k"), or only its fastest ("model"; passes/rank_configs.py)
    tune: str = "all"

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] = os.environ) -> Settings:
        cudagraphs = environ.get("MLC_CUDAGRAPHS") or None
        return cls(cudagraphs=None if cudagraphs is None else cudagraphs != "0",
                   pipeline=environ.get("MLC_PIPELINE") or None,
                   fallback=_flag(environ.get("MLC_FALLBACK")),
                   dump_dir=environ.get("MLC_DUMP_DIR") or None,
                   debug=_flag(environ.get("MLC_DEBUG")),
                   channels_last=environ.get("MLC_CHANNELS_LAST") != "0",
                   gemm=environ.get("MLC_GEMM") or "extern",
                   cost_target=environ.get("MLC_COST_TARGET") or None,
                   fusion=environ.get("MLC_FUSION") or "score",
                   tune=environ.get("MLC_TUNE") or "all")


MODES: dict[str, dict[str, Any]] = {
    "default": {},
    "reduce-overhead": {"cudagraphs": True},
    "max-autotune": {"max_autotune": True, "cudagraphs": True},
    "max-autotune-no-cudagraphs": {"max_autotune": True, "cudagraphs": False},
}

# option -> the types its value may have
OPTION_TYPES: dict[str, tuple[type, ...]] = {
    "cudagraphs": (bool, type(None)),
    "max_autotune": (bool,),
    "pipeline": (str, type(None)),
    "fallback": (bool,),
    "dump_dir": (str, os.PathLike, type(None)),
    "debug": (bool,),
    "channels_last": (bool,),
    "gemm": (str,),
    "cost_target": (str, os.PathLike, type(None)),
    "fusion": (str,),
    "tune": (str,),
}
OPTION_VALUES: dict[str, tuple[Any, ...]] = {"gemm": ("extern", "triton", "auto"), "fusion": ("score", "model"),
                                             "tune": ("all", "top-k", "model")}


def compile_settings(mode: str | None = None, options: Mapping[str, Any] | None = None,
                     environ: Mapping[str, str] = os.environ) -> Settings:
    """The settings of a compile asked for with `mode` or `options` (ValueError: an unknown
    mode, option or value type)."""
    changes = {**_mode_settings(mode), **_option_settings(options or {})}
    settings = dataclasses.replace(Settings.from_environment(environ), **changes)
    for name, values in OPTION_VALUES.items():
        if getattr(settings, name) not in values:
            raise ValueError(f"mlc: {name} is one of {', '.join(map(repr, values))}, not {getattr(settings, name)!r} "
                             f"(option {name!r} or MLC_{name.upper()})")
    return settings


def _mode_settings(mode: str | None) -> dict[str, Any]:
    if mode is None:
        return {}
    if mode not in MODES:
        raise ValueError(f"mlc: unknown mode {mode!r}; mlc's modes are {', '.join(map(repr, MODES))}")
    return MODES[mode]


def _option_settings(options: Mapping[str, Any]) -> dict[str, Any]:
    """`options` by Settings field (a key may spell `_` as `-`, as Inductor's do)."""
    settings = {}
    for key, value in options.items():
        name = str(key).replace("-", "_")
        if name not in OPTION_TYPES:
            raise ValueError(f"mlc: unknown option {key!r}; mlc's options are {', '.join(map(repr, OPTION_TYPES))}")
        if not isinstance(value, OPTION_TYPES[name]):
            expected = " or ".join("None" if t is type(None) else t.__name__ for t in OPTION_TYPES[name])
            raise ValueError(f"mlc: option {key!r} takes {expected}, not {type(value).__name__} {value!r}")
        settings[name] = os.fspath(value) if isinstance(value, os.PathLike) else value
    return settings


def _flag(value: str | None) -> bool:
    return value not in (None, "", "0")
