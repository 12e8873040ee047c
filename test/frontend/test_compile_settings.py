"""torch.compile's `mode` and `options` through mlc (`mlc.frontend.settings`): each mode and
option reaches the graphs it compiles, an option wins over the environment, and an unknown
mode, option or value is refused naming the valid ones."""

from __future__ import annotations

import os

import torch

if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"  # before anything imports triton

import pytest  # noqa: E402

from mlc.frontend import backend, cudagraphs  # noqa: E402
from mlc.frontend.settings import MODES, OPTION_TYPES, Settings, compile_settings  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
ENVIRONMENT = ("MLC_CUDAGRAPHS", "MLC_PIPELINE", "MLC_FALLBACK", "MLC_DUMP_DIR", "MLC_DEBUG")


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch):
    for name in ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)


def one_kernel(x):
    return torch.relu(x) * 2  # one kernel: by default its calls are not replayed


def _compile_and_run(**kwargs):
    torch._dynamo.reset()  # a compile per mode: Dynamo would reuse the previous one's code
    x = torch.randn(8, 16, device=DEVICE)
    compiled = torch.compile(one_kernel, backend="mlc", fullgraph=True, dynamic=False, **kwargs)
    torch.testing.assert_close(compiled(x), one_kernel(x))


@pytest.fixture
def graphed(monkeypatch) -> list[bool]:
    """For each CudaGraphCall the backend makes, whether a failed capture warns (an asked-for
    one). On a machine without a GPU the policy is asked as if there were one; the calls then
    run normally (their inputs are not on a GPU)."""
    made: list[bool] = []
    init, policy = cudagraphs.CudaGraphCall.__init__, cudagraphs.policy

    def remember(self, *args, **kwargs):
        init(self, *args, **kwargs)
        made.append(self.warn)

    def on_a_gpu(*args, **kwargs):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(torch.cuda, "is_available", lambda: True)
            return policy(*args, **kwargs)

    monkeypatch.setattr(cudagraphs.CudaGraphCall, "__init__", remember)
    monkeypatch.setattr(cudagraphs, "policy", on_a_gpu)
    return made


@pytest.mark.parametrize("mode, env, expected", [
    (None, None, []),
    ("default", "1", [True]),  # the environment's
    ("reduce-overhead", None, [True]),
    ("max-autotune", None, [True]),
    ("max-autotune-no-cudagraphs", "1", []),  # the mode wins over the environment
])
def test_a_mode_sets_cuda_graphs_for_its_compile(monkeypatch, graphed, mode, env, expected):
    if env is not None:
        monkeypatch.setenv("MLC_CUDAGRAPHS", env)
    _compile_and_run(mode=mode)
    assert graphed == expected


def test_a_training_step_replays_by_default(graphed):
    """With no setting, a training step's forward and backward of static sizes both replay CUDA
    graphs ("auto": a failed capture runs normally, without a warning)."""
    torch._dynamo.reset()
    x, w = torch.randn(8, 16, device=DEVICE), torch.randn(16, 4, device=DEVICE, requires_grad=True)
    compiled = torch.compile(lambda x, w: torch.relu(x @ w), backend="mlc", fullgraph=True, dynamic=False)
    compiled(x, w).sum().backward()
    expected = torch.autograd.grad(torch.relu(x @ w).sum(), w)[0]
    torch.testing.assert_close(w.grad, expected)
    assert graphed == [False, False]


@pytest.mark.parametrize("env, option, expected", [
    (None, True, [True]),
    ("1", False, []),  # an explicit option wins over the environment
    ("0", None, []),  # None: the default policy (a one-kernel call is not replayed)
])
def test_the_cudagraphs_option_wins_over_the_environment(monkeypatch, graphed, env, option, expected):
    if env is not None:
        monkeypatch.setenv("MLC_CUDAGRAPHS", env)
    _compile_and_run(options={"cudagraphs": option})
    assert graphed == expected


@pytest.fixture
def specs(monkeypatch) -> list[str]:
    """The pipeline spec of every graph the backend runs the pipeline on."""
    seen: list[str] = []
    run_pipeline = backend.run_pipeline

    def remember(module, spec, *args, **kwargs):
        seen.append(spec)
        return run_pipeline(module, spec, *args, **kwargs)

    monkeypatch.setattr(backend, "run_pipeline", remember)
    monkeypatch.setenv("MLC_CACHE", "0")  # every compile runs the pipeline
    return seen


def test_max_autotune_offers_the_autotuner_every_config(specs):
    _compile_and_run()
    _compile_and_run(mode="max-autotune-no-cudagraphs")
    default, tuned = specs
    assert "autotune-pointwise" not in default
    assert "convert-to-triton{autotune-pointwise=true}" in tuned.split(",")


