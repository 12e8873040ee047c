"""Property tests of the index-expression printers: random `sym` expressions, printed as Python
(kernel and host spelling) and as `sym` text, must mean what `sym` itself evaluates them to.

A printer that drops a parenthesis (`(r0_0 + 8000*x0 // 1000)` for `FloorDiv(r0_0 + 8000*x0,
1000)`) gives another number for almost every assignment of the symbols, so a few hundred random
expressions over random values find it."""

from __future__ import annotations

import random

import pytest
import sympy

from mlc.codegen.py_expr import py_expr
from mlc.dialects.sym import CeilDiv, FloorDiv, ModularIndexing, expr_from_str, expr_str, symbol

SYMBOLS = [symbol(n) for n in ("x0", "x1", "r0_0", "s0")]


def random_expr(rng: random.Random, depth: int) -> sympy.Expr:
    """A random expression of every form the printers know, nested up to `depth`."""
    if depth == 0 or rng.random() < 0.2:
        return rng.choice(SYMBOLS) if rng.random() < 0.7 else sympy.Integer(rng.randint(-9, 200))
    sub = lambda: random_expr(rng, depth - 1)  # noqa: E731
    divisor = lambda: sympy.Integer(rng.choice([2, 3, 7, 8, 64, 1000]))  # noqa: E731
    form = rng.choice(["add", "sub", "mul", "neg", "floordiv", "ceildiv", "mod", "minmax", "square"])
    if form == "add":
        return sympy.Add(*[sub() for _ in range(rng.randint(2, 3))])
    if form == "sub":
        return sub() - sub()
    if form == "mul":
        return sympy.Integer(rng.choice([-64, -2, 2, 3, 8000])) * sub() * (sub() if rng.random() < 0.3 else 1)
    if form == "neg":
        return -sub() * sub()
    if form == "floordiv":
        return FloorDiv(sub(), divisor())
    if form == "ceildiv":
        return CeilDiv(sub(), divisor())
    if form == "mod":
        return ModularIndexing(sub(), divisor(), divisor())
    if form == "minmax":
        return rng.choice([sympy.Min, sympy.Max])(*[sub() for _ in range(rng.randint(2, 3))])
    return sub() ** 2


def evaluate_python(text: str, values: dict[str, int]) -> int:
    """The printed text run as Python (text this test's printer made, never outside input)."""
    tl = type("tl", (), {"minimum": staticmethod(min), "maximum": staticmethod(max)})
    return eval(text, {"tl": tl, "min": min, "max": max}, dict(values))  # noqa: S307


def evaluate_sym(expr: sympy.Expr, values: dict[str, int]) -> int:
    result = expr.subs({symbol(k): v for k, v in values.items()})
    assert result.is_Integer, f"{expr} did not evaluate to an integer: {result}"
    return int(result)


@pytest.mark.parametrize("seed", range(8))
def test_printed_python_means_what_sym_means(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(60):
        expr = random_expr(rng, depth=4)
        values = {s.name: rng.randint(0, 5000) for s in SYMBOLS}
        values["s0"] = rng.randint(1, 50)
        expected = evaluate_sym(expr, values)
        for kernel in (True, False):
            text = py_expr(expr, kernel=kernel)
            assert evaluate_python(text, values) == expected, f"{expr} printed as {text!r}"


@pytest.mark.parametrize("seed", range(4))
def test_sym_text_parses_back_to_the_same_value(seed: int) -> None:
    """`sym`'s own printer and grammar: the text parses back to an expression of equal value
    (sympy may distribute a coefficient over a sum while parsing, so not always the same tree)."""
    rng = random.Random(100 + seed)
    for _ in range(60):
        expr = random_expr(rng, depth=4)
        values = {s.name: rng.randint(0, 5000) for s in SYMBOLS}
        parsed = expr_from_str(expr_str(expr))
        assert evaluate_sym(parsed, values) == evaluate_sym(expr, values), expr_str(expr)


def test_floordiv_of_a_sum_is_parenthesized() -> None:
    """The split-reduction index that loaded out of bounds (issue 8)."""
    x0, r0_0 = symbol("x0"), symbol("r0_0")
    assert py_expr(FloorDiv(r0_0 + 8000 * x0, 1000), kernel=True) == "((r0_0 + 8000*x0) // 1000)"
    assert py_expr(-FloorDiv(x0, 2) * r0_0, kernel=True) == "-r0_0*(x0 // 2)"
    assert py_expr(-FloorDiv(x0, 2), kernel=True) == "-(x0 // 2)"
    assert py_expr(ModularIndexing(x0 - r0_0, 8, 4), kernel=False) == "(((x0 - r0_0) // 8) % 4)"
