"""Launch heuristics: how a kernel is cut into blocks for a target GPU, as Inductor decides it.

    target = Target(num_sms=4)                    # the GPU the launches are sized for (default H100)
    hint, split = num_splits(node, target)        # should --split-reductions cut this reduction?
    configs = pointwise_configs(numel)            # XBLOCK / warps candidates of a pointwise kernel
    configs = reduction_configs(xnumel, rnumel, kernel_hint(members, target))

Pure functions of sizes and `buffer.computed` nodes; no IR is changed here. `--split-reductions`
and `--convert-to-triton` ask the same questions of this module (each with its `num-sms` option
as `Target.num_sms`), so the split and the kernel's configs cannot disagree. Where each piece
comes from in Inductor:

* `Target` (`analysis/target.py`) -- hardware and Triton limits: SM count and resident threads
  per SM (H100 SXM), the largest blocks (`runtime/hints.py: TRITON_MAX_BLOCK`) and CUDA's grid
  limits (`CUDA_MAX_GRID_Y`, which the generated kernels' grids wrap at too).
* `reduction_hint` -- `ir.py: Reduction.num_splits`'s classification: INNER when the output is
  one element, DEFAULT when rnumel <= 32, the output has >= `num_sms * 64` elements or a size is
  symbolic, else by the reads covering every loop variable (or, lacking those, those varying
  along the reduction): a read whose reduction strides are all 0 or > 1 is outer; more inner
  reads than outer ones gives INNER, else OUTER. `kernel_hint` -- `SIMDKernelFeatures`: the
  members' common hint, else DEFAULT; a reduction whose accesses are all contiguous (a
  constant, or its loop's flat index) counts as INNER.
* `split_factor` -- `choices.py: InductorChoices.reduction_split_factor`; `num_splits` --
  `Reduction.num_splits` (hint, then split; 1: none).
* `pointwise_configs(_2d)`, `triton_config(_2d)` -- `runtime/triton_heuristics.py: pointwise`
  and `triton_config`.
* `select_tiling_2d` (over a pointwise group's accesses: `pointwise_tiling`) --
  `codegen/simd.py: candidate_tilings`: 1-D, or 2-D [YBLOCK, XBLOCK] tiles for a transposed
  access. `has_constant_mask(_y)`, `constant_masks` -- `TritonKernel._has_constant_mask`: no
  mask where every block of the kernel divides its size.
* `persistent_reduction_configs`, `reduction_configs`, `triton_config_reduction` --
  `runtime/triton_heuristics.py: _persistent_reduction_configs`, `_reduction_configs` (with
  `outer_config_opt`) and `triton_config_reduction`. `use_persistent_reduction`: a static
  r0_numel up to the pass's threshold (64 for OUTER: `choices.py:
  should_use_persistent_reduction`). `second_step_hint` -- `_multilayer_second_step_hint`.
  mlc adds configs for the launch to time beside Inductor's (`OUTER_TUNING`,
  `PERSISTENT_SPREAD_ELEMENTS`, `LONG_ROW_TUNING`: each with its measurements where defined).
* `index_bits` -- `TritonKernel.index_dtype` (`select_index_dtype`): 32-bit index arithmetic
  unless the kernel's elements or a buffer's storage reach 2^31.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy
from xdsl.dialects.builtin import StringAttr

from mlc.dialects import buffer, triton
from mlc.dialects.buffer_layout import LayoutAttr, contiguous_strides
from mlc.dialects.sym import at_hint, symbol
from mlc.analysis.flat_index import nonnegative
from mlc.analysis.target import H100, Target


# Inductor's policy (not the hardware's).
INNER, OUTER, OUTER_TINY, DEFAULT = "inner", "outer", "outer_tiny", "default"
REDUCTION_HINTS = (INNER, OUTER, OUTER_TINY, DEFAULT)
HINT_ATTRIBUTE = "hint"  # on a buffer.computed node: the reduction hint it keeps (split pieces)
OUTER_PERSISTENT_MAX = 64  # Inductor's persistent bound for non-INNER reductions
NUM_THREADS = 256  # the 8 warps x 32 threads a split block is sized for
NO_SPLIT_RNUMEL = 8192  # inner reductions up to this long are never split (524288 on sm >= 10)
MAX_PERSISTENT_BLOCK_NUMEL = 4096  # XBLOCK * R0_BLOCK of a persistent config
MAX_R0_BLOCK = 2048  # a looped config's largest R0_BLOCK (1024 on sm >= 10)
MIN_DIVIDING_R0_BLOCK = 256  # the least R0_BLOCK taken for dividing r0_numel (mlc's)
MAX_FILL_WARPS = 16  # fill_sms doubles warps up to this many
# (XBLOCK, R0_BLOCK, warps) the launch also times for a static OUTER reduction over more than
# 1024 columns (mlc's; Inductor launches `outer_config_opt`'s alone). Its 16 x 32 tiles read 32
# bytes of a bf16 row at a time: Llama's RMSNorm weight gradients (the first step of a split
# column sum, 32768 x 128) take 22.5 and 19.4 us with it, 19.6 and 16.5 with 64 x 64, 19.3 and
# 16.0 with 64 x 128 (H100, do_bench).
OUTER_TUNING = ((64, 64, 4), (64, 128, 8))
# mlc's, also timed beside Inductor's one config of a static INNER reduction (H100, L2 flushed
# before each launch, as a call finds its input; a 64 MB copy takes 27.5 us):
# * persistent, >= 256 columns in >= 1024 rows: one row a program over r0_numel // 512 warps,
#   16 elements a thread, beside Inductor's 1 warp a row. [8192, 1024] float32: log_softmax
#   28.3 -> 26.5 us, softmax 27.4 -> 26.2, layer_norm 27.3 -> 26.5.
PERSISTENT_SPREAD_ELEMENTS = 16
# * looped, over >= 8192 columns in at most FEW_ROWS_PER_SM rows an SM: (R0_BLOCK, warps) of
#   wider slices, more bytes in flight where the programs are too few to hide the latency.
#   softmax [256, 32768]: 2048 x 16 warps (Inductor's) 35.5 us, 4096 x 16 32.0, 8192 x 32 30.7
#   (bench/run.py --cudagraph, the tuned kernel: 0.028 ms, eager 0.034, Inductor's split 0.051).
LONG_ROW_TUNING = ((4096, 16), (8192, 32))
LONG_ROW_MIN_RNUMEL = 8192
FEW_ROWS_PER_SM = 4
SYMBOLIC_SIZE_HINT = 8192  # size hint for a numel with symbols (no example value here)
LARGE_SIZE_HINT = 2**20  # a pointwise kernel over symbols also gets the configs of this size
MIN_TILE = 32  # a 2-D tiling needs both tile groups at least this large (Inductor's "good size")


# ---------------------------------------------------------------------------------------------
# Sizes


def product(values: Sequence[sympy.Expr]) -> sympy.Expr:
    return sympy.Mul(*values) if values else sympy.Integer(1)


INT32_LIMIT = 2**31  # an index at or above this overflows int32 arithmetic


def index_bits(numel: sympy.Expr, layouts: Sequence[LayoutAttr]) -> int:
    """The width of a kernel's index arithmetic: 32 when `numel` (every point the kernel runs:
    x, y and r0 together) and the storage extent of every buffer it touches (offset + sum of
    (size - 1) * stride, + 1) are below 2^31, else 64 (an int32 position would wrap around and
    read the wrong element, silently). Symbolic sizes: 64."""
    extents = [numel, *(layout.storage_extent() for layout in layouts)]
    return 32 if all(e.is_Integer and int(e) < INT32_LIMIT for e in extents) else 64


def next_power_of_2(n: int) -> int:
    return 1 if n <= 0 else 1 << (n - 1).bit_length()


def size_hint(numel: sympy.Expr) -> int:
    return next_power_of_2(int(numel)) if numel.is_Integer else SYMBOLIC_SIZE_HINT


def hinted(expr: sympy.Expr) -> int:
    """`expr` with each size symbol at SYMBOLIC_SIZE_HINT (a product of two sizes is their
    hints' product, where `size_hint` gives a whole symbolic numel one hint)."""
    return at_hint(expr, SYMBOLIC_SIZE_HINT)


# ---------------------------------------------------------------------------------------------
# Reduction hint and split factor (ir.py: Reduction.num_splits, choices.py)


def _stride(index: sympy.Expr, var: sympy.Symbol, variables: Sequence[sympy.Symbol]) -> sympy.Expr:
    """How far `index` moves when `var` goes from 0 to 1, the other variables at 0 (stride_hints)."""
    zero = {v: 0 for v in variables}
    return index.subs({**zero, var: 1}) - index.subs(zero)


def reduction_hint(node: buffer.ComputedOp, target: Target = H100) -> str:
    """Inductor's ReductionHint for a reduction node (see the module docstring); a node that
    `--split-reductions` made carries the hint of the reduction it came from (`hint` attribute)."""
    if isinstance(carried := node.attributes.get(HINT_ATTRIBUTE), StringAttr) and carried.data in REDUCTION_HINTS:
        return carried.data
    ranges, rranges = node.range_exprs, node.reduction_range_exprs
    numel, rnumel = product(ranges), product(rranges)
    if not (numel.is_Integer and rnumel.is_Integer):
        return DEFAULT
    if int(numel) == 1:
        return INNER
    if int(rnumel) <= 32 or int(numel) >= target.num_sms * 2 * 32:
        return DEFAULT
    return access_hint(node)


def access_hint(node: buffer.ComputedOp) -> str:
    """`reduction_hint`'s answer from the reads alone, whatever the sizes: OUTER when most reads
    step along the reduction by 0 or more than 1 (a symbolic step counts as more: sizes 0 and 1
    are specialised), INNER when most step by 1, DEFAULT without such reads."""
    ranges, rranges = node.range_exprs, node.reduction_range_exprs
    pointwise = [symbol(f"i{k}") for k, r in enumerate(ranges) if r != 1]
    reduction = [symbol(f"r0_{k}") for k, r in enumerate(rranges) if r != 1]
    reads = {(op.buffer_name, op.index.expr) for op in node.body.walk() if isinstance(op, buffer.LoadOp)}
    full = [i for _, i in reads if all(v in i.free_symbols for v in [*pointwise, *reduction])]
    along = [i for _, i in reads if i not in full and any(v in i.free_symbols for v in reduction)]
    indices = full or along
    if not indices:
        return DEFAULT
    inner = outer = 0
    variables = [*pointwise, *reduction]
    for index in indices:
        strides = [_stride(index, v, variables) for v in reduction]
        if all(not s.is_Integer or int(s) == 0 or int(s) > 1 for s in strides):
            outer += 1
        else:
            inner += 1
    return INNER if inner > outer else OUTER


def kernel_hint(members: Sequence[buffer.ComputedOp], target: Target = H100) -> str:
    """The kernel's hint (`SIMDKernelFeatures.get_reduction_hint`): its reductions' common one,
    else DEFAULT, where a reduction whose every access is contiguous counts as INNER
    (`SIMDKernelFeatures.reduction_hint`). Such a reduction reads no row it reduces: the sum
    of nll_loss's pointwise gradient reads each row's target and two scalars, which gives it no
    hint of its own, but the kernel it heads streams the row's logits (BERT's loss backward on
    the H100: 0.157 ms per step with the contiguous config, 0.187 with DEFAULT's tuned five,
    Inductor 0.153). Not where a pointwise member over the whole iteration space strides its
    last dimension (Inductor's `has_non_contiguous_pw_in_reduction_kernel`, here kept to this
    rule's INNER only)."""
    reductions = [m for m in members if m.is_reduction]
    whole = {product([*m.range_exprs, *m.reduction_range_exprs]) for m in reductions}
    transposing = any(_strided_last_dim(m) for m in members if not m.is_reduction and product(m.range_exprs) in whole)
    hints = {
        INNER if contiguous_accesses(m) and not transposing else reduction_hint(m, target) for m in reductions
    }
    return hints.pop() if len(hints) == 1 else DEFAULT


def _accesses(node: buffer.ComputedOp) -> list[buffer.LoadOp | buffer.StoreOp]:
    return [op for op in node.body.walk() if isinstance(op, (buffer.LoadOp, buffer.StoreOp))]


def _strided_last_dim(node: buffer.ComputedOp) -> bool:
    """Whether a load or the store of `node` moves by other than 0 or 1 along its last loop
    variable (Inductor's `MemoryDep.stride1_for_last_dim` failing)."""
    variables = [symbol(f"i{k}") for k, size in enumerate(node.range_exprs) if size != 1]
    if not variables:
        return False
    strides = [_stride(op.index.expr, variables[-1], variables) for op in _accesses(node)]
    return any(not (s.is_Integer and int(s) in (0, 1)) for s in strides)


def contiguous_accesses(node: buffer.ComputedOp) -> bool:
    """Whether every load and the store of `node` is at a constant or at the row-major flat
    index of its loop (or of its reduction loop) alone: Inductor's `MemoryDep.is_contiguous`
    (one variable, once loops are merged). Indirect positions are not contiguous."""
    def flat(prefix: str, sizes: list[sympy.Expr]) -> sympy.Expr:
        terms = zip(contiguous_strides(sizes), sizes)
        return sum((st * symbol(f"{prefix}{k}") for k, (st, n) in enumerate(terms) if n != 1), sympy.Integer(0))

    flats = {flat("i", node.range_exprs), flat("r0_", node.reduction_range_exprs)}
    return all(not op.indirect and (op.index.expr.is_Integer or op.index.expr in flats) for op in _accesses(node))


def kernel_access_hint(members: Sequence[buffer.ComputedOp]) -> str:
    """The reductions' common `access_hint`, else DEFAULT."""
    hints = {access_hint(m) for m in members if m.is_reduction}
    return hints.pop() if len(hints) == 1 else DEFAULT


def _closest_divisor(n: int, target: int) -> int:
    return min(sympy.divisors(n), key=lambda d: abs(d - target))


def split_factor(
    rnumel: int,
    numel: int,
    inner: bool,
    target: Target = H100,
    min_elements_per_thread: int = 32,
    max_elements_per_thread: int = 512,
    rows_read_again: bool = False,
) -> int:
    """Into how many pieces to split a reduction of `rnumel` elements for each of `numel`
    outputs (1: none). Inner reductions: none with >= 2 outputs per SM (>= 1 when
    `rows_read_again`: see `num_splits`) or rnumel <= 8192; else
    each thread of a 256-thread block gets `min..max` elements, a divisor of rnumel preferred
    when one is within 30 (50 at the max) of the target. Outer: 4 values per thread, 128
    outputs per block, tolerance 20."""
    num_sms, threads = target.num_sms, target.num_sms * target.threads_per_sm
    min_per_device = min_elements_per_thread * threads
    max_per_device = max_elements_per_thread * threads
    total = rnumel * numel
    if inner:
        if numel >= (1 if rows_read_again else 2) * num_sms or rnumel <= NO_SPLIT_RNUMEL:
            return 1
        per_block = NUM_THREADS
        if total <= min_per_device:
            split_size = min_elements_per_thread
        elif total < max_per_device:
            target_blocks = threads // (2 * NUM_THREADS)
            blocks_per_output = -(-target_blocks // numel)
            goal = -(-rnumel // (NUM_THREADS * blocks_per_output))
            closest = _closest_divisor(rnumel, goal)
            split_size = max(closest, min_elements_per_thread) if abs(closest - goal) < 30 else goal
        else:
            closest = _closest_divisor(rnumel, max_elements_per_thread)
            split_size = closest if abs(closest - max_elements_per_thread) < 50 else max_elements_per_thread
    else:
        per_block = 4  # r-values per thread
        xblocks = -(-numel // 128)
        if total < min_per_device:
            split_size = min_elements_per_thread
        elif total < max_per_device:
            target_blocks = -(-(threads // NUM_THREADS) // xblocks)
            goal = -(-rnumel // (per_block * target_blocks))
            closest = _closest_divisor(rnumel, goal)
            split_size = max(closest, min_elements_per_thread) if abs(goal - closest) < 20 else goal
        else:
            closest = _closest_divisor(rnumel, max_elements_per_thread)
            split_size = closest if abs(closest - max_elements_per_thread) < 50 else max_elements_per_thread
    return -(-rnumel // (split_size * per_block))


def num_splits(
    node: buffer.ComputedOp,
    target: Target = H100,
    min_elements_per_thread: int = 32,
    max_elements_per_thread: int = 512,
    rows_read_again: bool = False,
) -> tuple[str, int]:
    """(hint, split) for a reduction node, as Inductor's `Reduction.num_splits` decides them
    (split 1: no split), but for one case where mlc keeps the reduction whole and Inductor does
    not: `rows_read_again`, a consumer of the result reads the reduced rows again (softmax,
    log_softmax, a norm). Whole, the reduction and that consumer fuse into one kernel, whose
    second pass over a row finds it in L2; split, they take five kernels and read the row from
    memory each time. So such a reduction stays whole from one output per SM instead of two
    (softmax over [256, 32768] on the H100: 0.028 ms whole, eager 0.034, split 0.051)."""
    numel, rnumel = product(node.range_exprs), product(node.reduction_range_exprs)
    hint = reduction_hint(node, target)
    if not (numel.is_Integer and rnumel.is_Integer) or hint == DEFAULT:
        return hint, 1
    inner = hint == INNER
    return hint, split_factor(int(rnumel), int(numel), inner, target, min_elements_per_thread,
                              max_elements_per_thread, rows_read_again)


# ---------------------------------------------------------------------------------------------
# Pointwise configs (runtime/triton_heuristics.py: pointwise, triton_config)


def _warps(elements: int, elements_per_warp: int) -> int:
    num_warps = next_power_of_2(min(max(elements // elements_per_warp, 1), 8))
    return max(num_warps, 4) if elements >= 128 else num_warps  # >= 4 with enough work (pytorch#97950)


def triton_config(hint: int, x: int, elements_per_warp: int, target: Target = H100) -> triton.ConfigAttr:
    """A 1-D config: shrink XBLOCK to the size hint, grow it to the target, warps by elements."""
    goal = x // 8 if hint < x else x
    x = min(x, hint)
    while x < min(hint, target.max_xblock) and (x * target.max_grid_x < hint or x < goal):
        x *= 2
    return triton.ConfigAttr({"XBLOCK": x}, _warps(x, elements_per_warp), 1)


def triton_config_2d(
    ynumel: int, xnumel: int, x: int, y: int, elements_per_warp: int = 256, target: Target = H100
) -> triton.ConfigAttr:
    """A 2-D config (triton_config with x and y): blocks clamped to the size hints, then grown
    (x first) while the grid would be too large or the tile is below its target."""
    xhint, yhint = next_power_of_2(xnumel), next_power_of_2(ynumel)
    goal = x * y // 8 if xhint * yhint < x * y else x * y
    x, y = min(x, xhint), min(y, yhint)
    while x < min(xhint, target.max_xblock) and (x * target.max_grid_x < xhint or x * y < goal):
        x *= 2
    while y < min(yhint, target.max_yblock) and (y * target.max_grid_y < yhint or x * y < goal):
        y *= 2
    return triton.ConfigAttr({"YBLOCK": y, "XBLOCK": x}, _warps(x * y, elements_per_warp), 1)


def pointwise_configs_2d(
    ynumel: int, xnumel: int, autotune: bool = True, target: Target = H100
) -> list[triton.ConfigAttr]:
    """Inductor's 2-D pointwise list (x by y): 32x32, 64x64, 256x16, 16x256, bs x 1, 1 x bs;
    only 32x32 without autotuning."""
    bs = max(256, min(next_power_of_2(xnumel) * next_power_of_2(ynumel) // 128, 1024))
    sizes = [(32, 32)] + ([(64, 64), (256, 16), (16, 256), (bs, 1), (1, bs)] if autotune else [])
    return _unique([triton_config_2d(ynumel, xnumel, x, y, target=target) for x, y in sizes])


# A GEMM's tiles (YBLOCK = M rows, XBLOCK = N columns, R0_BLOCK = K step, num_stages, num_warps):
# the best of Inductor's mm configs (`mm_common.py`) for the H100's tensor cores, for 16-bit and
# for 32-bit operands (whose tiles take twice the shared memory per stage).
MATMUL_TILES_16 = ((128, 128, 64, 3, 8), (128, 256, 64, 3, 8), (64, 128, 64, 4, 4), (128, 64, 64, 4, 4),
                   (64, 64, 64, 3, 4), (64, 64, 32, 2, 4))
MATMUL_TILES_32 = ((128, 128, 32, 3, 8), (64, 128, 32, 4, 4), (128, 64, 32, 4, 4), (64, 64, 32, 3, 4),
                   (64, 64, 16, 2, 4))
MIN_DOT_BLOCK = 16  # tl.dot's smallest tile side


def matmul_configs(m: sympy.Expr, n: sympy.Expr, k: sympy.Expr, element_bytes: int, autotune: bool = True
                   ) -> list[triton.ConfigAttr]:
    """The tiles a GEMM of M x N over K may take, each side cut to the dimension's next power of
    2 (at least 16: tl.dot's smallest), as Inductor's `scale_mm_configs` does; identical ones
    once. Without autotuning, the first."""
    tiles = MATMUL_TILES_16 if element_bytes <= 2 else MATMUL_TILES_32
    sizes = [max(MIN_DOT_BLOCK, next_power_of_2(size_hint(d))) for d in (m, n, k)]
    configs = []
    for ym, xn, rk, stages, warps in tiles[: None if autotune else 1]:
        y, x, r = (min(block, size) for block, size in zip((ym, xn, rk), sizes))
        warps = min(warps, max(1, y * x // 256))  # a small tile cannot use 8 warps
        configs.append(triton.ConfigAttr({"YBLOCK": y, "XBLOCK": x, "R0_BLOCK": r}, warps, stages))
    return _unique(configs)


def pointwise_configs(numel: sympy.Expr, autotune: bool = True, target: Target = H100) -> list[triton.ConfigAttr]:
    """`pointwise`: bs = max(256, min(numel // 128, 1024)) at 256 elements/warp, and bs // 2 at
    64 elements/warp when autotuning. A numel with symbols (dynamic shapes) gets those of the
    symbolic size hint and of LARGE_SIZE_HINT when autotuning, and the autotuner picks per size:
    a block size only changes how many lanes are masked, so every config is right for every
    size (at 8192 alone, GPT-2's gelu over 4 x 512 x 3072 ran 256-element blocks and took 1.8x
    the static kernel's time)."""
    hints = [size_hint(numel)] + ([LARGE_SIZE_HINT] if autotune and not numel.is_Integer else [])
    configs = []
    for hint in hints:
        bs = max(256, min(hint // 128, 1024))
        configs.append(triton_config(hint, bs, 256, target))
        if autotune:
            configs.append(triton_config(hint, bs // 2, 64, target))
    return _unique(configs)  # identical configs are benchmarked once


def _unique(configs: Sequence[triton.ConfigAttr]) -> list[triton.ConfigAttr]:
    return list(dict.fromkeys(configs))


# ---------------------------------------------------------------------------------------------
# 2-D tiles and constant masks (codegen/simd.py: candidate_tilings, TritonKernel._has_constant_mask)


def _index_strides(index: sympy.Expr, variables: Sequence[sympy.Symbol]) -> list[sympy.Expr]:
    """The index's step along each variable from the origin (exact for affine indices)."""
    zero = {v: 0 for v in variables}
    base = index.xreplace(zero)
    return [sympy.expand(index.xreplace({**zero, v: 1}) - base) for v in variables]


def select_tiling_2d(ranges: Sequence[sympy.Expr], indices: Sequence[tuple[sympy.Expr, bool]]) -> int | None:
    """Where to split `ranges` into y (outer dims) and x (inner dims) tiles, or None for 1-D.

    Why: a 1-D kernel walks xindex along the innermost dimension, so an access that is unit-stride
    along an outer dimension (a transposed read) strides through memory across lanes. Tiling
    [YBLOCK, XBLOCK] makes both kinds coalesced inside a tile (Inductor's `candidate_tilings`):
    every access `(index, is_write)` unit-stride along some dimension k proposes the split after k
    and scores the elements it touches, doubled for a write and for each group of a good size.
    The best total wins when it reaches numel. Stays 1-D when every access is already coalesced
    along xindex (unit stride or broadcast along the innermost dimension), or when either group
    is smaller than MIN_TILE (a tile that small gains nothing). Symbolic sizes count at the
    size hint (`hinted`); a symbolic stride is never 1 (sizes 0 and 1 are specialised)."""
    ranges = [sympy.sympify(r) for r in ranges]
    sized = [k for k, r in enumerate(ranges) if r != 1]
    if len(sized) < 2:
        return None
    variables = [symbol(f"i{k}") for k in range(len(ranges))]
    numel = hinted(sympy.Mul(*ranges))
    strides = [([_index_strides(index, variables)[k] for k in sized], write) for index, write in indices]
    if all(st[-1] in (0, 1) for st, _ in strides):
        return None  # coalesced along xindex already
    scores: dict[int, int] = {}
    for st, write in strides:
        if 1 not in st[:-1]:
            continue
        split = st.index(1) + 1
        if all(s == 0 for s in st[split:]):
            continue  # broadcast along every inner dim: not a real split
        groups = [hinted(sympy.Mul(*[ranges[k] for k in sized[:split]])),
                  hinted(sympy.Mul(*[ranges[k] for k in sized[split:]]))]
        if min(groups) < MIN_TILE:
            continue
        score = hinted(sympy.Mul(*[ranges[k] for k, s in zip(sized, st) if s != 0]))
        score *= 2 if write else 1
        for g in groups:
            score *= 2 if g % 32 == 0 else 1
        if score >= numel:
            scores[split] = scores.get(split, 0) + score
    if not scores:
        return None
    best = max(scores.items(), key=lambda kv: (kv[1], -kv[0]))[0]
    return sized[best - 1] + 1  # split position in `ranges` (size-1 dims go with y)


def pointwise_tiling(members: Sequence[buffer.ComputedOp], roots: dict[str, str], local: set[str]) -> int | None:
    """The 2-D split of a pointwise group: `select_tiling_2d` over every load and store of memory
    (`roots`: a view's root storage; `local`: buffers the kernel keeps in registers, no access);
    None when the members iterate different shapes."""
    ranges = members[0].range_exprs
    if any(list(m.range_exprs) != list(ranges) for m in members[1:]):
        return None
    accesses: list[tuple[sympy.Expr, bool]] = []
    for m in members:
        for op in m.body.block.ops:
            if isinstance(op, buffer.LoadOp) and roots.get(op.buffer_name, op.buffer_name) not in local:
                accesses.append((op.index.expr, False))
            elif isinstance(op, buffer.StoreOp) and op.buffer_name not in local:
                accesses.append((op.index.expr, True))
    return select_tiling_2d(ranges, accesses)


def blocks_divide(numel: sympy.Expr, blocks: Sequence[int]) -> bool:
    """Every block divides `numel`: its mask is constant (`_has_constant_mask`)."""
    return bool(numel.is_Integer and all(int(numel) % b == 0 for b in blocks))


def has_constant_mask(numel: sympy.Expr, target: Target = H100) -> bool:
    """No xmask needed: every XBLOCK divides xnumel (TritonKernel._has_constant_mask)."""
    return bool(numel.is_Integer and (int(numel) == 1 or int(numel) % target.max_xblock == 0))


def has_constant_mask_y(numel: sympy.Expr, target: Target = H100) -> bool:
    """No ymask needed: every YBLOCK (at most target.max_yblock) divides ynumel."""
    return bool(numel.is_Integer and (int(numel) == 1 or int(numel) % target.max_yblock == 0))


def constant_masks(
    numel: sympy.Expr, rnumel: sympy.Expr, persistent: bool, x_blocks: Sequence[int] = (),
    r_blocks: Sequence[int] = (), target: Target = H100,
) -> tuple[bool, bool]:
    """Whether a reduction kernel's xmask and r0_mask are constant (Inductor's
    `_has_constant_mask`): every block divides its size. XBLOCKs and a looped kernel's R0_BLOCKs
    are those of the configs where known, else the Target's largest; a persistent kernel's
    R0_BLOCK is next_pow2(r0_numel)."""
    if x_blocks:
        x = bool(numel.is_Integer and all(int(numel) % b == 0 for b in x_blocks))
    else:
        x = has_constant_mask(numel, target)
    if not rnumel.is_Integer:
        return x, False
    n = int(rnumel)
    if persistent:
        return x, n == next_power_of_2(n) and n >= 32
    return x, all(n % b == 0 for b in r_blocks or (target.max_r0block,))


# ---------------------------------------------------------------------------------------------
# Reduction configs (runtime/triton_heuristics.py)


def persistent_limit(threshold: int, hint: str = DEFAULT) -> int:
    """The largest r0_numel a persistent kernel takes: `threshold`, and 64 for an OUTER reduction
    (Inductor's bound for every hint but INNER): a persistent kernel's [XBLOCK, R0_BLOCK] tile
    over a reduction along a strided dim holds few neighbouring columns (XBLOCK * R0_BLOCK <=
    4096), where the looped kernel's OUTER configs take 64 or more."""
    return min(threshold, OUTER_PERSISTENT_MAX) if hint == OUTER else threshold


def use_persistent_reduction(rnumel: sympy.Expr, threshold: int, hint: str = DEFAULT) -> bool:
    """A static r0_numel up to `persistent_limit`."""
    return bool(rnumel.is_Integer and int(rnumel) <= persistent_limit(threshold, hint))


def persistent_up_to_limit(rnumel: sympy.Expr, threshold: int, hint: str = DEFAULT) -> int | None:
    """For a symbolic r0_numel: the `persistent_limit` up to which a persistent kernel runs it,
    a looped one above (the wrapper compares at run time: each size gets the kernel a static
    compile at that size would; mlc's, where Inductor always loops over a symbolic r0_numel,
    `statically_known_leq`). `hint`: the `kernel_access_hint` (the size hint is DEFAULT for
    symbolic sizes). None when r0_numel is static, or above the limit at every size (each size
    at least 1)."""
    if rnumel.is_Integer:
        return None
    limit = persistent_limit(threshold, hint)
    return None if nonnegative(rnumel - (limit + 1)) else limit


def persistent_r0_blocks(limit: int) -> list[int]:
    """The R0_BLOCKs (next_pow2(r0_numel)) of a persistent kernel over r0_numel in [1, limit]
    (the triton dialect's `r0_blocks_up_to`, which the launch's verifier checks the configs by)."""
    return triton.r0_blocks_up_to(limit)


def second_step_hint(split: int, numel: int, hint: str) -> str:
    """The hint of a split's final reduction (Inductor's `_multilayer_second_step_hint`): an
    OUTER reduction of few partials into few outputs is OUTER_TINY, else the first step's."""
    if hint == OUTER and ((split <= 512 and numel <= 512) or (split <= 1024 and numel <= 256)):
        return OUTER_TINY
    return hint


def triton_config_reduction(
    x_hint: int,
    r_hint: int,
    x: int,
    r: int,
    hint: str = DEFAULT,
    num_warps: int | None = None,
    register_intensive: bool = False,
    min_num_warps: int = 2,
    target: Target = H100,
) -> triton.ConfigAttr:
    """Inductor's `triton_config_reduction`: clamp the blocks to the size hints, grow them to
    the requested product, warps by block size (by r for INNER), at most 16 (32 past 8192,
    halved when register intensive)."""
    r0 = min(r, r_hint, target.max_r0block)
    x = min(x, x_hint)
    goal = x * r0
    if x_hint * r_hint < goal:
        goal //= 8
    while x < x_hint and x * r0 < goal:
        x *= 2
    while r0 < r_hint and x * r0 < goal:
        r0 *= 2
    if num_warps is None:
        num_warps = r // 128 if hint == INNER else x * r0 // 128
    max_warps = 16 if r <= 8192 else 32
    if register_intensive:
        max_warps //= 2
    num_warps = next_power_of_2(min(max(num_warps, min_num_warps), max_warps))
    while -(-x_hint // x) > target.max_grid_x and x < x_hint and x < target.max_xblock:
        x *= 2
    while x * r0 > goal and r0 > 1:
        r0 //= 2
    return triton.ConfigAttr({"XBLOCK": x, "R0_BLOCK": r0}, num_warps, 1)


def persistent_reduction_configs(
    xnumel: sympy.Expr, rnumel: int, hint: str = DEFAULT, target: Target = H100
) -> list[triton.ConfigAttr]:
    """`_persistent_reduction_configs`: XBLOCK 1, 8, 32, 128 (1 always; the others while
    XBLOCK * R0_BLOCK <= 4096 and XBLOCK <= the x size hint); INNER rows of >= 256 keep one
    config (1 warp, XBLOCK = min(1024 // R0_BLOCK, 8), when there are >= 1024 rows; then, with
    a static xnumel, also one row over more warps: PERSISTENT_SPREAD_ELEMENTS); OUTER keeps the
    largest; OUTER_TINY the tiny one. R0_BLOCK = next_pow2(rnumel) is not a config."""
    xh, rh = size_hint(xnumel), next_power_of_2(rnumel)

    def make(
        x: int, num_warps: int | None = None, register_intensive: bool = True, min_warps: int = 2
    ) -> triton.ConfigAttr:
        return triton_config_reduction(xh, rh, x, rh, hint, num_warps, register_intensive, min_warps, target)

    configs = [make(xb) for xb in (1, 8, 32, 128) if xb == 1 or (rh * xb <= MAX_PERSISTENT_BLOCK_NUMEL and xb <= xh)]
    if hint == INNER and rh >= 256:
        if rh > 1024 or xh // 8 < 128:
            configs = configs[:1]
        else:  # many rows: Inductor's one warp a row, and (static xnumel) a row over more warps
            configs = [make(min(1024 // rh, 8), 1, min_warps=1)]
            if xnumel.is_Integer:
                configs.append(make(1, rh // (32 * PERSISTENT_SPREAD_ELEMENTS), min_warps=1))
    elif hint == OUTER:
        configs = configs[-1:]
    elif hint == OUTER_TINY:
        configs = [make(2 * (256 // rh) if rh <= 256 else 1, register_intensive=False)]
    return _unique([triton.ConfigAttr({"XBLOCK": c.block_sizes["XBLOCK"]}, c.num_warps.data, 1) for c in configs])


def persistent_reduction_configs_up_to(
    xnumel: sympy.Expr, limit: int, hint: str = DEFAULT, target: Target = H100
) -> list[triton.ConfigAttr]:
    """A persistent kernel over a symbolic r0_numel of at most `limit`: for each R0_BLOCK it may
    run with (`persistent_r0_blocks`), the `persistent_reduction_configs` of a static r0_numel
    of that power of two, R0_BLOCK in each config; the launch times those of its R0_BLOCK."""
    return [
        triton.ConfigAttr({**c.block_sizes, "R0_BLOCK": r0}, c.num_warps.data, c.num_stages.data)
        for r0 in persistent_r0_blocks(limit)
        for c in persistent_reduction_configs(xnumel, r0, hint, target)
    ]


def reduction_configs(
    xnumel: sympy.Expr, rnumel: sympy.Expr, hint: str = DEFAULT, num_loads: int = 0, num_reductions: int = 0,
    num_dynamic: int = 0, target: Target = H100,
) -> list[triton.ConfigAttr]:
    """`_reduction_configs`: INNER -> contiguous (XBLOCK 2 up to 2048 elements else 1,
    R0_BLOCK up to 2048; more warps where its programs are few: `fill_sms`; over few long static
    rows also LONG_ROW_TUNING's wider slices, one row a program); OUTER ->
    `outer_config_opt` (and `OUTER_TUNING` to time beside it over more than 1024 static
    columns); OUTER_TINY -> tiny; DEFAULT -> all three plus 64x64, 8x512 and 64x4
    with 8 warps. Each R0_BLOCK shrinks to the largest power of two >= 256 below it that divides
    r0_numel, where one does (`dividing_r0_block`). Wide kernels (x >= 1024) with >= 10 loads and
    reductions are register intensive: R0_BLOCK <= 1024, half the warps."""
    xh, rh = size_hint(xnumel), size_hint(rnumel)
    register_intensive = xh >= 1024 and num_loads + num_reductions >= 10
    max_r0 = 1024 if register_intensive else MAX_R0_BLOCK

    def make(x: int, r: int, num_warps: int | None = None) -> triton.ConfigAttr:
        r = dividing_r0_block(r, rnumel)
        return triton_config_reduction(xh, rh, x, r, hint, num_warps, register_intensive, target=target)

    contiguous = fill_sms(make(2 if rh <= 2048 else 1, min(rh, max_r0)), xh, target)
    tiny = make(2 * (256 // rh) if rh <= 256 else 1, min(rh, max_r0))
    if hint == INNER:
        wide = [] if register_intensive else _long_row_configs(xnumel, rnumel, target)
        r0 = contiguous.block_sizes["R0_BLOCK"]
        return [contiguous, *_unique([c for c in wide if c.block_sizes["R0_BLOCK"] > r0])]
    if hint == OUTER_TINY:
        return [tiny]
    outer = make(*_outer_config(xh, rh, num_loads, num_dynamic))
    if hint == OUTER:
        tuning = OUTER_TUNING if xh > 1024 and not num_dynamic else ()
        return _unique([outer, *(make(*c) for c in tuning)])
    return _unique([contiguous, outer, tiny, make(64, 64), make(8, 512), make(64, 4, 8)])


def dividing_r0_block(r0_block: int, rnumel: sympy.Expr) -> int:
    """A looped R0_BLOCK that divides a static r0_numel where a power of two of at least
    MIN_DIVIDING_R0_BLOCK does: the largest such one up to `r0_block`. Every slice of the loop
    is then full: no r0_mask, no masked tail, no select per accumulator (beyond Inductor, which
    keeps the block and masks)."""
    if not rnumel.is_Integer:
        return r0_block
    divisor = int(rnumel) & -int(rnumel)  # the largest power of two dividing r0_numel
    return divisor if MIN_DIVIDING_R0_BLOCK <= divisor < r0_block else r0_block


def _long_row_configs(xnumel: sympy.Expr, rnumel: sympy.Expr, target: Target) -> list[triton.ConfigAttr]:
    """LONG_ROW_TUNING's one-row configs for at most FEW_ROWS_PER_SM static rows an SM of at
    least LONG_ROW_MIN_RNUMEL static columns, else none (32 warps below Inductor's 8192 bound)."""
    if not (xnumel.is_Integer and rnumel.is_Integer):
        return []
    if int(rnumel) < LONG_ROW_MIN_RNUMEL or int(xnumel) > FEW_ROWS_PER_SM * target.num_sms:
        return []
    return [triton.ConfigAttr({"XBLOCK": 1, "R0_BLOCK": dividing_r0_block(r, rnumel)}, w, 1) for r, w in LONG_ROW_TUNING]


def fill_sms(config: triton.ConfigAttr, xnumel_hint: int, target: Target = H100) -> triton.ConfigAttr:
    """More warps for a looped reduction with few programs (mlc's; Inductor sizes warps by the
    block alone): while the programs hold less than half the GPU's warp slots and each thread
    still gets at least 2 elements of an R0_BLOCK slice, double the warps, up to 16
    (Inductor's largest for r0_numel <= 8192). A split's 512 pieces of 25,088 with R0_BLOCK
    512 go from 4 warps to 8 (H100: 20.9 -> 19.9 us for batch-norm statistics; 16 warps, one
    element each, measured 20.7)."""
    blocks = config.block_sizes
    programs = -(-xnumel_hint // blocks["XBLOCK"])
    warps, slots = config.num_warps.data, target.num_sms * target.threads_per_sm // 32
    elements = blocks["XBLOCK"] * blocks["R0_BLOCK"]
    while programs * warps < slots // 2 and warps < MAX_FILL_WARPS and elements >= 2 * 32 * (2 * warps):
        warps *= 2
    return triton.ConfigAttr(blocks, warps, config.num_stages.data)


def _outer_config(xh: int, rh: int, num_loads: int, num_dynamic: int) -> tuple[int, int, int | None]:
    """`outer_config_opt`: (XBLOCK, R0_BLOCK, warps) for reductions along a strided dimension."""
    x_block, num_warps = 64, None
    if xh <= 1024:
        x_block, r_block = max(min(xh // 128, 8), 2), min(rh, 64)
    elif xh // 4096 <= 8:
        x_block, r_block = 16, 512 // 16
    elif num_dynamic > 1:
        r_block = max(min(rh // 64, 64), 8)
    elif num_dynamic == 1:
        r_block = 1 if num_loads >= 3 else min(next_power_of_2(max(rh, 128) // 128), 8)
    else:
        x_block = max(min(256, next_power_of_2(xh // 4096)), x_block)
        if num_loads < 4 or rh <= 128:
            r_block = 512 // x_block
        else:
            r_block = 64 if rh >= 2048 else 32
            x_block, num_warps = min(x_block, 32), 4
    return x_block, r_block, num_warps
