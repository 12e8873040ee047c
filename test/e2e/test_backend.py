"""The backend itself: the debug dump, determinism, errors, the opt-in fallback, the entry point."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import tempfile
from contextlib import redirect_stderr
from pathlib import Path

import pytest
import torch
import torch.fx.traceback as fx_traceback
import torch.nn.functional as F
from torch.fx.experimental.proxy_tensor import make_fx

import mlc
from mlc.frontend.decompositions import decomposition_table
from mlc.passes.registry import DEFAULT_PIPELINE
from mlc.tools.mlc_opt import run as mlc_opt

# 00-aten.mlir, 01-fold-addmm.mlir, ..., 10-online-softmax.mlir, module.py, fusion.txt, cudagraphs.txt
PASSES = DEFAULT_PIPELINE.split(",")
PASS_FILES = sorted(
    ["00-aten.mlir", "module.py", "fusion.txt", "fusion.dot", "memory.txt", "cost.txt", "cudagraphs.txt", "timing.txt"] + [f"{i:02d}-{name}.mlir" for i, name in enumerate(PASSES, start=1)]
)
TRITON_IR = f"{len(PASSES):02d}-{PASSES[-1]}.mlir"  # the last pass's: the IR the Python source comes from


def _graph_dirs(root: Path) -> list[Path]:
    return sorted((p for p in root.iterdir() if p.is_dir()), key=lambda p: int(p.name.split("_")[1]))


def test_dump_forward_and_backward(tmp_path, monkeypatch, make):
    """MLC_DUMP_DIR: one directory per graph (forward, then backward), the IR after every pass
    with locations, and the generated module, whose kernels are the ones that ran."""
    monkeypatch.setenv("MLC_DUMP_DIR", str(tmp_path))
    x = make(8, 64, grad=True)
    compiled = torch.compile(lambda x: F.gelu(x), backend="mlc", fullgraph=True, dynamic=False)
    y = compiled(x)
    y.sum().backward()
    torch.testing.assert_close(x.grad, torch.func.grad(lambda t: F.gelu(t).sum())(x.detach()))

    forward, backward = _graph_dirs(tmp_path)
    assert forward.name.endswith("_forward") and backward.name.endswith("_backward")
    assert int(backward.name.split("_")[1]) == int(forward.name.split("_")[1]) + 1
    for graph in (forward, backward):
        # fusion.svg as well where Graphviz's `dot` is installed
        assert sorted(p.name for p in graph.iterdir() if p.name != "fusion.svg") == PASS_FILES
        source = (graph / "module.py").read_text()
        assert "@triton.jit" in source and "def call(args):" in source
    fwd_source = (forward / "module.py").read_text()
    assert "def triton_poi_fused_gelu_0(" in fwd_source
    assert "launch(triton_poi_fused_gelu_0," in fwd_source  # launched by call(), not just defined
    assert "gelu_backward" in (backward / "module.py").read_text()
    timing = (forward / "timing.txt").read_text()
    for step in ("import", *PASSES, "emit-python", "first call (Triton compile, autotune, run)", "Total"):
        assert f")  {step}\n" in timing, step
    assert (forward / "fusion.dot").read_text().startswith('digraph "forward" {')
    aten_ir = (forward / "00-aten.mlir").read_text()
    assert 'loc("' in aten_ir and 'origin = "gelu"' in aten_ir
    assert "triton.kernel @triton_poi_fused_gelu_0" in (forward / TRITON_IR).read_text()
    # A call of one kernel is not replayed from a CUDA graph (on CPU: none is, there is no GPU).
    reason = "no GPU" if not torch.cuda.is_available() else "one Triton kernel: a replay would save no launch"
    assert (forward / "cudagraphs.txt").read_text().startswith(f"not replayed (off): {reason}")
    # The backward holds x (saved, freed after its read) and its one result: 2 KiB each.
    memory = (backward / "memory.txt").read_text()
    assert "the call's own allocations: 2048 " in memory and "inputs freed by the call counted: 6144 " in memory
    # The forward's one kernel reads x and writes gelu(x): 2 KiB each, the DRAM term its bound.
    cost = (forward / "cost.txt").read_text().splitlines()
    assert cost[1].split()[1:3] == ["dram", "0.004"] and cost[1].endswith("triton_poi_fused_gelu_0")
    # module.py: the launch with the same prediction
    launch = next(line for line in fwd_source.splitlines() if "launch(triton_poi_fused_gelu_0," in line)
    assert launch.endswith(f"  # predicted {cost[1].split()[0]} us (dram)"), launch


def test_the_dump_predicts_with_a_calibrated_target(tmp_path, monkeypatch, make):
    """MLC_COST_TARGET: cost.txt predicts on that calibration's target (a JSON of `Target`'s
    fields, as `bench/cost.py calibrate` writes); a file that is not one is named in cost.txt."""
    target = tmp_path / "target.json"
    target.write_text('{"dram_bytes_per_s": 1e9, "kernel_s": 1e-06, "source": "a slow test GPU"}')
    monkeypatch.setenv("MLC_DUMP_DIR", str(tmp_path / "dump"))
    monkeypatch.setenv("MLC_COST_TARGET", str(target))
    x = make(8, 64)
    torch.compile(lambda x: F.gelu(x), backend="mlc", fullgraph=True, dynamic=False)(x)
    (graph,) = _graph_dirs(tmp_path / "dump")
    cost = (graph / "cost.txt").read_text().splitlines()
    us, programs = float(cost[1].split()[0]), int(cost[1].split()[5])
    # 1 us + 4 KiB at 1 GB/s, drawn by `programs` of the H100's 132 SMs
    assert cost[0].startswith("predicted on a slow test GPU") and us == pytest.approx(1 + 4096 / 1e3 * 132 / programs, rel=1e-3)
    monkeypatch.setenv("MLC_COST_TARGET", str(tmp_path / "missing.json"))
    torch._dynamo.reset()
    torch.compile(lambda x: F.relu(x), backend="mlc", fullgraph=True, dynamic=False)(x)
    latest = _graph_dirs(tmp_path / "dump")[-1]
    assert (latest / "cost.txt").read_text().startswith("the cost model failed on this graph: FileNotFoundError")


def test_generated_kernels_ran(tmp_path, monkeypatch, make):
    """Break the generated kernel on purpose: the result must change, so it is what ran."""
    monkeypatch.setenv("MLC_DUMP_DIR", str(tmp_path))
    x = make(8, 64)
    gm = _trace(lambda x: F.gelu(x), x)
    good = mlc.compile_fx(gm, [x])
    source = good.source
    assert "tmp8 = tmp2 * tmp7" in source
    from mlc.codegen.runtime import load_call

    broken = load_call(source.replace("tmp8 = tmp2 * tmp7", "tmp8 = tmp2 * tmp7 + 1.0"))
    torch.testing.assert_close(broken([x])[0], good(x) + 1.0)


def _trace(fn, *args) -> torch.fx.GraphModule:
    with fx_traceback.preserve_node_meta():  # records original_aten, as AOTAutograd does
        return make_fx(fn, decomposition_table=decomposition_table())(*args)


def test_deterministic(tmp_path, monkeypatch, make):
    """The same graph compiled twice gives byte-identical IR dumps and module.py."""
    x, w = make(8, 64), make(64)
    fn = lambda x, w: (F.gelu(x * w) + x.flip(0), torch.cat([x, w.expand(8, 64)], 1).t())  # noqa: E731
    sources = []
    for run in ("a", "b"):
        monkeypatch.setenv("MLC_DUMP_DIR", str(tmp_path / run))
        compiled = mlc.compile_fx(_trace(fn, x, w), [x, w])
        torch.testing.assert_close(compiled(x, w), fn(x, w))
        sources.append(compiled.source)
    assert sources[0] == sources[1]
    (a,), (b,) = _graph_dirs(tmp_path / "a"), _graph_dirs(tmp_path / "b")
    for name in PASS_FILES:
        if name != "timing.txt":  # wall times: the one file that differs from run to run
            assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_compile_fx_on_dynamo_graph(make):
    """mlc.compile_fx also takes a graph of torch functions (it runs AOTAutograd first)."""
    x = make(8, 64)
    gm = torch.fx.symbolic_trace(lambda x: torch.sigmoid(x) * 2)
    compiled = mlc.compile_fx(gm, [x])
    torch.testing.assert_close(compiled(x), torch.sigmoid(x) * 2)


def test_unsupported_graph_is_a_clear_error(compile, device):
    """No silent eager fallback: the error names mlc, the graph and the offending node."""
    # A data-dependent output shape (complex tensors, the example before, now run as externs).
    x = torch.randn(8, 64, device=device)
    with pytest.raises(Exception) as info:
        compile(lambda x: x.masked_select(x > 0))(x)
    message = str(info.value)
    assert "mlc" in message and "masked_select" in message and "graph_" in message
    assert isinstance(_root(info.value), mlc.MlcCompileError)


def _root(e: BaseException) -> BaseException:
    """The MlcCompileError inside Dynamo's BackendCompilerFailed (or e itself)."""
    while not isinstance(e, mlc.MlcCompileError):
        inner = getattr(e, "inner_exception", None) or e.__cause__
        if inner is None:
            return e
        e = inner
    return e


