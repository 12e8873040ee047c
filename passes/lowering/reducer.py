"""Reductions as loops ops: Inductor's `Reduction.create` rules applied to one description.

A `Reducer` describes one reduction: its output `ranges`, its `reduction_ranges`, the kinds of
its `loops.reduce` ops, a *prologue* that computes the values they reduce at one point
(i, r) and an *epilogue* that turns the reduced values into one value per result. `build`
chooses the form, as `ir.Reduction.create` does:

  reduction numel 0     a pointwise per result: the epilogue of the identities (sum 0, prod 1,
                        any false, welford (nan, nan, 0), so a mean or var of nothing is NaN
                        as in torch); max/min/argmax/argmin of nothing is an error in torch:
                        `build` gives None and the op stays an extern call that raises it
  reduction numel 1     a pointwise per result on the one element (argmax/argmin 0, welford
                        (x, 0, 1))
  numel < threshold     a pointwise per result that chains the combine over every point of
                        the (static) reduction ranges: Inductor's `unroll_reductions_threshold`
                        (8; the `lower-aten` option `unroll-reductions-threshold`). argmax and
                        argmin keep the first of equal values and let NaN win, as torch does.
                        welford unrolls as Inductor's two-step variance (mean = sum / n, then
                        m2 = sum((x - mean)^2)), and only when the result has more than one
                        element (`use_two_step_variance`)
  otherwise             one `loops.reduction` with every result

Reduce semantics the rest of mlc relies on: sum/prod/max/min reduce in the value's type (the
rules widen f16/bf16 to f32 and narrow in the epilogue; integer sums are taken in the result's
int64); float max/min propagate NaN; integer max/min/argmax/argmin compare signed (the rules
widen uint8 and bool to int32 first); argmax/argmin give the first position of the extreme
in the row-major flattening of the reduction ranges; welford gives (mean, m2, weight).

`Axes` maps between a reduced tensor, the result and the reduction ranges: reduced dims are
normalized (negative dims counted from the end) and sorted, so `r0_k` walks the k-th reduced
dim in the tensor's own order and a flattened position (argmax over several dims) is the
row-major one torch gives; the kept dims are `i0, i1, ...` in order, and with keepdim the
result keeps a size-1 range per reduced dim that loads ignore.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import sympy
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from mlc.passes.lowering.body import Body, Value, make_pointwise, make_reduction
from mlc.passes.lowering.registry import Call

Index = list[sympy.Expr]
Prologue = Callable[[Body, Index], Sequence[Value]]
Epilogue = Callable[[Body, list[list[Value]]], Sequence[Value]]

REDUCE_KINDS = ("sum", "prod", "max", "min", "argmax", "argmin", "any", "welford")


def _product(sizes: Sequence[int | sympy.Expr]) -> int | sympy.Expr:
    return math.prod(sizes)


@dataclass(frozen=True)
class Axes:
    """Which dims of a tensor of `shape` are reduced, and whether the result keeps them."""

    shape: tuple[int, ...]
    dims: tuple[int, ...]  # normalized, ascending, unique
    keepdim: bool

    @staticmethod
    def of(shape: Sequence[int], dims: Sequence[int] | int | None, keepdim: bool, empty_means_all: bool = True) -> Axes:
        """`dims` as an aten reduction takes it: None (and, for most ops, []) means every dim;
        negative dims count from the end; a 0-d tensor accepts 0 and -1 and reduces nothing.
        ValueError for a dim out of range."""
        rank = len(shape)
        if isinstance(dims, int):
            dims = [dims]
        if dims is None or (not dims and empty_means_all):
            dims = list(range(rank))
        if any(not -max(rank, 1) <= d < max(rank, 1) for d in dims):
            raise ValueError(f"dims {list(dims)} out of range for rank {rank}")
        if rank == 0:
            return Axes((), (), keepdim)
        normalized = sorted({d + rank if d < 0 else d for d in dims})
        return Axes(tuple(shape), tuple(normalized), keepdim)

    @property
    def ranges(self) -> list[int]:
        if self.keepdim:
            return [1 if d in self.dims else s for d, s in enumerate(self.shape)]
        return [s for d, s in enumerate(self.shape) if d not in self.dims]

    @property
    def kept_ranges(self) -> list[int]:
        """The result's shape with keepdim, whatever `keepdim` is (for intermediate stats)."""
        return [1 if d in self.dims else s for d, s in enumerate(self.shape)]

    @property
    def reduction_ranges(self) -> list[int]:
        return [self.shape[d] for d in self.dims]

    @property
    def numel(self) -> int:
        """How many elements each result element reduces."""
        return _product(self.reduction_ranges)

    def index(self, out: Sequence[sympy.Expr], r: Sequence[sympy.Expr | int]) -> Index:
        """The position in the reduced tensor of result point `out` and reduction point `r`."""
        kept = iter(out)
        index: Index = []
        for d in range(len(self.shape)):
            if d in self.dims:
                position = r[self.dims.index(d)]
                index.append(sympy.Integer(position) if isinstance(position, int) else position)
                if self.keepdim:
                    next(kept)  # the result's size-1 range for this dim is never read
            else:
                index.append(next(kept))
        return index

    def stat_index(self, full: Sequence[sympy.Expr]) -> Index:
        """Where a point of the reduced tensor reads a keepdim-shaped statistic of it."""
        return [sympy.Integer(0) if d in self.dims else e for d, e in enumerate(full)]

    def result_stat_index(self, out: Sequence[sympy.Expr]) -> Index:
        """Where a point of the result reads a keepdim-shaped statistic."""
        return self.index(out, [0] * len(self.dims))


