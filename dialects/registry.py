"""The dialects mlc's tools load: mlc's four plus the builtin, func, arith and math of xDSL."""

from __future__ import annotations

import re
from collections.abc import Callable

from xdsl.context import Context
from xdsl.ir import Dialect


def _aten() -> Dialect:
    from mlc.dialects.aten import Aten

    return Aten


def _loops() -> Dialect:
    from mlc.dialects.loops import Loops

    return Loops


def _buffer() -> Dialect:
    from mlc.dialects.buffer import Buffer

    return Buffer


def _triton() -> Dialect:
    from mlc.dialects.triton import Triton

    return Triton


def _sym() -> Dialect:
    from mlc.dialects.sym import Sym

    return Sym


def _xdsl(module: str, name: str) -> Callable[[], Dialect]:
    def load() -> Dialect:
        import importlib

        return getattr(importlib.import_module(module), name)

    return load


DIALECTS: dict[str, Callable[[], Dialect]] = {
    "builtin": _xdsl("xdsl.dialects.builtin", "Builtin"),
    "func": _xdsl("xdsl.dialects.func", "Func"),
    "arith": _xdsl("xdsl.dialects.arith", "Arith"),
    "math": _xdsl("xdsl.dialects.math", "Math"),
    "complex": _xdsl("xdsl.dialects.complex", "Complex"),  # #complex.number: complex scalar arguments
    "sym": _sym,
    "aten": _aten,
    "loops": _loops,
    "buffer": _buffer,
    "triton": _triton,
}


def _linear_time_string_literals() -> None:
    """xDSL 0.74 lexes string literals with `"(?:[^"...]+|escape)*"`: a nested quantifier that
    backtracks exponentially when a literal is not closed before the end of its line, so a
    corrupted `"convolution_backward.default"` hangs the parser for minutes. One character per
    repetition matches the same strings in linear time."""
    from xdsl.utils.mlir_lexer import MLIRLexer

    MLIRLexer._unescaped_characters_regex = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')


def make_context() -> Context:
    """A context that knows every dialect mlc's IR may contain (loaded lazily, on first use)."""
    _linear_time_string_literals()
    ctx = Context()
    for name, load in DIALECTS.items():
        ctx.register_dialect(name, load)
    return ctx
