"""mlc-reduce: shrink IR that makes a pipeline fail, keeping the failure (MLIR's mlir-reduce,
Inductor's minifier).

    mlc-reduce reproducer.mlir -p 'lower-aten,inline,realize' -o small.mlir
    mlc-reduce big.mlir -p 'fold-addmm,lower-aten' --match 'dynamic shape'

The input must fail under the pipeline, as `mlc-opt FILE -p PIPELINE` would fail on it. A
candidate is *interesting* when it verifies and running the pipeline on it fails with the same
error: the same message as mlc-opt prints it, minus what shrinking changes anyway (file:line:col,
`loc(...)`, SSA names, addresses, generated `bufN`/`tmpN` names), or, with `--match TEXT`, any
error whose message contains TEXT. A pass that crashes is an error like any other; its identity
is the pass, the exception type and its message. Each candidate is printed (with locations) and
parsed again before it runs, so the result fails under mlc-opt just as it failed here.

Reductions, tried greedily in walk order (ops from last to first) and repeated to a fixed point:
  1. erase an op whose results are unused (its producers may become unused in turn)
  2. replace an op's result by one of its operands of the same type, and erase the op
  3. replace an op's results by new arguments of its function, and erase the op
  4. drop a function result (`func.return` operand), keeping at least one
  5. drop an unused function argument

The reduced module goes to stdout (or -o); stderr says ops before -> after, the candidates
tried and the error kept. Exit status 0 when done (even when nothing could be removed), 1 on
usage errors, unreadable or invalid input (file:line:col), or an input that does not fail.
"""

from __future__ import annotations

import argparse
import io
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FunctionType, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.printer import Printer
from xdsl.traits import IsTerminator
from xdsl.utils.exceptions import ArgSpecParseError

from mlc.tools.diagnostics import (
    CompileError,
    Source,
    parse_source,
    pass_failure_diagnostic,
    pipeline_error_text,
    tool_main,
    verify_with_positions,
    write_output,
)

TOOL = "mlc-reduce"

# What shrinking changes in a message without changing the error (pattern, replacement).
_VOLATILE = [
    (re.compile(r"loc\((?:[^()]|\([^()]*\))*\)"), "loc(?)"),
    (re.compile(r"%[\w$.-]+"), "%?"),
    (re.compile(r"0x[0-9a-fA-F]+"), "0x?"),
    (re.compile(r"\b(buf|tmp)\d+\b"), r"\1?"),
]


def identity(message: str) -> str:
    """A failure's message with the parts that shrinking changes anyway made uniform."""
    for pattern, replacement in _VOLATILE:
        message = pattern.sub(replacement, message)
    return message


# ---------------------------------------------------------------------------------------------
# Running the pipeline


def print_module(module: ModuleOp) -> str:
    """The module's text with its locations (a pass's message may quote one), but not the
    `loc(unknown)` that a parsed op without one has."""
    out = io.StringIO()
    Printer(stream=out, print_debuginfo=True).print_op(module)
    return _UNKNOWN_LOC.sub("", out.getvalue()) + "\n"


_UNKNOWN_LOC = re.compile(r" loc\(unknown\)")


def failure(text: str, name: str, passes: Sequence[ModulePass]) -> str | None:
    """The message mlc-opt would print for `text` under `passes` (None when they succeed);
    text that does not parse or verify raises CompileError."""
    from mlc.dialects.registry import make_context
    from mlc.passes.pipeline import PassFailed, run_pipeline

    ctx = make_context()
    source = Source(name, text)
    module = parse_source(ctx, source)
    try:
        run_pipeline(module, passes, ctx, verify=lambda m: verify_with_positions(m, source))
    except PassFailed as e:
        return pass_failure_diagnostic(e, source, debug=False).message
    return None


@dataclass
class Oracle:
    """Says whether a candidate is interesting, counting what it was asked."""

    name: str
    passes: Sequence[ModulePass]
    wanted: Callable[[str], bool]
    tried: int = 0
    invalid: int = 0

    def interesting(self, module: ModuleOp) -> bool:
        self.tried += 1
        try:
            module.verify()
            message = failure(print_module(module), self.name, self.passes)
        except Exception:  # noqa: BLE001 (a candidate that does not verify or round-trip)
            self.invalid += 1
            return False
        return message is not None and self.wanted(message)


# ---------------------------------------------------------------------------------------------
# Edits: each names the op it changes by its index in walk order, so that it applies to a clone.


@dataclass(frozen=True)
class Edit:
    """One reduction of the op at walk index `index` (`arg`: an operand or result position)."""

    kind: str  # "erase", "forward", "new-args", "drop-result", "drop-arg"
    index: int
    arg: int = -1

    def describe(self, module: ModuleOp) -> str:
        op = _op_at(module, self.index)
        what = {"erase": "erased unused", "forward": f"replaced by its operand #{self.arg}:",
                "new-args": "replaced by new function arguments:",
                "drop-result": f"dropped result #{self.arg} of", "drop-arg": f"dropped argument #{self.arg} of"}
        return f"{what[self.kind]} {_label(op)}"


