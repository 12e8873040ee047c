"""emit-python's host side: `def call(args)` for the `triton.wrapper` (asserts on the inputs,
allocations, launches, extern calls, views, frees, the return), and each kernel's launch
configs as a module-level tuple.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    SymbolRefAttr,
)
from xdsl.dialects.complex import ComplexNumberAttr
from xdsl.ir import Attribute, Operation

from mlc.dialects import triton as tt
from mlc.dialects.buffer_layout import LayoutAttr, element_bytes
from mlc.dialects.sym import ExprAttr
from mlc.dialects.values import DTYPE_NAMES
from mlc.codegen.emit_common import (
    EmitError,
    checks_indices,
    _host,
    _host_tuple,
    _where,
    _width,
    py_float,
    torch_dtype,
)
from mlc.codegen.py_expr import ExprPrintError


# ---------------------------------------------------------------------------------------------
# The wrapper


def _configs_name(kernel: tt.KernelOp) -> str:
    return f"{kernel.sym_name.data}_configs"


def _launch_configs(kernel: tt.KernelOp) -> list[dict[str, int]]:
    """The kernel's launch configs, the heuristics' preferred first (R0_BLOCK where it is a
    parameter: a persistent kernel over a static r0_numel fixes it in its body). The IR must
    carry them: choosing block sizes is `analysis/launch.py`'s job (through
    --convert-to-triton), not the emitter's."""
    keep = {"XBLOCK", "R0_BLOCK"} if kernel.takes_r0_block else {"XBLOCK", "YBLOCK"}
    if kernel.kernel_kind == "matmul":
        keep = {"YBLOCK", "XBLOCK", "R0_BLOCK"}
    configs = [
        {**{k: v for k, v in c.block_sizes.items() if k in keep},
         "num_warps": c.num_warps.data, "num_stages": c.num_stages.data}
        for c in kernel.config_list
    ]
    if not configs:
        raise EmitError(f"{_where(kernel)}: kernel @{kernel.sym_name.data} has no launch configs "
                        "(`configs [...]`; --convert-to-triton chooses them)", kernel)
    return configs


def _configs_literal(kernel: tt.KernelOp) -> str:
    """A tuple of config dicts; for a persistent kernel over a symbolic r0_numel, a dict of
    such tuples by R0_BLOCK (the launch takes those of next_pow2(r0_numel))."""
    configs = _launch_configs(kernel)
    if not _configs_by_r0_block(kernel):
        return _configs_tuple(configs)
    blocks = dict.fromkeys(c["R0_BLOCK"] for c in configs)
    items = [f"{r}: {_configs_tuple([c for c in configs if c['R0_BLOCK'] == r])}" for r in blocks]
    return "{" + ", ".join(items) + "}"


def _configs_by_r0_block(kernel: tt.KernelOp) -> bool:
    return kernel.kernel_kind == "persistent_reduction" and kernel.takes_r0_block


def _configs_tuple(configs: Sequence[dict[str, int]]) -> str:
    items = ["dict(" + ", ".join(f"{k}={v}" for k, v in c.items()) + ")" for c in configs]
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def _emit_wrapper(wrapper: tt.WrapperOp, kernels: dict[str, tt.KernelOp]) -> str:
    lines: list[str] = []
    inputs = wrapper.input_names()
    if inputs:
        lines.append(f"{', '.join(inputs)}, = args")
    lines.append("args.clear()")
    context = _launch_context_name(wrapper)
    if context is not None:  # the device and stream every launch of the call goes on, read once
        lines.append(f"{context} = launch_context()")
    bound: set[str] = set()
    layouts = wrapper.layouts()
    for op in wrapper.body.block.ops:
        try:
            lines.extend(_bindings(op, bound))
            lines.extend(_wrapper_op(op, kernels, context or "", layouts))
        except (EmitError, ExprPrintError) as e:
            if getattr(e, "op", None) is not None:
                raise
            raise EmitError(f"{_where(op)}: {e}", op) from None
    body = "\n".join("    " + line for line in lines)
    return f"def {wrapper.sym_name.data}(args):\n{body}\n"


def _launch_context_name(wrapper: tt.WrapperOp) -> str | None:
    """`launches`, or `launches_` (...) where a buffer has that name; None without launches."""
    ops = list(wrapper.body.block.ops)
    if not any(isinstance(op, tt.LaunchOp) for op in ops):
        return None
    taken = {*wrapper.input_names(), *(name for op in ops for name in op.defined_names())}
    name = "launches"
    while name in taken:
        name += "_"
    return name


