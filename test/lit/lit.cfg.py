"""lit configuration: every .mlir file under test/lit is a test run with mlc's tools."""

import os
import shutil

import lit.formats

config.name = "mlc"
config.test_format = lit.formats.ShTest()
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["lit.cfg.py", "Inputs"]
config.environment["PATH"] = os.environ["PATH"]
for var in ("PYTHONPATH", "HOME", "TRITON_INTERPRET", "MLC_CACHE_DIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
for tool in ("mlc-opt", "filecheck"):
    if shutil.which(tool) is None:
        lit_config.fatal(f"{tool} not found on PATH (activate the virtualenv or use `make test`)")
