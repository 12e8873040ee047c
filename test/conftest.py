"""Every test session starts from an empty mlc cache: `MLC_CACHE_DIR` is a fresh temporary
folder unless the caller set one, shared by the run's pytest-xdist workers. A compile cache kept
from an earlier run would serve graphs without running the pipeline, and a test that watches the
pipeline would pass without checking anything.

`break_store_pass` registers `test-break-store`, a pass that leaves IR that does not verify (every
computed buffer renamed away from its store), for the tests of how drivers name a failing pass."""

from __future__ import annotations

import os
import tempfile

import pytest


def _session_cache_dir() -> str:
    """A fresh folder for this run; under pytest-xdist (`make test`) one folder for all the
    workers of the run, named by the run's id, so a graph one worker compiled serves the others."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")  # the same in every worker of one run
    if run is None:
        return tempfile.mkdtemp(prefix="mlc-test-cache-")
    path = os.path.join(tempfile.gettempdir(), f"mlc-test-cache-{run}")
    os.makedirs(path, exist_ok=True)
    return path


os.environ.setdefault("MLC_CACHE_DIR", _session_cache_dir())


@pytest.fixture
def break_store_pass():
    """The pass `test-break-store` registered for one test (see the module docstring)."""
    from dataclasses import dataclass

    from xdsl.dialects.builtin import StringAttr
    from xdsl.passes import ModulePass

    import mlc
    from mlc.dialects.buffer import ComputedOp
    from mlc.passes.registry import PASSES

    @mlc.register_pass
    @dataclass(frozen=True)
    class BreakStore(ModulePass):
        """Give every computed buffer a name its store does not use (a test pass)."""

        name = "test-break-store"

        def apply(self, ctx, op) -> None:  # type: ignore[no-untyped-def]
            for node in op.walk():
                if isinstance(node, ComputedOp):
                    node.properties["buffer"] = StringAttr("renamed")

    yield BreakStore.name
    PASSES.pop(BreakStore.name)
