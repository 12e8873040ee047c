"""Edge programs for the differential fuzzer: the values, shapes and outputs where IEEE
arithmetic and PyTorch's aliasing rules show, written by `EdgeGenerator` (a tools/fuzz_generator.py
`Generator` with these features switched on by an `EdgePlan`):

  specials      float inputs with signed zeros mixed in, or signed zeros, +-inf and NaN
                (`-x` of +0 is -0; a variance over one non-finite element is NaN); statements
                may then produce non-finite values (only NaN-free, finite ones otherwise)
  empty shapes  a first input with a size-0 dim, or a 0-d or all-size-1 shape; statements may
                produce empty tensors (reductions over a size-0 dim: sum 0, mean NaN, prod 1)
  view outputs  the program also returns one intermediate and several views of it (a
                transpose, a strided slice, an unsqueeze + expand): outputs that alias each
                other in eager must alias in mlc, and an expand stays stride 0

`edge_plan(seed)` decides, from a random stream of its own (not `random.Random(seed)`), whether
a seed is an edge program and which features it has: every other seed gives the program it
gave before these existed (tools/fuzz.py `generate`).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from mlc.tools.fuzz_generator import LIMIT, Generator, reduction_dims

EDGE_FRACTION = 0.3
"""The share of seeds that give edge programs by default (`mlc-fuzz --edge-fraction`)."""

SIGNED_ZEROS = (0.0, -0.0)
NON_FINITE = (0.0, -0.0, math.inf, -math.inf, math.nan)
SPECIAL_FRACTIONS = (0.1, 0.3, 0.5)

EMPTY_SHAPES = ((0,), (3, 0), (0, 5), (2, 0, 4), (4, 1, 0), (0, 1), (1, 0, 3), (5, 0, 1))
DEGENERATE_SHAPES = ((), (1,), (1, 1), (5, 1), (1, 7), (3, 1, 4), (2, 3, 1), (1, 1, 1))

NAN_PATH_DEPENDENT = {"hardswish", "hardsigmoid", "hardtanh", "relu", "leaky_relu", "elu", "softplus", "clamp"}
"""Piecewise ops whose eager gradient at NaN depends on the CPU kernel's path: hardswish's is
1 in the scalar loop and NaN in the vectorized one (4 NaNs: 1, 64 NaNs: NaN). In programs
with a backward they take NaN-free values only."""

GENERATOR_ERRORS = (RuntimeError, ValueError, IndexError, ZeroDivisionError, TypeError)
"""What a category may raise outside `emit` on an empty or non-finite value (`randrange(0)`,
the `min()` of an empty tensor): the attempt is undone."""


@dataclass(frozen=True)
class EdgePlan:
    """Which edge features one program has (see the module docstring)."""

    specials: tuple[float, ...] = ()
    special_fraction: float = 0.0
    empty_shapes: bool = False
    view_outputs: bool = False

    @property
    def non_finite(self) -> bool:
        return any(not math.isfinite(v) for v in self.specials)


def edge_plan(seed: int, fraction: float | None = None) -> EdgePlan | None:
    """The edge features of `seed`'s program, None for an ordinary program (about 1 - `fraction`
    of the seeds). Drawn from a stream seeded by the string `mlc-fuzz-edge-{seed}`."""
    rng = random.Random(f"mlc-fuzz-edge-{seed}")
    if rng.random() >= (EDGE_FRACTION if fraction is None else fraction):
        return None
    specials = rng.choice(((), SIGNED_ZEROS, NON_FINITE, NON_FINITE))
    plan = EdgePlan(specials, rng.choice(SPECIAL_FRACTIONS) if specials else 0.0, rng.random() < 0.4,
                    rng.random() < 0.4)
    return plan if plan != EdgePlan() else replace(plan, view_outputs=True)


@dataclass
class EdgeGenerator(Generator):
    """A `Generator` writing an edge program of `plan` (see the module docstring)."""

    plan: EdgePlan = field(default_factory=EdgePlan)

    CATEGORIES = {**Generator.CATEGORIES, "edge_reduce": 20, "zero_sign": 30}

    # -- what statements may produce --

    def new_input(self, shape: Any, dtype: torch.dtype, low: float | None = None, high: float | None = None,
                  grad: bool = True) -> str:
        """An input as `Generator.new_input` draws it, with the plan's special values mixed into
        floats; ValueError (the attempt is undone) for one of more than `max_numel` elements."""
        if math.prod(shape) > self.max_numel:
            raise ValueError(f"an input of shape {tuple(shape)}: over {self.max_numel} elements")
        name = super().new_input(shape, dtype, low, high, grad)
        if self.plan.specials and dtype.is_floating_point:
            inp = replace(self.inputs[-1], specials=self.plan.specials, special_fraction=self.plan.special_fraction)
            self.inputs[-1] = inp
            self.values[name] = inp.make().detach()
        return name

    def first_shape(self) -> tuple[int, ...]:
        if self.plan.empty_shapes:
            return self.rng.choice(EMPTY_SHAPES if self.rng.random() < 0.6 else DEGENERATE_SHAPES)
        return super().first_shape()

    def acceptable(self, value: torch.Tensor) -> bool:
        """As `Generator.acceptable`, but empty values in plans of empty shapes, and infinities
        and NaN in plans of non-finite specials (their finite values still within `LIMIT`)."""
        if value.numel() > 1.5 * self.max_numel or (value.numel() == 0 and not self.plan.empty_shapes):
            return False
        if value.numel() == 0:
            return True
        if not value.dtype.is_floating_point:
            return super().acceptable(value)
        finite = value[torch.isfinite(value)]
        if finite.numel() < value.numel() and not self.plan.non_finite:
            return False
        return finite.numel() == 0 or bool(finite.abs().max() <= LIMIT.get(value.dtype, 1e6))

    def emit(self, op: str, args: Any, **params: Any) -> str | None:
        """As `Generator.emit`; a float to integer cast takes finite values only (NaN and inf
        have no integer: the result is whatever the hardware gives), `NAN_PATH_DEPENDENT` ops
        NaN-free ones in programs with a backward."""
        if op == "to_int" and not all(bool(torch.isfinite(self.values[a]).all()) for a in args):
            return None
        if op in NAN_PATH_DEPENDENT and self.backward and any(bool(self.values[a].isnan().any()) for a in args):
            return None
        return super().emit(op, args, **params)

    def guard(self, name: str, lo: float | None, hi: float | None) -> str | None:
        """An empty value lies in every range; others as `Generator.guard`."""
        return name if self.values[name].numel() == 0 else super().guard(name, lo, hi)

    def attempt(self, category: str) -> None:
        """Add statements of `category`, or none: an attempt that raises (on an empty or
        non-finite value) is undone, with the inputs it added."""
        inputs, stmts = len(self.inputs), len(self.stmts)
        try:
            super().attempt(category)
        except GENERATOR_ERRORS:
            for gone in [i.name for i in self.inputs[inputs:]] + [s.out for s in self.stmts[stmts:]]:
                self.values.pop(gone, None)  # an input that failed as it was made has no value yet
                self.exact.pop(gone, None)
            del self.inputs[inputs:], self.stmts[stmts:]

    # -- the edge categories --

    def edge_reduce(self) -> str | None:
        """A reduction over a size-0 or size-1 dim more often than not (sum 0, mean NaN, prod 1,
        a variance of one element), of any float value, empty and 0-d ones included."""
        rng = self.rng
        x = self.pick(self.is_float)
        if x is None:
            return None
        shape = tuple(self.values[x].shape)
        degenerate = [k for k, d in enumerate(shape) if d <= 1]
        dim = rng.choice(degenerate) if degenerate and rng.random() < 0.7 else reduction_dims(rng, shape, full=False)
        op = rng.choice(["sum", "mean", "prod", "nansum", "logsumexp", "var", "std", "amax"])
        keepdim = rng.random() < 0.3
        if op in ("var", "std"):
            return self.emit(op, [x], dim=dim, keepdim=keepdim, correction=rng.choice((0, 0, 1)))
        if op == "logsumexp":
            return self.emit(op, [x], dim=dim, keepdim=keepdim)
        if op == "amax" and self.backward and not self.exact[x]:
            return None  # the gradient goes to the extremum: exact values only (fuzz_ops.EXTREMA)
        if op == "prod":
            x = self.guard(x, 0.8, 1.25) if shape and max(shape) > 8 else x
        if op == "sum":
            return None if x is None else self.emit(op, [x], dim=dim, keepdim=keepdim, dtype=None)
        return None if x is None else self.emit(op, [x], dim=dim, keepdim=keepdim)

    def zero_sign(self) -> str | None:
        """An op that keeps or flips the sign of a zero: -x, x * -c, odd functions (sin, tanh,
        erf, expm1: f(-0) = -0), rounding toward zero (ceil(-0.5) = -0)."""
        rng = self.rng
        x = self.pick(self.is_float)
        if x is None:
            return None
        op = rng.choice(["neg", "neg", "mul_scalar", "sin", "tanh", "erf", "expm1", "trunc", "ceil", "round"])
        if op == "mul_scalar":
            return self.emit(op, [x], c=rng.choice((-1.0, -0.5, -0.0, 2.0)))
        if op in ("trunc", "ceil", "round") and not self.exact[x]:
            return None  # discontinuous: exact values only (fuzz_ops.DISCONTINUOUS)
        if op == "expm1":
            x = self.guard(x, None, 8.0)
        return None if x is None else self.emit(op, [x])

    # -- the outputs --

    def outputs(self) -> list[str]:
        """`Generator.outputs`, then (plans of view outputs) an intermediate and views of it."""
        outs = super().outputs()
        return outs + self.view_family() if self.plan.view_outputs else outs

    def view_family(self) -> list[str]:
        """A non-empty float intermediate of at least one dim (an existing one, or `x * c` or
        `x * c + 1` of one) and views of it: its transpose, a strided slice, an unsqueeze + expand (eager
        returns them aliasing it)."""
        bases = [n for n, v in self.values.items() if v.dtype.is_floating_point and v.dim() >= 1 and v.numel() > 0]
        if not bases:
            return []
        base = self.rng.choice(bases)
        if base.startswith("x") or self.rng.random() < 0.5:
            scaled = self.emit("mul_scalar", [base], c=self.rng.choice((2.0, -0.5, -1.0)))
            base = scaled if scaled is None or self.rng.random() < 0.5 else self.emit("add_scalar", [scaled], c=1.0)
        if base is None:
            return []
        rank = self.values[base].dim()
        views = [
            self.emit("transpose", [base], d0=0, d1=-1) if rank >= 2 else None,
            self.emit("slice", [base], dim=rank - 1, start=None, stop=None, step=2),
            self.expanded(base, rank),
        ]
        return [base] + [v for v in views if v is not None]

    def expanded(self, base: str, rank: int) -> str | None:
        """`base.unsqueeze(0).expand(3, -1, ...)`: a view of stride 0 in its new dim."""
        unsqueezed = self.emit("unsqueeze", [base], dim=0)
        return None if unsqueezed is None else self.emit("expand", [unsqueezed], sizes=(3,) + (-1,) * rank)
