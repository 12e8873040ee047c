"""emit-python's GEMM kernels: a `matmul` triton.kernel as a `@triton.jit` function.

    pid = tl.program_id(0) + tl.program_id(1) * tl.num_programs(0)
    ... y_tile, x_tile: pid in groups of GROUP_Y rows of tiles ...
    yindex = y_tile * YBLOCK + tl.arange(0, YBLOCK)[:, None]      # M: [YBLOCK, 1]
    xindex = x_tile * XBLOCK + tl.arange(0, XBLOCK)[None, :]      # N: [1, XBLOCK]
    _tmp1 = tl.broadcast_to(tmp0, [YBLOCK, XBLOCK])                # the accumulator
    for r0_offset in range(0, r0_numel, R0_BLOCK):
        r0_index = r0_offset + r0_base[None, :]                    # K along an A tile's columns
        r0_index_t = r0_offset + r0_base[:, None]                  # K along a B tile's rows
        tmp2 = tl.load(...)                                        # [YBLOCK, R0_BLOCK]
        tmp3 = tl.load(...)                                        # [R0_BLOCK, XBLOCK]
        tmp4 = tl.dot(tmp2, tmp3, _tmp1, input_precision="ieee")
        _tmp1 = tmp4
    ... the epilogue on [YBLOCK, XBLOCK] tiles, stores ...

The launch's grid is a 2-D tiled kernel's, (cdiv(xnumel, XBLOCK), cdiv(ynumel, YBLOCK)), with z
= znumel for a batched kernel: `zindex = tl.program_id(2)`, the product a program computes,
which its loads and stores index (a scalar). The kernel renumbers its programs so that GROUP_Y
consecutive ones walk down a column of tiles before the next column (the grouped order of
Triton's matmul tutorial and Inductor's templates: the B tiles a group reads stay in L2).
GROUP_Y is 8, as in both.

A grouped product's loop (`triton.rloop groups(%g)`, `_grouped_mm`) takes the smallest and
largest group among the tile's rows: a tile of one group runs the K loop above with B at that
group; a tile straddling groups runs it once per group, its A loads masked to the group's rows
(`in_group`), the products summing into the one accumulator.

    group_first = tl.min(tl.where(ymask, tmp2, 8))
    group_last = tl.max(tl.where(ymask, tmp2, -1))
    if group_first == group_last:
        group = group_first
        for r0_offset in range(0, r0_numel, R0_BLOCK): ...
    else:
        for group in range(group_first, group_last + 1):
            in_group = tmp2 == group
            for r0_offset in range(0, r0_numel, R0_BLOCK): ...
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation, SSAValue

from mlc.analysis.target import CUDA_MAX_GRID_Y as MAX_GRID_Y
from mlc.codegen.emit_kernel import _ReductionKernelEmitter, _jit, _static_numels
from mlc.dialects import triton as tt
from mlc.dialects.sym import expr_str

GROUP_Y = 8
_TILE = "[YBLOCK, XBLOCK]"


class MatmulKernelEmitter(_ReductionKernelEmitter):
    grouped = False  # in a grouped product's loop over the groups of the tile's rows
    group_rows_only = False  # emitting the load of such a loop's A tile

    def emit(self) -> str:
        k = self.kernel
        batched = k.znumel is not None
        params = [*k.arg_names, *k.size_args, *(["znumel"] if batched else []), "ynumel", "xnumel", "r0_numel",
                  "YBLOCK: tl.constexpr", "XBLOCK: tl.constexpr", "R0_BLOCK: tl.constexpr"]
        head = [f"# origins: {', '.join(k.origin_names)}"] if k.origin_names else []
        head += [
            _jit(k), f"def {k.sym_name.data}({', '.join(params)}):", *_static_numels(k),
            f"    GROUP_Y: tl.constexpr = {GROUP_Y}",
            *self._programs(),
            "    x_tiles = (xnumel + XBLOCK - 1) // XBLOCK",
            "    first_y = (pid // (GROUP_Y * x_tiles)) * GROUP_Y",
            "    group_rows = tl.minimum(y_tiles - first_y, GROUP_Y)",
            "    yoffset = (first_y + (pid % (GROUP_Y * x_tiles)) % group_rows) * YBLOCK",
            "    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]",
            "    ymask = yindex < ynumel",
            "    xoffset = ((pid % (GROUP_Y * x_tiles)) // group_rows) * XBLOCK",
            "    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]",
            "    xmask = xindex < xnumel",
            f"    r0_base = tl.arange(0, R0_BLOCK){self.widen}",
        ]
        for op in k.body.block.ops:
            self.op(op)
        return "\n".join(head + ["    " + line for line in self.lines]) + "\n"

    def _programs(self) -> list[str]:
        """`pid`, the tile's number among its product's, and a batched kernel's `zindex`. A
        symbolic ynumel may need more y programs than CUDA's grid holds: the launch wraps them
        into z rows (`triton_helpers._grid`), and a batched kernel's z counts the products too,
        each taking `y_wraps` rows of z."""
        k, w = self.kernel, self.widen
        y_tiles = "y_tiles = (ynumel + YBLOCK - 1) // YBLOCK"  # not tl.cdiv: a jit function of triton.language
        if k.ynumel.expr.is_Integer or k.znumel is None:
            wrapped = "(tl.program_id(1) + tl.program_id(2) * tl.num_programs(1))"
            y_program = "tl.program_id(1)" if k.ynumel.expr.is_Integer else wrapped
            batch = [f"zindex = tl.program_id(2){w}"] if k.znumel is not None else []
            lines = [*batch, f"pid = tl.program_id(0){w} + {y_program}{w} * tl.num_programs(0)", y_tiles]
        else:
            y_program = "(tl.program_id(1) + (tl.program_id(2) % y_wraps) * tl.num_programs(1))"
            lines = [y_tiles, f"y_wraps = (y_tiles + {MAX_GRID_Y - 1}) // {MAX_GRID_Y}",
                     f"zindex = (tl.program_id(2) // y_wraps){w}",
                     f"pid = tl.program_id(0){w} + {y_program}{w} * tl.num_programs(0)"]
        return ["    " + line for line in lines]

    def _op(self, op: Operation) -> None:
        if isinstance(op, tt.DotOp):
            self.dot(op)
        else:
            super()._op(op)

    def load(self, op: tt.LoadOp) -> None:
        """In the loop a load reads a tile of A ([YBLOCK, R0_BLOCK]) or of B ([R0_BLOCK, XBLOCK]),
        as its index says: the shape a value mask (a padded operand's) may need its pointers in."""
        if self.shape == _TILE:
            super().load(op)
            return
        names = {s.name for s in op.index.expr.free_symbols}
        self.shape = "[YBLOCK, R0_BLOCK]" if names & {"yindex", "r0_index"} else "[R0_BLOCK, XBLOCK]" if names else "[1, 1]"
        self.group_rows_only = self.grouped and self.shape == "[YBLOCK, R0_BLOCK]"
        super().load(op)
        self.shape, self.group_rows_only = "[1, 1]", False

    def mask(self, names: Sequence[str], value: SSAValue | None) -> str:
        """A grouped product's A tile reads the rows of the loop's group, 0 for the others: in
        its load's mask, which keeps the tile on the path from memory to the tensor cores (a
        select after the load would take it through registers)."""
        text = super().mask(names, value)
        if self.group_rows_only:
            return f"{text} & in_group" if text else "in_group"
        return text

    def dot(self, op: tt.DotOp) -> None:
        a = f"tl.broadcast_to({self.v(op.lhs)}, [YBLOCK, R0_BLOCK])"
        b = f"tl.broadcast_to({self.v(op.rhs)}, [R0_BLOCK, XBLOCK])"
        if "r0_mask" in op.masks:
            a = f"tl.where(r0_mask, {a}, 0.0)"
        if self.grouped and not isinstance(op.lhs.owner, tt.LoadOp):  # the rows of this group alone
            a = f"tl.where(in_group, {a}, 0.0)"  # (a loaded A tile's load masks them)
        if "r0_mask_t" in op.masks:
            b = f"tl.where(r0_mask_t, {b}, 0.0)"
        self.define(op.result, f'tl.dot({a}, {b}, {self.v(op.accumulator)}, input_precision="{op.precision.data}")')

    def rloop(self, op: tt.RLoopOp) -> None:
        for arg, init, result in zip(op.body.block.args, op.inits, op.results):
            name = f"_{self.fresh()}"  # carried from one step to the next
            self.lines.append(f"{name} = tl.broadcast_to({self.v(init)}, {_TILE})")
            self.names[arg] = self.names[result] = name
        if op.groups is None:
            self.lines += self._k_loop(op)
            return
        # A grouped product: a tile whose rows are all of one group (most tiles) runs the K
        # loop of a plain product at that group; one whose rows straddle groups runs it once
        # per group, on that group's rows.
        assert isinstance(op.groups.owner, tt.IndirectIndexOp)
        rows, groups = self.v(op.groups), expr_str(op.groups.owner.size.expr)
        self.names[op.groups] = "group"  # in the loop the rows' groups value is the group, a scalar
        one_group = self._k_loop(op)
        self.grouped = True
        straddling = self._k_loop(op)
        self.names[op.groups], self.grouped = rows, False
        narrow = ".to(tl.int32)" if self.kernel.index_bits == 32 else ""  # B's offsets in the kernel's width
        self.lines += [f"group_first = tl.min(tl.where(ymask, {rows}, {groups})){narrow}",
                       f"group_last = tl.max(tl.where(ymask, {rows}, -1)){narrow}",
                       "if group_first == group_last:",
                       "    group = group_first",
                       *("    " + line for line in one_group),
                       "else:",
                       "    for group in range(group_first, group_last + 1):",
                       f"        in_group = {rows} == group",
                       *("        " + line for line in straddling)]

    def _k_loop(self, op: tt.RLoopOp) -> list[str]:
        """`for r0_offset ...:` and the loop's body, its ops emitted afresh."""
        outer, self.lines = self.lines, [
            "r0_index = r0_offset + r0_base[None, :]",
            "r0_mask = r0_index < r0_numel",
            "r0_index_t = r0_offset + r0_base[:, None]",
            "r0_mask_t = r0_index_t < r0_numel",
        ]
        # In the loop a tile is an A or a B tile; a value along neither side (a load at one
        # element) is [1, 1], which the dot broadcasts to its side's tile.
        self.shape = "[1, 1]"
        for inner in op.body.block.ops:
            self.op(inner)
        self.shape = _TILE
        loop = ["for r0_offset in range(0, r0_numel, R0_BLOCK):", *("    " + line for line in self.lines)]
        self.lines = outer
        return loop
