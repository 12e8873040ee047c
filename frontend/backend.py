"""The torch.compile backend: compiles each aten graph it is handed into a callable that runs mlc's kernels.

    torch.compile(model, backend="mlc")      # found through the torch_dynamo_backends entry point
    mlc.compile_fx(gm, example_inputs)       # the same, for a GraphModule in hand

`mlc_backend` is what Dynamo calls: AOTAutograd (with mlc's decomposition table) turns the
Dynamo graph into aten graphs -- one forward, and one backward when something requires grad --
and hands each to `compile_graph`, which runs

    fx_graph (rewrites) → import_graph → the `default` pipeline (`mlc.passes.registry`: cse-aten,
    ..., fuse, overlap-comm, convert-to-triton, ..., plan-buffers) → emit_module → load_call

and returns a `CompiledGraph` (`mlc.frontend.compiled_graph`), which takes the graph's inputs
and returns its outputs. Everything it needs of the compile besides the graph is the
`EmittedModule` emit_module returns (`mlc.codegen.emitted`: the source, the layouts its `call`
assumes and gives, its launch counts); the triton IR is not read after emission. The compile
cache (`mlc.frontend.compile_cache`: keyed by the imported IR, the pipeline, the versions and
the device, kept across processes) stores that object, and where it holds the graph the passes
and emission are skipped.

Symbolic sizes (after a shape change, or with `dynamic=True`) stay symbolic through the
pipeline: one compile for all sizes. Other symbolic inputs (a number Dynamo wrapped in a tensor,
a SymFloat) become constants, checked at each call (`mlc.frontend.traced_numbers`).

With `MLC_DUMP_DIR`, each graph's `timing.txt` gives the wall time of the import, of every pass
and its verification (a dumped graph is verified after each pass), of emitting and loading the
Python, and of the first call (Triton's compilation and autotuning, then the run), as
`mlc-opt --timing` prints them, and a row saying whether the compile cache held the graph (a
dumped graph is always compiled, to dump its passes).

A graph mlc cannot compile raises `MlcCompileError` (`mlc.frontend.errors`) naming the graph,
the pass and the op; where a pass failed, the message also names a reproducer file (the pass's
input IR) and the `mlc-opt` command that fails the same way on it. There is no silent eager
fallback. `MLC_FALLBACK=1` opts into running such graphs eagerly, with a warning.

Settings (`mlc.frontend.settings`): torch.compile's `mode` and `options`, over the environment:
`MLC_DUMP_DIR` (see `mlc.frontend.dump`), `MLC_PIPELINE` (a different pass pipeline, for
experiments), `MLC_CUDAGRAPHS`, `MLC_FALLBACK`, `MLC_DEBUG=1` (kernels assert that positions
loaded from memory, `x[idx]`, are in bounds: an out-of-range index raises "index out of bounds"
instead of reading outside the tensor; and the IR is verified after every pass). The cache is
the environment's alone: `MLC_CACHE_DIR` (where it lives: compiled graphs, emitted modules,
autotuned configs; see `mlc.codegen.cache`), `MLC_CACHE=0` (no compile cache: every graph is
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
import os
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
import torch.fx

from mlc.frontend import channels_last, compiled_graph, fx_graph, joint_graph, traced_numbers
from mlc.frontend.compiled_graph import CompiledGraph
from mlc.frontend.errors import MlcCompileError, MlcPassError
from mlc.frontend.settings import Settings, compile_settings

if TYPE_CHECKING:
    from mlc.codegen.emitted import EmittedModule
    from mlc.passes.pipeline import Timing

__all__ = ["CompiledGraph", "MlcCompileError", "compile_fx", "compile_graph", "mlc_backend", "pipeline_spec",
           "run_pipeline"]


def pipeline_spec(settings: Settings, explain_fusion: bool = False, keep_padded: bool = False) -> str:
    """The `pipeline` setting or the default; a dump explains fusion (fusion.txt) and the moved
    collectives (overlap.txt), `debug` makes kernels assert that loaded positions are in bounds
    (`check-indices`), `max_autotune` offers the autotuner every config, `fusion="model"` ranks
    fusions by predicted time, `tune` other than "all" keeps the configs `rank-configs` ranks
    fastest (the pass runs after convert-to-triton), `gemm="triton"` makes
    mm/addmm Triton GEMMs (TF32 for f32 operands where torch allows it now; "auto": each timed
    against cuBLAS plus its epilogue), and `keep_padded`
    returns pad-mm's padded results uncopied (as Inductor returns them: GPT-2's logits are 206
    MB). Options go to the passes the spec names bare."""
    from mlc.passes.registry import PIPELINES

    spec = settings.pipeline or "default"
    passes = [q for p in spec.split(",") for q in (PIPELINES[p].spec.split(",") if p in PIPELINES else [p])]
    explain = ["explain=true"] if explain_fusion else []
    triton_gemm = settings.gemm in ("triton", "auto")
    if settings.tune != "all" and "convert-to-triton" in passes and "rank-configs" not in passes:
        passes.insert(passes.index("convert-to-triton") + 1, "rank-configs")
    options = {"fuse": explain + (["priority=model"] if settings.fusion == "model" else []),
               "overlap-comm": explain, "rank-configs": [f"tune={settings.tune}"] + explain,
               "lower-aten": ["gemm=triton"] if triton_gemm else [],
               "realize": ["keep-padded-outputs=true"] if keep_padded else [],
               "convert-to-triton": (["check-indices=true"] if settings.debug else [])
               + (["autotune-pointwise=true"] if settings.max_autotune else [])
               + (["tf32=true"] if triton_gemm and torch.backends.cuda.matmul.allow_tf32 else [])
               + (["gemm=measure"] if settings.gemm == "auto" else [])}
    return ",".join(f"{p}{{{' '.join(options[p])}}}" if options.get(p) else p for p in passes)


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
    if not fx_graph.is_aten_graph(gm):
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
            if kind == "inference" and settings.channels_last:  # a training graph's: `joint_graph.partition`
                channels_last.to_channels_last(graph, [n.meta.get("val") for n in graph.graph.find_nodes(op="placeholder")])
            # AOTAutograd calls compiled graphs with one list of arguments (the boxed convention).
            return compiled_graph.boxed(_compile_or_fallback(graph, inputs, kind, settings))

        return compile_boxed

    backend = aot_autograd(
        fw_compiler=compiler("forward"),
        bw_compiler=compiler("backward"),
        inference_compiler=compiler("inference"),
        decompositions=decomposition_table(),
        partition_fn=functools.partial(joint_graph.partition, channels_last=settings.channels_last),
        keep_inference_input_mutations=True,  # the graphs write them (`fx_graph.input_mutations`)
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


def _saved_for_backward(outputs: int) -> range:
    """The positions among the `outputs` of the forward graph AOTAutograd is compiling now of
    the tensors saved for its backward (`tensors_saved_for_backwards_slice` of the metadata
    AOTAutograd puts in the tracing context; empty where there is none to read)."""
    from torch._guards import TracingContext

    context = TracingContext.try_get()
    metadata = getattr(context, "fw_metadata", None)
    try:
        return range(*metadata.tensors_saved_for_backwards_slice.indices(outputs))
    except (AttributeError, AssertionError, TypeError):  # no metadata, or not yet counted
        return range(0)


# ---------------------------------------------------------------------------------------------


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
        fx_graph.strides_from_examples(gm, example_inputs)
        try:
            gm, tokens = fx_graph.effects_inlined(gm)
            gm, mutated_inputs = fx_graph.input_mutations(gm)
            gm, host_epilogue = fx_graph.host_epilogue(gm)
            imported = import_graph(gm)
        except UnsupportedGraph as e:
            raise MlcCompileError(f"mlc: {graph_id}: cannot import the graph: {e}") from e
        timing.add("import", time.perf_counter() - start)

        dump = (GraphDump(Path(settings.dump_dir), f"{graph_id}_{kind}", settings.cost_target)
                if settings.dump_dir else None)
        # A forward's outputs go to the user and, saved, to the backward, which AOTAutograd compiles
        # for the strides `compiled_graph.report_output_strides` gives it; a backward's are gradients, returned in
        # the traced strides.
        keep_padded = kind != "backward"
        spec = pipeline_spec(settings, dump is not None, keep_padded)
        verify_each = dump is not None or settings.debug
        emitted = _cached_or_compiled(gm, imported.module, spec, graph_id, dump, timing, verify_each)

    from mlc.codegen.runtime import DEVICE, load_call

    # AOTAutograd may call the compiler with its FakeTensorMode still active (torch 2.11 does):
    # a constant moved to the device there would be a FakeTensor, failing at the first call.
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    with unset_fake_temporarily():
        constants = [t.to(DEVICE) for t in imported.constants.values()]
    output = gm.graph.output_node().args[0]
    saved = (_saved_for_backward(len(fx_graph.output_leaves(output)))
             if kind == "forward" and not tokens and host_epilogue is None else range(0))
    output_relayouts = compiled_graph.output_relayouts(emitted.output_layouts, output, imported.output_spec,
                                                       keep_padded, saved)
    start = time.perf_counter()
    emitted_call = load_call(emitted.source)
    namespace = emitted_call.__globals__  # the module's kernels, whose GEMM choices the dump lists
    timing.add("load the module (@triton.jit)", time.perf_counter() - start)
    names = [n.name for n in gm.graph.find_nodes(op="placeholder")]
    staged = (*cudagraphs.staged_inputs(kind, names), *host_scalars)  # a recording reads copies of these
    # The call writes each mutated input it reads in place, so that a replay does too
    values = imported.output_spec[len(imported.output_spec) - len(mutated_inputs):]
    written = {i: k for i, k in zip(mutated_inputs, values) if i not in staged and isinstance(k, int)}
    call = compiled_graph.relaid(emitted_call, constants, compiled_graph.input_relayouts(emitted.input_layouts,
                                                                                         example_inputs),
                                 output_relayouts, written)
    blocker = cudagraphs.capture_blocker(gm) if torch.cuda.is_available() else None
    graphed = cudagraphs.policy(kind, not imported.size_sources, emitted.launches, settings, blocker)
    if graphed.mode is not None:
        report = None if dump is None else (lambda line: dump.append("cudagraphs.txt", line + "\n"))
        call = cudagraphs.CudaGraphCall(call, name=graph_id, warn=graphed.mode == "asked", staged=staged,
                                        report=report)
    if host_epilogue is None:
        returned = imported.output_spec[:len(imported.output_spec) - len(mutated_inputs)]  # not the write-backs
        compiled_graph.report_output_strides(emitted.output_layouts, output_relayouts, returned)
    compiled = CompiledGraph(graph_id, emitted.source, call, imported.output_spec, output, host_scalars, tokens,
                             host_epilogue, imported.size_sources, mutated_inputs, list(written))
    if dump is not None:
        dump.write("cudagraphs.txt", graphed.describe() + "\n")
        dump.write("timing.txt", timing.report())
        compiled.time_first_call(timing, dump, namespace)
    return compiled


def _cached_or_compiled(gm: torch.fx.GraphModule, module: Any, spec: str, graph_id: str, dump: Any,
                        timing: Timing, verify_each: bool) -> EmittedModule:
    """The emitted module the compile cache holds for the imported `module`
    (`mlc.frontend.compile_cache`), else the pipeline and emit-python run on it, and the
    result stored.

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
    emitted = _compiled(gm, module, spec, graph_id, dump, timing, verify_each)
    start = time.perf_counter()
    if emitted != cached:
        compile_cache.store(key, emitted)
    status = "miss" if cached is None else "hit" if emitted == cached else "stale"
    timing.add(f"compile cache: {status} {key}", seconds + time.perf_counter() - start)
    return emitted


def _compiled(gm: torch.fx.GraphModule, module: Any, spec: str, graph_id: str, dump: Any, timing: Timing,
              verify_each: bool) -> EmittedModule:
    """Run the pipeline and emit-python on `module` (in place), verifying after each pass or
    (`verify_each` False) after the last: the emitted module, source and facts."""
    from mlc.codegen.emit_python import EmitError, emit_module

    try:
        run_pipeline(module, spec, graph_id, dump, timing, verify_each=verify_each)
    except MlcPassError as e:
        e = e if e.located else _located(gm, spec, graph_id, e)
        raise MlcCompileError(f"{e}\n{_reproducer(graph_id, gm, spec, e.index, dump)}") from e.__cause__
    start = time.perf_counter()
    try:
        emitted = emit_module(module)
    except EmitError as e:
        raise MlcCompileError(f"mlc: {graph_id}: emit-python: {e}") from e
    timing.add("emit-python", time.perf_counter() - start)
    if dump is not None:
        dump.write_module(emitted.source)
    return emitted


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


def _check_devices(graph_id: str, example_inputs: Sequence[Any]) -> list[int]:
    """Inputs must live where the kernels run; returns the 0-d CPU tensors to move per call."""
    device = compiled_graph.device()
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