def _label(op: Operation) -> str:
    if isinstance(op, FuncOp):
        return f"@{op.sym_name.data}"
    return op.name


def _op_at(module: ModuleOp, index: int) -> Operation:
    for i, op in enumerate(module.walk()):
        if i == index:
            return op
    raise IndexError(index)


def _enclosing_func(op: Operation) -> FuncOp | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, FuncOp):
        parent = parent.parent_op()
    return parent


def _is_dead(op: Operation) -> bool:
    return all(not r.uses for r in op.results)


def op_edits(op: Operation, index: int) -> Iterator[Edit]:
    """Reductions 1-3 for one op, most effective first."""
    if op.parent is None or op.has_trait(IsTerminator):
        return
    if _is_dead(op):
        yield Edit("erase", index)
        return
    if len(op.results) == 1:
        seen: list[SSAValue] = []
        for k, operand in enumerate(op.operands):
            if operand.type == op.results[0].type and operand not in seen:
                seen.append(operand)
                yield Edit("forward", index, k)
    if _enclosing_func(op) is not None:
        yield Edit("new-args", index)


def func_edits(func: FuncOp, index: int) -> Iterator[Edit]:
    """Reductions 4-5 for one function, last position first."""
    ret = _return_of(func)
    if ret is not None and len(ret.operands) > 1:
        for k in reversed(range(len(ret.operands))):
            yield Edit("drop-result", index, k)
    if func.body.blocks:
        for arg in reversed(func.body.blocks[0].args):
            if not arg.uses:
                yield Edit("drop-arg", index, arg.index)


def _return_of(func: FuncOp) -> Operation | None:
    if not func.body.blocks:
        return None
    last = func.body.blocks[-1].last_op
    return last if last is not None and last.has_trait(IsTerminator) else None


def apply(edit: Edit, module: ModuleOp) -> None:
    """Perform `edit` on `module` (a clone of the module it was made for) in place."""
    op = _op_at(module, edit.index)
    if edit.kind == "erase":
        op.detach()
        op.erase()
    elif edit.kind == "forward":
        op.results[0].replace_all_uses_with(op.operands[edit.arg])
        op.detach()
        op.erase()
    elif edit.kind == "new-args":
        func = _enclosing_func(op)
        assert func is not None
        for r in op.results:
            r.replace_all_uses_with(_add_arg(func, r))
        op.detach()
        op.erase()
    elif edit.kind == "drop-result":
        assert isinstance(op, FuncOp)
        _drop_result(op, edit.arg)
    elif edit.kind == "drop-arg":
        assert isinstance(op, FuncOp)
        _drop_arg(op, edit.arg)


def _add_arg(func: FuncOp, like: SSAValue) -> SSAValue:
    block = func.body.blocks[0]
    arg = block.insert_arg(like.type, len(block.args))
    _set_type(func, [*func.function_type.inputs.data, like.type], func.function_type.outputs.data)
    if func.arg_attrs is not None:
        func.arg_attrs = ArrayAttr([*func.arg_attrs.data, DictionaryAttr({})])
    return arg


def _drop_arg(func: FuncOp, position: int) -> None:
    block = func.body.blocks[0]
    block.erase_arg(block.args[position])
    inputs = list(func.function_type.inputs.data)
    del inputs[position]
    _set_type(func, inputs, func.function_type.outputs.data)
    if func.arg_attrs is not None:
        func.arg_attrs = ArrayAttr([a for i, a in enumerate(func.arg_attrs.data) if i != position])


def _drop_result(func: FuncOp, position: int) -> None:
    ret = _return_of(func)
    assert ret is not None
    ret.operands = [v for i, v in enumerate(ret.operands) if i != position]
    outputs = list(func.function_type.outputs.data)
    del outputs[position]
    _set_type(func, func.function_type.inputs.data, outputs)
    if func.res_attrs is not None:
        func.res_attrs = ArrayAttr([a for i, a in enumerate(func.res_attrs.data) if i != position])


def _set_type(func: FuncOp, inputs: Sequence, outputs: Sequence) -> None:  # type: ignore[type-arg]
    func.function_type = FunctionType.from_lists(list(inputs), list(outputs))


# ---------------------------------------------------------------------------------------------
# The reducer


