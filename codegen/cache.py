"""Where mlc's on-disk cache lives: its folder, its subfolders, and atomic writes into them.

The cache (`cache_dir`) is one folder for all of mlc: `$MLC_CACHE_DIR`, else the user's cache
directory (`$XDG_CACHE_HOME/mlc`, else `~/.cache/mlc`; `<tmp>/mlc-cache-<uid>` where that
cannot be created or written). It holds `modules/` (emitted Python, `mlc.codegen.runtime`),
`graphs/` (compiled graphs, `mlc.frontend.compile_cache`) and `autotune/` (configs chosen by
the autotuner, `mlc.codegen.triton_helpers`). Every file in it is written to a temporary name
in the same folder and renamed (`write_atomic`), so a concurrent reader sees a whole file or
none. A cache folder that cannot be created or written raises `CacheDirError`, naming it and
how it was chosen, at its first use (as Inductor fails on an unusable `TORCHINDUCTOR_CACHE_DIR`).
`MLC_CACHE=0` keeps nothing (`cache_enabled`), and then the folder is not touched.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


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
    the cache folder is not touched: `mlc.codegen.runtime.modules_dir`)."""
    return os.environ.get("MLC_CACHE", "1") not in ("", "0")


def cache_dir(kind: str = "modules") -> Path:
    """One subfolder of the cache (created): `modules`, `graphs` or `autotune`."""
    return _usable(cache_root() / kind, f"the cache's {kind} folder")


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
