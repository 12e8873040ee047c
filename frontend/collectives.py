"""The importer's rules for functional collectives (see `mlc.analysis.collectives`).

Dynamo and AOTAutograd write a collective as a start and a wait on its result:

    all_reduce = torch.ops._c10d_functional.all_reduce.default(mm, 'sum', '0')
    wait_tensor = torch.ops._c10d_functional.wait_tensor.default(all_reduce)
    add = torch.ops.aten.add.Tensor(wait_tensor, all_reduce)     # after the wait: the same tensor

and both import as `aten.call`s of their `ns::packet` (a group is its name, a string):

    %3 = aten.call "_c10d_functional::all_reduce" (%2) {args = [#aten.tensor, "sum", "0"]} : ...
    %4 = aten.call "_c10d_functional::wait_tensor" (%3) {args = [#aten.tensor]} : ...
    %5 = aten.add.Tensor %4, %4 : ...

The wait returns the buffer the collective filled, so a later read of the start's result
(`all_reduce` in `add` above) reads the wait's result instead: every reader of a collective's
result then depends on its wait. A read before the wait (the buffer is still being written) and
a returned unwaited result are refused, as are the calls mlc cannot order (in-place and `out=`
collectives, point-to-point ops) and a process group passed as an object rather than a name.
"""

from __future__ import annotations

from typing import Any

import torch
from xdsl.ir import Operation, SSAValue

from mlc.analysis.collectives import comm_kind, unsupported_reason


class CollectiveError(Exception):
    """A collective the importer cannot represent; the importer reports it with the node."""


class InFlight:
    """Which imported values are collective results not waited on yet, and which value stands
    for a waited one from its wait on."""

    def __init__(self) -> None:
        self.started: dict[SSAValue, str] = {}  # in-flight value -> the start's op name
        self.waited: dict[SSAValue, SSAValue] = {}  # a start's value -> its wait's result

    def check(self, target: torch._ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """Refuse a collective call mlc cannot compile (with why)."""
        overload = f"{target._schema.name}.{target._overloadname}"
        reason = unsupported_reason(overload)
        if reason is not None:
            raise CollectiveError(f"unsupported collective: {reason}")
        if comm_kind(overload) is None:
            return
        names = [a.name for a in target._schema.arguments]
        if "group_name" in names:
            k = names.index("group_name")
            group = args[k] if k < len(args) else kwargs.get("group_name")
            if not isinstance(group, str):
                raise CollectiveError(
                    f"the process group is passed as {type(group).__name__}; only a group name (a string) is supported"
                )

    def read(self, value: SSAValue, by_wait: bool) -> SSAValue:
        """The value a reader gets for `value`: the wait's result for a waited collective."""
        if value in self.started and not by_wait:
            raise CollectiveError(
                f"reads the result of {self.started[value]} before waiting for it (wait_tensor)"
            )
        return self.waited.get(value, value)

    def record(self, target: torch._ops.OpOverload, op: Operation) -> None:
        """Note what an imported call starts or waits for."""
        kind = comm_kind(f"{target._schema.name}.{target._overloadname}")
        if kind == "start":
            for result in op.results:
                self.started[result] = target._schema.name.partition("::")[2]
        elif kind == "wait":
            source = op.operands[0]
            self.started.pop(source, None)
            self.waited[source] = op.results[0]


def is_wait(target: Any) -> bool:
    return isinstance(target, torch._ops.OpOverload) and comm_kind(
        f"{target._schema.name}.{target._overloadname}") == "wait"
