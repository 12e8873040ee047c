"""emit-python: a triton-dialect module → a Python module (`mlc-translate --emit-python`).

`emit_python` gives the module's text; `emit_module` gives the `EmittedModule` the runtime
runs (`mlc.codegen.emitted`): the text with what its `call` expects of its inputs, how it lays
out its results and how many launches it makes, read from the `triton.wrapper` here, once.

The output has Inductor's shape: one `@triton.jit` function per `triton.kernel`, and
`def call(args)` for `triton.wrapper`, which unpacks the inputs, allocates, launches, calls
externs and returns the outputs. For the seed-000 gelu:

    @triton.jit
    def triton_poi_fused_gelu_0(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
        xnumel = 512
        xoffset = tl.program_id(0) * XBLOCK
        xindex = xoffset + tl.arange(0, XBLOCK)[:]
        xmask = xindex < xnumel
        x0 = (xindex % 64)
        x1 = (xindex // 64)
        tmp0 = tl.load(in_ptr0 + (x0 + 64*x1), xmask)
        tmp1 = 0.5
        tmp2 = tmp0 * tmp1
        ...
        tmp5 = tl.math.erf(tmp4)
        ...
        tl.store(out_ptr0 + (x0 + 64*x1), tmp8, xmask)


    def call(args):
        arg0_1, = args
        args.clear()
        launches = launch_context()
        assert_size_stride(arg0_1, (8, 64), (64, 1))
        buf0 = empty_on_device((8, 64), (64, 1), torch.float32)
        launch(triton_poi_fused_gelu_0, triton_poi_fused_gelu_0_configs, 512, (arg0_1, buf0, 512,), launches)
        return (buf0,)


    precompile = (
        (triton_poi_fused_gelu_0, triton_poi_fused_gelu_0_configs, (torch.float32, torch.float32, 512,)),
    )

Choices (each one is the why behind a rule below):

* Launch configuration: each kernel's `#triton.config`s become a module-level tuple
  (`<kernel>_configs`, the heuristics' preferred first) and launches go through
  `triton_helpers.launch`, which autotunes among them on the first launch on a GPU (Inductor's
  CachingAutotuner) and takes the first under the interpreter; the module's text does not
  depend on the machine. Without configs: XBLOCK = next power of two of xnumel, at most 1024.
* Static numels: `xnumel = 512` (and `r0_numel`, `ynumel`) first in the body, as Inductor
  writes them, while the launch still passes the numel: one signature for static and symbolic
  kernels, and a literal Triton folds into the masks (fewer registers: GPT-2's layer norms 96 ->
  66 a thread, 15% faster on the H100).
* Compiling ahead: `precompile` lists each distinct static launch's arguments as Triton's
  compile sees them (a buffer's dtype, a number), so that the kernels compile side by side in
  the background when the module loads, not one by one at their first launch.
* Constants print as Python literals (`tmp1 = 0.5`) where Triton's weak typing gives them the
  right type -- an f32/i32 constant used only by binary ops next to a tile -- and as
  `tl.full([1], v, dtype)` elsewhere, so a cast or a store of a constant keeps its dtype.
  Floats print with `repr` (they round-trip exactly); inf/nan as `float("inf")`; -0.0 by its bits.
* 16-bit floats are computed in float32 one op at a time where it matters
  (`to_bfloat16(a.to(tl.float32) + b.to(tl.float32))`): libdevice has no 16-bit entry points,
  and Triton's interpreter stores bfloat16 as raw bits, so it can only load, store, select and
  convert them (and its float32 -> bfloat16 conversion truncates, hence the `to_bfloat16`
  helper). Rounding after every op is exactly what eager PyTorch does for each op.
* Math: `tl.math` where both the GPU compiler and the interpreter have the function (exp, log,
  sin, cos, floor, ceil, erf, fma); libdevice otherwise (mlc.codegen.triton_helpers supplies a
  numpy libdevice under the interpreter). `arith.maximumf`/`minimumf` propagate NaN, as
  torch.maximum does, through the `maximum`/`minimum` helpers; `maxnumf` is `tl.maximum`.
* Integer division: Triton's `//` and `%` truncate (C semantics), which is what `arith.divsi` and
  `arith.remsi` mean; `arith.floordivsi`/`ceildivsi` go through helpers.

Output is deterministic: names come from the IR (kernel and buffer names, pointer names, index
symbols) and `tmpN` numbers from the order of ops.

This module puts the parts together: `emit_kernel` prints the kernels, `emit_wrapper` the
`call` function and the configs tuples, `emit_common` holds what they share (`EmitError`, ...).
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from mlc.dialects import triton as tt
from mlc.dialects.buffer_layout import LayoutAttr
from mlc.codegen.emit_common import EmitError, _where, py_float, tl_dtype, torch_dtype
from mlc.codegen.emit_kernel import _KernelEmitter, _ReductionKernelEmitter
from mlc.codegen.emit_matmul import MatmulKernelEmitter
from mlc.codegen.emit_wrapper import _configs_literal, _configs_name, _emit_wrapper, _precompile_table
from mlc.codegen.emitted import EmittedModule, Layout

__all__ = ["EmitError", "EmittedModule", "HEADER", "emit_module", "emit_python", "py_float", "tl_dtype", "torch_dtype"]


HEADER = '''\
# Generated by mlc (mlc-translate --emit-python) from the triton dialect.
import torch
import triton
import triton.language as tl
from torch._C._dynamo.guards import _reinterpret_tensor as reinterpret_tensor, assert_size_stride

from mlc.codegen.triton_helpers import (
    DEVICE,
    ceil_div_integer,
    empty_on_device,
    ensure_layout,
    floor_div_integer,
    choose,
    launch,
    launch_context,
    libdevice,
    maximum,
    minimum,
    to_bfloat16,
)
from mlc.codegen import triton_helpers

aten = torch.ops.aten
'''


def emit_python(module: ModuleOp) -> str:
    """The Python source of a triton-dialect module (kernels first, then `call`)."""
    return _source(*_parts(module))


def emit_module(module: ModuleOp) -> EmittedModule:
    """The emitted module of a triton-dialect module: its source and the facts of its `call`."""
    kernels, wrapper, others = _parts(module)
    return EmittedModule(_source(kernels, wrapper, others), _input_layouts(wrapper), _output_layouts(wrapper),
                         _launches(wrapper))


def _parts(module: ModuleOp) -> tuple[list[tt.KernelOp], tt.WrapperOp, list[tt.WrapperOp]]:
    """The module's kernels, its wrapper `call`, and the other wrappers its launches name (a
    GEMM's unfused alternative); EmitError for anything else."""
    kernels: list[tt.KernelOp] = []
    wrappers: list[tt.WrapperOp] = []
    for op in module.body.block.ops:
        if isinstance(op, tt.KernelOp):
            kernels.append(op)
        elif isinstance(op, tt.WrapperOp):
            wrappers.append(op)
        else:
            raise EmitError(f"{_where(op)}: emit-python expects triton.kernel and triton.wrapper ops, got {op.name}", op)
    calls = [w for w in wrappers if w.sym_name.data == "call"] if len(wrappers) > 1 else wrappers
    if len(calls) != 1:
        raise EmitError(f"emit-python expects one triton.wrapper, found {len(wrappers)}" + (" and no @call" if wrappers else ""))
    return kernels, calls[0], [w for w in wrappers if w is not calls[0]]