def test_op_without_lowering(compile, make):
    """An aten op mlc has no kernel lowering for either runs as an extern call (right answer)
    or fails naming the op -- never a wrong answer."""
    x = make(8, 64)
    fn = lambda x: torch.cumsum(x, dim=1) * 2  # noqa: E731
    try:
        out = compile(fn)(x)
    except Exception as e:  # noqa: BLE001
        assert "cumsum" in str(e) and isinstance(_root(e), mlc.MlcCompileError), str(e)
    else:
        torch.testing.assert_close(out, fn(x), atol=1e-5, rtol=1e-5)


def test_fallback_opt_in(compile, monkeypatch, device):
    monkeypatch.setenv("MLC_FALLBACK", "1")
    x = torch.randn(8, 64, device=device)
    with pytest.warns(UserWarning, match="MLC_FALLBACK"):
        out = compile(lambda x: x.masked_select(x > 0) * 2)(x)
    torch.testing.assert_close(out, x.masked_select(x > 0) * 2)


def test_translate_dumped_ir(tmp_path, monkeypatch, make):
    """The dumped triton IR through mlc-translate gives the module the backend ran."""
    monkeypatch.setenv("MLC_DUMP_DIR", str(tmp_path))
    x = make(8, 64)
    compiled = mlc.compile_fx(_trace(lambda x: torch.tanh(x) + 1, x), [x])
    (graph,) = _graph_dirs(tmp_path)
    from mlc.tools.diagnostics import Source
    from mlc.tools.mlc_translate import translate

    ir = graph / TRITON_IR
    assert translate(Source(str(ir), ir.read_text())) == compiled.source


