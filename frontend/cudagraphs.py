"""Run a compiled graph's call from CUDA graphs: all its kernels for one host launch.

A compiled call launches one kernel per fused group, plus externs; below ~0.2 ms of GPU work
the host's launches (and Dynamo's guards around them), not the kernels, set the time. A call
is recorded into a CUDA graph once and replayed afterwards (what Inductor does only under
`mode="reduce-overhead"`). `policy` says which graphs; by default those whose sizes are all
static, of inference and of training alike, unless the call is one Triton kernel:

    call 1        run normally: Triton compiles and autotunes here, which a capture cannot
    call 2, ...   replay a recording made for the same input addresses whose previous outputs
                  nobody holds; else record one (at most `MAX_RECORDINGS` per sizes, and
                  `MAX_SIZES` sizes for a graph of symbolic sizes); else run normally (the
                  first call that does so because outputs are held says which, `_tell_busy`)
    inside the caller's own capture (`torch.cuda.graph`, `do_bench_cudagraph`): run normally,
                  so the kernels go into the caller's graph (CUDA cannot replay or record a
                  graph while the stream captures another)

Why a replay never computes a wrong number:
- Inputs are read in place. A recording reads the addresses its capture saw, so it is replayed
  only for a call whose inputs sit at exactly those addresses (the graph's guards already fix
  their sizes and strides), and a kernel that updates an input in place updates the caller's
  tensor. The exceptions are a backward's tangents (`staged_inputs`), which autograd makes
  afresh for each step, wherever its allocator puts them, and numbers that come as 0-d CPU
  tensors, moved to the GPU for each call (`CompiledGraph`): the capture allocates a copy of
  each in the recording's pool (`stage`), which it refills before every replay; their address
  is not among those it checks. The capture frees a copy at its last read like any temporary,
  so that its memory serves the rest of the graph (a language model's logits have a tangent,
  zeros where the loss does not read them, as large as the logits themselves); the refill
  comes after every check a replay passes, since that memory may hold the recording's
  outputs, or those of one captured after it into the same pool.
  A tensor the call makes on the host (attention's seed and offset without dropout) is made at
  the capture only, and every replay returns that one.
- Outputs lie in the recording's memory pool, and a replay writes them again. The recording
  gives the capture's outputs to the caller and keeps no reference to them (`PoolOutputs`),
  so their memory goes back to the pool when the caller drops them; from its first replay on
  it returns tensors rebuilt over the same memory, the same ones each time. It is replayed
  only when none of its last outputs is referenced outside this module: neither the tensor
  object (Python's reference count) nor any view of its memory (the storage's use count). A
  caller who keeps outputs (a loss until the next step) makes the next call use a second
  recording, and past `MAX_RECORDINGS` the normal path, which allocates fresh outputs. An
  output that is an input's storage (a training forward returns the weights it saves for the
  backward) is the caller's memory, which no replay writes: what the caller holds of it does
  not count. Autograd may keep a backward's output as a parameter's `.grad` without copying
  it (`_lend_to_autograd`): that `.grad` holds the recording's memory, so the recording is
  busy until the caller drops it.
- Recordings share pools (`Pool`), as Inductor's CUDA-graph trees do: one whose inputs are
  another's outputs (a backward reading its forward's activations) is captured into that
  pool, and its capture consumes the call's inputs, so that the activations it frees after
  their last read, and the outputs the caller dropped, give it their memory, as they would
  without graphs. A replay is therefore checked against all it may write: its own last
  outputs, every earlier recording's output that was free at its capture (free again, or
  held only by the call's own inputs that its capture freed: never by the caller besides),
  and every output of a recording captured after it in the pool (the gradients of the step
  before, until the caller drops them). Else it takes another recording, in a pool of its own
  where the pool holds rebuilt outputs the allocator cannot see, or the normal path.
- A call that cannot be captured (work on the host, a kernel compiled for the first time,
  an input not on the GPU) fails its capture; the graph then runs normally for good, and
  `reason` says why.

`Recorder` is the only part that touches CUDA graphs, so the policy above is tested on any
machine with a stand-in that imitates a replay writing into the same outputs and into the
memory its capture took from others.
"""

from __future__ import annotations