@dataclass
class Reducer:
    """One reduction; see the module docstring. `kinds[k]` reduces `prologue(...)[k]`."""

    ranges: list[int]
    reduction_ranges: list[int]
    kinds: list[str]
    prologue: Prologue
    epilogue: Epilogue
    result_types: list[TensorType]

    @property
    def numel(self) -> int | sympy.Expr:
        """The reduced element count: an int, or an expression of sizes (never unrolled)."""
        return _product(self.reduction_ranges)

    def build(self, call: Call) -> list[Operation] | None:
        assert all(k in REDUCE_KINDS for k in self.kinds)
        n = self.numel
        if n == 0:
            if any(k not in ("sum", "prod", "any", "welford") for k in self.kinds):
                return None
            return self._pointwise(call, self._identities)
        if n == 1:
            return self._pointwise(call, self._single)
        if isinstance(n, int) and n < call.options.unroll_reductions_threshold and self._may_unroll():
            return self._pointwise(call, self._unrolled)
        return [make_reduction(call, self.ranges, self.reduction_ranges, self.result_types, self._reduction_body)]

    def _may_unroll(self) -> bool:
        # Inductor unrolls plain reductions always on GPU, variance only for several rows.
        return "welford" not in self.kinds or _product(self.ranges) != 1

    # -- the loops.reduction form ---------------------------------------------------------------

    def _reduction_body(self, b: Body) -> Sequence[Value]:
        values = self._prologue(b, list(b.rvars))
        reduced = [b.reduce(kind, v) for kind, v in zip(self.kinds, values)]
        return self.epilogue(b, reduced)

    def _prologue(self, b: Body, r: Sequence[sympy.Expr | int]) -> list[Value]:
        values = list(self.prologue(b, [sympy.Integer(e) if isinstance(e, int) else e for e in r]))
        assert len(values) == len(self.kinds), "one prologue value per reduce"
        return values

    # -- pointwise forms ------------------------------------------------------------------------

    def _pointwise(self, call: Call, reduced_of: Callable[[Body], list[list[Value]]]) -> list[Operation]:
        """One pointwise per result, each computing the epilogue of `reduced_of(body)`."""
        ops: list[Operation] = []
        for k, typ in enumerate(self.result_types):

            def fn(b: Body, k: int = k) -> Value:
                return list(self.epilogue(b, reduced_of(b)))[k]

            ops.append(make_pointwise(call, typ, fn))
        return ops

    def _dtypes(self) -> list[str]:
        """The dtype of each prologue value, from a throwaway body (nothing of it is kept)."""
        scratch = Body(len(self.ranges), len(self.reduction_ranges))
        dtypes = [v.dtype for v in self._prologue(scratch, [0] * len(self.reduction_ranges))]
        for op in reversed(list(scratch.block.ops)):
            op.drop_all_references()
        return dtypes

    def _identities(self, b: Body) -> list[list[Value]]:
        out = []
        for kind, dtype in zip(self.kinds, self._dtypes()):
            if kind == "welford":
                nan = b.constant(math.nan, dtype)
                out.append([nan, nan, b.constant(0.0, dtype)])
            elif kind == "any":
                out.append([b.constant(False, "bool")])
            else:
                out.append([b.constant(0 if kind == "sum" else 1, dtype)])
        return out

    def _single(self, b: Body) -> list[list[Value]]:
        values = self._prologue(b, [0] * len(self.reduction_ranges))
        out = []
        for kind, v in zip(self.kinds, values):
            if kind in ("argmax", "argmin"):
                out.append([b.constant(0, "int64")])
            elif kind == "welford":
                # As eager's welford from mean 0: mean 0 + v (+0.0 for -0.0), m2 = (v - mean)^2
                # (NaN for an infinite or NaN v, not 0).
                deviation = b.sub(v, v)
                out.append([b.add(b.const_like(0.0, v), v), b.mul(deviation, deviation), b.const_like(1.0, v)])
            elif kind == "sum" and v.is_float:
                out.append([b.add(b.const_like(0.0, v), v)])  # 0 + v: a sum of -0.0 is +0.0, as in eager
            else:
                out.append([v])
        return out

    def _unrolled(self, b: Body) -> list[list[Value]]:
        points = list(itertools.product(*[range(s) for s in self.reduction_ranges]))
        per_point = [self._prologue(b, list(p)) for p in points]
        out = []
        for k, kind in enumerate(self.kinds):
            values = [pp[k] for pp in per_point]
            if kind in ("argmax", "argmin"):
                out.append([_unrolled_arg(b, kind, values)])
            elif kind == "welford":
                out.append(_unrolled_variance(b, values))
            else:
                combine = {"sum": b.add, "prod": b.mul, "max": b.maximum, "min": b.minimum, "any": b.logical_or}[kind]
                acc, rest = values[0], values[1:]
                if kind == "sum" and acc.is_float:
                    acc, rest = b.const_like(0.0, acc), values  # from 0, as eager sums: -0.0s give +0.0
                for v in rest:
                    acc = combine(acc, v)
                out.append([acc])
        return out


