"""Scalar math on compute-form values, as arith/math ops chosen by dtype.

Inductor's `ops.*` handler, for mlc: each method takes `Value`s of one dtype (the caller has
promoted them) and picks the float, signed or unsigned variant. Ops that arith/math lack are
composed here (sigmoid = 1 / (1 + exp(-x))), so no new scalar ops are needed.
"""

from __future__ import annotations

from xdsl.dialects import arith, math
from xdsl.ir import Operation

from mlc.passes.lowering.dtypes import is_float, is_unsigned
from mlc.passes.lowering.value import Value

# torch comparison -> (arith.cmpf predicate, signed cmpi, unsigned cmpi). `ne` is unordered so
# that NaN != x holds, as in torch; the others are ordered so NaN compares false.
_PREDICATES = {
    "eq": ("oeq", "eq", "eq"),
    "ne": ("une", "ne", "ne"),
    "lt": ("olt", "slt", "ult"),
    "le": ("ole", "sle", "ule"),
    "gt": ("ogt", "sgt", "ugt"),
    "ge": ("oge", "sge", "uge"),
}

# Float unary functions with a direct math op.
UNARY_FLOAT: dict[str, type[Operation]] = {
    "exp": math.ExpOp,
    "exp2": math.Exp2Op,
    "expm1": math.ExpM1Op,
    "log": math.LogOp,
    "log1p": math.Log1pOp,
    "log2": math.Log2Op,
    "log10": math.Log10Op,
    "sqrt": math.SqrtOp,
    "rsqrt": math.RsqrtOp,
    "sin": math.SinOp,
    "cos": math.CosOp,
    "tan": math.TanOp,
    "tanh": math.TanhOp,
    "erf": math.ErfOp,
    "floor": math.FloorOp,
    "ceil": math.CeilOp,
    "trunc": math.TruncOp,
    "round": math.RoundEvenOp,  # torch.round rounds half to even
}