import itertools
import operator
import sys
import warnings
import weakref
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.multiprocessing.reductions import StorageWeakRef

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
           settings: Settings | None = None, blocker: str | None = None) -> Decision:
    """Whether a graph's calls replay CUDA graphs, and why (the dump's cudagraphs.txt says it).

    The `cudagraphs` setting (of `settings`, None: the environment's; `MLC_CUDAGRAPHS`, or
    torch.compile's `mode="reduce-overhead"`) True asks for every graph, False for none.
    Unset, graphs with static sizes take them, inference and training alike: a forward and its
    backward share one pool, and the most the process reserves is no more than without graphs
    (H200, over 6 steps, with graphs against without: GPT-2 1808 / 1822 MB,
    Llama 3094 / 3132, BERT 2112 / 2282, ResNet-50 896 / 926, MoE 1882 / 1972:
    `bench/results/issue47-cudagraphs-h200-torch2.11.md`), while a host-bound step runs at the
    GPU's speed (GPT-2 5.8 ms against 16.5). Not a graph of symbolic sizes: it would record one
    graph per size. Not a graph whose call is one Triton kernel (`launches`: kernel launches
    and extern calls per call, None where not known): a replay then saves the host no launch,
    and the graph's own start on the GPU costs 0.5-1.8 us per call (H100, 25-95 us kernels)
    besides a pool per recording. An extern call's host path is long (cuDNN's convolution:
    40 us a call launched, 11 replayed), so graphs with one stay replayed. CUDA graphs need a
    GPU, and a graph none of whose calls a capture could hold (`blocker`, from
    `capture_blocker`) runs normally even where they are asked for."""
    if not torch.cuda.is_available():
        return Decision(None, "no GPU")
    if blocker is not None:
        return Decision(None, f"a capture would fail: {blocker}")
    asked = (settings or Settings.from_environment()).cudagraphs
    if asked is not None:
        return Decision("asked" if asked else None, f"the cudagraphs setting is {asked} (MLC_CUDAGRAPHS, mode, options)")
    if not static:
        return Decision(None, "symbolic sizes: a recording per size")
    if launches == ONE_KERNEL:
        return Decision(None, "one Triton kernel: a replay would save no launch")
    return Decision("auto", f"{'an' if kind == 'inference' else 'a'} {kind} graph of static sizes")


# Ops a capture cannot hold: they read a tensor's value on the host (a synchronisation, which
# a capturing stream forbids) or size a result by the data (Inductor's FORBIDDEN_CUDAGRAPH_OPS,
# for what an aten graph can hold). Ops tagged `cudagraph_unsafe` are refused too.
UNCAPTURABLE = frozenset({"aten._local_scalar_dense.default", "aten._assert_scalar.default"})
SYMBOLIC = (torch.SymInt, torch.SymFloat, torch.SymBool)
_INDEX_PUTS = frozenset({"aten.index_put.default", "aten.index_put_.default", "aten._unsafe_index_put.default"})


def capture_blocker(gm: torch.fx.GraphModule) -> str | None:
    """Why no call of the aten graph `gm` can be captured into a CUDA graph (None: nothing
    known): its first node that syncs with the host or allocates by the data (an op in
    `UNCAPTURABLE` or tagged `cudagraph_unsafe`; an index_put with a boolean mask, which takes
    `nonzero`; a result of a data-dependent size), or that makes a sparse tensor or one on
    another device than the inputs' (a copy to the host)."""
    from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols
    from torch.utils._pytree import tree_leaves

    inputs = [n.meta.get("val") for n in gm.graph.find_nodes(op="placeholder")]
    device = next((v.device for v in inputs if isinstance(v, torch.Tensor) and v.dim() > 0), None)
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        target = str(node.target)
        # the tensors and symbolic numbers it makes (a meta value may hold other objects too)
        made = [v for v in tree_leaves(node.meta.get("val")) if isinstance(v, (torch.Tensor, *SYMBOLIC))]
        values = [v for v in made if isinstance(v, torch.Tensor)]
        if target in UNCAPTURABLE or torch._C.Tag.cudagraph_unsafe in getattr(node.target, "tags", ()):
            return f"{node.name} = {target}, which the host has to wait for"
        if target in _INDEX_PUTS and _boolean_index(node):
            return f"{node.name} = {target} with a boolean mask (a nonzero, sized by the data)"
        if free_unbacked_symbols(made):
            return f"{node.name} = {target}, of a size given by the data"
        odd = next((v for v in values if v.is_sparse or (device is not None and v.device != device and v.dim() > 0)),
                   None)
        if odd is not None:  # a 0-d CPU tensor is a number the call moves to the GPU
            return f"{node.name} = {target}, a {'sparse' if odd.is_sparse else odd.device.type} tensor"
    return None


