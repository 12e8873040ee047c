"""`sym` index expressions as Python source, for kernels (`tl.minimum`) and the host (`min`).

The printer is precedence-aware: each sub-expression is printed together with the binding
strength of its outermost operator, and an operand is parenthesized exactly when it binds more
loosely than its position requires. So `FloorDiv(r0_0 + 8000*x0, 1000)` prints as
`((r0_0 + 8000*x0) // 1000)`, never as `(r0_0 + 8000*x0 // 1000)`, whatever the nesting.

    x0 + 64*x1                    ->  x0 + 64*x1
    FloorDiv(x0 + x1, 8)          ->  ((x0 + x1) // 8)
    ModularIndexing(x0, 8, 4)     ->  ((x0 // 8) % 4)
    -FloorDiv(x0, 2)              ->  -(x0 // 2)
    Min(x0, 7)                    ->  tl.minimum(7, x0)      (kernel)    min(7, x0)  (host)

FloorDiv and ModularIndexing keep Inductor's spelling, parenthesized as a whole (`(x // 64)`).
Their arguments are non-negative in index code, so Triton's truncating `//` and `%` agree with
the floor semantics of `sym` (and of Python, on the host).
"""

from __future__ import annotations

import sympy

from mlc.dialects.sym import CeilDiv, FloorDiv, ModularIndexing

# Binding strength of the outermost operator of printed text (Python's order).
ADD = 1  # a + b, a - b
MUL = 2  # a*b, a // b, a % b
UNARY = 3  # -a
ATOM = 4  # names, non-negative integers, calls, anything parenthesized


class ExprPrintError(ValueError):
    """An expression that has no Python spelling here (a non-integer coefficient, say)."""


def py_expr(expr: sympy.Expr | int, *, kernel: bool) -> str:
    """`expr` as Python: in kernels Min/Max are `tl.minimum`/`tl.maximum`, on the host `min`/`max`."""
    return _Printer(kernel).text(sympy.sympify(expr), ADD)


class _Printer:
    def __init__(self, kernel: bool):
        self.kernel = kernel

    def text(self, e: sympy.Expr, at_least: int) -> str:
        """`e` printed so that it binds at least as tightly as `at_least` requires."""
        text, strength = self.print(e)
        return text if strength >= at_least else f"({text})"

    def print(self, e: sympy.Expr) -> tuple[str, int]:
        if isinstance(e, sympy.Add):
            return self.add(e), ADD
        if isinstance(e, sympy.Mul):
            return self.mul(e)
        if isinstance(e, sympy.Symbol):
            return e.name, ATOM
        if isinstance(e, sympy.Integer):
            value = int(e)
            return str(value), (ATOM if value >= 0 else UNARY)
        if isinstance(e, sympy.Pow) and e.exp.is_Integer and int(e.exp) > 1:
            return self.product([e.base] * int(e.exp)), MUL
        if isinstance(e, FloorDiv):
            a, b = e.args
            return f"({self.text(a, MUL)} // {self.text(b, UNARY)})", ATOM
        if isinstance(e, CeilDiv):
            a, b = e.args
            numerator = f"{self.text(a, ADD)} + {self.text(b - 1, MUL)}"
            return f"(({numerator}) // {self.text(b, UNARY)})", ATOM
        if isinstance(e, ModularIndexing):
            x, div, mod = e.args
            quotient = x if div == 1 else FloorDiv(x, div, evaluate=False)
            return f"({self.text(quotient, MUL)} % {self.text(mod, UNARY)})", ATOM
        if isinstance(e, (sympy.Min, sympy.Max)):
            return self.min_max(e), ATOM
        raise ExprPrintError(f"cannot print index expression {e} as Python")

    def add(self, e: sympy.Add) -> str:
        # Positive terms first (`x0 + 64*x1 - 1`), each group in sympy's canonical order. Every
        # term after the first is a right operand of `+`/`-`, so it must bind tighter than ADD.
        terms = sorted(e.args, key=_is_negative)
        out = self.text(terms[0], ADD)
        for t in terms[1:]:
            out += f" - {self.text(-t, MUL)}" if _is_negative(t) else f" + {self.text(t, MUL)}"
        return out

    def mul(self, e: sympy.Mul) -> tuple[str, int]:
        coeff, rest = e.as_coeff_Mul()
        if not coeff.is_Integer:
            raise ExprPrintError(f"index expression {e} has a non-integer coefficient")
        factors = list(sympy.Mul.make_args(rest))
        if coeff == -1:
            # `-a*b` is `(-a)*b`, the same product; the first factor must bind as a unary operand.
            head = "-" + self.text(factors[0], UNARY)
            return "*".join([head] + [self.text(f, UNARY) for f in factors[1:]]), MUL
        if coeff != 1:
            factors.insert(0, coeff)
        return self.product(factors), MUL

    def product(self, factors: list[sympy.Expr]) -> str:
        # Left-associative: the first factor may be a product itself, the others must not be.
        first, *others = factors
        return "*".join([self.text(first, MUL)] + [self.text(f, UNARY) for f in others])

    def min_max(self, e: sympy.Expr) -> str:
        args = sorted(e.args, key=sympy.default_sort_key)
        if self.kernel:
            fn = "tl.minimum" if isinstance(e, sympy.Min) else "tl.maximum"
            out = self.text(args[-1], ADD)
            for a in reversed(args[:-1]):
                out = f"{fn}({self.text(a, ADD)}, {out})"
            return out
        fn = "min" if isinstance(e, sympy.Min) else "max"
        return f"{fn}({', '.join(self.text(a, ADD) for a in args)})"


def _is_negative(term: sympy.Expr) -> bool:
    return term.as_coeff_Mul()[0].is_negative is True
