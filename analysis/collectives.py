"""Functional collectives (torch.distributed's `_c10d_functional` ops) as mlc's IR holds them.

A collective in a graph mlc receives is two calls, as torch runs it: a *start*
(`_c10d_functional::all_reduce`, `all_gather_into_tensor`, ...) that launches the
communication on the process group and returns its output buffer at once, and a *wait*
(`_c10d_functional::wait_tensor`) that blocks until that buffer holds the result and returns it.
Both stay extern calls through every stage, resolved by torch at run time (the group is its
name, a string argument: `{args = [@buf1, "sum", "0"]}`):

    buffer.extern "buf2" = "_c10d_functional::all_reduce.default" {args = [@buf1, "sum", "0"]} : ...
    buffer.extern "buf3" = "_c10d_functional::wait_tensor.default" {args = [@buf2]} : ...

Ordering comes from the dependencies alone (`analysis.dependencies`): the start reads its
input buffer whole (a `StarDep`), so everything computing the input runs before it; the wait
reads the start's buffer and writes a new name for it (the storage the collective filled), and
every reader reads that name, so nothing that needs the result runs before the wait. The
importer (`frontend/collectives.py`) makes this hold: a read of a collective's result after
its wait reads the wait's result, and a read before the wait is refused. Buffers are written
once (no buffer is reused while a collective reads it), so no `WeakDep` is needed: the
input of an in-flight collective is never overwritten.

What is not a plain dependency -- that starts are issued in the same order on every rank, and
which nodes may run while a collective is in flight -- is `--overlap-comm`'s (it keeps
starts in program order and moves a start up, a wait down, only across nodes it does not
depend on).
"""

from __future__ import annotations

from mlc.dialects import buffer

WAIT = "wait_tensor"

# Calls that launch a collective and return a buffer to wait on, by namespace and name.
STARTS = frozenset({
    "_c10d_functional::all_reduce",
    "_c10d_functional::all_reduce_coalesced",
    "_c10d_functional::all_gather_into_tensor",
    "_c10d_functional::all_gather_into_tensor_coalesced",
    "_c10d_functional::reduce_scatter_tensor",
    "_c10d_functional::reduce_scatter_tensor_coalesced",
    "_c10d_functional::all_to_all_single",
    "_c10d_functional::broadcast",
    # The differentiable variants (funcol's *_autograd) run the same collective.
    "_c10d_functional_autograd::all_gather_into_tensor",
    "_c10d_functional_autograd::reduce_scatter_tensor",
    "_c10d_functional_autograd::all_to_all_single",
})
# Collectives that complete inside the call (DTensor's shard-dim all-to-all): no wait follows.
BLOCKING = frozenset({"_dtensor::shard_dim_alltoall"})
NAMESPACES = ("_c10d_functional", "_c10d_functional_autograd", "_dtensor")

# Why the rest of these namespaces is refused, by name.
UNSUPPORTED = {
    "all_reduce_": "an in-place collective (Dynamo's graphs use the functional all_reduce)",
    "all_reduce_coalesced_": "an in-place collective",
    "broadcast_": "an in-place collective",
    "all_gather_into_tensor_out": "a collective writing into a given out= tensor",
    "reduce_scatter_tensor_out": "a collective writing into a given out= tensor",
    "isend": "point-to-point communication is not supported yet",
    "irecv": "point-to-point communication is not supported yet",
    "batch_p2p_ops": "point-to-point communication is not supported yet",
}


def op_name(overload: str) -> str:
    """`ns::packet` of an overload as the IR spells it (`_c10d_functional::all_reduce.default`,
    or `_c10d_functional::all_reduce` in aten.call), the overload dropped."""
    return overload.removesuffix(".default")


def comm_kind(overload: str) -> str | None:
    """'start', 'wait' or 'blocking' for a collective's call, None for any other op."""
    name = op_name(overload)
    if name in STARTS:
        return "start"
    if name == f"_c10d_functional::{WAIT}":
        return "wait"
    if name in BLOCKING:
        return "blocking"
    return None


def unsupported_reason(overload: str) -> str | None:
    """Why a call of a collectives namespace cannot be compiled; None where it can (or where
    `overload` is not a collective at all)."""
    namespace, _, packet = op_name(overload).partition("::")
    if namespace not in NAMESPACES or comm_kind(overload) is not None:
        return None
    return UNSUPPORTED.get(packet, "not a functional collective mlc knows")


def node_comm_kind(node: buffer.BufferNode) -> str | None:
    """`comm_kind` of a graph node: of its call for a `buffer.extern`, None for anything else."""
    return comm_kind(node.overload.data) if isinstance(node, buffer.ExternOp) else None


def short_name(node: buffer.BufferNode) -> str:
    """`all_reduce` for a collective's node, as remarks name it (the op name for another node)."""
    if not isinstance(node, buffer.ExternOp):
        return node.name
    return op_name(node.overload.data).partition("::")[2] or node.overload.data
