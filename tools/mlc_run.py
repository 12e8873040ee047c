"""mlc-run: compile IR of any stage and run it on random inputs; check it against PyTorch, time it.

    mlc-run graph.mlir                       # run: each output's shape, dtype, sum/mean/min/max
    mlc-run graph.mlir --check               # ... and compare with eager PyTorch (aten IR only)
    mlc-run kernels.mlir --check --reference graph.mlir   # later-stage IR, checked against its aten IR
    mlc-run kernels.mlir --bench             # median time (triton.testing.do_bench) and GB/s
    mlc-opt graph.mlir -p 'fold-addmm,lower-aten,inline,realize' > buf.mlir   # edit buf.mlir, then
    mlc-run buf.mlir --check --bench --reference graph.mlir

The input's stage (aten, loops, buffer, triton: `mlc.passes.stages`) decides which passes run:
the rest of the default pipeline (`-p default`, `mlc.passes.registry.DEFAULT_PIPELINE`), from
its first pass that takes IR of that stage (`-p` runs a pipeline of one's own instead; `-p ''`
none). The triton IR that results is emitted as Python, loaded, and `call`ed on random inputs
of the layouts its `triton.input`s declare (`--seed`): floats from randn, bools fair coins, integers
in [0, smallest input dim) so that they are valid indices (`--int-range LO:HI` otherwise).

Kernels run on the GPU when CUDA is available, else under Triton's interpreter on CPU tensors
(`mlc.codegen.triton_helpers` decides, and sets TRITON_INTERPRET=1 before any kernel is made;
`CUDA_VISIBLE_DEVICES=` forces the interpreter).

`--check` runs the aten IR op by op through `torch.ops.aten` on the same inputs (each result
checked against the type the IR declares) and compares every output with
`torch.testing.assert_close` (float32: atol=rtol=1e-5, 16-bit floats: 1e-2, integers and bools
exact; `--atol`/`--rtol`), one line per output; a mismatch exits with status 1. IR after the
aten stage needs `--reference`: the aten IR it was compiled from.

`--bench` times `call` with `do_bench` (the median) on a GPU, with the bandwidth its inputs and
outputs imply, and eager PyTorch on the aten reference where there is one; under the
interpreter it gives wall-clock time, which says nothing about kernels.

Errors (unreadable files, malformed IR, verifier failures, failing passes) print
`file:line:col: error: message` and exit with status 1, as `mlc-opt` does; a crash prints one
line, and its traceback only with `--debug`. Input text is parsed as IR, never evaluated.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.exceptions import ArgSpecParseError

from mlc.tools.diagnostics import (
    CompileError,
    Diagnostic,
    Source,
    internal_error,
    parse_source,
    pass_failure_diagnostic,
    pipeline_error_text,
    tool_main,
    verify_with_positions,
)

TOOL = "mlc-run"


class UsageError(Exception):
    """A problem with how the tool was asked (not with the IR): `mlc-run: error: ...`."""


# ---------------------------------------------------------------------------------------------
# Command line


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str):  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


INT64 = range(-2**63, 2**63)


def _int_range(text: str) -> tuple[int, int]:
    lo, sep, hi = text.partition(":")
    try:
        bounds = int(lo), int(hi)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected LO:HI (integers), got {text!r}") from None
    if not sep or bounds[0] >= bounds[1]:
        raise argparse.ArgumentTypeError(f"expected LO:HI with LO < HI, got {text!r}")
    if not all(b in INT64 for b in bounds):
        raise argparse.ArgumentTypeError(f"expected LO:HI within int64, got {text!r}")
    return bounds


def _seed(text: str) -> int:
    """A seed torch.Generator takes: an integer in [0, 2**64)."""
    try:
        seed = int(text)
    except ValueError:
        seed = -1
    if not 0 <= seed < 2**64:
        raise argparse.ArgumentTypeError(f"expected an integer from 0 to 2**64-1, got {text!r}")
    return seed


def _tolerance(text: str) -> float:
    """A tolerance of --check: a number >= 0 (not nan)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}")
    return value


