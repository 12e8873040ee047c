"""Random valid PyTorch programs for differential testing of mlc against eager (NNSmith-style).

    program = generate(seed)              # deterministic: the same seed, the same program
    print(program.source())               # def f(x0, x1): ... as Python source
    outputs = program(*program.make_inputs(device))   # runs from the data structure

`generate` picks the writer of a seed's program: an edge program (tools/fuzz_edge.py: signed
zeros and non-finite inputs, size-0 dims, views among the outputs) for about `edge_fraction`
of the seeds, an ordinary one (tools/fuzz_generator.py: checked statements at shapes that cross
mlc's thresholds) for the others. A `Program` is plain data (tools/fuzz_program.py).
"""

from __future__ import annotations

from mlc.tools.fuzz_edge import EdgeGenerator, edge_plan
from mlc.tools.fuzz_generator import Generator
from mlc.tools.fuzz_program import Program


def generate(seed: int, max_numel: int = 400_000, backward_fraction: float = 0.5, max_stmts: int = 10,
             edge_fraction: float | None = None) -> Program:
    """The program of `seed` (deterministic: `random.Random(seed)`, values drawn from seeds).

    About `edge_fraction` of the seeds (tools/fuzz_edge.py's default when None) give an edge
    program instead: signed zeros and non-finite inputs, size-0 dims, views among the outputs.
    Which seeds, and which features, is drawn from a random stream of its own, so every other
    seed gives the program it gave before the edge programs existed."""
    plan = edge_plan(seed, edge_fraction)
    if plan is None:
        return Generator(seed, max_numel, backward_fraction, max_stmts).generate()
    return EdgeGenerator(seed, max_numel, backward_fraction, max_stmts, plan=plan).generate()