def _boolean_index(node: torch.fx.Node) -> bool:
    indices = node.args[1] if len(node.args) > 1 else node.kwargs.get("indices", ())
    return any(isinstance(i, torch.fx.Node) and getattr(i.meta.get("val"), "dtype", None) in (torch.bool, torch.uint8)
               for i in indices or ())


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

    def record(self, call: Call, args: list[Any], pool: object,
               staged: Sequence[int] = ()) -> tuple[Callable[[], None], list[Any], dict[int, Memory]]:
        """`args` goes to `call`, which empties it (the boxed convention): an input nobody else
        holds is freed at its last read, and the capture may take its memory. The `staged`
        inputs are replaced by memory of the pool (`stage`), which the caller fills before each
        replay (the first too: a capture runs nothing)."""
        graph = torch.cuda.CUDAGraph()
        forget_cublas_workspaces()
        try:
            with torch.cuda.graph(graph, pool=pool):  # which empties the allocator's cache first
                staged_memory = stage(args, staged)
                outputs = list(call(args))
        finally:
            forget_cublas_workspaces()
        return graph.replay, outputs, staged_memory


def forget_cublas_workspaces() -> None:
    """Free the workspace cuBLAS keeps per thread and stream (32 MiB each on the H200), as
    Inductor's CUDA-graph trees do around their captures. Before a capture: the one a graph's
    first (normal) call allocated lies among that call's temporaries, and would keep their
    segments from ever going back to the driver (GPT-2's first forward and backward left 176 MB
    free in the default pool that way, for good). After it: the capture's own, allocated in
    the pool, is then the recording's temporary, which later captures of the pool may take,
    as they take any temporary of an earlier recording (`Pool`); the graph keeps using it."""
    torch._C._cuda_clearCublasWorkspaces()


def stage(args: list[Any], staged: Sequence[int]) -> dict[int, Memory]:
    """Replace each of `args[staged]` by a tensor of its layout, allocated (inside a capture:
    from its pool) and left unfilled; where each lies. `args` holds the only reference, so the
    call frees one at its last read."""
    for i in staged:
        t = args[i]
        args[i] = torch.empty_strided(t.size(), t.stride(), dtype=t.dtype, device=t.device)
    return {i: Memory.of(args[i]) for i in staged}


@dataclass(frozen=True)
class Memory:
    """Where a tensor lies (its storage's address and bytes) and how it views it: enough to build
    a tensor over the same bytes after the first one is gone (`alias`), as a replay's outputs are."""

    address: int
    nbytes: int
    device: torch.device
    dtype: torch.dtype
    size: tuple[int, ...]
    stride: tuple[int, ...]
    offset: int

    @staticmethod
    def of(t: torch.Tensor) -> Memory:
        storage = t.untyped_storage()
        return Memory(storage.data_ptr(), storage.nbytes(), t.device, t.dtype, tuple(t.shape), t.stride(),
                      t.storage_offset())

    def storage(self) -> torch.UntypedStorage:
        """A storage over the bytes that owns none of them (freeing it frees nothing)."""
        return torch._C._construct_storage_from_data_pointer(self.address, self.device, self.nbytes)

    def tensor(self, storage: torch.UntypedStorage | None = None) -> torch.Tensor:
        storage = self.storage() if storage is None else storage
        return torch.empty(0, dtype=self.dtype, device=self.device).set_(storage, self.offset, self.size, self.stride)

    def layout(self) -> tuple:
        return self.dtype, self.size, self.stride

    def describe(self) -> str:
        return f"{str(self.dtype).removeprefix('torch.')} {list(self.size)}"


