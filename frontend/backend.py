"""The torch.compile backend: FX graph → aten IR → passes → Python → running Triton kernels.

    torch.compile(model, backend="mlc")      # found through the torch_dynamo_backends entry point
    mlc.compile_fx(gm, example_inputs)       # the same, for a GraphModule in hand

`mlc_backend` is what Dynamo calls: AOTAutograd (with mlc's decomposition table) turns the
Dynamo graph into aten graphs -- one forward, and one backward when something requires grad --
and hands each to `compile_graph`, which runs

    import_graph → the passes of `DEFAULT_PIPELINE` (cse-aten, ..., fuse, overlap-comm,
                   convert-to-triton, ..., plan-buffers) → emit_python → load_call

(the passes and emit_python skipped where the compile cache, `mlc.frontend.compile_cache`,
holds the graph: keyed by its imported IR, the pipeline, the versions and the device, and kept
across processes), and wraps the result so it takes the graph's inputs and returns the
graph's outputs (constants appended as trailing arguments, None outputs restored from
`output_spec`).

Symbolic sizes (after a shape change, or with `dynamic=True`) stay symbolic through the
pipeline: one compile for all sizes. Other symbolic inputs (a number Dynamo wrapped in a tensor,
a SymFloat) become constants, checked at each call (`mlc.frontend.traced_numbers`).

With `MLC_DUMP_DIR`, each graph's `timing.txt` gives the wall time of the import, of every pass
and its verification (a dumped graph is verified after each pass), of emitting and loading the
Python, and of the first call (Triton's compilation and autotuning, then the run), as
`mlc-opt --timing` prints them, and a row saying whether the compile cache held the graph (a
dumped graph is always compiled, to dump its passes).

A graph mlc cannot compile raises `MlcCompileError` naming the graph, the pass and the op; where
a pass failed, the message also names a reproducer file (the pass's input IR) and the `mlc-opt`
command that fails the same way on it. There is no silent eager fallback. `MLC_FALLBACK=1` opts
into running such graphs eagerly, with a warning.

Settings (`mlc.frontend.settings`): torch.compile's `mode` and `options`, over the environment:
`MLC_DUMP_DIR` (see `mlc.frontend.dump`), `MLC_PIPELINE` (a different pass pipeline, for
experiments), `MLC_CUDAGRAPHS`, `MLC_FALLBACK`, `MLC_DEBUG=1` (kernels assert that positions
loaded from memory, `x[idx]`, are in bounds: an out-of-range index raises "index out of bounds"
instead of reading outside the tensor; and the IR is verified after every pass). The cache is
the environment's alone: `MLC_CACHE_DIR` (where it lives: compiled graphs, emitted modules,
autotuned configs; see `mlc.codegen.runtime`), `MLC_CACHE=0` (no compile cache: every graph is
compiled, and the cache folder is not touched).

The IR is verified once, after the last pass, unless the graph is dumped or `MLC_DEBUG=1`: one
verification per pass was a quarter of the pipeline's time on GPT-2's training graphs. Where the
final IR does not verify, the graph is imported again and compiled verifying after each pass, so
that the error names the pass that broke it.
"""

from __future__ import annotations

import copy
import functools
import itertools
import operator
import os
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
import torch.fx

from mlc.frontend import traced_numbers
from mlc.frontend.importer import SizeOutput
from mlc.frontend.settings import Settings, compile_settings

if TYPE_CHECKING:
    from mlc.frontend.compile_cache import Entry, Layout
    from mlc.passes.pipeline import Timing

DEFAULT_PIPELINE = "cse-aten,fold-addmm,pad-mm,lower-aten,inline,propagate-indices,realize,split-reductions,reorder-loops,deps,fuse,overlap-comm,convert-to-triton,online-softmax,cse,plan-buffers"


def pipeline_spec(settings: Settings, explain_fusion: bool = False, keep_padded: bool = False) -> str:
    """The `pipeline` setting or the default; a dump explains fusion (fusion.txt) and the moved
    collectives (overlap.txt), `debug` makes kernels assert that loaded positions are in bounds
    (`check-indices`), `max_autotune` offers the autotuner every config, and `keep_padded`
    returns pad-mm's padded results uncopied (as Inductor returns them: GPT-2's logits are 206
    MB). Options go to the passes the spec names bare."""
    spec = settings.pipeline or DEFAULT_PIPELINE
    explain = ["explain=true"] if explain_fusion else []
    options = {"fuse": explain, "overlap-comm": explain,
               "realize": ["keep-padded-outputs=true"] if keep_padded else [],
               "convert-to-triton": (["check-indices=true"] if settings.debug else [])
               + (["autotune-pointwise=true"] if settings.max_autotune else [])}
    return ",".join(f"{p}{{{' '.join(options[p])}}}" if options.get(p) else p for p in spec.split(","))


