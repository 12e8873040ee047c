"""`make demo`: mlc on seed 000's MLP + gelu, stage by stage.

1. `mlc-opt` runs every registered pass over the imported aten IR (docs/examples/mlp_gelu.mlir,
   made by `mlc-import docs/examples/mlp_gelu.py:model --shape 8x32:f32`), printing the IR
   after each pass;
2. `mlc-translate --emit-python` turns the triton-dialect result into a Python module;
3. `torch.compile(model, backend="mlc")` runs the model with those kernels (Triton's
   interpreter on CPU when there is no GPU) and compares with eager PyTorch.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


WIDTH = 110  # the demo's lines; the IR itself is in the files (mlc-opt prints it whole)
DUMP = re.compile(r"^// -----// IR Dump After (\S+) //----- //$", re.M)


def shorten(text: str) -> str:
    """Lines cut at WIDTH characters, marked with ` ...`."""
    return "\n".join(line if len(line) <= WIDTH else line[: WIDTH - 4] + " ..." for line in text.splitlines())


def after_each_pass(dumps: str, before: str) -> str:
    """`--print-ir-after-all`'s dumps, each pass's IR shortened, or one line where the pass left
    the IR as it was."""
    parts = DUMP.split(dumps)
    out, previous = [], before.strip()
    for name, ir in zip(parts[1::2], parts[2::2]):
        ir = ir.strip()
        if ir == previous:
            out.append(f"// -----// after {name}: unchanged //----- //")
        else:
            out.append(f"// -----// IR after {name} //----- //\n{shorten(ir)}")
        previous = ir
    return "\n\n".join(out)


def banner(text: str) -> None:
    print(f"\n{'=' * 100}\n== {text}\n{'=' * 100}", flush=True)


def main() -> int:
    from mlc.passes.registry import PASSES

    pipeline = ",".join(PASSES)
    example = HERE / "mlp_gelu.mlir"
    banner(f"aten IR: {example.relative_to(Path.cwd()) if example.is_relative_to(Path.cwd()) else example}")
    print(shorten(example.read_text()), flush=True)
    banner(f"mlc-opt -p '{pipeline}' --print-ir-after-all  (lines cut at {WIDTH} characters)")
    lowered = subprocess.run(
        ["mlc-opt", str(example), "-p", pipeline, "--print-ir-after-all"],
        capture_output=True, text=True,
    )
    if lowered.returncode != 0:
        print(lowered.stderr, flush=True)
        return lowered.returncode
    print(after_each_pass(lowered.stderr, example.read_text()), flush=True)  # stderr, as in mlir-opt
    banner("mlc-translate --emit-python")
    emitted = subprocess.run(["mlc-translate", "--emit-python"], input=lowered.stdout,
                             capture_output=True, text=True)
    print(shorten(emitted.stdout) if emitted.returncode == 0 else emitted.stderr, flush=True)
    if emitted.returncode != 0:
        return emitted.returncode

    banner('torch.compile(model, backend="mlc") against eager')
    import torch

    if not torch.cuda.is_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")
    sys.path.insert(0, str(HERE))
    from mlp_gelu import model

    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = model.to(device)
    x = torch.randn(8, 32, device=device)
    with torch.no_grad():
        expected = model(x)
        got = torch.compile(model, backend="mlc")(x)
    error = (got - expected).abs().max().item()
    print(f"device {device}: max |mlc - eager| = {error:.3g}")
    return 0 if error < 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())
