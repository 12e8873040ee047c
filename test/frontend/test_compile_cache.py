"""The compile cache across processes (`mlc.frontend.compile_cache`): a second process compiling
the same graph skips the pipeline; a damaged entry is compiled again, never trusted; the key
changes with the graph and the pipeline; the dump says hit or miss; autotuned configs are kept;
an unusable cache folder is named, and with the cache off never touched."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import torch

if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"  # before anything imports triton

import pytest  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.fx.experimental.proxy_tensor import make_fx  # noqa: E402

from mlc.frontend import compile_cache  # noqa: E402
from mlc.frontend.backend import compile_graph, pipeline_spec  # noqa: E402
from mlc.frontend.decompositions import decomposition_table  # noqa: E402
from mlc.frontend.dump import print_ir  # noqa: E402
from mlc.frontend.importer import import_graph  # noqa: E402
from mlc.frontend.settings import Settings  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"

# Compiles a forward and a backward graph (a transposed input: the entry's input layouts are
# used), checks them against eager and prints how often the pipeline and emit-python ran.
SCRIPT = """
import torch
import mlc.codegen.emit_python as emit
import mlc.frontend.backend as backend

counts = {"pipeline": 0, "emit": 0}

def counted(name, fn):
    def wrapper(*args, **kwargs):
        counts[name] += 1
        return fn(*args, **kwargs)
    return wrapper

backend.run_pipeline = counted("pipeline", backend.run_pipeline)
emit.emit_module = counted("emit", emit.emit_module)

def fn(x, w):
    return (torch.relu(x * w) + x.sum(0)).softmax(-1)

torch.manual_seed(0)
x = torch.randn(16, 12).t().requires_grad_()
w = torch.randn(16, requires_grad=True)
out = torch.compile(fn, backend="mlc", fullgraph=True, dynamic=False)(x, w)
out.pow(2).sum().backward()
ex, ew = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
expected = fn(ex, ew)
expected.pow(2).sum().backward()
torch.testing.assert_close(out, expected)
torch.testing.assert_close((x.grad, w.grad), (ex.grad, ew.grad))
print("pipeline", counts["pipeline"], "emit", counts["emit"])
"""


def _compile_in_new_process(cache: Path) -> tuple[int, int]:
    """Run SCRIPT in a fresh interpreter on `cache`; (pipeline runs, emit-python runs)."""
    env = {**os.environ, "MLC_CACHE_DIR": str(cache), "TRITON_INTERPRET": "1", "CUDA_VISIBLE_DEVICES": ""}
    for name in ("MLC_DUMP_DIR", "MLC_CACHE", "MLC_PIPELINE", "MLC_DEBUG"):
        env.pop(name, None)
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    _, pipeline, _, emitted = proc.stdout.split()[-4:]
    return int(pipeline), int(emitted)


def _entries(cache: Path) -> list[Path]:
    return sorted((cache / "graphs").glob("*.json"))


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory) -> Path:
    """A cache filled by one process: the forward's and the backward's entries."""
    cache = tmp_path_factory.mktemp("warm") / "cache"
    assert _compile_in_new_process(cache) == (2, 2)
    assert len(_entries(cache)) == 2
    return cache


def _copy(cache: Path, to: Path) -> Path:
    import shutil

    shutil.copytree(cache, to)
    return to


def test_second_process_skips_the_pipeline(warm_cache, tmp_path):
    """The first process compiled both graphs; a second one, on the same cache, runs neither
    the pipeline nor emit-python, and its results (and gradients) are eager's."""
    cache = _copy(warm_cache, tmp_path / "cache")
    before = {p.name: p.read_bytes() for p in _entries(cache)}
    assert _compile_in_new_process(cache) == (0, 0)
    assert {p.name: p.read_bytes() for p in _entries(cache)} == before  # hits write nothing


def test_entries_count_the_launches_of_a_call(warm_cache, monkeypatch):
    """Each entry says how many kernels and extern calls its module's call launches (whether
    its calls replay a CUDA graph): the emitted call's `launch(...)` lines, and no extern."""
    monkeypatch.setenv("MLC_CACHE_DIR", str(warm_cache))
    for path in _entries(warm_cache):
        entry = compile_cache.load(path.stem)
        kernels = len(re.findall(r"^    launch\(", entry.source, re.MULTILINE))
        assert kernels >= 1 and entry.launches == (kernels, 0), (entry.launches, kernels)


