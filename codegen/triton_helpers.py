"""What generated modules import besides torch and triton: the device, libdevice, helpers.

`mlc-translate --emit-python` output imports its names from here (`DEVICE`, `libdevice`,
`maximum`, `to_bfloat16`, ...), and so stays the same text on every machine: what differs
between the GPU and Triton's interpreter is decided here, once, at import.

* `DEVICE` is where `call` allocates (`empty_on_device`): `cuda` when a GPU is present, else `cpu`;
  `device_description` names it (the GPU and its compute capability) in the caches' keys.
* `launch_context` and `launch`: a call reads its device and stream once, and each launch of a
  compiled kernel is one call into its C launcher.
* Without a GPU the kernels run under Triton's interpreter. `TRITON_INTERPRET` is read when a
  function is decorated with `@triton.jit`, so it is set here, before this module defines its
  own jit helpers and before any generated module is loaded.
* `libdevice` is `triton.language.extra.libdevice` on the GPU (the compiler maps it to CUDA's
  libdevice); under the interpreter, `codegen/interpreter.py`'s numpy namespace of the same
  functions, and that module's patches make the interpreter run the kernels as the GPU does.
* `maximum`/`minimum` propagate NaN as torch does (`tl.maximum` does not), as Inductor's
  `triton_helpers` do; `floor_div_integer`/`ceil_div_integer` round as their names say
  (Triton's `//` truncates); `to_bfloat16` rounds to nearest even under the interpreter too.
* `ensure_layout` gives an extern call's result the layout the IR fixed for it.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import statistics
import time
from pathlib import Path
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

import torch

if not torch.cuda.is_available():
    # The only way Triton kernels run without a GPU; must precede every @triton.jit.
    os.environ["TRITON_INTERPRET"] = "1"

import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton import knobs  # noqa: E402
from triton.runtime import driver  # noqa: E402
from triton.runtime.errors import OutOfResources  # noqa: E402

from mlc.codegen.cache import cache_dir, cache_enabled, write_atomic  # noqa: E402

if TYPE_CHECKING:
    from mlc.codegen.compile_workers import CompileWorkers

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
# `empty_on_device(size, stride, dtype)`: an uninitialized tensor on DEVICE (the current GPU),
# through the entry point Inductor's wrappers call: half the host time of torch.empty_strided.
if DEVICE.type == "cuda":
    from torch._C._dynamo.guards import _empty_strided_cuda as empty_on_device
else:
    from torch._C._dynamo.guards import _empty_strided_cpu as empty_on_device
INTERPRETING = os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def device_description() -> str:
    """What compiled code and tuned configs depend on of the machine: the GPU's name and
    compute capability, or Triton's interpreter."""
    if INTERPRETING or DEVICE.type != "cuda":
        return f"interpreter ({DEVICE.type})"
    major, minor = torch.cuda.get_device_capability(DEVICE)
    return f"{torch.cuda.get_device_name(DEVICE)} sm_{major}{minor}"


if INTERPRETING:
    from mlc.codegen.interpreter import InterpretedLibdevice, interpreter_debug, patch_interpreter

    libdevice = InterpretedLibdevice()
    patch_interpreter()
else:
    from triton.language.extra import libdevice  # noqa: F401


@triton.jit
def maximum(a, b):
    """torch.maximum: NaN wins (tl.maximum would return the other operand); of equal values
    (-0.0 and 0.0) the first, as eager's kernels keep it (relu(-0.0) is -0.0)."""
    mask = a >= b  # `b` may be a literal (`maximum(tmp0, 0.0)`)
    if a.dtype.is_floating():
        mask |= a != a
    return tl.where(mask, a, b)


@triton.jit
def minimum(a, b):
    """torch.minimum: NaN wins; of equal values the first."""
    mask = a <= b  # `b` may be a literal (`maximum(tmp0, 0.0)`)
    if a.dtype.is_floating():
        mask |= a != a
    return tl.where(mask, a, b)


@triton.jit
def floor_div_integer(a, b):
    """Python's `//` on integers (Triton's `//` truncates towards zero)."""
    quot = a // b
    rem = a % b
    return tl.where((rem != 0) & ((rem < 0) != (b < 0)), quot - 1, quot)


@triton.jit
def ceil_div_integer(a, b):
    """Integer division rounding towards plus infinity."""
    quot = a // b
    rem = a % b
    return tl.where((rem != 0) & ((rem < 0) == (b < 0)), quot + 1, quot)