@dataclass
class Reducer:
    """Greedy reduction to a fixed point; `log` gets one line per accepted edit."""

    oracle: Oracle
    log: Callable[[str], None] = lambda line: None
    accepted: list[str] = field(default_factory=list)

    def reduce(self, module: ModuleOp) -> ModuleOp:
        while True:
            module, progress = self._round(module)
            if not progress:
                return module

    def _round(self, module: ModuleOp) -> tuple[ModuleOp, bool]:
        """One sweep: function results, then every op from the last to the first, then unused
        arguments. An edit of the op at walk index k leaves the ops before it where they were,
        and dropping a result or argument leaves the positions before it, so each sweep goes on
        over the reduced module without listing its edits again."""
        progress = False
        for step in (self._results_step, self._op_step, self._args_step):
            module, changed = step(module)
            progress |= changed
        return module, progress

    def _op_step(self, module: ModuleOp) -> tuple[ModuleOp, bool]:
        changed = False
        for index in reversed(range(sum(1 for _ in module.walk()))):
            for edit in op_edits(_op_at(module, index), index):
                module, done = self._try(module, edit)
                if done:  # the op is gone
                    changed = True
                    break
        return module, changed

    def _results_step(self, module: ModuleOp) -> tuple[ModuleOp, bool]:
        return self._func_step(module, "drop-result")

    def _args_step(self, module: ModuleOp) -> tuple[ModuleOp, bool]:
        return self._func_step(module, "drop-arg")

    def _func_step(self, module: ModuleOp, kind: str) -> tuple[ModuleOp, bool]:
        changed = False
        funcs = [(i, op) for i, op in enumerate(module.walk()) if isinstance(op, FuncOp)]
        for index, func in reversed(funcs):
            for edit in [e for e in func_edits(func, index) if e.kind == kind]:
                if kind == "drop-result" and len(_results(_op_at(module, index))) < 2:
                    break  # keep one result
                module, done = self._try(module, edit)
                changed |= done
        return module, changed

    def _try(self, module: ModuleOp, edit: Edit) -> tuple[ModuleOp, bool]:
        """The edited module when it is interesting, else `module`."""
        candidate = module.clone()
        try:
            apply(edit, candidate)
        except Exception:  # noqa: BLE001 (an edit the IR does not allow: skip it)
            self.oracle.tried += 1
            self.oracle.invalid += 1
            return module, False
        if not self.oracle.interesting(candidate):
            return module, False
        line = edit.describe(module)
        self.accepted.append(line)
        self.log(line)
        return candidate, True


def _results(op: Operation) -> Sequence[SSAValue]:
    ret = _return_of(op) if isinstance(op, FuncOp) else None
    return ret.operands if ret is not None else ()


def count_ops(module: ModuleOp) -> int:
    """Ops in the module, the module itself not counted."""
    return sum(1 for _ in module.walk()) - 1


# ---------------------------------------------------------------------------------------------
# The command line


def build_arg_parser() -> argparse.ArgumentParser:
    from mlc.tools.mlc_opt import _ArgumentParser

    ap = _ArgumentParser(
        prog=TOOL,
        description="Shrink IR on which a pass pipeline fails, keeping the same error.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(__doc__ or "")[(__doc__ or "").find("Reductions"):],
    )
    ap.add_argument("input", help="the failing IR (a reproducer .mlir)")
    ap.add_argument("-p", "--passes", required=True, metavar="PIPELINE",
                    help="the pipeline that fails on it, e.g. 'lower-aten,inline'")
    ap.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    ap.add_argument("--match", metavar="TEXT",
                    help="keep any error whose message contains TEXT (default: the same error)")
    ap.add_argument("-v", "--verbose", action="store_true", help="say each reduction kept, on stderr")
    return ap


def run(argv: Sequence[str] | None = None) -> int:
    from mlc.passes.pipeline import load_pipeline
    from mlc.passes.registry import PipelineError

    args = build_arg_parser().parse_args(sys.argv[1:] if argv is None else argv)
    try:
        passes = load_pipeline(args.passes)
    except (ArgSpecParseError, PipelineError) as e:  # unknown pass or bad option, as mlc-opt reports them
        return _error(f"bad pipeline '{args.passes}': {pipeline_error_text(e)}")
    try:
        with open(args.input, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        return _error(f"cannot read {args.input}: {e}")
    try:
        original = failure(text, args.input, passes)
        module = parse_source(_context(), Source(args.input, text))
    except CompileError as e:
        sys.stderr.write(e.diagnostic.format() + "\n")
        return 1
    if original is None:
        return _error(f"{args.input} does not fail under '{args.passes}': nothing to reduce")
    if args.match is not None and args.match not in original:
        return _error(f"{args.input} fails with \"{original}\", which does not contain \"{args.match}\"")
    wanted = (lambda m: args.match in m) if args.match is not None else (lambda m: identity(m) == identity(original))
    oracle = Oracle(args.input, passes, wanted)
    if not oracle.interesting(module.clone()):
        return _error(f"{args.input}: the failure does not survive printing the IR again")
    log = (lambda line: sys.stderr.write(f"{TOOL}: {line}\n")) if args.verbose else (lambda line: None)
    reduced = Reducer(oracle, log).reduce(module)
    if not write_output(TOOL, args.output, print_module(reduced)):
        return 1
    sys.stderr.write(
        f"{TOOL}: {count_ops(module)} -> {count_ops(reduced)} ops, {oracle.tried} candidates tried "
        f"({oracle.invalid} invalid)\n{TOOL}: error kept: {original}\n"
    )
    return 0


def _context():  # type: ignore[no-untyped-def]
    from mlc.dialects.registry import make_context

    return make_context()


def _error(message: str) -> int:
    sys.stderr.write(f"{TOOL}: error: {message}\n")
    return 1


def main() -> None:
    tool_main(TOOL, run)


if __name__ == "__main__":
    main()
