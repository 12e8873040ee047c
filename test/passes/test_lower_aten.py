"""`--lower-aten`: structure of the loops IR it builds, and numerics against torch.

Numerics: each case is aten IR written by hand. The reference runs the aten ops themselves
through torch.ops.aten (and checks that the IR's declared result types are torch's); the
lowered module runs through `loops_interp`, which evaluates every loops.pointwise body
elementwise. Both must agree in shape, dtype and values.
"""

from __future__ import annotations

import re

import pytest
import sympy
import torch
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType, ModuleOp, StringAttr, f32
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import PassFailedException

from mlc.dialects.loops import ExternOp, LoadOp, PointwiseOp
from mlc.dialects.registry import make_context
from mlc.dialects.sym import FloorDiv, ModularIndexing, symbol
from mlc.passes.lower_aten import LowerAtenPass
from mlc.passes.lowering.dtypes import Operand, result_type
from mlc.passes.lowering.indexing import reshape_index
from mlc.passes.registry import PASSES, parse_pipeline
from mlc.test.passes import loops_interp as interp

i0, i1, i2, i3 = (symbol(f"i{k}") for k in range(4))


# ---------------------------------------------------------------------------------------------
# Helpers


def module_text(args: str, body: str, returns: str) -> str:
    """A func.func over `args` ("a: 4x8xf32, b: 8xf32") returning the SSA names in `returns`."""
    params = ", ".join(f"%{n.strip()}: tensor<{t.strip()}>" for n, t in (a.split(":") for a in args.split(",")))
    names = [r.strip().lstrip("%") for r in returns.split(",")]
    types = [_result_type_of(body, n) for n in names]
    ret = ", ".join(f"%{n}" for n in names)
    return (
        f"func.func @f({params}) -> ({', '.join(types)}) {{\n{body}\n"
        f"  func.return {ret} : {', '.join(types)}\n}}\n"
    )


def _result_type_of(body: str, name: str) -> str:
    """The type of `name` ("x", or "x#2" for a result of `%x:3 = ...`) from its defining line."""
    base, _, nth = name.partition("#")
    for line in body.splitlines():
        lhs, _, rhs = line.partition(" = ")
        results = [r.strip().lstrip("%").split(":")[0] for r in lhs.split(",")]
        if base in results:
            types = re.findall(r"tensor<[^>]*>", rhs.rsplit("->", 1)[1])
            return types[int(nth) if nth else results.index(base)]
    raise KeyError(name)


def parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def lower(text: str, **options) -> ModuleOp:
    module = parse(text)
    LowerAtenPass(**options).apply(make_context(), module)
    module.verify()
    return module


def printed(module: ModuleOp) -> str:
    from io import StringIO

    out = StringIO()
    Printer(stream=out).print_op(module)
    return out.getvalue()


def random_inputs(module: ModuleOp, seed: int = 0) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    func = next(o for o in module.walk() if o.name == "func.func")
    out = []
    for arg in func.body.block.args:
        shape, dtype = list(arg.type.get_shape()), interp.torch_dtype(arg.type)
        if dtype.is_floating_point:
            out.append((torch.randn(shape, generator=gen) * 2).to(dtype))
        elif dtype == torch.bool:
            out.append(torch.rand(shape, generator=gen) > 0.5)
        elif dtype == torch.uint8:
            out.append(torch.randint(0, 256, shape, generator=gen, dtype=dtype))
        else:  # nonzero, so integer divisions are defined
            mag = torch.randint(1, 7, shape, generator=gen)
            sign = torch.where(torch.rand(shape, generator=gen) > 0.5, 1, -1)
            out.append((mag * sign).to(dtype))
    return out


def check_numerics(text: str, inputs: list[torch.Tensor] | None = None) -> ModuleOp:
    """Lower `text`, run both versions, compare; returns the lowered module."""
    reference_module = parse(text)
    inputs = inputs if inputs is not None else random_inputs(reference_module)
    expected = interp.run(reference_module, inputs)
    lowered = lower(text)
    got = interp.run(lowered, inputs)
    assert len(got) == len(expected)
    for e, g in zip(expected, got):
        assert g.dtype == e.dtype and g.shape == e.shape
        tol = {torch.float16: 1e-3, torch.bfloat16: 1e-2}.get(e.dtype)
        kw = {"rtol": tol, "atol": tol} if tol else {}
        torch.testing.assert_close(g, e, equal_nan=True, **kw)
    return lowered


def pointwises(module: ModuleOp) -> list[PointwiseOp]:
    return [o for o in module.walk() if isinstance(o, PointwiseOp)]


def body_ops(op: PointwiseOp) -> list[str]:
    return [o.name for o in op.body.block.ops]


def loads(op: PointwiseOp) -> list[list[sympy.Expr]]:
    return [o.index_exprs for o in op.body.block.ops if isinstance(o, LoadOp)]


# ---------------------------------------------------------------------------------------------
# Numerics: (args, body, returns)

F32, F16 = "4x8xf32", "4x8xf16"
T = "tensor<4x8xf32>"