def build_arg_parser() -> argparse.ArgumentParser:
    ap = _ArgumentParser(prog=TOOL, description="Compile mlc IR of any stage and run it on random inputs.",
                         epilog="See the module docstring of mlc.tools.mlc_run for examples.")
    ap.add_argument("input", nargs="?", default="-", help="input file (default: stdin)")
    ap.add_argument("-p", "--pipeline", metavar="PIPELINE",
                    help="passes to run instead of the rest of the default pipeline ('' for none)")
    ap.add_argument("--check", action="store_true", help="compare every output with eager PyTorch")
    ap.add_argument("--reference", metavar="ATEN.mlir",
                    help="the aten IR the input came from (what --check runs for IR of a later stage)")
    ap.add_argument("--bench", action="store_true",
                    help="time the compiled module (do_bench on a GPU; wall clock under the interpreter)")
    ap.add_argument("--seed", type=_seed, default=0, help="seed of the random inputs (default 0)")
    ap.add_argument("--int-range", type=_int_range, metavar="LO:HI",
                    help="integer inputs from [LO, HI) (default: [0, the smallest input dim))")
    ap.add_argument("--atol", type=_tolerance, help="absolute tolerance of --check (default by dtype)")
    ap.add_argument("--rtol", type=_tolerance, help="relative tolerance of --check (default by dtype)")
    ap.add_argument("--split-input-file", action="store_true",
                    help="run each '// -----' chunk separately (and of --reference, the chunk at the same place)")
    ap.add_argument("--debug", action="store_true", help="show Python tracebacks of crashes")
    return ap


# ---------------------------------------------------------------------------------------------
# Compiling: the rest of the pipeline, then Python


def module_stage(module: ModuleOp, source: Source) -> str:
    """The one stage of a module's ops; a module mixing stages or holding none is an error."""
    from mlc.passes.stages import staged_ops

    ops = list(staged_ops(module))
    if not ops:
        raise CompileError(Diagnostic(source.name, 0, 0, "nothing to run: no func.func, buffer.graph or triton ops"))
    first_op, stage = ops[0]
    for op, other in ops[1:]:
        if other != stage:
            raise CompileError(source.at_op(op, f"{TOOL} runs IR of one stage: this is {other} IR after {stage} IR "
                                                f"(at {first_op.name})"))
    return stage


def rest_of_pipeline(stage: str) -> str:
    """The default pipeline from its first pass whose own stage (`ACCEPTS[0]`) is `stage`."""
    from mlc.passes.registry import DEFAULT_PIPELINE, PASSES

    names = DEFAULT_PIPELINE.split(",")
    start = next((k for k, n in enumerate(names) if getattr(PASSES[n](), "ACCEPTS", ("",))[0] == stage), len(names))
    return ",".join(names[start:])


def run_passes(module: ModuleOp, spec: str, source: Source, debug: bool) -> None:
    """Run pipeline `spec` over `module` in place; failures raise CompileError as mlc-opt's do."""
    from mlc.dialects.registry import make_context
    from mlc.passes.pipeline import PassFailed, load_pipeline, run_pipeline
    from mlc.passes.registry import PipelineError

    try:
        passes = load_pipeline(spec) if spec.strip() else []
    except (ArgSpecParseError, PipelineError) as e:
        raise UsageError(f"bad pipeline '{spec}': {pipeline_error_text(e)}") from None
    try:
        run_pipeline(module, passes, make_context(), verify=lambda m: verify_with_positions(m, source))
    except PassFailed as e:
        raise CompileError(pass_failure_diagnostic(e, source, debug)) from None


def emit(module: ModuleOp, source: Source, debug: bool) -> str:
    """The Python module of triton IR (CompileError where it cannot be printed)."""
    from mlc.codegen.emit_python import EmitError, emit_python

    try:
        return emit_python(module)
    except EmitError as e:
        raise CompileError(source.at_op(e.op, str(e))) from None
    except Exception as e:
        raise CompileError(Diagnostic(source.name, 0, 0, internal_error("emit-python", e, debug))) from None


# ---------------------------------------------------------------------------------------------
# Inputs: random tensors of the layouts the wrapper declares