def _bindings(op: Operation, bound: set[str]) -> list[str]:
    """`s0 = arg0_1` for a size input, `s1 = x.size(1)` for an input's dim that is a size no
    earlier input gave: each size symbol bound once, where the inputs first give it."""
    if isinstance(op, tt.SizeInputOp):
        given = [(op.size.expr, op.buffer.data)]
    elif isinstance(op, tt.InputOp):
        given = [(e, f"{op.buffer.data}.size({d})") for d, e in enumerate(op.layout.sizes)]
    else:
        return []
    lines = []
    for size, value in given:
        if isinstance(size, sympy.Symbol) and size.name not in bound:
            bound.add(size.name)
            lines.append(f"{size.name} = {value}")
    return lines


def _wrapper_op(op: Operation, kernels: dict[str, tt.KernelOp], context: str, layouts: dict[str, LayoutAttr]) -> list[str]:
    if isinstance(op, tt.SizeInputOp):
        return []
    if isinstance(op, tt.InputOp):
        # Kernels index inputs with these strides: a caller's differently strided tensor must
        # fail loudly, not read the wrong elements (Inductor's size_asserts).
        layout = op.layout
        return [f"assert_size_stride({op.buffer.data}, {_sizes(layout.sizes)}, {_sizes(layout.strides)})"]
    if isinstance(op, tt.AllocOp):
        return [f"{op.buffer.data} = {_alloc(op.layout, op)}"]
    if isinstance(op, tt.LaunchOp):
        return _launch_choice(op, kernels, context)
    if isinstance(op, tt.ExternOp):
        return _extern(op)
    if isinstance(op, tt.ViewOp):
        layout = op.layout
        source = op.source.root_reference.data
        # The offset counts from the source's first element, as the kernels' indices do: an
        # input may start inside its storage (`x[1:]`), so it is not as_strided's absolute one.
        return [
            f"{op.buffer.data} = reinterpret_tensor({source}, {_sizes(layout.sizes)}, "
            f"{_sizes(layout.strides)}, {_host(layout.offset.expr)})"
        ]
    if isinstance(op, tt.ReuseOp):
        return [_reuse(op, layouts)]
    if isinstance(op, tt.FreeOp):
        return [f"del {', '.join(op.freed)}"]
    if isinstance(op, tt.ReturnOp):
        outs = op.output_names
        return [f"return ({', '.join(outs)}{',' if len(outs) == 1 else ''})"]
    raise EmitError(f"{_where(op)}: emit-python cannot print {op.name} in the wrapper", op)


def _reuse(op: tt.ReuseOp, layouts: dict[str, LayoutAttr]) -> str:
    """`buf7 = buf3; del buf3  # reuse`, through reinterpret_tensor where the layouts differ
    (the storage is the same: the verifier checked its dtype and extent)."""
    source, layout = op.source.root_reference.data, op.layout
    if layout.offset.expr != 0:
        raise EmitError(f"{_where(op)}: a reuse with a storage offset", op)
    value = source
    if layouts.get(source) != layout:
        value = f"reinterpret_tensor({source}, {_sizes(layout.sizes)}, {_sizes(layout.strides)}, 0)"
    return f"{op.buffer.data} = {value}; del {source}  # reuse"


def _sizes(exprs: Sequence[sympy.Expr]) -> str:
    return _host_tuple(exprs) if exprs else "()"


def _alloc(layout: LayoutAttr, op: Operation) -> str:
    if layout.offset.expr != 0:
        raise EmitError(f"{_where(op)}: an allocation with a storage offset", op)
    return f"empty_on_device({_sizes(layout.sizes)}, {_sizes(layout.strides)}, {torch_dtype(layout.dtype)})"


def _launch_choice(op: tt.LaunchOp, kernels: dict[str, tt.KernelOp], context: str) -> list[str]:
    """One `launch(...)`, or, for a persistent kernel with a looped one above its bound:
    `if r0_numel <= bound:` the persistent kernel with the configs of R0_BLOCK =
    next_pow2(r0_numel), `else:` the looped one."""
    kernel = _kernel_of(op, op.kernel_name, kernels)
    if op.unfused_name is not None:
        # Timed against the same work unfused at its first run at these sizes (`choose`).
        sizes = _host_tuple([e.expr for e in (op.znumel, op.ynumel, op.xnumel, op.r0_numel) if e is not None])
        added = "".join(f"{op.arg_names[i]}, " for i in kernel.pointers_added_into)
        restore = f", restore=({added})" if added else ""
        return [f"choose({kernel.sym_name.data}, lambda: {_launch(op, kernel, context)}, "
                f"lambda: {op.unfused_name}([{', '.join(op.referenced_names())}]), {sizes}, {context}{restore})"]
    if op.looped_kernel_name is None or op.persistent_max is None or op.r0_numel is None:
        return [_launch(op, kernel, context)]
    r0_numel = _host(op.r0_numel.expr)
    configs = f"{_configs_name(kernel)}[triton.next_power_of_2({r0_numel})]"
    return [
        f"if {r0_numel} <= {op.persistent_max.value.data}:",
        "    " + _launch(op, kernel, context, configs),
        "else:",
        "    " + _launch(op, _kernel_of(op, op.looped_kernel_name, kernels), context),
    ]