NUMERIC_CASES: dict[str, tuple[str, str, str]] = {
    # -- promotion and broadcasting
    "add_broadcast_alpha": ("a: 4x8xf32, b: 8xf32", """
  %r = aten.add.Tensor %a, %b {alpha = 2 : i64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>""", "r"),
    "sub_size1_broadcast": ("a: 4x1xf32, b: 1x8xf32", """
  %r = aten.sub.Tensor %a, %b : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>""", "r"),
    "int_times_float_scalar": ("a: 4x8xi64", """
  %r = aten.mul.Scalar %a {other = 2.500000e+00 : f64} : (tensor<4x8xi64>) -> tensor<4x8xf32>""", "r"),
    "int32_plus_int_scalar_stays_int32": ("a: 4x8xi32", """
  %r = aten.add.Scalar %a {other = 7 : i64} : (tensor<4x8xi32>) -> tensor<4x8xi32>""", "r"),
    "f16_plus_float_scalar_stays_f16": ("a: 4x8xf16", """
  %r = aten.add.Scalar %a {other = 1.000000e+00 : f64} : (tensor<4x8xf16>) -> tensor<4x8xf16>""", "r"),
    "f16_times_f32": ("a: 4x8xf16, b: 8xf32", """
  %r = aten.mul.Tensor %a, %b : (tensor<4x8xf16>, tensor<8xf32>) -> tensor<4x8xf32>""", "r"),
    "f16_plus_bf16_is_f32": ("a: 4x8xf16, b: 4x8xbf16", """
  %r = aten.add.Tensor %a, %b : (tensor<4x8xf16>, tensor<4x8xbf16>) -> tensor<4x8xf32>""", "r"),
    "zero_dim_f64_is_weak": ("a: 4x8xf32, s: f64", """
  %r = aten.mul.Tensor %a, %s : (tensor<4x8xf32>, tensor<f64>) -> tensor<4x8xf32>""", "r"),
    "zero_dim_float_raises_int_category": ("a: 4x8xi32, s: f64", """
  %r = aten.mul.Tensor %a, %s : (tensor<4x8xi32>, tensor<f64>) -> tensor<4x8xf64>""", "r"),
    "uint8_plus_int8_is_int16": ("a: 4x8xui8, b: 4x8xi8", """
  %r = aten.add.Tensor %a, %b : (tensor<4x8xui8>, tensor<4x8xi8>) -> tensor<4x8xi16>""", "r"),
    "int_div_is_float": ("a: 4x8xi64, b: 8xi64", """
  %r = aten.div.Tensor %a, %b : (tensor<4x8xi64>, tensor<8xi64>) -> tensor<4x8xf32>""", "r"),
    "div_floor_int": ("a: 4x8xi64, b: 8xi64", """
  %r = aten.div.Tensor_mode %a, %b {rounding_mode = "floor"} : (tensor<4x8xi64>, tensor<8xi64>) -> tensor<4x8xi64>""", "r"),
    "div_trunc_int": ("a: 4x8xi32, b: 8xi32", """
  %r = aten.div.Tensor_mode %a, %b {rounding_mode = "trunc"} : (tensor<4x8xi32>, tensor<8xi32>) -> tensor<4x8xi32>""", "r"),
    "div_floor_float_scalar": ("a: 4x8xf32", """
  %r = aten.div.Scalar_mode %a {other = -3.000000e-01 : f64, rounding_mode = "floor"} : (tensor<4x8xf32>) -> tensor<4x8xf32>""", "r"),
    "floor_divide_uint8": ("a: 4x8xui8, b: 4x8xui8", """
  %b1 = aten.add.Scalar %b {other = 1 : i64} : (tensor<4x8xui8>) -> tensor<4x8xui8>
  %r = aten.floor_divide %a, %b1 : (tensor<4x8xui8>, tensor<4x8xui8>) -> tensor<4x8xui8>""", "r"),
    "remainder_fmod_int": ("a: 4x8xi64", """
  %r = aten.remainder.Scalar %a {other = -3 : i64} : (tensor<4x8xi64>) -> tensor<4x8xi64>
  %s = aten.fmod.Scalar %a {other = 3 : i64} : (tensor<4x8xi64>) -> tensor<4x8xi64>""", "r, s"),
    "rsub_alpha": ("a: 4x8xf32", """
  %r = aten.rsub.Scalar %a {other = 1 : i64, alpha = 3 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>""", "r"),
    "int8_wraps": ("a: 4x8xi8", """
  %r = aten.mul.Scalar %a {other = 100 : i64} : (tensor<4x8xi8>) -> tensor<4x8xi8>""", "r"),
    # -- comparisons, logic, bitwise
    "compare_promotes": ("a: 4x8xi32, b: 8xf32", """
  %lt = aten.lt.Tensor %a, %b : (tensor<4x8xi32>, tensor<8xf32>) -> tensor<4x8xi1>
  %ge = aten.ge.Scalar %b {other = 2.500000e-01 : f64} : (tensor<8xf32>) -> tensor<8xi1>
  %ne = aten.ne.Scalar %a {other = 3 : i64} : (tensor<4x8xi32>) -> tensor<4x8xi1>""", "lt, ge, ne"),
    "logical_ops_mixed": ("a: 4x8xi64, b: 4x8xf32, c: 4x8xi1", """
  %x = aten.logical_xor %a, %b : (tensor<4x8xi64>, tensor<4x8xf32>) -> tensor<4x8xi1>
  %y = aten.logical_and %x, %c : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
  %z = aten.logical_or %y, %a : (tensor<4x8xi1>, tensor<4x8xi64>) -> tensor<4x8xi1>
  %n = aten.logical_not %b : (tensor<4x8xf32>) -> tensor<4x8xi1>""", "x, y, z, n"),
    "bitwise_int_and_bool": ("a: 4x8xi32, b: 4x8xi32, c: 4x8xi1", """
  %x = aten.bitwise_and.Tensor %a, %b : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi32>
  %y = aten.bitwise_xor.Scalar %x {other = 5 : i64} : (tensor<4x8xi32>) -> tensor<4x8xi32>
  %z = aten.bitwise_not %y : (tensor<4x8xi32>) -> tensor<4x8xi32>
  %w = aten.bitwise_not %c : (tensor<4x8xi1>) -> tensor<4x8xi1>
  %v = aten.bitwise_or.Tensor %w, %c : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>""", "z, w, v"),
    "bool_add_mul": ("a: 4x8xi1, b: 4x8xi1", """
  %x = aten.add.Tensor %a, %b : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
  %y = aten.mul.Tensor %a, %b : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>""", "x, y"),
    "where_promotes_branches": ("c: 4x8xi1, a: 4x8xi64, s: f32", """
  %r = aten.where.self %c, %a, %s : (tensor<4x8xi1>, tensor<4x8xi64>, tensor<f32>) -> tensor<4x8xf32>""", "r"),
    "maximum_minimum": ("a: 4x8xf32, b: 8xf32", """
  %x = aten.maximum %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %y = aten.minimum %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>""", "x, y"),
    "clamp_variants": ("a: 4x8xf32, lo: 8xf32", """
  %x = aten.clamp %a {min = -5.000000e-01 : f64, max = 5.000000e-01 : f64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = aten.clamp_min %a {min = 0 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %z = aten.clamp_max %a {max = 1.000000e-01 : f64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %w = aten.clamp.Tensor %a, %lo, none : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>""", "x, y, z, w"),
    "clamp_int_by_float_is_float": ("a: 4x8xi64", """
  %r = aten.clamp %a {min = 5.000000e-01 : f64} : (tensor<4x8xi64>) -> tensor<4x8xf32>""", "r"),
    "masked_fill": ("a: 4x8xf32, m: 4x8xi1, v: f32", """
  %x = aten.masked_fill.Scalar %a, %m {value = -1 : i64} : (tensor<4x8xf32>, tensor<4x8xi1>) -> tensor<4x8xf32>
  %y = aten.masked_fill.Tensor %a, %m, %v : (tensor<4x8xf32>, tensor<4x8xi1>, tensor<f32>) -> tensor<4x8xf32>""", "x, y"),
    # -- unary float functions and activations
    "float_functions": ("a: 4x8xf32", """
  %p = aten.abs %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %e = aten.exp %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %e2 = aten.exp2 %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %em = aten.expm1 %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %l = aten.log %p : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %l1 = aten.log1p %p : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %l2 = aten.log2 %p : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %sq = aten.sqrt %p : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %rs = aten.rsqrt %p : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %rc = aten.reciprocal %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %sn = aten.sin %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %cs = aten.cos %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %tn = aten.tan %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %th = aten.tanh %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %sg = aten.sigmoid %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %er = aten.erf %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %ng = aten.neg %a : (tensor<4x8xf32>) -> tensor<4x8xf32>""", "e, e2, em, l, l1, l2, sq, rs, rc, sn, cs, tn, th, sg, er, ng"),
    "int_inputs_to_float_functions": ("a: 4x8xi32", """
  %e = aten.exp %a : (tensor<4x8xi32>) -> tensor<4x8xf32>
  %s = aten.sigmoid %a : (tensor<4x8xi32>) -> tensor<4x8xf32>
  %r = aten.reciprocal %a : (tensor<4x8xi32>) -> tensor<4x8xf32>""", "e, s, r"),
    "rounding_and_sign": ("a: 4x8xf32, b: 4x8xi64", """
  %f = aten.floor %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %c = aten.ceil %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = aten.round %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = aten.trunc %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = aten.sign %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %si = aten.sign %b : (tensor<4x8xi64>) -> tensor<4x8xi64>
  %fi = aten.floor %b : (tensor<4x8xi64>) -> tensor<4x8xi64>
  %ai = aten.abs %b : (tensor<4x8xi64>) -> tensor<4x8xi64>
  %ni = aten.neg %b : (tensor<4x8xi64>) -> tensor<4x8xi64>""", "f, c, r, t, s, si, fi, ai, ni"),
    "activations": ("a: 4x8xf32", """
  %r = aten.relu %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %g = aten.gelu %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %gt = aten.gelu %a {approximate = "tanh"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = aten.silu %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %e = aten.elu %a {alpha = 1.500000e+00 : f64, scale = 2 : i64, input_scale = 5.000000e-01 : f64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %l = aten.leaky_relu %a {negative_slope = 2.000000e-01 : f64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %h = aten.hardtanh %a {min_val = -5.000000e-01 : f64, max_val = 2 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %sp = aten.softplus %a {beta = 2 : i64, threshold = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %hs = aten.hardsigmoid %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %hw = aten.hardswish %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = aten.mish %a : (tensor<4x8xf32>) -> tensor<4x8xf32>""", "r, g, gt, s, e, l, h, sp, hs, hw, m"),
    "relu_int": ("a: 4x8xi32", """
  %r = aten.relu %a : (tensor<4x8xi32>) -> tensor<4x8xi32>""", "r"),
    "backwards": ("g: 4x8xf32, a: 4x8xf32", """
  %t = aten.threshold_backward %g, %a {threshold = 0 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = aten.sigmoid_backward %g, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %h = aten.tanh_backward %g, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>""", "t, s, h"),
    "pow_special_cases": ("a: 4x8xf32, b: 8xf32", """
  %p = aten.abs %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %sq = aten.pow.Tensor_Scalar %a {exponent = 2 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %h = aten.pow.Tensor_Scalar %p {exponent = 5.000000e-01 : f64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %n = aten.pow.Tensor_Scalar %a {exponent = -3.000000e+00 : f64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %z = aten.pow.Tensor_Scalar %a {exponent = 0 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %f = aten.pow.Tensor_Scalar %p {exponent = 3.300000e+00 : f64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = aten.pow.Tensor_Tensor %p, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %s2 = aten.pow.Scalar %b {self = 2 : i64} : (tensor<8xf32>) -> tensor<8xf32>
  %s3 = aten.pow.Scalar %b {self = 3.000000e+00 : f64} : (tensor<8xf32>) -> tensor<8xf32>""", "sq, h, n, z, f, t, s2, s3"),
    "pow_int": ("a: 4x8xi64", """
  %c = aten.pow.Tensor_Scalar %a {exponent = 3 : i64} : (tensor<4x8xi64>) -> tensor<4x8xi64>
  %f = aten.pow.Tensor_Scalar %a {exponent = 2.000000e+00 : f64} : (tensor<4x8xi64>) -> tensor<4x8xf32>""", "c, f"),
    "isnan_isinf": ("a: 4x8xf32, b: 4x8xi32", """
  %l = aten.log %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %n = aten.isnan %l : (tensor<4x8xf32>) -> tensor<4x8xi1>
  %z = aten.div.Scalar %a {other = 0 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %i = aten.isinf %z : (tensor<4x8xf32>) -> tensor<4x8xi1>
  %k = aten.isnan %b : (tensor<4x8xi32>) -> tensor<4x8xi1>""", "n, i, k"),
    "f16_gelu_chain": ("a: 4x8xf16", """
  %0 = aten.mul.Scalar %a {other = 5.000000e-01 : f64} : (tensor<4x8xf16>) -> tensor<4x8xf16>
  %1 = aten.mul.Scalar %a {other = 0.70710678118654757 : f64} : (tensor<4x8xf16>) -> tensor<4x8xf16>
  %2 = aten.erf %1 : (tensor<4x8xf16>) -> tensor<4x8xf16>
  %3 = aten.add.Scalar %2 {other = 1 : i64} : (tensor<4x8xf16>) -> tensor<4x8xf16>
  %4 = aten.mul.Tensor %0, %3 : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>""", "4"),
    "bf16_exp_sigmoid": ("a: 4x8xbf16", """
  %e = aten.exp %a : (tensor<4x8xbf16>) -> tensor<4x8xbf16>
  %s = aten.sigmoid %a : (tensor<4x8xbf16>) -> tensor<4x8xbf16>""", "e, s"),
    # -- casts, copies, creation
    "to_copy_casts": ("a: 4x8xf32, b: 4x8xi64, u: 4x8xui8", """
  %s = aten.mul.Scalar %a {other = 100 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %i = aten._to_copy %s {dtype = i32} : (tensor<4x8xf32>) -> tensor<4x8xi32>
  %i8 = aten._to_copy %s {dtype = i8} : (tensor<4x8xf32>) -> tensor<4x8xi8>
  %h = aten._to_copy %a {dtype = f16} : (tensor<4x8xf32>) -> tensor<4x8xf16>
  %bf = aten._to_copy %h {dtype = bf16} : (tensor<4x8xf16>) -> tensor<4x8xbf16>
  %d = aten._to_copy %b {dtype = f64} : (tensor<4x8xi64>) -> tensor<4x8xf64>
  %bo = aten._to_copy %a {dtype = i1} : (tensor<4x8xf32>) -> tensor<4x8xi1>
  %bi = aten._to_copy %b {dtype = i1} : (tensor<4x8xi64>) -> tensor<4x8xi1>
  %bf32 = aten._to_copy %bi {dtype = f32} : (tensor<4x8xi1>) -> tensor<4x8xf32>
  %uf = aten._to_copy %u {dtype = f32} : (tensor<4x8xui8>) -> tensor<4x8xf32>
  %ui = aten._to_copy %u {dtype = i64} : (tensor<4x8xui8>) -> tensor<4x8xi64>
  %iu = aten._to_copy %b {dtype = ui8} : (tensor<4x8xi64>) -> tensor<4x8xui8>
  %c = aten.clone %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %al = aten.alias %a : (tensor<4x8xf32>) -> tensor<4x8xf32>""", "i, i8, h, bf, d, bo, bi, bf32, uf, ui, iu, c, al"),
    "creation": ("a: 4x8xf32", """
  %f = aten.full {size = array<i64: 2, 3>, fill_value = 2.500000e+00 : f64, dtype = f16} : () -> tensor<2x3xf16>
  %fl = aten.full_like %a {fill_value = 7 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %z = aten.zeros_like %a {dtype = i32} : (tensor<4x8xf32>) -> tensor<4x8xi32>
  %o = aten.ones_like %a {dtype = i1} : (tensor<4x8xf32>) -> tensor<4x8xi1>
  %s = aten.scalar_tensor {s = 3.000000e+00 : f64} : () -> tensor<f32>
  %fi = aten.fill.Scalar %a {value = -2 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %r0 = aten.arange {end = 8 : i64} : () -> tensor<8xi64>
  %r1 = aten.arange.start {start = 2 : i64, end = 10 : i64, dtype = f32} : () -> tensor<8xf32>
  %r2 = aten.arange.start_step {start = 1 : i64, end = 17 : i64, step = 2 : i64, dtype = i32} : () -> tensor<8xi32>
  %r3 = aten.arange.start_step {start = 5.000000e-01 : f64, end = 4.500000e+00 : f64, step = 5.000000e-01 : f64} : () -> tensor<8xf32>""", "f, fl, z, o, s, fi, r0, r1, r2, r3"),
    # -- views
    "views": ("a: 4x8xf32, v: 8xf32", """
  %p = aten.permute %a {dims = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %r = aten.reshape %p {shape = array<i64: 2, 16>} : (tensor<8x4xf32>) -> tensor<2x16xf32>
  %v1 = aten.view %a {size = array<i64: 4, 2, 4>} : (tensor<4x8xf32>) -> tensor<4x2x4xf32>
  %v2 = aten.view %v1 {size = array<i64: 32>} : (tensor<4x2x4xf32>) -> tensor<32xf32>
  %v3 = aten._unsafe_view %v2 {size = array<i64: 8, 4>} : (tensor<32xf32>) -> tensor<8x4xf32>
  %t = aten.t %a : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %tr = aten.transpose.int %v1 {dim0 = 0 : i64, dim1 = -1 : i64} : (tensor<4x2x4xf32>) -> tensor<4x2x4xf32>
  %e = aten.expand %v {size = array<i64: 3, -1>} : (tensor<8xf32>) -> tensor<3x8xf32>
  %u = aten.unsqueeze %v {dim = -1 : i64} : (tensor<8xf32>) -> tensor<8x1xf32>
  %eu = aten.expand %u {size = array<i64: 8, 5>} : (tensor<8x1xf32>) -> tensor<8x5xf32>
  %sq = aten.squeeze.dim %u {dim = 1 : i64} : (tensor<8x1xf32>) -> tensor<8xf32>
  %sq2 = aten.squeeze %u : (tensor<8x1xf32>) -> tensor<8xf32>
  %fl = aten.flip %a {dims = array<i64: 0, -1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>""", "p, r, v3, t, tr, e, eu, sq, sq2, fl"),
    "slices_and_selects": ("a: 4x8xf32", """
  %s1 = aten.slice.Tensor %a {dim = 1 : i64, start = 1 : i64, end = -1 : i64, step = 3 : i64} : (tensor<4x8xf32>) -> tensor<4x2xf32>
  %s2 = aten.slice.Tensor %a {dim = 0 : i64, start = -3 : i64, end = 9223372036854775807 : i64} : (tensor<4x8xf32>) -> tensor<3x8xf32>
  %s3 = aten.slice.Tensor %a {dim = -1 : i64, start = -100 : i64, end = 2 : i64} : (tensor<4x8xf32>) -> tensor<4x2xf32>
  %c1 = aten.select.int %a {dim = 1 : i64, index = -2 : i64} : (tensor<4x8xf32>) -> tensor<4xf32>
  %c0 = aten.select.int %a {dim = 0 : i64, index = 1 : i64} : (tensor<4x8xf32>) -> tensor<8xf32>""", "s1, s2, s3, c1, c0"),
    "cat_and_pad": ("a: 4x8xf32, b: 4x3xf32, h: 2x8xf16", """
  %c = aten.cat [%a, %b, %a] {dim = 1 : i64} : (tensor<4x8xf32>, tensor<4x3xf32>, tensor<4x8xf32>) -> tensor<4x19xf32>
  %c0 = aten.cat [%a, %h] : (tensor<4x8xf32>, tensor<2x8xf16>) -> tensor<6x8xf32>
  %ch = aten.cat [%h, %h] {dim = -1 : i64} : (tensor<2x8xf16>, tensor<2x8xf16>) -> tensor<2x16xf16>
  %p = aten.constant_pad_nd %a {pad = array<i64: 1, 2, -1, 1>, value = 3.000000e+00 : f64} : (tensor<4x8xf32>) -> tensor<4x11xf32>
  %ph = aten.constant_pad_nd %h {pad = array<i64: 2, 0>} : (tensor<2x8xf16>) -> tensor<2x10xf16>
  %crop = aten.constant_pad_nd %a {pad = array<i64: -1, -2>} : (tensor<4x8xf32>) -> tensor<4x5xf32>""", "c, c0, ch, p, ph, crop"),
    "splits": ("a: 4x8xf32", """
  %x:3 = aten.split.Tensor %a {split_size = 3 : i64, dim = 1 : i64} : (tensor<4x8xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x2xf32>)
  %y:2 = aten.split_with_sizes %a {split_sizes = array<i64: 1, 3>} : (tensor<4x8xf32>) -> (tensor<1x8xf32>, tensor<3x8xf32>)
  %z:4 = aten.unbind.int %a : (tensor<4x8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)""", "x#2, y#1, z#3"),
    "externs_mixed_in": ("a: 4x8xf32, w: 8x3xf32, bias: 3xf32", """
  %m = aten.mm %a, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %am = aten.addmm %bias, %a, %w {beta = 2 : i64, alpha = 5.000000e-01 : f64} : (tensor<3xf32>, tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %s = aten.sum.dim_IntList %a {dim = array<i64: 1>, keepdim = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %d = aten.div.Tensor %a, %s : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %sm = aten._softmax %a {dim = -1 : i64, half_to_float = false} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %ff = aten.call "remainder.Tensor" (%a, %d) {args = [#aten.tensor, #aten.tensor]} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>""", "m, am, d, sm, ff"),
    "generic_call_with_scalar_in_tensor_slot": ("a: 4x8xf32", """
  %r = aten.call "mul.Tensor" (%a) {args = [#aten.tensor, 5.000000e-01 : f64]} : (tensor<4x8xf32>) -> tensor<4x8xf32>""", "r"),
}


