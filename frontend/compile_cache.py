"""The compile cache: a graph compiled once is not compiled again, in this process or the next.

    key = graph_key(print_ir(imported_module), spec)   # before any pass runs
    entry = load(key)                                 # an Entry, or None (a miss)
    ...                                               # a miss: run the pipeline, emit Python
    store(key, Entry(source, input_layouts, output_layouts))

The key is the sha256 of everything the compiled code depends on:

* the imported module's IR, printed with locations (what `00-aten.mlir` holds): the graph, its
  shapes, dtypes, constants' types and the FX names that kernels are named after;
* the pipeline spec used (the `pipeline` setting or `MLC_PIPELINE`, with the options the dump and
  the `debug` and `max_autotune` settings add: `mlc.frontend.settings`; the settings that do
  not change the compiled code, `cudagraphs` and `fallback`, are applied after the cache);
* mlc's version and a hash of its compiler's source files (`dialects/`, `passes/`, `codegen/`,
  `analysis/`, `frontend/`): editing the compiler invalidates every entry;
* torch's and triton's versions, and the device (the GPU's name and compute capability, or
  Triton's interpreter).

An entry is `<cache>/graphs/<key>.json` (`mlc.codegen.runtime.cache_dir`), one JSON object:

    {"format": 2, "key": "<key>", "checksum": "<sha256 of the payload>",
     "payload": {"source": "<emitted Python>",
                 "input_layouts": [[sizes, strides] | null, ...],     # per wrapper input
                 "output_layouts": [[sizes, strides] | null, ...],    # per returned result
                 "launches": [kernel launches, extern calls]}}        # per call

The layouts and launches are what the backend reads of the compiled module besides its source
(which inputs to copy into the layout the kernels index, which results to copy into the strides
the graph promises, whether calls replay a CUDA graph); the layouts are compared with the inputs
and the graph's outputs on each compile.

Safety: an entry is written to a temporary file and renamed (`runtime.write_atomic`), so
concurrent writers race harmlessly (the last rename wins; both wrote the same compile) and a
reader never sees half a file. An entry that does not parse, has another format or key, a
payload of the wrong shape or a checksum that does not match is a miss: the graph is compiled
again and the entry overwritten. Nothing in an entry is evaluated except its source, imported
through `runtime.load_call` as a freshly emitted module is.

Triton's own cache (`~/.triton/cache`) already skips compiling a kernel text it compiled before;
the configs the autotuner picks are kept under `<cache>/autotune/` by `triton_helpers.launch`.
`MLC_CACHE=0` turns the graph cache (and the kept autotuning) off; the cache folder is then
never touched. A cache folder that cannot be created or written fails the compile with
`runtime.CacheDirError`, which names the folder and `MLC_CACHE_DIR`.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FORMAT = 2

Layout = tuple[tuple[int, ...], tuple[int, ...]]
"""A buffer's (sizes, strides); None in a list where they are symbolic."""

_COMPILER_DIRS = ("dialects", "passes", "codegen", "analysis", "frontend")


@dataclass(frozen=True)
class Entry:
    """What compiling a graph produced that the backend needs to run it."""

    source: str
    input_layouts: list[Layout | None]
    output_layouts: list[Layout | None]
    launches: tuple[int, int] = (0, 0)  # per call: Triton kernel launches, extern calls


def enabled() -> bool:
    """Whether the cache is used: yes unless `MLC_CACHE=0`."""
    from mlc.codegen.runtime import cache_enabled

    return cache_enabled()


def graph_key(ir: str, spec: str) -> str:
    """The key of a graph whose imported IR prints as `ir`, compiled with pipeline `spec`."""
    fields = {"format": FORMAT, "ir": ir, "spec": spec, **_environment()}
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


@functools.cache
def _environment() -> dict[str, str]:
    """Versions, compiler source hash and device: the same for every graph of a process."""
    from importlib import metadata

    import torch
    import triton

    from mlc.codegen.runtime import device_description

    try:
        version = metadata.version("mlc")
    except metadata.PackageNotFoundError:
        version = "unknown"
    return {"mlc": version, "mlc_source": _compiler_hash(), "torch": torch.__version__,
            "triton": triton.__version__, "device": device_description()}


def _compiler_hash() -> str:
    """sha256 over the compiler's .py files (path and content), in sorted path order."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in sorted(p for d in _COMPILER_DIRS for p in (root / d).rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def entry_path(key: str) -> Path:
    from mlc.codegen.runtime import cache_dir

    return cache_dir("graphs") / f"{key}.json"


def load(key: str) -> Entry | None:
    """The entry stored under `key`, or None: absent, unreadable or damaged (never trusted)."""
    try:
        data = json.loads(entry_path(key).read_text())
    except (OSError, ValueError):  # absent, unreadable, not UTF-8, not JSON
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("key") != key:
        return None
    payload = data.get("payload")
    if data.get("checksum") != _checksum(payload):
        return None
    return _entry(payload)


def store(key: str, entry: Entry) -> None:
    """Write `entry` under `key`, atomically; a cache that cannot be written is skipped."""
    from mlc.codegen.runtime import write_atomic

    payload = {"source": entry.source, "input_layouts": entry.input_layouts,
               "output_layouts": entry.output_layouts, "launches": list(entry.launches)}
    data = {"format": FORMAT, "key": key, "checksum": _checksum(payload), "payload": payload}
    try:
        write_atomic(entry_path(key), json.dumps(data))
    except OSError:
        pass  # a read-only or full cache: compiling still worked


def _checksum(payload: Any) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _entry(payload: Any) -> Entry | None:
    """The payload as an Entry, or None where its shape is not the one `store` writes."""
    if not isinstance(payload, dict) or not isinstance(payload.get("source"), str):
        return None
    layouts = [_layouts(payload.get(name)) for name in ("input_layouts", "output_layouts")]
    launches = payload.get("launches")
    if layouts[0] is None or layouts[1] is None or not _counts(launches):
        return None
    return Entry(payload["source"], layouts[0], layouts[1], (launches[0], launches[1]))


def _counts(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(type(n) is int and n >= 0 for n in value)


def _layouts(value: Any) -> list[Layout | None] | None:
    if not isinstance(value, list):
        return None
    layouts: list[Layout | None] = []
    for item in value:
        if item is None:
            layouts.append(None)
        elif (isinstance(item, list) and len(item) == 2 and all(isinstance(v, list) for v in item)
              and all(type(n) is int for v in item for n in v)):
            layouts.append((tuple(item[0]), tuple(item[1])))
        else:
            return None
    return layouts
