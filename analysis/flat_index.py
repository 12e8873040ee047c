"""Flat index expressions: simplification over known ranges, strided-view recognition, and the
values an index certainly takes (`reached_span`: the buffer and triton verifiers' bounds checks).

`--realize` flattens logical indices through layouts; a reshape's index map then reads
`64*FloorDiv(i0, 64) + ModularIndexing(i0, 1, 64)`, which is just `i0`. These are the few
rewrites of Inductor's `simplify_index` that such maps need; all are exact on non-negative
integers:

    ModularIndexing(x, d, m) -> FloorDiv(x, d)   when x < d*m over the ranges
    FloorDiv(x, d)           -> 0                when x < d over the ranges
    c*m*FloorDiv(x, d*m) + c*ModularIndexing(x, d, m) -> c*FloorDiv(x, d)
    c*m*ModularIndexing(x, d*m, n) + c*ModularIndexing(x, d, m) -> c*ModularIndexing(x, d, m*n)

Ranges, divisors and strides may be symbolic sizes (`s0`, `s1`: dynamic shapes). A size is at
least 1, so a bound such as `s1*i2 + r0 < s1**2` over `i2, r0 < s1` is proved by `nonnegative`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

import sympy
from xdsl.ir import Operation

from mlc.dialects.access import AccessOp, IndexExprOp
from mlc.dialects.sym import FloorDiv, ModularIndexing, affine_range, equal, indirect_symbol, is_size_symbol

Ranges = Mapping[sympy.Symbol, sympy.Expr]


def affine_terms(
    expr: sympy.Expr, variables: Sequence[sympy.Symbol]
) -> tuple[sympy.Expr, list[sympy.Expr]] | None:
    """(rest, coefficients) when `expr` = rest + sum(c_k * v_k) with neither rest nor any c_k
    depending on the variables (they may be symbolic sizes); None otherwise (a FloorDiv)."""
    terms = _affine_terms(expr, tuple(variables))
    return None if terms is None else (terms[0], list(terms[1]))


@functools.lru_cache(maxsize=1 << 16)
def _affine_terms(expr: sympy.Expr, variables: tuple[sympy.Symbol, ...]
                  ) -> tuple[sympy.Expr, tuple[sympy.Expr, ...]] | None:
    """`affine_terms`, memoized (a pure function of its arguments): the passes ask it of the same
    index again and again, and sympy's expand is most of their time."""
    expanded = sympy.expand(expr)
    coeffs = [expanded.coeff(v) for v in variables]
    rest = sympy.expand(expanded - sum((c * v for c, v in zip(coeffs, variables)), sympy.Integer(0)))
    if rest.free_symbols & set(variables) or any(c.free_symbols & set(variables) for c in coeffs):
        return None
    return rest, tuple(coeffs)


def loop_strides(expr: sympy.Expr, variables: Sequence[sympy.Symbol]) -> list[sympy.Expr] | None:
    """How far `expr` moves per step of each variable, when it is affine in them (coefficients
    may be symbolic sizes); None when a variable appears otherwise (a FloorDiv of a view)."""
    terms = affine_terms(expr, variables)
    return None if terms is None else terms[1]


def order_by_strides(strides: Sequence[Sequence[int | None]], sizes: Sequence[sympy.Expr]) -> list[int]:
    """Loop positions, outermost first, as Inductor's `pick_loop_order` orders them: `strides`
    holds one row per access (each loop's stride in it, 0 where it does not move, None where the
    access has no say about the loop). Loop a goes inside loop b when more accesses step less
    along a than along b (an access not moving along b counts for a) than the other way round;
    ties keep the written order, size-1 loops go outermost (they are dropped anyway)."""

    def inner_votes(a: int, b: int) -> int:
        return sum(1 for row in strides if row[a] is not None and row[b] is not None
                   and (row[b] == 0 or abs(row[a]) < abs(row[b])))

    def key(a: int, b: int) -> int:  # < 0: a is outer
        if (sizes[a] == 1) != (sizes[b] == 1):
            return -1 if sizes[a] == 1 else 1
        votes = inner_votes(a, b) - inner_votes(b, a)
        return votes if votes else a - b

    return sorted(range(len(sizes)), key=functools.cmp_to_key(key))