from mlc.analysis.target import CUDA_MAX_GRID_Y as MAX_GRID_Y  # noqa: E402  (the grid reads it at each call)
from mlc.analysis.target import CUDA_MAX_GRID_Y as MAX_GRID_Z  # noqa: E402  (CUDA's z limit is y's)


Tiles = tuple[int | None, int | None]
"""A launch's (ynumel, znumel): a 2-D tiled kernel's rows, and a batched GEMM's products."""


def _grid(config: dict, xnumel: int, ynumel: int | None, znumel: int | None = None) -> tuple[int, int, int]:
    """(x programs, y programs, 1); y programs past MAX_GRID_Y wrap into z rows of MAX_GRID_Y
    (a kernel over a symbolic ynumel counts program_id(2) in its yoffset; a static one's configs
    never need it). Programs past ynumel are masked off by ymask. A batched GEMM's `znumel`
    products each take those z rows."""
    ny = 1 if ynumel is None else triton.cdiv(ynumel, config["YBLOCK"])
    nz = triton.cdiv(ny, MAX_GRID_Y) * (znumel or 1)
    if nz > MAX_GRID_Z:
        raise ValueError(f"mlc: a batched GEMM of {znumel} products of {ynumel} rows needs {nz} rows of programs in z, "
                         f"over CUDA's {MAX_GRID_Z}")
    return (triton.cdiv(xnumel, config["XBLOCK"]), min(ny, MAX_GRID_Y), nz)


class LaunchContext(NamedTuple):
    """What every launch of one call shares, read once at the call's start (`launch_context`):
    the current device (binaries are kept per device) and stream (launches go on it, as eager
    ops do), and whether Triton's launch hooks are set (a profiler's; without them a launch
    skips building their metadata)."""

    device: int
    stream: int
    hooked: bool


def launch_context() -> LaunchContext | None:
    """The context `launch` takes, read once per call of a generated module (None under the
    interpreter, which launches through `kernel[grid]`)."""
    if INTERPRETING:
        return None
    device = torch.cuda.current_device()
    hooks = knobs.runtime
    return LaunchContext(device, driver.active.get_current_stream(device),
                         _hooked(hooks.launch_enter_hook) or _hooked(hooks.launch_exit_hook))


def _hooked(hook: object) -> bool:
    """Whether a launch hook is set: Triton 3.6 keeps a HookChain, empty when none is."""
    return hook is not None and bool(getattr(hook, "calls", True))


def launch(kernel, configs: tuple[dict, ...], xnumel: int, args: tuple, context: LaunchContext | None,
           ynumel: int | None = None, znumel: int | None = None, restore: tuple[int, ...] = (),
           debug: bool = False) -> None:
    """Launch `kernel` over cdiv(xnumel, XBLOCK) programs with the best of `configs` (a 2-D
    tiled kernel, given `ynumel`: over (cdiv(xnumel, XBLOCK), cdiv(ynumel, YBLOCK)); a batched
    GEMM, given `znumel` too, over znumel of those in z), on the `context` of `launch_context()`.

    With several configs on a GPU, the first launch at new sizes (`_sizes_of`: rounded up to
    powers of two) times each one (Inductor's CachingAutotuner: every listed config is
    benchmarked, the fastest kept, and remembered on disk for the next process, `_kept_tuned`),
    each launch from a cold L2 (`_kernel_ms`). Most kernels only write fresh outputs, so
    running them repeatedly is harmless; the arguments at the positions `restore` names are
    added into (a GEMM's scatter epilogue: Inductor's `restore_value`) and are saved before the
    timing and put back after it (a scatter kernel of its own is given one config by
    --convert-to-triton: it is never re-run). Under the interpreter, or
    with one config, the first config (the heuristics' preferred one) is used: timing
    interpreted kernels means nothing.

    On a GPU the first launch goes through Triton's `kernel[grid](...)`, which compiles (or
    finds the binary in Triton's own on-disk cache, `~/.triton/cache`, in a later process); later
    ones call the compiled binary's C launcher directly (`_Binary`), as Inductor's launchers do,
    skipping Triton's per-call argument binding (most of a launch's host time, and a training
    step launches hundreds of kernels). A binary is specialized on its arguments (the dtypes and
    16-byte alignment of pointers, integer values), so it is kept per device, sizes and those
    properties: one kernel text serves int32 and int64 index tensors with two binaries.
    `debug`: the kernel asserts its indices (compiled with `@triton.jit(debug=True)`), which the
    interpreter needs to be told."""
    if context is None:
        config = configs[0]
        with interpreter_debug(debug):
            kernel[_grid(config, xnumel, ynumel, znumel)](*args, **config)
        return
    state = kernel.__dict__.get("mlc_launch_state")
    key, pointers = [context.device, xnumel, ynumel], []
    for a in args:  # one pass, a loop: the cheapest form in CPython of what each launch must read
        if isinstance(a, torch.Tensor):
            p = a.data_ptr()
            pointers.append(p)
            key.append(a.dtype)
            key.append(not p & 15)
        else:
            pointers.append(a)
            key.append(a)
    key = tuple(key)
    binary = None if state is None else state.binaries.get(key)
    if binary is None:
        _compile_and_run(kernel, configs, xnumel, args, (ynumel, znumel), key, restore)
    else:
        binary.run(context, args, pointers)


