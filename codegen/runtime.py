"""Load an emitted Python module and hand back its `call`; where mlc's on-disk cache lives.

    source = emit_python(module)        # mlc.codegen.emit_python
    call = load_call(source)
    outputs = call([x, w])              # Inductor's convention: one list of inputs

`@triton.jit` reads each kernel's source with `inspect.getsource`, which needs a real file, so
the text is written to `<cache>/modules/mlc_<sha256 prefix>.py` (`modules_dir`; with the cache
off, `MLC_CACHE=0`, a temporary folder of the process's own) and imported from there. The
name is a hash of the content: the same source is written once and loaded once per process
(`_LOADED` is the only state kept, with that temporary folder).

The cache (`cache_dir`) is one folder for all of mlc: `$MLC_CACHE_DIR`, else the user's cache
directory (`$XDG_CACHE_HOME/mlc`, else `~/.cache/mlc`; `<tmp>/mlc-cache-<uid>` where that
cannot be created or written). It holds `modules/` (emitted Python, here), `graphs/` (compiled
graphs, `mlc.frontend.compile_cache`) and `autotune/` (configs chosen by the autotuner,
`mlc.codegen.triton_helpers`). Every file in it is written to a temporary name in the same
folder and renamed (`write_atomic`), so a concurrent reader sees a whole file or none. A cache
folder that cannot be created or written raises `CacheDirError`, naming it and how it was
chosen, at its first use (as Inductor fails on an unusable `TORCHINDUCTOR_CACHE_DIR`).

Where the kernels run is decided by `mlc.codegen.triton_helpers`, imported first: on the GPU
when CUDA is available, else under Triton's interpreter on CPU tensors.
"""

from __future__ import annotations

import functools
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


class CacheDirError(RuntimeError):
    """mlc's cache folder cannot be created or written; the message names it."""


def cache_root() -> Path:
    """The folder of mlc's cache (created): `$MLC_CACHE_DIR`, else the user's cache directory,
    else (that cannot be created or written: a read-only home) a per-user temp directory."""
    configured = os.environ.get("MLC_CACHE_DIR")
    if configured:
        return _usable(Path(configured), f"MLC_CACHE_DIR={configured}")
    user = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    try:
        return _usable(Path(user) / "mlc", "the default, MLC_CACHE_DIR unset")
    except CacheDirError:
        uid = os.getuid() if hasattr(os, "getuid") else 0
        return _usable(Path(tempfile.gettempdir()) / f"mlc-cache-{uid}", "the fallback, MLC_CACHE_DIR unset")


def cache_enabled() -> bool:
    """Whether compiled graphs and autotuned configs are kept: yes unless `MLC_CACHE=0` (then
    the cache folder is not touched: `modules_dir`)."""
    return os.environ.get("MLC_CACHE", "1") not in ("", "0")


def cache_dir(kind: str = "modules") -> Path:
    """One subfolder of the cache (created): `modules`, `graphs` or `autotune`."""
    return _usable(cache_root() / kind, f"the cache's {kind} folder")


def modules_dir() -> Path:
    """Where emitted modules are written: the cache's `modules/`, or with the cache off a
    temporary folder of this process (removed at exit)."""
    return cache_dir("modules") if cache_enabled() else Path(_process_modules().name)


@functools.cache
def _process_modules() -> tempfile.TemporaryDirectory:
    return tempfile.TemporaryDirectory(prefix="mlc-modules-")


def _usable(path: Path, chosen: str) -> Path:
    """`path`, created; CacheDirError where it cannot be created or written (`chosen`: how
    the folder was chosen, for the message)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CacheDirError(_unusable(path, chosen, e.strerror or str(e))) from e
    if not os.access(path, os.W_OK | os.X_OK):
        raise CacheDirError(_unusable(path, chosen, "not writable"))
    return path


def _unusable(path: Path, chosen: str, reason: str) -> str:
    return (f"mlc: cannot use {path} as mlc's cache folder ({chosen}): {reason}; set MLC_CACHE_DIR to a "
            "writable folder, or MLC_CACHE=0 to compile without the cache")


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file in the same folder and a rename, so that
    a concurrent reader (another process) never sees a half-written file."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def source_path(source: str) -> Path:
    """The file holding `source` (written if missing; rewritten if damaged)."""
    key = hashlib.sha256(source.encode()).hexdigest()[:32]
    path = modules_dir() / f"mlc_{key}.py"
    if not path.exists() or path.read_bytes() != source.encode():
        write_atomic(path, source)
    return path


def device_description() -> str:
    """What compiled code and tuned configs depend on of the machine: the GPU's name and
    compute capability, or Triton's interpreter."""
    if INTERPRETING or DEVICE.type != "cuda":
        return f"interpreter ({DEVICE.type})"
    import torch

    major, minor = torch.cuda.get_device_capability(DEVICE)
    return f"{torch.cuda.get_device_name(DEVICE)} sm_{major}{minor}"


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
