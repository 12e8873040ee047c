"""The CUDA-graph tests' stand-in recorder (`cudagraph_standin.py`), importable by name from
both test modules (`from cudagraph_standin import InPlaceRecorder`): pytest imports this file
before them."""

import importlib.util
import sys
from pathlib import Path

_spec = importlib.util.spec_from_file_location("cudagraph_standin", Path(__file__).with_name("cudagraph_standin.py"))
assert _spec is not None and _spec.loader is not None
sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sys.modules[_spec.name])
