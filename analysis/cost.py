"""Predicted GPU time of a kernel launch on a `Target`: what it moves and computes, then a
bound by the target's speeds.

    traffic = launch_traffic(launch, kernel, layouts)   # bytes, flops, programs of one launch
    predicted = predict(traffic, target)                  # seconds and what bounds them
    text = report(module, target)                         # every launch of a triton module

A launch moves each buffer's distinct bytes through DRAM once (`dram_bytes`: each index
expression's distinct elements, summed over a buffer's expressions, at most its extent). Its lanes
ask for more where they read an element again (`requested_bytes`): a broadcast bias read by
every row (a `shared` re-read, by other programs), a looped reduction's second pass over its
row (an `own` re-read, by the program that read it first), a GEMM's operand tiles. Lanes that
a mask switches off read nothing: an index that takes more values than its buffer holds (a
cat's input) asks for each of its distinct elements once per lane that shares its value.
A re-read hits the SM's L1 where what must stay cached between the reads fits there
(`Target.l1_bytes`): a shared one's distinct bytes, an own one's per-program bytes times the
programs resident on an SM; L2 then serves only each SM's first read of a shared one. Other
re-reads, and a GEMM's tiles (through shared memory), are L2's. A `tl.dot` does 2*M*N*K flops.

A gather (an indirect load) whose lanes read elements a row apart moves a 32-byte sector
per element. Its time is the target's least kernel time plus the longest of:

    moving    dram + l2, where
      dram    dram_bytes / (dram_bytes_per_s * active)       active: programs / SMs, at most 1
      l2      re-read bytes L2 serves / (l2_bytes_per_s * active)
    compute   the longer of
      tensor  flops / (peak * tile and wave efficiency)      tensor cores (tf32: half), f32 FMA
      lanes   lane_ops / (fma_flops_per_s / 2 * active)      lane instructions (an FMA: 2 flops)
    serial    (rounds * round_trips - 1) * round_trip_s      a program's dependent memory round trips
              + rounds * combines * combine_s               and its reductions' combines across warps

`lane_ops` counts the kernel body's arith and math ops, index expressions (`triton.index`,
`triton.expr`: their sums, products, divisions) and indirect indices, each weighted by
`LANE_OP_WEIGHTS` (one instruction; a division or a special function, 4; twice for 64 bits)
times the lanes it runs on: x*y*z*r0 numel, a looped reduction's ops outside its loop once
per row (x*y*z); a matmul's none. A `triton.accumulate` counts one per value it carries;
loads, stores, constants and `triton.reduce` none.

DRAM and L2 add up: a program re-reads after its first reads (a second pass over its row),
not beside them. `kernel_s` is what a profiler measures for a kernel that loads and stores
one element (its launch, one round trip, the write-back), so the serial term counts the
round trips beyond that one: one program's loads outside loops, then each loop iteration's
(an indirect load waits for the load of its index: two; a loop pipelined over `num_stages`
iterations waits once per that many), times the rounds of programs an SM runs one after
another (the grid over SMs times the programs resident on one, by threads and CUDA's block
limit). A reduction's combine (`tl.sum` of a block: shuffles within warps, then across them
through shared memory and barriers) waits on the loads before it and holds the store after it,
so each one a program does adds `combine_s` per round. It bounds a launch of few programs that
loop (Little's law: few loads in flight per round trip), and the smallest reductions (a split
reduction's second stage). `bound` names the longest term. The speeds are `Target`'s (a calibration's,
`bench/cost.py`; `l1_bytes` and `max_programs_per_sm` are hardware facts); a size that is
symbolic counts as the launch heuristics' size hint. Pure functions of the IR: nothing here
changes it.

Before a group is a kernel (`fuse`), `group_seconds` is the coarse form: the least kernel time
plus what the group reads from outside it and stores for later readers, at the DRAM speed;
`fusion_saving(a, b)` is two groups' time apart minus their time as one (XLA's priority
fusion). `rank-configs` ranks a kernel's configs by `launch_traffic` with each one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import sympy
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute

from mlc.analysis.dependencies import dep_buffer, read_writes
from mlc.analysis.launch import hinted
from mlc.analysis.target import H100, Target
from mlc.dialects import buffer, triton
from mlc.dialects.buffer_layout import LayoutAttr, element_bytes

BASE_INDICES = {"xindex": "x", "yindex": "y", "zindex": "z", "r0_index": "r0"}  # a kernel's lanes, per dimension
SECTOR_BYTES = 32  # the unit DRAM and L2 move (NVIDIA GPUs since Volta)


@dataclass(frozen=True)
class Reread:
    """Bytes a launch's lanes read again after the first read of them."""

    bytes: int  # the reads beyond each element's first
    footprint: int  # what must stay cached for them to hit: shared, the load's distinct bytes; own, a program's
    shared: bool  # read again by other programs (a broadcast), not by the program that read them (a second pass)


