"""Give a new allocation the storage of a buffer that is dead by then (Inductor's memory
planning: its wrapper's reuse pool, keyed by dtype and size).

Before:
    triton.alloc "buf0" #buffer.layout<[64, 64], [64, 1], f32>
    triton.launch @k0(@x, @buf0) xnumel 4096
    triton.alloc "buf1" #buffer.layout<[64, 64], [64, 1], f32>
    triton.launch @k1(@buf0, @buf1) xnumel 4096
    triton.free @buf0
    triton.alloc "buf2" #buffer.layout<[64, 64], [1, 64], f32>
    triton.launch @k2(@buf1, @buf2) xnumel 4096
    triton.free @buf1
    triton.return @buf2
After:
    triton.launch @k1(@buf0, @buf1) xnumel 4096
    triton.reuse "buf2" = @buf0 #buffer.layout<[64, 64], [1, 64], f32>
    triton.launch @k2(@buf1, @buf2) xnumel 4096
    ...

`buf2 = buf0; del buf0  # reuse` in the emitted `call` (`reinterpret_tensor` where the layouts
differ): one allocation fewer per call, and the caching allocator's pool stays small.

* A storage is dead once every name that holds it is freed (`analysis/memory.py`): the allocation, its views, and the
  results of extern calls that took any of them, unless the call is `fresh` (its schema says it
  returns new tensors; another may return an argument or a view of one).
* Only the wrapper's own allocations give storage. Inputs and extern results were allocated by
  someone else; a storage that an output holds is never freed.
* An allocation takes the most recently freed storage of the same dtype and extent (LIFO, as
  Inductor's pool: the one most likely still in cache); the source's `triton.free` moves into
  the `triton.reuse`, which frees it.
* Launches and extern calls run in program order on the call's stream, so storage freed after
  its last use may be overwritten by anything that follows.
* A storage is not held from its death to the allocation that would take it where that raises
  the wrapper's peak of live bytes (`analysis/memory.py`); Inductor's pool holds it regardless.
  A reuse saves an allocation, never memory: the caching allocator reuses a freed block anyway.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import ClassVar

import sympy
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Block
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from mlc.analysis.memory import body_live_bytes, dropped_names, storage_bytes, storage_holders
from mlc.dialects import triton as tt
from mlc.dialects.buffer_layout import LayoutAttr
from mlc.passes.stages import check_stage

def plan_reuse(body: list[tt.WrapperBodyOp], layouts: dict[str, LayoutAttr]) -> dict[str, str]:
    """{allocation: the dead buffer whose storage it takes}, walking the body in order; a
    storage is not held for a reuse across the peak of live bytes (`_hold`)."""
    freed_at = {name: pos for pos, op in enumerate(body) for name in dropped_names(op)}
    allocated = {op.buffer.data: op.layout for op in body if isinstance(op, tt.AllocOp)}
    dies_at: dict[int, list[str]] = defaultdict(list)
    died_at: dict[str, int] = {}
    for storage, names in storage_holders(body).items():
        if storage in allocated and all(name in freed_at for name in names):
            died_at[storage] = max(freed_at[name] for name in names)
            dies_at[died_at[storage]].append(storage)
    timeline = body_live_bytes(body, layouts)
    peak = max(timeline, default=0) if timeline is not None else None  # holds never raise it
    pool: dict[tuple[Attribute, sympy.Expr], list[str]] = defaultdict(list)
    reuse: dict[str, str] = {}
    for pos, op in enumerate(body):
        if isinstance(op, tt.AllocOp) and (free := pool[_key(op.layout)]):
            if _hold(timeline, peak, range(died_at[free[-1]], pos), allocated[free[-1]]):
                reuse[op.buffer.data] = free.pop()
        for storage in sorted(dies_at.get(pos, ())):
            pool[_key(allocated[storage])].append(storage)
    return reuse


def _hold(timeline: list[int] | None, peak: int | None, held: range, layout: LayoutAttr) -> bool:
    """Count a dead storage of `layout` as live after each op in `held` (from its death until
    the allocation that takes it) where that keeps `timeline` at or under its `peak`; whether it
    did. Inductor's pool holds it regardless, but a reuse saves an allocation, never memory: the
    caching allocator would have reused the freed block anyway (a Llama's logits' gradient,
    125 MiB, was held through the whole backward for the embedding's gradient). Over symbolic
    sizes (no timeline) every reuse is taken, as Inductor's."""
    if timeline is None or peak is None:
        return True
    size = storage_bytes(layout) or 0
    if held and max(timeline[k] for k in held) + size > peak:
        return False
    for k in held:
        timeline[k] += size
    return True


def _key(layout: LayoutAttr) -> tuple[Attribute, sympy.Expr]:
    """What two allocations must share for one to take the other's storage: dtype and extent."""
    return layout.dtype, sympy.expand(layout.storage_extent())


def apply_reuse(block: Block, reuse: dict[str, str]) -> None:
    """Turn each planned allocation into a `triton.reuse` and drop its source's free."""
    sources = set(reuse.values())
    for op in list(block.ops):
        if isinstance(op, tt.AllocOp) and op.buffer.data in reuse:
            Rewriter.replace_op(op, tt.ReuseOp(op.buffer.data, reuse[op.buffer.data], op.layout))
        elif isinstance(op, tt.FreeOp) and sources.intersection(op.freed):
            kept = [name for name in op.freed if name not in sources]
            Rewriter.replace_op(op, [tt.FreeOp(kept)] if kept else [])


@dataclass(frozen=True)
class PlanBuffersPass(ModulePass):
    """Give new allocations the storage of dead buffers of the same dtype and size."""

    name = "plan-buffers"
    ACCEPTS: ClassVar[tuple[str, ...]] = ("triton",)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_stage(self, op)
        for wrapper in op.body.block.ops:
            if isinstance(wrapper, tt.WrapperOp):
                block = wrapper.body.block
                body = [o for o in block.ops if isinstance(o, tt.WrapperBodyOp)]
                apply_reuse(block, plan_reuse(body, wrapper.layouts()))