def test_entry_point_without_import(tmp_path):
    """`backend="mlc"` resolves through the installed entry point; the script never imports mlc."""
    script = tmp_path / "run.py"
    script.write_text(
        "import sys, torch\n"
        "f = torch.compile(lambda x: torch.relu(x) * 2, backend='mlc')\n"
        "x = torch.randn(4, 16, device='cuda' if torch.cuda.is_available() else 'cpu')\n"
        "torch.testing.assert_close(f(x), torch.relu(x) * 2)\n"
        "assert 'mlc.frontend.backend' in sys.modules\n"
        "print('ok')\n"
    )
    env = dict(os.environ)
    if not torch.cuda.is_available():
        env["TRITON_INTERPRET"] = "1"
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                            cwd=tmp_path, timeout=300)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-3000:]


def test_shape_change_respecializes(device):
    """Default torch.compile turns a changed size (and number) into a symbolic graph; mlc
    compiles one static graph per concrete signature instead of failing."""
    f = torch.compile(lambda x, a: (x * a + 1).view(-1) + x.shape[0], backend="mlc")
    for shape, a in [((4, 8), 2.0), ((6, 8), 3.0), ((5, 8), 4.0), ((6, 8), 3.0)]:
        x = torch.randn(shape, device=device)
        torch.testing.assert_close(f(x, a), (x * a + 1).view(-1) + shape[0])
    x = torch.randn(7, 8, device=device, requires_grad=True)
    f(x, 1.5).sum().backward()
    torch.testing.assert_close(x.grad, torch.full_like(x, 1.5))