@pytest.mark.parametrize("name", sorted(NUMERIC_CASES))
def test_numerics_match_torch(name: str) -> None:
    args, body, returns = NUMERIC_CASES[name]
    text = module_text(args, body, returns)
    check_numerics(text)


# ---------------------------------------------------------------------------------------------
# Type promotion against torch.result_type

PROMOTION_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


def _example(dtype: str, rank: int | None):
    if rank is None:  # a Python scalar of the dtype's category
        return {"bool": True}.get(dtype, 2.5 if "float" in dtype else 3)
    return torch.zeros([2] * rank, dtype=getattr(torch, dtype))


@pytest.mark.parametrize("rank_b", [1, 0, None], ids=["tensor", "zero_dim", "scalar"])
@pytest.mark.parametrize("rank_a", [1, 0], ids=["tensor", "zero_dim"])
def test_result_type_matches_torch(rank_a: int, rank_b: int | None) -> None:
    for a in PROMOTION_DTYPES:
        for b in PROMOTION_DTYPES:
            if rank_b is None and b not in ("bool", "int64", "float32"):
                continue  # scalars come in three kinds only
            expected = torch.result_type(_example(a, rank_a), _example(b, rank_b))
            ops = [Operand(a, rank_a), Operand(b, rank_b) if rank_b is not None else Operand.of_scalar(_example(b, None))]
            assert result_type(ops) == str(expected).removeprefix("torch."), (a, rank_a, b, rank_b)


