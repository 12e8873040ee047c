"""The compile cache: a graph compiled once is not compiled again, in this process or the next.

    key = graph_key(print_ir(imported_module), spec)   # before any pass runs
    emitted = load(key)                               # an EmittedModule, or None (a miss)
    ...                                               # a miss: run the pipeline, emit_module
    store(key, emitted)

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

An entry is `<cache>/graphs/<key>.json` (`mlc.codegen.cache.cache_dir`), one JSON object:

    {"format": 2, "key": "<key>", "checksum": "<sha256 of the payload>",
     "payload": {"source": "<emitted Python>",
                 "input_layouts": [[sizes, strides] | null, ...],     # per wrapper input
                 "output_layouts": [[sizes, strides] | null, ...],    # per returned result
                 "launches": [kernel launches, extern calls]}}        # per call

The payload is the compile's `EmittedModule` (`mlc.codegen.emitted`), one key per field: its
source, and what the backend needs of it besides (which inputs to copy into the layout the
kernels index, which results to copy into the strides the graph promises, whether calls replay
a CUDA graph); the layouts are compared with the inputs and the graph's outputs on each compile.

Safety: an entry is written to a temporary file and renamed (`cache.write_atomic`), so
concurrent writers race harmlessly (the last rename wins; both wrote the same compile) and a
reader never sees half a file. An entry that does not parse, has another format or key, a
payload of the wrong shape or a checksum that does not match is a miss: the graph is compiled
again and the entry overwritten. Nothing in an entry is evaluated except its source, imported
through `runtime.load_call` as a freshly emitted module is.

Triton's own cache (`~/.triton/cache`) already skips compiling a kernel text it compiled before;
the configs the autotuner picks are kept under `<cache>/autotune/` by `triton_helpers.launch`.
`MLC_CACHE=0` turns the graph cache (and the kept autotuning) off; the cache folder is then
never touched. A cache folder that cannot be created or written fails the compile with
`cache.CacheDirError`, which names the folder and `MLC_CACHE_DIR`.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mlc.codegen.emitted import EmittedModule, Layout

FORMAT = 2

_COMPILER_DIRS = ("dialects", "passes", "codegen", "analysis", "frontend")


def enabled() -> bool:
    """Whether the cache is used: yes unless `MLC_CACHE=0`."""
    from mlc.codegen.cache import cache_enabled

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

    from mlc.codegen.triton_helpers import device_description

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
    from mlc.codegen.cache import cache_dir

    return cache_dir("graphs") / f"{key}.json"


def load(key: str) -> EmittedModule | None:
    """The emitted module stored under `key`, or None: absent, unreadable or damaged (never trusted)."""
    try:
        data = json.loads(entry_path(key).read_text())
    except (OSError, ValueError):  # absent, unreadable, not UTF-8, not JSON
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("key") != key:
        return None
    payload = data.get("payload")
    if data.get("checksum") != _checksum(payload):
        return None
    return _emitted(payload)


def store(key: str, emitted: EmittedModule) -> None:
    """Write `emitted` under `key`, atomically; a cache that cannot be written is skipped."""
    from mlc.codegen.cache import write_atomic

    payload = dataclasses.asdict(emitted)  # tuples become JSON lists
    data = {"format": FORMAT, "key": key, "checksum": _checksum(payload), "payload": payload}
    try:
        write_atomic(entry_path(key), json.dumps(data))
    except OSError:
        pass  # a read-only or full cache: compiling still worked


def _checksum(payload: Any) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _emitted(payload: Any) -> EmittedModule | None:
    """The payload as an EmittedModule, or None where its shape is not the one `store` writes."""
    if not isinstance(payload, dict):
        return None
    fields = {}
    for name, read in _FIELDS.items():
        value = read(payload.get(name))
        if value is None:
            return None
        fields[name] = value
    return EmittedModule(**fields)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _counts(value: Any) -> tuple[int, int] | None:
    if isinstance(value, list) and len(value) == 2 and all(type(n) is int and n >= 0 for n in value):
        return value[0], value[1]
    return None


def _layouts(value: Any) -> tuple[Layout | None, ...] | None:
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
    return tuple(layouts)


# Each field of EmittedModule, read back from its JSON value (None: not a value `store` writes).
_FIELDS: dict[str, Callable[[Any], Any]] = {
    "source": _text, "input_layouts": _layouts, "output_layouts": _layouts, "launches": _counts}
