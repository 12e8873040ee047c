"""Two small numpy interpreters (tests only): a buffer.graph, and the triton module made from it.

`run_buffer_graph` evaluates every computed node at all points of its ranges at once (values
over kept indices are (N, 1) columns, over reduction indices (1, R) rows, broadcast together;
`buffer.reduce` reduces along axis 1); `run_triton` runs `triton.wrapper @call` block by block,
as the GPU would (program ids, XBLOCK lanes, R0_BLOCK slices and rloop steps, masks, `other`
-- NaN where a load has none, so a missing mask shows), so converting and running must give
the same buffers. Of extern calls only `mm` and `addmm` are known (contiguous results).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import sympy
from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType, ModuleOp
from xdsl.ir import Operation, SSAValue

from mlc.dialects import buffer, loops, triton
from mlc.dialects.buffer_layout import LayoutAttr
from mlc.dialects.sym import FloorDiv, ModularIndexing

_erf = np.vectorize(math.erf, otypes=[np.float64])

UNARY: dict[str, Callable] = {"math.erf": _erf, "math.sin": np.sin, "math.exp": np.exp, "math.tanh": np.tanh, "math.sqrt": np.sqrt,
                              "math.rsqrt": lambda v: 1 / np.sqrt(v), "math.absf": np.abs, "arith.negf": np.negative}
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


def scalar_op(op: Operation, vals: dict[SSAValue, np.ndarray], shape: tuple[int, ...] | None = None) -> None:
    """Evaluate one arith/math op on arrays of `shape` (None: as numpy broadcasts the operands)."""
    ins = [vals[o] for o in op.operands]
    if isinstance(op, arith.ConstantOp):
        v = op.value
        value = v.value.data if isinstance(v, (FloatAttr, IntegerAttr)) else v
        out = np.full(shape or (), value)
    elif op.name in UNARY:
        out = UNARY[op.name](ins[0])
    elif op.name in BINARY:
        out = BINARY[op.name](ins[0], ins[1])
    elif isinstance(op, (arith.CmpiOp, arith.CmpfOp)):
        names = arith.CMPI_COMPARISON_OPERATIONS if isinstance(op, arith.CmpiOp) else arith.CMPF_COMPARISON_OPERATIONS
        out = COMPARE[names[op.predicate.value.data]](ins[0], ins[1])
    elif isinstance(op, arith.SelectOp):
        out = np.where(ins[0], ins[1], ins[2])
    elif isinstance(op, (arith.ExtFOp, arith.TruncFOp, arith.ExtSIOp, arith.SIToFPOp)):
        out = ins[0]  # values are float64 / int64 here
    else:
        raise NotImplementedError(op.name)
    vals[op.results[0]] = out if shape is None else np.broadcast_to(out, shape)


def storage_size(layout: LayoutAttr) -> int:
    return int(layout.offset.expr) + sum((int(n) - 1) * int(s) for n, s in zip(layout.sizes, layout.strides)) + 1


def random_inputs(graph: buffer.GraphOp, seed: int = 0) -> dict[str, np.ndarray]:
    """Normal floats; integers in [-m, m) with m the smallest dim a loaded position indexes
    (negative ones count from the end), so every position is valid."""
    rng = np.random.default_rng(seed)
    sizes = [int(op.size.expr) for op in graph.walk() if isinstance(op, loops.IndirectIndexOp)]
    m = min(sizes, default=4)
    out = {}
    for n in graph.nodes():
        if isinstance(n, buffer.InputOp):
            size = storage_size(n.layout)
            integer = isinstance(n.layout.dtype, IntegerType)
            out[n.buffer.data] = rng.integers(-m, m, size) if integer else rng.standard_normal(size)
    return out


def _positions(env: dict[str, np.ndarray], indirect, vals: dict[SSAValue, np.ndarray]) -> dict[str, np.ndarray]:
    """The index variables and an access's loaded positions (ind0, ...)."""
    return env | {f"ind{k}": vals[v] for k, v in enumerate(indirect)}