def test_ops_with_effect_tokens(check, check_grad, make):
    """linalg ops check their results with `_linalg_check_errors`, an op with effects that
    AOTAutograd wraps in `with_effects` and threads a token through (passed as None at run
    time); the importer took only aten ops."""
    a = make(4, 4)
    spd = a @ a.T + 4 * torch.eye(4, device=a.device)
    check(torch.linalg.cholesky, spd)
    check_grad(torch.linalg.inv, spd.clone().requires_grad_(True), atol=1e-4, rtol=1e-4)


def test_constants_stay_real_when_compiled_under_fake_mode(monkeypatch):
    """AOTAutograd (torch 2.11) calls the compiler with its FakeTensorMode active; a constant
    moved to the device there became a FakeTensor, and the first call failed ("Please convert
    all Tensors to FakeTensors": T5's decoder start token on CUDA). The move to a device other
    than the constant's own ("meta" here) must dispatch outside that mode."""
    from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode

    import mlc.codegen.runtime as runtime
    from mlc.frontend import compiled_graph
    from mlc.frontend.backend import compile_graph

    gm = make_fx(lambda x: x + torch.tensor([1.0, 2.0]))(torch.zeros(2))
    assert any(n.op == "get_attr" for n in gm.graph.nodes)
    monkeypatch.setattr(runtime, "DEVICE", torch.device("meta"))
    seen = []  # the constants the compiled call appends to its inputs
    relaid = compiled_graph.relaid

    def spy(call, constants, *relayouts):
        seen.extend(constants)
        return relaid(call, constants, *relayouts)

    monkeypatch.setattr(compiled_graph, "relaid", spy)
    with FakeTensorMode(allow_non_fake_inputs=True):
        compile_graph(gm, [torch.zeros(2, device="meta")])
    assert seen and not any(isinstance(c, FakeTensor) for c in seen)


@pytest.mark.parametrize("shape", [(48, 64), (1, 33), (130, 257)])
def test_outputs_are_written_in_the_promised_layout(tmp_path, monkeypatch, make, shape):
    """`x.t() + y` is column-major in eager, and channels-last stays channels-last: the kernel
    writes the output in that layout (no copy after the call), forward and backward."""
    monkeypatch.setenv("MLC_DUMP_DIR", str(tmp_path))
    rows, cols = shape
    x, y = make(cols, rows, grad=True), make(rows, cols, grad=True)
    fn = lambda x, y: x.t() + y  # noqa: E731
    out = torch.compile(fn, backend="mlc", fullgraph=True, dynamic=False)(x, y)
    expected = fn(x, y)
    assert out.stride() == expected.stride()
    torch.testing.assert_close(out, expected)
    grad = make(rows, cols)
    out.backward(grad)
    gx, gy = torch.autograd.grad(fn(x, y), (x, y), grad)
    torch.testing.assert_close((x.grad, y.grad), (gx, gy))
    forward = (_graph_dirs(tmp_path)[0] / "module.py").read_text()
    if rows > 1:
        assert f"empty_on_device(({rows}, {cols}), (1, {rows})" in forward


def test_channels_last_output_is_written_in_place(tmp_path, monkeypatch, make):
    monkeypatch.setenv("MLC_DUMP_DIR", str(tmp_path))
    x = make(2, 8, 5, 6).to(memory_format=torch.channels_last)
    out = torch.compile(lambda x: torch.relu(x) * 2, backend="mlc", fullgraph=True, dynamic=False)(x)
    assert out.stride() == x.stride()
    torch.testing.assert_close(out, torch.relu(x) * 2)
    assert "empty_on_device((2, 8, 5, 6), (240, 1, 48, 8)" in (_graph_dirs(tmp_path)[0] / "module.py").read_text()