@dataclass(frozen=True)
class InputSpec:
    """One argument of `call`: its name and layout, with the dtype as torch names it."""

    name: str
    size: tuple[int, ...]
    stride: tuple[int, ...]
    offset: int
    dtype: str

    @property
    def extent(self) -> int:
        """Elements of the storage the layout reaches (its offset for an empty tensor)."""
        if not all(self.size):
            return self.offset
        return self.offset + sum((n - 1) * s for n, s in zip(self.size, self.stride)) + 1

    def describe(self) -> str:
        from mlc.dialects.buffer_layout import contiguous_strides

        layout = "" if list(self.stride) == list(contiguous_strides(list(self.size))) else f" strides {list(self.stride)}"
        offset = f" offset {self.offset}" if self.offset else ""
        return f"{list(self.size)} {self.dtype}{layout}{offset}"


def wrapper_of(module: ModuleOp) -> Operation:
    from mlc.dialects.triton import WrapperOp

    return next(op for op in module.body.block.ops if isinstance(op, WrapperOp))


def input_specs(module: ModuleOp, source: Source) -> list[InputSpec]:
    """The `triton.input`s of the wrapper, in argument order; symbolic sizes are refused."""
    from mlc.dialects.triton import InputOp
    from mlc.dialects.values import DTYPE_NAMES

    specs = []
    for op in wrapper_of(module).body.block.ops:
        if not isinstance(op, InputOp):
            continue
        layout = op.layout
        exprs = [*layout.sizes, *layout.strides, layout.offset.expr]
        if not all(e.is_Integer for e in exprs):
            raise CompileError(source.at_op(op, f"input '{op.buffer.data}' has a symbolic layout; {TOOL} needs static shapes"))
        name = op.buffer.data
        if layout.dtype not in DTYPE_NAMES:
            raise CompileError(source.at_op(op, f"input '{name}' is {layout.dtype}: {TOOL} cannot make random inputs "
                                                f"of that dtype (it makes {', '.join(DTYPE_NAMES.values())})"))
        rank = layout.rank
        ints = [int(e) for e in exprs]
        spec = InputSpec(name, tuple(ints[:rank]), tuple(ints[rank:2 * rank]), ints[-1], DTYPE_NAMES[layout.dtype])
        if spec.extent not in INT64:
            raise CompileError(source.at_op(op, f"input '{name}' ({spec.describe()}) is too large: it spans "
                                                f"{spec.extent} elements, more than a tensor can hold (2**63-1)"))
        specs.append(spec)
    return specs


def output_names(module: ModuleOp) -> list[str]:
    from mlc.dialects.triton import ReturnOp

    return next(op.output_names for op in wrapper_of(module).body.block.ops if isinstance(op, ReturnOp))


def default_int_range(specs: Sequence[InputSpec]) -> tuple[int, int]:
    """[0, smallest dim of any input): integers that index any dim of any input are in bounds."""
    dims = [d for s in specs for d in s.size if d > 0]
    return 0, max(1, min(dims, default=8))


def make_inputs(specs: Sequence[InputSpec], seed: int, int_range: tuple[int, int], device: Any) -> list[Any]:
    """Random tensors of `specs`' layouts: each fills its whole storage, then views it strided.
    Drawn on the CPU from one generator, so the values do not depend on the device."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    out = []
    for spec in specs:
        try:
            flat = _random(spec.extent, getattr(torch, spec.dtype), gen, int_range).to(device)
        except (RuntimeError, MemoryError) as e:  # the allocator's "can't allocate memory"
            raise UsageError(f"cannot allocate input '{spec.name}' ({spec.describe()}): {_first_line(e)}") from None
        out.append(flat.as_strided(spec.size, spec.stride, spec.offset))
    return out


def _random(n: int, dtype: Any, gen: Any, int_range: tuple[int, int]) -> Any:
    import torch

    if dtype.is_floating_point or dtype.is_complex:
        return torch.randn(n, generator=gen, dtype=torch.complex64 if dtype.is_complex else torch.float32).to(dtype)
    if dtype == torch.bool:
        return torch.rand(n, generator=gen) < 0.5
    return torch.randint(*int_range, (n,), generator=gen, dtype=torch.int64).to(dtype)


# ---------------------------------------------------------------------------------------------
# The reference: aten IR op by op through torch.ops.aten


@dataclass
class _Step:
    """One aten op, ready to call: `fn(*args, **kwargs)` with `_Slot(k)` standing for operand k."""

    op: Operation
    fn: Callable[..., Any]
    args: list[Any]
    kwargs: dict[str, Any]


@dataclass(frozen=True)
class _Slot:
    index: int


def torch_value(attr: Attribute, tensors: Iterator[Any]) -> Any:
    """An extern call's argument attribute as the Python value torch takes: each tensor mark
    takes the next of `tensors`, dtypes become torch dtypes, layouts and memory formats (which
    travel as their names) torch's objects."""
    import torch

    from mlc.dialects.aten import NoneArgAttr, TensorArgAttr
    from mlc.dialects.values import DTYPE_NAMES, attr_to_py

    if isinstance(attr, TensorArgAttr):
        return next(tensors)
    if isinstance(attr, NoneArgAttr):
        return None
    if isinstance(attr, ArrayAttr):
        return [torch_value(a, tensors) for a in attr.data]
    if isinstance(attr, DictionaryAttr):
        return {k: torch_value(v, tensors) for k, v in attr.data.items()}
    if attr in DTYPE_NAMES:
        return getattr(torch, DTYPE_NAMES[attr])
    value = attr_to_py(attr)
    if isinstance(value, str) and (value == "strided" or value.endswith("_format")):
        return getattr(torch, value)
    return value


