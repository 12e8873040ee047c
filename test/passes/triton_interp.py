"""Two small numpy interpreters (tests only): a buffer.graph, and the triton module made from it.

`run_buffer_graph` evaluates every computed node at all points of its ranges at once;
`run_triton` runs `triton.wrapper @call` block by block, as the GPU would (program ids,
XBLOCK lanes, masks, `other`), so converting and running must give the same buffers.
Of extern calls only `mm` and `addmm` are known (contiguous results).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import sympy
from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, ModuleOp
from xdsl.ir import Operation, SSAValue

from mlc.dialects import buffer, loops, triton
from mlc.dialects.sym import FloorDiv, ModularIndexing

_erf = np.vectorize(math.erf, otypes=[np.float64])

UNARY: dict[str, Callable] = {"math.erf": _erf, "math.sin": np.sin, "math.exp": np.exp, "math.tanh": np.tanh, "math.sqrt": np.sqrt,
                              "math.absf": np.abs, "arith.negf": np.negative}
BINARY: dict[str, Callable] = {
    "arith.addf": np.add, "arith.subf": np.subtract, "arith.mulf": np.multiply, "arith.divf": np.divide,
    "arith.maximumf": np.maximum, "arith.minimumf": np.minimum, "arith.addi": np.add, "arith.subi": np.subtract,
    "arith.muli": np.multiply, "arith.andi": np.logical_and, "arith.ori": np.logical_or, "arith.xori": np.logical_xor,
}
COMPARE: dict[str, Callable] = {"slt": np.less, "sle": np.less_equal, "sgt": np.greater, "sge": np.greater_equal, "eq": np.equal,
                                "ne": np.not_equal, "olt": np.less, "ogt": np.greater, "oeq": np.equal}


def evaluate(expr: sympy.Expr, env: dict[str, np.ndarray]) -> np.ndarray:
    """An index expression on integer arrays (FloorDiv and ModularIndexing as numpy ops)."""
    if expr.is_Integer:
        return np.asarray(int(expr), dtype=np.int64)
    if expr.is_Symbol:
        return env[expr.name]
    args = [evaluate(a, env) for a in expr.args]
    if isinstance(expr, sympy.Add):
        return sum(args[1:], args[0])
    if isinstance(expr, sympy.Mul):
        out = args[0]
        for a in args[1:]:
            out = out * a
        return out
    if isinstance(expr, FloorDiv):
        return args[0] // args[1]
    if isinstance(expr, ModularIndexing):
        return (args[0] // args[1]) % args[2]
    raise NotImplementedError(expr)


def scalar_op(op: Operation, vals: dict[SSAValue, np.ndarray], shape: tuple[int, ...]) -> None:
    """Evaluate one arith/math op on arrays of `shape`."""
    ins = [vals[o] for o in op.operands]
    if isinstance(op, arith.ConstantOp):
        v = op.value
        value = v.value.data if isinstance(v, (FloatAttr, IntegerAttr)) else v
        out = np.full(shape, value)
    elif op.name in UNARY:
        out = UNARY[op.name](ins[0])
    elif op.name in BINARY:
        out = BINARY[op.name](ins[0], ins[1])
    elif isinstance(op, (arith.CmpiOp, arith.CmpfOp)):
        names = arith.CMPI_COMPARISON_OPERATIONS if isinstance(op, arith.CmpiOp) else arith.CMPF_COMPARISON_OPERATIONS
        out = COMPARE[names[op.predicate.value.data]](ins[0], ins[1])
    elif isinstance(op, arith.SelectOp):
        out = np.where(ins[0], ins[1], ins[2])
    else:
        raise NotImplementedError(op.name)
    vals[op.results[0]] = np.broadcast_to(out, shape)


def storage_size(layout: buffer.LayoutAttr) -> int:
    return int(layout.offset.expr) + sum((int(n) - 1) * int(s) for n, s in zip(layout.sizes, layout.strides)) + 1


def random_inputs(graph: buffer.GraphOp, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {n.buffer.data: rng.standard_normal(storage_size(n.layout)) for n in graph.nodes() if isinstance(n, buffer.InputOp)}


def run_buffer_graph(graph: buffer.GraphOp, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    mem = {k: v.copy() for k, v in inputs.items()}
    nodes = [m for n in graph.nodes() for m in (n.members() if isinstance(n, buffer.FusedOp) else [n])]
    layouts = {n.buffer.data: n.layout for n in nodes if isinstance(n, (buffer.InputOp, buffer.ViewOp, buffer.ComputedOp))}
    for node in nodes:
        if isinstance(node, buffer.ExternOp):
            mem[node.defined_names()[0]] = run_extern(node.overload.data, list(node.referenced_names()), mem, layouts)
        elif isinstance(node, buffer.ViewOp):
            mem[node.buffer.data] = mem[node.source.root_reference.data]  # the same storage
        elif isinstance(node, buffer.ComputedOp):
            mem[node.buffer.data] = np.zeros(storage_size(node.layout))
            ranges = [int(r) for r in node.range_exprs]
            grid = np.indices(ranges).reshape(len(ranges), -1) if ranges else np.zeros((0, 1), np.int64)
            env = {f"i{k}": grid[k] for k in range(len(ranges))}
            shape = (grid.shape[1],)
            vals: dict[SSAValue, np.ndarray] = {}
            for op in node.body.block.ops:
                if isinstance(op, buffer.LoadOp):
                    index = np.broadcast_to(evaluate(op.index.expr, env), shape)
                    mask = vals[op.mask] if op.mask is not None else np.ones(shape, bool)
                    vals[op.result] = np.where(mask, mem[op.buffer_name][np.where(mask, index, 0)], 0.0)
                elif isinstance(op, buffer.StoreOp):
                    mem[op.buffer_name][np.broadcast_to(evaluate(op.index.expr, env), shape)] = vals[op.value]
                elif isinstance(op, loops.IndexOp):
                    vals[op.result] = np.broadcast_to(evaluate(op.expr.expr, env), shape)
                else:
                    scalar_op(op, vals, shape)
    return mem


def run_triton(module: ModuleOp, inputs: dict[str, np.ndarray], config: int = 0) -> dict[str, np.ndarray]:
    kernels = {k.sym_name.data: k for k in module.body.block.ops if isinstance(k, triton.KernelOp)}
    (wrapper,) = [w for w in module.body.block.ops if isinstance(w, triton.WrapperOp)]
    mem = {k: v.copy() for k, v in inputs.items()}
    layouts = wrapper.layouts()
    for op in wrapper.body.block.ops:
        if isinstance(op, triton.ExternOp):
            mem[op.defined_names()[0]] = run_extern(op.overload.data, op.referenced_names(), mem, layouts)
        elif isinstance(op, triton.AllocOp):
            mem[op.buffer.data] = np.full(storage_size(op.layout), np.nan)  # unwritten memory shows up
        elif isinstance(op, triton.ViewOp):
            mem[op.buffer.data] = mem[op.source.root_reference.data]
        elif isinstance(op, triton.FreeOp):
            for name in op.freed:
                mem[f"freed:{name}"] = mem.pop(name)
        elif isinstance(op, triton.LaunchOp):
            kernel = kernels[op.kernel_name]
            ptrs = dict(zip(kernel.body.block.args, [mem[a] for a in op.arg_names]))
            configs = kernel.config_list
            xblock = configs[min(config, len(configs) - 1)].block_sizes["XBLOCK"] if configs else 128
            numel = int(op.xnumel.expr)
            for pid in range(-(-numel // xblock)):
                run_block(kernel, ptrs, pid, xblock, numel)
    return {k.removeprefix("freed:"): v for k, v in mem.items()}


def run_block(kernel: triton.KernelOp, ptrs: dict[SSAValue, np.ndarray], pid: int, xblock: int, numel: int) -> None:
    xindex = pid * xblock + np.arange(xblock, dtype=np.int64)
    env = {"xindex": xindex}
    masks = {"xmask": xindex < numel}
    shape = (xblock,)
    vals: dict[SSAValue, np.ndarray] = {}

    def mask_of(op: triton.LoadOp | triton.StoreOp) -> np.ndarray:
        m = np.ones(shape, bool)
        for name in op.masks:
            m = m & masks[name]
        return m & vals[op.mask] if op.mask is not None else m

    for op in kernel.body.block.ops:
        if isinstance(op, triton.IndexOp):
            env[op.var.data] = np.broadcast_to(evaluate(op.expr.expr, env), shape)
        elif isinstance(op, triton.LoadOp):
            m = mask_of(op)
            index = np.broadcast_to(evaluate(op.index.expr, env), shape)
            data = ptrs[op.ptr][np.where(m, index, 0)]
            other = op.other.value.data if op.other is not None else np.nan  # no other: garbage
            vals[op.result] = np.where(m, data, other)
        elif isinstance(op, triton.StoreOp):
            m = mask_of(op)
            index = np.broadcast_to(evaluate(op.index.expr, env), shape)
            ptrs[op.ptr][index[m]] = np.broadcast_to(vals[op.value], shape)[m]
        elif isinstance(op, triton.ExprOp):
            vals[op.result] = np.broadcast_to(evaluate(op.expr.expr, env), shape)
        else:
            scalar_op(op, vals, shape)


def strided(mem: np.ndarray, layout: buffer.LayoutAttr) -> np.ndarray:
    """The tensor a layout describes over a flat storage (reinterpret_tensor)."""
    offset = int(layout.offset.expr)
    strides = [int(s) * mem.itemsize for s in layout.strides]
    return np.lib.stride_tricks.as_strided(mem[offset:], [int(n) for n in layout.sizes], strides)


def run_extern(overload: str, args: list[str], mem: dict[str, np.ndarray], layouts: dict[str, buffer.LayoutAttr]) -> np.ndarray:
    """Only `mm.default` and `addmm.default`: enough to put extern calls between kernels."""
    tensors = [strided(mem[n], layouts[n]) for n in args]
    if overload == "mm.default":
        return (tensors[0] @ tensors[1]).reshape(-1)
    assert overload == "addmm.default", overload
    return (tensors[0] + tensors[1] @ tensors[2]).reshape(-1)
