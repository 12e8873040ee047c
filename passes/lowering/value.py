"""`Value`: an SSA value of a loops body together with its torch dtype.

A value is in *compute* form (f32 for float16/bfloat16, signless i8 for uint8) once it has been
widened, and may be in *storage* form right after a raw load (views and data movement never
widen). `body.Body` builds values; the scalar math of `scalar.ScalarMath` takes and returns them.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import SSAValue

from mlc.passes.lowering.dtypes import is_float


@dataclass(frozen=True)
class Value:
    ssa: SSAValue
    dtype: str

    @property
    def is_float(self) -> bool:
        return is_float(self.dtype)
