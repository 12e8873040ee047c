"""Source positions and error reports for mlc's tools.

xDSL's parser does not remember where an op came from and its verifier reports no position,
so `SourceParser` records each op's start while parsing and `verify_with_positions` re-walks
the module, turning the first failure into a `Diagnostic` at `file:line:col`. The same
diagnostics drive `--verify-diagnostics`, which checks MLIR-style annotations:

    %0 = loops.load %x[i2] : tensor<8xf32>   // expected-error {{out of range}}
    // expected-error@+1 {{unknown buffer 'buf9'}}

An `expected-...` in a comment that is not such an annotation is itself an error.

A pipeline that cannot be built (`pipeline_error_text`) and a pass that fails
(`pass_failure_diagnostic`) are reported here too, so that every tool words them as mlc-opt does.
"""

from __future__ import annotations

import re
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NoReturn

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError

from mlc.passes.registry import PipelineError

if TYPE_CHECKING:
    from mlc.passes.pipeline import PassFailed


@dataclass(frozen=True)
class Diagnostic:
    """One error (or a pass's remark): where (line 0 when unknown) and what."""

    file: str
    line: int
    col: int
    message: str
    source_line: str = ""
    severity: str = "error"

    def format(self) -> str:
        where = f"{self.file}:{self.line}:{self.col}" if self.line else self.file
        text = f"{where}: {self.severity}: {self.message}"
        if self.source_line:
            text += f"\n{self.source_line}\n{' ' * (self.col - 1)}^"
        return text


class SourceParser(Parser):
    """An xDSL parser that remembers the (line, col) each operation starts at."""

    def __init__(self, ctx: Context, text: str, name: str):
        super().__init__(ctx, text, name)
        self.positions: dict[int, tuple[int, int]] = {}
        self.ops: list[Operation] = []  # keeps ops alive so their ids stay unique

    def parse_operation(self) -> Operation:
        loc = self._current_token.span.get_location()
        op = super().parse_operation()
        self.positions[id(op)] = (loc.line, loc.col)
        self.ops.append(op)
        return op


@dataclass
class Source:
    """A text being compiled: its name, its lines, and the positions of parsed ops."""

    name: str
    text: str
    positions: dict[int, tuple[int, int]] = field(default_factory=dict)

    def line_text(self, line: int) -> str:
        lines = self.text.split("\n")
        return lines[line - 1] if 0 < line <= len(lines) else ""

    def at(self, line: int, col: int, message: str) -> Diagnostic:
        return Diagnostic(self.name, line, col, message, self.line_text(line))

    def at_op(self, op: Operation | None, message: str) -> Diagnostic:
        while op is not None and id(op) not in self.positions:
            op = op.parent_op()  # ops made by a pass: point at the nearest parsed ancestor
        if op is None:
            return Diagnostic(self.name, 0, 0, message)
        return self.at(*self.positions[id(op)], message)


class CompileError(Exception):
    """Raised by the tool helpers with a ready diagnostic."""

    def __init__(self, diagnostic: Diagnostic):
        super().__init__(diagnostic.format())
        self.diagnostic = diagnostic


def parse_source(ctx: Context, source: Source) -> ModuleOp:
    """Parse and verify `source`; failures raise CompileError with a position. Text with no
    ops (empty, or only comments) is an empty module, as in MLIR's tools."""
    if not re.sub(r"//[^\n]*", "", source.text).strip():
        return ModuleOp([])
    try:
        parser = SourceParser(ctx, source.text, source.name)  # lexes the first token already
    except ParseError as e:
        raise _parse_error(source, e) from None
    try:
        module = parser.parse_module()
    except ParseError as e:
        raise _parse_error(source, e) from None
    except (DiagnosticException, ValueError, TypeError, RecursionError) as e:
        # Attribute verifiers run while parsing and raise without a position: use the parser's.
        loc = parser._current_token.span.get_location()
        raise CompileError(source.at(loc.line, loc.col, _message(e))) from None
    source.positions = parser.positions
    module.__dict__["_mlc_keepalive"] = parser.ops
    verify_with_positions(module, source)
    return module


def _parse_error(source: Source, e: ParseError) -> CompileError:
    loc = e.span.get_location()
    return CompileError(source.at(loc.line, loc.col, _printable(e.msg)))


def verify_with_positions(module: ModuleOp, source: Source) -> None:
    """Verify every op; the first failure raises CompileError at that op's position."""
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except DiagnosticException as e:
            # A container's verifier may blame one of its children (e.op): point there.
            raise CompileError(source.at_op(getattr(e, "op", op), _message(e))) from None
        except Exception as e:  # a verifier that crashed is still a verification failure
            raise CompileError(source.at_op(op, f"{op.name}: verifier failed: {_message(e)}")) from None


def _printable(text: str) -> str:
    """`text` with control characters escaped: `Unexpected character: \\x00`, not a raw NUL."""
    return "".join(c if c.isprintable() or c == "\n" else repr(c)[1:-1] for c in text)


def _message(e: BaseException) -> str:
    text = str(e).split("\n")[0] if str(e) else type(e).__name__
    return text.removeprefix("Operation does not verify: ")


SPLIT_MARKER = "// -----"


