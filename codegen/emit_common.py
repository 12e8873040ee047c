"""What the emit-python modules share: `EmitError`, how an error names an op, dtype names and
number literals. The emitters are `emit_kernel` (the `@triton.jit` functions) and `emit_wrapper`
(the host `call` function); `emit_python` puts them together (its docstring has the choices).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import sympy
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    StringAttr,
)
from xdsl.ir import Attribute, Operation

from mlc.dialects import triton as tt
from mlc.dialects.values import DTYPE_NAMES
from mlc.codegen.py_expr import py_expr


class EmitError(Exception):
    """The module holds something emit-python cannot print; `op` is the op (when known)."""

    def __init__(self, message: str, op: Operation | None = None):
        super().__init__(message)
        self.op = op


def checks_indices(kernel: tt.KernelOp) -> bool:
    """Whether a kernel asserts its loaded positions (compiled in Triton's debug mode)."""
    return any(isinstance(op, tt.IndirectIndexOp) and op.check is not None for op in kernel.body.walk())


def _where(op: Operation) -> str:
    """How an error names an op: its name and, when it has one, its location (`loc("mul_2")`)."""
    loc = getattr(op, "location", None)
    desc = getattr(loc, "desc", None)
    return f"{op.name} at loc(\"{desc.data}\")" if isinstance(desc, StringAttr) else op.name


# ---------------------------------------------------------------------------------------------
# Types


def tl_dtype(t: Attribute) -> str:
    """`f32` -> `tl.float32`, `i1` -> `tl.int1`, `ui8` -> `tl.uint8`."""
    if isinstance(t, Float32Type):
        return "tl.float32"
    if isinstance(t, Float16Type):
        return "tl.float16"
    if isinstance(t, BFloat16Type):
        return "tl.bfloat16"
    if isinstance(t, Float64Type):
        return "tl.float64"
    if isinstance(t, IntegerType):
        width = t.width.data
        if width == 1:
            return "tl.int1"
        unsigned = t.signedness.data == Signedness.UNSIGNED
        return f"tl.{'uint' if unsigned else 'int'}{width}"
    raise EmitError(f"no Triton type for {t}")


def torch_dtype(t: Attribute) -> str:
    """`f32` -> `torch.float32`, `i1` -> `torch.bool`, `ui8` -> `torch.uint8`, `complex<f32>` -> `torch.complex64`."""
    name = DTYPE_NAMES.get(t)
    if name is None:
        raise EmitError(f"no torch dtype for {t}")
    return "torch." + name


def _is_half(t: Attribute) -> bool:
    return isinstance(t, (Float16Type, BFloat16Type))


def _is_unsigned(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.signedness.data == Signedness.UNSIGNED


def _width(t: Attribute) -> int:
    assert isinstance(t, IntegerType)
    return t.width.data


# ---------------------------------------------------------------------------------------------
# Numbers and index expressions


def py_float(value: float) -> str:
    """A float literal that round-trips exactly (`repr`), with inf/nan spelled as Python does."""
    if math.isnan(value):
        return 'float("nan")'
    if math.isinf(value):
        return 'float("inf")' if value > 0 else 'float("-inf")'
    return repr(float(value))


def _host(e: sympy.Expr | int) -> str:
    return py_expr(e, kernel=False)


def _host_tuple(exprs: Sequence[sympy.Expr]) -> str:
    items = [_host(e) for e in exprs]
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