class AtenProgram:
    """The first func.func of aten IR as a list of torch.ops.aten calls (made once, run often).

    Each op is spelled as `--lower-aten` spells its extern call (`mlc.passes.lowering.extern`),
    so any aten op or `aten.call` runs; a `device` argument is the device the inputs are on.
    Every value is made contiguous, as mlc's IR assumes (`--lower-aten` reads a view as a
    re-indexing of a contiguous value: `aten.view` of a permute is a reshape)."""

    def __init__(self, module: ModuleOp, source: Source, device: Any):
        import torch

        from mlc.dialects.aten import AtenOp, CallOp
        from mlc.passes.lowering.extern import extern
        from mlc.passes.lowering.registry import make_call

        self.source, self.device = source, str(device)
        self.func = next(op for op in module.body.block.ops if isinstance(op, func.FuncOp) and op.body.blocks)
        self.steps: list[_Step] = []
        for op in self.func.body.block.ops:
            if isinstance(op, func.ReturnOp):
                self.returned = list(op.arguments)
                continue
            if not isinstance(op, (AtenOp, CallOp)):
                raise CompileError(source.at_op(op, f"the reference must be aten IR; found {op.name}"))
            ext = extern(make_call(op))[0]
            ext.drop_all_references()  # a detached helper: it leaves no uses in the IR
            packet, overload = ext.overload.data.split(".")
            fn = getattr(getattr(torch.ops.aten, packet), overload)
            slots = iter([_Slot(k) for k in range(len(op.operands))])
            args = torch_value(ext.args, slots)
            kwargs = torch_value(ext.kwargs, slots) if ext.kwargs is not None else {}
            if "device" in kwargs:
                kwargs["device"] = self.device
            self.steps.append(_Step(op, fn, args, kwargs))

    @property
    def arg_types(self) -> list[TensorType]:
        return [a.type for a in self.func.body.block.args]  # type: ignore[misc]

    def __call__(self, inputs: Sequence[Any], check_types: bool = False) -> list[Any]:
        env: dict[SSAValue, Any] = {a: x.contiguous() for a, x in zip(self.func.body.block.args, inputs)}
        for step in self.steps:
            operands = [env[v] for v in step.op.operands]
            try:
                out = step.fn(*_fill(step.args, operands), **_fill(step.kwargs, operands))
            except Exception as e:
                raise CompileError(self.source.at_op(step.op, f"reference: {step.op.name} failed in PyTorch: "
                                                              f"{type(e).__name__}: {_first_line(e)}")) from None
            results = list(out) if isinstance(out, (tuple, list)) else [out]
            for value, result in zip(step.op.results, results):
                if check_types:
                    self._check_type(step.op, value, result)
                env[value] = result.contiguous()  # mlc's IR: every value is contiguous
        return [env[v] for v in self.returned]

    def _check_type(self, op: Operation, value: SSAValue, result: Any) -> None:
        """The type the IR declares must be what torch computes (else the IR, not mlc, is wrong)."""
        from mlc.dialects.values import DTYPE_NAMES

        typ = value.type
        if not isinstance(typ, TensorType):
            return
        shape, dtype = list(typ.get_shape()), DTYPE_NAMES.get(typ.element_type)
        if list(result.shape) != shape or str(result.dtype).removeprefix("torch.") != dtype:
            raise CompileError(self.source.at_op(op, f"reference: PyTorch computes {list(result.shape)} "
                                                     f"{str(result.dtype).removeprefix('torch.')} for {op.name}, "
                                                     f"the IR declares {typ}"))