@dataclass(frozen=True)
class Traffic:
    """What one launch moves and computes."""

    kind: str  # the kernel's kind (pointwise, reduction, persistent_reduction, matmul)
    programs: int  # the grid's programs with the kernel's first config
    dram_bytes: int  # each buffer's distinct bytes read, and written, once
    requested_bytes: int  # the bytes its unmasked lanes' loads and stores ask for
    flops: int = 0  # tl.dot's multiply-adds, times 2
    flops_per_s_scale: float = 1.0  # tensor-core speed relative to bf16 (tf32 0.5); 0: FMA units
    tile_efficiency: float = 1.0  # a GEMM's useful share of the tiles it computes
    rereads: tuple[Reread, ...] = ()  # requested beyond dram's reads, by how they can hit (GEMM tiles: l2_only)
    round_trips: int = 1  # one program's dependent memory round trips (loop iterations x indirection)
    warps: int = 4  # the first config's num_warps (programs resident per SM)
    l2_only: int = 0  # re-read bytes that only L2 serves (a GEMM's operand tiles)
    combines: int = 0  # one program's reductions of a block across its warps (triton.reduce ops)
    lane_ops: int = 0  # lane instructions: each arith, math and index op's weight times the lanes it runs on


@dataclass(frozen=True)
class Prediction:
    seconds: float
    bound: str  # "launch", "dram", "l2", "compute", "serial"
    traffic: Traffic

    @property
    def us(self) -> float:
        return self.seconds * 1e6


def predict(traffic: Traffic, target: Target = H100) -> Prediction:
    """`traffic`'s time on `target` (the module docstring's model)."""
    active = min(1.0, traffic.programs / target.num_sms)
    terms = {
        "dram": traffic.dram_bytes / (target.dram_bytes_per_s * active),
        "l2": l2_bytes(traffic, target) / (target.l2_bytes_per_s * active),
        "compute": max(_compute_seconds(traffic, target), _lane_seconds(traffic, target, active)),
        "serial": _serial_seconds(traffic, target),
    }
    moving = terms["dram"] + terms["l2"]  # a program's re-reads follow its first reads, not beside them
    busy = max(moving, terms["compute"], terms["serial"])
    if busy == 0:
        bound = "launch"
    elif busy == moving:
        bound = "dram" if terms["dram"] >= terms["l2"] else "l2"
    else:
        bound = "compute" if busy == terms["compute"] else "serial"
    return Prediction(target.kernel_s + busy, bound, traffic)


