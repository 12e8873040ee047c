"""mlc launches no more kernels than Inductor generates, program by program (bench/kernel_counts.py).

Inductor's counts were measured once on the GPU machine and committed with the command that made
them (`bench/results/kernel_counts_inductor.json`, its `environment`); mlc's are counted here on
every run, under Triton's interpreter, with each program's outputs and gradients checked against
eager (a wrong result fails the test as surely as an extra kernel).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("TRITON_INTERPRET", "1")  # on a machine without a GPU, Triton's interpreter runs the kernels

ROOT = Path(__file__).resolve().parents[2]
INDUCTOR = json.loads((ROOT / "bench" / "results" / "kernel_counts_inductor.json").read_text())["counts"]


def _corpus():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("kernel_counts", ROOT / "bench" / "kernel_counts.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


CORPUS = _corpus()


def test_the_corpus_is_measured_for_inductor() -> None:
    assert len(CORPUS.PROGRAMS) >= 40 and set(CORPUS.PROGRAMS) == set(INDUCTOR)


@pytest.mark.parametrize("name", sorted(CORPUS.PROGRAMS))
def test_mlc_launches_no_more_kernels_than_inductor(name: str) -> None:
    import torch

    torch._dynamo.reset()
    assert CORPUS.mlc_kernel_count(name) <= INDUCTOR[name]