def _fill(template: Any, operands: Sequence[Any]) -> Any:
    """`template` with each `_Slot(k)` replaced by operand k (in lists and dicts too)."""
    if isinstance(template, _Slot):
        return operands[template.index]
    if isinstance(template, list):
        return [_fill(a, operands) for a in template]
    if isinstance(template, dict):
        return {k: _fill(v, operands) for k, v in template.items()}
    return template


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def check_signature(program: AtenProgram, specs: Sequence[InputSpec]) -> None:
    """The reference must take what the compiled module takes, argument by argument."""
    from mlc.dialects.values import DTYPE_NAMES

    types = program.arg_types
    where = program.source.at_op(program.func, "")
    if len(types) != len(specs):
        raise CompileError(Diagnostic(where.file, where.line, where.col, f"reference takes {len(types)} arguments, "
                                      f"the compiled module {len(specs)}", where.source_line))
    for k, (t, s) in enumerate(zip(types, specs)):
        if list(t.get_shape()) != list(s.size) or DTYPE_NAMES.get(t.element_type) != s.dtype:
            raise CompileError(Diagnostic(where.file, where.line, where.col, f"reference argument {k} is {t}, the "
                                          f"compiled module's input '{s.name}' is {s.describe()}", where.source_line))


# ---------------------------------------------------------------------------------------------
# Reporting: statistics, the check, the timing


def statistics(t: Any) -> str:
    """Shape, dtype and sum/mean/min/max of one output (in float64; deterministic for a seed)."""
    import torch

    head = f"{list(t.shape)} {str(t.dtype).removeprefix('torch.')}"
    if t.numel() == 0:
        return head + " (empty)"
    v = t.detach().to("cpu")
    v = v.abs() if v.is_complex() else v
    v = v.to(torch.float64)
    stats = {"sum": v.sum(), "mean": v.mean(), "min": v.min(), "max": v.max()}
    return head + "  " + " ".join(f"{k}={float(x):.6g}" for k, x in stats.items())


def tolerances(dtype: Any, atol: float | None, rtol: float | None) -> dict[str, float]:
    """As the end-to-end tests: 16-bit floats 1e-2 (eager rounds after every op, a fused kernel
    need not), other floats 1e-5 (an ulp or two of transcendental functions); ints exact."""
    import torch

    if not (dtype.is_floating_point or dtype.is_complex):
        default = 0.0
    else:
        default = 1e-2 if dtype in (torch.float16, torch.bfloat16) else 1e-5
    return {"atol": default if atol is None else atol, "rtol": default if rtol is None else rtol}


def compare(got: Any, expected: Any, atol: float | None, rtol: float | None) -> str | None:
    """None when `got` matches `expected`; else assert_close's findings on one line."""
    import torch

    try:
        torch.testing.assert_close(got, expected, equal_nan=True, check_stride=False,
                                   **tolerances(expected.dtype, atol, rtol))
    except AssertionError as e:
        lines = [line.strip().rstrip(".") for line in str(e).splitlines() if line.strip()]
        return "; ".join(line for line in lines if not line.startswith("Tensor-likes are not"))
    return None


def max_error(got: Any, expected: Any) -> str:
    """`max abs err X` over the finite differences (floats), for a passing output's line."""
    import torch

    if not (expected.dtype.is_floating_point or expected.dtype.is_complex) or expected.numel() == 0:
        return "exact"
    diff = (got.to(torch.complex128 if got.is_complex() else torch.float64)
            - expected.to(torch.complex128 if expected.is_complex() else torch.float64)).abs()
    diff = diff[torch.isfinite(diff)]
    return f"max abs err {float(diff.max()) if diff.numel() else 0.0:.3g}"


