"""Run a compiled graph's call from CUDA graphs: all its kernels for one host launch.

A compiled call launches one kernel per fused group, plus externs; below ~0.2 ms of GPU work
the host's launches (and Dynamo's guards around them), not the kernels, set the time. A call
is recorded into a CUDA graph once and replayed afterwards (what Inductor does only under
`mode="reduce-overhead"`). `policy` says which graphs; by default those of inference
(no backward) whose sizes are all static, unless the call is one Triton kernel:

    call 1        run normally: Triton compiles and autotunes here, which a capture cannot
    call 2, ...   replay a recording made for the same input addresses whose previous outputs
                  nobody holds; else record one (at most `MAX_RECORDINGS`); else run normally
    inside the caller's own capture (`torch.cuda.graph`, `do_bench_cudagraph`): run normally,
                  so the kernels go into the caller's graph (CUDA cannot replay or record a
                  graph while the stream captures another)

Why a replay never computes a wrong number:
- Inputs are read in place. A recording reads the addresses its capture saw, so it is replayed
  only for a call whose inputs sit at exactly those addresses (the graph's guards already fix
  their sizes and strides), and a kernel that updates an input in place updates the caller's
  tensor. The exception is a backward's tangents (`staged_inputs`): autograd makes them afresh
  for each step, wherever its allocator puts them, so a recording keeps its own copy of each,
  which it refills before every replay; their address is not part of its key.
- Outputs live in the recording's private memory pool, and a replay writes them again. A
  recording is replayed only when none of its previous outputs in that pool (or in its copies
  of staged inputs) is referenced outside this module: neither the tensor object (Python's
  reference count) nor any view of its memory (the storage's use count). A caller who keeps
  outputs (a training step's activations until the backward, a loss until the next step) makes
  the next call use a second recording, and past `MAX_RECORDINGS` the normal path, which
  allocates fresh outputs. An output that is an input, or a view of one (a training forward
  returns the weights it saves for the backward), is the caller's memory, which no replay
  writes: what the caller holds of it does not count.
- A call that cannot be captured (work on the host, a kernel compiled for the first time,
  an input not on the GPU) fails its capture; the graph then runs normally for good, and
  `reason` says why.

`Recorder` is the only part that touches CUDA graphs, so the policy above is tested on any
machine with a stand-in that imitates a replay writing into the same outputs.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

MAX_RECORDINGS = 2  # per compiled graph: a second one for outputs kept across one call (training)

Call = Callable[[list[Any]], Sequence[Any]]


ONE_KERNEL = (1, 0)  # `policy`'s `launches` of a call that is one Triton kernel and no extern call


def policy(kind: str, static: bool, launches: tuple[int, int] | None = None) -> str | None:
    """Whether a graph's calls replay CUDA graphs: None (no), "auto" (yes, quietly running
    normally when a capture fails) or "asked" (yes, with a warning when it fails).

    `MLC_CUDAGRAPHS=1` asks for every graph, `=0` for none. Unset, inference graphs with static
    sizes take them: each recording keeps one call's memory (its outputs and temporaries) in a
    private pool, which a graph without a backward can afford; a training step's forward keeps
    its activations there too, and a graph of symbolic sizes would record one graph per size.
    Not a graph whose call is one Triton kernel (`launches`: kernel launches and extern calls
    per call, None where not known): a replay then saves the host no launch, and the graph's
    own start on the GPU costs 0.5-1.8 us per call (H100, 25-95 us kernels) besides a pool
    per recording. An extern call's host path is long (cuDNN's convolution: 40 us a call
    launched, 11 replayed), so graphs with one stay replayed. CUDA graphs need a GPU."""
    if not torch.cuda.is_available():
        return None
    asked = os.environ.get("MLC_CUDAGRAPHS")
    if asked is not None and asked != "":
        return None if asked == "0" else "asked"
    return "auto" if kind == "inference" and static and launches != ONE_KERNEL else None


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
    """Captures `call(args)` into a CUDA graph with its own memory pool."""

    def capturing(self) -> bool:
        """Whether the current stream is being captured into someone else's CUDA graph."""
        return torch.cuda.is_current_stream_capturing()

    def record(self, call: Call, args: list[Any]) -> tuple[Callable[[], None], list[Any]]:
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=torch.cuda.graph_pool_handle()):
            outputs = list(call(list(args)))
        return graph.replay, outputs


@dataclass(frozen=True)
class _How:
    kind: str
    recording: Recording | None = None


