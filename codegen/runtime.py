"""Load an emitted Python module and hand back its `call`.

    source = emit_python(module)        # mlc.codegen.emit_python
    call = load_call(source)
    outputs = call([x, w])              # Inductor's convention: one list of inputs

`@triton.jit` reads each kernel's source with `inspect.getsource`, which needs a real file, so
the text is written to `<cache>/mlc_<sha256 prefix>.py` (cache: `$MLC_CACHE_DIR`, else
`<tmp>/mlc-cache-<uid>`) and imported from there. The name is a hash of the content: the same
source is written once and loaded once per process (`_LOADED` is the only state kept).

Where the kernels run is decided by `mlc.codegen.triton_helpers`, imported first: on the GPU
when CUDA is available, else under Triton's interpreter on CPU tensors.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from mlc.codegen import triton_helpers

DEVICE = triton_helpers.DEVICE
INTERPRETING = triton_helpers.INTERPRETING

# content hash -> module: a module is imported once per process, whoever asks for it.
_LOADED: dict[str, ModuleType] = {}


def cache_dir() -> Path:
    """Where emitted modules are written: `$MLC_CACHE_DIR`, else a per-user temp directory."""
    configured = os.environ.get("MLC_CACHE_DIR")
    if configured:
        path = Path(configured)
    else:
        uid = os.getuid() if hasattr(os, "getuid") else 0
        path = Path(tempfile.gettempdir()) / f"mlc-cache-{uid}"
    path.mkdir(parents=True, exist_ok=True)
    return path


def source_path(source: str) -> Path:
    """The cache file holding `source` (written if missing; rewritten atomically if damaged)."""
    key = hashlib.sha256(source.encode()).hexdigest()[:32]
    path = cache_dir() / f"mlc_{key}.py"
    if not path.exists() or path.read_text() != source:
        # Write-then-rename, so a concurrent process never imports a half-written file.
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(source)
        os.replace(tmp, path)
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
    """The `call(args)` of emitted source: takes a list of inputs (and clears it), returns a tuple."""
    return load_module(source).call
