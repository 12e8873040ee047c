"""Run a compiled graph's call from CUDA graphs: all its kernels for one host launch.

A compiled call launches one kernel per fused group, plus externs; below ~0.2 ms of GPU work
the host's launches (and Dynamo's guards around them), not the kernels, set the time. A call
is recorded into a CUDA graph once and replayed afterwards (what Inductor does only under
`mode="reduce-overhead"`). `policy` says which graphs; by default those of inference
(no backward) whose sizes are all static, unless the call is one Triton kernel:

    call 1        run normally: Triton compiles and autotunes here, which a capture cannot
    call 2, ...   replay a recording made for the same input addresses whose previous outputs
                  nobody holds; else record one (at most `MAX_RECORDINGS` per sizes, and
                  `MAX_SIZES` sizes for a graph of symbolic sizes); else run normally
    inside the caller's own capture (`torch.cuda.graph`, `do_bench_cudagraph`): run normally,
                  so the kernels go into the caller's graph (CUDA cannot replay or record a
                  graph while the stream captures another)

Why a replay never computes a wrong number:
- Inputs are read in place. A recording reads the addresses its capture saw, so it is replayed
  only for a call whose inputs sit at exactly those addresses (the graph's guards already fix
  their sizes and strides), and a kernel that updates an input in place updates the caller's
  tensor. The exception is a backward's tangents (`staged_inputs`): autograd makes them afresh
  for each step, wherever its allocator puts them, so a recording keeps its own copy of each,
  which it refills before every replay; their address is not among those it checks.
- Outputs live in the recording's memory pool, and a replay writes them again. A
  recording is replayed only when none of its previous outputs in that pool (or in its copies
  of staged inputs) is referenced outside this module: neither the tensor object (Python's
  reference count) nor any view of its memory (the storage's use count). A caller who keeps
  outputs (a training step's activations until the backward, a loss until the next step) makes
  the next call use a second recording, and past `MAX_RECORDINGS` the normal path, which
  allocates fresh outputs. An output that is an input, or a view of one (a training forward
  returns the weights it saves for the backward), is the caller's memory, which no replay
  writes: what the caller holds of it does not count. Autograd may keep a backward's output as
  a parameter's `.grad` without copying it (`_lend_to_autograd`): that `.grad` holds the
  recording's memory, so the recording is busy until the caller drops it.
- Recordings share pools (`Pool`): one whose inputs are another's outputs (a backward reading
  its forward's activations) is captured into that recording's pool, so its outputs and
  temporaries take the memory the forward's temporaries free, as they would without graphs.
  Its outputs may then lie where the forward's temporaries go, so the forward is replayed
  only when no recording captured after it in its pool has an output held elsewhere (the
  gradients of the step before, until the caller drops them); else it takes another recording
  in a pool of its own, or the normal path.
- A call that cannot be captured (work on the host, a kernel compiled for the first time,
  an input not on the GPU) fails its capture; the graph then runs normally for good, and
  `reason` says why.

`Recorder` is the only part that touches CUDA graphs, so the policy above is tested on any
machine with a stand-in that imitates a replay writing into the same outputs.
"""

from __future__ import annotations

import sys
import warnings
import weakref
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from mlc.frontend.settings import Settings

MAX_RECORDINGS = 2  # per compiled graph and sizes: a second one for outputs kept across one call (training)
MAX_SIZES = 8  # per compiled graph of symbolic sizes: the sizes it records (Inductor warns past 8)

Call = Callable[[list[Any]], Sequence[Any]]


ONE_KERNEL = (1, 0)  # `policy`'s `launches` of a call that is one Triton kernel and no extern call


@dataclass(frozen=True)
class Decision:
    """Whether a graph's calls replay CUDA graphs (`mode`: None no, "auto" yes, quietly running
    normally when a capture fails, "asked" yes, with a warning when it fails) and why."""

    mode: str | None
    reason: str

    def describe(self) -> str:
        return f"{'replayed from CUDA graphs' if self.mode else 'not replayed'} ({self.mode or 'off'}): {self.reason}"


