"""emit-python's kernels: one `@triton.jit` function per `triton.kernel`, pointwise
(`_KernelEmitter`) or a reduction (`_ReductionKernelEmitter`). The choices behind the rules are
in `mlc.codegen.emit_python`'s docstring.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import sympy
from xdsl.dialects import arith
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
)
from xdsl.ir import Attribute, Operation, SSAValue

from mlc.analysis.launch import next_power_of_2
from mlc.dialects import triton as tt
from mlc.codegen.emit_common import (
    EmitError,
    checks_indices,
    _is_half,
    _is_unsigned,
    _where,
    _width,
    py_float,
    tl_dtype,
)
from mlc.codegen.py_expr import ExprPrintError, py_expr
from mlc.dialects.sym import indirect_symbol, is_size_symbol, symbol


# ---------------------------------------------------------------------------------------------
# Kernels

_BLOCK_SHAPE = {"pointwise": "[XBLOCK]", "reduction": "[XBLOCK, 1]", "persistent_reduction": "[XBLOCK, 1]",
                "matmul": "[YBLOCK, XBLOCK]"}

# Ops whose operands are all tiles of one type, printed as `a <op> b`.
_INFIX: dict[type[Operation], str] = {
    arith.AddfOp: "+", arith.AddiOp: "+", arith.SubfOp: "-", arith.SubiOp: "-",
    arith.MulfOp: "*", arith.MuliOp: "*", arith.DivfOp: "/",
    arith.DivSIOp: "//", arith.RemSIOp: "%",
    arith.AndIOp: "&", arith.OrIOp: "|", arith.XOrIOp: "^",
    arith.ShLIOp: "<<", arith.ShRSIOp: ">>",
}
_TO_INTEGER = (mathd.FloorOp, mathd.CeilOp, mathd.TruncOp, mathd.RoundOp, mathd.RoundEvenOp)


def _rounded_to_integer(op: Operation) -> bool:
    """Whether a result of `op` is rounded to an integer by one of its users (floor, ...)."""
    return any(isinstance(use.operation, _TO_INTEGER) for r in op.results for use in r.uses)


# Binary ops a bare f32/i32 literal may feed (Triton's weak typing then gives it the tile's type);
# the function-style ones only as the second operand (`maximum(tmp0, 0.0)` reads `a.dtype`).
_FUNCTION_USERS = (
    arith.MaximumfOp, arith.MinimumfOp, arith.MaxnumfOp, arith.MinnumfOp, arith.MaxSIOp, arith.MinSIOp,
)
_LITERAL_USERS = (*_INFIX, arith.CmpfOp, arith.CmpiOp, *_FUNCTION_USERS)
# `tl.math` functions, present under both the GPU compiler and the interpreter.
_TL_MATH: dict[type[Operation], str] = {
    mathd.ExpOp: "tl.math.exp", mathd.LogOp: "tl.math.log", mathd.SinOp: "tl.math.sin",
    mathd.CosOp: "tl.math.cos", mathd.FloorOp: "tl.math.floor", mathd.CeilOp: "tl.math.ceil",
    mathd.ErfOp: "tl.math.erf", mathd.AbsFOp: "tl.abs", mathd.FmaOp: "tl.math.fma",
}
# libdevice functions (CUDA's libdevice; numpy under the interpreter).
_LIBDEVICE: dict[type[Operation], str] = {
    mathd.Exp2Op: "exp2", mathd.ExpM1Op: "expm1", mathd.Log2Op: "log2", mathd.Log10Op: "log10",
    mathd.Log1pOp: "log1p", mathd.SqrtOp: "sqrt", mathd.RsqrtOp: "rsqrt", mathd.TanOp: "tan",
    mathd.TanhOp: "tanh", mathd.SinhOp: "sinh", mathd.CoshOp: "cosh", mathd.AsinOp: "asin",
    mathd.AcosOp: "acos", mathd.AtanOp: "atan", mathd.AsinhOp: "asinh", mathd.AcoshOp: "acosh",
    mathd.AtanhOp: "atanh", mathd.CbrtOp: "cbrt", mathd.TruncOp: "trunc", mathd.RoundOp: "round",
    mathd.RoundEvenOp: "nearbyint", mathd.PowFOp: "pow", mathd.Atan2Op: "atan2",
    mathd.CopySignOp: "copysign",
}
_CMPF = {
    "oeq": "{a} == {b}", "ogt": "{a} > {b}", "oge": "{a} >= {b}", "olt": "{a} < {b}",
    "ole": "{a} <= {b}", "une": "{a} != {b}",
    "one": "({a} != {b}) & ({a} == {a}) & ({b} == {b})",
    "ueq": "({a} == {b}) | ({a} != {a}) | ({b} != {b})",
    "ugt": "~({a} <= {b})", "uge": "~({a} < {b})", "ult": "~({a} >= {b})", "ule": "~({a} > {b})",
    "ord": "({a} == {a}) & ({b} == {b})", "uno": "({a} != {a}) | ({b} != {b})",
}
_CMPF_NAMES = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true"]
_CMPI_NAMES = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
_CMPI = {"eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">=", "ult": "<", "ule": "<=", "ugt": ">", "uge": ">="}
_CASTS = (
    arith.ExtFOp, arith.TruncFOp, arith.SIToFPOp, arith.UIToFPOp, arith.FPToSIOp, arith.FPToUIOp,
    arith.ExtSIOp, arith.ExtUIOp, arith.TruncIOp, arith.IndexCastOp,
)


class _KernelEmitter:
    def __init__(self, kernel: tt.KernelOp):
        self.kernel = kernel
        self.kind = kernel.kernel_kind
        if self.kind not in _BLOCK_SHAPE:
            raise EmitError(f"triton.kernel @{kernel.sym_name.data}: {self.kind} kernels are not supported by emit-python yet", kernel)
        self.shape = "[YBLOCK, XBLOCK]" if kernel.is_tiled else _BLOCK_SHAPE[self.kind]
        self.names: dict[SSAValue, str] = {}
        self.widen = ".to(tl.int64)" if kernel.index_bits == 64 else ""  # program ids and aranges
        self.lines: list[str] = []
        self.count = 0
        for arg, name in zip(kernel.body.block.args, kernel.arg_names):
            self.names[arg] = name

    # -- output --------------------------------------------------------------------------------

    def emit(self) -> str:
        k = self.kernel
        params = [*k.arg_names, *k.size_args, "xnumel", "XBLOCK: tl.constexpr"]
        if k.is_tiled:  # 2-D: [YBLOCK, 1] rows by [1, XBLOCK] columns, grid (x programs, y programs)
            params = [*k.arg_names, *k.size_args, "ynumel", "xnumel", "YBLOCK: tl.constexpr", "XBLOCK: tl.constexpr"]
        head = []
        if k.origin_names:
            head.append(f"# origins: {', '.join(k.origin_names)}")
        head += [_jit(k), f"def {k.sym_name.data}({', '.join(params)}):", *_static_numels(k)]
        if k.is_tiled:
            # A symbolic ynumel may need more y programs than CUDA's grid holds (65535): the
            # launch wraps them into z (`triton_helpers._grid`), counted here.
            y_program = "tl.program_id(1)" if k.ynumel.expr.is_Integer else "(tl.program_id(1) + tl.program_id(2) * tl.num_programs(1))"
            head += [
                f"    yoffset = {y_program}{self.widen} * YBLOCK",
                "    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]",
                "    ymask = yindex < ynumel",
                f"    xoffset = tl.program_id(0){self.widen} * XBLOCK",
                "    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]",
                "    xmask = xindex < xnumel",
            ]
        else:
            head += [
                f"    xoffset = tl.program_id(0){self.widen} * XBLOCK",
                "    xindex = xoffset + tl.arange(0, XBLOCK)[:]",
                "    xmask = xindex < xnumel",
            ]
        for op in k.body.block.ops:
            self.op(op)
        return "\n".join(head + ["    " + line for line in self.lines]) + "\n"

    def define(self, value: SSAValue, text: str) -> None:
        name = f"tmp{self.count}"
        self.count += 1
        self.names[value] = name
        self.lines.append(f"{name} = {text}")

    def v(self, value: SSAValue) -> str:
        return self.names[value]

    def f32(self, value: SSAValue) -> str:
        """The operand, converted to float32 when it is a 16-bit float (computed in float32)."""
        return f"{self.v(value)}.to(tl.float32)" if _is_half(value.type) else self.v(value)

    def rounded(self, text: str, t: Attribute, computed_in_f32: bool) -> str:
        if not computed_in_f32:
            return text
        return f"to_bfloat16({text})" if isinstance(t, BFloat16Type) else f"({text}).to({tl_dtype(t)})"

    # -- ops -----------------------------------------------------------------------------------

    def op(self, op: Operation) -> None:
        try:
            self._op(op)
        except (EmitError, ExprPrintError) as e:
            if getattr(e, "op", None) is not None:
                raise
            raise EmitError(f"{_where(op)}: {e}", op) from None

    def _op(self, op: Operation) -> None:
        if isinstance(op, tt.IndexOp):
            self.lines.append(f"{op.var.data} = {py_expr(op.expr.expr, kernel=True)}")
        elif isinstance(op, tt.LoadOp):
            self.load(op)
        elif isinstance(op, tt.StoreOp):
            self.store(op)
        elif isinstance(op, tt.IndirectIndexOp):
            self.indirect_index(op)
        elif isinstance(op, tt.ExprOp):
            expr = self.positions(op.expr.expr, op.indirect)
            dtype = tl_dtype(op.result.type)
            if any(not is_size_symbol(s.name) for s in expr.free_symbols):
                text = py_expr(expr, kernel=True)
                text = text if isinstance(expr, sympy.Symbol) else f"({text})"
                self.define(op.result, f"{text}.to({dtype})")
            else:  # a constant or a size (an argument): make it a tile, so casts and stores of it work
                self.define(op.result, f"tl.full({self.shape}, {py_expr(expr, kernel=True)}, {dtype})")
        elif isinstance(op, arith.ConstantOp):
            self.constant(op)
        else:
            text = self.compute(op)
            if len(op.results) != 1:
                raise EmitError(f"{_where(op)}: expected one result", op)
            self.define(op.results[0], text)

    def mask(self, names: Sequence[str], value: SSAValue | None) -> str:
        parts = list(names) + ([self.v(value)] if value is not None else [])
        return " & ".join(parts)

    def positions(self, expr: sympy.Expr, indirect: Sequence[SSAValue]) -> sympy.Expr:
        """An index with its loaded positions `ind<k>` named by their tiles (`tmp4`)."""
        return expr.xreplace({indirect_symbol(k): symbol(self.v(v)) for k, v in enumerate(indirect)})

    def indirect_index(self, op: tt.IndirectIndexOp) -> None:
        """Negative positions count from the end; `check` asserts the bounds where masks hold."""
        value, size = self.v(op.value), py_expr(op.size.expr, kernel=True)
        self.define(op.result, f"tl.where({value} < 0, {value} + {size}, {value})")
        if op.check is not None:
            name = self.v(op.result)
            cond = f"(0 <= {name}) & ({name} < {size})"
            if op.masks:
                cond = f"({cond}) | ~({' & '.join(op.masks)})"
            self.lines.append(f'tl.device_assert({cond}, "index out of bounds: 0 <= {name} < {size}")')

    def load(self, op: tt.LoadOp) -> None:
        index = self.positions(op.index.expr, op.indirect)
        policy = f", eviction_policy='{op.eviction_policy.data}'" if op.eviction_policy is not None else ""
        ptr = f"{self.v(op.ptr)} + ({py_expr(index, kernel=True)})"
        if not _block_symbols(index):
            # A constant index reads one element, always in bounds: load it once, unmasked, and
            # give it the block's shape, as Inductor does (Triton rejects a block mask on a
            # scalar pointer). A value mask still selects `other` lane by lane.
            text = f"tl.broadcast_to(tl.load({ptr}{policy}), {self.shape})"
            if op.mask is not None and op.other is not None:
                text = f"tl.where({self.v(op.mask)}, {text}, {self.other(op.other)})"
            self.define(op.result, text)
            return
        if self.kernel.is_tiled and op.mask is not None and len({n[0] for n in _block_symbols(index)}) < 2:
            # A value mask is a whole [YBLOCK, XBLOCK] tile; the pointers of an index along one
            # tile dim are a row or a column: give them the tile's shape so the mask fits.
            ptr = f"tl.broadcast_to({ptr}, {self.shape})"
        args = [ptr]
        mask = self.mask(op.masks, op.mask)
        if mask:
            args.append(mask)
        if op.other is not None:
            args.append(f"other={self.other(op.other)}")
        self.define(op.result, f"tl.load({', '.join(args)}{policy})")

    def store(self, op: tt.StoreOp) -> None:
        index = self.positions(op.index.expr, op.indirect)
        text = py_expr(index, kernel=True)
        symbols = _block_symbols(index)
        if not symbols or any(m in op.masks and not any(s.startswith(m[0]) for s in symbols) for m in ("ymask", "xmask")):
            # A block of pointers with the tile's shape (all to one element, or one row of a
            # tile a GEMM of M = 1 masks whole), so that the mask's shape fits.
            text = f"tl.full({self.shape}, {text}, tl.int32)" if not symbols else f"({text}) + tl.zeros({self.shape}, tl.int32)"
        mask = self.mask(op.masks, op.mask)
        call, value, suffix = "tl.store", self.v(op.value), ""
        if op.store_mode == "atomic_add":
            # A whole, fresh tile: the interpreter's atomic_add misreads a [1] constant, and a
            # broadcast one too (its numpy view has zero strides); on the GPU the add folds away.
            call, suffix = "tl.atomic_add", ", sem='relaxed'"
            value = f"{value} + tl.full({self.shape}, 0, {tl_dtype(op.value.type)})"
        self.lines.append(f"{call}({self.v(op.ptr)} + ({text}), {value}{', ' + mask if mask else ''}{suffix})")

    @staticmethod
    def other(attr: Attribute) -> str:
        if isinstance(attr, FloatAttr):
            return py_float(attr.value.data)
        if isinstance(attr, IntegerAttr):
            value = attr.value.data
            return str(bool(value)) if _width(attr.type) == 1 else str(value)
        raise EmitError(f"unsupported 'other' value {attr}")

    def constant(self, op: arith.ConstantOp) -> None:
        value_attr = op.value
        t = op.result.type
        if isinstance(value_attr, FloatAttr):
            value = float(value_attr.value.data)
            literal = py_float(value)
            if value == 0 and math.copysign(1.0, value) < 0:
                # Triton reads the literal -0.0 as 0: build the bits instead (Inductor does too).
                bits = {"tl.float32": ("0x80000000", "tl.uint32"), "tl.float64": ("0x8000000000000000", "tl.uint64"),
                        "tl.float16": ("0x8000", "tl.uint16"), "tl.bfloat16": ("0x8000", "tl.uint16")}[tl_dtype(t)]
                self.define(op.result, f"tl.full([1], {bits[0]}, {bits[1]}).to({tl_dtype(t)}, bitcast=True)")
                return
            subnormal = value != 0 and math.isfinite(value) and abs(value) < 1.1754943508222875e-38
            bare = isinstance(t, Float32Type) and not subnormal and self._literal_ok(op)
        elif isinstance(value_attr, IntegerAttr):
            raw = value_attr.value.data
            if _width(t) == 1:
                literal = "1" if raw else "0"
                bare = False
            else:
                literal = str(raw)
                bare = t == IntegerType(32) and self._literal_ok(op)
        else:
            raise EmitError(f"{_where(op)}: unsupported constant {value_attr}", op)
        self.define(op.result, literal if bare else f"tl.full([1], {literal}, {tl_dtype(t)})")

    @staticmethod
    def _literal_ok(op: arith.ConstantOp) -> bool:
        """A bare literal takes its type from the other operand: only where that is a tile."""
        for use in op.result.uses:
            user = use.operation
            if not isinstance(user, _LITERAL_USERS):
                return False
            if isinstance(user, _FUNCTION_USERS) and user.operands[0] is op.result:
                return False
            others = [o for o in user.operands if o is not op.result]
            if not others or all(isinstance(o.owner, arith.ConstantOp) for o in others):
                return False
        return bool(op.result.uses)

    def compute(self, op: Operation) -> str:
        t = op.results[0].type if op.results else None
        # bfloat16 is raw bits under the interpreter: its arithmetic, compares and negation run
        # in float32 (rounded back per op, as eager does); f16 and bf16 math functions too,
        # since libdevice has no 16-bit entry points.
        if isinstance(op, arith.DivfOp) and isinstance(t, Float32Type) and _rounded_to_integer(op):
            # A quotient rounded to an integer (floor / trunc division, torch.floor(x / y)) is
            # divided correctly rounded, as eager does: Triton's f32 `/` is div.full.f32 (within
            # 2 ulp), under which x / x can be 0.99999994 and its floor 0.
            return f"libdevice.div_rn({self.v(op.lhs)}, {self.v(op.rhs)})"
        if isinstance(op, tuple(_INFIX)):
            a, b = op.operands
            sym = _INFIX[type(op)]
            half = isinstance(a.type, BFloat16Type)
            text = f"{self.f32(a) if half else self.v(a)} {sym} {self.f32(b) if half else self.v(b)}"
            return self.rounded(text, t, half)
        if isinstance(op, arith.ShRUIOp | arith.DivUIOp | arith.RemUIOp):
            # Unsigned meaning on signless tiles: Triton reads tl.intN as signed, so go via uintN.
            a, b = op.operands
            sym = {arith.ShRUIOp: ">>", arith.DivUIOp: "//", arith.RemUIOp: "%"}[type(op)]
            if _is_unsigned(a.type):
                return f"{self.v(a)} {sym} {self.v(b)}"
            unsigned = f"tl.uint{_width(a.type)}"
            return f"({self.v(a)}.to({unsigned}) {sym} {self.v(b)}.to({unsigned})).to({tl_dtype(t)})"
        if isinstance(op, arith.FloorDivSIOp):
            return f"floor_div_integer({self.v(op.lhs)}, {self.v(op.rhs)})"
        if isinstance(op, arith.CeilDivSIOp):
            return f"ceil_div_integer({self.v(op.lhs)}, {self.v(op.rhs)})"
        if isinstance(op, arith.NegfOp):
            half = isinstance(t, BFloat16Type)
            # Triton's unary minus is `0 - x`, which turns -0.0 into +0.0; times -1 is exact.
            return self.rounded(f"({self.f32(op.operand) if half else self.v(op.operand)} * -1.0)", t, half)
        if isinstance(op, arith.MaximumfOp | arith.MinimumfOp | arith.MaxnumfOp | arith.MinnumfOp):
            a, b = op.operands
            nan = isinstance(op, arith.MaximumfOp | arith.MinimumfOp)
            fn = ("maximum" if nan else "tl.maximum") if isinstance(op, arith.MaximumfOp | arith.MaxnumfOp) else ("minimum" if nan else "tl.minimum")
            half = isinstance(t, BFloat16Type)
            text = f"{fn}({self.f32(a) if half else self.v(a)}, {self.f32(b) if half else self.v(b)})"
            return self.rounded(text, t, half)
        if isinstance(op, arith.MaxSIOp | arith.MinSIOp):
            fn = "tl.maximum" if isinstance(op, arith.MaxSIOp) else "tl.minimum"
            return f"{fn}({self.v(op.lhs)}, {self.v(op.rhs)})"
        if isinstance(op, arith.MaxUIOp | arith.MinUIOp):
            fn = "tl.maximum" if isinstance(op, arith.MaxUIOp) else "tl.minimum"
            a, b = op.lhs, op.rhs
            if _is_unsigned(a.type):
                return f"{fn}({self.v(a)}, {self.v(b)})"
            unsigned = f"tl.uint{_width(a.type)}"
            return f"{fn}({self.v(a)}.to({unsigned}), {self.v(b)}.to({unsigned})).to({tl_dtype(t)})"
        if isinstance(op, arith.CmpfOp):
            pred = _CMPF_NAMES[op.predicate.value.data]
            if pred in ("true", "false"):
                return f"tl.full({_BLOCK_SHAPE[self.kind]}, {1 if pred == 'true' else 0}, tl.int1)"
            half = isinstance(op.lhs.type, BFloat16Type)
            a = self.f32(op.lhs) if half else self.v(op.lhs)
            b = self.f32(op.rhs) if half else self.v(op.rhs)
            return _CMPF[pred].format(a=a, b=b)
        if isinstance(op, arith.CmpiOp):
            pred = _CMPI_NAMES[op.predicate.value.data]
            a, b = self.v(op.lhs), self.v(op.rhs)
            if pred[0] == "u" and not _is_unsigned(op.lhs.type) and _width(op.lhs.type) > 1:
                unsigned = f"tl.uint{_width(op.lhs.type)}"
                a, b = f"{a}.to({unsigned})", f"{b}.to({unsigned})"
            return f"{a} {_CMPI[pred]} {b}"
        if isinstance(op, arith.SelectOp):
            return f"tl.where({self.v(op.cond)}, {self.v(op.lhs)}, {self.v(op.rhs)})"
        if isinstance(op, _CASTS):
            return self.cast(op)
        if isinstance(op, arith.BitcastOp):
            return f"{self.v(op.input)}.to({tl_dtype(t)}, bitcast=True)"
        if isinstance(op, mathd.AbsIOp):
            return f"tl.abs({self.v(op.operand)})"
        if type(op) in _TL_MATH or type(op) in _LIBDEVICE:
            fn = _TL_MATH.get(type(op)) or f"libdevice.{_LIBDEVICE[type(op)]}"
            half = _is_half(t)
            args = ", ".join(self.f32(o) if half else self.v(o) for o in op.operands)
            return self.rounded(f"{fn}({args})", t, half)
        if isinstance(op, mathd.FPowIOp):
            half = _is_half(t)
            base = self.f32(op.lhs) if half else self.v(op.lhs)
            ft = "tl.float32" if half else tl_dtype(t)
            return self.rounded(f"libdevice.pow({base}, {self.v(op.rhs)}.to({ft}))", t, half)
        raise EmitError(f"{_where(op)}: emit-python cannot print {op.name} in a kernel", op)

    def cast(self, op: Operation) -> str:
        src = op.operands[0]
        s, d = src.type, op.results[0].type
        x = self.v(src)
        if isinstance(d, IntegerType) and _width(d) == 1 and isinstance(op, arith.TruncIOp):
            return f"({x} & 1) != 0"  # trunci keeps the low bit; Triton's .to(int1) tests != 0
        if isinstance(s, IntegerType) and _width(s) == 1 and isinstance(op, arith.ExtSIOp):
            return f"-({x}.to({tl_dtype(d)}))"  # sign-extending true gives -1
        if isinstance(op, arith.ExtUIOp) and not _is_unsigned(s) and _width(s) > 1:
            return f"{x}.to(tl.uint{_width(s)}).to({tl_dtype(d)})"  # zero-extend
        if isinstance(op, arith.UIToFPOp) and not _is_unsigned(s) and _width(s) > 1:
            return f"{x}.to(tl.uint{_width(s)}).to({tl_dtype(d)})"
        if isinstance(op, arith.FPToUIOp) and not _is_unsigned(d) and _width(d) > 1:
            return f"{x}.to(tl.uint{_width(d)}).to({tl_dtype(d)})"
        # The interpreter converts bfloat16 only to and from float32: go through it (exact), and
        # round to bfloat16 with the helper (the interpreter's own conversion truncates).
        if isinstance(s, BFloat16Type) and not isinstance(d, Float32Type):
            return f"{x}.to(tl.float32).to({tl_dtype(d)})"
        if isinstance(d, BFloat16Type):
            return f"to_bfloat16({x if isinstance(s, Float32Type) else x + '.to(tl.float32)'})"
        return f"{x}.to({tl_dtype(d)})"


def _jit(kernel: tt.KernelOp) -> str:
    """`@triton.jit`; a kernel that checks its loaded positions is compiled in debug mode,
    where Triton keeps `tl.device_assert`."""
    return "@triton.jit(debug=True)" if checks_indices(kernel) else "@triton.jit"


def _static_numels(kernel: tt.KernelOp) -> list[str]:
    """`xnumel = 2048`, ... for each static numel, first in the body (`emit_python`: why)."""
    numels = {"znumel": kernel.znumel, "ynumel": kernel.ynumel, "xnumel": kernel.xnumel, "r0_numel": kernel.r0_numel}
    return [f"    {name} = {int(n.expr)}" for name, n in numels.items() if n is not None and n.expr.is_Integer]


def _block_symbols(expr: sympy.Expr) -> list[str]:
    """The symbols of an index that vary across the block (all but size symbols)."""
    return sorted(s.name for s in expr.free_symbols if not is_size_symbol(s.name))


# ---------------------------------------------------------------------------------------------
# Reduction kernels (persistent_reduction, reduction)
#
# x tiles are [XBLOCK, 1] and r0 tiles [1, R0_BLOCK]; Triton broadcasts them against each other.
# A persistent kernel fixes R0_BLOCK = next_pow2(r0_numel) in its body (it is not a config), or,
# over a symbolic r0_numel, takes it from the config its launch picks for that size; a looped
# one takes R0_BLOCK from its config and runs `for r0_offset in range(0, r0_numel, R0_BLOCK)`.
# Reductions end `[:, None]` (keepdim, as Inductor's). argmax/argmin go through
# triton_helpers.max_with_index/min_with_index, which keep the first index on ties (tl.argmax
# promises no order), max/min through max2/min2, which propagate NaN as torch does, and sums
# through reduce_sum rather than tl.sum (see triton_helpers: it works under the interpreter
# however late TRITON_INTERPRET was set).

_TILE = "[XBLOCK, R0_BLOCK]"
_REDUCE_FN = {"sum": "triton_helpers.reduce_sum", "prod": "triton_helpers.prod", "max": "triton_helpers.max2",
              "min": "triton_helpers.min2", "any": "triton_helpers.reduce_any"}
_COMBINE = {"sum": "{a} + {v}", "prod": "{a} * {v}", "max": "maximum({a}, {v})", "min": "minimum({a}, {v})",
            "any": "{a} | {v}"}
_WITH_INDEX = {"argmax": "max_with_index", "argmin": "min_with_index"}  # along an axis
_PAIR_WITH_INDEX = {"argmax": "maximum_with_index", "argmin": "minimum_with_index"}  # lane by lane


class _ReductionKernelEmitter(_KernelEmitter):
    def emit(self) -> str:
        k = self.kernel
        persistent = self.kind == "persistent_reduction"
        params = [*k.arg_names, *k.size_args, "xnumel", "r0_numel", "XBLOCK: tl.constexpr"]
        if k.takes_r0_block:
            params.append("R0_BLOCK: tl.constexpr")
        head = [f"# origins: {', '.join(k.origin_names)}"] if k.origin_names else []
        head += [_jit(k), f"def {k.sym_name.data}({', '.join(params)}):", *_static_numels(k)]
        if not k.takes_r0_block:
            head.append(f"    R0_BLOCK: tl.constexpr = {next_power_of_2(int(k.r0_numel.expr))}")
        head += [
            f"    xoffset = tl.program_id(0){self.widen} * XBLOCK",
            "    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]",
            "    xmask = xindex < xnumel",
        ]
        if persistent:
            head += [
                f"    r0_index = tl.arange(0, R0_BLOCK)[None, :]{self.widen}",
                "    r0_offset = 0",
                "    r0_mask = r0_index < r0_numel",
            ]
        else:
            head.append(f"    r0_base = tl.arange(0, R0_BLOCK)[None, :]{self.widen}")
        for op in k.body.block.ops:
            self.op(op)
        return "\n".join(head + ["    " + line for line in self.lines]) + "\n"

    def constant(self, op: arith.ConstantOp) -> None:
        """As in a pointwise kernel, but a constant tile is [1, 1]: tl.broadcast_to keeps ranks."""
        super().constant(op)
        self.lines[-1] = self.lines[-1].replace(" = tl.full([1], ", " = tl.full([1, 1], ", 1)

    def fresh(self) -> str:
        name = f"tmp{self.count}"
        self.count += 1
        return name

    def _op(self, op: Operation) -> None:
        if isinstance(op, tt.ReduceOp):
            self.reduce(op)
        elif isinstance(op, tt.AccumulateOp):
            self.accumulate(op)
        elif isinstance(op, tt.RLoopOp):
            self.rloop(op)
        elif isinstance(op, tt.YieldOp):
            loop = op.parent_op()
            assert isinstance(loop, tt.RLoopOp)
            for arg, value in zip(loop.body.block.args, op.values):
                self.lines.append(f"{self.v(arg)} = {self.v(value)}")
        else:
            super()._op(op)

    def identity(self, kind: str, t: Attribute) -> str:
        value = tt.reduction_identity(kind, t)
        return py_float(value) if "float" in tl_dtype(t) else f"tl.full([1, 1], {value}, {tl_dtype(t)})"

    def tile(self, value: SSAValue, masks: Sequence[str], kind: str | None) -> str:
        """The value as an [XBLOCK, R0_BLOCK] tile, masked lanes holding the identity of `kind`."""
        text = f"tl.broadcast_to({self.v(value)}, {_TILE})"
        if masks and kind is not None:
            name = self.fresh()
            self.lines.append(f"{name} = tl.where({' & '.join(masks)}, {text}, {self.identity(kind, value.type)})")
            return name
        return text

    def reduce(self, op: tt.ReduceOp) -> None:
        kind, values, masks = op.reduction_kind, list(op.values), op.masks
        if kind in _WITH_INDEX:
            tile = self.tile(values[0], masks, kind)
            index = self.v(values[1]) if op.explicit_index else "r0_index"
            _, position = self.fresh(), self.fresh()
            self.lines.append(f"{_}, {position} = triton_helpers.{_WITH_INDEX[kind]}({tile}, tl.broadcast_to({index}, {_TILE}), 1)")
            self.define(op.results[0], f"{position}[:, None].to(tl.int64)")
        elif kind in ("welford", "online_softmax"):
            tiles = [self.tile(v, masks, kind) for v in values]
            names = [self.fresh() for _ in values]
            self.lines.append(f"{', '.join(names)} = triton_helpers.{kind}({', '.join(tiles)}, 1)")
            for result, name in zip(op.results, names):
                self.define(result, f"{name}[:, None]")
        else:
            self.define(op.results[0], f"{_REDUCE_FN[kind]}({self.tile(values[0], masks, kind)}, 1)[:, None]")

    def accumulate(self, op: tt.AccumulateOp) -> None:
        kind, accs, mask = op.reduction_kind, [self.v(a) for a in op.accumulators], " & ".join(op.masks)
        value = f"tl.broadcast_to({self.v(op.value)}, {_TILE})"
        if kind in _COMBINE:
            nexts = [_COMBINE[kind].format(a=accs[0], v=value)]
        else:
            nexts = [self.fresh() for _ in accs]
            if kind in _WITH_INDEX:
                call = f"triton_helpers.{_PAIR_WITH_INDEX[kind]}({accs[0]}, {accs[1]}, {value}, tl.broadcast_to(r0_index, {_TILE}))"
            else:
                call = f"triton_helpers.{kind}_reduce({value}, {', '.join(accs)})"
            self.lines.append(f"{', '.join(nexts)} = {call}")
        for result, acc, new in zip(op.results, accs, nexts):
            self.define(result, f"tl.where({mask}, {new}, {acc})" if mask else new)

    def rloop(self, op: tt.RLoopOp) -> None:
        for arg, init, result in zip(op.body.block.args, op.inits, op.results):
            name = f"_{self.fresh()}"  # carried from one step to the next
            self.lines.append(f"{name} = tl.broadcast_to({self.v(init)}, {_TILE})")
            self.names[arg] = self.names[result] = name
        outer, self.lines = self.lines, ["r0_index = r0_offset + r0_base", "r0_mask = r0_index < r0_numel"]
        for inner in op.body.block.ops:
            self.op(inner)
        outer.append("for r0_offset in range(0, r0_numel, R0_BLOCK):")  # a literal when static
        outer.extend("    " + line for line in self.lines)
        self.lines = outer
