"""The debug dump: `MLC_DUMP_DIR=<dir>` writes every compiled graph's IR after each pass.

    <dir>/graph_0_forward/00-aten.mlir            the imported graph
    <dir>/graph_0_forward/01-lower-aten.mlir      after each pass, numbered in pipeline order
    <dir>/graph_0_forward/02-inline.mlir
    <dir>/graph_0_forward/03-realize.mlir
    <dir>/graph_0_forward/04-split-reductions.mlir
    <dir>/graph_0_forward/...                     reorder-loops, fuse, overlap-comm, convert-to-triton, ...
    <dir>/graph_0_forward/fusion.txt              --fuse's remarks (explain): every candidate with its
                                                  score, merge and refusal (with its category), then
                                                  the count of refusals per category; after the
                                                  first call, each GEMM kernel's choice (`gemm=measure`:
                                                  fused kernel or cuBLAS + epilogue, with both times)
    <dir>/graph_0_forward/fusion.dot              the fused graph as Graphviz dot (mlc-translate --emit-dot;
                                                  fusion.svg too where the `dot` program exists)
    <dir>/graph_0_forward/overlap.txt             --overlap-comm's remarks (explain), for a graph with
                                                  collectives: how far each start and wait moved, what
                                                  stopped it, what runs while it is in flight
    <dir>/graph_0_forward/cudagraphs.txt          whether the graph's calls replay CUDA graphs and why
                                                  (`cudagraphs.policy`), and why a capture failed
    <dir>/graph_0_forward/memory.txt              the wrapper's peak of live bytes (its own allocations,
                                                  and with the inputs it frees), and the op where it falls
    <dir>/graph_0_forward/cost.txt                each kernel launch's predicted GPU time on the target
                                                  (`analysis/cost.py`; MLC_COST_TARGET: a calibration's
                                                  JSON, else the H100's datasheet), what bounds it,
                                                  what it moves, and the sum
    <dir>/graph_0_forward/module.py               the emitted Python (kernels + call), each launch
                                                  with cost.txt's predicted time as a comment
    <dir>/graph_0_forward/reproducer.mlir         where a pass failed: its input IR (the error names it,
                                                  with the mlc-opt command that fails the same way)
    <dir>/graph_0_forward/timing.txt              wall time of the import, each pass and its
                                                  verification, emitting and loading the Python, and
                                                  the first call (Triton's compile and autotuning);
                                                  its `compile cache: hit|miss|stale <key>` row says
                                                  whether the compile cache held the graph (a dumped
                                                  graph is compiled all the same, so that every pass
                                                  is dumped)
    <dir>/graph_1_backward/...                    the next graph compiled (AOTAutograd's backward;
                                                  a graph without gradients is a forward)

IR is printed with locations (`loc("mul_2")`), so every op can be traced to its FX node; any
dumped `.mlir` file is valid input to `mlc-opt` for re-running the rest of the pipeline.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from pathlib import Path

from typing import TYPE_CHECKING

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.printer import Printer

if TYPE_CHECKING:
    from mlc.passes.pipeline import Remark


def print_ir(module: ModuleOp) -> str:
    """The module's text with locations, as the dump writes it."""
    out = io.StringIO()
    Printer(stream=out, print_debuginfo=True).print_op(module)
    return out.getvalue() + "\n"


LAUNCH = re.compile(r"\s*launch\((\w+),")  # a launch in an emitted `call`, and its kernel


class GraphDump:
    """The dump directory of one compiled graph."""

    def __init__(self, root: Path, graph_id: str, cost_target: str | None = None):
        self.dir = root / graph_id
        self.cost_target = cost_target  # the calibration cost.txt predicts with (None: the H100's datasheet)
        self.dir.mkdir(parents=True, exist_ok=True)
        for stale in self.dir.iterdir():  # a previous process's graph of the same id
            if stale.is_file():
                stale.unlink()
        self.step = 0
        self.remarks: dict[str, list[str]] = {}  # pass name -> its remarks, in order
        self.predicted: list[tuple[str, str]] = []  # per launch, in order: kernel, predicted time (`write_cost`)

    def on_remark(self, remark: Remark) -> None:
        self.remarks.setdefault(remark.pass_name, []).append(remark.message)

    def after_pass(self, pass_: ModulePass | None, module: ModuleOp) -> None:
        """Write `NN-<pass>.mlir` (`00-aten.mlir` for the imported module, pass None)."""
        name = "aten" if pass_ is None else pass_.name
        (self.dir / f"{self.step:02d}-{name}.mlir").write_text(print_ir(module))
        self.step += 1
        if name == "fuse":  # the backend runs it with explain=true when dumping
            self.write("fusion.txt", "".join(f"{line}\n" for line in self.remarks.get(name, [])))
            self.write_picture(module)
        if name == "overlap-comm" and self.remarks.get(name):  # a graph with collectives
            self.write("overlap.txt", "".join(f"{line}\n" for line in self.remarks[name]))
        if name == "plan-buffers":  # the wrapper as it will run
            self.write_memory(module)
            self.write_cost(module)

    def write_memory(self, module: ModuleOp) -> None:
        """memory.txt: the wrapper's peak of live bytes (`mlc.analysis.memory.report`)."""
        from mlc.analysis.memory import report
        from mlc.dialects.triton import WrapperOp

        self.write("memory.txt", "".join(report(op) for op in module.body.block.ops if isinstance(op, WrapperOp)))

    def write_cost(self, module: ModuleOp) -> None:
        """cost.txt: each launch's predicted time (`mlc.analysis.cost.report`) on the calibrated
        target of MLC_COST_TARGET, or the H100's datasheet."""
        from mlc.analysis.cost import predictions, report
        from mlc.analysis.target import H100, Target

        try:
            target = H100 if self.cost_target is None else Target.load(self.cost_target)
            predicted = predictions(module, target)
            text = report(module, target, predicted)
            self.predicted = [(name, f"{p.us:.2f} us ({p.bound})") for name, p in predicted]
        except Exception as e:  # noqa: BLE001 (a debug file never fails the compile; it says what failed)
            text = f"the cost model failed on this graph: {type(e).__name__}: {e}\n"
        self.write("cost.txt", text)

    def write_module(self, source: str) -> None:
        """module.py: the emitted Python, each launch followed by its predicted time (cost.txt's)."""
        pending: dict[str, list[str]] = {}  # per kernel, its launches' predictions in order
        for kernel, predicted in self.predicted:
            pending.setdefault(kernel, []).append(predicted)
        lines = []
        for line in source.splitlines():
            found = LAUNCH.match(line)
            if found and pending.get(found.group(1)):
                line += f"  # predicted {pending[found.group(1)].pop(0)}"
            lines.append(line)
        self.write("module.py", "\n".join(lines) + "\n")

    def write_picture(self, module: ModuleOp) -> None:
        """fusion.dot, the fused graph (`mlc.codegen.emit_dot`), and fusion.svg where Graphviz's
        `dot` program is installed."""
        from mlc.codegen.emit_dot import emit_dot

        text = emit_dot(module)
        self.write("fusion.dot", text)
        program = shutil.which("dot")
        if program is not None:
            subprocess.run([program, "-Tsvg", "-o", str(self.dir / "fusion.svg")], input=text, text=True,
                           capture_output=True, timeout=60, check=False)

    def write(self, filename: str, text: str) -> None:
        (self.dir / filename).write_text(text)

    def append(self, filename: str, text: str) -> None:
        with (self.dir / filename).open("a") as f:
            f.write(text)

