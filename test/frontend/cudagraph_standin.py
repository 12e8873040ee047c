"""The stand-in recorder of the CUDA-graph tests (`test_cudagraphs.py`,
`test_cudagraphs_training.py`): imitates on any machine what a CUDA graph's capture and replay
do to memory, so that a replay over something still in use shows up as a changed value."""

from __future__ import annotations

import torch
from torch.multiprocessing.reductions import StorageWeakRef

from mlc.frontend import cudagraphs


class InPlaceRecorder:
    """Records by running the call; a replay reruns it on the recorded inputs and copies the
    results into the recorded outputs, as a CUDA graph writes its pool's memory.

    A pool is a list of its recordings: their outputs, which the stand-in keeps (the pool's
    memory), and what it handed out. It hands out aliases (`cudagraphs.alias`: tensors over
    the memory that do not keep it), so the caller's tensors die as a capture's outputs do, but
    for outputs that are an input's storage; it reads the inputs by address. A capture may take memory that earlier recordings'
    outputs no longer used by then, and its temporaries take memory that later recordings'
    outputs use: a replay fills both with NaN, so a held output overwritten shows up as NaN."""

    def __init__(self, fail: bool = False, fail_after_call: bool = False):
        self.memory: set[int] = set()  # addresses of the outputs it keeps (its pools' memory)
        self.fail = fail
        self.fail_after_call = fail_after_call  # the call ran (and freed its inputs), then the capture fails
        self.records = 0
        self.replays = 0
        self.capturing_now = False  # whether the caller "is capturing" a graph of its own
        self.device_type = "cpu"  # its pools' device

    def capturing(self):
        return self.capturing_now

    def new_pool(self):
        return []

    def record(self, call, args, pool, staged=()):
        if self.fail:
            raise RuntimeError("operation not permitted when stream is capturing")
        self.records += 1
        # an output that is an input stays one (not a staged input: the graph reads a copy)
        kept = [a for i, a in enumerate(args) if isinstance(a, torch.Tensor) and i not in staged]
        # A staged input's copy is the pool's memory: the stand-in keeps it (the capture frees
        # it, but a pool keeps its memory). The caller fills it before each replay, the first
        # too; the capture's run reads zeros (a real capture runs nothing)
        staged_memory = cudagraphs.stage(args, staged)
        copies = [args[i].zero_() for i in staged]
        self.memory.update(m.address for m in staged_memory.values())
        inputs = [cudagraphs.alias(a) if isinstance(a, torch.Tensor) else a for a in args]
        # A capture runs nothing, so an input the call frees keeps its values until the replay;
        # a stand-in that runs the call would free it for real: it keeps those outside its pools
        callers = [a for a in kept if a.untyped_storage().data_ptr() not in self.memory]
        # Nor does it write an input the call writes in place (a batch norm's statistics): the
        # first replay does, once
        before = [(a, a.clone()) for a in kept]
        outputs = list(call(args))
        for a, value in before:
            a.data.copy_(value)  # not a write autograd sees: the version counter stays
        del before
        if self.fail_after_call:
            raise RuntimeError("CUDA error: operation failed due to a previous error during capture")
        # an output that is an input's, or made off the device (on the host), is handed as it is
        handed = [t if not isinstance(t, torch.Tensor) or t.device.type != self.device_type
                  or any(t.untyped_storage()._cdata == k.untyped_storage()._cdata for k in kept)
                  else cudagraphs.alias(t) for t in outputs]
        writes = [h is not t for h, t in zip(handed, outputs)]
        del kept
        taken = [out for earlier in pool for out, weak in zip(earlier["outputs"], earlier["weak"])
                 if weak is not None and weak.expired()]  # free by the end of this capture
        position = len(pool)
        self.memory.update(t.untyped_storage().data_ptr() for t in outputs if isinstance(t, torch.Tensor))
        pool.append({"copies": copies, "outputs": outputs, "weak": [StorageWeakRef(t.untyped_storage()) if isinstance(t, torch.Tensor)
                                                   else None for t in handed]})

        def replay():
            self.replays += 1
            assert callers is not None  # held for the replays
            results = call(list(inputs))
            overwritten = taken + [out for later in pool[position + 1:] for out in later["outputs"]]
            for out in overwritten:
                if isinstance(out, torch.Tensor) and out.is_floating_point():
                    out.fill_(float("nan"))
            for out, new, written in zip(outputs, results, writes):
                if written:  # an output that is an input is the input: a replay writes nothing there
                    out.copy_(new)

        return replay, handed, staged_memory
