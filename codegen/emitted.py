"""What emit-python hands the runtime: one emitted module, its source and the facts of its `call`.

    emitted = emit_module(triton_module)       # mlc.codegen.emit_python
    call = load_call(emitted.source)           # mlc.codegen.runtime
    emitted.input_layouts                      # what `call` assumed of each input
    emitted.output_layouts                     # how `call` lays out each result
    emitted.launches                           # (Triton kernel launches, extern calls) per call

The facts are read from the triton IR's `triton.wrapper` when the source is emitted, so that
nothing after emission (the torch.compile backend, its compile cache, its CUDA-graph policy)
reads the IR again: the object is the whole result of a compile, and the compile cache stores
and restores exactly its fields. Plain data: every field is a str, int or tuple of them.
"""

from __future__ import annotations

from dataclasses import dataclass

Layout = tuple[tuple[int, ...], tuple[int, ...]]
"""A buffer's (sizes, strides); None in a sequence of layouts where they are symbolic."""


@dataclass(frozen=True)
class EmittedModule:
    """An emitted Python module: its text, and what its `call(args)` expects and does."""

    source: str
    # Per graph input, in argument order: the layout the kernels index it with (None: a size
    # input, or a tensor of symbolic sizes, which `call` takes row-major).
    input_layouts: tuple[Layout | None, ...]
    # Per returned result, in order: its layout (None: unknown or symbolic).
    output_layouts: tuple[Layout | None, ...]
    # Per call: how many Triton kernels `call` launches, and how many extern calls it makes.
    launches: tuple[int, int]