def access_order(exprs: Sequence[sympy.Expr], variables: Sequence[sympy.Symbol],
                 sizes: Sequence[sympy.Expr]) -> list[int] | None:
    """The loops' order (positions, outermost first) the index expressions `exprs` vote for
    (`order_by_strides`, Inductor's `pick_loop_order`), where it is not the written one; else
    None. An index has no say about a loop it is not affine in (a gather's window position, a
    FloorDiv of a view) nor one it moves by a symbolic stride; with no say about any loop for
    any index, the written order stays. Size-1 loops go first (they move nothing)."""
    rows = []
    for expr in exprs:
        row = [int(s) if s is not None and s.is_Integer else None for s in _strides_where_affine(expr, variables)]
        if any(s is not None for s in row):
            rows.append(row)
    if not rows:
        return None
    order = order_by_strides(rows, sizes)
    moving = [d for d in range(len(sizes)) if sizes[d] != 1]
    return None if [d for d in order if sizes[d] != 1] == moving else order


def _strides_where_affine(expr: sympy.Expr, variables: Sequence[sympy.Symbol]) -> tuple[sympy.Expr | None, ...]:
    """Each variable's coefficient in `expr` where `expr` is affine in it (None where it appears
    otherwise, inside a FloorDiv or a Min): `loop_strides` one variable at a time."""
    return _strides_where_affine_of(expr, tuple(variables))


@functools.lru_cache(maxsize=1 << 16)
def _strides_where_affine_of(expr: sympy.Expr, variables: tuple[sympy.Symbol, ...]) -> tuple[sympy.Expr | None, ...]:
    expanded = sympy.expand(expr)
    strides: list[sympy.Expr | None] = []
    for v in variables:
        c = expanded.coeff(v)
        alone = not (c.free_symbols & set(variables)) and v not in (expanded - c * v).free_symbols
        strides.append(c if alone else None)
    return tuple(strides)


_OPAQUE = sympy.Function("loaded")


def followed_positions(access: Operation, variables: Sequence[sympy.Symbol]) -> dict[sympy.Symbol, sympy.Expr]:
    """What each loaded position `ind<k>` of `access` stands for when loops are ordered by the
    strides they walk memory with (`access_order`): the loop variable it is computed from, where
    that is a single one and no loaded data (a gather at a pooling window, `min((i2 + 1) // 2, 7)`,
    moves through the source's dim as i2 does), else an opaque function of every variable (an
    embedding's row: the access has no say about any loop)."""
    names = {v.name: v for v in variables}
    followed: dict[sympy.Symbol, sympy.Expr] = {}
    for k, position in enumerate(getattr(access, "indirect", ())):
        found = _loop_names(position, names.keys())
        one = found is not None and len(found) == 1
        followed[indirect_symbol(k)] = names[next(iter(found))] if one else _OPAQUE(*variables)
    return followed


def _loop_names(value, loop_names) -> set[str] | None:
    """The loop variables `value` is computed from; None where it depends on loaded data."""
    names: set[str] = set()
    stack, seen = [value], set()
    while stack:
        op = stack.pop().owner
        if not isinstance(op, Operation) or isinstance(op, AccessOp):
            return None
        if op in seen:
            continue
        seen.add(op)
        if isinstance(op, IndexExprOp):
            names |= {s.name for s in op.expr.expr.free_symbols if s.name in loop_names}
        stack.extend(op.operands)
    return names