def test_gemm_auto_and_triton_lower_every_product(specs):
    """`gemm="triton"` and `"auto"` lower the products, grouped ones too, to contractions (auto
    then times each kernel against its extern: `test_gemm.py`); `"extern"` leaves them."""
    for gemm in ("auto", "triton", "extern"):
        _compile_and_run(options={"gemm": gemm})
    auto, triton, extern = (spec.split(",") for spec in specs)
    assert "lower-aten{gemm=triton}" in auto and "lower-aten{gemm=triton}" in triton
    assert "lower-aten" in extern


def test_options_reach_the_compile(specs, tmp_path):
    """dump_dir (a path, its key spelled with a dash as Inductor's may be), debug and pipeline as
    options, none in the environment."""
    pipeline = "lower-aten,inline,realize,deps,fuse,convert-to-triton"
    _compile_and_run(options={"dump-dir": tmp_path, "debug": True, "pipeline": pipeline})
    (spec,) = specs
    assert spec == ("lower-aten,inline,realize{keep-padded-outputs=true},deps,fuse{explain=true},"
                    "convert-to-triton{check-indices=true}")
    (graph,) = tmp_path.iterdir()
    assert graph.name.endswith("_inference") and (graph / "module.py").exists()


def test_fusion_and_tuning_by_the_cost_model(specs):
    """fusion="model" ranks fuse's pairs by predicted time saved; tune="model" adds rank-configs
    after convert-to-triton, which keeps each kernel's fastest predicted config; the numbers
    stay eager's."""
    _compile_and_run(options={"fusion": "model", "tune": "model"})
    passes = specs[0].split(",")
    assert "fuse{priority=model}" in passes
    assert passes[passes.index("convert-to-triton") + 1] == "rank-configs{tune=model}"
    with pytest.raises(ValueError, match="mlc: tune is one of 'all', 'top-k', 'model', not 'fast'"):
        compile_settings(options={"tune": "fast"}, environ={})


def test_the_fallback_option_runs_a_graph_mlc_cannot_compile_eagerly():
    torch._dynamo.reset()
    x = torch.randn(8, 16, device=DEVICE)
    compiled = torch.compile(lambda x: x.masked_select(x > 0) * 2, backend="mlc", fullgraph=True,
                             options={"fallback": True})
    with pytest.warns(UserWarning, match="running this graph eagerly"):
        torch.testing.assert_close(compiled(x), x.masked_select(x > 0) * 2)


def test_an_unknown_mode_fails_the_compile_naming_the_valid_ones():
    with pytest.raises(Exception, match="unknown mode 'lite'") as info:
        _compile_and_run(mode="lite")  # Inductor's, which mlc has no counterpart of
    assert all(repr(mode) in str(info.value) for mode in MODES)


def test_settings_come_from_the_environment():
    environ = {"MLC_CUDAGRAPHS": "0", "MLC_PIPELINE": "lower-aten", "MLC_FALLBACK": "1", "MLC_DUMP_DIR": "/d",
               "MLC_DEBUG": "1", "MLC_COST_TARGET": "/t.json", "MLC_FUSION": "model", "MLC_TUNE": "top-k"}
    assert Settings.from_environment(environ) == Settings(
        cudagraphs=False, pipeline="lower-aten", fallback=True, dump_dir="/d", debug=True, cost_target="/t.json",
        fusion="model", tune="top-k")
    assert Settings.from_environment({"MLC_CUDAGRAPHS": "", "MLC_FALLBACK": "0", "MLC_DEBUG": ""}) == Settings()
    assert Settings.from_environment({"MLC_CUDAGRAPHS": "1"}).cudagraphs is True


def test_a_mode_overrides_the_environment_and_an_option_both():
    environ = {"MLC_CUDAGRAPHS": "0", "MLC_DEBUG": "1"}
    assert compile_settings("reduce-overhead", environ=environ) == Settings(cudagraphs=True, debug=True)
    assert compile_settings("max-autotune", environ={}) == Settings(cudagraphs=True, max_autotune=True)
    assert compile_settings(options={"debug": False, "max-autotune": True}, environ=environ) == Settings(
        cudagraphs=False, max_autotune=True)
    assert compile_settings("default", {}, environ={}) == compile_settings(environ={}) == Settings()


@pytest.mark.parametrize("options, message", [
    ({"triton.cudagraphs": True}, "unknown option 'triton.cudagraphs'; mlc's options are 'cudagraphs', "),
    ({"debug": "yes"}, "option 'debug' takes bool, not str 'yes'"),
    ({"cudagraphs": 1}, "option 'cudagraphs' takes bool or None, not int 1"),
])
def test_unknown_options_and_values_are_refused(options, message):
    with pytest.raises(ValueError, match=message) as info:
        compile_settings(options=options, environ={})
    if "unknown" in message:
        assert all(repr(name) in str(info.value) for name in OPTION_TYPES)


def test_every_option_is_a_setting():
    assert set(OPTION_TYPES) == {f.name for f in Settings.__dataclass_fields__.values()}
    assert all(set(changes) <= set(OPTION_TYPES) for changes in MODES.values())
