"""emit-python on its own: index/number printing, op semantics run through Triton, determinism.

`kernel_ops.mlir` exercises what the e2e programs rarely reach: unordered float compares, NaN
maximum, floor division of negative integers, i1 sign extension and truncation, bfloat16
rounding, -0.0 and inf constants, loads and stores at constant indices, views with offsets and
extern calls with keyword arguments.
"""

from __future__ import annotations

import os
from pathlib import Path

import torch

if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"  # before anything imports triton

import pytest  # noqa: E402
import sympy  # noqa: E402

from mlc.codegen.emit_python import EmitError, emit_python, py_float  # noqa: E402
from mlc.codegen.py_expr import py_expr  # noqa: E402
from mlc.dialects.registry import make_context  # noqa: E402
from mlc.dialects.sym import CeilDiv, FloorDiv, ModularIndexing, symbol  # noqa: E402
from mlc.tools.diagnostics import Source, parse_source  # noqa: E402

HERE = Path(__file__).parent
DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
x0, x1, s0 = symbol("x0"), symbol("x1"), symbol("s0")


def parse(text: str, name: str = "test.mlir"):
    return parse_source(make_context(), Source(name, text))


@pytest.mark.parametrize(
    "expr, kernel, host",
    [
        (x0 + 64 * x1, "x0 + 64*x1", "x0 + 64*x1"),
        (x0 - 32, "x0 - 32", "x0 - 32"),
        (FloorDiv(x0, 64), "(x0 // 64)", "(x0 // 64)"),
        (ModularIndexing(x0, 1, 64), "(x0 % 64)", "(x0 % 64)"),
        (ModularIndexing(x0 + x1, 8, 4), "(((x0 + x1) // 8) % 4)", "(((x0 + x1) // 8) % 4)"),
        (CeilDiv(s0, 128), "((s0 + 127) // 128)", "((s0 + 127) // 128)"),
        (sympy.Min(x0, 7), "tl.minimum(7, x0)", "min(7, x0)"),
        (sympy.Max(x0, x1, 3), "tl.maximum(3, tl.maximum(x0, x1))", "max(3, x0, x1)"),
        (sympy.Integer(-4), "-4", "-4"),
    ],
)
def test_py_expr(expr, kernel, host):
    assert py_expr(expr, kernel=True) == kernel
    assert py_expr(expr, kernel=False) == host


def test_py_float():
    assert py_float(0.1) == "0.1" and float(py_float(0.1)) == 0.1
    assert py_float(1e-40) == "1e-40"
    assert py_float(float("inf")) == 'float("inf")'
    assert py_float(float("-inf")) == 'float("-inf")'
    assert py_float(float("nan")) == 'float("nan")'


def test_kernel_ops_run():
    from mlc.codegen.runtime import load_call

    source = emit_python(parse((HERE / "kernel_ops.mlir").read_text()))
    assert source == emit_python(parse((HERE / "kernel_ops.mlir").read_text()))  # deterministic
    a = torch.randn(100, device=DEVICE)
    b = torch.randn(100, device=DEVICE)
    b[:10] = a[:10]
    a[10], b[11], a[12], b[12] = float("nan"), float("nan"), float("nan"), float("nan")
    a[20] = 1.00390625  # halfway between two bfloat16 values: rounds to even (1.0)
    a[21] = 1.01171875  # halfway, rounds to even (1.015625)
    i = torch.randint(-50, 50, (100,), device=DEVICE, dtype=torch.int32)
    s = torch.tensor(0.25, device=DEVICE)
    out0, out1, out2, out3, out5, out6 = load_call(source)([a, b, i, s])

    ueq = (a == b) | a.isnan() | b.isnan()
    one = (a != b) & ~a.isnan() & ~b.isnan()
    x = ueq ^ one
    torch.testing.assert_close(out0, torch.maximum(a, b) + s, equal_nan=True)
    assert torch.equal(out1, x)
    expected2 = torch.div(i, 7, rounding_mode="floor") - x.int() + (i & 1)
    assert torch.equal(out2, expected2)
    finite = ~a.isnan()  # bit-exact rounding; NaN payloads may differ
    assert torch.equal(out3.view(torch.int16)[finite], a.to(torch.bfloat16).view(torch.int16)[finite])
    assert out3[~finite].isnan().all()
    sel = torch.where(x, torch.tensor(-0.0, device=DEVICE), torch.tensor(float("inf"), device=DEVICE))
    flat = torch.cat([s.view(1), sel])
    assert torch.equal(out5, flat[1:].view(10, 10))
    assert torch.equal(torch.signbit(out5), torch.signbit(flat[1:].view(10, 10)))  # -0.0 kept
    torch.testing.assert_close(out6, out5 + 2 * out5)


def test_unsupported_op_names_it():
    module = parse(
        "triton.kernel @k pointwise(%in_ptr0: !triton.ptr<i32>, %out_ptr0: !triton.ptr<i32>) xnumel 8 "
        "configs [#triton.config<XBLOCK = 8, num_warps = 1, num_stages = 1>] {\n"
        "  %0 = triton.load %in_ptr0[xindex] mask xmask : i32\n"
        '  %1 = math.ctlz %0 : i32 loc("clz_1")\n'
        "  triton.store %out_ptr0[xindex], %1 mask xmask : i32\n"
        "}\n"
        "triton.wrapper @call {\n  triton.return\n}\n"
    )
    with pytest.raises(EmitError, match=r'math.ctlz at loc\("clz_1"\): emit-python cannot print math.ctlz') as info:
        emit_python(module)
    assert info.value.op is not None and info.value.op.name == "math.ctlz"


def test_a_kernel_without_configs_is_an_error():
    """Block sizes are analysis/launch.py's decision, carried in the IR: the emitter invents none."""
    module = parse(
        "triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 8 {\n"
        "  %0 = triton.load %in_ptr0[xindex] mask xmask : f32\n"
        "  triton.store %out_ptr0[xindex], %0 mask xmask : f32\n"
        "}\n"
        "triton.wrapper @call {\n"
        '  triton.input "a" #buffer.layout<[8], [1], f32>\n'
        '  triton.alloc "b" #buffer.layout<[8], [1], f32>\n'
        "  triton.launch @k(@a, @b) xnumel 8\n"
        "  triton.return @b\n"
        "}\n"
    )
    with pytest.raises(EmitError, match="kernel @k has no launch configs"):
        emit_python(module)


def test_kernels_call_no_jit_function_of_triton_language() -> None:
    """`tl.zeros`, `tl.sum`, ... are @triton.jit functions of triton.language: compiled for the GPU
    where triton was imported before TRITON_INTERPRET was set (a model's code may import it
    first), and then not callable from an interpreted kernel. The emitted kernels (here every
    lit example of emit-python, a scatter's atomic add among them) call builtins only."""
    import re

    import triton.language as tl
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    jitted = {name for name, value in vars(tl).items() if isinstance(value, (JITFunction, InterpretedFunction))}
    assert {"zeros", "sum"} <= jitted
    for path in sorted((HERE.parent / "lit" / "codegen" / "emit-python").glob("*.mlir")):
        text = path.read_text()
        if "triton.kernel" not in text or "expected-error" in text:
            continue
        source = emit_python(parse(text.split("// -----")[0], path.name))
        called = set(re.findall(r"\btl\.(\w+)\(", source))
        assert not called & jitted, f"{path.name} calls {sorted(called & jitted)}"