class MlcCompileError(RuntimeError):
    """A graph mlc cannot compile; the message names the graph, the stage and the node or op."""


class MlcPassError(MlcCompileError):
    """A pass of the pipeline failed: `index` is its position, for the crash reproducer."""

    def __init__(self, message: str, index: int, located: bool = True):
        super().__init__(message)
        self.index, self.located = index, located


# Graphs are numbered in compile order across the process, forward and backward separately;
# the number names the graph in errors and in the dump (`graph_0_forward`, `graph_1_backward`, ...).
_graph_counter = itertools.count()


def compile_fx(gm: torch.fx.GraphModule, example_inputs: Sequence[Any], *, mode: str | None = None,
               options: dict[str, Any] | None = None) -> Callable[..., Any]:
    """Compile `gm` with mlc; the result is called like `gm` (positional tensors). `mode` and
    `options` are torch.compile's (`mlc.frontend.settings`).

    An aten-level graph (from make_fx, AOTAutograd or torch.export, with `meta["val"]` on its
    nodes) is compiled directly; any other graph (a Dynamo graph of torch functions) goes
    through AOTAutograd first, as `torch.compile(backend="mlc")` does.
    """
    settings = compile_settings(mode, options)
    if not _is_aten_graph(gm):
        output = gm.graph.output_node()
        if isinstance(output.args[0], (list, tuple)):
            return _aot_backend(gm, example_inputs, settings)
        # AOTAutograd wants tuple outputs: compile a copy returning (out,), and unwrap.
        graph = copy.deepcopy(gm.graph)
        graph.output_node().args = ((graph.output_node().args[0],),)
        compiled = _aot_backend(torch.fx.GraphModule(gm, graph), example_inputs, settings)
        return lambda *args: compiled(*args)[0]
    return _compile_or_fallback(gm, example_inputs, settings=settings)


def mlc_backend(gm: torch.fx.GraphModule, example_inputs: Sequence[Any], *, mode: str | None = None,
                options: dict[str, Any] | None = None) -> Callable[..., Any]:
    """The `torch.compile` backend, given torch.compile's `mode` and `options` where the user
    set them (`mlc.frontend.settings`; ValueError for one mlc does not know)."""
    return _aot_backend(gm, example_inputs, compile_settings(mode, options))


def _aot_backend(gm: torch.fx.GraphModule, example_inputs: Sequence[Any], settings: Settings) -> Callable[..., Any]:
    """AOTAutograd with mlc compiling forward and backward graphs."""
    from functorch.compile import make_boxed_func, min_cut_rematerialization_partition
    from torch._dynamo.backends.common import aot_autograd

    from mlc.frontend.decompositions import decomposition_table
    from mlc.passes.pipeline import gc_paused

    if torch.cuda.is_available():  # start the compile processes while AOTAutograd and mlc work
        from mlc.codegen.triton_helpers import compile_workers

        compile_workers()
    if traced_numbers.has_symbolic_numbers(gm, example_inputs):
        return traced_numbers.compile_with_numbers(gm, example_inputs,
                                                   functools.partial(_aot_backend, settings=settings))

    def compiler(kind: str) -> Callable[[torch.fx.GraphModule, Sequence[Any]], Callable[..., Any]]:
        def compile_boxed(graph: torch.fx.GraphModule, inputs: Sequence[Any]) -> Callable[..., Any]:
            # AOTAutograd calls compiled graphs with one list of arguments (the boxed convention).
            return make_boxed_func(_compile_or_fallback(graph, inputs, kind, settings))

        return compile_boxed

    backend = aot_autograd(
        fw_compiler=compiler("forward"),
        bw_compiler=compiler("backward"),
        inference_compiler=compiler("inference"),
        decompositions=decomposition_table(),
        # Inductor's partitioner: the forward saves few, small tensors and the backward
        # recomputes the cheap pointwise ops from them (fused into its kernels), where the
        # default partitioner saves every intermediate the backward reads (a float32
        # log-softmax over the vocabulary, written and read back once per step).
        partition_fn=functools.partial(min_cut_rematerialization_partition, compiler="inductor"),
    )
    with gc_paused():  # AOTAutograd's tracing too, not only mlc's compile (passes/pipeline.py)
        return backend(gm, example_inputs)