def alias(t: torch.Tensor) -> torch.Tensor:
    """A tensor over `t`'s memory that does not keep it allocated."""
    return Memory.of(t).tensor()


class PoolOutputs:
    """A recording's outputs that lie in its pool's memory, followed through its replays without
    holding that memory.

    The capture's own outputs go to the caller, who frees their memory back to the pool by
    dropping them, so that a recording captured later into the pool takes it (a backward, the
    memory of the activations it has read). Until they die the recording knows them by weak
    references. A replay returns tensors built over the same memory (`Memory`), the same ones
    each time, which the pool's allocator does not count as allocated; `References` tells who
    holds them. Memory is followed per storage (`storage`: by index, as captured), since
    outputs may view one storage together."""

    def __init__(self, tensors: list[torch.Tensor]):
        self._memory = [Memory.of(t) for t in tensors]
        on: dict[int, list[int]] = {}  # storage address -> the outputs on it
        for k, m in enumerate(self._memory):
            on.setdefault(m.address, []).append(k)
        self.addresses = list(on)  # per storage, by index
        self._tensors_on = [tuple(ks) for ks in on.values()]
        self._weak = [StorageWeakRef(tensors[ks[0]].untyped_storage()) for ks in self._tensors_on]
        self._replayed: References | None = None
        self._on: dict[frozenset[int], tuple[int, ...]] = {}  # storages -> the outputs on them (`storages_free`)

    def tensors(self) -> list[torch.Tensor]:
        """The tensors a replay returns (built at the first, once the capture's are gone)."""
        if self._replayed is None:
            storages = {m.address: m for m in self._memory}
            storages = {address: m.storage() for address, m in storages.items()}  # one per storage, shared
            self._replayed = References([m.tensor(storages[m.address]) for m in self._memory])
            _lend_to_autograd(self._replayed)
            self._replayed.settle()
            self._weak = []
        return self._replayed.tensors

    def memory(self, k: int) -> Memory:
        return self._memory[k]

    def is_free(self) -> bool:
        """No output of the last run is referenced outside the recording."""
        if self._replayed is None:
            return all(w.expired() for w in self._weak)
        return not self._replayed.held_elsewhere()

    def held(self) -> bool:
        """A replay's output is referenced outside the recording (memory the allocator thinks free)."""
        return self._replayed is not None and self._replayed.held_elsewhere()

    def held_outputs(self) -> list[int]:
        """The outputs (by index, as captured) referenced outside the recording, or on a storage
        that is."""
        if self._replayed is None:
            return sorted(k for w, ks in zip(self._weak, self._tensors_on) if not w.expired() for k in ks)
        return self._replayed.held_indices()

    def free_storages(self) -> frozenset[int]:
        if self._replayed is None:
            return frozenset(j for j, w in enumerate(self._weak) if w.expired())
        return frozenset(j for j, ks in enumerate(self._tensors_on) if self._replayed.free_at(ks, Counter()))

    def storages_free(self, storages: frozenset[int], allowed: Counter[int]) -> bool:
        """Nobody outside the recording references these storages, but `allowed[id(t)]` more
        references to the replayed output t (a list of the call's inputs holding it)."""
        if self._replayed is None:
            return all(self._weak[j].expired() for j in storages)
        on = self._on.get(storages)
        if on is None:  # asked for the same storages at every replay of a recording
            on = self._on[storages] = tuple(k for j in sorted(storages) for k in self._tensors_on[j])
        return self._replayed.free_at(on, allowed)