def test_strided_inputs_are_taken_as_they_come(tmp_path, monkeypatch, make):
    """Graph inputs are indexed with the strides they come with, with no copy into row-major
    on each call: attention's q, k, v split from one fused projection (strides [36, 1] for
    [B, 12] pieces) in the forward, and the same views saved for the backward."""
    monkeypatch.setenv("MLC_DUMP_DIR", str(tmp_path))
    qkv = make(4, 36, grad=True)

    def fn(q, k, v):
        return (q.sin() * k.cos() * v).sum(dim=1)

    out = torch.compile(fn, backend="mlc", fullgraph=True, dynamic=False)(*qkv.split(12, dim=1))
    torch.testing.assert_close(out, fn(*qkv.split(12, dim=1)))
    grad = make(4)
    out.backward(grad)
    torch.testing.assert_close(qkv.grad, torch.autograd.grad(fn(*qkv.split(12, dim=1)), qkv, grad)[0])
    for graph in _graph_dirs(tmp_path):
        module = (graph / "module.py").read_text()
        assert module.count("(4, 12), (36, 1))") == 3, module


def test_expanded_inputs_are_read_in_place(tmp_path, monkeypatch, make):
    """An input with a broadcast dim (stride 0) is indexed as it comes, not copied into
    row-major on each call: the forward's expanded argument, and the backward's saved
    `expand` of a buffer (BERT's token type ids: `ids.expand(batch, -1)`, read by the
    embedding's backward)."""
    monkeypatch.setenv("MLC_DUMP_DIR", str(tmp_path))
    ids = make(8).new_tensor([0, 1, 2, 0, 1, 2, 0, 1], dtype=torch.int64)[None, :]
    table, scale = make(3, 16, grad=True), make(8, grad=True)

    def fn(table, rows):
        return torch.nn.functional.embedding(ids.expand(4, -1), table).sum(dim=2) * rows

    out = torch.compile(fn, backend="mlc", fullgraph=True, dynamic=False)(table, scale.expand(4, 8))
    torch.testing.assert_close(out, fn(table, scale.expand(4, 8)))
    grad = make(4, 8)
    out.backward(grad)
    torch.testing.assert_close((table.grad, scale.grad),
                               torch.autograd.grad(fn(table, scale.expand(4, 8)), (table, scale), grad))
    forward, backward = ((graph / "module.py").read_text() for graph in _graph_dirs(tmp_path))
    assert "(4, 8), (0, 1))" in forward, forward
    assert "(4, 8), (0, 1))" in backward, backward


