"""Every test session starts from an empty mlc cache: `MLC_CACHE_DIR` is a fresh temporary
folder unless the caller set one. A compile cache kept from an earlier run would serve graphs
without running the pipeline, and a test that watches the pipeline would pass without checking
anything.

`break_store_pass` registers `test-break-store`, a pass that leaves IR that does not verify (every
computed buffer renamed away from its store), for the tests of how drivers name a failing pass."""

from __future__ import annotations

import os
import tempfile

import pytest

os.environ.setdefault("MLC_CACHE_DIR", tempfile.mkdtemp(prefix="mlc-test-cache-"))


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
