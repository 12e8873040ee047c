"""A fuzz program (tools/fuzz.py writes them) as plain data: its inputs (`Input`: shape, dtype,
value range, whether it requires grad, the seed of its values), its statements (`Stmt`:
`t3 = op(args, params)` over named tensors, the ops of tools/fuzz_ops.py) and the names it
returns (`Program`). A program prints as Python source, runs from the data structure (no source
is evaluated) and prunes to what its outputs depend on; tools/fuzz_check.py runs and shrinks it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import torch

from mlc.tools.fuzz_ops import OPS, render


@dataclass(frozen=True)
class Input:
    """A program input: its values are uniform in [low, high] (integers: inclusive), drawn
    from `seed` on CPU; then (floats) each element becomes one of `specials` (signed zeros,
    infinities, NaN: tools/fuzz_edge.py) with probability `special_fraction`, drawn from the
    same generator after the values, so the other elements do not move."""

    name: str
    shape: tuple[int, ...]
    dtype: torch.dtype
    low: float
    high: float
    grad: bool
    seed: int
    specials: tuple[float, ...] = ()
    special_fraction: float = 0.0

    def make(self, device: torch.device | str = "cpu") -> torch.Tensor:
        g = torch.Generator().manual_seed(self.seed)
        if self.dtype == torch.bool:
            t = torch.rand(self.shape, generator=g) > 0.5
        elif self.dtype.is_floating_point:
            t = torch.rand(self.shape, generator=g) * (self.high - self.low) + self.low
            t = with_specials(t, self.specials, self.special_fraction, g).to(self.dtype)
        else:
            t = torch.randint(int(self.low), int(self.high) + 1, self.shape, generator=g).to(self.dtype)
        return t.to(device).requires_grad_(self.grad)


def with_specials(t: torch.Tensor, specials: tuple[float, ...], fraction: float,
                  g: torch.Generator) -> torch.Tensor:
    """`t` with each element replaced, with probability `fraction`, by one of `specials`
    (which of them: a second draw from `g`)."""
    if not specials:
        return t
    chosen = torch.rand(t.shape, generator=g) < fraction
    which = torch.randint(len(specials), t.shape, generator=g)
    return torch.where(chosen, torch.tensor(specials, dtype=t.dtype)[which], t)


@dataclass(frozen=True)
class Stmt:
    """`out = op(*args, **params)`; params as sorted (name, value) pairs (hashable); `dtype`
    is the result's (known from the generator's eager run)."""

    out: str
    op: str
    args: tuple[str, ...]
    params: tuple[tuple[str, Any], ...] = ()
    dtype: torch.dtype | None = None

    @property
    def p(self) -> dict[str, Any]:
        return dict(self.params)

    def source(self) -> str:
        return f"{self.out} = {render(self.op, self.args, self.p)}"


@dataclass(frozen=True)
class Program:
    """A generated program: `def f(inputs): stmts; return outputs`."""

    seed: int
    inputs: tuple[Input, ...]
    stmts: tuple[Stmt, ...]
    outputs: tuple[str, ...]

    @property
    def backward(self) -> bool:
        return any(i.grad for i in self.inputs)

    def __call__(self, *tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
        env = dict(zip([i.name for i in self.inputs], tensors))
        for s in self.stmts:
            env[s.out] = OPS[s.op].fn(*[env[a] for a in s.args], **dict(s.params))
        return tuple(env[o] for o in self.outputs)

    def make_inputs(self, device: torch.device | str = "cpu") -> list[torch.Tensor]:
        return [i.make(device) for i in self.inputs]

    def source(self, name: str = "f") -> str:
        lines = [f"def {name}({', '.join(i.name for i in self.inputs)}):"]
        lines += [f"    {s.source()}" for s in self.stmts]
        lines.append(f"    return ({', '.join(self.outputs)},)")
        return "\n".join(lines)

    def numel(self) -> int:
        return sum(math.prod(i.shape) for i in self.inputs)

    def dtypes_behind(self, name: str) -> set[torch.dtype]:
        """The dtypes of `name` and of every value it is computed from (inputs included)."""
        by_out = {s.out: s for s in self.stmts}
        dtypes = {i.name: i.dtype for i in self.inputs}
        seen, todo, found = set(), [name], set()
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            if n in dtypes:
                found.add(dtypes[n])
            elif n in by_out:
                found.add(by_out[n].dtype)
                todo += list(by_out[n].args)
        found.discard(None)
        return found

    def ops_behind(self, names: Sequence[str]) -> set[str]:
        """The ops computing `names` and every value they are computed from."""
        by_out = {s.out: s for s in self.stmts}
        seen, todo, ops = set(), list(names), set()
        while todo:
            n = todo.pop()
            if n in seen or n not in by_out:
                continue
            seen.add(n)
            ops.add(by_out[n].op)
            todo += list(by_out[n].args)
        return ops

    def pruned(self) -> Program:
        """Without the statements and inputs no output depends on."""
        live = set(self.outputs)
        kept = []
        for s in reversed(self.stmts):
            if s.out in live:
                kept.append(s)
                live.update(s.args)
        inputs = tuple(i for i in self.inputs if i.name in live)
        return replace(self, inputs=inputs, stmts=tuple(reversed(kept)))