@functools.lru_cache(maxsize=8192)
def nonnegative(expr: sympy.Expr) -> bool:
    """True when `expr`, made of integers and sizes, is >= 0 for every value of the sizes.

    A size is at least 1 (an empty loop reads nothing, so no index matters there): with each
    size written 1 + t, a polynomial whose coefficients in the t's are all non-negative is.
    A FloorDiv, CeilDiv or ModularIndexing of sizes counts as a non-negative unknown. False
    means "not proved", not "negative"."""
    expr = sympy.expand(expr)
    if expr.is_Integer:
        return bool(expr >= 0)
    unknowns = {f: sympy.Dummy(nonnegative=True) for f in expr.atoms(sympy.Function)
                if all(is_size_symbol(s.name) for s in f.free_symbols)}
    expr = expr.xreplace(unknowns)
    sizes = [s for s in expr.free_symbols if not isinstance(s, sympy.Dummy)]
    if any(not is_size_symbol(s.name) for s in sizes) or not expr.is_polynomial(*expr.free_symbols):
        return False
    shifted = sympy.expand(expr.xreplace({s: s + 1 for s in sizes}))
    if shifted.is_Integer:
        return bool(shifted >= 0)
    return all(c >= 0 for c in sympy.Poly(shifted, *shifted.free_symbols).coeffs())


def _nonnegative_affine(
    expr: sympy.Expr, variables: Sequence[sympy.Symbol]
) -> tuple[sympy.Expr, list[sympy.Expr]] | None:
    """`affine_terms` when the rest and every coefficient are provably non-negative."""
    terms = affine_terms(expr, variables)
    if terms is None or not nonnegative(terms[0]) or not all(nonnegative(c) for c in terms[1]):
        return None
    return terms


def upper_bound(expr: sympy.Expr, ranges: Ranges) -> sympy.Expr | None:
    """An exclusive bound on a non-negative affine `expr` over `ranges` (an integer, or an
    expression of sizes), else None."""
    variables = sorted((s for s in expr.free_symbols if s in ranges), key=lambda s: s.name)
    terms = _nonnegative_affine(expr, variables)
    if terms is None:
        return None
    const, coeffs = terms
    return sympy.expand(const + sum((c * (ranges[v] - 1) for c, v in zip(coeffs, variables)), sympy.Integer(0)) + 1)


def _multiples(x: sympy.Expr, d: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr]:
    """(x's terms that are integer multiples of d, divided by d; the rest): FloorDiv(q*d + r, d)
    is q + FloorDiv(r, d) and ModularIndexing(q*d*m + r, d, m) is ModularIndexing(r, d, m)."""
    quotient: sympy.Expr = sympy.Integer(0)
    rest: sympy.Expr = sympy.Integer(0)
    for term in sympy.Add.make_args(sympy.expand(x)):
        if d != 0 and (term / d).is_integer:
            quotient += term / d
        else:
            rest += term
    return quotient, rest


def _fits(x: sympy.Expr, limit: sympy.Expr, ranges: Ranges) -> bool:
    """x < limit over the ranges, proved."""
    bound = upper_bound(x, ranges)
    return bound is not None and nonnegative(limit - bound)


def _drop_by_range(expr: sympy.Expr, ranges: Ranges) -> sympy.Expr:
    """Apply the two range rules everywhere in `expr`."""

    def modular(x: sympy.Expr, d: sympy.Expr, m: sympy.Expr) -> sympy.Expr:
        _, x = _multiples(x, d * m)
        return FloorDiv(x, d) if _fits(x, d * m, ranges) else ModularIndexing(x, d, m)

    def floordiv(x: sympy.Expr, d: sympy.Expr) -> sympy.Expr:
        quotient, x = _multiples(x, d)
        return quotient if _fits(x, d, ranges) else quotient + FloorDiv(x, d)

    return expr.replace(ModularIndexing, modular).replace(FloorDiv, floordiv)


