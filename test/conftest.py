"""Every test session starts from an empty mlc cache: `MLC_CACHE_DIR` is a fresh temporary
folder unless the caller set one. A compile cache kept from an earlier run would serve graphs
without running the pipeline, and a test that watches the pipeline would pass without checking
anything."""

from __future__ import annotations

import os
import tempfile

os.environ.setdefault("MLC_CACHE_DIR", tempfile.mkdtemp(prefix="mlc-test-cache-"))
