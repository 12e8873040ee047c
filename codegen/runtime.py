"""Load an emitted Python module and hand back its `call`.

    emitted = emit_module(module)       # mlc.codegen.emit_python
    call = load_call(emitted.source)
    outputs = call([x, w])              # Inductor's convention: one list of inputs

`@triton.jit` reads each kernel's source with `inspect.getsource`, which needs a real file, so
the text is written to `<cache>/modules/mlc_<sha256 prefix>.py` (`modules_dir`: the folder of
`mlc.codegen.cache`; with the cache off, `MLC_CACHE=0`, a temporary folder of the process's
own) and imported from there. The name is a hash of the content: the same source is written
once and loaded once per process (`_LOADED` is the only state kept, with that temporary folder).

Where the kernels run is decided by `mlc.codegen.triton_helpers`, imported first: on the GPU
when CUDA is available, else under Triton's interpreter on CPU tensors (`DEVICE`, `INTERPRETING`).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from mlc.codegen import triton_helpers
from mlc.codegen.cache import cache_dir, cache_enabled, write_atomic

DEVICE = triton_helpers.DEVICE
INTERPRETING = triton_helpers.INTERPRETING

# content hash -> module: a module is imported once per process, whoever asks for it.
_LOADED: dict[str, ModuleType] = {}


def modules_dir() -> Path:
    """Where emitted modules are written: the cache's `modules/`, or with the cache off a
    temporary folder of this process (removed at exit)."""
    return cache_dir("modules") if cache_enabled() else Path(_process_modules().name)


@functools.cache
def _process_modules() -> tempfile.TemporaryDirectory:
    return tempfile.TemporaryDirectory(prefix="mlc-modules-")


def source_path(source: str) -> Path:
    """The file holding `source` (written if missing; rewritten if damaged)."""
    key = hashlib.sha256(source.encode()).hexdigest()[:32]
    path = modules_dir() / f"mlc_{key}.py"
    if not path.exists() or path.read_bytes() != source.encode():
        write_atomic(path, source)
    return path


def load_module(source: str) -> ModuleType:
    """Import emitted source as a module (once per distinct text)."""
    key = hashlib.sha256(source.encode()).hexdigest()[:32]
    if key in _LOADED:
        return _LOADED[key]
    path = source_path(source)
    name = f"mlc_generated_{key}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # inspect/linecache find kernels' source through the module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    _LOADED[key] = module
    return module


def load_call(source: str) -> Callable[[list[Any]], Sequence[Any]]:
    """The `call(args)` of emitted source: takes a list of inputs (and clears it), returns a
    tuple. On a GPU its kernels start compiling in the background (`triton_helpers.precompile`)."""
    module = load_module(source)
    triton_helpers.precompile(getattr(module, "precompile", ()))
    return module.call
