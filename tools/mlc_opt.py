"""mlc-opt: run mlc passes over IR, as mlir-opt does.

    mlc-opt FILE --lower-aten --inline --realize
    mlc-opt FILE -p 'lower-aten,inline{reads-threshold=1},realize'
    mlc-opt FILE -p default                  # a named pipeline: the backend's, aten to triton
    mlc-opt FILE --realize="reads-threshold=1 opcount-threshold=10"

Every registered pass is a flag; flags and `-p` pipelines run in the order given. A registered
pipeline's name (`default`: `mlc.passes.registry.PIPELINES`) stands for its passes in `-p`
(`--help` lists them). Pass options follow MLIR's convention: `--pass="opt=value opt2=value"`
on a flag, `pass{opt=value opt2=value}` inside `-p`; a bare option name means `=true`
(`--fuse=explain`).

Errors (malformed IR, verifier failures, bad flags, failing passes) print
`file:line:col: error: message` and exit with status 1; an internal crash prints one line
naming the pass, and the traceback only with `--debug`.
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Sequence
from dataclasses import fields, replace

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.printer import Printer
from xdsl.utils.exceptions import ArgSpecParseError

from mlc.passes.pipeline import Timing
from mlc.passes.registry import PipelineError
from mlc.tools.diagnostics import (
    SPLIT_MARKER,
    CompileError,
    Diagnostic,
    Source,
    check_expected,
    parse_annotations,
    parse_source,
    pass_failure_diagnostic,
    pipeline_error_text,
    split_input,
    tool_main,
    verify_with_positions,
    write_output,
)



class _PassAction(argparse.Action):
    """Appends a pass spec to the shared, ordered pipeline list (`pass_name=None` for -p)."""

    def __init__(self, *args, pass_name: str | None = None, **kwargs):  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.pass_name = pass_name

    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[override]
        pipeline = getattr(namespace, "pipeline", None) or []
        if self.pass_name is None:
            pipeline.append(values)
        else:
            pipeline.append(self.pass_name + _options_in_braces(values))
        namespace.pipeline = pipeline


def _options_in_braces(values: str | None) -> str:
    """`--pass=OPTIONS` as `pass{OPTIONS}`: the same options, parsed by the same parser."""
    return "{" + values + "}" if values else ""


def _pass_help() -> str:
    from mlc.passes.registry import PASSES, PIPELINES, pass_summary

    lines = ["pipelines (-p NAME, alone or among the passes of a -p list):"]
    for name, pipeline in PIPELINES.items():
        lines += [f"  {name:<22} {pipeline.summary}".rstrip(), f"      {pipeline.spec}"]
    lines += ["", "passes (run in the order given; options as --pass=\"opt=value ...\"):"]
    for name, load in PASSES.items():
        cls = load()
        lines.append(f"  --{name:<20} {pass_summary(cls)}")
        for f in fields(cls):
            option = f"{f.name.replace('_', '-')}={_option_text(f.default)}"
            lines.append(f"      {option:<38} {f.metadata.get('help', '')}".rstrip())
    return "\n".join(lines)


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str):  # type: ignore[override]
        # Bad flags are user errors like any other: status 1, as the rest of the tool.
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


def _option_text(value: object) -> str:
    """A default as one would write it in a pipeline: `true`, `4`, `()`."""
    return str(value).lower() if isinstance(value, bool) else repr(value)


def build_arg_parser() -> argparse.ArgumentParser:
    from mlc.passes.registry import PASSES

    ap = _ArgumentParser(
        prog="mlc-opt",
        description="Run mlc passes over IR.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=_pass_help(),
    )
    ap.add_argument("input", nargs="?", default="-", help="input file (default: stdin)")
    ap.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    ap.add_argument("-p", "--passes", action=_PassAction, dest="pipeline",
                    metavar="PIPELINE",
                    help="comma-separated passes or named pipelines, e.g. 'lower-aten,inline' or 'default'")
    for name in PASSES:
        ap.add_argument(f"--{name}", action=_PassAction, pass_name=name, nargs="?", dest="pipeline",
                        metavar="OPTIONS", help=argparse.SUPPRESS)
    ap.add_argument("--print-ir-after-all", action="store_true",
                    help="print the IR after every pass to stderr")
    ap.add_argument("--split-input-file", action="store_true",
                    help="process each '// -----' chunk separately")
    ap.add_argument("--verify-diagnostics", action="store_true",
                    help="check errors against '// expected-error {{...}}' annotations")
    ap.add_argument("--print-op-generic", action="store_true", help="print ops in generic form")
    ap.add_argument("--print-debuginfo", action="store_true", help="print op locations")
    ap.add_argument("--debug", action="store_true", help="show Python tracebacks of crashes")
    ap.add_argument("--timing", action="store_true",
                    help="print each pass's wall time (and its verification's) and the total to stderr "
                         "(MLIR's -mlir-timing); with --split-input-file, summed over the chunks")
    return ap


def _load_pipeline(specs: Sequence[str]) -> list[ModulePass]:
    from mlc.passes.pipeline import load_pipeline

    return load_pipeline(*specs)


def _print_module(module: ModuleOp, args: argparse.Namespace) -> str:
    out = io.StringIO()
    Printer(stream=out, print_generic_format=args.print_op_generic,
            print_debuginfo=args.print_debuginfo).print_op(module)
    return out.getvalue() + "\n"


def _run_chunk(source: Source, passes: list[ModulePass], args: argparse.Namespace, timing: Timing | None = None) -> str:
    """Parse, verify, run the passes over one chunk; returns the printed result."""
    from mlc.dialects.registry import make_context
    from mlc.passes.pipeline import PassFailed, Remark, run_pipeline

    def print_after(p: ModulePass, module: ModuleOp) -> None:
        sys.stderr.write(f"// -----// IR Dump After {p.name} //----- //\n{_print_module(module, args)}")

    def print_remark(r: Remark) -> None:  # a pass's explanation, at the op it is about
        d = source.at_op(r.op, f"[{r.pass_name}] {r.message}")
        sys.stderr.write(replace(d, source_line="", severity="remark").format() + "\n")

    ctx = make_context()
    module = parse_source(ctx, source)
    try:
        run_pipeline(module, passes, ctx, verify=lambda m: verify_with_positions(m, source),
                     after_pass=print_after if args.print_ir_after_all else None,
                     on_remark=None if args.verify_diagnostics else print_remark, timing=timing)
    except PassFailed as e:
        raise CompileError(pass_failure_diagnostic(e, source, args.debug)) from None
    return _print_module(module, args)


def _summed(timing: Timing) -> Timing:
    """One row per name, in first-seen order: the chunks of --split-input-file added up."""
    totals: dict[str, float] = {}
    for name, seconds in timing.rows:
        totals[name] = totals.get(name, 0.0) + seconds
    return Timing(list(totals.items()))


def _options_only_after_equals(argv: Sequence[str]) -> list[str]:
    """`--pass` alone takes no options, so `mlc-opt --lower-aten file.mlir` reads the file (an
    optional argparse value would swallow it): options come only as `--pass=...`, as in MLIR."""
    from mlc.passes.registry import PASSES

    flags = {f"--{name}" for name in PASSES}
    return [f"{a}=" if a in flags else a for a in argv]


def run(argv: Sequence[str] | None = None) -> int:
    ap = build_arg_parser()
    args = ap.parse_args(_options_only_after_equals(sys.argv[1:] if argv is None else argv))
    try:
        passes = _load_pipeline(args.pipeline or [])
    except (ArgSpecParseError, PipelineError) as e:
        sys.stderr.write(f"mlc-opt: error: {pipeline_error_text(e)}\n")
        return 1
    name = "<stdin>" if args.input == "-" else args.input
    try:
        text = sys.stdin.read() if args.input == "-" else open(args.input, encoding="utf-8").read()
    except (OSError, UnicodeDecodeError) as e:
        sys.stderr.write(f"mlc-opt: error: cannot read {name}: {e}\n")
        return 1
    chunks = split_input(text) if args.split_input_file else [(0, text)]
    outputs, problems, failed = [], [], False
    timing = Timing() if args.timing else None
    for _, chunk in chunks:
        source = Source(name, chunk)
        try:
            outputs.append(_run_chunk(source, passes, args, timing))
            diagnostics: list[Diagnostic] = []
        except CompileError as e:
            diagnostics = [e.diagnostic]
            outputs.append("")
        if args.verify_diagnostics:
            expectations, malformed = parse_annotations(chunk, name)
            problems += malformed + check_expected(expectations, diagnostics, name)
        elif diagnostics:
            sys.stderr.write(diagnostics[0].format() + "\n")
            failed = True
    if args.verify_diagnostics:
        for p in problems:
            sys.stderr.write(p + "\n")
        return 1 if problems else 0
    if timing is not None:
        sys.stderr.write(_summed(timing).report())
    result = f"{SPLIT_MARKER}\n".join(o for o in outputs if o) if args.split_input_file else "".join(outputs)
    if not write_output("mlc-opt", args.output, result):
        return 1
    return 1 if failed else 0


def main() -> None:
    tool_main("mlc-opt", run)


if __name__ == "__main__":
    main()
