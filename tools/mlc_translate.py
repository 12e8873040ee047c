"""mlc-translate: translate triton-dialect IR out of MLIR, as mlir-translate does.

    mlc-translate --emit-python module.mlir -o module.py
    mlc-opt graph.mlir -p 'lower-aten,inline,realize,convert-to-triton' | mlc-translate --emit-python

`--emit-python` prints the Python module Inductor would write: `@triton.jit` kernels and
`call(args)` (see `mlc.codegen.emit_python`). `--emit-dot` draws buffer IR (after `--fuse`:
its kernels) as Graphviz dot (see `mlc.codegen.emit_dot`). The input is read from FILE or stdin.

Errors (malformed IR, verifier failures, ops emit-python cannot print) are one line,
`file:line:col: error: message`, followed by the source line and a caret; exit status 1. A
crash prints one line, and its traceback only with `--debug`. `--split-input-file`
translates each `// -----` chunk of the input on its own, as mlc-opt's does.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from mlc.tools.diagnostics import (
    SPLIT_MARKER,
    CompileError,
    Diagnostic,
    Source,
    internal_error,
    parse_source,
    split_input,
    tool_main,
    write_output,
)


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str):  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


def build_arg_parser() -> argparse.ArgumentParser:
    ap = _ArgumentParser(prog="mlc-translate", description="Translate mlc IR to other formats.")
    ap.add_argument("input", nargs="?", default="-", help="input file (default: stdin)")
    ap.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    target = ap.add_mutually_exclusive_group(required=True)
    target.add_argument("--emit-python", action="store_true",
                        help="triton dialect -> Python module (@triton.jit kernels + call(args))")
    target.add_argument("--emit-dot", action="store_true",
                        help="buffer dialect -> Graphviz dot: buffers, kernels (fused groups) as clusters, "
                             "dependencies; refused fusions dashed where --fuse{explain=true} ran")
    ap.add_argument("--split-input-file", action="store_true",
                    help="translate each `// -----` chunk as its own module (outputs joined by `# -----`)")
    ap.add_argument("--debug", action="store_true", help="show Python tracebacks of crashes")
    return ap


def translate(source: Source, debug: bool = False, target: str = "python") -> str:
    """Parse, verify and emit one module as `target` ("python" or "dot"); failures raise
    CompileError."""
    from mlc.codegen.emit_dot import NoBufferGraph, emit_dot
    from mlc.codegen.emit_python import EmitError, emit_python
    from mlc.dialects.registry import make_context

    module = parse_source(make_context(), source)
    try:
        return emit_dot(module) if target == "dot" else emit_python(module)
    except EmitError as e:
        raise CompileError(source.at_op(e.op, str(e))) from None
    except NoBufferGraph as e:
        raise CompileError(Diagnostic(source.name, 0, 0, str(e))) from None
    except Exception as e:
        raise CompileError(Diagnostic(source.name, 0, 0, internal_error(f"emit-{target}", e, debug))) from None


def run(argv: Sequence[str] | None = None) -> int:
    args = build_arg_parser().parse_args(argv)
    name = "<stdin>" if args.input == "-" else args.input
    try:
        text = sys.stdin.read() if args.input == "-" else open(args.input, encoding="utf-8").read()
    except (OSError, UnicodeDecodeError) as e:
        sys.stderr.write(f"mlc-translate: error: cannot read {name}: {e}\n")
        return 1
    chunks = split_input(text) if args.split_input_file else [(0, text)]
    try:
        results = [translate(Source(name, chunk), args.debug, "dot" if args.emit_dot else "python") for _, chunk in chunks]
    except CompileError as e:
        sys.stderr.write(e.diagnostic.format() + "\n")
        return 1
    result = f"# {SPLIT_MARKER[3:]}\n".join(results)
    return 0 if write_output("mlc-translate", args.output, result) else 1


def main() -> None:
    tool_main("mlc-translate", run)


if __name__ == "__main__":
    main()