# ---------------------------------------------------------------------------------------------
# Index maps


def test_reshape_same_shape_is_identity() -> None:
    assert reshape_index([i0, i1], [8, 64], [8, 64]) == [i0, i1]


def test_reshape_merge_and_split_are_clean() -> None:
    # [8, 64] -> [512]: the flat index splits back with one ModularIndexing and one FloorDiv.
    assert reshape_index([i0], [8, 64], [512]) == [FloorDiv(i0, 64), ModularIndexing(i0, 1, 64)]
    # [512] -> [8, 64]: two output dims merge linearly.
    assert reshape_index([i0, i1], [512], [8, 64]) == [i1 + 64 * i0]
    # [4, 6, 5] -> [24, 5]: a split next to a pass-through dim.
    assert reshape_index([i0, i1], [4, 6, 5], [24, 5]) == [FloorDiv(i0, 6), ModularIndexing(i0, 1, 6), i1]


def test_reshape_size_one_dims_read_zero() -> None:
    assert reshape_index([i0, i1, i2], [8, 64], [8, 1, 64]) == [i0, i2]
    assert reshape_index([i0, i1], [8, 1, 64], [8, 64]) == [i0, 0, i1]
    assert reshape_index([i0], [4, 1, 16], [64]) == [FloorDiv(i0, 16), 0, ModularIndexing(i0, 1, 16)]