def _kernel_of(op: tt.LaunchOp, name: str, kernels: dict[str, tt.KernelOp]) -> tt.KernelOp:
    kernel = kernels.get(name)
    if kernel is None:
        raise EmitError(f"{_where(op)}: no kernel @{name}", op)
    return kernel


def _launch(op: tt.LaunchOp, kernel: tt.KernelOp, context: str, configs: str | None = None) -> str:
    """`launch(kernel, kernel_configs, xnumel, (buffers..., xnumel[, r0_numel]), launches)`: the
    grid is cdiv(xnumel, XBLOCK) of the config `triton_helpers.launch` picks (autotuned on a
    GPU). A 2-D kernel: `launch(kernel, configs, xnumel, (buffers..., ynumel, xnumel), launches,
    ynumel=ynumel)`, grid (cdiv(xnumel, XBLOCK), cdiv(ynumel, YBLOCK))."""
    name, configs = kernel.sym_name.data, configs or _configs_name(kernel)
    xnumel = _host(op.xnumel.expr)
    debug = ", debug=True" if checks_indices(kernel) else ""  # its asserts run under the interpreter too
    args = ", ".join(a if isinstance(a, str) else _host(a) for a in _launch_args(op, kernel))
    ynumel = f", ynumel={_host(op.ynumel.expr)}" if op.ynumel is not None else ""
    znumel = f", znumel={_host(op.znumel.expr)}" if op.znumel is not None else ""
    added = kernel.pointers_added_into
    restore = f", restore={tuple(added)}" if added and len(kernel.config_list) > 1 else ""
    return f"launch({name}, {configs}, {xnumel}, ({args},), {context}{ynumel}{znumel}{restore}{debug})"


def _launch_args(op: tt.LaunchOp, kernel: tt.KernelOp) -> list[str | sympy.Expr]:
    """What a launch passes the kernel, in order: its buffers (by name), the size symbols it
    takes, then [[znumel,] ynumel,] xnumel[, r0_numel] (as expressions)."""
    args: list[str | sympy.Expr] = [*op.arg_names, *kernel.size_args]
    if op.znumel is not None:
        args.append(op.znumel.expr)
    if op.ynumel is not None:
        return [*args, op.ynumel.expr, op.xnumel.expr, *([op.r0_numel.expr] if op.r0_numel is not None else [])]
    args.append(op.xnumel.expr)
    if kernel.kernel_kind != "pointwise":
        args.append(op.r0_numel.expr if op.r0_numel is not None else sympy.Integer(1))
    return args


def _precompile_table(wrappers: Sequence[tt.WrapperOp], kernels: dict[str, tt.KernelOp]) -> str:
    """`precompile = ((kernel, configs, (arg, ...)), ...)`: each distinct static
    launch as Triton's compile sees its arguments (a buffer as its torch dtype, a number as
    itself), so that `runtime.load_call` can compile every kernel before the first call
    reaches it. A launch over symbolic sizes, or passing a view that starts off a 16-byte
    boundary (a binary is specialized on alignment), is not listed: it compiles at its first
    launch, as every launch under the interpreter does."""
    entries: dict[str, None] = {}  # ordered, without repeats
    for wrapper, op in ((w, op) for w in wrappers for op in w.body.block.ops):
        if not isinstance(op, tt.LaunchOp) or op.looped_kernel_name is not None:
            continue
        layouts = wrapper.layouts()
        kernel = kernels[op.kernel_name]
        args = _launch_args(op, kernel)
        if kernel.size_args or _configs_by_r0_block(kernel) or any(not isinstance(a, str) and not a.is_Integer for a in args):
            continue
        specs = [_compile_spec(a, layouts) for a in args]
        if None in specs:
            continue
        entries[f"({kernel.sym_name.data}, {_configs_name(kernel)}, ({', '.join(specs)},))"] = None  # type: ignore[arg-type]
    return "precompile = (" + "".join(f"\n    {e}," for e in entries) + ("\n)" if entries else ")") + "\n"