def bench(call: Callable[[list[Any]], Any], inputs: list[Any], outputs: Sequence[Any], reference: AtenProgram | None,
          on_gpu: bool) -> list[str]:
    """Timing lines: do_bench's median on a GPU (with GB/s, and eager's time when there is a
    reference), wall clock under the interpreter."""
    run = lambda: call(list(inputs))  # noqa: E731  # `call` clears the list it is given
    if not on_gpu:
        samples = []
        for _ in range(3):
            start = time.perf_counter()
            run()
            samples.append(time.perf_counter() - start)
        ms = sorted(samples)[1] * 1e3
        return [f"bench: {ms:.3f} ms wall clock per call under Triton's interpreter "
                "(not the kernels' speed: run on a GPU to time them)"]
    from triton.testing import do_bench

    ms = do_bench(run, return_mode="median")
    nbytes = _distinct_bytes([*inputs, *outputs])
    lines = [f"bench: {ms:.4f} ms (median of do_bench), {nbytes / (ms * 1e-3) / 1e9:.1f} GB/s "
             f"({nbytes} bytes of inputs and outputs)"]
    if reference is not None:
        eager = do_bench(lambda: reference(inputs), return_mode="median")
        lines.append(f"bench: eager {eager:.4f} ms, speedup {eager / ms:.2f}x")
    return lines


def _distinct_bytes(tensors: Sequence[Any]) -> int:
    """Bytes of the tensors, each storage counted once (an output may be an input)."""
    seen, total = set(), 0
    for t in tensors:
        key = (t.data_ptr(), t.numel())
        if key not in seen:
            seen.add(key)
            total += t.numel() * t.element_size()
    return total


# ---------------------------------------------------------------------------------------------
# Driver


@dataclass
class Job:
    """One module to run: the input's source, and the aten source --check compares with."""

    source: Source
    reference: Source | None


def run_job(job: Job, args: argparse.Namespace) -> tuple[list[str], bool]:
    """Compile, run, check and time one module; returns its report and whether it passed."""
    from mlc.dialects.registry import make_context

    source = job.source
    module = parse_source(make_context(), source)
    stage = module_stage(module, source)
    reference = parse_reference(job, stage, args)
    spec = args.pipeline if args.pipeline is not None else rest_of_pipeline(stage)
    run_passes(module, spec, source, args.debug)
    if (final := module_stage(module, source)) != "triton":
        raise UsageError(f"the pipeline '{spec}' leaves {final} IR; {TOOL} runs triton IR "
                         f"(end the pipeline with convert-to-triton)")
    python = emit(module, source, args.debug)
    specs = input_specs(module, source)

    from mlc.codegen import runtime  # sets TRITON_INTERPRET=1 without a GPU, before any kernel

    # The interpreter computes masked-off lanes too (x / 0 where the mask is false): not ours to report.
    warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"triton\.runtime\.interpreter")
    on_gpu = runtime.DEVICE.type == "cuda"
    report = [f"{source.name}: {stage} IR; passes: {spec or '(none)'}; "
              f"device: {'cuda (GPU)' if on_gpu else 'cpu (Triton interpreter)'}"]
    report += [f"input {s.name}: {s.describe()}" for s in specs]
    inputs = make_inputs(specs, args.seed, args.int_range or default_int_range(specs), runtime.DEVICE)
    program = None if reference is None else AtenProgram(*reference, runtime.DEVICE)
    if program is not None:
        check_signature(program, specs)
    expected = program(inputs, check_types=True) if program is not None and args.check else []
    call = runtime.load_call(python)  # (the reference ran first: a wrong kernel may write an input)
    outputs = list(_call(call, inputs, source, args.debug))
    names = output_names(module)
    report += [f"output {k} {names[k] if k < len(names) else ''}: {statistics(t)}" for k, t in enumerate(outputs)]
    ok = True
    if args.check:
        lines, ok = check_outputs(outputs, expected, args)
        report += lines
    if args.bench:
        report += bench(call, inputs, outputs, program, on_gpu)
    return report, ok


