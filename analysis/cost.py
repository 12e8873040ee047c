"""Predicted GPU time of a kernel launch on a `Target`: what it moves and computes, then a
bound by the target's speeds.

    traffic = launch_traffic(launch, kernel, layouts)   # bytes, flops, programs of one launch
    predicted = predict(traffic, target)                  # seconds and what bounds them
    text = report(module, target)                         # every launch of a triton module

A launch moves each buffer's distinct bytes through DRAM once (`dram_bytes`) and asks for more
where lanes re-read what another lane read (a broadcast bias, a softmax's second pass, a GEMM's
operand tiles: `requested_bytes`, served by L2); a `tl.dot` does 2*M*N*K flops on whole tiles.
Its time is the target's least kernel time plus the longer of moving and computing:

    dram      dram_bytes / (dram_bytes_per_s * active)      active: programs / SMs, at most 1
    l2        (requested - dram bytes) / (l2_bytes_per_s * active)
    tensor    flops / (peak * tile and wave efficiency)     tensor cores (tf32: half), f32 FMA

`bound` names the term that decided. The speeds are `Target`'s (a calibration's, `bench/cost.py`);
a size that is symbolic counts as the launch heuristics' size hint. Pure functions of the IR:
nothing here changes it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import sympy
from xdsl.dialects.builtin import ModuleOp

from mlc.analysis.launch import hinted
from mlc.analysis.target import H100, Target
from mlc.dialects import triton
from mlc.dialects.buffer_layout import LayoutAttr, element_bytes

BASE_INDICES = {"xindex": "x", "yindex": "y", "zindex": "z", "r0_index": "r0"}  # a kernel's lanes, per dimension


@dataclass(frozen=True)
class Traffic:
    """What one launch moves and computes."""

    kind: str  # the kernel's kind (pointwise, reduction, persistent_reduction, matmul)
    programs: int  # the grid's programs with the kernel's first config
    dram_bytes: int  # each buffer's distinct bytes read, and written, once
    requested_bytes: int  # the bytes its loads and stores ask for, lane by lane
    flops: int = 0  # tl.dot's multiply-adds, times 2
    flops_per_s_scale: float = 1.0  # tensor-core speed relative to bf16 (tf32 0.5); 0: FMA units
    tile_efficiency: float = 1.0  # a GEMM's useful share of the tiles it computes


@dataclass(frozen=True)
class Prediction:
    seconds: float
    bound: str  # "launch", "dram", "l2", "compute"
    traffic: Traffic

    @property
    def us(self) -> float:
        return self.seconds * 1e6


def predict(traffic: Traffic, target: Target = H100) -> Prediction:
    """`traffic`'s time on `target` (the module docstring's model)."""
    active = min(1.0, traffic.programs / target.num_sms)
    terms = {
        "dram": traffic.dram_bytes / (target.dram_bytes_per_s * active),
        "l2": max(0, traffic.requested_bytes - traffic.dram_bytes) / (target.l2_bytes_per_s * active),
        "compute": _compute_seconds(traffic, target),
    }
    moving = terms["dram"] + terms["l2"]
    busy = max(moving, terms["compute"])
    if busy == 0:
        bound = "launch"
    elif terms["compute"] >= moving:
        bound = "compute"
    else:
        bound = "dram" if terms["dram"] >= terms["l2"] else "l2"
    return Prediction(target.kernel_s + busy, bound, traffic)


def _compute_seconds(traffic: Traffic, target: Target) -> float:
    if not traffic.flops:
        return 0.0
    waves = math.ceil(traffic.programs / target.num_sms)
    wave_efficiency = traffic.programs / (waves * target.num_sms)
    peak = (target.tensor_flops_per_s * traffic.flops_per_s_scale if traffic.flops_per_s_scale
            else target.fma_flops_per_s)
    return traffic.flops / (peak * traffic.tile_efficiency * wave_efficiency)


# ---------------------------------------------------------------------------------------------
# Traffic of a launch, read off its kernel's loads and stores


def launch_traffic(launch: triton.LaunchOp, kernel: triton.KernelOp, layouts: dict[str, LayoutAttr]) -> Traffic:
    """What `launch` of `kernel` moves (its buffers' `layouts`) and computes, with the kernel's
    first config (the heuristics' preferred one)."""
    numels = {dim: _numel(attr) for dim, attr in
              (("x", launch.xnumel), ("y", launch.ynumel), ("z", launch.znumel), ("r0", launch.r0_numel))}
    config = kernel.config_list[0].block_sizes if kernel.config_list else {}
    programs = _programs(numels, config)
    ranges = _index_ranges(kernel, numels)
    buffers = launch.arg_names
    dram: dict[tuple[str, str], int] = {}
    requested = 0
    for op in kernel.body.walk():
        if not isinstance(op, (triton.LoadOp, triton.StoreOp)):
            continue
        name = buffers[op.ptr.index]  # type: ignore[attr-defined]
        layout = layouts.get(name)
        if layout is None:
            continue
        size = element_bytes(layout.dtype)
        distinct, asked = _elements(op.index.expr, ranges, numels, config, kernel.kernel_kind, _extent(layout))
        direction = "write" if isinstance(op, triton.StoreOp) else "read"
        dram[(name, direction)] = max(dram.get((name, direction), 0), distinct * size)
        requested += asked * size
    flops, scale, efficiency = _dot_work(kernel, numels, config)
    return Traffic(kernel.kernel_kind, programs, sum(dram.values()), requested, flops, scale, efficiency)


def _numel(attr: object) -> int:
    return 1 if attr is None else _value(attr.expr)  # type: ignore[attr-defined]


def _extent(layout: LayoutAttr) -> int:
    return _value(layout.storage_extent())


def _value(expr: sympy.Expr) -> int:
    """A size's value: the launch heuristics' hint where it is symbolic."""
    return int(expr) if expr.is_number else hinted(expr)


def _programs(numels: dict[str, int], config: dict[str, int]) -> int:
    programs = math.ceil(numels["x"] / config.get("XBLOCK", numels["x"]))
    if "YBLOCK" in config:
        programs *= math.ceil(numels["y"] / config["YBLOCK"])
    return programs * numels["z"]


def _index_ranges(kernel: triton.KernelOp, numels: dict[str, int]) -> dict[str, int]:
    """How many values each index symbol of the kernel takes (`triton.index` names them)."""
    ranges = {base: numels[dim] for base, dim in BASE_INDICES.items()}
    for op in kernel.body.walk():
        if isinstance(op, triton.IndexOp):
            ranges[op.var.data] = _values(op.expr.expr, ranges)
    return ranges


def _values(expr: sympy.Expr, ranges: dict[str, int]) -> int:
    """An upper bound on the values `expr` takes: a modulus caps its base, a division divides
    it; anything else takes at most the product of its symbols' ranges."""
    name = type(expr).__name__
    if name == "ModularIndexing":
        base, divisor, modulus = expr.args
        return min(_value(modulus), math.ceil(_values(base, ranges) / max(1, _value(divisor))))
    if name == "FloorDiv":
        base, divisor = expr.args
        return math.ceil(_values(base, ranges) / max(1, _value(divisor)))
    return math.prod(ranges.get(s.name, 1) for s in expr.free_symbols)


def _elements(index: sympy.Expr, ranges: dict[str, int], numels: dict[str, int], config: dict[str, int],
              kind: str, extent: int) -> tuple[int, int]:
    """The distinct elements an access touches (at most its buffer's extent) and those its lanes
    ask for: every lane of the dimensions the kernel runs, the reduction's only where the index
    moves along it; a GEMM operand's once per tile of the other output dimension."""
    names = {s.name for s in index.free_symbols}
    distinct = min(extent, _values(index, ranges)) if names else 1
    dims = {BASE_INDICES.get(n) or _dimension(n) for n in names} - {None}
    asked = numels["x"] * numels["y"] * numels["z"]
    if kind == "matmul" and "r0" in dims:  # an operand tile: A re-read per column tile, B per row tile
        asked = distinct * (math.ceil(numels["x"] / config.get("XBLOCK", numels["x"])) if "y" in dims
                            else math.ceil(numels["y"] / config.get("YBLOCK", numels["y"])))
    elif "r0" in dims:
        asked *= numels["r0"]
    return distinct, max(asked, distinct)


def _dimension(name: str) -> str | None:
    """The dimension an index symbol belongs to by its name (`x0`, `y1`, `r0_0`; None: `ind0`)."""
    if name.startswith("r0_"):
        return "r0"
    return name[0] if name[:1] in ("x", "y", "z") and name[1:].isdigit() else None


def _dot_work(kernel: triton.KernelOp, numels: dict[str, int], config: dict[str, int]) -> tuple[int, float, float]:
    """A matmul kernel's flops, its tensor-core speed scale, and its tiles' useful share."""
    dots = [op for op in kernel.body.walk() if isinstance(op, triton.DotOp)]
    if not dots:
        return 0, 1.0, 1.0
    m, n, k, batch = numels["y"], numels["x"], numels["r0"], numels["z"]
    dot = dots[0]
    dtype = str(dot.lhs.type)
    scale = 0.5 if dot.precision.data == "tf32" else 0.0 if dtype == "f32" else 1.0
    bm, bn = config.get("YBLOCK", m), config.get("XBLOCK", n)
    efficiency = (m * n) / (math.ceil(m / bm) * bm * math.ceil(n / bn) * bn)
    return 2 * m * n * k * batch, scale, efficiency


# ---------------------------------------------------------------------------------------------
# Every launch of a module


def predictions(module: ModuleOp, target: Target = H100) -> list[tuple[str, Prediction]]:
    """Each launch of the module's wrappers, in order: its kernel's name and predicted time."""
    kernels = {op.sym_name.data: op for op in module.ops if isinstance(op, triton.KernelOp)}
    out = []
    for wrapper in (op for op in module.ops if isinstance(op, triton.WrapperOp)):
        layouts = wrapper.layouts()
        for op in wrapper.body.block.ops:
            if isinstance(op, triton.LaunchOp) and op.kernel_name in kernels:
                kernel = kernels[op.kernel_name]
                out.append((op.kernel_name, predict(launch_traffic(op, kernel, layouts), target)))
    return out


def report(module: ModuleOp, target: Target = H100) -> str:
    """The dump's cost.txt: each launch's predicted µs, its bound, and what it moves."""
    lines = [f"predicted on {target.source}: us, bound, MB from DRAM, MB asked, GFLOP, programs"]
    total = 0.0
    for name, p in predictions(module, target):
        t = p.traffic
        total += p.us
        lines.append(f"{p.us:9.2f}  {p.bound:8} {t.dram_bytes / 1e6:9.3f} {t.requested_bytes / 1e6:9.3f} "
                     f"{t.flops / 1e9:8.3f} {t.programs:7}  {name}")
    lines.append(f"{total:9.2f}  total")
    return "\n".join(lines) + "\n"
