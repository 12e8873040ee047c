"""Triton compiles in worker processes, whose binaries the launching process finds in Triton's cache.

A kernel's first launch compiles it (`triton_helpers.launch`), and a training step's graphs
hold about 100 (kernel, config) pairs. Compiled in threads of the launching process they share
its interpreter lock with each other and with mlc's own passes, and each distinct signature's
C launcher is built by gcc at the kernel's first launch. Here each pair is compiled by
`kernel.warmup(...)`, the call the launching process makes too, and its launcher built, in one
of `count` processes: both land in Triton's on-disk cache under the keys the launching process
computes, which then loads them in milliseconds. A pair a worker fails to compile, or whose
key differs for any reason, is compiled again at its launch, which reports the error: a wrong
or missing answer costs time, never a result.

    workers = CompileWorkers.start(count=8, capability=(9, 0))
    done = workers.submit(kernel, config, (torch.float32, torch.float32, 1024))
    done.result()                       # returns when the binary is in the cache (or failed)

A worker is `python -c "...compile_worker.serve()"` (`mlc.codegen.compile_worker`, the
worker's side): it imports torch, triton and mlc's helpers (seconds), says it is `ready`,
then is fed pickled jobs on its standard input and answers each on its standard output; a
thread of the launching process per worker writes a job and waits for its answer (no
interpreter lock held meanwhile). Workers never
touch the GPU: Triton's driver is told the device's compute capability instead of asking
CUDA, so a worker takes no GPU memory. The launching process's `__main__` is never imported
in them (as `multiprocessing`'s spawn would do).
"""

from __future__ import annotations

import os
import pickle
import queue
import subprocess
import sys
import threading
from concurrent.futures import Future
from typing import Any

_SERVE = "from mlc.codegen.compile_worker import serve; serve()"


def backend_hash() -> str | None:
    """The compiler's part of the keys Triton caches this process's binaries under: its backend's
    hash for the current GPU (the ptxas version, read once per process, and the target); None
    where Triton cannot say (no GPU, another Triton)."""
    try:
        from triton.compiler.compiler import make_backend
        from triton.runtime import driver

        return make_backend(driver.active.get_current_target()).hash()
    except Exception:  # noqa: BLE001 (the workers then compute their own)
        return None


class CompileWorkers:
    """A pool of compile processes taking (kernel, config, args) jobs in submission order."""

    def __init__(self, processes: list[subprocess.Popen], capability: tuple[int, int], backend_hash: str | None):
        self._jobs: queue.SimpleQueue[tuple[Future, tuple]] = queue.SimpleQueue()
        self.broken = False  # a worker died: later jobs go nowhere (their launches compile)
        self.ready = 0  # workers done importing torch, triton and mlc's helpers, taking jobs
        self._lock = threading.Lock()  # a job is queued only while the pool is not broken
        for process in processes:
            assert process.stdin is not None
            pickle.dump((capability, backend_hash), process.stdin)
            process.stdin.flush()
            threading.Thread(target=self._feed, args=(process,), name="mlc-compile-worker", daemon=True).start()

    @staticmethod
    def start(count: int, capability: tuple[int, int], command: tuple[str, ...] = ("-c", _SERVE)) -> CompileWorkers:
        """`count` workers, importing torch and triton meanwhile, for a GPU of `capability`
        (`command`: the worker's Python arguments; tests give a stand-in), keying their binaries
        by this process's Triton backend hash (`backend_hash()`)."""
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        processes = [subprocess.Popen([sys.executable, *command], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      env=env) for _ in range(count)]
        return CompileWorkers(processes, capability, backend_hash())

    def submit(self, kernel: Any, config: dict, args: tuple) -> Future:
        """Compile `kernel` (a `@triton.jit` function defined in a file) with `config` for
        `args` (buffers given as their dtypes), under this process's `TRITON_*` variables as
        they are now; the future's result is None or why it failed."""
        done: Future = Future()
        code = kernel.fn.__code__
        environment = {k: v for k, v in os.environ.items() if k.startswith("TRITON_")}
        with self._lock:
            if not self.broken:
                self._jobs.put((done, (code.co_filename, code.co_name, config, args, environment)))
                return done
        done.set_result("the compile workers stopped")
        return done

    def _feed(self, process: subprocess.Popen) -> None:
        assert process.stdin is not None and process.stdout is not None
        try:
            pickle.load(process.stdout)  # "ready"
        except (OSError, EOFError, pickle.PickleError):
            self._stop()
            return
        with self._lock:
            self.ready += 1
        while True:
            done, job = self._jobs.get()
            try:
                pickle.dump(job, process.stdin)
                process.stdin.flush()
                done.set_result(pickle.load(process.stdout))
            except (OSError, EOFError, pickle.PickleError) as e:  # the worker died
                done.set_result(f"compile worker died: {e}")
                self._stop()
                return

    def _stop(self) -> None:
        with self._lock:
            self.broken = True
        while True:  # answer what waits, so that no launch waits for a dead worker
            try:
                done, _ = self._jobs.get_nowait()
            except queue.Empty:
                return
            done.set_result("the compile workers stopped")