class Pool:
    """A memory pool that recordings share, in the order they were captured (`position`).

    A recording's capture takes the pool's free memory: temporaries of those captured before
    it, outputs of theirs nobody held any more by then (`free_before`), inputs its own call
    freed (a backward, the activations it read). Its replay writes only there, so it is safe
    when every output it wrote last time is free, every output of an earlier recording that was
    free at its capture is free again (or held only by the call's inputs that its capture freed),
    and no recording captured after it holds an output (`later_free`): a backward joins the
    pool of the forward whose outputs it reads, so the forward replays once the caller has
    dropped the gradients of the step before. A capture joins the pool only while the
    allocator knows every live tensor in it (`replays_held`). The pool keeps its recordings'
    graphs (their replays): its memory stays while a replay's output may point at it."""

    def __init__(self, handle: object):
        self.handle = handle  # what the recorder captures into
        self._outputs: list[PoolOutputs] = []
        self._replays: list[Callable[[], None]] = []

    def add(self, outputs: PoolOutputs, replay: Callable[[], None]) -> int:
        self._outputs.append(outputs)
        self._replays.append(replay)
        return len(self._outputs) - 1

    def free_before(self, position: int) -> dict[int, frozenset[int]]:
        """Per recording captured before `position`: the storages of its outputs free now."""
        return {k: o.free_storages() for k, o in enumerate(self._outputs[:position])}

    def free(self, storages: dict[int, frozenset[int]], allowed: Counter[int]) -> bool:
        return all(self._outputs[k].storages_free(js, allowed) for k, js in storages.items() if js)

    def later_free(self, position: int) -> bool:
        return all(o.is_free() for o in self._outputs[position + 1:])

    def replays_held(self) -> bool:
        """A replay's output in the pool is held: memory in use that the pool's allocator thinks
        free, which a capture must not take, and which the graphs must outlive."""
        return any(o.held() for o in self._outputs)


class _PoolOwners:
    """The registry of which pool each recording's outputs live in (by storage address), so that
    a recording whose inputs are one pool's outputs (a backward reading its forward's
    activations) joins that pool. Entries go with their recording."""

    def __init__(self) -> None:
        self._pools: dict[int, Pool] = {}

    def pool_of(self, args: Sequence[Any], skip: Sequence[int]) -> Pool | None:
        """The one pool whose outputs some of `args` are (None: none, or several)."""
        pools = {id(pool): pool for i, a in enumerate(args) if isinstance(a, torch.Tensor) and i not in skip
                 and (pool := self.owner(a)) is not None}
        return next(iter(pools.values())) if len(pools) == 1 else None

    def owner(self, t: torch.Tensor) -> Pool | None:
        return self._pools.get(t.untyped_storage().data_ptr())

    def register(self, recording: Recording) -> None:
        addresses = recording.pooled.addresses
        for address in addresses:
            self._pools[address] = recording.pool
        weakref.finalize(recording, self._forget, addresses, recording.pool)

    def _forget(self, addresses: list[int], pool: Pool) -> None:
        for address in addresses:
            if self._pools.get(address) is pool:
                del self._pools[address]
        _retire(pool)


POOL_OWNERS = _PoolOwners()

# Pools whose recordings are gone while a replay's output still points at their memory: kept
# (with their graphs, and so their memory) until nobody holds such an output.
_RETIRED: list[Pool] = []


def _prune_retired() -> None:
    _RETIRED[:] = [p for p in _RETIRED if p.replays_held()]


def _retire(pool: Pool) -> None:
    _prune_retired()
    if pool.replays_held() and all(p is not pool for p in _RETIRED):
        _RETIRED.append(pool)


@dataclass(frozen=True)
class _How:
    kind: str
    recording: Recording | None = None
    captured: list[Any] | None = None  # a capture's own outputs in the pool
    staged_from: dict[int, torch.Tensor] | None = None  # a capture's staged inputs, for its first replay