def test_the_backward_takes_transposed_views_as_they_come(tmp_path, monkeypatch, make):
    """A matmul's backward receives its operands transposed (strides [1, 8] for an [8, 4]
    view of a [4, 8] input) and hands them to the extern as they are."""
    monkeypatch.setenv("MLC_DUMP_DIR", str(tmp_path))
    x, w = make(4, 8, grad=True), make(8, 36, grad=True)

    def fn(x, w):
        return (x @ w).sin().sum(dim=1)

    out = torch.compile(fn, backend="mlc", fullgraph=True, dynamic=False)(x, w)
    grad = make(4)
    out.backward(grad)
    torch.testing.assert_close((x.grad, w.grad), torch.autograd.grad(fn(x, w), (x, w), grad))
    backward = (_graph_dirs(tmp_path)[1] / "module.py").read_text()
    assert "(8, 4), (1, 8))" in backward and "(36, 8), (1, 36))" in backward, backward
    assert "torch.mm(permute, " in backward, backward


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_a_saved_tensor_keeps_the_layout_mlc_made_it_in(monkeypatch, make, dtype):
    """A forward returns a tensor saved for its backward in the layout its kernels wrote it, not
    copied into the traced strides, and the backward reads it so: eager's attention keeps
    the keys transposed (a `clone` of `k.transpose(-2, -1)` for the bmm, saved transposed
    back, strides [128, 1, 8]); mlc reads k in place (BERT copied one per layer per step).
    The output the user sees keeps its promised strides. In bf16 the heads are cast to f32
    first (the math path of attention), stored row-major for the bmm's views."""
    from mlc.frontend import compiled_graph

    relaid: list[tuple[dict, dict]] = []  # (inputs, outputs) copied into other strides, per graph
    relayouts, output_relayouts = compiled_graph.input_relayouts, compiled_graph.output_relayouts
    monkeypatch.setattr(compiled_graph, "output_relayouts",
                        lambda *a, **k: relaid.append(({}, output_relayouts(*a, **k))) or relaid[-1][1])
    monkeypatch.setattr(compiled_graph, "input_relayouts",
                        lambda *a, **k: relaid[-1][0].update(relayouts(*a, **k)) or relaid[-1][0])
    batch, seq, heads, dim = 2, 8, 2, 16

    def split(t):
        return t.view(batch, seq, heads, dim).permute(0, 2, 1, 3)

    def fn(q, k, v):
        q, k, v = (split(t).float() for t in (q, k, v))
        scores = torch.matmul(q * 0.25, k.transpose(-2, -1)).softmax(-1)
        return torch.matmul(scores, v).transpose(1, 2)

    q, k, v = (make(batch, seq, heads * dim, dtype=dtype, grad=True) for _ in range(3))
    out = torch.compile(fn, backend="mlc", fullgraph=True, dynamic=False)(q, k, v)
    expected = fn(q, k, v)
    assert out.stride() == expected.stride()
    torch.testing.assert_close(out, expected)
    grad = make(*out.shape)
    out.backward(grad)
    torch.testing.assert_close((q.grad, k.grad, v.grad), torch.autograd.grad(expected, (q, k, v), grad))
    (forward_inputs, forward_outputs), (backward_inputs, _) = relaid  # a gradient may be copied
    assert forward_inputs == forward_outputs == backward_inputs == {}, relaid


def test_an_eager_fallback_backward_reads_tensors_saved_in_mlc_layouts(monkeypatch, make):
    """Where the backward falls back to eager (MLC_FALLBACK=1 and a backward mlc cannot
    compile), it receives the forward's saved tensors in the layouts mlc wrote them in (the
    keys not transposed back, as above), and its views of them still hold: the gradients
    match eager's."""
    from mlc.frontend import backend

    compile_graph = backend.compile_graph

    def forward_only(graph, inputs, kind, settings):
        if kind == "backward":
            raise mlc.MlcCompileError("a backward mlc is told it cannot compile")
        return compile_graph(graph, inputs, kind, settings)

    monkeypatch.setattr(backend, "compile_graph", forward_only)
    monkeypatch.setenv("MLC_FALLBACK", "1")
    batch, seq, heads, dim = 2, 8, 2, 16

    def fn(q, k, v):
        q, k, v = (t.view(batch, seq, heads, dim).permute(0, 2, 1, 3) for t in (q, k, v))
        scores = torch.matmul(q * 0.25, k.transpose(-2, -1)).softmax(-1)
        return torch.matmul(scores, v).transpose(1, 2).reshape(batch, seq, heads * dim)

    q, k, v = (make(batch, seq, heads * dim, grad=True) for _ in range(3))
    with pytest.warns(UserWarning, match="running this graph eagerly"):
        out = torch.compile(fn, backend="mlc", fullgraph=True, dynamic=False)(q, k, v)
        grad = make(*out.shape)
        out.backward(grad)
    expected = fn(q, k, v)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close((q.grad, k.grad, v.grad), torch.autograd.grad(expected, (q, k, v), grad))


