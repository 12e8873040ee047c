"""The `sym` dialect: symbolic integer expressions for sizes and indices.

Every level of mlc indexes memory with sympy expressions printed in Inductor's notation::

    i1 + 64*i0
    ModularIndexing(x0, 1, 64)
    FloorDiv(x0, 64) + 9*s0

Builtin affine maps cannot say `d0 * s0`, so they are not used. Expressions are read by the
small grammar below -- never by `eval` or `sympy.sympify` -- so a malformed index is a parse
error with a file:line:col, not a Python exception.

    expr    := term (('+' | '-') term)*
    term    := unary ('*' unary)*
    unary   := '-' unary | atom
    atom    := INTEGER | IDENT | IDENT '(' expr (',' expr)* ')' | '(' expr ')'

Functions: FloorDiv(a, b), ModularIndexing(x, div, mod) = (x // div) % mod, CeilDiv(a, b),
Min(a, b, ...), Max(a, b, ...). Symbols are integers; sizes and loop indices are non-negative.

Indirect indexing (Inductor's `indirect_indexing`): a load or store whose position depends on a
loaded value names that value in its expression as `ind0, ind1, ...`, the k-th of the `index`
operands it lists after the brackets, so `x[target[n]]` reads

    %t = loops.load %target[i0] : tensor<64xi64>
    %k = loops.indirect_index %t size 1000 : i64
    %v = loops.load %x[i0, ind0] indirect(%k) : tensor<64x1000xf32>

and the same expression flattens, inlines and tiles like any other (`1000*i0 + ind0`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache

import sympy
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.dialects.builtin import DYNAMIC_INDEX, ArrayAttr, StringAttr, TensorType
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException


class FloorDiv(sympy.Function):
    """Integer division rounding towards minus infinity (Python's `//`)."""

    nargs = (2,)
    is_integer = True

    @classmethod
    def eval(cls, base, divisor):
        if divisor == 1:
            return base
        if base == 0:
            return sympy.Integer(0)
        if base.is_Integer and divisor.is_Integer:
            return sympy.Integer(int(base) // int(divisor))
        if isinstance(base, FloorDiv):
            return FloorDiv(base.args[0], base.args[1] * divisor)
        if divisor.is_Integer and base.is_Add:
            # Pull out the terms that are exact multiples: FloorDiv(64*a + b, 64) = a + FloorDiv(b, 64)
            # when b is known to be in [0, 64) is not provable here, so only split when the rest is 0.
            multiples = [t for t in base.args if _divisible(t, divisor)]
            if len(multiples) == len(base.args):
                return sympy.Add(*[t / divisor for t in base.args])
        if divisor.is_Integer and _divisible(base, divisor):
            return base / divisor
        return None


class CeilDiv(sympy.Function):
    """Integer division rounding up, for grid sizes."""

    nargs = (2,)
    is_integer = True

    @classmethod
    def eval(cls, base, divisor):
        if divisor == 1:
            return base
        if base.is_Integer and divisor.is_Integer:
            return sympy.Integer(-(-int(base) // int(divisor)))
        return None


class ModularIndexing(sympy.Function):
    """`(base // divisor) % modulus` on non-negative integers."""

    nargs = (3,)
    is_integer = True
    is_nonnegative = True

    @classmethod
    def eval(cls, base, divisor, modulus):
        if base == 0 or modulus == 1:
            return sympy.Integer(0)
        if base.is_Integer and divisor.is_Integer and modulus.is_Integer:
            return sympy.Integer((int(base) // int(divisor)) % int(modulus))
        return None


def _divisible(term: sympy.Expr, divisor: sympy.Expr) -> bool:
    coeff, _ = term.as_coeff_Mul()
    return bool(coeff.is_Integer and divisor.is_Integer and int(coeff) % int(divisor) == 0)


FUNCTIONS: dict[str, tuple[Callable[..., sympy.Expr], int | None]] = {
    "FloorDiv": (FloorDiv, 2),
    "CeilDiv": (CeilDiv, 2),
    "ModularIndexing": (ModularIndexing, 3),
    "Min": (sympy.Min, None),
    "Max": (sympy.Max, None),
}


@lru_cache(maxsize=None)
def symbol(name: str) -> sympy.Symbol:
    """The one sympy symbol mlc uses for `name`: an integer (indices and sizes are integers)."""
    return sympy.Symbol(name, integer=True)


# ---------------------------------------------------------------------------------------------
# Parsing: one grammar, two token sources (xDSL's lexer inside IR, a regex lexer for strings).


class _Tokens:
    """The token operations the grammar needs."""

    def punct(self, p: str) -> bool: ...  # consume `p` if it comes next
    def ident(self) -> str | None: ...
    def integer(self) -> int | None: ...
    def error(self, msg: str) -> None: ...


class _XdslTokens(_Tokens):
    def __init__(self, parser: AttrParser):
        self.p = parser

    def punct(self, p: str) -> bool:
        return self.p.parse_optional_punctuation(p) is not None  # type: ignore[arg-type]

    def ident(self) -> str | None:
        return self.p.parse_optional_identifier()

    def integer(self) -> int | None:
        return self.p.parse_optional_integer(allow_boolean=False, allow_negative=False)

    def error(self, msg: str) -> None:
        self.p.raise_error(msg)


class ExprSyntaxError(ValueError):
    pass


_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z0-9_]*)|(.))")


class _StringTokens(_Tokens):
    def __init__(self, text: str):
        self.text = text
        self.toks = [m.groups() for m in _TOKEN.finditer(text) if m.group(0).strip()]
        self.pos = 0

    def _peek(self, kind: int) -> str | None:
        if self.pos < len(self.toks) and self.toks[self.pos][kind] is not None:
            return self.toks[self.pos][kind]
        return None

    def punct(self, p: str) -> bool:
        if self._peek(2) == p:
            self.pos += 1
            return True
        return False

    def ident(self) -> str | None:
        if (name := self._peek(1)) is not None:
            self.pos += 1
        return name

    def integer(self) -> int | None:
        if (digits := self._peek(0)) is not None:
            self.pos += 1
            return int(digits)
        return None

    def error(self, msg: str) -> None:
        raise ExprSyntaxError(f"{msg} in index expression {self.text!r}")

    def at_end(self) -> bool:
        return self.pos == len(self.toks)


def _parse_expr(t: _Tokens) -> sympy.Expr:
    result = _parse_term(t)
    while True:
        if t.punct("+"):
            result = result + _parse_term(t)
        elif t.punct("-"):
            result = result - _parse_term(t)
        else:
            return result


def _parse_term(t: _Tokens) -> sympy.Expr:
    result = _parse_unary(t)
    while t.punct("*"):
        result = result * _parse_unary(t)
    return result


def _parse_unary(t: _Tokens) -> sympy.Expr:
    if t.punct("-"):
        return -_parse_unary(t)
    return _parse_atom(t)


def _parse_atom(t: _Tokens) -> sympy.Expr:
    if (value := t.integer()) is not None:
        return sympy.Integer(value)
    if t.punct("("):
        inner = _parse_expr(t)
        if not t.punct(")"):
            t.error("expected ')'")
        return inner
    name = t.ident()
    if name is None:
        t.error("expected an integer, a symbol or a function call in index expression")
        raise AssertionError  # unreachable: error() raises
    if not t.punct("("):
        if name in FUNCTIONS:
            t.error(f"'{name}' needs arguments")
        return symbol(name)
    if name not in FUNCTIONS:
        t.error(f"unknown function '{name}' in index expression (known: {', '.join(FUNCTIONS)})")
    func, arity = FUNCTIONS[name]
    args = [_parse_expr(t)]
    while t.punct(","):
        args.append(_parse_expr(t))
    if not t.punct(")"):
        t.error("expected ')' or ','")
    if arity is not None and len(args) != arity:
        t.error(f"{name} takes {arity} arguments, got {len(args)}")
    return func(*args)


def parse_expr(parser: AttrParser) -> sympy.Expr:
    """Parse one expression from xDSL's token stream (errors carry file:line:col)."""
    return _parse_expr(_XdslTokens(parser))


def parse_expr_list(parser: AttrParser) -> list[sympy.Expr]:
    """Parse `[e0, e1, ...]`."""
    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, lambda: parse_expr(parser))


def equal(a: sympy.Expr | int, b: sympy.Expr | int) -> bool:
    """`a == b` for every value of the symbols, as expansion proves it (False: not proved).
    Cheap enough for the fusion checks' thousands of comparisons, which sympy.simplify is not."""
    return sympy.expand(a - b) == 0


@lru_cache(maxsize=4096)
def expr_from_str(text: str) -> sympy.Expr:
    """Parse a whole string as one expression; raises ExprSyntaxError."""
    tokens = _StringTokens(text)
    expr = _parse_expr(tokens)
    if not tokens.at_end():
        tokens.error("unexpected trailing text")
    return expr


@lru_cache(maxsize=4096)
def expr_list_from_str(text: str) -> tuple[sympy.Expr, ...]:
    """Parse `e0, e1, ...` (commas inside a call such as `CeilDiv(s1, 32)` belong to the call)."""
    if not text:
        return ()
    tokens = _StringTokens(text)
    exprs = [_parse_expr(tokens)]
    while tokens.punct(","):
        exprs.append(_parse_expr(tokens))
    if not tokens.at_end():
        tokens.error("unexpected trailing text")
    return tuple(exprs)


# ---------------------------------------------------------------------------------------------
# Printing in Inductor's notation.


def expr_str(expr: sympy.Expr | int) -> str:
    """`i1 + 64*i0`, `ModularIndexing(x0, 1, 64)`, `i0 - 32`; the grammar above reads it back."""
    expr = sympy.sympify(expr) if isinstance(expr, int) else expr
    if isinstance(expr, sympy.Add):
        # Positive terms first keeps `x - 1` readable; both groups stay in sympy's canonical order.
        terms = sorted(expr.args, key=_is_negative_term)
        out = _term_str(terms[0])
        for term in terms[1:]:
            if _is_negative_term(term):
                out += " - " + _term_str(-term)
            else:
                out += " + " + _term_str(term)
        return out
    return _term_str(expr)


def _is_negative_term(term: sympy.Expr) -> bool:
    return term.as_coeff_Mul()[0].is_negative is True


def _term_str(expr: sympy.Expr) -> str:
    if isinstance(expr, sympy.Mul):
        coeff, rest = expr.as_coeff_Mul()
        factors = [_atom_str(f) for f in sympy.Mul.make_args(rest)]
        if coeff == -1:
            return "-" + "*".join(factors)
        if coeff != 1:
            factors.insert(0, _atom_str(coeff))
        return "*".join(factors)
    return _atom_str(expr)


def _atom_str(expr: sympy.Expr) -> str:
    if isinstance(expr, sympy.Symbol):
        return expr.name
    if isinstance(expr, sympy.Integer):
        return str(int(expr))
    if isinstance(expr, (sympy.Add, sympy.Mul)):
        return f"({expr_str(expr)})"
    if isinstance(expr, sympy.Pow) and expr.exp.is_Integer and int(expr.exp) > 1:
        return "*".join([_atom_str(expr.base)] * int(expr.exp))
    name = type(expr).__name__
    if name in FUNCTIONS:
        return f"{name}({', '.join(expr_str(a) for a in expr.args)})"
    raise ValueError(f"cannot print {expr!r} as an index expression")


def print_expr_list(printer: Printer, exprs: Sequence[sympy.Expr | int]) -> None:
    printer.print_string("[" + ", ".join(expr_str(e) for e in exprs) + "]")


# ---------------------------------------------------------------------------------------------
# The attribute.


@irdl_attr_definition
class ExprAttr(ParametrizedAttribute):
    """An integer expression, `#sym.expr<i1 + 64*i0>`; ops print it bare."""

    name = "sym.expr"
    text: StringAttr

    def __init__(self, expr: sympy.Expr | int | str):
        if isinstance(expr, str):
            expr = expr_from_str(expr)
        super().__init__(StringAttr(expr_str(expr)))

    @property
    def expr(self) -> sympy.Expr:
        return expr_from_str(self.text.data)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.text.data}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            expr = parse_expr(parser)
        return [StringAttr(expr_str(expr))]


def exprs_of(attrs: Sequence[Attribute]) -> list[sympy.Expr]:
    """The sympy expressions of a sequence of ExprAttr."""
    return [a.expr for a in attrs]  # type: ignore[attr-defined]


def free_symbol_names(expr: sympy.Expr) -> set[str]:
    return {s.name for s in expr.free_symbols}


# ---------------------------------------------------------------------------------------------
# Static bounds of affine indices (the verifiers' question: can this access leave its tensor?)


def affine_range(expr: sympy.Expr, extents: dict[sympy.Symbol, sympy.Expr]) -> tuple[int, int] | None:
    """(min, max) of `expr` = c + sum(a_k * v_k) with integer a_k over static extents, else None."""
    low = high = 0
    by_name = {v.name: n for v, n in extents.items()}
    for term in sympy.Add.make_args(expr):
        coeff, rest = term.as_coeff_Mul()
        if not coeff.is_Integer:
            return None
        if rest == 1:
            low, high = low + int(coeff), high + int(coeff)
            continue
        size = by_name.get(rest.name) if isinstance(rest, sympy.Symbol) else None
        if size is None or not size.is_Integer or int(size) == 0:
            return None
        ends = (0, int(coeff) * (int(size) - 1))
        low, high = low + min(ends), high + max(ends)
    return low, high


def verify_in_bounds(
    op: Operation, exprs: Sequence[sympy.Expr], shape: Sequence[int], extents: dict[sympy.Symbol, sympy.Expr]
) -> None:
    """Each affine index stays inside its static dim over every point of the ranges."""
    if any(e.is_Integer and int(e) == 0 for e in extents.values()):
        return  # an empty iteration space reads nothing
    for k, (expr, size) in enumerate(zip(exprs, shape)):
        span = affine_range(expr, extents) if size >= 0 else None
        if span is not None and (span[0] < 0 or span[1] >= size):
            raise VerifyException(
                f"{op.name}: index {expr_str(expr)} of dim {k} takes values {span[0]} to {span[1]}, "
                f"outside the dim's size {size}"
            )


# ---------------------------------------------------------------------------------------------
# Indirect indices: `ind<k>` in an expression is the k-th `index` operand of its load or store.


def indirect_symbol(k: int) -> sympy.Symbol:
    return symbol(f"ind{k}")


def indirect_names(count: int) -> set[str]:
    return {f"ind{k}" for k in range(count)}


def _indirect_number(s: sympy.Symbol) -> int | None:
    return int(s.name[3:]) if s.name.startswith("ind") and s.name[3:].isdigit() else None


def compact_indirect(exprs: Sequence[sympy.Expr], operands: Sequence[SSAValue]) -> tuple[list[sympy.Expr], list[SSAValue]]:
    """Keep the operands the expressions name, once each, numbered in order of first use."""
    kept: list[SSAValue] = []
    renames: dict[sympy.Symbol, sympy.Symbol] = {}
    for expr in exprs:
        for s in sorted(expr.free_symbols, key=lambda s: s.name):
            k = _indirect_number(s)
            if k is None or s in renames:
                continue
            value = operands[k]
            if value not in kept:
                kept.append(value)
            renames[s] = indirect_symbol(kept.index(value))
    return [e.xreplace(renames) for e in exprs], kept


def rename_indirect(expr: sympy.Expr, offset: int) -> sympy.Expr:
    """`ind<k>` -> `ind<k + offset>`: an access that gains operands in front of its own."""
    if offset == 0:
        return expr
    renames = {s: indirect_symbol(k + offset) for s in expr.free_symbols if (k := _indirect_number(s)) is not None}
    return expr.xreplace(renames)


# ---------------------------------------------------------------------------------------------
# Symbolic sizes (dynamic shapes): `s0, s1, ...` are sizes known only at run time.


def size_symbol(k: int) -> sympy.Symbol:
    """`s<k>`, the k-th symbolic size of a graph."""
    return symbol(f"s{k}")


def is_size_symbol(name: str) -> bool:
    """Sizes are `s0, s1, ...`; they may appear in any expression."""
    return _SIZE_NAME.fullmatch(name) is not None


_SIZE_NAME = re.compile(r"s[0-9]+")
_MAY_NAME_A_SIZE = re.compile(r"s[0-9]")  # in an expression's text: a superset of its size names


@irdl_attr_definition
class SizesAttr(ParametrizedAttribute):
    """`#sym.sizes<[s0, 64]>`: every dim's size, the encoding of a builtin tensor type whose
    shape has a dynamic dim, `tensor<?x64xf32, #sym.sizes<[s0, 64]>>`."""

    name = "sym.sizes"
    text: StringAttr

    def __init__(self, sizes: Sequence[sympy.Expr | int]):
        super().__init__(StringAttr(", ".join(expr_str(e) for e in sizes)))

    @property
    def sizes(self) -> list[sympy.Expr]:
        return list(expr_list_from_str(self.text.data))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<[{self.text.data}]>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            exprs = parse_expr_list(parser)
        return [StringAttr(", ".join(expr_str(e) for e in exprs))]

    def verify(self) -> None:
        for e in self.sizes:
            if any(not is_size_symbol(s.name) for s in e.free_symbols):
                raise VerifyException(f"a size may only use size symbols s0, s1, ..., got '{expr_str(e)}'")


def at_hint(expr: sympy.Expr | int, hint: int) -> int:
    """`expr`'s value with every size at `hint` (an integer expression of sizes: FloorDiv and
    the like evaluate on integers)."""
    expr = sympy.sympify(expr)
    return int(expr.xreplace({s: hint for s in expr.free_symbols}))


def size_names_in(attr: Attribute) -> set[str]:
    """The size symbols (`s0`, ...) an attribute names, however nested: expressions,
    `#sym.sizes`, arrays and the parameters of other attributes (a `#buffer.layout`)."""
    if isinstance(attr, ExprAttr):
        if _MAY_NAME_A_SIZE.search(attr.text.data) is None:  # most expressions: no parse needed
            return set()
        return {n for n in free_symbol_names(attr.expr) if is_size_symbol(n)}
    if isinstance(attr, SizesAttr):
        return {n for e in attr.sizes for n in free_symbol_names(e) if is_size_symbol(n)}
    if isinstance(attr, ArrayAttr):
        return set().union(*(size_names_in(a) for a in attr.data))
    if isinstance(attr, ParametrizedAttribute):
        return set().union(*(size_names_in(a) for a in attr.parameters))
    return set()


@irdl_attr_definition
class IntType(ParametrizedAttribute, TypeAttribute):
    """`!sym.int<s0>`: an integer argument whose value is the size `s0` (Dynamo's SymInt input)."""

    name = "sym.int"
    size: ExprAttr

    def __init__(self, expr: sympy.Expr | int):
        super().__init__(ExprAttr(expr))

    @property
    def expr(self) -> sympy.Expr:
        return self.size.expr

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.size.text.data}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            return [ExprAttr(parse_expr(parser))]