def test_reshape_misaligned_groups_flatten_and_simplify() -> None:
    # [8, 4] -> [2, 16] shares no group boundary: flatten, then pull whole multiples out.
    assert reshape_index([i0, i1], [8, 4], [2, 16]) == [4 * i0 + FloorDiv(i1, 4), ModularIndexing(i1, 1, 4)]


# ---------------------------------------------------------------------------------------------
# Structure

GELU = """func.func @gelu(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %0 = aten.mul.Scalar %x {other = 5.000000e-01 : f64} attributes {origin = "gelu"} : (tensor<8x64xf32>) -> tensor<8x64xf32> loc("mul")
  %1 = aten.mul.Scalar %x {other = 0.70710678118654757 : f64} attributes {origin = "gelu"} : (tensor<8x64xf32>) -> tensor<8x64xf32> loc("mul_1")
  %2 = aten.erf %1 attributes {origin = "gelu"} : (tensor<8x64xf32>) -> tensor<8x64xf32> loc("erf")
  %3 = aten.add.Scalar %2 {other = 1 : i64} attributes {origin = "gelu"} : (tensor<8x64xf32>) -> tensor<8x64xf32> loc("add")
  %4 = aten.mul.Tensor %0, %3 attributes {origin = "gelu"} : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32> loc("mul_2")
  func.return %4 : tensor<8x64xf32>
}
"""


