"""Order each kernel's configs by the cost model's predicted time and keep the best: the runtime
then times only those at the first launch (the autotuner's share of compile time) or none.

Before (a looped reduction, three configs for the runtime to time):
    triton.kernel @triton_red_fused_sum_0 reduction(...) xnumel 8 r0_numel 262144
        configs [#triton.config<XBLOCK = 1, R0_BLOCK = 2048, num_warps = 16, num_stages = 1>,
                 #triton.config<XBLOCK = 8, R0_BLOCK = 512, num_warps = 8, num_stages = 1>, ...] {...}
    triton.wrapper ... { triton.launch @triton_red_fused_sum_0(@x, @buf0) xnumel 8 r0_numel 262144 ... }
After (`tune=model explain=true`): the one predicted fastest, and every config's prediction
    triton.kernel @triton_red_fused_sum_0 ... configs [#triton.config<XBLOCK = 8, R0_BLOCK = 512, ...>] {...}
        {predicted = ["XBLOCK=8 R0_BLOCK=512 warps=8 stages=1: 21.04 us", "XBLOCK=1 ...: 23.67 us", ...]}

A kernel's time is summed over its launches (`analysis.cost.launch_traffic` with each config,
then `predict`); configs predicted alike keep the heuristics' order. A kernel with one config,
or without a launch the model reads, is left as it is.

Options:
  tune=all       all: every config stays, in the heuristics' order (nothing changes); top-k:
                 the `k` predicted fastest, fastest first; model: the one predicted fastest
                 (the runtime times nothing)
  k=2            configs kept by top-k
  explain=false  true: each ranked kernel lists every config's predicted time (`predicted`)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr
from xdsl.passes import ModulePass

from mlc.analysis.cost import launch_traffic, predict
from mlc.analysis.target import H100, Target
from mlc.dialects import triton
from mlc.passes.pipeline import option
from mlc.passes.stages import check_stage

TUNES = ("all", "top-k", "model")


def ranked_configs(kernel: triton.KernelOp, launches: list[tuple[triton.LaunchOp, dict]],
                   target: Target = H100) -> list[tuple[float, triton.ConfigAttr]]:
    """The kernel's configs with their predicted seconds over `launches` (each with its
    wrapper's layouts), fastest first; equal predictions in the heuristics' order."""
    timed = [(sum(predict(launch_traffic(launch, kernel, layouts, config), target).seconds
                  for launch, layouts in launches), k, config) for k, config in enumerate(kernel.config_list)]
    return [(seconds, config) for seconds, _, config in sorted(timed, key=lambda t: (t[0], t[1]))]


def describe(config: triton.ConfigAttr) -> str:
    blocks = " ".join(f"{name}={size}" for name, size in config.block_sizes.items())
    return f"{blocks} warps={config.num_warps.data} stages={config.num_stages.data}"


@dataclass(frozen=True)
class RankConfigsPass(ModulePass):
    """Rank each kernel's configs by predicted time; keep all, the top k, or the best."""

    name = "rank-configs"
    ACCEPTS: ClassVar[tuple[str, ...]] = ("triton",)

    tune: str = option("all", "all (nothing changes), top-k (the k predicted fastest) or model (the fastest)")
    k: int = option(2, "configs top-k keeps")
    explain: bool = option(False, "list every config's predicted time on each ranked kernel (`predicted`)")

    def __post_init__(self) -> None:
        if self.tune not in TUNES:
            raise ValueError(f"rank-configs: tune must be one of {', '.join(TUNES)}, not {self.tune!r}")
        if self.k < 1:
            raise ValueError("rank-configs: k must be >= 1")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_stage(self, op)
        if self.tune == "all" and not self.explain:
            return
        launches: dict[str, list[tuple[triton.LaunchOp, dict]]] = {}
        for wrapper in (w for w in op.ops if isinstance(w, triton.WrapperOp)):
            layouts = wrapper.layouts()
            for launch in (o for o in wrapper.body.block.ops if isinstance(o, triton.LaunchOp)):
                launches.setdefault(launch.kernel_name, []).append((launch, layouts))
        for kernel in (k for k in op.ops if isinstance(k, triton.KernelOp)):
            if len(kernel.config_list) < 2 or kernel.sym_name.data not in launches:
                continue
            ranked = ranked_configs(kernel, launches[kernel.sym_name.data])
            if self.explain:
                kernel.attributes["predicted"] = ArrayAttr(
                    [StringAttr(f"{describe(c)}: {seconds * 1e6:.2f} us") for seconds, c in ranked])
            keep = {"all": len(ranked), "top-k": self.k, "model": 1}[self.tune]
            if self.tune != "all":
                kernel.properties["configs"] = ArrayAttr([c for _, c in ranked[:keep]])