def _compile_or_fallback(gm: torch.fx.GraphModule, example_inputs: Sequence[Any], kind: str = "forward",
                         settings: Settings | None = None) -> Callable[..., Any]:
    from mlc.frontend.opaque import compile_without_objects

    settings = settings or Settings.from_environment()
    try:  # object inputs a graph only returns (a DeviceMesh) are passed around it
        return compile_without_objects(gm, example_inputs, lambda g, inputs: compile_graph(g, inputs, kind, settings))
    except MlcCompileError as e:
        if not settings.fallback:
            raise
        warnings.warn(f"{e}\nfallback on (MLC_FALLBACK=1 or the fallback option): running this graph eagerly",
                      stacklevel=2)
        return gm


# ---------------------------------------------------------------------------------------------


class CompiledGraph:
    """A compiled aten graph, called with the graph's inputs; returns its outputs."""

    def __init__(
        self,
        graph_id: str,
        source: str,
        call: Callable[[list[Any]], Sequence[Any]],
        constants: list[torch.Tensor],
        output_spec: list[int | None | SizeOutput],
        output_structure: Any,
        host_scalars: list[int],
        relayouts: dict[int, tuple[tuple[int, ...], tuple[int, ...]] | None],
        tokens: Sequence[int] = (),
        output_relayouts: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] | None = None,
        host_epilogue: Callable[..., Any] | None = None,
        size_sources: dict[Any, tuple[int, int | None]] | None = None,
    ):
        self.graph_id = graph_id
        self._sizes = {k: _size_evaluator(o.expr, size_sources or {})
                       for k, o in enumerate(output_spec) if isinstance(o, SizeOutput)}
        self.source = source
        self._call = call
        self._constants = constants
        self._output_spec = output_spec
        self._output_structure = output_structure
        # AOTAutograd's graphs return one flat tuple: rebuilt with one tuple() per call
        self._flat_output = isinstance(output_structure, tuple) and not any(
            isinstance(s, (tuple, list)) for s in output_structure)
        self._host_scalars = host_scalars
        self._relayouts = relayouts
        self._tokens = tokens  # effect-token inputs: AOTAutograd passes None, the IR has an empty tensor
        self._output_relayouts = output_relayouts or {}
        self._host_epilogue = host_epilogue  # numbers read out of the results (`.item()`)

    def time_first_call(self, timing: Timing, dump: Any) -> None:
        """Add the first call of the module (Triton's compilation and autotuning, then the run)
        to `timing` and rewrite the dump's timing.txt with it; later calls go straight through."""
        call = self._call

        def first(args: list[Any]) -> Sequence[Any]:
            self._call = call
            start = time.perf_counter()
            outputs = call(args)
            if torch.cuda.is_available():
                torch.cuda.synchronize()
            timing.add("first call (Triton compile, autotune, run)", time.perf_counter() - start)
            dump.write("timing.txt", timing.report())
            return outputs

        self._call = first

    def __call__(self, *args: Any) -> Any:
        inputs = list(args)
        for i in self._tokens:
            inputs[i] = torch.empty(0, device=_device())
        for i in self._host_scalars:  # 0-d CPU tensors next to CUDA ones, as eager allows
            inputs[i] = inputs[i].to(_device())
        if self._relayouts:
            from mlc.codegen.triton_helpers import ensure_layout

            for i, layout in self._relayouts.items():
                # A symbolic layout is the row-major one of whatever sizes come.
                inputs[i] = inputs[i].contiguous() if layout is None else ensure_layout(inputs[i], *layout)
        results = list(self._call([*inputs, *self._constants]))
        for i, (size, stride) in self._output_relayouts.items():
            results[i] = torch.empty_strided(size, stride, dtype=results[i].dtype, device=results[i].device).copy_(results[i])
        flat = [None if i is None else self._sizes[k](inputs) if k in self._sizes else results[i]
                for k, i in enumerate(self._output_spec)]
        outputs = tuple(flat) if self._flat_output else _rebuild(self._output_structure, iter(flat))
        return outputs if self._host_epilogue is None else self._host_epilogue(*outputs)

    def __repr__(self) -> str:
        return f"<mlc CompiledGraph {self.graph_id}>"


