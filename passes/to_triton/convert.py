"""The pass `convert-to-triton`: a buffer.graph into Triton kernels and the host wrapper that runs them.

Each `buffer.fused` group, and each `buffer.computed` or `buffer.scatter` outside one, becomes
one `triton.kernel`: pointwise (`pointwise.py`) over `xnumel` = the product of its ranges, or,
for a group holding a reduction, a persistent (`triton_per_...`) or looped (`triton_red_...`)
reduction kernel over `xnumel` kept and `r0_numel` reduced elements (`reduction.py`; over a
symbolic r0_numel that may fit one block, both, and the launch picks by size), or, for a group
holding a contraction, a tiled `tl.dot` kernel (`triton_mm_...`, `matmul.py`); the graph
becomes `triton.wrapper @call` (Inductor's `TritonScheduling.codegen_node` +
`PythonWrapperCodegen`). This module decides what is a kernel and what the wrapper does; how a
kernel's body is built is `builder.py`'s and its kind's.

Before:
    buffer.graph @forward {
      buffer.input "arg0_1" #buffer.layout<[8, 64], [64, 1], f32>
      buffer.input "arg1_1" #buffer.layout<[64], [1], f32>
      buffer.computed "buf0" #buffer.layout<[8, 64], [64, 1], f32> ranges [8, 64] origins ["add"] {
        %0 = buffer.load @arg0_1[i1 + 64*i0] : f32
        %1 = buffer.load @arg1_1[i1] : f32
        %2 = arith.addf %0, %1 : f32
        buffer.store @buf0[i1 + 64*i0], %2 : f32 }
      buffer.output @buf0 }
After:
    triton.kernel @triton_poi_fused_add_0 pointwise(%in_ptr0: !triton.ptr<f32>, %in_ptr1: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 512 origins ["add"] configs [...] {
      triton.index x0 = ModularIndexing(xindex, 1, 64)
      %0 = triton.load %in_ptr0[xindex] mask xmask : f32
      %1 = triton.load %in_ptr1[x0] mask xmask evict_last : f32
      %2 = arith.addf %0, %1 : f32
      triton.store %out_ptr0[xindex], %2 mask xmask : f32 }
    triton.wrapper @call {
      triton.input "arg0_1" #buffer.layout<[8, 64], [64, 1], f32>
      triton.input "arg1_1" #buffer.layout<[64], [1], f32>
      triton.alloc "buf0" #buffer.layout<[8, 64], [64, 1], f32>
      triton.launch @triton_poi_fused_add_0(@arg0_1, @arg1_1, @buf0) xnumel 512
      triton.free @arg0_1, @arg1_1
      triton.return @buf0 }

Rules (Inductor's, `reference/inductor-rules.md` section 6; those of a kernel's body are in
`builder.py`, `pointwise.py` and `reduction.py`):
- Local buffers: a buffer written and read only inside one fused kernel, and not a graph
  output, is neither stored nor allocated.
- Names: `triton_poi_fused_<sorted unique origins joined by _>_<n>`, n counting distinct kernels;
  a kernel identical to an earlier one (all but name and origins) is not emitted again: its
  launch names the earlier kernel (Inductor's `src_to_kernel`).
- Index width: 64-bit index arithmetic where the kernel's elements or a buffer it touches reach
  2^31 (`launch.index_bits`), else 32.
- Wrapper: inputs, then in graph order `triton.alloc` + `triton.launch` per kernel,
  `triton.extern`, `triton.view`; `triton.free` after a buffer's last use, inputs' included
  (not outputs, not sizes); `triton.return` the outputs. A group of zero-size results is allocated, with no
  kernel. A `buffer.scatter` is a pointwise kernel over its source's points that stores (or
  `tl.atomic_add`s) into its base's storage: nothing is allocated for it, kernels reading it
  read the base, and the wrapper names it (a `triton.view` of the base) only where an extern
  or the output needs the name.

Options: `autotune-pointwise=true` (several configs per pointwise kernel; false: one);
`persistent-reduction-threshold=1024`, the largest r0_numel a persistent kernel takes (a
symbolic one: at run time) (Inductor's bound for INNER reductions; it uses 64 for the other
hints, mlc for OUTER ones only); `num-sms=132` sets the SM count of the `Target` the launch
heuristics size for (from it the reduction hint decides whether an output is wide enough for
DEFAULT configs); `tile-2d=true`, 2-D tiles for pointwise kernels with a transposed access
(false: every pointwise kernel is 1-D); `check-indices=false`, true makes each position loaded
from memory assert its bounds on the device (a kernel compiled in Triton's debug mode; the
backend sets it under `MLC_DEBUG=1`); `tf32=false`, true lets a GEMM of f32 operands multiply
them as TF32 (the backend sets it from `torch.backends.cuda.matmul.allow_tf32`); `gemm=fused`,
`measure` gives each GEMM kernel the wrapper `<kernel>_unfused` doing the same work as cuBLAS
plus pointwise kernels (an operand the GEMM computes in its K loop stored first, the epilogue
after), which the launch is timed against at its first run (`triton.launch ... against
@<kernel>_unfused`).

Fails when: a fused group's members iterate incompatible sizes, or a body op has no Triton
form (each names the node).
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr
from xdsl.ir import Block, Operation, Region
from xdsl.passes import ModulePass
from xdsl.printer import Printer
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from mlc.analysis.launch import H100, Target, index_bits
from mlc.dialects import buffer, triton
from mlc.dialects.buffer_layout import LayoutAttr
from mlc.dialects.loops_reduce import row_groups
from mlc.passes.pipeline import option
from mlc.passes.stages import check_stage
from mlc.passes.to_triton.builder import GroupKernels
from mlc.passes.to_triton.matmul import build_matmul_kernel, group_ends, unfused
from mlc.passes.to_triton.pointwise import build_pointwise_kernel
from mlc.passes.to_triton.reduction import build_reduction_kernels


def kernel_base_name(kind: str, origins: Sequence[str]) -> str:
    """`triton_poi_fused_add_mul` (the counter suffix is added by the caller)."""
    category = {"pointwise": "poi", "reduction": "red", "persistent_reduction": "per", "matmul": "mm"}[kind]
    names = sorted({re.sub(r"\W", "_", o) for o in origins})
    return "_".join([f"triton_{category}_fused", *names])


def kernel_key(kernel: triton.KernelOp) -> str:
    """The kernel's text without its name and origins: equal keys are the same kernel. (Printed
    with the two swapped out for the moment, not from a clone: cloning the body cost as much as
    printing it.)"""
    kept = dict(kernel.properties)
    kernel.properties["sym_name"] = StringAttr("kernel")
    kernel.properties.pop("origins", None)
    out = io.StringIO()
    try:
        Printer(stream=out).print_op(kernel)
    finally:
        kernel.properties.clear()
        kernel.properties.update(kept)
    return out.getvalue()


@dataclass(frozen=True)
class ConvertToTritonPass(ModulePass):
    """Lower buffer.graph to triton.kernel (one per group) and the triton.wrapper that runs them."""

    name = "convert-to-triton"
    ACCEPTS: ClassVar[tuple[str, ...]] = ("buffer",)

    autotune_pointwise: bool = option(True, "two configs per pointwise kernel for the runtime to time; false: one")
    persistent_reduction_threshold: int = option(1024, "the largest r0_numel a persistent (one-block) reduction takes")
    num_sms: int = option(132, "streaming multiprocessors (H100 SXM: 132) the launch heuristics size for")
    tile_2d: bool = option(True, "2-D (y, x) tiles for pointwise kernels with a transposed access; false: all 1-D")
    check_indices: bool = option(False, "positions loaded from memory assert their bounds on the device (MLC_DEBUG=1)")
    tf32: bool = option(False, "a GEMM of f32 operands may multiply them as TF32 (torch's allow_tf32)")
    gemm: str = option("fused", "fused: a GEMM runs its kernel; measure: timed against cuBLAS plus its epilogue at the first run")

    def __post_init__(self) -> None:
        if self.persistent_reduction_threshold < 0 or self.num_sms < 1:
            raise ValueError("convert-to-triton: persistent-reduction-threshold must be >= 0 and num-sms >= 1")
        if self.gemm not in ("fused", "measure"):
            raise ValueError(f"convert-to-triton: gemm is fused or measure, got '{self.gemm}'")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_stage(self, op)
        graphs = [g for g in op.body.block.ops if isinstance(g, buffer.GraphOp)]
        if len(graphs) > 1:
            raise PassFailedException("convert-to-triton: expected one buffer.graph per module")
        target = Target(num_sms=self.num_sms)
        for graph in graphs:
            kernels, wrapper = self.convert(graph, target)
            Rewriter.insert_op([*kernels, wrapper], InsertPoint.before(graph))
            Rewriter.erase_op(graph)

    def convert(self, graph: buffer.GraphOp, target: Target = H100) -> tuple[list[Operation], triton.WrapperOp]:
        """The kernels of `graph` and the wrapper that runs them (the GEMMs' unfused
        alternatives, `gemm=measure`, are wrappers too: listed with the kernels)."""
        conversion = _GraphConversion(self, target, _readers(graph), _named_by_host(graph))
        body: list[triton.WrapperBodyOp] = []
        for pos, node in enumerate(graph.body.block.ops):
            body.extend(conversion.node(pos, node))
        sizes = {o.buffer.data for o in body if isinstance(o, triton.SizeInputOp)}
        kernels = [*conversion.kernels.values(), *conversion.unfused]
        return kernels, triton.WrapperOp("call", Region(Block(_with_frees(body, sizes))))


@dataclass
class _GraphConversion:
    """What converting one graph has learned so far: buffer layouts, views' root storages, and
    the kernels emitted (by `kernel_key`, in emission order)."""

    options: ConvertToTritonPass
    target: Target
    readers: dict[str, set[int]]  # buffer -> the node positions reading it (the output: -1)
    host_names: set[str]  # buffers the wrapper itself names
    layouts: dict[str, LayoutAttr] = field(default_factory=dict)
    roots: dict[str, str] = field(default_factory=dict)  # view name -> root storage name
    kernels: dict[str, triton.KernelOp] = field(default_factory=dict)
    unfused: list[triton.WrapperOp] = field(default_factory=list)  # GEMM kernels' unfused alternatives
    producers: dict[str, buffer.ComputedOp] = field(default_factory=dict)  # buffer -> the node computing it

    def node(self, pos: int, node: Operation) -> list[triton.WrapperBodyOp]:
        """The wrapper ops of the graph's node at `pos` (a kernel's launch, with its allocations)."""
        if isinstance(node, buffer.InputOp):
            self.layouts[node.buffer.data] = node.layout
            return [triton.InputOp(node.buffer.data, node.layout)]
        if isinstance(node, buffer.SizeInputOp):
            return [triton.SizeInputOp(node.buffer.data, node.size.expr)]
        if isinstance(node, buffer.ExternOp):
            for name, layout in zip(node.defined_names(), node.layouts.data):
                self.layouts[name] = layout  # type: ignore[assignment]
            kwargs = node.kwargs.data if node.kwargs is not None else None
            return [triton.ExternOp(node.result_names(), list(node.layouts.data), node.overload.data,  # type: ignore[arg-type]
                                    node.args.data, kwargs, fresh=node.fresh is not None, out=node.out is not None)]
        if isinstance(node, buffer.ViewOp):
            self.layouts[node.buffer.data] = node.layout
            source = node.source.root_reference.data
            self.roots[node.buffer.data] = self.roots.get(source, source)
            return [triton.ViewOp(node.buffer.data, source, node.layout)]
        if (members := _group_members(node)) is not None:
            return self.group(pos, members)
        if isinstance(node, buffer.OutputOp):
            return [triton.ReturnOp(node.names)]
        return []

    def group(self, pos: int, members: list[buffer.BodyNode]) -> list[triton.WrapperBodyOp]:
        """The allocations and the launch of one group's kernel(s); a scatter's result is its
        base, written in place (a view of it where the wrapper names the result)."""
        scatters = [m for m in members if isinstance(m, buffer.ScatterOp)]
        for m in members:
            self.layouts[m.buffer.data] = m.layout
            if isinstance(m, buffer.ComputedOp):
                self.producers[m.buffer.data] = m
        for m in scatters:
            self.roots[m.buffer.data] = self.roots.get(m.base_name, m.base_name)
        views = [triton.ViewOp(m.buffer.data, m.base_name, m.layout) for m in scatters if m.buffer.data in self.host_names]
        if all(m.layout.is_empty for m in members):
            # Zero-size results (an empty tensor): allocated, nothing to compute, no kernel.
            return [triton.AllocOp(m.buffer.data, m.layout) for m in members]
        written = {m.buffer.data for m in members}
        # Written and read only inside this kernel (and not an output): keep it in registers.
        local = {n for n in written - {m.buffer.data for m in scatters}
                 if len(members) > 1 and self.readers.get(n, set()) <= {pos}}
        built = self._build(members, local)
        names = self._emit(built, members)
        allocs = [triton.AllocOp(m.buffer.data, m.layout) for m in members
                  if m.buffer.data not in local and m not in scatters]
        looped = (names[1], built.persistent_max) if built.persistent_max is not None else None
        against = self._unfused(names[0], built.args, members, local) if self.options.gemm == "measure" else None
        unfused_name, also = against or (None, [])
        return [*allocs, triton.LaunchOp(names[0], built.args, built.numel, built.rnumel, built.ynumel, looped,
                                          unfused_name, built.znumel, also), *views]

    def _unfused(self, kernel: str, args: list[str], members: list[buffer.ComputedOp],
                 local: set[str]) -> tuple[str, list[str]] | None:
        """For a GEMM kernel: the wrapper `<kernel>_unfused` doing its work as cuBLAS plus
        pointwise kernels over the same buffers (`matmul.unfused`: an operand computed in the K
        loop stored first, the epilogue after), which the launch is timed against, and what it
        reads besides the kernel's buffers (a grouped product's groups' ends: torch's
        `_grouped_mm` takes them, where the kernel reads each row's group); None for any other
        kernel, and for a grouped product whose ends are not found (the fused kernel runs)."""
        contraction = next((m for m in members if isinstance(m, buffer.ComputedOp) and m.is_contraction), None)
        if contraction is None:
            return None
        ends = None
        if row_groups(contraction.dot_op(), len(contraction.range_exprs)):
            ends = group_ends(contraction, self.producers)
            if ends is None:
                return None
        work = unfused(members, self.roots, ends)
        if work is None:
            return None
        also = [] if ends is None else [ends]
        self.layouts[work.product] = work.product_layout
        body: list[triton.WrapperBodyOp] = [triton.InputOp(a, self.layouts[a]) for a in [*args, *also]]
        for prologue in work.prologues:  # an operand the GEMM computes, stored for cuBLAS
            self.layouts[prologue.buffer.data] = prologue.layout
            body += [triton.AllocOp(prologue.buffer.data, prologue.layout), self._pointwise_launch([prologue], set())]
        body += [*work.views, work.call]
        if work.members:  # the epilogue cuBLAS does not do, as its own kernel
            body.append(self._pointwise_launch(work.members, local))
        temporaries = [o.buffer.data for o in (*work.prologues, *work.views)] + [work.product]
        body += [triton.FreeOp(temporaries), triton.ReturnOp([])]
        # One per launch: a kernel launched by several groups (identical layers) is timed once.
        wrapper = triton.WrapperOp(f"{kernel}_unfused{len(self.unfused)}", Region(Block(body)))
        self.unfused.append(wrapper)
        return wrapper.sym_name.data, also

    def _pointwise_launch(self, members: list[buffer.ComputedOp], local: set[str]) -> triton.LaunchOp:
        built = build_pointwise_kernel(members, self.layouts, self.roots, local, self.target,
                                       self.options.autotune_pointwise, self.options.tile_2d, self.options.check_indices)
        return triton.LaunchOp(self._emit(built, members)[0], built.args, built.numel, None, built.ynumel)

    def _build(self, members: list[buffer.ComputedOp], local: set[str]) -> GroupKernels:
        options, target = self.options, self.target
        if any(m.is_contraction for m in members if isinstance(m, buffer.ComputedOp)):
            return build_matmul_kernel(members, self.layouts, self.roots, local, options.tf32,
                                       options.autotune_pointwise, options.check_indices)
        if any(m.is_reduction for m in members):
            return build_reduction_kernels(members, self.layouts, self.roots, local,
                                           options.persistent_reduction_threshold, target, options.check_indices)
        return build_pointwise_kernel(members, self.layouts, self.roots, local, target, options.autotune_pointwise,
                                      options.tile_2d, options.check_indices)

    def _emit(self, built: GroupKernels, members: list[buffer.ComputedOp]) -> list[str]:
        """Name the group's kernels and keep the new ones; the names its launch uses (an
        identical kernel emitted earlier is launched instead)."""
        origins = sorted({o for m in members for o in m.origin_names})
        touched = {n for m in members for n in (*m.referenced_names(), *m.defined_names())}
        storages = [self.layouts[r] for r in sorted({self.roots.get(n, n) for n in touched}) if r in self.layouts]
        # A GEMM's K counts too, though no index spans M, N and K together: on the H200 its
        # 64-bit kernel was the faster (4096 x 4096 over 1024, bf16: 57.3 against 62.5 us).
        wide = index_bits(built.numel * (built.rnumel or 1) * (built.ynumel or 1) * (built.znumel or 1), storages) == 64
        names = []
        for kernel in built.kernels:
            if wide:
                kernel.attributes[triton.INDEX_BITS] = IntegerAttr(64, 64)
            key = kernel_key(kernel)
            if key not in self.kernels:
                name = f"{kernel_base_name(kernel.kernel_kind, origins)}_{len(self.kernels)}"
                kernel.properties["sym_name"] = StringAttr(name)
                self.kernels[key] = kernel
            names.append(self.kernels[key].sym_name.data)
        return names


def _group_members(node: Operation) -> list[buffer.BodyNode] | None:
    """The nodes one kernel runs, or None for a node that is not a kernel: a computed node or a
    scatter alone, or a fused group (a scatter only as a GEMM's epilogue: the verifier's)."""
    if isinstance(node, buffer.BodyNode):
        return [node]
    if not isinstance(node, buffer.FusedOp):
        return None
    members = node.members()
    for m in members:
        if not isinstance(m, buffer.BodyNode):
            raise PassFailedException(f"convert-to-triton: buffer.fused holds {m.name}; only buffer.computed "
                                      "and buffer.scatter nodes fuse")
    return members  # type: ignore[return-value]


def _named_by_host(graph: buffer.GraphOp) -> set[str]:
    """Buffers the wrapper itself passes around: extern arguments, view sources, outputs."""
    names: set[str] = set()
    for op in graph.body.block.ops:
        if isinstance(op, (buffer.ExternOp, buffer.ViewOp)):
            names.update(op.referenced_names())
        elif isinstance(op, buffer.OutputOp):
            names.update(op.names)
    return names


def _readers(graph: buffer.GraphOp) -> dict[str, set[int]]:
    """For each buffer, the top-level node positions that read it (the output counts as -1)."""
    readers: dict[str, set[int]] = {}
    for pos, op in enumerate(graph.body.block.ops):
        if isinstance(op, buffer.BufferNode):
            for name in op.referenced_names():
                readers.setdefault(name, set()).add(pos)
        elif isinstance(op, buffer.OutputOp):
            for name in op.names:
                readers.setdefault(name, set()).add(-1)
    return readers


def _with_frees(body: list[triton.WrapperBodyOp], keep: set[str]) -> list[triton.WrapperBodyOp]:
    """Insert `triton.free` after each buffer's last use, the inputs' too (a backward's saved
    activations die there, once `call` has emptied its argument list); never an output or a
    name in `keep`. An input nothing reads is freed after the last input (inputs come first)."""
    outputs = set(body[-1].referenced_names()) if isinstance(body[-1], triton.ReturnOp) else set()
    inputs = [op for op in body if isinstance(op, triton.GRAPH_INPUTS)]
    last_use: dict[str, int] = {name: len(inputs) - 1 for op in inputs for name in op.defined_names()}
    for pos, op in enumerate(body):
        for name in [*op.defined_names(), *op.referenced_names()]:
            last_use[name] = max(pos, last_use.get(name, pos))
    dying_at: dict[int, list[str]] = {}
    for name, last in last_use.items():
        if name not in keep and name not in outputs:
            dying_at.setdefault(last, []).append(name)
    out: list[triton.WrapperBodyOp] = []
    for pos, op in enumerate(body):
        out.append(op)
        if pos in dying_at and not isinstance(op, triton.ReturnOp):
            out.append(triton.FreeOp(dying_at[pos]))
    return out