@dataclass
class Recording:
    """One captured call: the input addresses it reads, its outputs, how to run it again."""

    key: tuple
    replay: Callable[[], None]
    outputs: list[Any]
    staged: dict[int, torch.Tensor] = field(default_factory=dict)  # input position -> the copy it reads
    # The outputs in the recording's own memory (its pool, its staged copies), which a replay
    # overwrites; not those that are an input or a view of one (a training forward returns the
    # weights it saves for the backward), whose references are the caller's business, and whose
    # memory no replay writes.
    pooled: list[torch.Tensor] = field(default_factory=list)
    baseline: list[tuple[int, int, int]] = field(default_factory=list)  # `_holders` when nobody else holds them

    def is_free(self) -> bool:
        """No output of the last replay in the recording's memory is referenced outside it."""
        return _holders(self.pooled) == self.baseline


class CudaGraphCall:
    """`call` (an emitted module's `call(args)`) replayed from CUDA graphs, as described above."""

    def __init__(self, call: Call, recorder: Recorder | None = None, max_recordings: int = MAX_RECORDINGS,
                 device_type: str = "cuda", name: str = "graph", warn: bool = True, staged: Sequence[int] = ()):
        self.call = call
        self.staged = tuple(staged)  # inputs copied into a recording (`staged_inputs`)
        self.warn = warn  # whether a capture that fails says so
        self.device_type = device_type
        self.recorder = recorder or Recorder()
        self.max_recordings = max_recordings
        self.name = name
        self.recordings: list[Recording] = []
        self.reason: str | None = None  # why this graph runs normally for good
        # How each call ran: "first", "replayed", "recorded", and the normal path's causes:
        # "elsewhere" (an input off the GPU), "busy" (no free recording for these input
        # addresses, and no room for another), "not captured" (see `reason`), "inside a
        # capture" (the caller is recording a CUDA graph of its own).
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
        key = _addresses(args, self.device_type, self.staged)
        if key is None:
            return _How("elsewhere")
        recording = next((r for r in self.recordings if r.key == key and r.is_free()), None)
        if recording is not None:
            return _How("replayed", recording)
        if len(self.recordings) >= self.max_recordings:
            return _How("busy")
        recording = self._record(key, args)
        return _How("recorded", recording) if recording is not None else _How("not captured")

    def _record(self, key: tuple, args: list[Any]) -> Recording | None:
        try:
            # The copies are made and filled before the capture (a copy captured would read the
            # address this call's input happens to have); `__call__` refills them before replays.
            staged = {i: _copy_of(args[i]) for i in self.staged if isinstance(args[i], torch.Tensor)}
            recorded = [staged.get(i, a) for i, a in enumerate(args)]
            replay, outputs = self.recorder.record(self.call, recorded)
        except Exception as e:  # a call that cannot be captured runs normally from now on
            self.reason = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            if self.warn:
                warnings.warn(f"mlc: {self.name}: MLC_CUDAGRAPHS: the call cannot be captured, it runs normally: "
                              f"{self.reason}", stacklevel=3)
            return None
        # The caller's memory: its inputs, not the staged copies (which `__call__` refills)
        callers = {a.untyped_storage().data_ptr() for i, a in enumerate(args)
                   if isinstance(a, torch.Tensor) and i not in staged}
        pooled = [t for t in outputs
                  if isinstance(t, torch.Tensor) and t.untyped_storage().data_ptr() not in callers]
        recording = Recording(key, replay, outputs, staged=staged, pooled=pooled, baseline=_holders(pooled))
        self.recordings.append(recording)
        return recording


def _addresses(args: Sequence[Any], device_type: str, staged: Sequence[int] = ()) -> tuple | None:
    """What a recording is keyed by: each input's address on the GPU (a number as itself), or
    for a `staged` one, which a recording copies in, its dtype, sizes and strides; None when an
    input is elsewhere, where no recording can read it."""
    key: list[Any] = []
    cuda = device_type == "cuda"  # `is_cuda` costs a tenth of building `a.device` (every call)
    for a in args:
        if isinstance(a, torch.Tensor):
            if not (a.is_cuda if cuda else a.device.type == device_type) and a.numel() > 0:
                return None
            key.append((a.data_ptr(), a.dtype))
        else:
            key.append(a)
    for i in staged:
        a = args[i]
        if isinstance(a, torch.Tensor):
            key[i] = (a.dtype, a.shape, a.stride())
    return tuple(key)


def _copy_of(t: torch.Tensor) -> torch.Tensor:
    """A tensor of `t`'s sizes, strides, dtype and device, holding its values."""
    return torch.empty_strided(t.size(), t.stride(), dtype=t.dtype, device=t.device).copy_(t)


def _holders(outputs: list[Any]) -> list[tuple[int, int, int]]:
    """References to each output: to the Python object, to the tensor from C++ (autograd), and
    to its memory (views, saved tensors). Counted the same way each time, so that a count equal
    to the one taken right after recording means nobody else holds it."""
    return [
        (sys.getrefcount(t), t._use_count(), torch._C._storage_Use_Count(t.untyped_storage()._cdata))
        if isinstance(t, torch.Tensor) else (0, 0, 0)
        for t in outputs
    ]