def addresses(args: tuple) -> list:
    """`args` as a binary's C launcher takes them fastest: each tensor as its data pointer."""
    return [a.data_ptr() if isinstance(a, torch.Tensor) else a for a in args]


def _compile_and_run(kernel, configs: tuple[dict, ...], xnumel: int, args: tuple, tiles: Tiles, key: tuple,
                     restore: tuple[int, ...] = ()) -> None:
    """Run the kernel through `kernel[grid]`, which compiles it, with the config tuned for these
    sizes (tuned first where none is kept: `_tuned` puts the `restore` arguments back), and
    keep the binary for `key`'s next launches. It runs once: a scatter adds into memory."""
    state = _launch_state(kernel)
    while state.compiling:  # what `precompile` started for this kernel: wait, don't compile twice
        _wait(state.compiling.pop())
    sizes = _sizes_of(xnumel, tiles[0], args)
    config = state.tuned.get(sizes)
    if config is None:
        config = configs[0] if len(configs) == 1 else \
            _kept_tuned(kernel, configs, xnumel, args, tiles, [args[i] for i in restore])
        state.tuned[sizes] = config
    state.binaries[key] = _run_binding(kernel, config, xnumel, tiles, args)


def _run_binding(kernel, config: dict, xnumel: int, tiles: Tiles, args: tuple) -> _Binary:
    """Run `kernel` with `config` once through `kernel[grid]` (which compiles or loads it and
    binds the arguments), and return its binary for direct launches."""
    grid = _grid(config, xnumel, *tiles)
    compiled = kernel[grid](*args, **config)
    return _Binary.of(compiled, grid, tuple(config[name] for name in kernel.arg_names[len(args):]))


def _sizes_of(xnumel: int, ynumel: int | None, args: tuple) -> tuple:
    """The sizes a tuned config is kept for: xnumel, ynumel and the integers the launch passes
    (r0_numel, the kernel's size symbols: the best blocks of a reduction depend on r0_numel
    too), each rounded up to a power of two. A kernel over symbolic sizes is tuned once per
    such bucket, not at every new size (every config is right for every size; only its speed
    differs, and little within a bucket)."""
    sizes = (xnumel, ynumel, *(a for a in args if isinstance(a, int)))
    return tuple(None if n is None else triton.next_power_of_2(n) for n in sizes)


@dataclass
class _LaunchState:
    """What `launch` keeps for one kernel, as an attribute of the kernel (so that it lives and
    dies with it): the config the autotuner picked per sizes (`_sizes_of`), the compiled
    binaries by the key `launch` builds, and the compiles `precompile` has under way."""

    tuned: dict[tuple, dict] = field(default_factory=dict)
    binaries: dict[tuple, _Binary] = field(default_factory=dict)
    choices: dict[tuple, GemmChoice] = field(default_factory=dict)  # a GEMM kernel against its unfused work (`choose`)
    compiling: list = field(default_factory=list)  # `precompile`'s compiles under way (`_wait`)
    started: bool = False  # `precompile` has taken this kernel


def _launch_state(kernel) -> _LaunchState:
    state = kernel.__dict__.get("mlc_launch_state")
    if state is None:
        state = kernel.mlc_launch_state = _LaunchState()
    return state