def _unrolled_arg(b: Body, kind: str, values: list[Value]) -> Value:
    """Inductor's argmax/argmin combine: strictly better, or NaN over non-NaN, or equal (both
    NaN counting as equal) at a smaller position; positions are the row-major order of values."""
    best, best_at = values[0], b.constant(0, "int64")
    for k, v in enumerate(values[1:], start=1):
        at = b.constant(k, "int64")
        # Does the candidate (v, at) replace (best, best_at)? The earlier one wins ties, and
        # positions only grow, so: v strictly better, or v NaN and best not.
        better = b.compare("gt" if kind == "argmax" else "lt", v, best)
        if v.is_float:
            v_nan, best_nan = b.isnan(v), b.isnan(best)
            better = b.logical_or(better, b.logical_and(v_nan, b.logical_not(best_nan)))
        best = b.select(better, v, best)
        best_at = b.select(better, at, best_at)
    return best_at


def _unrolled_variance(b: Body, values: list[Value]) -> list[Value]:
    """Two-step (mean, m2, weight) of a few values."""
    n = b.const_like(float(len(values)), values[0])
    total = b.const_like(0.0, values[0])  # from 0, as eager: the mean of -0.0s is +0.0
    for v in values:
        total = b.add(total, v)
    mean = b.truediv(total, n)
    m2 = None
    for v in values:
        d = b.sub(v, mean)
        sq = b.mul(d, d)
        m2 = sq if m2 is None else b.add(m2, sq)
    assert m2 is not None
    return [mean, m2, n]



def reduce_over(
    call: Call,
    axes: Axes,
    kinds: list[str],
    prologue: Callable[[Body, Index], Sequence[Value]],
    epilogue: Epilogue,
    result_types: Sequence[TensorType],
) -> list[Operation] | None:
    """A reduction over `axes` whose `prologue(b, index)` gets the position in the reduced
    tensor (loads of other tensors of its shape, or of its statistics at `axes.stat_index`)."""
    reducer = Reducer(
        axes.ranges,
        axes.reduction_ranges,
        kinds,
        lambda b, r: prologue(b, axes.index(b.vars, r)),
        epilogue,
        list(result_types),
    )
    return reducer.build(call)


def results_of(ops: Sequence[Operation]) -> list[SSAValue]:
    return [r for op in ops for r in op.results]


def first(b: Body, reduced: list[list[Value]]) -> list[Value]:
    """The epilogue that yields the first reduce's (first) value."""
    return [reduced[0][0]]