def policy(kind: str, static: bool, launches: tuple[int, int] | None = None,
           settings: Settings | None = None) -> Decision:
    """Whether a graph's calls replay CUDA graphs, and why (the dump's cudagraphs.txt says it).

    The `cudagraphs` setting (of `settings`, None: the environment's; `MLC_CUDAGRAPHS`, or
    torch.compile's `mode="reduce-overhead"`) True asks for every graph, False for none.
    Unset, inference graphs with static sizes take them: each recording keeps one call's memory
    (its outputs and temporaries) in its pool, which a graph without a backward can afford; a
    training step's forward keeps its activations there too, and a graph of symbolic sizes
    would record one graph per size. Not a graph whose call is one Triton kernel (`launches`:
    kernel launches and extern calls per call, None where not known): a replay then saves the
    host no launch, and the graph's own start on the GPU costs 0.5-1.8 us per call (H100,
    25-95 us kernels) besides a pool per recording. An extern call's host path is long
    (cuDNN's convolution: 40 us a call launched, 11 replayed), so graphs with one stay
    replayed. CUDA graphs need a GPU."""
    if not torch.cuda.is_available():
        return Decision(None, "no GPU")
    asked = (settings or Settings.from_environment()).cudagraphs
    if asked is not None:
        return Decision("asked" if asked else None, f"the cudagraphs setting is {asked} (MLC_CUDAGRAPHS, mode, options)")
    if kind != "inference":
        return Decision(None, f"a {kind} graph: by default only inference graphs replay (MLC_CUDAGRAPHS=1 for training)")
    if not static:
        return Decision(None, "symbolic sizes: a recording per size")
    if launches == ONE_KERNEL:
        return Decision(None, "one Triton kernel: a replay would save no launch")
    return Decision("auto", "an inference graph of static sizes")


def staged_inputs(kind: str, names: Sequence[str]) -> tuple[int, ...]:
    """The inputs (by position, of a graph whose inputs are `names`) a recording copies in rather
    than reads in place: a backward's inputs other than the forward's saved tensors, that is its
    tangents (and the RNG seed and offset AOTAutograd passes where it functionalizes random ops),
    which autograd allocates for each step (the same inputs Inductor's CUDA-graph trees copy,
    told apart by the same names). In a loop that does anything else between steps their
    addresses wander, and a recording keyed by them would rarely be replayed."""
    if kind != "backward":
        return ()
    return tuple(i for i, name in enumerate(names)
                 if any(part in name for part in ("tangents", "bwd_seed", "bwd_base_offset", "bwd_rng_state")))


class Recorder:
    """Captures `call(args)` into a CUDA graph that allocates from a memory pool (`new_pool`)."""

    def capturing(self) -> bool:
        """Whether the current stream is being captured into someone else's CUDA graph."""
        return torch.cuda.is_current_stream_capturing()

    def new_pool(self) -> object:
        return torch.cuda.graph_pool_handle()

    def record(self, call: Call, args: list[Any], pool: object) -> tuple[Callable[[], None], list[Any]]:
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=pool):
            outputs = list(call(list(args)))
        return graph.replay, outputs


class Pool:
    """A memory pool that recordings share, in the order they were captured.

    A recording's capture takes the pool's free memory, which holds the temporaries of those
    captured before it (their outputs stay allocated to them: each recording holds its own), so
    its replays write only memory that earlier recordings use for temporaries, or that later
    ones use for anything. A replay is therefore safe when its own outputs are free (as without
    sharing) and no recording captured after it in the pool has an output held elsewhere
    (`later_holds`): a backward joins the pool of the forward whose outputs it reads, so the
    forward replays once the caller has dropped the gradients of the step before."""

    def __init__(self, handle: object):
        self.handle = handle  # what the recorder captures into
        self._recordings: list[weakref.ref[Recording]] = []

    def add(self, recording: Recording) -> None:
        self._recordings.append(weakref.ref(recording))

    def later_holds(self, recording: Recording) -> bool:
        """Whether a recording captured after `recording` has an output held elsewhere."""
        later = [r() for r in self._recordings]
        later = later[next(k for k, r in enumerate(later) if r is recording) + 1:]
        return any(r is not None and not r.is_free() for r in later)