@dataclass(frozen=True)
class _Binary:
    """A compiled kernel with its grid and the constexpr arguments that follow the others, and
    what its C launcher takes besides the arguments, fixed once: a launch is one call into C.
    A kernel that needs scratch memory, or a launch with hooks set, goes through Triton's own
    Python launcher (`compiled.run`), which allocates the scratch and builds the hooks' metadata."""

    compiled: object
    grid: tuple[int, int, int]
    constexprs: tuple
    direct: Callable[..., None] | None  # the C launcher, where no scratch is needed
    fixed: tuple  # what `direct` takes between the stream and the arguments

    @staticmethod
    def of(compiled, grid: tuple[int, int, int], constexprs: tuple) -> _Binary:
        launcher = compiled.run
        try:
            scratch = launcher.global_scratch_size or launcher.profile_scratch_size
            direct, fixed = launcher.launch, (compiled.function, launcher.launch_cooperative_grid,
                                              launcher.launch_pdl, None, None, compiled.packed_metadata, None, None, None)
        except AttributeError:  # another Triton's launcher: go through it
            scratch, direct, fixed = True, None, ()
        return _Binary(compiled, grid, constexprs, None if scratch else direct, fixed)

    def run(self, context: LaunchContext, args: tuple, pointers: list) -> None:
        """`pointers`: `args` with each tensor as its address, what the C launcher takes
        without asking the driver about a tensor's pointer (0.3-0.4 us an argument on the
        H200's host; the backend already checked that the inputs are on the kernels' device)."""
        if self.direct is not None and not context.hooked:
            self.direct(*self.grid, context.stream, *self.fixed, *pointers, *self.constexprs)
            return
        k = self.compiled
        full = (*args, *self.constexprs)
        metadata = enter = leave = None
        if context.hooked:
            hooks = knobs.runtime
            metadata = k.launch_metadata(self.grid, context.stream, *full)
            enter, leave = hooks.launch_enter_hook, hooks.launch_exit_hook
        k.run(*self.grid, context.stream, k.function, k.packed_metadata, metadata, enter, leave, *full)


def _record_path(fields: list) -> Path | None:
    """Where a timing's result is kept across processes: `<cache>/autotune/<key>.json`, the key a
    hash of `fields` (the kernel's `cache_key`, which covers its source and the jit functions it
    calls, what was timed, the sizes, triton's version, the device); None under `MLC_CACHE=0`."""
    import hashlib
    import json

    if not cache_enabled():
        return None
    return cache_dir("autotune") / f"{hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()}.json"


def _read_record(path: Path | None, field: str) -> object:
    """The record's `field`, or None where there is none or it is unreadable."""
    import json

    try:
        return None if path is None else json.loads(path.read_text()).get(field)
    except (OSError, ValueError, AttributeError):
        return None


def _write_record(path: Path | None, record: dict) -> None:
    import json

    if path is not None:
        try:
            write_atomic(path, json.dumps(record))
        except OSError:
            pass  # a read-only cache: the next process times again


def _kept_tuned(kernel, configs: tuple[dict, ...], xnumel: int, args: tuple, tiles: Tiles = (None, None),
                restore: Sequence[torch.Tensor] = ()) -> dict:
    """`_tuned`'s choice, kept across processes (`_record_path`), so that a second process
    launching the same kernel does not time it again. A record that is unreadable, or names a
    config not among `configs`, is ignored and rewritten; `MLC_CACHE=0` tunes every time."""
    path = _record_path([kernel.cache_key, list(configs), _sizes_of(xnumel, tiles[0], args), triton.__version__,
                         device_description()])
    kept = _read_record(path, "config")
    if kept in configs:
        return next(c for c in configs if c == kept)
    config = _tuned(kernel, configs, xnumel, args, tiles, restore)
    _write_record(path, {"config": config})
    return config


@dataclass(frozen=True)
class GemmChoice:
    """What `choose` decided for a GEMM kernel at some sizes: both sides' GPU milliseconds (None
    under the interpreter, which does not time) and whether they came from the cache."""

    fused_ms: float | None
    unfused_ms: float | None
    cached: bool = False

    @property
    def fused_wins(self) -> bool:
        return self.fused_ms is not None and self.unfused_ms is not None and self.fused_ms <= self.unfused_ms

    def describe(self) -> str:
        if self.fused_ms is None or self.unfused_ms is None:
            return "not timed (interpreter): cuBLAS + epilogue ran"
        winner = "fused kernel" if self.fused_wins else "cuBLAS + epilogue"
        source = ", from the cache" if self.cached else ""
        return f"fused {self.fused_ms:.4f} ms, cuBLAS + epilogue {self.unfused_ms:.4f} ms{source}: {winner} runs"


def choose(kernel, fused: Callable[[], None], unfused: Callable[[], None], sizes: tuple, context: LaunchContext | None,
           restore: tuple[torch.Tensor, ...] = ()) -> None:
    """Run a GEMM's fused kernel (`fused`: its launch) or the same work unfused (cuBLAS, then the
    epilogue's own kernel), whichever is faster at these sizes: the first run at new sizes times
    both from a cold L2 (`_work_ms`) and keeps the choice, on disk too (`_kept_choice`). Both
    write fresh outputs, or add into the buffers `restore` names (a scatter epilogue), which
    are put back after the timing, so running each several times is harmless. Under the
    interpreter the unfused work runs (timing means nothing there; `gemm=triton` runs the fused
    kernel). The choices are kept on the kernel (`gemm_choices`: the dump's fusion.txt lists them)."""
    state = _launch_state(kernel)
    choice = state.choices.get(sizes)
    if choice is None:
        choice = state.choices[sizes] = GemmChoice(None, None) if context is None else \
            _kept_choice(kernel, fused, unfused, sizes, restore)
    (fused if choice.fused_wins else unfused)()