def _wrap(value: np.ndarray, size: int) -> np.ndarray:
    """A loaded position, negative ones counted from the end (masked-off lanes hold NaN: 0)."""
    value = np.asarray(value)
    value = np.where(np.isfinite(value), value, 0).astype(np.int64)
    return np.where(value < 0, value + size, value)


def _store(mem: np.ndarray, index: np.ndarray, value: np.ndarray, mode: str | None) -> None:
    if mode == "atomic_add":
        np.add.at(mem, index, value)
    else:
        mem[index] = value


def run_buffer_graph(graph: buffer.GraphOp, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    mem = {k: v.copy() for k, v in inputs.items()}
    nodes = [m for n in graph.nodes() for m in (n.members() if isinstance(n, buffer.FusedOp) else [n])]
    layouts = {n.buffer.data: n.layout for n in nodes if isinstance(n, (buffer.InputOp, buffer.ViewOp, buffer.BodyNode))}
    for node in nodes:
        if isinstance(node, buffer.ExternOp):
            mem[node.defined_names()[0]] = run_extern(node.overload.data, list(node.referenced_names()), mem, layouts)
        elif isinstance(node, buffer.ViewOp):
            mem[node.buffer.data] = mem[node.source.root_reference.data]  # the same storage
        elif isinstance(node, buffer.ScatterOp):
            mem[node.buffer.data] = mem[node.base_name]  # it writes the base's storage
            run_computed(node, mem)
        elif isinstance(node, buffer.ComputedOp):
            mem[node.buffer.data] = np.zeros(storage_size(node.layout))
            run_computed(node, mem)
    return mem


def _grid(ranges: list[int], axis: int) -> np.ndarray:
    """Every point of `ranges`, row-major, along `axis` of a 2-D array (one row per variable)."""
    grid = np.indices(ranges).reshape(len(ranges), -1) if ranges else np.zeros((0, 1), np.int64)
    return grid[:, :, None] if axis == 0 else grid[:, None, :]


def run_computed(node: buffer.ComputedOp, mem: dict[str, np.ndarray]) -> None:
    """One node at all its points: i-variables are (N, 1) columns, r-variables (1, R) rows."""
    ranges = [int(r) for r in node.range_exprs]
    rranges = [int(r) for r in node.reduction_range_exprs]
    grid, rgrid = _grid(ranges, 0), _grid(rranges, 1)
    env = {f"i{k}": grid[k] for k in range(len(ranges))} | {f"r0_{k}": rgrid[k] for k in range(len(rranges))}
    full = (grid.shape[1], rgrid.shape[2])
    vals: dict[SSAValue, np.ndarray] = {}
    for op in node.body.block.ops:
        if isinstance(op, buffer.LoadOp):
            index = evaluate(op.index.expr, _positions(env, op.indirect, vals))
            mask = vals[op.mask] if op.mask is not None else np.ones((), bool)
            shape = np.broadcast_shapes(np.shape(index), np.shape(mask))
            index, mask = np.broadcast_to(index, shape), np.broadcast_to(mask, shape)
            vals[op.result] = np.where(mask, mem[op.buffer_name][np.where(mask, index, 0)], 0.0)
        elif isinstance(op, buffer.StoreOp):
            index = evaluate(op.index.expr, _positions(env, op.indirect, vals))
            shape = np.broadcast_shapes(np.shape(index), np.shape(vals[op.value]), (grid.shape[1], 1))
            flat, value = np.broadcast_to(index, shape).ravel(), np.broadcast_to(vals[op.value], shape).ravel()
            _store(mem[op.buffer_name], flat, value, op.store_mode)
        elif isinstance(op, loops.IndirectIndexOp):
            vals[op.result] = _wrap(vals[op.value], int(op.size.expr))
        elif isinstance(op, loops.IndexOp):
            vals[op.result] = evaluate(op.expr.expr, _positions(env, op.indirect, vals))
        elif isinstance(op, buffer.ReduceOp):
            results = reduce_rows(op.kind, np.broadcast_to(vals[op.value], full))
            for result, value in zip(op.results, results):
                vals[result] = value
        else:
            scalar_op(op, vals)


def reduce_rows(kind: str, v: np.ndarray) -> list[np.ndarray]:
    """What buffer.reduce means, along axis 1 (kept as a (N, 1) column)."""
    if kind == "welford":
        mean = v.mean(axis=1, keepdims=True)
        m2 = ((v - mean) ** 2).sum(axis=1, keepdims=True)
        return [mean, m2, np.full_like(mean, v.shape[1])]
    fn = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "any": np.any}.get(kind)
    if fn is not None:
        return [fn(v, axis=1, keepdims=True)]
    arg = np.argmax if kind == "argmax" else np.argmin  # the first position (of a NaN, if any)
    return [arg(v, axis=1)[:, None]]

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
            blocks = configs[min(config, len(configs) - 1)].block_sizes if configs else {"XBLOCK": 128}
            xblock = blocks["XBLOCK"]
            numel = int(op.xnumel.expr)
            if op.ynumel is not None:  # 2-D tiles: grid (x programs, y programs)
                ynumel, yblock = int(op.ynumel.expr), blocks.get("YBLOCK", 32)
                for ypid in range(-(-ynumel // yblock)):
                    for pid in range(-(-numel // xblock)):
                        run_block(kernel, ptrs, pid, xblock, numel, (ypid, yblock, ynumel))
                continue
            for pid in range(-(-numel // xblock)):
                if kernel.kernel_kind == "pointwise":
                    run_block(kernel, ptrs, pid, xblock, numel)
                else:
                    rnumel = int(op.r0_numel.expr)  # type: ignore[union-attr]
                    rblock = blocks.get("R0_BLOCK", 1 << max(rnumel - 1, 0).bit_length())
                    ReductionBlock(kernel, ptrs, pid, (xblock, rblock), (numel, rnumel)).run()
    return {k.removeprefix("freed:"): v for k, v in mem.items()}


def run_block(
    kernel: triton.KernelOp, ptrs: dict[SSAValue, np.ndarray], pid: int, xblock: int, numel: int,
    y: tuple[int, int, int] | None = None,
) -> None:
    """One program; `y` = (y program id, YBLOCK, ynumel) for a 2-D tiled kernel, whose yindex
    is a (YBLOCK, 1) column and xindex a (1, XBLOCK) row."""
    xindex = pid * xblock + np.arange(xblock, dtype=np.int64)
    env = {"xindex": xindex}
    masks = {"xmask": xindex < numel}
    shape: tuple[int, ...] = (xblock,)
    if y is not None:
        ypid, yblock, ynumel = y
        yindex = (ypid * yblock + np.arange(yblock, dtype=np.int64))[:, None]
        env = {"xindex": xindex[None, :], "yindex": yindex}
        masks = {"xmask": env["xindex"] < numel, "ymask": yindex < ynumel}
        shape = (yblock, xblock)
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
            index = np.broadcast_to(evaluate(op.index.expr, _positions(env, op.indirect, vals)), shape)
            data = ptrs[op.ptr][np.where(m, index, 0)]
            other = op.other.value.data if op.other is not None else np.nan  # no other: garbage
            vals[op.result] = np.where(m, data, other)
        elif isinstance(op, triton.StoreOp):
            m = mask_of(op)
            index = np.broadcast_to(evaluate(op.index.expr, _positions(env, op.indirect, vals)), shape)
            _store(ptrs[op.ptr], index[m], np.broadcast_to(vals[op.value], shape)[m], op.store_mode)
        elif isinstance(op, triton.IndirectIndexOp):
            live = np.ones(shape, bool)
            for name in op.masks:
                live = live & masks[name]
            vals[op.result] = np.where(live, _wrap(np.broadcast_to(vals[op.value], shape), int(op.size.expr)), 0)
        elif isinstance(op, triton.ExprOp):
            vals[op.result] = np.broadcast_to(evaluate(op.expr.expr, _positions(env, op.indirect, vals)), shape)
        else:
            scalar_op(op, vals, shape)


class ReductionBlock:
    """One program of a reduction kernel: xindex is an (XBLOCK, 1) column, r0_index a
    (1, R0_BLOCK) row; values broadcast between the two."""

    def __init__(self, kernel: triton.KernelOp, ptrs: dict, pid: int, blocks: tuple[int, int], numels: tuple[int, int]):
        self.kernel, self.ptrs, self.blocks, self.numels = kernel, ptrs, blocks, numels
        xindex = pid * blocks[0] + np.arange(blocks[0], dtype=np.int64)[:, None]
        self.env: dict[str, np.ndarray] = {"xindex": xindex}
        self.masks: dict[str, np.ndarray] = {"xmask": xindex < numels[0]}
        self.vals: dict[SSAValue, np.ndarray] = {}

    def run(self) -> None:
        if self.kernel.kernel_kind == "persistent_reduction":
            self.slice(0)
        self.ops(self.kernel.body.block.ops)

    def slice(self, offset: int) -> None:
        r0_index = offset + np.arange(self.blocks[1], dtype=np.int64)[None, :]
        self.env["r0_index"], self.masks["r0_mask"] = r0_index, r0_index < self.numels[1]

    def mask_of(self, names: list[str], value: SSAValue | None = None) -> np.ndarray:
        m = np.ones((1, 1), bool)
        for name in names:
            m = m & self.masks[name]
        return m & self.vals[value] if value is not None else m

    def ops(self, ops) -> None:
        vals, env = self.vals, self.env
        for op in ops:
            if isinstance(op, triton.IndexOp):
                env[op.var.data] = evaluate(op.expr.expr, env)
            elif isinstance(op, triton.LoadOp):
                m, index = self.mask_of(op.masks, op.mask), evaluate(op.index.expr, _positions(env, op.indirect, vals))
                shape = np.broadcast_shapes(np.shape(index), m.shape)
                m, index = np.broadcast_to(m, shape), np.broadcast_to(index, shape)
                other = op.other.value.data if op.other is not None else np.nan  # no other: garbage
                vals[op.result] = np.where(m, self.ptrs[op.ptr][np.where(m, index, 0)], other)
            elif isinstance(op, triton.StoreOp):
                m, index = self.mask_of(op.masks, op.mask), evaluate(op.index.expr, _positions(env, op.indirect, vals))
                shape = np.broadcast_shapes(np.shape(index), m.shape, np.shape(vals[op.value]))
                m = np.broadcast_to(m, shape)
                value = np.broadcast_to(vals[op.value], shape)[m]
                _store(self.ptrs[op.ptr], np.broadcast_to(index, shape)[m], value, op.store_mode)
            elif isinstance(op, triton.IndirectIndexOp):
                live = self.mask_of(op.masks)
                vals[op.result] = np.where(live, _wrap(vals[op.value], int(op.size.expr)), 0)
            elif isinstance(op, triton.ExprOp):
                vals[op.result] = evaluate(op.expr.expr, _positions(env, op.indirect, vals))
            elif isinstance(op, triton.RLoopOp):
                self.rloop(op)
            elif isinstance(op, triton.AccumulateOp):
                self.accumulate(op)
            elif isinstance(op, triton.ReduceOp):
                self.reduce(op)
            elif isinstance(op, triton.YieldOp):
                pass  # read by rloop
            else:
                scalar_op(op, vals)

    def tile(self, value: SSAValue) -> np.ndarray:
        return np.broadcast_to(self.vals[value], self.blocks).astype(float)

    def rloop(self, op: triton.RLoopOp) -> None:
        block = op.body.block
        accs = [self.tile(v) for v in op.inits]
        for offset in range(0, self.numels[1], self.blocks[1]):
            self.slice(offset)
            self.vals.update(zip(block.args, accs))
            self.ops(block.ops)
            accs = [self.tile(v) for v in block.last_op.operands]  # triton.yield
        self.vals.update(zip(op.results, accs))

    def accumulate(self, op: triton.AccumulateOp) -> None:
        kind, m = op.reduction_kind, np.broadcast_to(self.mask_of(op.masks), self.blocks)
        v, accs = self.tile(op.value), [self.tile(a) for a in op.accumulators]
        if kind in ("argmax", "argmin"):
            index = np.broadcast_to(self.env["r0_index"], self.blocks)
            new = _with_index(kind, accs[0], accs[1], v, index)
        elif kind == "welford":
            mean, m2, weight = accs
            delta = v - mean
            new_mean = mean + delta / (weight + 1)
            new = [new_mean, m2 + delta * (v - new_mean), weight + 1]
        else:
            combine = {"sum": np.add, "prod": np.multiply, "max": _nan_max, "min": _nan_min, "any": np.logical_or}
            new = [combine[kind](accs[0], v)]
        for result, acc, value in zip(op.results, accs, new):
            self.vals[result] = np.where(m, value, acc)

    def reduce(self, op: triton.ReduceOp) -> None:
        kind, m = op.reduction_kind, np.broadcast_to(self.mask_of(op.masks), self.blocks)
        tiles = [self.tile(v) for v in op.values]
        identity = triton.reduction_identity(kind, op.values[0].type)
        if kind in ("argmax", "argmin"):
            index = tiles[1] if op.explicit_index else np.broadcast_to(self.env["r0_index"], self.blocks)
            value = np.where(m, tiles[0], identity)
            best, position = value[:, :1], index[:, :1]
            for k in range(1, self.blocks[1]):
                best, position = _with_index(kind, best, position, value[:, k:k + 1], index[:, k:k + 1])
            self.vals[op.results[0]] = position
        elif kind == "welford":
            mean, m2, weight = (np.where(m, t, 0.0) for t in tiles)
            total = weight.sum(axis=1, keepdims=True)
            avg = (weight * mean).sum(axis=1, keepdims=True) / np.where(total == 0, 1, total)
            spread = m2.sum(axis=1, keepdims=True) + (weight * (mean - avg) ** 2).sum(axis=1, keepdims=True)
            self.vals.update(zip(op.results, [avg, spread, total]))
        else:
            fn = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "any": np.any}[kind]
            self.vals[op.results[0]] = fn(np.where(m, tiles[0], identity), axis=1, keepdims=True)


def _nan_max(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where((a > b) | np.isnan(a), a, b)


def _nan_min(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where((a < b) | np.isnan(a), a, b)


def _with_index(kind: str, av, ai, bv, bi) -> list[np.ndarray]:
    """The winning (value, index) pair: larger (smaller) value, NaN first, then lower index."""
    better = av > bv if kind == "argmax" else av < bv
    better = better | (np.isnan(av) & ~np.isnan(bv))
    equal = (av == bv) | (np.isnan(av) & np.isnan(bv))
    take_a = better | (equal & (ai < bi))
    return [np.where(take_a, av, bv), np.where(take_a, ai, bi)]


def strided(mem: np.ndarray, layout: LayoutAttr) -> np.ndarray:
    """The tensor a layout describes over a flat storage (reinterpret_tensor)."""
    offset = int(layout.offset.expr)
    strides = [int(s) * mem.itemsize for s in layout.strides]
    return np.lib.stride_tricks.as_strided(mem[offset:], [int(n) for n in layout.sizes], strides)


def run_extern(overload: str, args: list[str], mem: dict[str, np.ndarray], layouts: dict[str, LayoutAttr]) -> np.ndarray:
    """Only `mm.default` and `addmm.default`: enough to put extern calls between kernels."""
    tensors = [strided(mem[n], layouts[n]) for n in args]
    if overload == "mm.default":
        return (tensors[0] @ tensors[1]).reshape(-1)
    assert overload == "addmm.default", overload
    return (tensors[0] + tensors[1] @ tensors[2]).reshape(-1)
