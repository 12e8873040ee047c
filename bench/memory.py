"""A call's GPU memory, as bench/models.py and the scripts built on it measure it: its peak
above what was allocated before it (`peak_memory`), what it needs the caching allocator to
reserve (`reserved_memory`), and the bytes CUDA graphs' memory pools hold (`graph_pools`).
Each is None (or empty) off the GPU. Not part of the mlc package: see bench/README.md."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

CUDA = torch.cuda.is_available()


def _sync() -> None:
    if CUDA:
        torch.cuda.synchronize()


def peak_memory(call: Callable[[], Any], pooled: int = 0) -> float | None:
    """MB the call holds at its peak above what was allocated before it (`max_memory_allocated`
    during the call minus `memory_allocated` before): activations, temporaries, outputs and, in a
    training step, the gradients (the caller drops the last step's first); plus `pooled`, the bytes CUDA
    graphs recorded for the call hold in their pools (`graph_pools`: a replayed step keeps
    all of the above there, allocated once at its recording). None off the GPU."""
    if not CUDA:
        return None
    _sync()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    call()
    _sync()
    return (torch.cuda.max_memory_allocated() - before + pooled) / 2**20


def reserved_memory(call: Callable[[], Any], pooled: int = 0) -> float | None:
    """MB of GPU memory the call needs from the caching allocator: what it makes the allocator
    reserve (`max_memory_reserved` during the call minus `memory_reserved` before, from an
    emptied cache), plus the free space left in the default pool's segments before it (which
    it may fill without reserving more), plus `pooled` (the CUDA graph pools made for it,
    reserved memory too). The same measure with graphs and without, of one backend's memory
    only: other backends' pools, and the tensors alive before the call, do not count. None
    off the GPU."""
    if not CUDA:
        return None
    _sync()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_reserved()
    total, allocated = pool_segments().get(DEFAULT_POOL, (0, 0))
    slack = total - allocated
    call()
    _sync()
    return (torch.cuda.max_memory_reserved() - before + slack + pooled) / 2**20


DEFAULT_POOL = (0, 0)  # the caching allocator's own pool; CUDA graphs' pools have other ids


def pool_segments() -> dict[tuple[int, int], tuple[int, int]]:
    """Per memory pool (by id), the bytes of its segments and of the blocks allocated in them;
    none off the GPU."""
    pools: dict[tuple[int, int], tuple[int, int]] = {}
    for segment in torch.cuda.memory_snapshot() if CUDA else ():
        pool = tuple(segment.get("segment_pool_id", DEFAULT_POOL))
        total, allocated = pools.get(pool, (0, 0))
        pools[pool] = (total + segment["total_size"], allocated + segment["allocated_size"])
    return pools


def graph_pools() -> dict[tuple[int, int], int]:
    """Bytes of the segments each of CUDA graphs' memory pools (any pool but the default) holds,
    by pool id; none off the GPU."""
    return {pool: total for pool, (total, _) in pool_segments().items() if pool != DEFAULT_POOL}