class _PoolOwners:
    """The registry of which pool each recording's outputs live in (by storage address), so that
    a recording whose inputs are one pool's outputs (a backward reading its forward's
    activations) joins that pool. Entries go with their recording."""

    def __init__(self) -> None:
        self._pools: dict[int, Pool] = {}

    def pool_of(self, args: Sequence[Any], skip: Sequence[int]) -> Pool | None:
        """The one pool whose outputs some of `args` are (None: none, or several)."""
        pools = {id(pool): pool for i, a in enumerate(args) if isinstance(a, torch.Tensor) and i not in skip
                 and (pool := self._pools.get(a.untyped_storage().data_ptr())) is not None}
        return next(iter(pools.values())) if len(pools) == 1 else None

    def register(self, recording: Recording, pool: Pool) -> None:
        addresses = [t.untyped_storage().data_ptr() for t in recording.pooled.tensors]
        for address in addresses:
            self._pools[address] = pool
        weakref.finalize(recording, self._forget, addresses)

    def _forget(self, addresses: list[int]) -> None:
        for address in addresses:
            self._pools.pop(address, None)


POOL_OWNERS = _PoolOwners()


@dataclass(frozen=True)
class _How:
    kind: str
    recording: Recording | None = None


@dataclass
class Recording:
    """One captured call: where it reads its inputs, its outputs, how to run it again."""

    replay: Callable[[], None]
    outputs: list[Any]
    # Per input: the address read in place (None: a staged input, or not a tensor), the
    # positions that have one, and the other inputs' values (sizes), which a call must repeat.
    addresses: list[int | None]
    read_in_place: list[int]
    constants: list[tuple[int, Any]]
    staged: dict[int, torch.Tensor] = field(default_factory=dict)  # input position -> the copy it reads
    pool: Pool | None = None  # the memory it was captured into, shared with others (`Pool`)
    # The outputs in the recording's own memory (its pool, its staged copies), which a replay
    # overwrites; not those that are an input or a view of one (a training forward returns the
    # weights it saves for the backward), whose references are the caller's business, and whose
    # memory no replay writes.
    pooled: References = field(default_factory=lambda: References([]))

    def reads(self, args: list[Any]) -> bool:
        """Whether a call with `args` has its inputs where this recording reads them."""
        return (_same_addresses(args, self.addresses, self.read_in_place)
                and all(args[i] == value for i, value in self.constants)
                and all(_layout(args[i]) == _layout(copy) for i, copy in self.staged.items()))

    def sizes(self) -> tuple:
        """The call's values other than tensors (a graph of symbolic sizes: its sizes)."""
        return tuple(value for _, value in self.constants)

    def is_free(self) -> bool:
        """No output of the last replay in the recording's memory is referenced outside it."""
        return not self.pooled.held_elsewhere()

    def can_replay(self) -> bool:
        """Its outputs are free, and so is what later recordings of its pool keep in the memory
        its replay writes (`Pool`)."""
        return self.is_free() and (self.pool is None or not self.pool.later_holds(self))