def unnamed_sizes(type: Attribute) -> str | None:
    """Why a tensor type's dynamic dims are not all named, or None: a `?` dim needs a
    `#sym.sizes` encoding of the tensor's rank that gives it a size and agrees on the others."""
    shape = list(type.get_shape())  # type: ignore[attr-defined]
    encoding = getattr(type, "encoding", None)
    if not isinstance(encoding, SizesAttr):
        return f"dynamic dims of {type} need a #sym.sizes<[...]> encoding naming their sizes" if DYNAMIC_INDEX in shape else None
    sizes = encoding.sizes
    if len(sizes) != len(shape) or any(d != DYNAMIC_INDEX and e != d for d, e in zip(shape, sizes)):
        return f"the sizes of {type} do not match its shape"
    return None


def sizes_of(type: Attribute) -> list[int | sympy.Expr]:
    """A tensor type's sizes: ints, and for its dynamic dims the expressions its encoding names."""
    shape = list(type.get_shape())  # type: ignore[attr-defined]
    encoding = getattr(type, "encoding", None)
    if isinstance(encoding, SizesAttr):
        return [e if d == DYNAMIC_INDEX else d for d, e in zip(shape, encoding.sizes)]
    return shape


def tensor_type(element: Attribute, sizes: Sequence[int | sympy.Expr]) -> TensorType:
    """The builtin tensor type of `sizes`: static, or `?` dims with a `#sym.sizes` encoding."""
    sizes = [int(d) if isinstance(d, int) or d.is_Integer else d for d in sizes]
    if all(isinstance(d, int) for d in sizes):
        return TensorType(element, sizes)
    return TensorType(element, [d if isinstance(d, int) else DYNAMIC_INDEX for d in sizes], SizesAttr(sizes))


Sym = Dialect("sym", [], [ExprAttr, SizesAttr, IntType])
