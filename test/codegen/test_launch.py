"""`triton_helpers.launch`: the config it picks and, on a GPU, the compiled binaries it reuses."""

from __future__ import annotations

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
    assert {k[3][0] for k in kept} == {torch.int64, torch.int32}


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
    the background; the first launch, which tunes between them, finds both binaries and
    compiles nothing more."""
    import time

    configs = (dict(XBLOCK=64, num_warps=2, num_stages=1), dict(XBLOCK=128, num_warps=4, num_stages=1))
    triton_helpers.precompile(((_negate, configs, (torch.float32, torch.float32, 1000)),))
    compiled = _negate.device_caches[torch.cuda.current_device()][0]
    deadline = time.monotonic() + 120
    while len(compiled) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(compiled) == 2
    x = torch.randn(1000, device=DEVICE)
    out = torch.empty_like(x)
    launch(_negate, configs, 1000, (x, out, 1000), launch_context())
    torch.testing.assert_close(out, -x)
    assert len(compiled) == 2 and not _negate.mlc_launch_state.compiling
