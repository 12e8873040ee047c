"""mlc: PyTorch Inductor rebuilt as an MLIR-style pass pipeline on xDSL.

The embedding API, kept light (`import mlc` pulls in neither torch nor triton):

    import mlc
    module = mlc.parse_module(text)                       # parse + verify; CompileError on bad IR
    mlc.run_passes(module, "lower-aten,inline,realize")   # the same pipeline syntax as mlc-opt -p
    print(module)

    @mlc.register_pass                                     # make your own pass available by name
    @dataclass(frozen=True)
    class MyPass(ModulePass):
        name = "my-pass"
        def apply(self, ctx, op): ...

`mlc.compile_fx(gm, example_inputs)` compiles an FX graph to a callable that runs the
generated Triton kernels; `torch.compile(model, backend="mlc")` uses it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from xdsl.context import Context
    from xdsl.dialects.builtin import ModuleOp


def make_context() -> Context:
    """A context with every dialect mlc's IR may hold."""
    from mlc.dialects.registry import make_context as make

    return make()


def parse_module(text: str, name: str = "<string>", ctx: Context | None = None) -> ModuleOp:
    """Parse and verify IR text; raises `mlc.tools.diagnostics.CompileError` with file:line:col."""
    from mlc.tools.diagnostics import Source, parse_source

    return parse_source(ctx or make_context(), Source(name, text))


def run_passes(module: ModuleOp, pipeline: str, ctx: Context | None = None,
               on_remark: Callable[[Any], None] | None = None) -> ModuleOp:
    """Run `pipeline` ('lower-aten,inline{reads-threshold=1}') over `module` in place, verifying
    after each pass; a failure raises `mlc.passes.pipeline.PassFailed` naming the pass. Passes
    asked to explain (`fuse{explain=true}`) give `on_remark` a `mlc.passes.pipeline.Remark` per
    decision."""
    from mlc.passes.pipeline import load_pipeline, run_pipeline

    run_pipeline(module, load_pipeline(pipeline), ctx or make_context(), on_remark=on_remark)
    return module


def register_pass(cls: Any) -> Any:
    """Register a ModulePass class under its `name` for pipelines and mlc-opt."""
    from mlc.passes.registry import register_pass as register

    return register(cls)


def __getattr__(name: str) -> Any:
    # compile_fx needs torch; import it only when asked for.
    if name in ("compile_fx", "MlcCompileError"):
        from mlc.frontend import backend

        return getattr(backend, name)
    raise AttributeError(f"module 'mlc' has no attribute {name!r}")
