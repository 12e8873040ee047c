"""Pointwise kernels (`triton_poi_...`): a group without reductions, over 1-D or 2-D tiles.

A pointwise group runs over `xnumel` = the product of its ranges, one lane per element, each
dimension named over xindex (`builder.py`).

- 2-D tiling (`launch.pointwise_tiling`, Inductor's `candidate_tilings`): a kernel with an
  access that is not coalesced along xindex but unit-stride along an outer dim (a transpose)
  splits its ranges into outer dims -> `ynumel`/`yindex` ([YBLOCK, 1]) and inner dims ->
  `xnumel`/`xindex` ([1, XBLOCK]); both groups are named and merged as in a 1-D kernel (`y0`,
  `yindex`); loads and stores carry `ymask`/`xmask` for the tile dims their index uses; configs
  are Inductor's 2-D list (32x32, 64x64, 256x16, 16x256, bs x 1, 1 x bs; x by y), only 32x32
  without autotuning. Kernels whose accesses are all coalesced along xindex stay 1-D, and so
  does every kernel with `tile-2d=false` and every scatter.
- Masks: every load and store carries `xmask` unless xnumel is 1 or a multiple of the largest
  XBLOCK (`Target.max_xblock`, 4096: `launch.has_constant_mask`); a load with its own mask also
  gets `other=0`.
- Eviction: broadcast and uncoalesced loads get `evict_last`; so does a 2-D tile's transposed
  load (unit stride along yindex only).
- Configs (`launch.pointwise_configs`): Inductor's `pointwise` heuristic: `bs = max(256,
  min(numel // 128, 1024))`, configs (bs, 256 elements/warp) and (bs // 2, 64 elements/warp),
  adjusted by `triton_config`; one config without autotuning, and for a scatter (its atomic adds
  cannot be re-run to time a config).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import sympy
from xdsl.ir import Operation, Region, SSAValue
from xdsl.utils.exceptions import PassFailedException

from mlc.analysis.launch import (
    Target,
    has_constant_mask,
    has_constant_mask_y,
    pointwise_configs,
    pointwise_configs_2d,
    pointwise_tiling,
    size_hint,
)
from mlc.dialects import buffer, triton
from mlc.dialects.buffer_layout import LayoutAttr
from mlc.dialects.sym import equal, expr_str, symbol
from mlc.passes.to_triton.builder import XINDEX, GroupKernels, IndexRegistry, KernelBuilder, step_along

YINDEX = symbol("yindex")


@dataclass
class PointwiseKernelBuilder(KernelBuilder):
    """A KernelBuilder for a pointwise kernel: 1-D over xindex, or 2-D where `split` is set:
    ranges[:split] walk yindex (`ynumel` elements), the rest xindex (`numel`)."""

    split: int | None = None
    ynumel: sympy.Expr | None = None
    y_vars: IndexRegistry = field(default_factory=dict)

    def tile(self, ranges: Sequence[sympy.Expr], split: int) -> None:
        """Run as 2-D tiles: ranges[:split] along y, the rest along x."""
        self.split, self.numel, self.ynumel = split, sympy.Mul(*ranges[split:]), sympy.Mul(*ranges[:split])

    def add_member(self, node: buffer.ComputedOp) -> None:
        if node.is_reduction:
            raise PassFailedException(f"convert-to-triton: reduction '{node.buffer.data}' in a pointwise kernel")
        ranges = node.range_exprs
        variables = [symbol(f"i{k}") for k in range(len(ranges))]
        if self.split is not None:
            p = self.split
            subst = self.name_dims(ranges[:p], variables[:p], YINDEX, "y", self.y_vars)
            subst |= self.name_dims(ranges[p:], variables[p:])
        else:
            subst = self.name_dims(ranges, variables)
        values: dict[SSAValue, SSAValue] = {}
        for op in node.body.block.ops:
            self.convert_op(node, op, subst, values)

    # -- masks ---------------------------------------------------------------------------------

    @property
    def masks(self) -> list[str]:
        return [] if has_constant_mask(self.numel, self.target) else ["xmask"]

    def tiled_masks(self, index: sympy.Expr) -> list[str]:
        """In a 2-D kernel: ymask and/or xmask, for the tile dims the index varies along."""
        full = self.flat_form(index)
        masks = []
        if YINDEX in full.free_symbols and not has_constant_mask_y(self.ynumel, self.target):  # type: ignore[arg-type]
            masks.append("ymask")
        if XINDEX in full.free_symbols and not has_constant_mask(self.numel, self.target):
            masks.append("xmask")
        return masks

    def load_masks(self, index: sympy.Expr, indirect: Sequence[SSAValue] = ()) -> list[str]:
        """The tile masks an access needs: those of the dims its index walks; a loaded position
        may come from any lane, so an indirect access takes them all."""
        if self.split is None:
            return self.masks
        return self.tiled_masks(index + XINDEX + YINDEX if indirect else index)

    # -- lanes ---------------------------------------------------------------------------------

    def definitions(self) -> list[tuple[str, sympy.Expr]]:
        return [*self.index_vars.values(), *self.y_vars.values()]

    def flat_ranges(self) -> dict[sympy.Symbol, sympy.Expr]:
        return {XINDEX: self.numel} if self.ynumel is None else {XINDEX: self.numel, YINDEX: self.ynumel}

    def lane_trees(self) -> list[tuple[sympy.Symbol, sympy.Expr, IndexRegistry]]:
        trees = super().lane_trees()
        if self.ynumel is not None:
            trees.append((YINDEX, self.ynumel, self.y_vars))
        return trees

    def is_strided(self, index: sympy.Expr) -> bool:
        """No unit stride along xindex, so lanes touch more cache lines than they fill and later
        programs read those lines again: a strided 1-D read, or in a 2-D tile a read with no unit
        stride at all, or the transposed one (unit stride along yindex only: a tile reads YBLOCK
        elements of each line, 64 bytes of a bf16 32x32 tile, and the tile next along y the rest;
        Inductor's code for that kernel keeps it in L2 too; H100, BERT's [4, 512, 768] bf16 key
        transposed and scaled into f32: 7.4 -> 5.7 us). A symbolic stride counts as unit."""
        if self.ynumel is None:
            return super().is_strided(index)
        full = self.flat_form(index)
        x_step = step_along(full, XINDEX, [YINDEX])
        if x_step == 1:
            return False
        y_step = step_along(full, YINDEX, [XINDEX])
        return y_step == 1 or (x_step.is_Integer and y_step.is_Integer)

    # -- the kernel ----------------------------------------------------------------------------

    def body_ops(self) -> list[Operation]:
        return [*self.used_definitions(self.y_vars), *self.used_definitions(self.index_vars), *self.ops]

    def kernel_op(
        self, name: str, body: Region, origins: Sequence[str], configs: Sequence[triton.ConfigAttr]
    ) -> triton.KernelOp:
        return triton.KernelOp(name, "pointwise", self.numel, body, origins=origins, configs=configs, ynumel=self.ynumel)


def build_pointwise_kernel(
    members: Sequence[buffer.ComputedOp],
    layouts: dict[str, LayoutAttr],
    roots: dict[str, str],
    local: set[str],
    target: Target,
    autotune: bool = True,
    tile_2d: bool = True,
    check_indices: bool = False,
) -> GroupKernels:
    """The kernel of a group without reductions, 2-D where `launch.pointwise_tiling` splits it
    (and `tile_2d` allows), with its configs (one without `autotune`)."""
    numels = [sympy.Mul(*m.range_exprs) for m in members]
    if any(not equal(n, numels[0]) for n in numels[1:]):
        names = ", ".join(f"{m.buffer.data} ({expr_str(n)})" for m, n in zip(members, numels))
        raise PassFailedException(f"convert-to-triton: fused members iterate different numels: {names}")
    builder = PointwiseKernelBuilder(numels[0], layouts, roots, local, target=target, check_indices=check_indices)
    scatters = any(isinstance(m, buffer.ScatterOp) for m in members)
    split = pointwise_tiling(members, roots, local) if tile_2d and not scatters else None
    if split is not None:
        builder.tile(members[0].range_exprs, split)
    for m in members:
        builder.add_member(m)
    if builder.ynumel is not None:
        configs = pointwise_configs_2d(size_hint(builder.ynumel), size_hint(builder.numel), autotune, target)
    else:  # a scatter adds into memory: it cannot be re-run to time configs
        configs = pointwise_configs(builder.numel, autotune and not scatters, target)
    origins = sorted({o for m in members for o in m.origin_names})
    kernel = builder.build("", origins, configs)
    return GroupKernels([kernel], builder.launch_args(), builder.numel, ynumel=builder.ynumel)