@contextlib.contextmanager
def _restored(tensors: Sequence[torch.Tensor]) -> Iterator[None]:
    """Save `tensors`, and put them back when the block ends: the block runs a kernel that adds
    into them several times, to time it."""
    saved = [t.clone() for t in tensors]
    try:
        yield
    finally:
        for tensor, copy in zip(tensors, saved):
            tensor.copy_(copy)


def _kept_choice(kernel, fused: Callable[[], None], unfused: Callable[[], None], sizes: tuple,
                 restore: Sequence[torch.Tensor] = ()) -> GemmChoice:
    """Both sides' times, kept across processes (`_record_path`), as `_kept_tuned` keeps configs;
    `MLC_CACHE=0` times every process."""
    path = _record_path([kernel.cache_key, "against unfused", list(sizes), triton.__version__, device_description()])
    kept = _read_record(path, "ms")
    if isinstance(kept, list) and len(kept) == 2 and all(isinstance(ms, float) for ms in kept):
        return GemmChoice(*kept, cached=True)
    flush = torch.empty(_flush_bytes(), dtype=torch.int8, device=DEVICE)
    with _restored(restore):  # what both sides add into, as it was before the timing
        choice = GemmChoice(_work_ms(fused, flush), _work_ms(unfused, flush))
    _write_record(path, {"kernel": kernel.__name__, "sizes": list(sizes), "ms": [choice.fused_ms, choice.unfused_ms]})
    return choice


def gemm_choices(namespace: dict) -> list[str]:
    """One line per GEMM kernel of a loaded module (`namespace`: its globals) and sizes that
    `choose` has decided, in the module's order: what the dump's fusion.txt ends with."""
    lines = []
    for name, value in namespace.items():
        state = getattr(value, "__dict__", {}).get("mlc_launch_state")
        for sizes, choice in [] if state is None else state.choices.items():
            lines.append(f"gemm choice {name} at {tuple(sizes)}: {choice.describe()}")
    return lines


def _work_ms(work: Callable[[], None], flush: torch.Tensor, n: int = 10) -> float:
    """GPU milliseconds of `work` (one or a few launches and extern calls), the median of `n`
    runs from a cold L2 with the GPU held while they are enqueued (`_kernel_ms`), after one run
    that compiles and tunes what it launches."""
    work()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
    _hold_gpu(2 * n * HOLD_GUESS_US)
    for start, end in events:
        flush.zero_()
        start.record()
        work()
        end.record()
    events[-1][1].synchronize()
    return statistics.median(start.elapsed_time(end) for start, end in events)


TUNE_MS = 0.5
"""GPU milliseconds of launches per timing of a config (`_kernel_ms`): 5 to TUNE_LAUNCHES."""
TUNE_LAUNCHES = 50


def _tuned(kernel, configs: tuple[dict, ...], xnumel: int, args: tuple, tiles: Tiles = (None, None),
           restore: Sequence[torch.Tensor] = ()) -> dict:
    """The fastest of `configs` on these arguments (all compiled together first). Each config
    runs once (`_run_binding`) and is then timed through its C launcher (`_kernel_ms`); one
    that needs more of the GPU than it has is left out, as Inductor's autotuner leaves it (where
    every config does, the launch of the first reports it). The tensors in `restore`, which
    the kernel adds into, are put back after the timing."""
    _compile_all([(kernel, configs, args)], min(len(configs), os.cpu_count() or 1))
    _launch_state(kernel).compiling.clear()  # all finished, and in the kernel's cache
    flush = torch.empty(_flush_bytes(), dtype=torch.int8, device=DEVICE)

    def ms(config: dict) -> float:
        try:
            binary = _run_binding(kernel, config, xnumel, tiles, args)
        except OutOfResources:  # more shared memory than the GPU has (a GEMM's big tile with an
            return math.inf  # epilogue that converts the accumulator's layout): never picked
        return _kernel_ms(binary, args, flush)

    with _restored(restore):
        return min(configs, key=ms)