def _programs_per_sm(traffic: Traffic, target: Target) -> int:
    """The most programs of the launch's size one SM can hold at once (threads, CUDA's block limit)."""
    return min(target.max_programs_per_sm, max(1, target.threads_per_sm // (32 * traffic.warps)))


def resident_programs(traffic: Traffic, target: Target) -> int:
    """How many of the launch's programs one SM holds at once."""
    return max(1, min(_programs_per_sm(traffic, target), math.ceil(traffic.programs / target.num_sms)))


def l2_bytes(traffic: Traffic, target: Target) -> int:
    """The re-read bytes L2 serves: those whose footprint misses an SM's L1, each SM's first
    read of a shared one that fits, and a GEMM's tiles."""
    sms = min(traffic.programs, target.num_sms)
    resident = resident_programs(traffic, target)
    total = traffic.l2_only
    for reread in traffic.rereads:
        cached = reread.footprint * (1 if reread.shared else resident)
        if cached > target.l1_bytes:
            total += reread.bytes
        elif reread.shared:
            total += min(reread.bytes, reread.footprint * max(0, sms - 1))
    return total


def _serial_seconds(traffic: Traffic, target: Target) -> float:
    """The round trips one SM's programs wait for one after another, beyond the one `kernel_s`
    holds, and their combines."""
    rounds = math.ceil(traffic.programs / (target.num_sms * _programs_per_sm(traffic, target)))
    return max(0, rounds * traffic.round_trips - 1) * target.round_trip_s + rounds * traffic.combines * target.combine_s


def _compute_seconds(traffic: Traffic, target: Target) -> float:
    if not traffic.flops:
        return 0.0
    waves = math.ceil(traffic.programs / target.num_sms)
    wave_efficiency = traffic.programs / (waves * target.num_sms)
    peak = (target.tensor_flops_per_s * traffic.flops_per_s_scale if traffic.flops_per_s_scale
            else target.fma_flops_per_s)
    return traffic.flops / (peak * traffic.tile_efficiency * wave_efficiency)


def _lane_seconds(traffic: Traffic, target: Target, active: float) -> float:
    """The lanes' instructions at the FMA rate (an FMA is 2 flops), on the SMs the launch keeps busy."""
    return traffic.lane_ops / (target.fma_flops_per_s / 2 * active) if traffic.lane_ops else 0.0


# ---------------------------------------------------------------------------------------------
# Traffic of a launch, read off its kernel's loads and stores


@dataclass(frozen=True)
class _Access:
    """One load or store: its buffer and direction, index, element bytes, buffer extent (in
    elements), distinct elements and the elements its unmasked lanes ask for."""

    buffer: str
    direction: str  # "read", "write"
    index: sympy.Expr
    size: int
    extent: int
    distinct: int
    asked: int


def launch_traffic(launch: triton.LaunchOp, kernel: triton.KernelOp, layouts: dict[str, LayoutAttr],
                   config: triton.ConfigAttr | None = None) -> Traffic:
    """What `launch` of `kernel` moves (its buffers' `layouts`) and computes, with `config`, by
    default the kernel's first (the heuristics' preferred one)."""
    numels = {dim: _numel(attr) for dim, attr in
              (("x", launch.xnumel), ("y", launch.ynumel), ("z", launch.znumel), ("r0", launch.r0_numel))}
    first = config if config is not None else kernel.config_list[0] if kernel.config_list else None
    config = first.block_sizes if first is not None else {}
    programs = _programs(numels, config)
    accesses = list(_accesses(kernel, launch.arg_names, layouts, numels, config))
    rereads, l2_only = _rereads(accesses, programs, kernel.kernel_kind == "matmul")
    flops, scale, efficiency = _dot_work(kernel, numels, config)
    stages = first.num_stages.data if first is not None else 1
    return Traffic(kernel.kernel_kind, programs, _dram_bytes(accesses), sum(a.asked * a.size for a in accesses),
                   flops, scale, efficiency, rereads, _round_trips(kernel, numels, config, stages),
                   first.num_warps.data if first is not None else 4, l2_only,
                   sum(1 for op in kernel.body.walk() if isinstance(op, triton.ReduceOp)),
                   _lane_ops(kernel, numels))


def _accesses(kernel: triton.KernelOp, buffers: list[str], layouts: dict[str, LayoutAttr], numels: dict[str, int],
              config: dict[str, int]) -> Iterator[_Access]:
    """The kernel's loads and stores of the launch's buffers, in program order."""
    ranges = _index_ranges(kernel, numels)
    for op in kernel.body.walk():
        if not isinstance(op, (triton.LoadOp, triton.StoreOp)):
            continue
        name = buffers[op.ptr.index]  # type: ignore[attr-defined]
        layout = layouts.get(name)
        if layout is None:
            continue
        extent = _extent(layout)
        distinct, asked = _elements(op.index.expr, ranges, numels, config, kernel.kernel_kind, extent)
        direction = "write" if isinstance(op, triton.StoreOp) else "read"
        size = element_bytes(layout.dtype)
        if op.indirect and _scattered(op.index.expr):  # a gather's elements each move their sector
            size, extent = max(size, SECTOR_BYTES), extent * size // max(size, SECTOR_BYTES) or 1
        yield _Access(name, direction, op.index.expr, size, extent, distinct, asked)


def _scattered(index: sympy.Expr) -> bool:
    """Whether no lane dimension moves `index` by one element: lanes next to each other read
    elements a row apart (a gather of one class per row), each in its own DRAM sector."""
    lanes = [s for s in index.free_symbols if s.name in BASE_INDICES or _dimension(s.name)]
    return bool(lanes) and all(index.diff(s) != 1 for s in lanes)


def _dram_bytes(accesses: list[_Access]) -> int:
    """Each buffer's distinct bytes per direction: its index expressions' distinct elements (an
    expression accessed twice counts once; two halves of a buffer, both), at most its extent."""
    by_buffer: dict[tuple[str, str], dict[sympy.Expr, _Access]] = {}
    for a in accesses:
        seen = by_buffer.setdefault((a.buffer, a.direction), {})
        if a.index not in seen or seen[a.index].distinct < a.distinct:
            seen[a.index] = a
    total = 0
    for seen in by_buffer.values():
        some = next(iter(seen.values()))
        total += some.size * min(some.extent, sum(a.distinct for a in seen.values()))
    return total


def _rereads(accesses: list[_Access], programs: int, matmul: bool) -> tuple[tuple[Reread, ...], int]:
    """The reads beyond each element's first: a load's lanes sharing an element (shared, by
    other programs), an index expression loaded again (own: the program's second pass over
    what it read), and a GEMM's operand tiles (the int: only L2 serves them)."""
    rereads: list[Reread] = []
    tiles = 0
    loaded: set[tuple[str, sympy.Expr]] = set()
    for a in (a for a in accesses if a.direction == "read"):
        again = (a.buffer, a.index) in loaded
        loaded.add((a.buffer, a.index))
        extra = (a.asked if again else a.asked - a.distinct) * a.size
        if extra <= 0:
            continue
        if matmul:
            tiles += extra
            continue
        shared = a.asked > a.distinct
        distinct_bytes = a.distinct * a.size
        rereads.append(Reread(extra, distinct_bytes if shared else math.ceil(distinct_bytes / programs), shared))
    return tuple(rereads), tiles


def _round_trips(kernel: triton.KernelOp, numels: dict[str, int], config: dict[str, int], stages: int) -> int:
    """One program's dependent memory round trips: its loads outside loops, then each loop's
    iterations (over `num_stages` where the loop is software-pipelined), each as deep as its
    deepest load (an indirect load waits for the load of its index: two)."""
    trips = math.ceil(numels["r0"] / config["R0_BLOCK"]) if "R0_BLOCK" in config else 1
    total = _load_depth(op for op in kernel.body.walk() if not _in_rloop(op))
    for loop in (op for op in kernel.body.walk() if isinstance(op, triton.RLoopOp)):
        total += math.ceil(trips / max(1, stages)) * _load_depth(loop.body.walk())
    return max(1, total)


def _load_depth(ops: Iterator[object]) -> int:
    return max((2 if op.indirect else 1 for op in ops if isinstance(op, triton.LoadOp)), default=0)


def _in_rloop(op: object) -> bool:
    parent = op.parent_op()  # type: ignore[attr-defined]
    while parent is not None and not isinstance(parent, triton.KernelOp):
        if isinstance(parent, triton.RLoopOp):
            return True
        parent = parent.parent_op()
    return False


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
    """The distinct elements an access touches (at most its buffer's extent) and those its
    unmasked lanes ask for: the lanes of the dimensions the kernel runs (the reduction's only
    where the index moves along it) sharing each value of the index, once per distinct element
    (an index of more values than the buffer holds is masked where it is out: a cat's input);
    a GEMM operand's once per tile of the other output dimension."""
    names = {s.name for s in index.free_symbols}
    values = _values(index, ranges) if names else 1
    distinct = min(extent, values)
    dims = {BASE_INDICES.get(n) or _dimension(n) for n in names} - {None}
    lanes = numels["x"] * numels["y"] * numels["z"]
    if kind == "matmul" and "r0" in dims:  # an operand tile: A re-read per column tile, B per row tile
        asked = distinct * (math.ceil(numels["x"] / config.get("XBLOCK", numels["x"])) if "y" in dims
                            else math.ceil(numels["y"] / config.get("YBLOCK", numels["y"])))
    else:
        lanes *= numels["r0"] if "r0" in dims else 1
        asked = distinct * max(1, lanes // values)
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
# Lane instructions of a launch: its kernel body's arithmetic, per lane


# A lane's instructions for one op, by kind; a 64-bit op's twice as many (an i64 op is two
# 32-bit instructions, f64 runs at half the f32 rate).
LANE_OP_WEIGHTS = {
    "alu": 1,  # add, multiply, compare, select, cast, ... on 32 bits or fewer
    "divide": 4,  # divf, an integer division or remainder
    "special": 4,  # exp, log, erf, tanh, sqrt, pow, ...: the SFUs run at a quarter of the FMA rate
    "index_div": 4,  # an index's division or remainder by a constant (multiply-high, shifts)
    "indirect": 3,  # an indirect index: a negative position counted from the end (compare, add, select)
}
DIVIDES = frozenset({"arith.divf", "arith.remf", "arith.divsi", "arith.divui", "arith.remsi", "arith.remui",
                     "arith.floordivsi", "arith.ceildivsi", "arith.ceildivui"})
ALU_MATH = frozenset({"math.absf", "math.absi", "math.ceil", "math.floor", "math.trunc", "math.round",
                      "math.roundeven", "math.copysign", "math.fma", "math.ctlz", "math.cttz", "math.ctpop"})


def _lane_ops(kernel: triton.KernelOp, numels: dict[str, int]) -> int:
    """The instructions the launch's lanes execute: each op's weight times its lanes (a looped
    reduction's ops outside the loop run once per row; a matmul's: none, its dot is the work)."""
    if kernel.kernel_kind == "matmul":
        return 0
    rows = numels["x"] * numels["y"] * numels["z"]
    per_row = kernel.kernel_kind == "reduction"
    total = 0
    for op in kernel.body.walk():
        weight = _op_weight(op, kernel.index_bits)
        if weight:
            total += weight * (rows if per_row and not _in_rloop(op) else rows * numels["r0"])
    return total


def _op_weight(op: object, index_bits: int) -> int:
    """One lane's instructions for `op`: an arith or math op's by its kind and width, an index
    expression's by its operations (at the kernel's index width), an indirect index's, a looped
    reduction's accumulation (one instruction per value it carries). Loads, stores, the final
    reduction and constants: none (their cost is in the other terms)."""
    if isinstance(op, (triton.IndexOp, triton.ExprOp)):
        return _index_ops(op.expr.expr) * (2 if index_bits == 64 else 1)
    if isinstance(op, triton.IndirectIndexOp):
        return LANE_OP_WEIGHTS["indirect"] * _width_factor(op.value.type)
    if isinstance(op, triton.AccumulateOp):
        return sum(LANE_OP_WEIGHTS["alu"] * _width_factor(r.type) for r in op.results)
    kind = _op_kind(op.name)  # type: ignore[attr-defined]
    if kind is None:
        return 0
    types = [v.type for v in (*op.operands, *op.results)]  # type: ignore[attr-defined]
    return LANE_OP_WEIGHTS[kind] * max((_width_factor(t) for t in types), default=1)


def _op_kind(name: str) -> str | None:
    """An arith or math op's `LANE_OP_WEIGHTS` kind; None for a constant (an operand of the
    instructions that use it) or an op of another dialect."""
    if name == "arith.constant" or not name.startswith(("arith.", "math.")):
        return None
    if name in DIVIDES:
        return "divide"
    return "special" if name.startswith("math.") and name not in ALU_MATH else "alu"


def _width_factor(type_: Attribute) -> int:
    return 2 if getattr(type_, "bitwidth", 32) == 64 else 1


def _index_ops(expr: sympy.Expr) -> int:
    """The integer instructions of an index expression: one per operand of a sum or product
    beyond the first, a division by a constant (`FloorDiv`) `index_div`, a `ModularIndexing`
    its remainder and its division unless by 1."""
    if not expr.args:  # a symbol or a number
        return 0
    name = type(expr).__name__
    inner = sum(_index_ops(a) for a in expr.args)
    if name == "FloorDiv":
        return inner + LANE_OP_WEIGHTS["index_div"]
    if name == "ModularIndexing":
        divided = expr.args[1] != 1
        return inner + LANE_OP_WEIGHTS["index_div"] * (2 if divided else 1)
    return inner + len(expr.args) - 1


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


def report(module: ModuleOp, target: Target = H100, predicted: list[tuple[str, Prediction]] | None = None) -> str:
    """The dump's cost.txt: each launch's predicted µs, its bound, and what it moves
    (`predicted`: the module's `predictions` on `target`, where the caller has them)."""
    lines = [f"predicted on {target.source}: us, bound, MB from DRAM, MB asked, GFLOP, programs"]
    total = 0.0
    for name, p in predictions(module, target) if predicted is None else predicted:
        t = p.traffic
        total += p.us
        lines.append(f"{p.us:9.2f}  {p.bound:8} {t.dram_bytes / 1e6:9.3f} {t.requested_bytes / 1e6:9.3f} "
                     f"{t.flops / 1e9:8.3f} {t.programs:7}  {name}")
    lines.append(f"{total:9.2f}  total")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# A group of buffer-level nodes before it is a kernel: what fusing two groups saves


def group_seconds(members: Sequence[buffer.ComputedOp], stored: Callable[[str], bool],
                  layouts: dict[str, LayoutAttr], target: Target = H100) -> float:
    """One kernel running `members`: the least kernel time plus its DRAM traffic at the copy
    speed, that is what it reads from outside the group (per buffer the bytes its loads touch,
    at most the buffer's) and each buffer it writes that `stored(name)` says is read after it or
    returned (a buffer only its members read is never stored). Coarser than `predict` (no L2,
    waves or serial work): what a fusion changes is launches and DRAM bytes."""
    written = {m.buffer.data for m in members}
    touched: dict[str, int] = {}
    for m in members:
        for dep in read_writes(m)[0]:
            name = dep_buffer(dep)
            if name not in written:
                touched[name] = touched.get(name, 0) + dep_bytes(dep, layouts)
    moved = sum(min(n, buffer_bytes(name, layouts)) for name, n in touched.items())
    moved += sum(buffer_bytes(name, layouts) for name in written if stored(name))
    return target.kernel_s + moved / target.dram_bytes_per_s


def fusion_saving(a: Sequence[buffer.ComputedOp], b: Sequence[buffer.ComputedOp],
                  stored: Callable[[str, Sequence[buffer.ComputedOp]], bool], layouts: dict[str, LayoutAttr],
                  target: Target = H100) -> float:
    """Seconds saved by running groups `a` and `b` as one kernel (XLA's priority: time unfused
    minus time fused): a launch, the intermediate buffers no longer stored and loaded, the
    shared inputs read once. `stored(name, group)`: whether a node outside `group` reads
    `name`, or the graph returns it."""
    def kernel(group: Sequence[buffer.ComputedOp]) -> float:
        return group_seconds(group, lambda name: stored(name, group), layouts, target)

    return kernel(a) + kernel(b) - kernel([*a, *b])


def dep_bytes(dep: Attribute, layouts: dict[str, LayoutAttr]) -> int:
    """The bytes a dep moves: a MemoryDep its index's elements, a StarDep the whole buffer, a
    WeakDep (an ordering) none. A symbolic size counts as the launch heuristics' size hint."""
    if isinstance(dep, buffer.WeakDepAttr):
        return 0
    if isinstance(dep, buffer.StarDepAttr):
        return buffer_bytes(dep.buffer.data, layouts)
    assert isinstance(dep, buffer.MemoryDepAttr)
    layout = layouts.get(dep.buffer.data)
    return _value(sympy.Mul(*(s for _, s in dep.ranges))) * (element_bytes(layout.dtype) if layout is not None else 4)


def buffer_bytes(name: str, layouts: dict[str, LayoutAttr]) -> int:
    """The bytes of a buffer's storage (0 for one without a layout)."""
    layout = layouts.get(name)
    return 0 if layout is None else _extent(layout) * element_bytes(layout.dtype)
