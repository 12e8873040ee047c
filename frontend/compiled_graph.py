"""A compiled graph, called as its FX graph is: the emitted `call` between the graph's inputs and outputs.

`relaid` makes the emitted `call` into the call on the graph's tensors: it copies an input
whose strides are not those the kernels index (`input_relayouts`) into them, appends the
graph's constants, copies a result laid out otherwise than the graph promises
(`output_relayouts`) into the promised strides, and writes the inputs the graph updates in
place (`fx_graph.input_mutations`). That is the part a CUDA graph captures
(`frontend/cudagraphs.py`), so that its copies are made in the recording's memory (a copy made
around a replay would lie wherever the allocator put it, at an address no recording reads) and
its write-backs are replayed with the kernels. `CompiledGraph` takes the FX graph's inputs,
moves 0-d CPU tensors to the device, runs that call, writes back the updated inputs the call
could not (a 0-d CPU tensor, an input a recording reads from a copy), computes the sizes the
graph returns from its inputs, and rebuilds the graph's nesting of outputs.
`report_output_strides` tells AOTAutograd the strides a forward's outputs really have.
"""

from __future__ import annotations

import operator
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import torch
import torch.fx

from mlc.codegen.emitted import Layout
from mlc.frontend.errors import MlcCompileError
from mlc.frontend.fx_graph import output_leaves, rebuild
from mlc.frontend.importer import SizeOutput

if TYPE_CHECKING:
    from mlc.passes.pipeline import Timing


class CompiledGraph:
    """A compiled aten graph, called with the graph's inputs; returns its outputs."""

    def __init__(
        self,
        graph_id: str,
        source: str,
        call: Callable[[list[Any]], Sequence[Any]],
        output_spec: list[int | None | SizeOutput],
        output_structure: Any,
        host_scalars: list[int],
        tokens: Sequence[int] = (),
        host_epilogue: Callable[..., Any] | None = None,
        size_sources: dict[Any, tuple[int, int | None]] | None = None,
        mutated_inputs: Sequence[int] = (),
        written_by_call: Sequence[int] = (),
    ):
        self.graph_id = graph_id
        self._sizes = {k: _size_evaluator(o.expr, size_sources or {})
                       for k, o in enumerate(output_spec) if isinstance(o, SizeOutput)}
        self.source = source
        self._call = call  # `relaid`'s
        self._output_spec = output_spec
        self._output_structure = output_structure
        # AOTAutograd's graphs return one flat tuple: rebuilt with one tuple() per call
        self._flat_output = isinstance(output_structure, tuple) and not any(
            isinstance(s, (tuple, list)) for s in output_structure)
        self._host_scalars = host_scalars
        self._tokens = tokens  # effect-token inputs: AOTAutograd passes None, the IR has an empty tensor
        self._host_epilogue = host_epilogue  # numbers read out of the results (`.item()`)
        # Inputs written with the last outputs (`fx_graph.input_mutations`), but those `relaid`'s
        # call writes (all but a 0-d CPU input and an input a CUDA graph reads from a copy): the
        # input's position and its value's among the outputs
        self._returned = None if not mutated_inputs else len(output_spec) - len(mutated_inputs)
        self._written_here = [(i, self._returned + k) for k, i in enumerate(mutated_inputs)
                              if i not in written_by_call]
        self._write_back = WriteBack()

    def time_first_call(self, timing: Timing, dump: Any, namespace: dict) -> None:
        """Add the first call of the module (Triton's compilation and autotuning, then the run)
        to `timing` and rewrite the dump's timing.txt with it, and end fusion.txt with what each
        GEMM kernel of the module (`namespace`: its globals) chose at the first call, with both
        sides' times (`triton_helpers.gemm_choices`); later calls go straight through."""
        from mlc.codegen.triton_helpers import gemm_choices

        call = self._call

        def first(args: list[Any]) -> Sequence[Any]:
            self._call = call
            start = time.perf_counter()
            outputs = call(args)
            if torch.cuda.is_available():
                torch.cuda.synchronize()
            timing.add("first call (Triton compile, autotune, run)", time.perf_counter() - start)
            dump.write("timing.txt", timing.report())
            dump.append("fusion.txt", "".join(f"{line}\n" for line in gemm_choices(namespace)))
            return outputs

        self._call = first

    def __call__(self, *args: Any) -> Any:
        return self.call_boxed(list(args))

    def call_boxed(self, args: list[Any]) -> Any:
        """Run the graph on `args`, a list of its inputs that the call empties (AOTAutograd's boxed
        convention, `boxed`): the emitted `call` drops each input after its last read, so an
        input nobody else holds, a saved activation in a backward, is freed there rather than
        at the end of the backward."""
        sizes = {k: size(args) for k, size in self._sizes.items()}  # read off the inputs before they go
        mutated = [args[i] for i, _ in self._written_here]  # before a relayout replaces one
        for i in self._tokens:
            args[i] = torch.empty(0, device=device())
        for i in self._host_scalars:  # 0-d CPU tensors next to CUDA ones, as eager allows
            args[i] = args[i].to(device())
        results = self._call(args)
        args.clear()  # emptied by the call already; a fallback (`boxed`) may not
        flat = [None if i is None else sizes[k] if k in sizes else results[i] for k, i in enumerate(self._output_spec)]
        outputs = tuple(flat) if self._flat_output else rebuild(self._output_structure, iter(flat))
        if self._host_epilogue is not None:
            outputs = self._host_epilogue(*outputs)
        if self._returned is None:
            return outputs
        if mutated:
            self._write_back(mutated, [outputs[k] for _, k in self._written_here])
        return type(outputs)(outputs[:self._returned])

    def __repr__(self) -> str:
        return f"<mlc CompiledGraph {self.graph_id}>"