def _flush_bytes() -> int:
    """Twice the GPU's L2 cache (256 MB where torch does not say): zeroed, it leaves no byte of
    a kernel's arguments in L2."""
    return 2 * (getattr(torch.cuda.get_device_properties(DEVICE), "L2_cache_size", 0) or 128 << 20)


def _kernel_ms(binary: _Binary, args: tuple, flush: torch.Tensor) -> float:
    """GPU milliseconds of one launch of `binary` from a cold L2, as Inductor's benchmarker times
    a config: `flush` is zeroed before each launch, and a pair of events on either side times
    it; the median of about TUNE_MS of launches (5 to TUNE_LAUNCHES). A call finds its input
    in memory, not in the L2 that back-to-back launches of one kernel warm: timed warm, the
    configs of [8192, 1024] log_softmax differ by 0.5 us, from a cold L2 by 1.8 (H100).

    The GPU is held back (`_hold_gpu`) while the host enqueues the timed launches, so that it
    runs them back to back: a host slower than a flush (compile workers busy on its cores, the
    interpreter lock) would otherwise leave the GPU idle between a start event and its launch,
    and the host's time would be timed. In a benchmark process on the H100, unheld, every
    config of BERT's transposed key measured 43-45 us (5.6-28 us each, held), and the slowest
    was picked in one run."""
    context = launch_context()
    pointers = addresses(args)

    def timed(n: int, hold_us_per_launch: float) -> tuple[float, float]:
        """The median launch's ms, and the host's us per launch enqueued."""
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
        _hold_gpu(2 * n * hold_us_per_launch)
        host_start = time.perf_counter()
        for start, end in events:
            flush.zero_()
            start.record()
            binary.run(context, args, pointers)
            end.record()
        host_us = (time.perf_counter() - host_start) * 1e6 / n
        events[-1][1].synchronize()
        return statistics.median(start.elapsed_time(end) for start, end in events), host_us

    ms, host_us = timed(3, HOLD_GUESS_US)
    n = max(5, min(TUNE_LAUNCHES, round(TUNE_MS / max(ms, 1e-3))))
    return timed(n, host_us)[0]


HOLD_GUESS_US = 100
"""The host's microseconds per timed launch that `_kernel_ms` holds the GPU for before it has
measured them (the flush, two events and the launch: 10-80 us on the H100's host)."""
HOLD_MAX_US = 20_000


def _hold_gpu(us: float) -> None:
    """Keep the current stream busy for about `us` microseconds (at most HOLD_MAX_US), so that
    the work enqueued next waits in line instead of trickling in at the host's pace."""
    torch.cuda._sleep(int(min(us, HOLD_MAX_US) * _sleep_cycles_per_us()))


