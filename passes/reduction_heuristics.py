"""Shared analysis of reduction nodes: Inductor's reduction hint and split factor.

Used by `--split-reductions` (how many pieces to cut a long reduction into) and by
`--convert-to-triton` (which launch configurations a reduction kernel gets). Pure functions of a
`buffer.computed` with `reduce` ranges; no IR is changed here.

* `reduction_hint(node)` -- Inductor's `Reduction.num_splits` classification (`ir.py`):
  `inner` when the output is one element, `default` when rnumel <= 32 or the output has at
  least `num_sms * 64` elements, else by the reads that cover every loop variable (or, lacking
  those, the reads that vary along the reduction): a read whose strides along the reduction
  variables are all 0 or > 1 is "outer"; more inner reads than outer ones gives `inner`, else
  `outer`. Symbolic sizes give `default`.
* `split_factor(...)` -- `choices.py: InductorChoices.reduction_split_factor` for a GPU with
  `num_sms` multiprocessors of 2048 threads, blocks of 8 warps x 32 threads.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy

from mlc.dialects import buffer
from mlc.dialects.sym import symbol

INNER, OUTER, OUTER_TINY, DEFAULT = "inner", "outer", "outer_tiny", "default"
REDUCTION_HINTS = (INNER, OUTER, OUTER_TINY, DEFAULT)

THREADS_PER_SM = 2048  # max resident threads per SM (sm_80 .. sm_90)
NUM_THREADS = 256  # the 8 warps x 32 threads a split block is sized for
NO_SPLIT_RNUMEL = 8192  # inner reductions up to this long are never split (524288 on sm >= 10)


def product(values: Sequence[sympy.Expr]) -> sympy.Expr:
    return sympy.Mul(*values) if values else sympy.Integer(1)


def _stride(index: sympy.Expr, var: sympy.Symbol, variables: Sequence[sympy.Symbol]) -> sympy.Expr:
    """How far `index` moves when `var` goes from 0 to 1, the other variables at 0 (stride_hints)."""
    zero = {v: 0 for v in variables}
    return index.subs({**zero, var: 1}) - index.subs(zero)


def reduction_hint(node: buffer.ComputedOp, num_sms: int = 132) -> str:
    """Inductor's ReductionHint for a reduction node (see the module docstring)."""
    ranges, rranges = node.range_exprs, node.reduction_range_exprs
    numel, rnumel = product(ranges), product(rranges)
    if not (numel.is_Integer and rnumel.is_Integer):
        return DEFAULT
    if int(numel) == 1:
        return INNER
    if int(rnumel) <= 32 or int(numel) >= num_sms * 2 * 32:
        return DEFAULT
    pointwise = [symbol(f"i{k}") for k, r in enumerate(ranges) if r != 1]
    reduction = [symbol(f"r0_{k}") for k, r in enumerate(rranges) if r != 1]
    reads = {(op.buffer_name, op.index.expr) for op in node.body.walk() if isinstance(op, buffer.LoadOp)}
    full = [i for _, i in reads if all(v in i.free_symbols for v in [*pointwise, *reduction])]
    along = [i for _, i in reads if i not in full and any(v in i.free_symbols for v in reduction)]
    indices = full or along
    if not indices:
        return DEFAULT
    inner = outer = 0
    variables = [*pointwise, *reduction]
    for index in indices:
        strides = [_stride(index, v, variables) for v in reduction]
        if all(s.is_Integer and (int(s) == 0 or int(s) > 1) for s in strides):
            outer += 1
        else:
            inner += 1
    return INNER if inner > outer else OUTER


def _closest_divisor(n: int, target: int) -> int:
    return min(sympy.divisors(n), key=lambda d: abs(d - target))


def split_factor(
    rnumel: int,
    numel: int,
    inner: bool,
    num_sms: int = 132,
    min_elements_per_thread: int = 32,
    max_elements_per_thread: int = 512,
) -> int:
    """Into how many pieces to split a reduction of `rnumel` elements for each of `numel`
    outputs (1: none). Inner reductions: none with >= 2 outputs per SM or rnumel <= 8192; else
    each thread of a 256-thread block gets `min..max` elements, a divisor of rnumel preferred
    when one is within 30 (50 at the max) of the target. Outer: 4 values per thread, 128
    outputs per block, tolerance 20."""
    min_per_device = min_elements_per_thread * num_sms * THREADS_PER_SM
    max_per_device = max_elements_per_thread * num_sms * THREADS_PER_SM
    total = rnumel * numel
    if inner:
        if numel >= 2 * num_sms or rnumel <= NO_SPLIT_RNUMEL:
            return 1
        per_block = NUM_THREADS
        if total <= min_per_device:
            split_size = min_elements_per_thread
        elif total < max_per_device:
            target_blocks = num_sms * THREADS_PER_SM // (2 * NUM_THREADS)
            blocks_per_output = -(-target_blocks // numel)
            target = -(-rnumel // (NUM_THREADS * blocks_per_output))
            closest = _closest_divisor(rnumel, target)
            split_size = max(closest, min_elements_per_thread) if abs(closest - target) < 30 else target
        else:
            closest = _closest_divisor(rnumel, max_elements_per_thread)
            split_size = closest if abs(closest - max_elements_per_thread) < 50 else max_elements_per_thread
    else:
        per_block = 4  # r-values per thread
        xblocks = -(-numel // 128)
        if total < min_per_device:
            split_size = min_elements_per_thread
        elif total < max_per_device:
            target_blocks = -(-(num_sms * THREADS_PER_SM // NUM_THREADS) // xblocks)
            target = -(-rnumel // (per_block * target_blocks))
            closest = _closest_divisor(rnumel, target)
            split_size = max(closest, min_elements_per_thread) if abs(target - closest) < 20 else target
        else:
            closest = _closest_divisor(rnumel, max_elements_per_thread)
            split_size = closest if abs(closest - max_elements_per_thread) < 50 else max_elements_per_thread
    return -(-rnumel // (split_size * per_block))


def num_splits(
    node: buffer.ComputedOp,
    num_sms: int = 132,
    min_elements_per_thread: int = 32,
    max_elements_per_thread: int = 512,
) -> tuple[str, int]:
    """(hint, split) for a reduction node, as Inductor's `Reduction.num_splits` decides them
    (split 1: no split)."""
    numel, rnumel = product(node.range_exprs), product(node.reduction_range_exprs)
    hint = reduction_hint(node, num_sms)
    if not (numel.is_Integer and rnumel.is_Integer) or hint == DEFAULT:
        return hint, 1
    split = split_factor(int(rnumel), int(numel), hint == INNER, num_sms, min_elements_per_thread, max_elements_per_thread)
    return hint, split
