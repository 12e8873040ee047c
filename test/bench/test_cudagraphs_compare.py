"""bench/cudagraphs.py --compare's table: parsed from probe lines, against issue 47's memory bar
(the runs themselves need a GPU)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytest.importorskip("transformers")  # bench/models.py, which the script loads, builds HF models


def _script():
    path = Path(__file__).resolve().parents[2] / "bench" / "cudagraphs.py"
    spec = importlib.util.spec_from_file_location("mlc_bench_cudagraphs", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_reserved_memory_is_read_from_a_probe_line_and_held_against_the_bar():
    bench = _script()
    line = ("gpt2: peak 1548 MB, reserved 1565 MB, pools 1352 MB; reserved at most 1822 MB over 6 steps; "
            "between steps (MB total / allocated): default pool 456 / 243, graphs pool 1352 / 0")
    assert bench.reserved_at_most(line) == 1822
    assert bench.reserved_at_most("failed: no GPU") is None
    table = bench.compared({"gpt2": (1708, 1822), "llama": (3094, 3500), "bert": (1800, None)})
    assert table[2] == "| gpt2 | 1708 | 1822 | 1.067 | yes |"
    assert table[3] == "| llama | 3094 | 3500 | 1.131 | no |"
    assert table[4] == "| bert | 1800 | - | - | - |"
