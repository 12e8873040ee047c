"""`make demo`: mlc on a transformer's MLP block (docs/examples/mlp_block.py), showing fusion.

1. `mlc-opt` runs the passes up to `fuse` over the imported aten IR (docs/examples/mlp_block.mlir)
   and prints the buffer graph: which nodes are stored, and which share a kernel;
   `fuse{explain=true}` says why, as remarks;
2. `mlc-opt` runs the rest of the pipeline on that IR, and `mlc-translate --emit-python` turns
   it into a Python module: the demo prints its Triton kernels and `call`;
3. `torch.compile(model, backend="mlc")` runs the model with those kernels (Triton's
   interpreter on CPU when there is no GPU) and compares with eager PyTorch.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXAMPLE = "docs/examples/mlp_block.mlir"
WIDTH = 110  # longer lines are cut, marked with ` ...`
NODES = ("buffer.extern", "buffer.computed", "buffer.fused", "buffer.output")


def shorten(line: str) -> str:
    return line if len(line) <= WIDTH else line[: WIDTH - 4] + " ..."


def nodes(ir: str) -> str:
    """The buffer graph's nodes, one line each, inside their fused groups; bodies and the
    reads/writes `deps` annotated left out (`mlc-opt` prints them whole)."""
    out = []
    for line in ir.splitlines():
        text = line.strip()
        if text.startswith(NODES):
            head = text.split(" {reads")[0].split(" attributes {")[0]
            head = head if head == "buffer.fused {" else head.removesuffix(" {")
            out.append(shorten(line[: len(line) - len(line.lstrip())] + head))
        elif line == "    }":
            out.append(line)  # the end of a fused group (a body ends `} attributes {...}`)
    return "\n".join(out)


def kernels(module: str) -> str:
    """The emitted module from its first kernel to the end of `call` (imports and the
    `precompile` table left out)."""
    start = module.index("# origins:")
    end = module.find("\nprecompile = ")
    return "\n".join(shorten(line) for line in module[start:end].rstrip().splitlines())


def banner(text: str) -> None:
    print(f"\n{'=' * WIDTH}\n== {text}\n{'=' * WIDTH}", flush=True)


def tool(argv: list[str], stdin: str | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed:\n{done.stderr}")
    return done


def main() -> int:
    from mlc.passes.registry import PASSES

    os.chdir(HERE.parents[1])  # the repository root: the paths the demo prints are relative to it
    names = list(PASSES)
    upto = names.index("fuse") + 1
    first = ",".join(names[: upto - 1] + ["fuse{explain=true}"])
    rest = ",".join(names[upto:])

    banner("the model: docs/examples/mlp_block.py")
    source = (HERE / "mlp_block.py").read_text()
    print(source[source.index("    def forward"):source.index("\n\n\n", source.index("    def forward"))])

    banner(f"mlc-import docs/examples/mlp_block.py:model --shape 8x32:f32  (= {EXAMPLE}; lines cut)")
    print("\n".join(shorten(line) for line in Path(EXAMPLE).read_text().splitlines()))

    banner(f"mlc-opt {EXAMPLE} -p '{first}'")
    buffers = tool(["mlc-opt", EXAMPLE, "-p", first])
    print("// the buffer graph's nodes (their bodies and `deps`' reads and writes left out)")
    print(nodes(buffers.stdout))
    print("\n// fuse{explain=true}: each pair of nodes that share a buffer, and what became of it")
    print(buffers.stderr.rstrip())

    banner(f"mlc-opt -p '{rest}' | mlc-translate --emit-python")
    triton = tool(["mlc-opt", "-p", rest], stdin=buffers.stdout)
    module = tool(["mlc-translate", "--emit-python"], stdin=triton.stdout)
    print(kernels(module.stdout))

    banner('torch.compile(model, backend="mlc") against eager')
    import torch

    if not torch.cuda.is_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")
    sys.path.insert(0, str(HERE))
    from mlp_block import model

    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = model.to(device)
    x = torch.randn(8, 32, device=device)
    with torch.no_grad():
        expected = model(x)
        got = torch.compile(model, backend="mlc")(x)
    error = (got - expected).abs().max().item()
    print(f"device {device}: max |mlc - eager| = {error:.3g}")
    print(f"\nThe IR after every pass: mlc-opt {EXAMPLE} -p '{','.join(names)}' --print-ir-after-all")
    return 0 if error < 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())