@dataclass
class Recording:
    """One captured call: where it reads its inputs, its outputs, how to run it again."""

    replay: Callable[[], None]
    # What a replay returns: outputs that are an input or a view of one (a training forward
    # returns the weights it saves for the backward: the caller's memory, no replay writes it),
    # tensors its capture made on the host; None where `pooled` fills in (`results`).
    outputs: list[Any]
    # Per input: the address read in place (None: a staged input, or not a tensor), the
    # positions that have one, and the other inputs' values (sizes), which a call must repeat.
    addresses: list[int | None]
    read_in_place: list[int]
    constants: list[tuple[int, Any]]
    pool: Pool
    position: int  # in the pool's capture order
    pooled: PoolOutputs  # the outputs in the pool's memory
    pooled_at: list[int]  # their positions among the outputs
    # Input position -> the memory of the pool it reads that input's copy from (`stage`)
    staged: dict[int, Memory] = field(default_factory=dict)
    # The memory its capture may have taken from earlier recordings of its pool: per recording
    # (by position), the storages free at its capture, and the inputs its call freed there.
    free_at_capture: dict[int, frozenset[int]] = field(default_factory=dict)
    consumed: list[int] = field(default_factory=list)
    # Tensors over `staged`, each element once, and their broadcast dims (`fill_staged`), built once
    _staged_copies: list[tuple[int, torch.Tensor, list[int]]] | None = None

    def reads(self, args: list[Any]) -> bool:
        """Whether a call with `args` has its inputs where this recording reads them."""
        return (_same_addresses(args, self.addresses, self.read_in_place)
                and all(args[i] == value for i, value in self.constants)
                and all(_layout(args[i]) == m.layout() for i, m in self.staged.items()))

    def sizes(self) -> tuple:
        """The call's values other than tensors (a graph of symbolic sizes: its sizes)."""
        return tuple(value for _, value in self.constants)

    def is_free(self) -> bool:
        """No output of the last run in the recording's memory is referenced outside it."""
        return self.pooled.is_free()

    def why_busy(self) -> str:
        """Why `can_replay` refuses, in words (for a call that runs normally)."""
        held = self.pooled.held_outputs()
        if held:
            described = ", ".join(f"output {self.pooled_at[k]} ({self.pooled.memory(k).describe()})" for k in held)
            return f"its last outputs are still referenced: {described}"
        if not self.pool.later_free(self.position):
            return "a recording captured after it into its pool holds outputs (a backward's gradients, until dropped)"
        return "memory its capture took from an earlier recording of its pool is held"

    def can_replay(self, args: list[Any]) -> bool:
        """Nothing anybody holds lies in the memory a replay writes (`Pool`); `args`, the call's
        inputs, may hold those its capture freed."""
        return (self.is_free() and self.pool.later_free(self.position)
                and self.pool.free(self.free_at_capture, Counter(map(id, map(args.__getitem__, self.consumed)))))

    def fill_staged(self, sources: dict[int, torch.Tensor] | list[Any]) -> None:
        """Copy the call's staged inputs (`sources[i]`, of the layout `reads` checked) where the
        graph reads them. Only right before a replay: that memory serves the graph's later
        temporaries and outputs too."""
        if self._staged_copies is None:
            self._staged_copies = []
            for i, m in self.staged.items():
                broadcast = _broadcast_dims(m.size, m.stride)
                self._staged_copies.append((i, _distinct(m.tensor(), broadcast), broadcast))
        for i, copy, broadcast in self._staged_copies:
            copy.copy_(_distinct(sources[i], broadcast))

    def results(self, captured: list[torch.Tensor] | None = None) -> list[Any]:
        """The outputs of a replay; of the capture, where `captured` are those in the pool. The
        recording keeps no reference to those (`PoolOutputs` counts them)."""
        results = list(self.outputs)
        for k, t in zip(self.pooled_at, self.pooled.tensors() if captured is None else captured):
            results[k] = t
        return results


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
        self._picks: dict[tuple[int, ...], tuple] = {}  # `free_at`'s, per indices

    def held_elsewhere(self) -> bool:
        return self._counts() != self._settled

    def held_indices(self) -> list[int]:
        """The tensors (by index) referenced by others than the owner."""
        now = self._counts()
        return [k for k in range(len(self.tensors)) if any(c[k] != s[k] for c, s in zip(now, self._settled))]

    def free_at(self, indices: tuple[int, ...], allowed: Counter[int]) -> bool:
        """Nobody else holds `tensors[indices]`, but `allowed[id(t)]` more references to t."""
        pick, refs, uses, storage_ids, storage_uses = self._picks.get(indices) or self._pick(indices)
        picked = pick(self.tensors)
        held = map(sys.getrefcount, picked)
        if allowed:
            held = map(operator.sub, held, map(allowed.get, map(id, picked), itertools.repeat(0)))
        return (list(held) == refs and list(map(torch.Tensor._use_count, picked)) == uses
                and list(map(torch._C._storage_Use_Count, storage_ids)) == storage_uses)

    def _pick(self, indices: tuple[int, ...]) -> tuple:
        """For `free_at`: a getter of `tensors[indices]` as a tuple, their storages, and their
        settled counts (a reference more to each: the tuple's)."""
        refs, uses, storage_uses = self._settled
        pick = (operator.itemgetter(*indices) if len(indices) > 1
                else (lambda ts: (ts[indices[0]],)) if indices else (lambda ts: ()))
        found = self._picks[indices] = (pick, [refs[k] + 1 for k in indices], [uses[k] for k in indices],
                                        [self._storage_ids[k] for k in indices], [storage_uses[k] for k in indices])
        return found

    def _counts(self) -> tuple[list[int], list[int], list[int]]:
        # map over builtins: a fifth of a Python loop's time for the hundreds of a training graph
        return (list(map(sys.getrefcount, self.tensors)), list(map(torch.Tensor._use_count, self.tensors)),
                list(map(torch._C._storage_Use_Count, self._storage_ids)))