def _digit_term(term: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr] | None:
    """(c, f) when `term` is c*f for one FloorDiv or ModularIndexing f and a c free of them (a
    number, or sizes: `32*s1*FloorDiv(x, 32*s1)`), else None."""
    digits = [f for f in sympy.Mul.make_args(term) if isinstance(f, (FloorDiv, ModularIndexing))]
    if len(digits) != 1:
        return None
    return term / digits[0], digits[0]


def _merge_div_mod(expr: sympy.Expr) -> sympy.Expr:
    """Fold one pair of digits of x into one: c*m*FloorDiv(x, d*m) + c*ModularIndexing(x, d, m)
    into c*FloorDiv(x, d), and c*m*ModularIndexing(x, d*m, n) + c*ModularIndexing(x, d, m)
    into c*ModularIndexing(x, d, m*n) (the h and w of a reduction over (N, H, W) split into
    pieces of whole images: `56*((r // 56) % 56) + r % 56` is `r % 3136`)."""
    if not isinstance(expr, sympy.Add):
        return expr
    terms = [t for t in map(_digit_term, expr.args) if t is not None]
    for coeff, mod in terms:
        if not isinstance(mod, ModularIndexing):
            continue
        x, d, m = mod.args
        for coeff2, other in terms:
            if not equal(coeff2, coeff * m):
                continue
            if isinstance(other, FloorDiv) and other.args == (x, d * m):
                return expr - coeff * mod - coeff2 * other + coeff * FloorDiv(x, d)
            if isinstance(other, ModularIndexing) and other.args[:2] == (x, d * m):
                return expr - coeff * mod - coeff2 * other + coeff * ModularIndexing(x, d, m * other.args[2])
    return expr


def simplify_index(expr: sympy.Expr, ranges: Ranges) -> sympy.Expr:
    """Simplify a flat index over index variables with the given extents, to a fixed point."""
    while True:
        new = _merge_div_mod(_drop_by_range(expr, ranges))
        if new == expr:
            return expr
        expr = new


def reached_span(expr: sympy.Expr, ranges: Ranges) -> tuple[int, int] | None:
    """(low, high): values `expr` certainly takes as each variable runs over [0, extent), to
    check bounds with no false alarm. Its least and greatest where it is affine once simplified
    (a reshape's digits merged back); else its values at the first and the last point (a
    broadcast's `ModularIndexing(i0, 1, 64)`). None where a range is empty (nothing runs) or
    `expr` uses a symbol that is not a range variable of static extent (a size, a loaded position)."""
    if any(n == 0 for n in ranges.values()):
        return None
    used = expr.free_symbols
    static = {v: n for v, n in ranges.items() if v in used}
    if not all(n.is_Integer for n in static.values()) or used - set(static):
        return None
    return _reached_span(expr, tuple(sorted(static.items(), key=lambda item: item[0].name)))


@functools.lru_cache(maxsize=1 << 14)
def _reached_span(expr: sympy.Expr, ranges: tuple[tuple[sympy.Symbol, sympy.Expr], ...]) -> tuple[int, int] | None:
    """`reached_span` over static ranges, memoized: verifiers ask it after every pass."""
    extents = dict(ranges)
    span = affine_range(expr, extents) or affine_range(simplify_index(expr, extents), extents)
    if span is not None:
        return span
    first = expr.xreplace({v: 0 for v in extents})
    last = expr.xreplace({v: n - 1 for v, n in extents.items()})
    if not (first.is_Integer and last.is_Integer):
        return None
    return min(int(first), int(last)), max(int(first), int(last))


def affine_strides(
    expr: sympy.Expr, variables: Sequence[sympy.Symbol]
) -> tuple[sympy.Expr, list[sympy.Expr]] | None:
    """(offset, strides) when `expr` = offset + sum(stride_k * v_k), all non-negative integers
    or expressions of sizes that are (`s1*s2*i0 + s2*i1 + i2`)."""
    if any(not is_size_symbol(s.name) for s in expr.free_symbols - set(variables)):
        return None
    return _nonnegative_affine(expr, variables)