def test_an_entry_is_the_emitted_module_it_stored(tmp_path, monkeypatch):
    """An entry stores every field of the compile's EmittedModule and gives back an equal one
    (symbolic layouts as None)."""
    from mlc.codegen.emitted import EmittedModule

    monkeypatch.setenv("MLC_CACHE_DIR", str(tmp_path))
    emitted = EmittedModule("def call(args):\n    return ()\n", (((4, 8), (8, 1)), None),
                            (None, ((8, 4), (1, 8))), (3, 1))
    compile_cache.store("k", emitted)
    assert compile_cache.load("k") == emitted
    payload = json.loads(compile_cache.entry_path("k").read_text())["payload"]
    assert sorted(payload) == sorted(f.name for f in dataclasses.fields(EmittedModule))


def _truncated(text: bytes) -> bytes:
    return text[: len(text) // 2]


def _not_utf8(text: bytes) -> bytes:
    return b"\xff" + text


def _wrong_checksum(text: bytes) -> bytes:
    """The payload changed under its checksum: a source that would exit if it were run."""
    data = json.loads(text)
    data["payload"]["source"] = "raise SystemExit(7)\n"
    return json.dumps(data).encode()


def _other_format(text: bytes) -> bytes:
    return json.dumps({**json.loads(text), "format": 0}).encode()


def _bad_payload(text: bytes) -> bytes:
    """A payload of the wrong shape, with a checksum that matches it."""
    data = json.loads(text)
    data["payload"]["input_layouts"] = [["16", "1"]]
    data["checksum"] = compile_cache._checksum(data["payload"])
    return json.dumps(data).encode()


def _bad_launches(text: bytes) -> bytes:
    """Launch counts that no module has, with a checksum that matches them."""
    data = json.loads(text)
    data["payload"]["launches"] = [-1, 0]
    data["checksum"] = compile_cache._checksum(data["payload"])
    return json.dumps(data).encode()


@pytest.mark.parametrize("damage", [_truncated, _not_utf8, _wrong_checksum, _other_format, _bad_payload,
                                    _bad_launches])
def test_damaged_entry_is_compiled_again(warm_cache, tmp_path, monkeypatch, damage):
    """A damaged entry is a miss: the next process compiles the graph again (correctly) and
    overwrites the entry with a good one."""
    cache = _copy(warm_cache, tmp_path / "cache")
    monkeypatch.setenv("MLC_CACHE_DIR", str(cache))
    damaged, intact = _entries(cache)
    good = damaged.read_bytes()
    damaged.write_bytes(damage(good))
    assert compile_cache.load(damaged.stem) is None
    assert compile_cache.load(intact.stem) is not None

    assert _compile_in_new_process(cache) == (1, 1)  # the damaged graph only
    assert damaged.read_bytes() == good
    assert compile_cache.load(damaged.stem) is not None
    assert not list((cache / "graphs").glob("*.tmp"))  # written through a rename, nothing left over


def _imported_ir(fn, *args) -> str:
    return print_ir(import_graph(make_fx(fn, decomposition_table=decomposition_table())(*args)).module)


def test_key_follows_graph_pipeline_and_environment(monkeypatch):
    """Same graph and pipeline: same key. Another graph, shape, pipeline option, pipeline setting
    (MLC_PIPELINE), debug or max_autotune setting, or environment (versions, compiler source,
    device): another key."""
    x = torch.randn(8, 32)
    gelu = _imported_ir(F.gelu, x)
    assert gelu == _imported_ir(F.gelu, x)
    spec = pipeline_spec(Settings())
    key = compile_cache.graph_key(gelu, spec)
    assert key == compile_cache.graph_key(gelu, spec)
    others = {
        compile_cache.graph_key(_imported_ir(torch.sigmoid, x), spec),
        compile_cache.graph_key(_imported_ir(F.gelu, torch.randn(8, 16)), spec),
        compile_cache.graph_key(gelu, pipeline_spec(Settings(debug=True))),  # MLC_DEBUG=1
        compile_cache.graph_key(gelu, pipeline_spec(Settings(max_autotune=True))),  # mode="max-autotune"
        compile_cache.graph_key(gelu, pipeline_spec(Settings(), explain_fusion=True)),  # the dump's explained fusion
        compile_cache.graph_key(gelu, pipeline_spec(Settings(pipeline="lower-aten,inline,realize,fuse,convert-to-triton"))),
    }
    environment = compile_cache._environment()
    assert environment["device"] and len(environment["mlc_source"]) == 64
    for field in environment:
        monkeypatch.setattr(compile_cache, "_environment", lambda f=field: {**environment, f: "other"})
        others.add(compile_cache.graph_key(gelu, spec))
    assert key not in others and len(others) == 6 + len(environment)


def _gelu_graph():
    x = torch.randn(8, 32, device=DEVICE)
    return make_fx(F.gelu, decomposition_table=decomposition_table())(x), x


def test_dump_says_hit_or_miss(tmp_path, monkeypatch):
    """With MLC_DUMP_DIR every pass runs (the dump is complete) and timing.txt says whether the
    cache held the graph: a miss, then a hit under the same key."""
    monkeypatch.setenv("MLC_CACHE_DIR", str(tmp_path / "cache"))
    rows = []
    for run in ("a", "b"):
        monkeypatch.setenv("MLC_DUMP_DIR", str(tmp_path / run))
        gm, x = _gelu_graph()
        torch.testing.assert_close(compile_graph(gm, [x])(x), F.gelu(x))
        (graph,) = (tmp_path / run).iterdir()
        assert (graph / "00-aten.mlir").exists() and (graph / "module.py").exists()
        assert len(list(graph.glob("*.mlir"))) == len(pipeline_spec(Settings(), explain_fusion=True).split(",")) + 1
        rows.append([line.split()[-2:] for line in (graph / "timing.txt").read_text().splitlines()
                     if "compile cache:" in line])
    (miss,), (hit,) = rows
    assert miss[0] == "miss" and hit == ["hit", miss[1]]
    assert compile_cache.load(miss[1]) is not None


def test_hit_in_process_and_cache_off(tmp_path, monkeypatch):
    """Without a dump a hit skips the pipeline; MLC_CACHE=0 compiles every time, stores nothing."""
    from mlc.frontend import backend

    monkeypatch.setenv("MLC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MLC_DUMP_DIR", raising=False)
    runs = []
    original = backend.run_pipeline

    def counted(*args, **kwargs):
        runs.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(backend, "run_pipeline", counted)
    for cached in ("1", "1", "0"):
        monkeypatch.setenv("MLC_CACHE", cached)
        gm, x = _gelu_graph()
        torch.testing.assert_close(compile_graph(gm, [x])(x), F.gelu(x))
    assert len(runs) == 2  # the first compile and the one with the cache off
    assert len(_entries(tmp_path / "cache")) == 1


def test_autotuned_config_is_kept(tmp_path, monkeypatch):
    """The autotuner's choice is written once and read back by the next launch of the same
    kernel and sizes, each rounded up to a power of two (another process: nothing in memory);
    a damaged file, or one naming a config that is not offered, tunes again."""
    from mlc.codegen import triton_helpers

    monkeypatch.setenv("MLC_CACHE_DIR", str(tmp_path))
    tunings = []

    def tuned(kernel, configs, xnumel, args, tiles=(None, None), restore=()):
        tunings.append(xnumel)
        return configs[-1]

    monkeypatch.setattr(triton_helpers, "_tuned", tuned)
    kernel = SimpleNamespace(cache_key="0123")
    configs = (dict(XBLOCK=8, num_warps=2), dict(XBLOCK=64, num_warps=4))
    assert triton_helpers._kept_tuned(kernel, configs, 100, ()) == configs[1]
    (kept,) = (tmp_path / "autotune").iterdir()
    assert json.loads(kept.read_text()) == {"config": configs[1]}
    assert triton_helpers._kept_tuned(kernel, configs, 100, ()) == configs[1]
    assert tunings == [100]
    triton_helpers._kept_tuned(kernel, configs, 200, ())  # other sizes: tuned
    triton_helpers._kept_tuned(SimpleNamespace(cache_key="4567"), configs, 100, ())  # another kernel
    triton_helpers._kept_tuned(kernel, configs[:1] + (dict(XBLOCK=32, num_warps=4),), 100, ())  # other configs
    triton_helpers._kept_tuned(kernel, configs, 100, (100, 700))  # another r0_numel
    assert tunings == [100, 200, 100, 100, 100]
    assert len(list((tmp_path / "autotune").iterdir())) == 5
    triton_helpers._kept_tuned(kernel, configs, 120, ())  # the same power-of-two bucket as 100
    triton_helpers._kept_tuned(kernel, configs, 100, (97, 600))  # ... as (100, 700)
    assert tunings == [100, 200, 100, 100, 100]
    for damage in ("{", json.dumps({"config": dict(XBLOCK=512, num_warps=8)}), "[]"):
        kept.write_text(damage)
        assert triton_helpers._kept_tuned(kernel, configs, 100, ()) == configs[1]
        assert json.loads(kept.read_text()) == {"config": configs[1]}
    assert tunings == [100, 200, 100, 100, 100, 100, 100, 100]


def _unique_graph():
    """A graph no earlier test loaded a module for (a loaded module is not written again)."""
    x = torch.randn(3, 37, device=DEVICE)
    return make_fx(torch.erf, decomposition_table=decomposition_table())(x), x


@pytest.fixture
def under_a_file(tmp_path) -> Path:
    """A cache folder that cannot be created: its parent is a regular file."""
    (tmp_path / "a_file").write_text("not a folder")
    return tmp_path / "a_file" / "cache"


def test_cache_off_never_touches_the_cache_folder(under_a_file, monkeypatch):
    """MLC_CACHE=0: the emitted module goes to a folder of the process's own, so an unusable
    MLC_CACHE_DIR does not matter."""
    monkeypatch.setenv("MLC_CACHE_DIR", str(under_a_file))
    monkeypatch.setenv("MLC_CACHE", "0")
    gm, x = _unique_graph()
    torch.testing.assert_close(compile_graph(gm, [x])(x), torch.erf(x))
    assert under_a_file.parent.read_text() == "not a folder"


def test_a_cache_folder_that_cannot_be_created_fails_torch_compile_naming_it(under_a_file, monkeypatch):
    monkeypatch.setenv("MLC_CACHE_DIR", str(under_a_file))
    monkeypatch.setenv("MLC_CACHE", "1")
    torch._dynamo.reset()
    x = torch.randn(3, 41, device=DEVICE)
    compiled = torch.compile(torch.sigmoid, backend="mlc", fullgraph=True, dynamic=False)
    with pytest.raises(Exception, match=re.escape(f"cannot use {under_a_file} as mlc's cache folder "
                                                  f"(MLC_CACHE_DIR={under_a_file}): Not a directory")) as info:
        compiled(x)
    assert "MLC_CACHE=0" in str(info.value)


def test_a_cache_folder_that_cannot_be_written_is_named(tmp_path, monkeypatch):
    """A read-only cache folder fails the compile at its first use, whether or not the graph
    would hit (root may write anywhere: os.access then answers as for another user)."""
    cache = tmp_path / "read-only"
    cache.mkdir()
    cache.chmod(0o500)
    if os.access(cache, os.W_OK):
        access = os.access
        monkeypatch.setattr(os, "access", lambda path, mode: access(path, mode) and Path(path) != cache)
    monkeypatch.setenv("MLC_CACHE_DIR", str(cache))
    monkeypatch.setenv("MLC_CACHE", "1")
    monkeypatch.delenv("MLC_DUMP_DIR", raising=False)
    gm, x = _unique_graph()
    with pytest.raises(Exception, match=re.escape(f"cannot use {cache} as mlc's cache folder "
                                                  f"(MLC_CACHE_DIR={cache}): not writable")) as info:
        compile_graph(gm, [x])
    assert type(info.value).__name__ == "CacheDirError"
    cache.chmod(0o700)