def test_pass_is_registered_with_its_option() -> None:
    assert PASSES["lower-aten"]() is LowerAtenPass
    (p,) = parse_pipeline("lower-aten{fallback=gelu,cat}").passes
    assert p == LowerAtenPass(fallback=("gelu", "cat"))


def test_gelu_one_pointwise_per_op_with_origins_and_locations() -> None:
    module = check_numerics(GELU)
    ops = pointwises(module)
    assert [body_ops(p) for p in ops] == [
        ["loops.load", "arith.constant", "arith.mulf", "loops.yield"],
        ["loops.load", "arith.constant", "arith.mulf", "loops.yield"],
        ["loops.load", "math.erf", "loops.yield"],
        ["loops.load", "arith.constant", "arith.addf", "loops.yield"],
        ["loops.load", "loops.load", "arith.mulf", "loops.yield"],
    ]
    assert all(p.origin_names == ["gelu"] for p in ops)
    assert [p.location.desc.data for p in ops] == ["mul", "mul_1", "erf", "add", "mul_2"]  # type: ignore[attr-defined]
    # The last op loads its two producers (not inlined) at identity indices.
    assert ops[4].body.block.first_op.source is ops[0].result  # type: ignore[union-attr]
    assert loads(ops[4]) == [[i0, i1], [i0, i1]]
    assert not any(o.name.startswith("aten.") for o in module.walk())