def split_input(text: str) -> list[tuple[int, str]]:
    """`--split-input-file`: split on `// -----` lines; each chunk keeps its line numbers by leading newlines."""
    out, start, current = [], 0, []
    lines = text.split("\n")
    for number, line in enumerate(lines):
        if line.strip() == SPLIT_MARKER:
            out.append((start, "\n" * start + "\n".join(current)))
            start, current = number + 1, []
        else:
            current.append(line)
    out.append((start, "\n" * start + "\n".join(current)))
    return out


def write_output(tool: str, path: str, text: str) -> bool:
    """Write a tool's result to `path` (`-`: stdout); False, with a one-line error, when the
    file cannot be written."""
    if path == "-":
        sys.stdout.write(text)
        return True
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        sys.stderr.write(f"{tool}: error: cannot write {path}: {e.strerror}\n")
        return False
    return True


def tool_main(tool: str, run: Callable[[], int]) -> NoReturn:
    """A console script's entry: `run()`'s status, and never a traceback without --debug."""
    try:
        code = run()
    except KeyboardInterrupt:
        code = 130
    except Exception as e:  # the last line of defence
        sys.stderr.write(f"{tool}: " + internal_error(tool, e, "--debug" in sys.argv) + "\n")
        code = 1
    sys.exit(code)


def internal_error(what: str, e: BaseException, debug: bool) -> str:
    """A one-line summary of a crash; the traceback only when debugging."""
    text = f"internal error in {what}: {type(e).__name__}: {_message(e)}"
    if debug:
        return "".join(traceback.format_exception(e)) + text
    return text + " (run with --debug for the traceback)"


# ---------------------------------------------------------------------------------------------
# Pipelines and passes


def pipeline_error_text(e: ArgSpecParseError | PipelineError) -> str:
    """One line for a pipeline that cannot be built: where and why for a syntax error (xDSL's
    message: a header, a position, the spec, a caret, why), else the registry's own message."""
    if isinstance(e, PipelineError):
        return str(e)
    lines = [line.strip() for line in str(e).strip().splitlines()]
    if len(lines) < 5:
        return lines[-1]
    where, spec, why = lines[1], lines[2], lines[-1]
    return f"{where}: {why} in pass pipeline '{spec}'"


def pass_failure_diagnostic(e: PassFailed, source: Source, debug: bool) -> Diagnostic:
    """What a failed pass reports: a verifier's error after it, the pass's own diagnostic at its
    op (named by the pass once), or an internal error."""
    cause = e.cause
    if e.in_verify and isinstance(cause, CompileError):
        d = cause.diagnostic
        return Diagnostic(d.file, d.line, d.col, f"after pass '{e.pass_name}': {d.message}", d.source_line)
    if isinstance(cause, DiagnosticException):
        message = str(cause).splitlines()[0]
        if not message.startswith(f"{e.pass_name}:") and not message.startswith(f"{e.pass_name} "):
            message = f"{e.pass_name}: {message}"  # passes that name themselves are not named twice
        return source.at_op(getattr(cause, "op", None), message)
    return Diagnostic(source.name, 0, 0, internal_error(f"pass '{e.pass_name}'", cause, debug))


# ---------------------------------------------------------------------------------------------
# --verify-diagnostics

# Any mention of an annotation in a comment, and the one form mlc checks: MLIR's spellings
# `expected-error@+1`, `expected-error @+1`, `@-1`, `@above`, `@below`, or none (this line).
_MENTION = re.compile(r"(?<![\w-])expected-[\w-]*")
_ANNOTATION = re.compile(r"expected-error *(?:@(?P<where>[+-]?\d+|above|below))? *\{\{(?P<message>.*?)\}\}")
_FORM = "expected-error[@+N|@-N|@above|@below] {{message}}"


@dataclass
class Expectation:
    line: int
    message: str
    seen: bool = False


def parse_annotations(text: str, file: str) -> tuple[list[Expectation], list[str]]:
    """The `// expected-error[@+N] {{...}}` annotations of a text, with their target lines,
    and an error for each `expected-...` in a comment that is not one (never ignored)."""
    expectations, problems = [], []
    for number, line in enumerate(text.split("\n"), start=1):
        comment_start = line.find("//")
        if comment_start < 0:
            continue
        for mention in _MENTION.finditer(line, comment_start):
            annotation = _ANNOTATION.match(line, mention.start())
            if annotation is None:
                problems.append(f"{file}:{number}:{mention.start() + 1}: error: malformed annotation "
                                f"'{mention.group()}': write {_FORM} (only errors are checked)")
            else:
                expectations.append(Expectation(number + _line_offset(annotation["where"]), annotation["message"]))
    return expectations, problems


def _line_offset(where: str | None) -> int:
    """How far an annotation's `@...` points from its own line."""
    if where is None:
        return 0
    return {"above": -1, "below": 1}.get(where) or int(where)


def check_expected(
    expectations: list[Expectation], diagnostics: list[Diagnostic], file: str
) -> list[str]:
    """Match diagnostics to expectations; returns the mismatches as messages."""
    problems = []
    for d in diagnostics:
        match = next(
            (e for e in expectations if not e.seen and (d.line in (0, e.line)) and e.message in d.message),
            None,
        )
        if match is None:
            problems.append(f"{d.format()}\n{file}:{d.line}: error: unexpected error")
        else:
            match.seen = True
    for e in expectations:
        if not e.seen:
            problems.append(f"{file}:{e.line}: error: expected error \"{e.message}\" was not produced")
    return problems
