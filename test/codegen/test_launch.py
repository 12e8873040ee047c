"""`triton_helpers.launch`: the config it picks and, on a GPU, the compiled binaries it reuses."""

from __future__ import annotations

import dataclasses
import time

import pytest
import torch

from mlc.codegen import triton_helpers
from mlc.codegen.triton_helpers import DEVICE, launch, launch_context, tl, triton

GPU = pytest.mark.skipif(triton_helpers.INTERPRETING, reason="binaries are reused on a GPU only")


@triton.jit
def _scale(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    tl.store(out_ptr0 + xindex, tl.load(in_ptr0 + xindex, xmask) * 3.0, xmask)


@triton.jit
def _shift(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    tl.store(out_ptr0 + xindex, tl.load(in_ptr0 + xindex, xmask) + 1.0, xmask)


@triton.jit
def _gather_rows(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    tl.store(out_ptr0 + xindex, tl.load(in_ptr0 + xindex, xmask).to(tl.float32) * 3.0, xmask)


@triton.jit
def _accumulate(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    tl.atomic_add(out_ptr0 + xindex, tl.load(in_ptr0 + xindex, xmask), xmask)


CONFIGS = (dict(XBLOCK=64, num_warps=2, num_stages=1),)


def _run(kernel, x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    launch(kernel, CONFIGS, x.numel(), (x, out, x.numel()), launch_context())
    return out


def test_every_launch_computes_its_own_arguments() -> None:
    for n in (100, 100, 100, 37):  # repeated sizes take the reused binary on a GPU
        x = torch.randn(n, device=DEVICE)
        torch.testing.assert_close(_run(_scale, x), x * 3)
        torch.testing.assert_close(_run(_shift, x), x + 1)


def test_each_launch_runs_the_kernel_once() -> None:
    """A kernel that adds into memory (a scatter's) adds once per launch, the first one (which
    compiles it) included."""
    x = torch.randn(1000, device=DEVICE)
    out = torch.zeros(1000, device=DEVICE)
    for times in (1, 2, 3):
        launch(_accumulate, CONFIGS, 1000, (x, out, 1000), launch_context())
        torch.testing.assert_close(out, x * times)


@GPU
def test_a_binary_is_reused_only_for_arguments_it_was_specialized_on() -> None:
    base = torch.randn(1001, device=DEVICE)
    aligned, misaligned = base[:1000], base[1:]  # data pointers 16-byte aligned, then 4 bytes off
    for x in (aligned, misaligned, aligned, misaligned):
        torch.testing.assert_close(_run(_scale, x), x * 3)
    kept = [b for k, b in _scale.mlc_launch_state.binaries.items() if k[1] == 1000]
    assert len({id(b.compiled) for b in kept}) == 2  # one binary per alignment of the input
    _run(_shift, aligned)  # another kernel keeps its binaries apart (launched here: the test runs alone too)
    assert _shift.mlc_launch_state is not _scale.mlc_launch_state


@GPU
def test_a_binary_is_reused_only_for_the_dtypes_it_was_compiled_for() -> None:
    """One kernel text, int64 then int32 indices (the same graph traced with either): reusing
    the int64 binary for int32 data read past the end (an illegal memory access)."""
    for dtype in (torch.int64, torch.int32, torch.int64, torch.int32):
        x = torch.arange(1000, device=DEVICE, dtype=dtype)
        out = torch.empty(1000, device=DEVICE, dtype=torch.float32)
        launch(_gather_rows, CONFIGS, 1000, (x, out, 1000), launch_context())
        torch.testing.assert_close(out, x.float() * 3)
    kept = [k for k in _gather_rows.mlc_launch_state.binaries if k[1] == 1000]
    assert {k[3] for k in kept} == {torch.int64, torch.int32}  # the first argument's dtype


@GPU
def test_the_reused_binary_launches_on_the_current_stream() -> None:
    x = torch.randn(4096, device=DEVICE)
    _run(_scale, x)  # compiles
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        out = _run(_scale, x)
    stream.synchronize()
    torch.testing.assert_close(out, x * 3)


@GPU
def test_launch_hooks_see_the_reused_binary_launch() -> None:
    """With a launch hook set (a profiler's), a launch goes through Triton's launcher with the
    hook's metadata; without one, straight into the C launcher."""
    x = torch.randn(4096, device=DEVICE)
    _run(_scale, x)  # compiles
    seen: list[str] = []
    hook = lambda metadata: seen.append(metadata.get()["name"])  # noqa: E731
    hooks = triton.knobs.runtime.launch_enter_hook
    hooks.add(hook)
    try:
        out = _run(_scale, x)
    finally:
        hooks.remove(hook)
    torch.testing.assert_close(out, x * 3)
    assert seen == ["_scale"]
    _run(_scale, x)
    assert seen == ["_scale"]


@triton.jit
def _negate(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    tl.store(out_ptr0 + xindex, -tl.load(in_ptr0 + xindex, xmask), xmask)


@GPU
def test_precompile_compiles_every_config_before_the_first_launch() -> None:
    """A module's `precompile` table (arguments as dtypes and numbers) compiles each config in
    the background; the first launch, which tunes between them, waits for both and ends with
    both binaries loaded and nothing pending. In compile workers (the default), this process
    compiles nothing itself: each of its compiles is a hit in Triton's cache."""
    import time

    from triton import knobs

    workers = triton_helpers.compile_workers()
    deadline = time.monotonic() + 120
    while workers is not None and not workers.ready and time.monotonic() < deadline:
        time.sleep(0.05)  # (its jobs would wait in the queue meanwhile)
    configs = (dict(XBLOCK=64, num_warps=2, num_stages=1), dict(XBLOCK=128, num_warps=4, num_stages=1))
    hits: list[bool] = []
    knobs.compilation.listener = lambda **info: hits.append(info["cache_hit"])
    try:
        triton_helpers.precompile(((_negate, configs, (torch.float32, torch.float32, 1000)),))
        x = torch.randn(1000, device=DEVICE)
        out = torch.empty_like(x)
        launch(_negate, configs, 1000, (x, out, 1000), launch_context())
    finally:
        knobs.compilation.listener = None
    torch.testing.assert_close(out, -x)
    assert len(_negate.device_caches[torch.cuda.current_device()][0]) == 2
    assert not _negate.mlc_launch_state.compiling
    if workers is not None:
        assert hits == [True, True], hits


def _scale_binary(n: int) -> tuple[triton_helpers._Binary, tuple]:
    config = dict(XBLOCK=1024, num_warps=4, num_stages=1)
    args = (torch.randn(n, device=DEVICE), torch.empty(n, device=DEVICE), n)
    grid = triton_helpers._grid(config, n, None)
    return triton_helpers._Binary.of(_scale[grid](*args, **config), grid, (1024,)), args


def _timed_ms(n: int) -> float:
    binary, args = _scale_binary(n)
    flush = torch.empty(triton_helpers._flush_bytes(), dtype=torch.int8, device=DEVICE)
    return triton_helpers._kernel_ms(binary, args, flush)


@GPU
def test_the_tuner_times_each_launch_from_a_cold_l2() -> None:
    """32 MB read and written fit the H100's 50 MB L2: back to back, the launches find their
    input there, and each takes well under the time `_kernel_ms` measures (memory's bandwidth,
    as a call from a model meets it). A timer without the flush would see the warm time."""
    binary, args = _scale_binary(1 << 22)
    context = triton_helpers.launch_context()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    pointers = triton_helpers.addresses(args)
    for _ in range(10):
        binary.run(context, args, pointers)
    start.record()
    for _ in range(100):
        binary.run(context, args, pointers)
    end.record()
    end.synchronize()
    warm, cold = start.elapsed_time(end) / 100, _timed_ms(1 << 22)
    assert cold > 1.2 * warm, (warm, cold)


@GPU
def test_the_tuner_times_the_kernel_not_its_launch() -> None:
    """32 times the elements take well over 8 times as long (a copy's time is its bytes once
    past a few microseconds); a timer that measured the host's launches would see two nearly
    equal times."""
    small, large = _timed_ms(1 << 20), _timed_ms(1 << 25)
    assert large > 8 * small, (small, large)


@dataclasses.dataclass
class _SlowHost:
    """A binary whose launches take the host `us` microseconds more (a host whose cores the
    compile workers share, or that waits for the interpreter lock)."""

    binary: triton_helpers._Binary
    us: float

    def run(self, context, args, pointers) -> None:
        deadline = time.perf_counter() + self.us * 1e-6
        while time.perf_counter() < deadline:
            pass
        self.binary.run(context, args, pointers)


@GPU
def test_the_tuner_times_the_kernel_not_the_hosts_pace() -> None:
    """A host that takes 300 us per launch, several times the flush before it: the GPU would
    wait for each launch after its start event, and that wait was timed; held back while the
    host enqueues, it runs them back to back and the time is the kernel's."""
    binary, args = _scale_binary(1 << 20)
    flush = torch.empty(triton_helpers._flush_bytes(), dtype=torch.int8, device=DEVICE)
    fast = triton_helpers._kernel_ms(binary, args, flush)
    slow = triton_helpers._kernel_ms(_SlowHost(binary, 300), args, flush)
    assert slow < 1.5 * fast + 0.005, (fast, slow)


@GPU
def test_the_tuner_picks_the_fastest_config_in_any_order() -> None:
    """One element per program of 2**24 (16M programs) against 1024: the second is many times
    faster, and is picked whichever comes first; the launch computes the right values."""
    n = 1 << 24
    slow, fast = dict(XBLOCK=1, num_warps=1, num_stages=1), dict(XBLOCK=1024, num_warps=4, num_stages=1)
    x = torch.randn(n, device=DEVICE)
    for configs in ((slow, fast), (fast, slow)):
        out = torch.empty_like(x)
        assert triton_helpers._tuned(_scale, configs, n, (x, out, n)) is fast
        torch.testing.assert_close(out, x * 3)


@triton.jit
def _salted(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr, SALT: tl.constexpr):
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    tl.store(out_ptr0 + xindex, tl.load(in_ptr0 + xindex, xmask) + SALT, xmask)


@GPU
def test_a_worker_compiles_into_the_cache_the_launching_process_reads() -> None:
    """A kernel never compiled before (its SALT is new on every run) is compiled by a worker
    process; this process then finds it in Triton's cache (the compile listener says: a cache
    hit), and the launch computes the right values. A config that cannot compile (a block of
    48: not a power of two) is answered with the reason, and raises nothing here."""
    import random

    from mlc.codegen.compile_workers import CompileWorkers
    from triton import knobs

    workers = CompileWorkers.start(2, torch.cuda.get_device_capability())
    salt = random.randrange(1, 1 << 20)
    args = (torch.float32, torch.float32, 4096)
    assert workers.submit(_salted, dict(XBLOCK=128, SALT=salt, num_warps=4), args).result(timeout=300) is None
    failed = workers.submit(_salted, dict(XBLOCK=48, SALT=salt, num_warps=4), args).result(timeout=300)
    assert failed is not None and "power of 2" in failed, failed  # arange's range

    hits: list[bool] = []
    knobs.compilation.listener = lambda **info: hits.append(info["cache_hit"])
    try:
        x = torch.randn(4096, device=DEVICE)
        out = torch.empty_like(x)
        _salted[(32,)](x, out, 4096, XBLOCK=128, SALT=salt, num_warps=4)
    finally:
        knobs.compilation.listener = None
    assert hits == [True]
    torch.testing.assert_close(out, x + salt)


@GPU
def test_a_worker_keys_its_binaries_as_this_process_does_after_its_environment_changed(monkeypatch) -> None:
    """Triton reads the ptxas version once per process; Inductor then points TRITON_PTXAS_PATH at
    torch's own ptxas in this process, and workers started afterwards inherit it. They must still
    compile under this process's keys (its backend hash), and a cache-invalidating variable set
    after they started (TRITON_DISABLE_LINE_INFO) must travel with each job: the launch here is a
    cache hit. Skipped where torch ships no ptxas of another version than Triton's."""
    import random
    import subprocess
    from pathlib import Path

    from mlc.codegen.compile_workers import CompileWorkers, backend_hash
    from triton import knobs

    assert backend_hash() is not None  # this process's ptxas version, read now if not before
    torch_ptxas = Path(torch.__file__).parent / "bin" / "ptxas"
    if not torch_ptxas.is_file() or (subprocess.check_output([torch_ptxas, "--version"])
                                     == subprocess.check_output([knobs.nvidia.ptxas.path, "--version"])):
        pytest.skip("no ptxas of another version in torch/bin")
    monkeypatch.setenv("TRITON_PTXAS_PATH", str(torch_ptxas))
    workers = CompileWorkers.start(1, torch.cuda.get_device_capability())
    monkeypatch.setenv("TRITON_DISABLE_LINE_INFO", "1")
    salt = random.randrange(1, 1 << 20)
    config = dict(XBLOCK=128, SALT=salt, num_warps=4)
    assert workers.submit(_salted, config, (torch.float32, torch.float32, 4096)).result(timeout=300) is None

    hits: list[bool] = []
    knobs.compilation.listener = lambda **info: hits.append(info["cache_hit"])
    try:
        x = torch.randn(4096, device=DEVICE)
        out = torch.empty_like(x)
        _salted[(32,)](x, out, 4096, **config)
    finally:
        knobs.compilation.listener = None
    assert hits == [True]
    torch.testing.assert_close(out, x + salt)
