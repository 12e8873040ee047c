"""passes/pipeline.py's Timing (one row per pass and per verification, in order, summing to the
total) and its pause of the cycle collector."""

from __future__ import annotations

import gc

import pytest
from xdsl.dialects.builtin import ModuleOp

from mlc.dialects.registry import make_context
from mlc.passes.pipeline import PassFailed, Timing, load_pipeline, run_pipeline


def test_run_pipeline_times_each_pass_and_its_verification() -> None:
    timing = Timing()
    run_pipeline(ModuleOp([]), load_pipeline("cse,deps"), make_context(), timing=timing)
    assert [name for name, _ in timing.rows] == ["cse", "cse (verify)", "deps", "deps (verify)"]
    assert all(seconds >= 0 for _, seconds in timing.rows)
    assert timing.total == sum(seconds for _, seconds in timing.rows)


def test_verified_once_at_the_end_one_row_for_the_verification() -> None:
    timing = Timing()
    run_pipeline(ModuleOp([]), load_pipeline("cse,deps"), make_context(), timing=timing, verify_each=False)
    assert [name for name, _ in timing.rows] == ["cse", "deps", "verify the pipeline's output"]


def test_report_lists_rows_and_the_total() -> None:
    report = Timing([("inline", 0.25), ("realize", 0.75)]).report()
    assert "Total Execution Time: 1.0000 seconds" in report
    assert "    0.2500 ( 25.0%)  inline" in report and "    1.0000 (100.0%)  Total" in report
    assert Timing().report().endswith("    0.0000 (  0.0%)  Total\n")


@pytest.mark.parametrize("enabled", [True, False])
def test_the_cycle_collector_is_paused_while_passes_run(enabled: bool) -> None:
    """Off while each pass and its verification run (after_pass sees it off), as before after,
    a failing pass included."""
    seen = []
    (gc.enable if enabled else gc.disable)()
    try:
        run_pipeline(ModuleOp([]), load_pipeline("cse"), make_context(), after_pass=lambda *_: seen.append(gc.isenabled()))
        assert seen == [False] and gc.isenabled() == enabled
        with pytest.raises(PassFailed):
            run_pipeline(ModuleOp([]), load_pipeline("cse"), make_context(), verify=_fail)
        assert gc.isenabled() == enabled
    finally:
        gc.enable()


def _fail(module: ModuleOp) -> None:
    raise ValueError("does not verify")