@functools.cache
def _sleep_cycles_per_us() -> float:
    """Clock cycles of `torch.cuda._sleep` per microsecond on this GPU, measured once."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(1000)  # loads the kernel
    start.record()
    torch.cuda._sleep(1_000_000)
    end.record()
    end.synchronize()
    return 1_000_000 / max(start.elapsed_time(end) * 1e3, 1.0)


def precompile(entries: tuple) -> None:
    """Start compiling the kernels of a module in the background, every config of every
    `(kernel, configs, args)` (the module's `precompile` table; a buffer argument given as its
    dtype), in launch order: in `compile_workers()`'s processes (queued while they still import
    torch), else in threads of this one (`_compile_all`). A kernel's first launch waits for its
    own compiles (`_wait`) and loads their binaries: a graph's kernels compile side by side, not
    one at each first launch. Threads of this process share its interpreter lock with the
    tracing and passes of the graphs that follow: on the H200's host, 2 configs compiled so took
    3.5-4.7 s while DDP's first graphs were traced, about what waiting for the workers to start
    costs. Nothing to do under the interpreter, or for a kernel already started."""
    if INTERPRETING or not entries:
        return
    todo = [e for e in entries if not _launch_state(e[0]).started]
    for kernel, *_ in todo:
        _launch_state(kernel).started = True
    workers = compile_workers()
    if workers is not None and not workers.broken:
        for kernel, configs, args in todo:
            _launch_state(kernel).compiling.extend(workers.submit(kernel, config, args) for config in configs)
    elif todo:
        import threading

        threading.Thread(target=_compile_all, args=(todo, os.cpu_count() or 1), name="mlc-precompile", daemon=True).start()


@functools.cache
def compile_workers() -> CompileWorkers | None:
    """The processes compiling kernels ahead of their launches (`mlc.codegen.compile_workers`),
    started at the first call: `MLC_COMPILE_WORKERS` of them (default: half the CPUs, shared
    among the processes torchrun started on this machine (`LOCAL_WORLD_SIZE`), at most 8,
    leaving cores to the tracing and passes that run beside them; on the H100's 16-core host
    16 workers answered BERT training's 65 backward configs in 1.0 s, 8 in 1.6 s), none under
    the interpreter or with `MLC_COMPILE_WORKERS=0` (threads of this process compile)."""
    if INTERPRETING:
        return None
    ranks = os.environ.get("LOCAL_WORLD_SIZE", "")
    share = (os.cpu_count() or 1) // 2 // (int(ranks) if ranks.isdigit() and int(ranks) > 0 else 1)
    asked = os.environ.get("MLC_COMPILE_WORKERS") or str(min(share, 8))
    if not asked.isdigit():
        raise ValueError(f"MLC_COMPILE_WORKERS={asked!r}: expected a number of processes (0: none)")
    count = int(asked)
    if count < 1:
        return None
    from mlc.codegen.compile_workers import CompileWorkers

    return CompileWorkers.start(count, torch.cuda.get_device_capability())


def _wait(compiling) -> None:
    """Wait for one of `precompile`'s compiles: a worker's (a `concurrent.futures.Future`
    whose result says whether it failed) or a thread's (Triton's FutureKernel, which also
    enters the binary into the kernel's cache). A failure is left to the launch, which
    compiles again and raises."""
    if isinstance(compiling, Future):
        compiling.result()
    else:
        compiling.result(ignore_errors=True)


def _compile_all(entries: list[tuple], workers: int) -> None:
    """Compile every config of every `(kernel, configs, args)` in `workers` threads, through
    Triton's `AsyncCompileMode` (made for compiling in a thread pool), and return when all are
    done; each kernel's `compiling` holds its compiles meanwhile. One after another, the 53
    compiles of BERT's backward graph took 8.3 s on the H100's host, in 16 threads 3.1 s. A
    config that fails is left to its launch, which compiles it again and reports the error."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(workers) as pool, triton.AsyncCompileMode(pool, ignore_errors=True):
        for kernel, configs, args in entries:
            state = _launch_state(kernel)
            for config in configs:
                try:
                    compiling = kernel.warmup(*args, grid=(1,), **config)  # (warmup launches nothing)
                except Exception:  # a binding error: the launch raises it
                    break
                if hasattr(compiling, "result"):  # not found already compiled
                    state.compiling.append(compiling)


def ensure_layout(t: torch.Tensor, size: tuple, stride: tuple, offset: int = 0) -> torch.Tensor:
    """`t` with exactly this size, stride and storage offset: itself when it has them (the usual
    case), else a copy. Kernels index extern results with the layout the IR fixed for them."""
    if t.stride() == stride and t.shape == size and t.storage_offset() == offset:
        return t  # the usual case, checked first: this runs after every extern call
    if tuple(t.shape) == tuple(size) and t.storage_offset() == offset and all(
        st == want or n == 1 for n, st, want in zip(size, t.stride(), stride)
    ):
        return t
    out = torch.empty_strided(size, stride, dtype=t.dtype, device=t.device)
    if offset:
        raise ValueError("ensure_layout: cannot copy into a layout with a storage offset")
    out.copy_(t)
    return out


if INTERPRETING:

    @triton.jit
    def to_bfloat16(x):
        """float32 -> bfloat16, rounding to nearest even. The interpreter's own conversion
        truncates, so round with integer arithmetic (exact, and the same on every machine)."""
        bits = x.to(tl.uint32, bitcast=True)
        bits = bits + (((bits >> 16) & 1) + 0x7FFF)
        rounded = (bits >> 16).to(tl.uint16)
        rounded = tl.where(x != x, 0x7FC0, rounded).to(tl.uint16)  # NaN stays a (quiet) NaN
        return rounded.to(tl.bfloat16, bitcast=True)

else:

    @triton.jit
    def to_bfloat16(x):
        """float32 -> bfloat16, rounding to nearest even (the GPU's conversion)."""
        return x.to(tl.bfloat16)


# ---------------------------------------------------------------------------------------------
# Reductions along one axis of a tile (Inductor's triton_helpers), used by reduction kernels:
# `tl.reduce` with these combine functions. Even the sum is here rather than `tl.sum`: that is a
# @triton.jit function of triton.language, compiled for the GPU if triton was imported before
# TRITON_INTERPRET was set (torch.compile may import it first), while these are defined after.


@triton.jit
def _add_combine(a, b):
    return a + b


@triton.jit
def reduce_sum(a, dim):
    """The sum from 0, as eager's: a sum of -0.0s is +0.0 (`+ 0` is not folded away)."""
    return tl.reduce(a, dim, _add_combine) + 0


@triton.jit
def _prod_combine(a, b):
    return a * b


@triton.jit
def prod(a, dim):
    return tl.reduce(a, dim, _prod_combine)


@triton.jit
def max2(a, dim):
    """torch.amax along `dim`: NaN wins (tl.max would drop it)."""
    return tl.reduce(a, dim, maximum)


@triton.jit
def min2(a, dim):
    """torch.amin along `dim`: NaN wins."""
    return tl.reduce(a, dim, minimum)


@triton.jit
def _or_combine(a, b):
    return a | b


@triton.jit
def reduce_any(a, dim):
    """torch.any along `dim`, on int1 tiles."""
    return tl.reduce(a, dim, _or_combine)


@triton.jit
def maximum_with_index(a_value, a_index, b_value, b_index):
    """The larger (value, index) pair; NaN is the largest; equal values keep the lower index,
    so a reduction gives the first position of the maximum, as torch.argmax does."""
    mask = a_value > b_value
    equal = a_value == b_value
    if a_value.dtype.is_floating():
        a_isnan = a_value != a_value
        b_isnan = b_value != b_value
        mask |= a_isnan & (b_value == b_value)
        equal |= a_isnan & b_isnan
    mask |= equal & (a_index < b_index)
    return tl.where(mask, a_value, b_value), tl.where(mask, a_index, b_index)


@triton.jit
def minimum_with_index(a_value, a_index, b_value, b_index):
    """The smaller (value, index) pair; NaN is the smallest; ties keep the lower index."""
    mask = a_value < b_value
    equal = a_value == b_value
    if a_value.dtype.is_floating():
        a_isnan = a_value != a_value
        b_isnan = b_value != b_value
        mask |= a_isnan & (b_value == b_value)
        equal |= a_isnan & b_isnan
    mask |= equal & (a_index < b_index)
    return tl.where(mask, a_value, b_value), tl.where(mask, a_index, b_index)


@triton.jit
def max_with_index(value, index, dim):
    """(max, first index of it) along `dim` (tl.argmax does not promise the first on ties)."""
    return tl.reduce((value, index), dim, maximum_with_index)


@triton.jit
def min_with_index(value, index, dim):
    return tl.reduce((value, index), dim, minimum_with_index)


@triton.jit
def welford_reduce(value, mean, m2, weight):
    """Add one sample per lane to running (mean, m2, weight) (Welford's update)."""
    delta = value - mean
    new_weight = weight + 1
    new_mean = mean + delta / new_weight
    return new_mean, m2 + delta * (value - new_mean), new_weight


@triton.jit
def welford_combine(mean_1, m2_1, weight_1, mean_2, m2_2, weight_2):
    """Merge two partial (mean, m2, weight) (Chan et al.); empty partials (weight 0) are neutral."""
    delta = mean_2 - mean_1
    new_weight = weight_1 + weight_2
    w2_over_w = tl.where(new_weight == 0.0, 0.0, weight_2 / tl.where(new_weight == 0.0, 1.0, new_weight))
    return mean_1 + delta * w2_over_w, m2_1 + m2_2 + delta * delta * weight_1 * w2_over_w, new_weight


@triton.jit
def welford(mean, m2, weight, dim):
    return tl.reduce((mean, m2, weight), dim, welford_combine)


@triton.jit
def online_softmax_reduce(value, row_max, row_sum):
    """Add one value per lane to a running (max, sum of exp(v - max)), rescaling the sum to a
    new max. While the max is -inf every value seen was -inf and the sum stays 0, so a later
    finite max finds exp(-inf) = 0 for them, as the two-loop softmax does."""
    new_max = maximum(row_max, value)
    empty = new_max == float("-inf")
    scale = tl.where(empty, 1.0, tl.math.exp(row_max - new_max))
    return new_max, row_sum * scale + tl.where(empty, 0.0, tl.math.exp(value - new_max))


@triton.jit
def online_softmax(row_max, row_sum, dim):
    """The row's max and sum of exp(v - max) from each lane's running pair: every lane's sum
    rescaled to the row's max. A row of -inf gives a NaN sum, as sum(exp(v - max)) does."""
    new_max = max2(row_max, dim)
    scale = tl.where(row_max == float("-inf"), 0.0, tl.math.exp(row_max - tl.expand_dims(new_max, dim)))
    new_sum = reduce_sum(row_sum * scale, dim)
    return new_max, tl.where(new_max == float("-inf"), float("nan"), new_sum)