class References:
    """Who holds a list of tensors: references to each Python object, to the tensor from C++
    (autograd), and to its memory (views, saved tensors, a `.grad` autograd kept). Counted the
    same way each time, so that counts equal to those at `settle` mean that nobody but the
    owner (who settled) holds any of them."""

    def __init__(self, tensors: list[torch.Tensor]):
        self.tensors = tensors
        self._storages = [t.untyped_storage() for t in tensors]  # alive while `_storage_ids` point at them
        self._storage_ids = [s._cdata for s in self._storages]
        self.settle()

    def settle(self) -> None:
        """Take the counts as they are now (the owner's references only) as those of nobody else."""
        self._settled = self._counts()

    def held_elsewhere(self) -> bool:
        return self._counts() != self._settled

    def _counts(self) -> tuple[list[int], list[int], list[int]]:
        # map over builtins: a fifth of a Python loop's time for the hundreds of a training graph
        return (list(map(sys.getrefcount, self.tensors)), list(map(torch.Tensor._use_count, self.tensors)),
                list(map(torch._C._storage_Use_Count, self._storage_ids)))


class CudaGraphCall:
    """`call` (an emitted module's `call(args)`) replayed from CUDA graphs, as described above."""

    def __init__(self, call: Call, recorder: Recorder | None = None, max_recordings: int = MAX_RECORDINGS,
                 device_type: str = "cuda", name: str = "graph", warn: bool = True, staged: Sequence[int] = (),
                 report: Callable[[str], None] | None = None):
        self.call = call
        self.staged = tuple(staged)  # inputs copied into a recording (`staged_inputs`)
        self.warn = warn  # whether a capture that fails says so
        self.report = report  # told why a capture failed (the dump's cudagraphs.txt)
        self.device_type = device_type
        self.recorder = recorder or Recorder()
        self.max_recordings = max_recordings
        self.name = name
        self.recordings: list[Recording] = []
        self.reason: str | None = None  # why this graph runs normally for good
        # How each call ran: "first", "replayed", "recorded", and the normal path's causes:
        # "elsewhere" (an input off the GPU), "busy" (no free recording for these input
        # addresses, and no room for another at these sizes), "too many sizes" (MAX_SIZES
        # recorded already), "not captured" (see `reason`), "inside a capture" (the caller is
        # recording a CUDA graph of its own).
        self.calls: Counter[str] = Counter()

    def __call__(self, args: list[Any]) -> Sequence[Any]:
        how = self._how(args)
        self.calls[how.kind] += 1
        if how.recording is None:
            return self.call(args)
        for i, copy in how.recording.staged.items():
            copy.copy_(args[i])
        how.recording.replay()
        return list(how.recording.outputs)

    def _how(self, args: list[Any]) -> _How:
        """Which recording serves this call (None: run normally), and why."""
        if not self.calls:
            return _How("first")
        if self.recorder.capturing():
            return _How("inside a capture")
        if self.reason is not None:
            return _How("not captured")
        recording = next((r for r in self.recordings if r.reads(args) and r.can_replay()), None)
        if recording is not None:
            return _How("replayed", recording)
        if not _on_device(args, self.device_type):
            return _How("elsewhere")
        sizes = _sizes(args)
        same = sum(1 for r in self.recordings if r.sizes() == sizes)
        if same >= self.max_recordings:
            return _How("busy")
        if same == 0 and len({r.sizes() for r in self.recordings}) >= MAX_SIZES:
            return _How("too many sizes")
        recording = self._record(args)
        return _How("recorded", recording) if recording is not None else _How("not captured")

    def _record(self, args: list[Any]) -> Recording | None:
        try:
            # The copies are made and filled before the capture (a copy captured would read the
            # address this call's input happens to have); `__call__` refills them before replays.
            staged = {i: _copy_of(args[i]) for i in self.staged if isinstance(args[i], torch.Tensor)}
            recorded = [staged.get(i, a) for i, a in enumerate(args)]
            pool = POOL_OWNERS.pool_of(args, self.staged) or Pool(self.recorder.new_pool())
            replay, outputs = self.recorder.record(self.call, recorded, pool.handle)
            del recorded  # holds the staged copies: gone before `settle` counts their references
        except Exception as e:  # a call that cannot be captured runs normally from now on
            self.reason = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            if self.report is not None:
                self.report(f"the call cannot be captured, it runs normally from now on: {self.reason}")
            if self.warn:
                warnings.warn(f"mlc: {self.name}: cudagraphs: the call cannot be captured, it runs normally: "
                              f"{self.reason}", stacklevel=3)
            return None
        addresses = [a.data_ptr() if isinstance(a, torch.Tensor) and i not in staged else None
                     for i, a in enumerate(args)]
        # The caller's memory: its inputs, not the staged copies (which `__call__` refills)
        callers = {a.untyped_storage().data_ptr() for i, a in enumerate(args)
                   if isinstance(a, torch.Tensor) and i not in staged}
        pooled = [t for t in outputs
                  if isinstance(t, torch.Tensor) and t.untyped_storage().data_ptr() not in callers]
        recording = Recording(
            replay, outputs, addresses,
            read_in_place=[i for i, address in enumerate(addresses) if address is not None],
            constants=[(i, a) for i, a in enumerate(args) if not isinstance(a, torch.Tensor)],
            staged=staged, pooled=References(pooled), pool=pool)
        pool.add(recording)
        POOL_OWNERS.register(recording, pool)
        _lend_to_autograd(recording.pooled)
        recording.pooled.settle()  # last: with every reference of ours
        self.recordings.append(recording)
        return recording