def _compile_spec(arg: str | sympy.Expr, layouts: dict[str, LayoutAttr]) -> str | None:
    if not isinstance(arg, str):
        return _host(arg)
    layout = layouts[arg]
    offset = layout.offset.expr
    if not offset.is_Integer or int(offset) * element_bytes(layout.dtype) % 16:
        return None
    return torch_dtype(layout.dtype)


# Device-ish strings the importer keeps for aten arguments.
_TORCH_ENUMS = {
    "strided", "sparse_coo", "contiguous_format", "channels_last", "channels_last_3d", "preserve_format",
}


def _py_arg(attr: Attribute, key: str | None = None) -> str:
    """An extern call argument as Python: buffer references by name, numbers, lists, dtypes."""
    from mlc.dialects.aten import NoneArgAttr

    if isinstance(attr, SymbolRefAttr):
        return attr.root_reference.data
    if isinstance(attr, NoneArgAttr):
        return "None"
    if isinstance(attr, IntegerAttr):
        value = attr.value.data
        return str(bool(value)) if _width(attr.type) == 1 else str(value)
    if isinstance(attr, FloatAttr):
        return py_float(attr.value.data)
    if isinstance(attr, ComplexNumberAttr):
        return f"complex({py_float(attr.real.data)}, {py_float(attr.imag.data)})"
    if isinstance(attr, StringAttr):
        text = attr.data
        if key == "device" or text in ("cpu", "cuda") or text.startswith("cuda:"):
            return "DEVICE"  # where the kernels run, whatever device the graph was traced on
        if text in _TORCH_ENUMS:
            return f"torch.{text}"
        return repr(text)
    if isinstance(attr, DenseArrayBase):
        return "[" + ", ".join(str(v) for v in attr.get_values()) + "]"
    if isinstance(attr, ArrayAttr):
        return "[" + ", ".join(_py_arg(a) for a in attr.data) + "]"
    if isinstance(attr, ExprAttr):  # a size, computed from the wrapper's bindings
        return _host(attr.expr)
    if attr in DTYPE_NAMES:
        return torch_dtype(attr)
    raise EmitError(f"cannot pass {attr} to an extern call")


# Overloads whose torch function calls exactly them, through torch's generated Python binding:
# a few microseconds less per call than the OpOverload (`aten.mm.default`), which packs its
# arguments for the boxed dispatcher (12.4 against 5.9 us for a small mm). Training steps
# make hundreds of these calls, and a host-bound step waits for each.
_TORCH_FUNCTIONS = {
    "mm.default": "torch.mm",
    "bmm.default": "torch.bmm",
    "addmm.default": "torch.addmm",
    "baddbmm.default": "torch.baddbmm",
    "convolution.default": "torch.convolution",
}


def _extern(op: tt.ExternOp) -> list[str]:
    overload = op.overload.data
    if "." not in overload:
        overload += ".default"
    args = [_py_arg(a) for a in op.args.data]
    if op.kwargs is not None:
        args += [f"{k}={_py_arg(v, k)}" for k, v in op.kwargs.data.items()]
    targets = [name or "_" for name in op.result_names()]  # `_`: a None or a number
    namespace, _, name = overload.rpartition("::")  # `ns::packet.overload` outside aten
    function = _TORCH_FUNCTIONS.get(overload) or f"{f'torch.ops.{namespace}' if namespace else 'aten'}.{name}"
    if op.out is not None:  # the result is allocated with its layout and written by the call
        (name,), (layout,) = op.defined_names(), op.layouts.data
        assert isinstance(layout, LayoutAttr) and overload in _TORCH_FUNCTIONS  # (the verifier's OUT_OVERLOADS)
        return [f"{name} = {_alloc(layout, op)}", f"{function}({', '.join([*args, f'out={name}'])})"]
    call = f"{function}({', '.join(args)})"
    lines = [f"{', '.join(targets)} = {call}"]
    # Kernels index the result with the layout the IR gave it; an op free to pick another
    # layout is copied into one with it (no copy when it already matches).
    for name, layout in zip(op.defined_names(), op.layouts.data):
        assert isinstance(layout, LayoutAttr)
        lines.append(f"{name} = ensure_layout({name}, {_sizes(layout.sizes)}, {_sizes(layout.strides)}, {_host(layout.offset.expr)})")
    return lines