def test_origin_defaults_to_packet() -> None:
    text = module_text("a: 4x8xf32", """
  %p = aten.permute %a {dims = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %m = aten.mul.Tensor %p, %p : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>""", "m")
    assert [p.origin_names for p in pointwises(lower(text))] == [["permute"], ["mul"]]


def test_broadcast_loads_index_zero_and_skip_leading_dims() -> None:
    text = module_text("a: 2x1x8xf32, b: 3x1xf32", """
  %r = aten.add.Tensor %a, %b : (tensor<2x1x8xf32>, tensor<3x1xf32>) -> tensor<2x3x8xf32>""", "r")
    (op,) = pointwises(check_numerics(text))
    assert loads(op) == [[i0, 0, i2], [i1, 0]]


def test_f16_loads_widen_and_result_narrows_once() -> None:
    text = module_text("a: 4x8xf16, b: 8xf16", """
  %r = aten.add.Tensor %a, %b : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>""", "r")
    (op,) = pointwises(check_numerics(text))
    assert body_ops(op) == ["loops.load", "arith.extf", "loops.load", "arith.extf", "arith.addf", "arith.truncf", "loops.yield"]
    add = next(o for o in op.body.block.ops if isinstance(o, arith.AddfOp))
    assert add.result.type == f32


def test_int_and_bool_math_use_integer_ops() -> None:
    text = module_text("a: 4x8xi32, c: 4x8xi1", """
  %m = aten.mul.Tensor %a, %a : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi32>
  %d = aten.div.Tensor_mode %a, %a {rounding_mode = "floor"} : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi32>
  %b = aten.mul.Tensor %c, %c : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
  %t = aten.div.Tensor %a, %a : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xf32>""", "m, d, b, t")
    m, d, b, t = pointwises(check_numerics(text))
    assert "arith.muli" in body_ops(m)
    assert "arith.floordivsi" in body_ops(d)
    assert "arith.andi" in body_ops(b)
    assert body_ops(t) == ["loops.load", "arith.sitofp", "loops.load", "arith.sitofp", "arith.divf", "loops.yield"]


def test_comparisons_yield_i1() -> None:
    text = module_text("a: 4x8xf32", """
  %r = aten.le.Scalar %a {other = 0 : i64} : (tensor<4x8xf32>) -> tensor<4x8xi1>""", "r")
    (op,) = pointwises(lower(text))
    assert body_ops(op) == ["loops.load", "arith.constant", "arith.cmpf", "loops.yield"]
    assert op.yield_op().values[0].type == IntegerType(1)