def _lend_to_autograd(outputs: References) -> None:
    """Let autograd keep a replay's output as a parameter's `.grad` rather than copy it.

    Autograd keeps a backward's output as `.grad` where nobody else references it, and copies it
    otherwise; the recording's own reference would make it copy every gradient of every step (a
    kernel and an allocation per parameter). Registering the outputs as cached tensors (a
    reference that torch discounts: what Inductor's CUDA-graph trees do) lets it keep them. A
    kept gradient is a view of the recording's memory, so the recording is busy (`is_free`)
    until the caller drops it (`zero_grad`, `.grad = None`); a gradient accumulated into one
    already kept is the caller's sum, not a replay's output. The registrations end with the
    recording."""
    torch._C._set_cached_tensors_enabled(True)
    for t in outputs.tensors:
        torch._C._add_cached_tensor(t)
    weakref.finalize(outputs, _forget_cached, list(outputs.tensors))


def _forget_cached(tensors: list[torch.Tensor]) -> None:
    torch._C._set_cached_tensors_enabled(True)  # removing asserts it (Inductor may have turned it off)
    for t in tensors:
        torch._C._remove_cached_tensor(t)


def _sizes(args: Sequence[Any]) -> tuple:
    """A call's values other than tensors, as `Recording.sizes` has them."""
    return tuple(a for a in args if not isinstance(a, torch.Tensor))


def _on_device(args: Sequence[Any], device_type: str) -> bool:
    """Whether every tensor input (but empty ones) is where a recording can read it."""
    return all(a.device.type == device_type or a.numel() == 0 for a in args if isinstance(a, torch.Tensor))


_DATA_PTRS_EQUAL = getattr(torch._C, "_tensors_data_ptrs_at_indices_equal", None)


def _same_addresses(args: list[Any], addresses: list[int | None], positions: list[int]) -> bool:
    """Whether `args[i]` lies at `addresses[i]` for each of `positions` (for hundreds of inputs:
    torch's CUDA builds have it in C++, which Inductor's CUDA-graph trees use alike)."""
    if _DATA_PTRS_EQUAL is not None:
        return _DATA_PTRS_EQUAL(args, addresses, positions)
    return all(args[i].data_ptr() == addresses[i] for i in positions)


def _layout(t: torch.Tensor) -> tuple:
    return t.dtype, t.shape, t.stride()


def _copy_of(t: torch.Tensor) -> torch.Tensor:
    """A tensor of `t`'s sizes, strides, dtype and device, holding its values."""
    return torch.empty_strided(t.size(), t.stride(), dtype=t.dtype, device=t.device).copy_(t)
