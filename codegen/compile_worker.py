"""One compile worker process (`mlc.codegen.compile_workers`' pool starts them): compiles jobs into Triton's cache.

A worker is started as `python -c "from mlc.codegen.compile_worker import serve; serve()"`. It
reads the GPU's compute capability and the launching process's compiler hash, tells Triton's
driver to answer the capability (and device 0, stream 0) without asking CUDA, imports what every
generated module imports (`mlc.codegen.triton_helpers`), says `ready`, then answers each pickled
`(path, kernel name, config, args, environment)` job on its standard input with None (the
binary and its C launcher are in Triton's cache) or why it failed.

A binary is found only under the key the launching process computes, so the worker computes
the same one: Triton's backend hash is the launching process's (Triton reads the ptxas version
once per process, and Inductor points TRITON_PTXAS_PATH at torch's own ptxas later, in the
launching process only: keyed by the version read before, a worker's binaries were never found),
and each job is compiled under the launching process's `TRITON_*` variables as they were when it
was submitted (cache-invalidating variables, the ptxas and libdevice paths).
"""

from __future__ import annotations

import os
import pickle
import sys
from typing import Any


def serve() -> None:
    """Answer jobs until the input closes: each is compiled into Triton's cache."""
    stdin = sys.stdin.buffer
    stdout = os.fdopen(os.dup(1), "wb")  # the answers; whatever compiling prints (ptxas too)
    os.dup2(2, 1)                        # goes to stderr instead
    sys.stdout = sys.stderr
    os.nice(10)  # the launching process's own work comes first
    _compile_only(*pickle.load(stdin))
    import mlc.codegen.triton_helpers  # noqa: F401 (what every generated module imports)

    pickle.dump("ready", stdout)
    stdout.flush()
    modules: dict[str, Any] = {}
    while True:
        try:
            path, name, config, args, environment = pickle.load(stdin)
        except EOFError:
            return
        _use_environment(environment)
        pickle.dump(_compile(modules, path, name, config, args), stdout)
        stdout.flush()


def _compile_only(capability: tuple[int, int], backend_hash: str | None) -> None:
    """Triton's driver answers device 0, stream 0 and `capability` without asking CUDA, and its
    backend's hash is `backend_hash` (None: as this process computes it)."""
    from triton.runtime import driver

    active = driver.active
    active.get_current_device = lambda: 0
    active.get_device_capability = lambda device=None: capability
    active.get_current_stream = lambda device=None: 0
    if backend_hash is not None:
        from triton.compiler.compiler import make_backend

        type(make_backend(active.get_current_target())).hash = lambda self: backend_hash


def _use_environment(environment: dict[str, str]) -> None:
    """This process's `TRITON_*` variables become `environment`'s (Triton reads them at each compile)."""
    for key in [k for k in os.environ if k.startswith("TRITON_") and k not in environment]:
        del os.environ[key]
    os.environ.update(environment)


def _compile(modules: dict[str, Any], path: str, name: str, config: dict, args: tuple) -> str | None:
    import importlib.util

    from triton.runtime import driver

    try:
        module = modules.get(path)
        if module is None:
            spec = importlib.util.spec_from_file_location(f"mlc_compile_worker_{len(modules)}", path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module  # @triton.jit finds the kernel's source through it
            spec.loader.exec_module(module)
            modules[path] = module
        compiled = getattr(module, name).warmup(*args, grid=(1,), **config)
        # Its C launcher too: a gcc build per signature, kept in Triton's cache likewise, which
        # the launching process would otherwise run at the kernel's first launch.
        driver.active.launcher_cls(compiled.src, compiled.metadata)
        return None
    except Exception as e:  # noqa: BLE001 (the launch compiles it again and reports it)
        return f"{type(e).__name__}: {e}"
