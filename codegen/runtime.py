"""Load an emitted Python module and hand back its `call`; where mlc's on-disk cache lives.

    source = emit_python(module)        # mlc.codegen.emit_python
    call = load_call(source)
    outputs = call([x, w])              # Inductor's convention: one list of inputs

`@triton.jit` reads each kernel's source with `inspect.getsource`, which needs a real file, so
the text is written to `<cache>/modules/mlc_<sha256 prefix>.py` and imported from there. The
name is a hash of the content: the same source is written once and loaded once per process
(`_LOADED` is the only state kept).

The cache (`cache_dir`) is one folder for all of mlc: `$MLC_CACHE_DIR`, else the user's cache
directory (`$XDG_CACHE_HOME/mlc`, else `~/.cache/mlc`; `<tmp>/mlc-cache-<uid>` where that
cannot be created). It holds `modules/` (emitted Python, here), `graphs/` (compiled graphs,
`mlc.frontend.compile_cache`) and `autotune/` (configs chosen by the autotuner,
`mlc.codegen.triton_helpers`). Every file in it is written to a temporary name in the same
folder and renamed (`write_atomic`), so a concurrent reader sees a whole file or none.

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


def cache_root() -> Path:
    """The folder of mlc's cache (created): `$MLC_CACHE_DIR`, else the user's cache directory,
    else (that cannot be created: a read-only home) a per-user temp directory."""
    configured = os.environ.get("MLC_CACHE_DIR")
    if configured:
        return _made(Path(configured))
    user = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    try:
        return _made(Path(user) / "mlc")
    except OSError:
        uid = os.getuid() if hasattr(os, "getuid") else 0
        return _made(Path(tempfile.gettempdir()) / f"mlc-cache-{uid}")


def cache_enabled() -> bool:
    """Whether compiled graphs and autotuned configs are kept: yes unless `MLC_CACHE=0` (emitted
    modules are always written, since `@triton.jit` needs a file)."""
    return os.environ.get("MLC_CACHE", "1") not in ("", "0")


def cache_dir(kind: str = "modules") -> Path:
    """One subfolder of the cache (created): `modules`, `graphs` or `autotune`."""
    return _made(cache_root() / kind)


def _made(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


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
    """The cache file holding `source` (written if missing; rewritten if damaged)."""
    key = hashlib.sha256(source.encode()).hexdigest()[:32]
    path = cache_dir() / f"mlc_{key}.py"
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
