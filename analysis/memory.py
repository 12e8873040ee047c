"""What a `triton.wrapper` holds in memory as it runs: storages, their holders, live bytes.

    holders = storage_holders(body)      # storage -> every name that holds it
    timeline = live_bytes(wrapper)       # bytes held after each op of the body (body_live_bytes: of ops)
    peak = peak_live_bytes(wrapper)      # the largest of them

A *storage* is memory someone allocated: a `triton.alloc` (or a `triton.reuse`, which takes a
dead one over), a `fresh` extern call's result (its schema says it returns new tensors), and,
counted only where asked, an input (`call` empties its argument list, so an input nobody else
holds, a backward's saved activation, is the wrapper's to free). Views, and extern results that
may alias an argument, hold the storages of what they were made from. A storage is live from
the op that makes it until every name holding it has been freed (`triton.free`, or the reuse
that takes it over); an output's storage stays live to the end.

`plan-buffers` asks which storages die where; the dump's `memory.txt` and the tests ask how
many bytes are live at the peak, the quantity a training step's `max_memory_allocated` sees.
For example

    triton.input "x" #buffer.layout<[1024], [1], f32>        inputs owned: 4096 live
    triton.alloc "buf0" #buffer.layout<[1024], [1], f32>     8192
    triton.launch @k0(@x, @buf0) xnumel 1024
    triton.free @x                                           4096
    triton.alloc "buf1" #buffer.layout<[1024], [1], f32>     8192 (the peak)
    triton.launch @k1(@buf0, @buf1) xnumel 1024
    triton.free @buf0                                        4096
    triton.return @buf1
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from mlc.dialects import triton as tt
from mlc.dialects.buffer_layout import LayoutAttr, element_bytes

OWNS_STORAGE = (tt.AllocOp, tt.ReuseOp)
"""The wrapper's own allocations: the storages `plan-buffers` may hand to a later one."""


def made_storages(op: tt.WrapperBodyOp, inputs_owned: bool) -> list[str]:
    """The storages `op` brings into being, named as the name that holds them first."""
    if isinstance(op, tt.AllocOp) or (isinstance(op, tt.ExternOp) and (op.fresh or op.out)):
        return list(op.defined_names())
    if isinstance(op, tt.InputOp) and inputs_owned:
        return [op.buffer.data]
    return []


def dropped_names(op: tt.WrapperBodyOp) -> list[str]:
    """The names `op` lets go of: a free's, and the source a reuse takes the storage from."""
    if isinstance(op, tt.FreeOp):
        return op.freed
    if isinstance(op, tt.ReuseOp):
        return [op.source.root_reference.data]
    return []


def held_storages(body: Sequence[tt.WrapperBodyOp], inputs_owned: bool = False) -> dict[str, set[str]]:
    """For each name the body defines, the storages it holds (empty: someone else's memory).
    A reuse holds its source's storage, as a view does."""
    holds: dict[str, set[str]] = {}
    for op in body:
        made = made_storages(op, inputs_owned)
        if made:
            holds.update((name, {name}) for name in made)
            continue
        if isinstance(op, (tt.ViewOp, tt.ReuseOp)):
            held = set(holds.get(op.source.root_reference.data, ()))
        elif isinstance(op, tt.ExternOp):
            held = set().union(*(holds.get(name, set()) for name in op.referenced_names()))
        else:
            continue
        holds.update((name, held) for name in op.defined_names())
    return holds


def storage_holders(body: Sequence[tt.WrapperBodyOp], inputs_owned: bool = False) -> dict[str, set[str]]:
    """For each storage (by the name that made it), every name that holds it: itself, its
    views and reuses, and extern results made from any of them."""
    return _holders(held_storages(body, inputs_owned))


def _holders(holds: dict[str, set[str]]) -> dict[str, set[str]]:
    """`held_storages`' answer turned around: storage -> the names holding it."""
    holders: dict[str, set[str]] = defaultdict(set)
    for name, storages in holds.items():
        for storage in storages:
            holders[storage].add(name)
    return dict(holders)


def live_bytes(wrapper: tt.WrapperOp, inputs_owned: bool = False) -> list[int] | None:
    """The bytes of storage live after each op of `wrapper`'s body (None where a size is
    symbolic); `inputs_owned` counts the inputs as the wrapper's from the start until their
    free."""
    body = [op for op in wrapper.body.block.ops if isinstance(op, tt.WrapperBodyOp)]
    return body_live_bytes(body, wrapper.layouts(), inputs_owned)


def body_live_bytes(body: Sequence[tt.WrapperBodyOp], layouts: dict[str, LayoutAttr],
                    inputs_owned: bool = False) -> list[int] | None:
    """`live_bytes` of a wrapper's body ops, given every name's layout."""
    holds = held_storages(body, inputs_owned)
    holders = _holders(holds)
    size = {storage: storage_bytes(layouts.get(storage)) for storage in holders}
    if None in size.values():
        return None
    live = 0
    alive: dict[str, set[str]] = {}  # storage -> its holders not yet let go
    timeline = []
    for op in body:
        for storage in made_storages(op, inputs_owned):
            alive[storage] = set(holders[storage])
            live += size[storage]
        for name in dropped_names(op):
            for storage in holds.get(name, ()):
                if storage in alive:
                    alive[storage].discard(name)
                    if not alive[storage]:
                        del alive[storage]
                        live -= size[storage]
        timeline.append(live)
    return timeline


def peak_live_bytes(wrapper: tt.WrapperOp, inputs_owned: bool = False) -> int | None:
    """The most bytes `live_bytes` finds live at once (None where a size is symbolic)."""
    timeline = live_bytes(wrapper, inputs_owned)
    return None if timeline is None else max(timeline, default=0)


def report(wrapper: tt.WrapperOp) -> str:
    """The dump's memory.txt: the peak of live bytes, counted without and with the inputs (as a
    backward's saved tensors are: freed by the call), and the op after which it falls."""
    ops = [op for op in wrapper.body.block.ops if isinstance(op, tt.WrapperBodyOp)]
    lines = []
    for owned in (False, True):
        timeline = live_bytes(wrapper, owned)
        what = "inputs freed by the call counted" if owned else "the call's own allocations"
        if timeline is None:
            return "symbolic sizes: live bytes depend on them\n"
        if not timeline:
            continue
        peak = max(timeline)
        at = timeline.index(peak)
        lines.append(f"peak live bytes, {what}: {peak} ({peak / 2**20:.2f} MiB) after op {at}: {ops[at].name} "
                     f"{', '.join(ops[at].defined_names() or ops[at].referenced_names())}")
    return "\n".join(lines) + "\n"


def storage_bytes(layout: LayoutAttr | None) -> int | None:
    """The bytes a storage of `layout` takes (0 for none), None where its extent is symbolic."""
    if layout is None:
        return 0
    extent = layout.storage_extent()
    return int(extent) * element_bytes(layout.dtype) if extent.is_number else None
