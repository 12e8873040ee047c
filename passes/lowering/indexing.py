"""Index maps: for a point of the output, the position to load in an input.

Each function takes the output's index expressions (usually `i0, i1, ...`) and returns one
expression per input dimension. Views compose these maps instead of copying data.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy

from mlc.dialects.sym import FloorDiv, ModularIndexing

Index = list[sympy.Expr]


def broadcast_index(index: Sequence[sympy.Expr], in_shape: Sequence[int], out_shape: Sequence[int]) -> Index:
    """NumPy broadcasting: leading output dims are skipped, expanded size-1 dims read 0."""
    lead = len(out_shape) - len(in_shape)
    out: Index = []
    for k, size in enumerate(in_shape):
        expanded = size == 1 and out_shape[lead + k] != 1
        out.append(sympy.Integer(0) if expanded else index[lead + k])
    return out


def contiguous_strides(shape: Sequence[int]) -> list[int]:
    strides, acc = [], 1
    for size in reversed(shape):
        strides.append(acc)
        acc *= size
    return strides[::-1]


def flat_index(index: Sequence[sympy.Expr], shape: Sequence[int]) -> sympy.Expr:
    """The row-major linear position of `index` in a tensor of `shape`."""
    terms = [i * st for i, size, st in zip(index, shape, contiguous_strides(shape)) if size != 1]
    return sympy.Add(*terms, sympy.Integer(0))


def unflatten(linear: sympy.Expr, shape: Sequence[int]) -> Index:
    """Split a linear position into indices of `shape`; the outermost one needs no modulus."""
    out: Index = []
    for k, (size, stride) in enumerate(zip(shape, contiguous_strides(shape))):
        if size == 1:
            out.append(sympy.Integer(0))
        elif k == _first_non_unit(shape):
            out.append(floor_div(linear, stride))
        else:
            out.append(modular_index(linear, stride, size))
    return out


def _split_multiples(expr: sympy.Expr, divisor: int) -> tuple[sympy.Expr, sympy.Expr]:
    """expr = divisor * whole + rest, with `whole` the terms whose coefficient divisor divides."""
    whole, rest = [], []
    for term in sympy.Add.make_args(expr):
        coeff, factor = term.as_coeff_Mul()
        if coeff.is_Integer and int(coeff) % divisor == 0:
            whole.append(sympy.Integer(int(coeff) // divisor) * factor)
        else:
            rest.append(term)
    return sympy.Add(*whole), sympy.Add(*rest)


def floor_div(expr: sympy.Expr, divisor: int) -> sympy.Expr:
    """FloorDiv(64*a + b, 64) -> a + FloorDiv(b, 64): exact for integer a."""
    whole, rest = _split_multiples(expr, divisor)
    return whole + (FloorDiv(rest, divisor) if rest != 0 else 0)


def modular_index(expr: sympy.Expr, divisor: int, modulus: int) -> sympy.Expr:
    """ModularIndexing(16*a + b, 1, 4) -> ModularIndexing(b, 1, 4): multiples of
    divisor * modulus never change the result."""
    _, rest = _split_multiples(expr, divisor * modulus)
    return ModularIndexing(rest, divisor, modulus) if rest != 0 else sympy.Integer(0)


def _first_non_unit(shape: Sequence[int]) -> int:
    return next((k for k, s in enumerate(shape) if s != 1), len(shape))


def reshape_index(index: Sequence[sympy.Expr], in_shape: Sequence[int | sympy.Expr], out_shape: Sequence[int | sympy.Expr]) -> Index:
    """Input indices of a reshape from `in_shape` to `out_shape`.

    Dims are matched from the innermost outwards: equal sizes pass the index through, output
    dims that merge into one input dim combine linearly, and one output dim that splits into
    several input dims decomposes with ModularIndexing/FloorDiv. Only when the groups do not
    line up (e.g. [4, 6] -> [6, 4]), or symbolic sizes cannot be ordered (s0*s1 against s1),
    does it fall back to flattening everything, which is right for any sizes."""
    if 0 in in_shape or 0 in out_shape:
        return [sympy.Integer(0)] * len(in_shape)  # nothing is ever loaded
    try:
        grouped = _reshape_by_groups(index, in_shape, out_shape)
    except TypeError:  # sympy cannot decide `s0*s1 < s1`
        grouped = None
    if grouped is not None:
        return grouped
    return unflatten(flat_index(index, out_shape), in_shape)


def _reshape_by_groups(index: Sequence[sympy.Expr], in_shape: Sequence[int], out_shape: Sequence[int]) -> Index | None:
    outs = list(zip(index, out_shape))
    ins = list(in_shape)
    result: Index = []  # built innermost first
    while outs and ins:
        in_size = ins.pop()
        var, out_size = outs.pop()
        if in_size == 1:
            result.append(sympy.Integer(0))
            outs.append((var, out_size))
        elif out_size == 1:
            ins.append(in_size)
        elif out_size == in_size:
            result.append(var)
        elif out_size < in_size:
            # Several output dims merge into this input dim.
            while out_size < in_size and outs:
                outer, outer_size = outs.pop()
                if outer_size == 1:
                    continue  # a size-1 dim contributes nothing to the position
                var, out_size = outer * out_size + var, out_size * outer_size
            if out_size != in_size:
                return None
            result.append(var)
        else:
            # This output dim splits into several input dims.
            pieces, divisor = [(in_size, 1)], in_size
            while divisor < out_size and ins:
                size = ins.pop()
                pieces.append((size, divisor))
                divisor *= size
            if divisor != out_size:
                return None
            for k, (size, div) in enumerate(pieces):
                outermost = k == len(pieces) - 1
                result.append(FloorDiv(var, div) if outermost else ModularIndexing(var, div, size))
    if any(s != 1 for s in ins) or any(s != 1 for _, s in outs):
        return None
    result.extend(sympy.Integer(0) for _ in ins)
    return result[::-1]
