"""Graphs with collectives through mlc, on CPU processes joined by gloo over 127.0.0.1, and on
GPUs joined by NCCL where a machine has two or more.

Each test starts one process per rank (`distributed_worker.py`) running a group of cases: every
functional collective forward and backward, and training steps of a small transformer under
DDP, FSDP2 and tensor parallelism, each compiled with `backend="mlc"` against the same run
eagerly. A rank's failure fails the test with that rank's output.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import torch
import torch.distributed as dist

pytestmark = pytest.mark.skipif(
    not (dist.is_available() and dist.is_gloo_available()), reason="torch.distributed with gloo is not available"
)

WORKER = Path(__file__).with_name("distributed_worker.py")
TIMEOUT = 240  # seconds for one group: compiling under Triton's interpreter is slow, hangs are slower


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Ranks on CPU share this machine's cores, and run on its CPU even beside a GPU (where mlc's kernels
# would refuse the CPU tensors gloo works on): no GPU visible, Triton's interpreter.
ON_CPU = {"OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": "", "TRITON_INTERPRET": "1"}
ON_GPUS = {"DISTRIBUTED_TEST_DEVICE": "cuda", "TRITON_INTERPRET": "0"}  # rank r on cuda:r, NCCL, compiled Triton


def run_ranks(group: str, world: int, cases: list[str] | None = None, env: dict[str, str] = ON_CPU) -> None:
    """Run `group`'s cases (or only `cases`) on `world` ranks; fail with the output of the ranks
    that failed."""
    codes, outputs = _launch(group, world, cases, env)
    if any("address already in use" in out.lower() for out in outputs):  # the free port was taken meanwhile
        codes, outputs = _launch(group, world, cases, env)
    failed = [rank for rank, code in enumerate(codes) if code != 0]
    if failed:
        # The first rank to fail says why; the others then fail at their next collective.
        report = "\n".join(f"---- rank {rank} (exit {codes[rank]}) ----\n{outputs[rank][-6000:]}" for rank in failed)
        pytest.fail(f"{group} on {world} ranks failed:\n{report}", pytrace=False)


def _launch(group: str, world: int, cases: list[str] | None,
            env: dict[str, str]) -> tuple[list[int | None], list[str]]:
    """Each rank's exit status and output (stdout and stderr, through a file: a rank blocked on
    a full pipe would hold up the others at their next collective)."""
    port = _free_port()
    env = {**os.environ, **env}
    with contextlib.ExitStack() as stack:
        logs = [stack.enter_context(tempfile.TemporaryFile("w+")) for _ in range(world)]
        procs = [
            subprocess.Popen([sys.executable, str(WORKER), group, str(rank), str(world), str(port), *(cases or [])],
                             env=env, stdout=log, stderr=subprocess.STDOUT, text=True)
            for rank, log in enumerate(logs)
        ]
        deadline = time.monotonic() + TIMEOUT
        timed_out = False
        for proc in procs:
            try:
                proc.wait(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                timed_out = True
                for p in procs:
                    p.kill()
                proc.wait()
        outputs = []
        for log in logs:
            log.seek(0)
            outputs.append(log.read() + (f"\n[killed: the group ran past {TIMEOUT} s]" if timed_out else ""))
    return [p.returncode for p in procs], outputs


@pytest.mark.parametrize("group", ["collectives", "ddp", "fsdp2", "tp"])
def test_two_ranks(group: str) -> None:
    run_ranks(group, 2)


@pytest.mark.skipif(not (torch.cuda.device_count() >= 2 and dist.is_nccl_available()),
                    reason="needs two GPUs and NCCL")
@pytest.mark.parametrize("group", ["collectives", "ddp", "fsdp2", "tp"])
def test_two_gpus(group: str) -> None:
    """The same cases with real Triton kernels, each rank on its own GPU, over NCCL."""
    run_ranks(group, 2, env=ON_GPUS)


def test_collectives_four_ranks() -> None:
    """Collectives again on four ranks (more processes than this machine may have cores): a
    group larger than a pair gathers, scatters and exchanges four chunks."""
    run_ranks("collectives", 4, ["issue_example", "all_gather_and_reduce_scatter", "all_to_all"])