def _source(kernels: list[tt.KernelOp], wrapper: tt.WrapperOp, others: list[tt.WrapperOp] = ()) -> str:
    by_name = {k.sym_name.data: k for k in kernels}
    parts = [HEADER]
    for kernel in kernels:
        emitter = {"pointwise": _KernelEmitter, "matmul": MatmulKernelEmitter}.get(kernel.kernel_kind, _ReductionKernelEmitter)
        parts.append("\n\n" + emitter(kernel).emit())
        parts.append(f"\n\n{_configs_name(kernel)} = {_configs_literal(kernel)}\n")
    for other in others:
        parts.append("\n\n" + _emit_wrapper(other, by_name))
    parts.append("\n\n" + _emit_wrapper(wrapper, by_name))
    parts.append("\n\n" + _precompile_table([*others, wrapper], by_name))
    return "".join(parts)


# ---------------------------------------------------------------------------------------------
# The facts of `call` (EmittedModule's fields besides the source)


def _layout(attr: LayoutAttr | None) -> Layout | None:
    """A layout's (sizes, strides), or None where it is unknown or symbolic."""
    if attr is None:
        return None
    try:
        return tuple(int(e) for e in attr.sizes), tuple(int(e) for e in attr.strides)
    except TypeError:
        return None


def _input_layouts(wrapper: tt.WrapperOp) -> tuple[Layout | None, ...]:
    """The layout `call` assumes for each input (None for a size)."""
    return tuple(_layout(op.layout) if isinstance(op, tt.InputOp) else None
                 for op in wrapper.body.block.ops if isinstance(op, tt.GRAPH_INPUTS))


def _output_layouts(wrapper: tt.WrapperOp) -> tuple[Layout | None, ...]:
    """The layout of each result `call` returns."""
    layouts = wrapper.layouts()
    return tuple(_layout(layouts.get(name)) for name in wrapper.output_names())


def _launches(wrapper: tt.WrapperOp) -> tuple[int, int]:
    """How many Triton kernels `call` launches, and how many extern calls it makes."""
    ops = list(wrapper.body.block.ops)
    return sum(isinstance(op, tt.LaunchOp) for op in ops), sum(isinstance(op, tt.ExternOp) for op in ops)