def relaid(call: Callable[[list[Any]], Sequence[Any]], constants: list[torch.Tensor],
           relayouts: dict[int, Layout | None], output_relayouts: dict[int, Layout],
           written_back: dict[int, int] | None = None) -> Callable[[list[Any]], list[Any]]:
    """The emitted `call` on the graph's inputs (which it empties, the boxed convention) and its
    results, each in the layout the kernels and the graph's users expect (`input_relayouts`,
    `output_relayouts`), with `constants` appended to the inputs. `written_back`: input
    position -> result position, each such result copied into its input after the call (a
    batch norm's running statistics: `WriteBack`), so that a CUDA graph's replay writes them
    with its kernels, no launch or host work around it."""
    if relayouts:
        from mlc.codegen.triton_helpers import ensure_layout
    write_back = WriteBack()
    inputs, values = list(written_back or {}), list((written_back or {}).values())

    def run(args: list[Any]) -> list[Any]:
        targets = [args[i] for i in inputs]  # before a relayout replaces one
        for i, layout in relayouts.items():
            # A symbolic layout is the row-major one of whatever sizes come.
            args[i] = args[i].contiguous() if layout is None else ensure_layout(args[i], *layout)
        args.extend(constants)
        results = list(call(args))
        if targets:
            write_back(targets, [results[k] for k in values])
        for i, (size, stride) in output_relayouts.items():
            results[i] = torch.empty_strided(size, stride, dtype=results[i].dtype,
                                             device=results[i].device).copy_(results[i])
        return results

    return run


class WriteBack:
    """Copies values into a graph's mutated inputs: one `_foreach_copy_` per device and dtype (its
    one-launch path takes lists of one dtype), the grouping found at the first call (a compiled
    graph's inputs keep their dtypes and devices: Dynamo guards them)."""

    def __init__(self) -> None:
        self.groups: list[list[int]] | None = None

    def __call__(self, targets: list[torch.Tensor], values: list[torch.Tensor]) -> None:
        if self.groups is None:
            by_kind: dict[tuple, list[int]] = {}
            for k, t in enumerate(targets):
                by_kind.setdefault((t.device, t.dtype), []).append(k)
            self.groups = list(by_kind.values())
        for group in self.groups:
            torch._foreach_copy_([targets[k] for k in group], [values[k] for k in group])


def boxed(compiled: Callable[..., Any]) -> Callable[[list[Any]], Any]:
    """`compiled` called as AOTAutograd calls a compiler's result when it is marked `_boxed_call`:
    with one list of the inputs, which the callee may empty. A compiled graph empties it
    (`CompiledGraph.call_boxed`), so that the list is never the last holder of a dead input; a
    graph run eagerly (the fallback) is called with the list unpacked."""
    call_boxed = getattr(compiled, "call_boxed", None)
    if call_boxed is None:
        from functorch.compile import make_boxed_func

        return make_boxed_func(compiled)

    def call(args: list[Any]) -> Any:
        return call_boxed(args)

    call._boxed_call = True  # type: ignore[attr-defined]
    return call


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


def input_relayouts(layouts: Sequence[Layout | None], example_inputs: Sequence[Any]) -> dict[int, Layout | None]:
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


def output_relayouts(layouts: Sequence[Layout | None], structure: Any, output_spec: Sequence[int | None],
                     keep_padded: bool = False, saved: range = range(0)) -> dict[int, Layout]:
    """Results whose layout is not the strides the FX graph promises for that output (its
    `meta["val"]`), with those strides: copied into them on each call. A returned view (a
    transposed mm result) or a computed buffer may be laid out otherwise.

    Outputs at the positions `saved` (a forward's tensors saved for its backward, which only
    the backward reads) keep the layout mlc made them in: a forward reports it
    (`report_output_strides`) and AOTAutograd compiles the backward for it, as Inductor lets
    it. BERT's attention saved each layer's keys transposed, copied back into the traced
    strides (12 copies, 0.15 ms of a 9 ms step on the H200). pad-mm's padded results stay
    padded where `keep_padded` (inference and forward graphs, `--realize`'s
    `keep-padded-outputs`); in a backward `--realize` writes them into the promised strides
    with a kernel. What is left here: an output the user sees, a view whose strides the
    importer did not record (not dense), an extern's result laid out otherwise than traced."""
    from mlc.dialects.buffer_layout import is_padded

    nodes = output_leaves(structure)
    fixes = {}
    for position, (node, i) in enumerate(zip(nodes, output_spec)):
        if position in saved:
            continue
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


def report_output_strides(layouts: Sequence[Layout | None], relayouts: dict[int, Layout],
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


def device() -> torch.device:
    """Where the kernels run (`mlc.codegen.runtime` imports Triton: not before a graph compiles)."""
    from mlc.codegen.runtime import DEVICE

    return DEVICE