def _size_evaluator(expr: Any, sources: dict[Any, tuple[int, int | None]]) -> Callable[[Sequence[Any]], int]:
    """A function of the graph's inputs computing the size `expr` (of size symbols) from the
    inputs that give each symbol: a size input, or a tensor's dim."""
    import sympy

    from mlc.dialects.sym import CeilDiv, FloorDiv, ModularIndexing

    symbols = sorted(expr.free_symbols, key=lambda s: s.name)
    if any(s not in sources for s in symbols):
        raise MlcCompileError(f"mlc: the returned size {expr} uses a size no input gives")
    functions = {FloorDiv.__name__: operator.floordiv, CeilDiv.__name__: lambda a, b: -(-a // b),
                 ModularIndexing.__name__: lambda x, d, m: (x // d) % m, "Min": min, "Max": max}
    fn = sympy.lambdify(symbols, expr, modules=[functions])
    where = [sources[s] for s in symbols]
    return lambda inputs: int(fn(*[inputs[p] if d is None else inputs[p].size(d) for p, d in where]))


def compile_graph(gm: torch.fx.GraphModule, example_inputs: Sequence[Any], kind: str = "forward",
                  settings: Settings | None = None) -> CompiledGraph:
    """Compile one aten graph with `settings` (None: the environment's); errors raise
    MlcCompileError. `kind` ("forward", "backward", "inference": a graph without a backward,
    all of whose outputs go to the user) names its dump folder, `graph_N_<kind>`."""
    from mlc.frontend import cudagraphs
    from mlc.frontend.dump import GraphDump
    from mlc.frontend.importer import UnsupportedGraph, import_graph
    from mlc.passes.pipeline import Timing, gc_paused

    settings = settings or Settings.from_environment()
    graph_id = f"graph_{next(_graph_counter)}"
    host_scalars = _check_devices(graph_id, example_inputs)
    timing = Timing()
    with gc_paused():  # the import and emit-python too, not only the pipeline (passes/pipeline.py)
        start = time.perf_counter()
        _strides_from_examples(gm, example_inputs)
        try:
            gm, tokens = _effects_inlined(gm)
            gm, host_epilogue = _host_epilogue(gm)
            imported = import_graph(gm)
        except UnsupportedGraph as e:
            raise MlcCompileError(f"mlc: {graph_id}: cannot import the graph: {e}") from e
        timing.add("import", time.perf_counter() - start)

        dump = GraphDump(Path(settings.dump_dir), f"{graph_id}_{kind}") if settings.dump_dir else None
        # A forward's outputs go to the user and, saved, to the backward, which AOTAutograd compiles
        # for the strides `_report_output_strides` gives it; a backward's are gradients, returned in
        # the traced strides.
        keep_padded = kind != "backward"
        spec = pipeline_spec(settings, dump is not None, keep_padded)
        verify_each = dump is not None or settings.debug
        entry = _cached_or_compiled(gm, imported.module, spec, graph_id, dump, timing, verify_each)

    from mlc.codegen.runtime import DEVICE, load_call

    # AOTAutograd may call the compiler with its FakeTensorMode still active (torch 2.11 does):
    # a constant moved to the device there would be a FakeTensor, failing at the first call.
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    with unset_fake_temporarily():
        constants = [t.to(DEVICE) for t in imported.constants.values()]
    relayouts = _input_relayouts(entry.input_layouts, example_inputs)
    output = gm.graph.output_node().args[0]
    start = time.perf_counter()
    call = load_call(entry.source)
    timing.add("load the module (@triton.jit)", time.perf_counter() - start)
    graphed = cudagraphs.policy(kind, not imported.size_sources, entry.launches, settings)
    if graphed is not None:
        names = [n.name for n in gm.graph.find_nodes(op="placeholder")]
        call = cudagraphs.CudaGraphCall(call, name=graph_id, warn=graphed == "asked",
                                        staged=cudagraphs.staged_inputs(kind, names))
    output_relayouts = _output_relayouts(entry.output_layouts, output, imported.output_spec, keep_padded)
    if host_epilogue is None:
        _report_output_strides(entry.output_layouts, output_relayouts, imported.output_spec)
    compiled = CompiledGraph(
        graph_id, entry.source, call, constants, imported.output_spec, output, host_scalars, relayouts,
        tokens, output_relayouts, host_epilogue, imported.size_sources,
    )
    if dump is not None:
        dump.write("timing.txt", timing.report())
        compiled.time_first_call(timing, dump)
    return compiled


def _cached_or_compiled(gm: torch.fx.GraphModule, module: Any, spec: str, graph_id: str, dump: Any,
                        timing: Timing, verify_each: bool) -> Entry:
    """The compile cache's entry for the imported `module` (`mlc.frontend.compile_cache`), else
    the pipeline and emit-python run on it, and the result stored.

    With `MLC_DUMP_DIR` the pipeline always runs, so that the dump shows every pass; the row
    `compile cache: <status> <key>` of timing.txt says what the cache held: `hit` (an entry
    equal to this compile), `miss` (none, or a damaged one: now stored), `stale` (an entry
    that differs: replaced) or `off` (`MLC_CACHE=0`)."""
    from mlc.frontend import compile_cache
    from mlc.frontend.dump import print_ir

    if not compile_cache.enabled():
        if dump is not None:
            timing.add("compile cache: off", 0.0)
        return _compiled(gm, module, spec, graph_id, dump, timing, verify_each)
    start = time.perf_counter()
    key = compile_cache.graph_key(print_ir(module), spec)
    cached = compile_cache.load(key)
    seconds = time.perf_counter() - start
    if cached is not None and dump is None:
        timing.add(f"compile cache: hit {key}", seconds)
        return cached
    entry = _compiled(gm, module, spec, graph_id, dump, timing, verify_each)
    start = time.perf_counter()
    if entry != cached:
        compile_cache.store(key, entry)
    status = "miss" if cached is None else "hit" if entry == cached else "stale"
    timing.add(f"compile cache: {status} {key}", seconds + time.perf_counter() - start)
    return entry


def _compiled(gm: torch.fx.GraphModule, module: Any, spec: str, graph_id: str, dump: Any, timing: Timing,
              verify_each: bool) -> Entry:
    """Run the pipeline and emit-python on `module` (in place), verifying after each pass or
    (`verify_each` False) after the last: the compile cache's Entry."""
    from mlc.codegen.emit_python import EmitError, emit_python
    from mlc.frontend.compile_cache import Entry

    try:
        run_pipeline(module, spec, graph_id, dump, timing, verify_each=verify_each)
    except MlcPassError as e:
        e = e if e.located else _located(gm, spec, graph_id, e)
        raise MlcCompileError(f"{e}\n{_reproducer(graph_id, gm, spec, e.index, dump)}") from e.__cause__
    start = time.perf_counter()
    try:
        source = emit_python(module)
    except EmitError as e:
        raise MlcCompileError(f"mlc: {graph_id}: emit-python: {e}") from e
    timing.add("emit-python", time.perf_counter() - start)
    if dump is not None:
        dump.write("module.py", source)
    return Entry(source, _input_layouts(module), _output_layouts(module), _launches(module))


def run_pipeline(module: Any, spec: str, graph_id: str = "module", dump: Any = None, timing: Timing | None = None,
                 verify_each: bool = True) -> None:
    """Run a pass pipeline over `module` in place, dumping after each pass when `dump` is set,
    timing each pass into `timing` when given, and verifying after each pass or (`verify_each`
    False) once after the last."""
    from mlc.dialects.registry import make_context
    from mlc.passes import pipeline

    try:
        passes = pipeline.load_pipeline(spec)
    except Exception as e:  # an unknown pass name or option: a configuration error
        raise MlcCompileError(f"mlc: bad pipeline {spec!r}: {e}") from e
    if dump is not None:
        dump.after_pass(None, module)  # 00-aten.mlir: the imported module
    try:
        pipeline.run_pipeline(module, passes, make_context(), after_pass=dump.after_pass if dump else None,
                              on_remark=dump.on_remark if dump else None, timing=timing, verify_each=verify_each)
    except pipeline.PassFailed as e:
        where = "left IR that does not verify" if e.in_verify else "failed"
        raise MlcPassError(f"mlc: {graph_id}: pass '{e.pass_name}' {where}: {_message(e.cause)}", e.index,
                           e.located) from e.cause


def _located(gm: torch.fx.GraphModule, spec: str, graph_id: str, failed: MlcPassError) -> MlcPassError:
    """The error naming the pass that broke the IR, where only the pipeline's output was
    verified (`failed`): a fresh import compiled verifying after each pass; `failed` itself if
    that compile does not fail."""
    from mlc.frontend.importer import import_graph

    try:
        run_pipeline(import_graph(gm).module, spec, graph_id, verify_each=True)
    except MlcPassError as e:
        return e
    return failed


def _reproducer(graph_id: str, gm: torch.fx.GraphModule, spec: str, failed: int, dump: Any) -> str:
    """Write the failing pass's input IR, with the mlc-opt command that runs the rest of the
    pipeline on it, and say where (MLIR's local crash reproducer): the graph is imported again
    and the passes before the failing one rerun, so nothing is kept while compiling succeeds.
    The file goes to the graph's dump folder, else to `<tmp>/mlc-reproducers/`."""
    import tempfile

    from mlc.dialects.registry import make_context
    from mlc.frontend.dump import print_ir
    from mlc.frontend.importer import import_graph
    from mlc.passes import pipeline

    passes = pipeline.load_pipeline(spec)
    rest = ",".join(str(p.pipeline_pass_spec()) for p in passes[failed:])
    try:
        module = import_graph(gm).module
        pipeline.run_pipeline(module, passes[:failed], make_context())
    except Exception as e:  # noqa: BLE001 (the reproducer is a courtesy: never mask the error)
        return f"  (no reproducer: rerunning the passes before it failed differently: {_message(e)})"
    folder = dump.dir if dump is not None else Path(tempfile.gettempdir()) / "mlc-reproducers"
    path = folder / ("reproducer.mlir" if dump is not None else f"{graph_id}-{os.getpid()}.mlir")
    command = f"mlc-opt {path} -p '{rest}'"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(f"// mlc crash reproducer: the input of pass '{passes[failed].name}'; run\n//   {command}\n"
                        + print_ir(module))
    except OSError as e:
        return f"  (no reproducer: cannot write {path}: {e.strerror})"
    reduced = path.with_suffix(".reduced.mlir")
    return f"  reproducer: {path}\n  reproduce with: {command}\n  shrink with: mlc-reduce {path} -p '{rest}' -o {reduced}"


# ---------------------------------------------------------------------------------------------


def _message(e: BaseException) -> str:
    from xdsl.utils.exceptions import DiagnosticException

    text = str(e).strip()
    if isinstance(e, (DiagnosticException, ValueError, NotImplementedError)) and text:
        return text  # messages written for users
    return f"{type(e).__name__}: {text}" if text else type(e).__name__  # a crash: say what kind


def _device() -> torch.device:
    from mlc.codegen.runtime import DEVICE

    return DEVICE


def _check_devices(graph_id: str, example_inputs: Sequence[Any]) -> list[int]:
    """Inputs must live where the kernels run; returns the 0-d CPU tensors to move per call."""
    device = _device()
    host_scalars = []
    for i, x in enumerate(example_inputs):
        if not isinstance(x, torch.Tensor) or x.device.type == device.type:
            continue
        if x.device.type == "cpu" and x.dim() == 0:
            host_scalars.append(i)
            continue
        raise MlcCompileError(
            f"mlc: {graph_id}: input {i} is on {x.device}, but mlc's kernels run on {device} "
            "(Triton on CUDA when a GPU is present, else Triton's interpreter on CPU tensors)"
        )
    return host_scalars


def _layout(attr: Any) -> Layout | None:
    """A layout attribute's (sizes, strides), or None where they are symbolic."""
    try:
        return tuple(int(e) for e in attr.sizes), tuple(int(e) for e in attr.strides)
    except TypeError:
        return None


def _wrapper(module: Any) -> Any:
    from mlc.dialects.triton import WrapperOp

    return next((op for op in module.body.block.ops if isinstance(op, WrapperOp)), None)


def _input_layouts(module: Any) -> list[Layout | None]:
    """The layout the compiled module assumed for each input (the contiguous one today;
    None for a size)."""
    from mlc.dialects.triton import GRAPH_INPUTS, InputOp

    wrapper = _wrapper(module)
    if wrapper is None:
        return []
    return [_layout(op.layout) if isinstance(op, InputOp) else None
            for op in wrapper.body.block.ops if isinstance(op, GRAPH_INPUTS)]


def _input_relayouts(layouts: Sequence[Layout | None], example_inputs: Sequence[Any]) -> dict[int, Layout | None]:
    """Inputs whose strides differ from the layout the IR assumed for them, with that layout:
    such inputs are copied into it on each call, since the kernels index them with the IR's
    strides. An input of symbolic sizes (layout None) is made row-major on each call, as the
    IR assumed (a no-op for one that is): its example's strides are not compared, which would
    guard on their values."""
    fixes: dict[int, Layout | None] = {}
    for i, (x, layout) in enumerate(zip(example_inputs, layouts)):
        if not isinstance(x, torch.Tensor):
            continue
        if layout is None:
            fixes[i] = None
            continue
        size, stride = layout
        if tuple(x.shape) == size and all(n == 1 or a == b for n, a, b in zip(size, x.stride(), stride)):
            continue
        fixes[i] = layout
    return fixes


def _launches(module: Any) -> tuple[int, int]:
    """How many Triton kernels and extern calls the compiled module's `call` launches."""
    from mlc.dialects.triton import ExternOp, LaunchOp

    wrapper = _wrapper(module)
    ops = list(wrapper.body.block.ops) if wrapper is not None else []
    return sum(isinstance(op, LaunchOp) for op in ops), sum(isinstance(op, ExternOp) for op in ops)


def _output_layouts(module: Any) -> list[Layout | None]:
    """The layout of each result the compiled module returns (None: unknown or symbolic)."""
    from mlc.dialects.triton import ReturnOp

    wrapper = _wrapper(module)
    if wrapper is None:
        return []
    layouts: dict[str, Any] = {}
    returned: list[str] = []
    for op in wrapper.body.block.ops:
        if isinstance(op, ReturnOp):
            returned = op.output_names
        for name in op.defined_names():
            if (layout := op.layout_of(name)) is not None:
                layouts[name] = layout
    return [_layout(layouts[name]) if name in layouts else None for name in returned]


def _output_relayouts(layouts: Sequence[Layout | None], structure: Any, output_spec: Sequence[int | None],
                      keep_padded: bool = False) -> dict[int, Layout]:
    """Results whose layout is not the strides the FX graph promises for that output (its
    `meta["val"]`), with those strides: copied into them on each call. A returned view (a
    transposed mm result) or a computed buffer may be laid out otherwise.

    pad-mm's padded results stay padded where `keep_padded` (inference and forward graphs,
    `--realize`'s `keep-padded-outputs`; a forward reports them, `_report_output_strides`); in a
    backward `--realize` writes them into the promised strides with a kernel. What is left here
    is rarer: a view whose strides the importer did not record (not dense), an extern's result
    laid out otherwise than traced."""
    from mlc.dialects.buffer_layout import is_padded

    nodes = _rebuild_leaves(structure)
    fixes = {}
    for node, i in zip(nodes, output_spec):
        value = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
        if not isinstance(i, int) or not isinstance(value, torch.Tensor) or i >= len(layouts) or layouts[i] is None:
            continue
        size, stride = layouts[i]
        expected = tuple(value.stride())
        if not all(isinstance(e, int) for e in expected):
            continue  # symbolic strides (never int() them: that would specialize them)
        if any(n != 1 and b == 0 for n, b in zip(size, expected)):
            continue  # an expanded output: no dense tensor has those strides (its copies are equal)
        if any(n != 1 and a != b for n, a, b in zip(size, stride, expected)):
            if not (keep_padded and is_padded(size, stride, expected)):
                fixes[i] = (size, expected)
    return fixes


def _strides_from_examples(gm: torch.fx.GraphModule, example_inputs: Sequence[Any]) -> None:
    """Give each input the strides of its example where both are static and they differ: the
    graph is called with those (a backward's saved tensors as the forward returned them, which
    AOTAutograd restrides the examples to, see `_report_output_strides`; its nodes keep the
    traced strides). The importer reads the strides from the nodes."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for node, example in zip(placeholders, example_inputs):
        val = node.meta.get("val")
        if not (isinstance(val, torch.Tensor) and isinstance(example, torch.Tensor)):
            continue
        static = all(isinstance(d, int) for d in (*val.shape, *val.stride(), *example.shape, *example.stride()))
        if static and tuple(val.shape) == tuple(example.shape) and val.stride() != example.stride():
            node.meta["val"] = val.as_strided(val.shape, example.stride())


def _report_output_strides(layouts: Sequence[Layout | None], relayouts: dict[int, Layout],
                           output_spec: Sequence[int | None | SizeOutput]) -> None:
    """Tell AOTAutograd the strides each output of the graph is returned with, as Inductor does
    (`TracingContext.report_output_strides`, which AOTAutograd opens around a forward's
    compile): it compiles the backward for the saved tensors' real strides, so pad-mm's padded
    logits are saved and read padded instead of copied into the traced strides. None where
    unknown (symbolic, or not a tensor mlc computes)."""
    from torch._guards import TracingContext

    context = TracingContext.try_get()
    if context is None or context.output_strides is None:
        return
    for i in output_spec:  # one per output of the FX graph, in order
        known = isinstance(i, int) and i < len(layouts) and layouts[i] is not None
        context.output_strides.append((relayouts[i] if i in relayouts else layouts[i])[1] if known else None)


def _rebuild_leaves(structure: Any) -> list[Any]:
    """The leaves of the output structure, in `_rebuild`'s order."""
    if isinstance(structure, (tuple, list)):
        return [leaf for s in structure for leaf in _rebuild_leaves(s)]
    return [structure]


def _effects_inlined(gm: torch.fx.GraphModule) -> tuple[torch.fx.GraphModule, list[int]]:
    """`gm` with each `with_effects(token, op, *args)` as the plain call `op(*args)`.

    AOTAutograd threads a token through ops registered as having side effects (linalg's
    `_linalg_check_errors` after a factorization) and returns it as an extra output; the
    token out of a `with_effects` becomes the token that went in. An op that returns nothing
    is then dropped by the importer, as trace-time checks are: mlc's kernels do not raise on
    invalid input (a singular matrix gives what the factorization gives, with eager's error).
    Also returns the positions of the token inputs, which AOTAutograd passes as None.
    """
    with_effects = torch.ops.higher_order.with_effects
    if not any(n.target is with_effects for n in gm.graph.nodes):
        return gm, []
    graph = copy.deepcopy(gm.graph)
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    tokens = set()
    for node in [n for n in graph.nodes if n.target is with_effects]:
        token, op, *args = node.args
        if token in placeholders:
            tokens.add(placeholders.index(token))
        with graph.inserting_before(node):
            call = graph.call_function(op, tuple(args), dict(node.kwargs))
        values = node.meta.get("val") or (None,)
        call.meta["val"] = values[1] if len(values) == 2 else (tuple(values[1:]) if len(values) > 2 else None)
        for user in list(node.users):  # getitem(node, k): the token for k = 0, else result k - 1
            k = user.args[1]
            if k == 0:
                user.replace_all_uses_with(token)
            elif len(values) == 2:
                user.replace_all_uses_with(call)
            else:
                user.args = (call, k - 1)
                continue
            graph.erase_node(user)
        graph.erase_node(node)
    return torch.fx.GraphModule(gm, graph), sorted(tokens)


_HOST_OPS = (
    torch.ops.aten._local_scalar_dense.default,  # `.item()`
    torch.ops.aten.scalar_tensor.default,  # Dynamo's wrapping of a returned number
    torch.ops.aten._assert_scalar.default,  # Dynamo's checks of a number's range
)


def _host_epilogue(gm: torch.fx.GraphModule) -> tuple[torch.fx.GraphModule, torch.fx.GraphModule | None]:
    """Split off the numbers a graph reads out of its tensors (`.item()`) and only returns.

    Such a number is a host value: mlc compiles the tensor part, which returns the tensors read,
    and the host part runs on its results as eager runs it (the `.item()`s, Dynamo's range checks
    on them, `scalar_tensor` of a returned number). A graph that computes tensors from such a
    number (a size from `.tolist()`) is returned whole, for the importer to report.
    """
    items = [n for n in gm.graph.nodes if n.target is torch.ops.aten._local_scalar_dense.default]
    host: list[torch.fx.Node] = []
    seen = set(items)
    for node in gm.graph.nodes:  # topological: every user of a host node is host too
        if node in seen or any(isinstance(a, torch.fx.Node) and a in seen for a in node.all_input_nodes):
            if node.op == "output":
                continue
            if isinstance(node.target, torch._ops.OpOverload) and node.target not in _HOST_OPS:
                return gm, None  # a tensor op on a number: data-dependent, not host work
            seen.add(node)
            host.append(node)
    if not host:
        return gm, None
    hosted = set(host)
    output = gm.graph.output_node()
    leaves = [leaf for leaf in _rebuild_leaves(output.args[0]) if isinstance(leaf, torch.fx.Node)]
    boundary = list(dict.fromkeys(
        [leaf for leaf in leaves if leaf not in hosted]
        + [a for n in host for a in n.all_input_nodes if a not in hosted]
    ))
    device = copy.deepcopy(gm.graph)
    copies = dict(zip(gm.graph.nodes, device.nodes))
    device.output_node().args = (tuple(copies[n] for n in boundary),)
    for node in reversed(host):
        device.erase_node(copies[node])
    epilogue = torch.fx.Graph()
    env = {n: epilogue.placeholder(f"result_{i}") for i, n in enumerate(boundary)}
    for node in host:
        env[node] = epilogue.node_copy(node, lambda a: env[a])
    epilogue.output(torch.fx.node.map_arg(output.args[0], lambda a: env[a]))
    return torch.fx.GraphModule(gm, device), torch.fx.GraphModule(gm, epilogue)


def _is_aten_graph(gm: torch.fx.GraphModule) -> bool:
    """Whether `gm` is already an aten graph with fake values, ready for the importer."""
    for node in gm.graph.nodes:
        if node.op in ("call_module", "call_method"):
            return False
        if node.op == "placeholder" and "val" not in node.meta:
            return False
        if node.op == "call_function" and not (
            isinstance(node.target, torch._ops.OpOverload) or node.target is operator.getitem
        ):
            return False
    return True


def _rebuild(structure: Any, flat: Any) -> Any:
    """The graph's output structure (nested lists/tuples of nodes) with values in its leaves."""
    if isinstance(structure, tuple):
        return tuple(_rebuild(s, flat) for s in structure)
    if isinstance(structure, list):  # FX's immutable_list included
        return [_rebuild(s, flat) for s in structure]
    return next(flat)
