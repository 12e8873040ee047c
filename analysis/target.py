"""The GPU launches are sized for: hardware and Triton limits (`Target`, default `H100`), and
the speeds `analysis/cost.py` predicts kernel times with.

Plain numbers, no IR: `analysis/launch.py` decides with them, and the generated kernels'
grids (`codegen/triton_helpers.py`) wrap at the same `CUDA_MAX_GRID_Y`, so this module imports
nothing that a compile worker would not need. The speeds come from a calibration run on the GPU
(`bench/cost.py calibrate` writes them as JSON, `Target.load` reads them); the defaults are the
H100 SXM's datasheet (`kernel_s`, `round_trip_s` and `combine_s`, which no datasheet gives:
about what a profiler, a DRAM access and a block-wide reduction take on one), which `source`
says until a calibration replaces them.
`l1_bytes` and `max_programs_per_sm` are hardware facts no calibration measures."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

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
    # Speeds (`analysis/cost.py`): bytes/s and flop/s, seconds, bytes
    dram_bytes_per_s: float = 3.35e12  # HBM3, read + write
    # A kernel's least duration as a profiler measures it: launched, one element loaded and
    # stored (one memory round trip), written back (bench/cost.py: torch.profiler, as its report)
    kernel_s: float = 1.5e-6
    l2_bytes: int = 50 * 2**20
    l2_bytes_per_s: float = 10e12  # re-reads that hit L2
    l1_bytes: int = 224 * 1024  # per SM: 256 KiB of L1 + shared memory, less a 32 KiB shared carveout
    max_programs_per_sm: int = 32  # CUDA's resident blocks per SM (sm_80 .. sm_90)
    round_trip_s: float = 0.25e-6  # what a looped reduction's iteration adds to one program (its loads' round trip)
    combine_s: float = 0.5e-6  # what a reduction's combine across warps adds to a program (shuffles, barriers)
    fma_flops_per_s: float = 67e12  # float32 on the CUDA cores (an FMA is 2 flops)
    tensor_flops_per_s: float = 989e12  # bf16 / f16 dense tl.dot (tf32: half)
    source: str = "H100 SXM datasheet (not calibrated)"

    def __post_init__(self) -> None:
        bad = [f.name for f in dataclasses.fields(self) if f.name != "source" and getattr(self, f.name) <= 0]
        if bad:
            raise ValueError(f"Target: {', '.join(bad)} must be positive")

    def with_sms(self, num_sms: int) -> Target:
        return dataclasses.replace(self, num_sms=num_sms)

    @staticmethod
    def load(path: str | Path) -> Target:
        """A calibration's target (`bench/cost.py calibrate`): the fields it measured over the defaults."""
        data = json.loads(Path(path).read_text())
        known = {f.name for f in dataclasses.fields(Target)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"{path}: not fields of Target: {', '.join(unknown)}")
        return Target(**data)

    def dump(self) -> str:
        return json.dumps(dataclasses.asdict(self), indent=2, sort_keys=True) + "\n"


H100 = Target()