class CudaGraphCall:
    """`call` (an emitted module's `call(args)`) replayed from CUDA graphs, as described above.
    Each one alive is in `CALLS` (for tools: how a model's calls ran)."""

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
        CALLS.add(self)

    def __call__(self, args: list[Any]) -> Sequence[Any]:
        how = self._how(args)
        self.calls[how.kind] += 1
        if how.recording is None:
            return self.call(args)
        recording = how.recording
        recording.fill_staged(args if how.captured is None else how.staged_from)
        args.clear()  # the boxed convention, as the call itself
        recording.replay()
        return recording.results(how.captured)

    def _how(self, args: list[Any]) -> _How:
        """Which recording serves this call (None: run normally), and why."""
        if not self.calls:
            return _How("first")
        if self.recorder.capturing():
            return _How("inside a capture")
        if self.reason is not None:
            return _How("not captured")
        recording = next((r for r in self.recordings if r.reads(args) and r.can_replay(args)), None)
        if recording is not None:
            return _How("replayed", recording)
        if not _on_device(args, self.device_type):
            return _How("elsewhere")
        sizes = _sizes(args)
        same = [r for r in self.recordings if r.sizes() == sizes]
        if len(same) >= self.max_recordings:
            if not self.calls["busy"]:
                self._tell_busy(same)
            return _How("busy")
        if not same and len({r.sizes() for r in self.recordings}) >= MAX_SIZES:
            return _How("too many sizes")
        return self._record(args)

    def _record(self, args: list[Any]) -> _How:
        """Capture a call on `args` (which it empties, as the call does) into the pool of the
        outputs it reads, or a pool of its own. A capture that fails leaves `args` as it was."""
        _prune_retired()
        # Copied in by `__call__` before each replay (a copy captured would read the address
        # this call's input happens to have)
        staged = {i: args[i] for i in self.staged if isinstance(args[i], torch.Tensor)}
        pool = POOL_OWNERS.pool_of(args, self.staged)
        if pool is None or pool.replays_held():
            pool = Pool(self.recorder.new_pool())
        # The caller's memory, its inputs (not the staged ones, which the recording reads from
        # copies), by storage: the capture may put an output where an input it freed was
        inputs = {i: (a.untyped_storage()._cdata, StorageWeakRef(a.untyped_storage())) for i, a in enumerate(args)
                  if isinstance(a, torch.Tensor) and i not in staged}
        # Those in the pool's memory, which the call frees after its last read of them where
        # nobody else holds them: the capture may take their memory
        in_pool = {i for i in inputs if POOL_OWNERS.owner(args[i]) is pool}
        addresses = [a.data_ptr() if i in inputs else None for i, a in enumerate(args)]
        constants = [(i, a) for i, a in enumerate(args) if not isinstance(a, torch.Tensor)]
        # What a failed capture runs on: a capture runs nothing, so freed inputs are intact.
        rescue = [Memory.of(a) if i in in_pool else a for i, a in enumerate(args)]
        recorded = list(args)
        args.clear()
        try:
            replay, outputs, staged_memory = self.recorder.record(self.call, recorded, pool.handle, list(staged))
        except Exception as e:  # a call that cannot be captured runs normally from now on
            args[:] = [m.tensor() if isinstance(m, Memory) else m for m in rescue]
            self._cannot_capture(e)
            return _How("not captured")
        del recorded, rescue
        consumed = sorted(i for i in in_pool if inputs[i][1].expired())
        callers = {storage for storage, weak in inputs.values() if not weak.expired()}  # alive: no other storage is there
        kinds = [_memory_of(t, callers, self.device_type) for t in outputs]
        pooled_at = [k for k, what in enumerate(kinds) if what == "pool"]
        captured = [outputs[k] for k in pooled_at]  # the caller's: the recording keeps none of them
        pooled = PoolOutputs(captured)
        position = pool.add(pooled, replay)
        recording = Recording(
            replay, [None if what == "pool" else t for t, what in zip(outputs, kinds)], addresses,
            read_in_place=[i for i, address in enumerate(addresses) if address is not None],
            constants=constants, pool=pool, position=position, pooled=pooled, pooled_at=pooled_at,
            staged=staged_memory, free_at_capture=pool.free_before(position), consumed=consumed)
        del outputs
        POOL_OWNERS.register(recording)
        self.recordings.append(recording)
        return _How("recorded", recording, captured, staged)

    def _tell_busy(self, recordings: list[Recording]) -> None:
        """Say (once per graph: the dump's cudagraphs.txt and a warning) that a call runs normally
        because every recording at its sizes holds memory someone uses, and what holds it: a
        training loop that keeps a loss or an activation across steps loses the replays quietly
        otherwise."""
        reasons = "; ".join(f"recording {k + 1}: {r.why_busy()}" for k, r in enumerate(recordings))
        message = (f"a call runs normally, as will every call while its recordings are busy ({reasons}); "
                   "keep a value as `.item()` or a `.clone()` to let the calls replay")
        if self.report is not None:
            self.report(message)
        warnings.warn(f"mlc: {self.name}: cudagraphs: {message}", stacklevel=4)

    def _cannot_capture(self, error: Exception) -> None:
        self.reason = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        if self.report is not None:
            self.report(f"the call cannot be captured, it runs normally from now on: {self.reason}")
        if self.warn:
            warnings.warn(f"mlc: {self.name}: cudagraphs: the call cannot be captured, it runs normally: "
                          f"{self.reason}", stacklevel=4)