def parse_reference(job: Job, stage: str, args: argparse.Namespace) -> tuple[ModuleOp, Source] | None:
    """The aten IR to check against (and time eager on): --reference, else aten input itself;
    None when neither --check nor --bench wants one. --check without one is an error."""
    from mlc.dialects.registry import make_context

    given = job.reference if job.reference is not None else (job.source if stage == "aten" else None)
    if args.check and given is None:
        raise UsageError(f"--check needs the aten IR this {stage} IR was compiled from: "
                         f"pass it as --reference ATEN.mlir")
    if given is None or not (args.check or args.bench):
        return None
    source = Source(given.name, given.text)  # parsed again: its own ops, its own positions
    module = parse_source(make_context(), source)
    if (found := module_stage(module, source)) != "aten":
        raise UsageError(f"--reference must be aten IR; {source.name} is {found} IR")
    return module, source


def _call(call: Callable[[list[Any]], Any], inputs: list[Any], source: Source, debug: bool) -> Sequence[Any]:
    """`call(inputs)`; a failure (a Triton compile error in a hand-edited kernel, a bad launch)
    is reported as the module's error, with the traceback only with --debug."""
    try:
        return call(list(inputs))
    except Exception as e:
        import traceback

        text = f"running the compiled module failed: {type(e).__name__}: {_first_line(e)}"
        text = "".join(traceback.format_exception(e)) + text if debug else text + " (--debug for the traceback)"
        raise CompileError(Diagnostic(source.name, 0, 0, text)) from None


def check_outputs(outputs: Sequence[Any], expected: Sequence[Any], args: argparse.Namespace) -> tuple[list[str], bool]:
    """One verdict line per output; False if any differs (or their numbers do)."""
    lines, ok = [], True
    if len(outputs) != len(expected):
        return [f"check: FAILED: the compiled module returns {len(outputs)} outputs, PyTorch {len(expected)}"], False
    for k, (got, want) in enumerate(zip(outputs, expected)):
        problem = compare(got, want, args.atol, args.rtol)
        if problem is None:
            lines.append(f"check output {k}: ok ({max_error(got, want)})")
        else:
            ok = False
            lines.append(f"check output {k}: MISMATCH with PyTorch eager: {problem}")
    bad = sum(line.startswith("check output") and "MISMATCH" in line for line in lines)
    lines.append(f"check: {'passed' if ok else 'FAILED'}: {len(outputs) - bad} of {len(outputs)} outputs match PyTorch eager")
    return lines, ok


def _read(path: str) -> str:
    try:
        return sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"cannot read {'<stdin>' if path == '-' else path}: {e}") from None


def jobs(args: argparse.Namespace) -> list[Job]:
    """The modules to run: the input (or each of its chunks), each with its reference."""
    from mlc.tools.diagnostics import split_input

    name = "<stdin>" if args.input == "-" else args.input
    split = split_input if args.split_input_file else (lambda text: [(0, text)])
    inputs = [Source(name, chunk) for _, chunk in split(_read(args.input))]
    if args.reference is None:
        return [Job(s, None) for s in inputs]
    references = [Source(args.reference, chunk) for _, chunk in split(_read(args.reference))]
    if len(references) != len(inputs):
        raise UsageError(f"{name} has {len(inputs)} chunks but {args.reference} has {len(references)}")
    return [Job(s, r) for s, r in zip(inputs, references)]


def run(argv: Sequence[str] | None = None) -> int:
    args = build_arg_parser().parse_args(argv)
    failed = False
    try:
        for k, job in enumerate(jobs(args)):
            if k:
                sys.stdout.write("// -----\n")
            try:
                report, ok = run_job(job, args)
            except CompileError as e:
                sys.stderr.write(e.diagnostic.format() + "\n")
                failed = True
                continue
            sys.stdout.write("\n".join(report) + "\n")
            sys.stdout.flush()
            if not ok:
                sys.stderr.write(f"{TOOL}: error: {job.source.name}: outputs differ from PyTorch eager\n")
                failed = True
    except UsageError as e:
        sys.stderr.write(f"{TOOL}: error: {e}\n")
        return 1
    return 1 if failed else 0


def main() -> None:
    tool_main(TOOL, run)


if __name__ == "__main__":
    main()