def test_returned_slices_of_a_buffer_stay_views(tmp_path, monkeypatch, make):
    """Slices a training forward returns (`y[:, :5]`, `y[:, -1]`, a `chunk` half of an mm's
    result) have rows 12 apart in eager as in mlc: they are returned as views of the mm's
    buffer, with no kernel copying them into row-major and no copy back after the call."""
    monkeypatch.setenv("MLC_DUMP_DIR", str(tmp_path))
    x, w = make(4, 8, grad=True), make(8, 12)

    def fn(x, w):
        y = x @ w
        return y[:, :5], y[:, -1], y.chunk(2, -1)[1]

    out = torch.compile(fn, backend="mlc", fullgraph=True, dynamic=False)(x, w)
    expected = fn(x, w)
    for got, want in zip(out, expected):
        torch.testing.assert_close(got, want)
        assert got.stride() == want.stride()
    grads = [make(*o.shape) for o in out]
    torch.autograd.backward(out, grads)
    torch.testing.assert_close(x.grad, torch.autograd.grad(expected, x, grads)[0])
    forward = (_graph_dirs(tmp_path)[0] / "module.py").read_text()
    assert "launch(" not in forward, forward
    assert "reinterpret_tensor(buf0, (4, 5), (12, 1), 0)" in forward, forward


def test_ir_verified_at_the_end_still_names_the_pass_that_broke_it(tmp_path, monkeypatch, make, break_store_pass):
    """Without a dump the backend verifies only the pipeline's output; when that fails, the
    graph is compiled again verifying after each pass, and the error names the breaking pass,
    not the last one."""
    monkeypatch.setenv("MLC_PIPELINE", "lower-aten,inline,realize,test-break-store,split-reductions,cse")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with pytest.raises(Exception) as info:
        torch.compile(lambda x: torch.sin(x) + 1, backend="mlc", fullgraph=True, dynamic=False)(make(4, 8))
    assert "pass 'test-break-store' left IR that does not verify" in str(_root(info.value))


@pytest.mark.parametrize("dump", [True, False])
def test_a_failing_pass_leaves_a_reproducer(tmp_path, monkeypatch, make, dump):
    """A pass that fails inside torch.compile writes its input IR and the one mlc-opt command
    that fails the same way (here convert-to-triton, run without --realize before it)."""
    monkeypatch.setenv("MLC_PIPELINE", "lower-aten,inline,convert-to-triton")
    if dump:
        monkeypatch.setenv("MLC_DUMP_DIR", str(tmp_path))
    else:
        monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with pytest.raises(Exception) as info:
        torch.compile(lambda x: torch.sin(x) + 1, backend="mlc", fullgraph=True, dynamic=False)(make(4, 8))
    message = str(_root(info.value))
    assert "pass 'convert-to-triton' failed: convert-to-triton expects buffer IR" in message
    path, spec = re.search(r"reproduce with: mlc-opt (\S+) -p '([^']*)'", message).groups()
    assert spec == "convert-to-triton" and path.startswith(str(tmp_path))
    assert path.endswith("reproducer.mlir") if dump else "mlc-reproducers" in path
    err = io.StringIO()
    with redirect_stderr(err):
        assert mlc_opt([path, "-p", spec]) == 1
    assert re.match(rf"{re.escape(path)}:\d+:\d+: error: convert-to-triton expects buffer IR", err.getvalue())


def test_a_compiled_graph_frees_the_inputs_it_is_handed(make) -> None:
    """AOTAutograd hands a backward its saved tensors in one list (the boxed convention): the
    compiled graph empties it and its `call` drops each input after its last read, so a saved
    activation nobody else holds is freed during the backward, not after it."""
    import weakref

    from mlc.frontend.backend import compile_graph
    from mlc.frontend.compiled_graph import boxed

    x, w = make(16, 16), make(16, 16)
    gm = make_fx(lambda x, w: (torch.relu(x @ w) * 2,))(x, w)
    call = boxed(compile_graph(gm, [x, w]))
    assert call._boxed_call
    expected = torch.relu(x @ w) * 2
    saved = x.clone()
    alive = weakref.ref(saved)
    args = [saved, w]
    del saved
    (out,) = call(args)
    assert args == [] and alive() is None
    torch.testing.assert_close(out, expected)