class ScalarMath:
    """Mixed into `Body` (passes/lowering/body.py), whose `emit`, `constant` and `cast` it calls."""

    def _v(self, op: Operation, dtype: str) -> Value:
        return Value(self.emit(op), dtype)

    def _same(self, x: Value, y: Value) -> str:
        assert x.dtype == y.dtype, f"operands of {x.dtype} and {y.dtype}: promote first"
        return x.dtype

    def const_like(self, value: bool | int | float, like: Value) -> Value:
        return self.constant(value, like.dtype)

    # -- arithmetic -----------------------------------------------------------------------------

    def add(self, x: Value, y: Value) -> Value:
        d = self._same(x, y)
        if d == "bool":  # True + True is True: addition saturates to logical or
            return self._v(arith.OrIOp(x.ssa, y.ssa), d)
        return self._v(arith.AddfOp(x.ssa, y.ssa) if is_float(d) else arith.AddiOp(x.ssa, y.ssa), d)

    def sub(self, x: Value, y: Value) -> Value:
        d = self._same(x, y)
        return self._v(arith.SubfOp(x.ssa, y.ssa) if is_float(d) else arith.SubiOp(x.ssa, y.ssa), d)

    def mul(self, x: Value, y: Value) -> Value:
        d = self._same(x, y)
        if d == "bool":
            return self._v(arith.AndIOp(x.ssa, y.ssa), d)
        return self._v(arith.MulfOp(x.ssa, y.ssa) if is_float(d) else arith.MuliOp(x.ssa, y.ssa), d)

    def truediv(self, x: Value, y: Value) -> Value:
        assert is_float(self._same(x, y)), "true division is on floats (promote int to float)"
        return self._v(arith.DivfOp(x.ssa, y.ssa), x.dtype)

    def floordiv(self, x: Value, y: Value) -> Value:
        d = self._same(x, y)
        if is_float(d):
            return self.floor_quotient(x, y)
        op = arith.DivUIOp(x.ssa, y.ssa) if is_unsigned(d) else arith.FloorDivSIOp(x.ssa, y.ssa)
        return self._v(op, d)

    def floor_quotient(self, x: Value, y: Value) -> Value:
        """The floor of the exact quotient x / y, as aten's float floor division gives it. The
        correctly rounded quotient can round up onto an integer (-18250 / 3.3284698 is -5483.0
        in float32; the true floor is -5484), so the result is one less where the remainder
        x - n*y lies on the other side of zero from y. For float32 and narrower operands that
        remainder is computed in float64, where n*y (24 bits times 24) is exact and the one
        rounding keeps its sign; float64 operands take one fma. As in aten: an infinite x gives
        NaN (unless y is 0: inf), an infinite y leaves x as the remainder (-1 // inf is -1)."""
        d = self._same(x, y)
        n = self.unary("floor", self.truediv(x, y))
        if d == "float64":
            x_wide, r = x, self._v(math.FmaOp(self.neg(n).ssa, y.ssa, x.ssa), d)
        else:
            x_wide, n_wide, y_wide = (self.cast(v, "float64") for v in (x, n, y))
            r = self.sub(x_wide, self.mul(n_wide, y_wide))
        r = self.select(self._is_inf(y), x_wide, r)
        zero = self.const_like(0.0, r)
        past_zero = self.logical_xor(self.compare("lt", r, zero), self.compare("lt", y, self.const_like(0.0, y)))
        wrong_side = self.logical_and(self.compare("ne", r, zero), past_zero)
        floor = self.select(wrong_side, self.sub(n, self.const_like(1.0, n)), n)
        undefined = self.logical_and(self._is_inf(x), self.compare("ne", y, self.const_like(0.0, y)))
        return self.select(undefined, self.const_like(float("nan"), n), floor)

    def _is_inf(self, x: Value) -> Value:
        return self.compare("eq", self.abs(x), self.const_like(float("inf"), x))

    def truncdiv(self, x: Value, y: Value) -> Value:
        d = self._same(x, y)
        if is_float(d):
            return self.unary("trunc", self.truediv(x, y))
        op = arith.DivUIOp(x.ssa, y.ssa) if is_unsigned(d) else arith.DivSIOp(x.ssa, y.ssa)
        return self._v(op, d)

    def int_fmod(self, x: Value, y: Value) -> Value:
        """C's `%` on integers: the sign of the dividend."""
        d = self._same(x, y)
        return self._v(arith.RemUIOp(x.ssa, y.ssa) if is_unsigned(d) else arith.RemSIOp(x.ssa, y.ssa), d)

    def int_remainder(self, x: Value, y: Value) -> Value:
        """Python's `%` on integers: the sign of the divisor (fmod, then shift by y if needed)."""
        r = self.int_fmod(x, y)
        if is_unsigned(x.dtype):
            return r
        zero = self.const_like(0, r)
        differ = self.logical_xor(self.compare("lt", r, zero), self.compare("lt", y, zero))
        fix = self.logical_and(self.compare("ne", r, zero), differ)
        return self.select(fix, self.add(r, y), r)

    def neg(self, x: Value) -> Value:
        if x.is_float:
            return self._v(arith.NegfOp(x.ssa), x.dtype)
        return self.sub(self.const_like(0, x), x)

    def abs(self, x: Value) -> Value:
        if x.is_float:
            return self._v(math.AbsFOp(x.ssa), x.dtype)
        if is_unsigned(x.dtype):
            return x
        return self._v(math.AbsIOp(x.ssa), x.dtype)

    def maximum(self, x: Value, y: Value) -> Value:
        """NaN-propagating, like torch.maximum (arith.maximumf propagates NaN)."""
        d = self._same(x, y)
        if is_float(d):
            return self._v(arith.MaximumfOp(x.ssa, y.ssa), d)
        return self._v(arith.MaxUIOp(x.ssa, y.ssa) if is_unsigned(d) else arith.MaxSIOp(x.ssa, y.ssa), d)

    def minimum(self, x: Value, y: Value) -> Value:
        d = self._same(x, y)
        if is_float(d):
            return self._v(arith.MinimumfOp(x.ssa, y.ssa), d)
        return self._v(arith.MinUIOp(x.ssa, y.ssa) if is_unsigned(d) else arith.MinSIOp(x.ssa, y.ssa), d)

    # -- comparisons and selection ------------------------------------------------------------

    def compare(self, how: str, x: Value, y: Value) -> Value:
        """`how` is torch's name (eq, ne, lt, le, gt, ge); the result is a bool value."""
        d = self._same(x, y)
        fpred, spred, upred = _PREDICATES[how]
        if is_float(d):
            return self._v(arith.CmpfOp(x.ssa, y.ssa, fpred), "bool")
        return self._v(arith.CmpiOp(x.ssa, y.ssa, upred if is_unsigned(d) else spred), "bool")

    def isnan(self, x: Value) -> Value:
        return self._v(arith.CmpfOp(x.ssa, x.ssa, "uno"), "bool")

    def select(self, cond: Value, x: Value, y: Value) -> Value:
        assert cond.dtype == "bool"
        return self._v(arith.SelectOp(cond.ssa, x.ssa, y.ssa), self._same(x, y))

    # -- logic ----------------------------------------------------------------------------------

    def truth(self, x: Value) -> Value:
        """x != 0 as bool (identity for bools)."""
        return x if x.dtype == "bool" else self.compare("ne", x, self.const_like(0, x))

    def logical_and(self, x: Value, y: Value) -> Value:
        return self._v(arith.AndIOp(self.truth(x).ssa, self.truth(y).ssa), "bool")

    def logical_or(self, x: Value, y: Value) -> Value:
        return self._v(arith.OrIOp(self.truth(x).ssa, self.truth(y).ssa), "bool")

    def logical_xor(self, x: Value, y: Value) -> Value:
        return self._v(arith.XOrIOp(self.truth(x).ssa, self.truth(y).ssa), "bool")

    def logical_not(self, x: Value) -> Value:
        return self._v(arith.XOrIOp(self.truth(x).ssa, self.constant(True, "bool").ssa), "bool")

    def bitwise(self, how: str, x: Value, y: Value) -> Value:
        d = self._same(x, y)
        assert not is_float(d), "bitwise ops are on integers and bools"
        cls = {"and": arith.AndIOp, "or": arith.OrIOp, "xor": arith.XOrIOp}[how]
        return self._v(cls(x.ssa, y.ssa), d)

    def bitwise_not(self, x: Value) -> Value:
        ones = self.const_like(True if x.dtype == "bool" else -1, x)
        return self._v(arith.XOrIOp(x.ssa, ones.ssa), x.dtype)

    # -- float functions ------------------------------------------------------------------------

    def unary(self, name: str, x: Value) -> Value:
        assert x.is_float, f"{name} is computed on floats"
        return self._v(UNARY_FLOAT[name](x.ssa), x.dtype)

    def powf(self, x: Value, y: Value) -> Value:
        return self._v(math.PowFOp(x.ssa, y.ssa), self._same(x, y))

    def reciprocal(self, x: Value) -> Value:
        return self.truediv(self.const_like(1.0, x), x)

    def sigmoid(self, x: Value) -> Value:
        """1 / (1 + exp(-x)): no sigmoid op in arith/math."""
        one = self.const_like(1.0, x)
        return self.truediv(one, self.add(one, self.unary("exp", self.neg(x))))

    def sign(self, x: Value) -> Value:
        """(0 < x) - (x < 0) in x's dtype; 0 for NaN, as torch.sign on CPU."""
        zero = self.const_like(0, x)
        pos = self.cast(self.compare("gt", x, zero), x.dtype)  # type: ignore[attr-defined]
        neg = self.cast(self.compare("lt", x, zero), x.dtype)  # type: ignore[attr-defined]
        return self.sub(pos, neg)