@pytest.mark.parametrize(
    "view,shape,expected",
    [
        ("aten.view %a {size = array<i64: 4, 8>}", "4x8", [[i0, i1]]),
        ("aten.view %a {size = array<i64: 32>}", "32", [[FloorDiv(i0, 8), ModularIndexing(i0, 1, 8)]]),
        ("aten.permute %a {dims = array<i64: 1, 0>}", "8x4", [[i1, i0]]),
        ("aten.transpose.int %a {dim0 = -1 : i64, dim1 = 0 : i64}", "8x4", [[i1, i0]]),
        ("aten.unsqueeze %a {dim = 1 : i64}", "4x1x8", [[i0, i2]]),
        ("aten.slice.Tensor %a {dim = 1 : i64, start = -6 : i64, end = 100 : i64, step = 2 : i64}", "4x3", [[i0, 2 + 2 * i1]]),
        ("aten.select.int %a {dim = 1 : i64, index = -1 : i64}", "4", [[i0, 7]]),
        ("aten.flip %a {dims = array<i64: 1>}", "4x8", [[i0, 7 - i1]]),
        ("aten.expand %a {size = array<i64: 2, 4, 8>}", "2x4x8", [[i1, i2]]),
    ],
)
def test_view_is_one_load_at_the_reindexed_position(view: str, shape: str, expected: list) -> None:
    text = module_text("a: 4x8xf32", f"  %r = {view} : (tensor<4x8xf32>) -> tensor<{shape}xf32>", "r")
    (op,) = pointwises(check_numerics(text))
    assert body_ops(op) == ["loops.load", "loops.yield"]
    assert loads(op) == expected


def test_f16_view_does_not_widen() -> None:
    text = module_text("a: 4x8xf16", "  %r = aten.t %a : (tensor<4x8xf16>) -> tensor<8x4xf16>", "r")
    (op,) = pointwises(lower(text))
    assert body_ops(op) == ["loops.load", "loops.yield"]


def test_cat_is_one_pointwise_of_masked_loads() -> None:
    text = module_text("a: 8x32xf32, b: 8x32xf32", """
  %r = aten.cat [%a, %b] {dim = 1 : i64} : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x64xf32>""", "r")
    (op,) = pointwises(check_numerics(text))
    load_ops = [o for o in op.body.block.ops if isinstance(o, LoadOp)]
    assert [o.index_exprs for o in load_ops] == [[i0, i1], [i0, i1 - 32]]
    assert all(o.mask is not None for o in load_ops)
    assert body_ops(op).count("arith.select") == 1 and "loops.index" in body_ops(op)


def test_constant_pad_selects_the_pad_value() -> None:
    text = module_text("a: 4x8xf32", """
  %r = aten.constant_pad_nd %a {pad = array<i64: 2, 0>, value = -1 : i64} : (tensor<4x8xf32>) -> tensor<4x10xf32>""", "r")
    (op,) = pointwises(check_numerics(text))
    (load,) = [o for o in op.body.block.ops if isinstance(o, LoadOp)]
    assert load.index_exprs == [i0, i1 - 2] and load.mask is not None
    assert body_ops(op)[-2] == "arith.select"


def test_split_gives_one_view_per_piece() -> None:
    text = module_text("a: 4x8xf32", """
  %x:3 = aten.split.Tensor %a {split_size = 3 : i64, dim = 1 : i64} : (tensor<4x8xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x2xf32>)""", "x#0, x#1, x#2")
    ops = pointwises(check_numerics(text))
    assert [loads(p) for p in ops] == [[[i0, i1]], [[i0, i1 + 3]], [[i0, i1 + 6]]]


def test_externs_spell_a_reproducible_call() -> None:
    text = module_text("x: 1x3x8x8xf32, w: 4x3x3x3xf32", """
  %c = aten.convolution %x, %w, none {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64} attributes {origin = "conv2d"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> loc("convolution")""", "c")
    module = check_numerics(text)
    (ext,) = [o for o in module.walk() if isinstance(o, ExternOp)]
    assert ext.overload.data == "convolution.default"
    assert len(ext.args.data) == 9 and ext.kwargs is None
    assert ext.attributes["origin"] == StringAttr("conv2d")
    assert ext.location.desc.data == "convolution"  # type: ignore[attr-defined]


def test_fallback_option_keeps_an_extern() -> None:
    module = check_numerics(GELU.replace("aten.erf %1", "aten.erf %1"))
    assert not [o for o in module.walk() if isinstance(o, ExternOp)]
    forced = lower(GELU, fallback=("erf",))
    (ext,) = [o for o in forced.walk() if isinstance(o, ExternOp)]
    assert ext.overload.data == "erf.default"


def test_dynamic_shape_fails_naming_the_op() -> None:
    text = """func.func @f(%a: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %r = aten.exp %a : (tensor<?x8xf32>) -> tensor<?x8xf32> loc("exp_3")
  func.return %r : tensor<?x8xf32>
}"""
    with pytest.raises(PassFailedException, match=r"aten\.exp.*exp_3.*dynamic dims of tensor<\?x8xf32> need a #sym.sizes"):
        lower(text)


def test_output_is_deterministic() -> None:
    args, body, returns = NUMERIC_CASES["cat_and_pad"]
    text = module_text(args, body, returns) + module_text("a: 4x8xf32", "  %r = aten.sigmoid %a : (tensor<4x8xf32>) -> tensor<4x8xf32>", "r").replace("@f", "@g")
    assert printed(lower(text)) == printed(lower(text))


def test_output_round_trips_through_the_parser() -> None:
    for args, body, returns in NUMERIC_CASES.values():
        first = printed(lower(module_text(args, body, returns)))
        assert printed(parse(first)) == first
