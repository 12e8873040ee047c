"""The GPU launches are sized for: hardware and Triton limits (`Target`, default `H100`).

Plain numbers, no IR: `analysis/launch.py` decides with them, and the generated kernels'
grids (`codegen/triton_helpers.py`) wrap at the same `CUDA_MAX_GRID_Y`, so this module imports
nothing that a compile worker would not need."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

CUDA_MAX_GRID_Y = 65535  # CUDA's limit on a grid's y (and z) dimension (codegen/triton_helpers.py's grids too)


@dataclass(frozen=True)
class Target:
    """The GPU the heuristics size launches for (defaults: H100 SXM, sm_90)."""

    num_sms: int = 132  # streaming multiprocessors
    threads_per_sm: int = 2048  # max resident threads per SM (sm_80 .. sm_90)
    max_xblock: int = 4096  # runtime/hints.py: TRITON_MAX_BLOCK["X"]
    max_yblock: int = 1024  # runtime/hints.py: TRITON_MAX_BLOCK["Y"]
    max_r0block: int = 4096 * 16  # runtime/hints.py: TRITON_MAX_BLOCK["R0_"]
    max_grid_x: int = 2**31 - 1  # CUDA's grid limits
    max_grid_y: int = CUDA_MAX_GRID_Y

    def __post_init__(self) -> None:
        bad = [f.name for f in dataclasses.fields(self) if getattr(self, f.name) < 1]
        if bad:
            raise ValueError(f"Target: {', '.join(bad)} must be positive")

    def with_sms(self, num_sms: int) -> Target:
        return dataclasses.replace(self, num_sms=num_sms)


H100 = Target()