CALLS: weakref.WeakSet[CudaGraphCall] = weakref.WeakSet()  # every CudaGraphCall alive (a registry)


def _memory_of(output: Any, callers: set[int], device_type: str) -> str:
    """Whose memory a captured output is, by its storage: "caller" (an input's), "pool" (the
    recording's pool: a staged input's copy too), "host" (made on the host at the capture, as
    attention's random seed and offset on the CPU: a replay runs no host code, so the capture's
    is every replay's), or "other" (not a tensor)."""
    if not isinstance(output, torch.Tensor):
        return "other"
    if output.device.type != device_type:
        return "host"
    storage = output.untyped_storage()._cdata
    return "caller" if storage in callers else "pool"


def _lend_to_autograd(outputs: References) -> None:
    """Let autograd keep a replay's output as a parameter's `.grad` rather than copy it.

    Autograd keeps a backward's output as `.grad` where nobody else references it, and copies it
    otherwise; the recording's own reference would make it copy every gradient of every step (a
    kernel and an allocation per parameter). Registering the outputs as cached tensors (a
    reference that torch discounts: what Inductor's CUDA-graph trees do) lets it keep them. A
    kept gradient is a view of the recording's memory, so the recording is busy (`is_free`)
    until the caller drops it (`zero_grad`, `.grad = None`); a gradient accumulated into one
    already kept is the caller's sum, not a replay's output. The registrations end with
    `outputs` (a pool's: with the pool)."""
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


def _broadcast_dims(size: Sequence[int], stride: Sequence[int]) -> list[int]:
    """The dims a layout repeats its elements along (an expanded tensor's stride 0)."""
    return [d for d, (n, s) in enumerate(zip(size, stride)) if s == 0 and n > 1]


def _distinct(t: torch.Tensor, broadcast: Sequence[int]) -> torch.Tensor:
    """`t` with each of its `broadcast` dims cut to one: its elements, each once (what a copy
    into an expanded tensor must be given, since it cannot write one element twice)."""
    for d in broadcast:
        t = t.narrow(d, 0, 1)
    return t
