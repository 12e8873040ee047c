"""mlc-import: a PyTorch program → aten IR.

    mlc-import model.pt2                                  # saved by torch.export.save
    mlc-import model.py:forward --shape 8x32:f32 --shape 4:i64 [-o out.mlir]

The `file.py:name` form loads the file, wraps `name` (a function, an nn.Module instance, or an
nn.Module class constructible without arguments) in a module, exports it with fake inputs of
the given shapes (`8x32:f32`; `:f32` or `scalar:f32` for a 0-d tensor; dtype defaults to f32:
shapes and dtypes, no memory, so any size imports) and imports it. The IR is printed with
locations (`loc("mul_2")`).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import inspect
import io
import os
import sys
import traceback
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

# torch is imported only once the arguments are known good: it takes seconds to load.

DTYPE_SPELLINGS = {
    "f32": "float32",
    "f16": "float16",
    "bf16": "bfloat16",
    "f64": "float64",
    "i64": "int64",
    "i32": "int32",
    "i8": "int8",
    "u8": "uint8",
    "i1": "bool",
    "bool": "bool",
}


class UsageError(Exception):
    """A mistake on the command line or in the input; reported as one line, exit status 1."""


def parse_shape(spec: str) -> tuple[list[int], str]:
    """`8x32:f32` -> ([8, 32], "float32")."""
    dims, _, dtype = spec.partition(":")
    dtype = dtype or "f32"
    if dtype not in DTYPE_SPELLINGS:
        raise UsageError(
            f"bad --shape {spec!r}: unknown dtype {dtype!r} (one of {', '.join(DTYPE_SPELLINGS)})"
        )
    if dims in ("", "scalar"):
        return [], DTYPE_SPELLINGS[dtype]
    try:
        shape = [int(d) for d in dims.split("x")]
    except ValueError:
        shape = []
    if not shape or any(d < 0 for d in shape):
        raise UsageError(f"bad --shape {spec!r}: expected sizes like 8x32, then an optional :dtype")
    return shape, DTYPE_SPELLINGS[dtype]


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # argparse prints the usage and exits 2; mlc's tools report one line and exit 1.
        self.exit(1, f"{self.prog}: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    p = _ArgumentParser(
        prog="mlc-import",
        description="Import a torch.export program or a Python function as aten IR.",
    )
    p.add_argument("input", help="a .pt2 file (torch.export.save) or FILE.py:NAME")
    p.add_argument(
        "--shape",
        action="append",
        default=[],
        metavar="SIZES[:DTYPE]",
        help="an example input for FILE.py:NAME, e.g. 8x32:f32 (repeat once per input)",
    )
    p.add_argument("-o", "--output", help="write the IR here instead of stdout")
    p.add_argument("--debug", action="store_true", help="print tracebacks of internal errors")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if not args.debug:
        warnings.simplefilter("ignore", FutureWarning)  # torch's deprecation notices are noise here
    try:
        shapes = [parse_shape(s) for s in args.shape]
        # torch writes warnings, log lines and graph dumps to stderr while it exports (and
        # before raising); the user gets one line, and --debug shows the rest.
        with _stderr_to_nowhere(enabled=not args.debug):
            text = run(args.input, shapes)
        if args.output:
            try:
                Path(args.output).write_text(text)
            except OSError as e:
                raise UsageError(f"{args.output}: {e.strerror}") from e
        else:
            sys.stdout.write(text)
        return 0
    except UsageError as e:
        return _fail(str(e))
    except Exception as e:  # noqa: BLE001 - an internal error: one line unless --debug
        if args.debug:
            traceback.print_exc()
        return _fail(
            f"internal error: {type(e).__name__}: {_first_line(e)} (--debug shows the traceback)"
        )


def run(source: str, shapes: list[tuple[list[int], str]]) -> str:
    """The printed IR of `source` (a .pt2 path or FILE.py:NAME)."""
    path, sep, name = source.rpartition(":")
    is_function = bool(sep) and path.endswith(".py")
    file = Path(path if is_function else source)
    if not is_function and shapes:
        raise UsageError("--shape is only for FILE.py:NAME inputs")
    if not is_function and source.endswith(".py"):
        raise UsageError(f"{source}: name the function to import, as {source}:NAME")
    if not file.is_file():
        raise UsageError(f"{file}: no such file")

    from mlc.frontend.export import import_exported
    from mlc.frontend.importer import UnsupportedGraph

    ep = _export_function(file, name, shapes) if is_function else _load_pt2(file)
    try:
        imported = import_exported(ep)
    except UnsupportedGraph as e:
        raise UsageError(str(e)) from e
    return _print(imported.module)


def _load_pt2(path: Path) -> Any:
    import torch

    try:
        return torch.export.load(str(path))
    except Exception as e:
        raise UsageError(f"{path}: not a torch.export program: {_first_line(e)}") from e


def _export_function(path: Path, name: str, shapes: list[tuple[list[int], str]]) -> Any:
    import torch

    spec = importlib.util.spec_from_file_location(f"_mlc_import_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        raise UsageError(f"{path}: {type(e).__name__}: {_first_line(e)}") from e
    obj = getattr(module, name, None)
    if obj is None:
        raise UsageError(f"{path}: no function or module named {name!r}")
    if isinstance(obj, type) and issubclass(obj, torch.nn.Module):
        obj = _instantiate(path, obj)
    if not isinstance(obj, torch.nn.Module):
        if not callable(obj):
            raise UsageError(f"{path}: {name!r} is not callable")
        obj = _as_module(obj)
    inputs = _example_inputs(shapes)
    try:
        return torch.export.export(obj.eval(), inputs)
    except Exception as e:
        raise UsageError(f"torch.export failed: {type(e).__name__}: {_first_line(e)}") from e


def _instantiate(path: Path, cls: type) -> Any:
    """`cls()`; a class whose constructor needs arguments is refused, saying what to name instead."""
    try:
        needed = [p.name for p in inspect.signature(cls).parameters.values()
                  if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    except (TypeError, ValueError):  # no signature to read: try the call
        needed = []
    if needed:
        raise UsageError(f"{path}: class {cls.__name__} needs constructor arguments ({', '.join(needed)}); name an "
                         f"instance instead (model = {cls.__name__}(...) in the file, then {path}:model), or a "
                         f"function that builds and calls it, or import a torch.export .pt2")
    try:
        return cls()
    except Exception as e:
        raise UsageError(f"{path}: {cls.__name__}() failed: {type(e).__name__}: {_first_line(e)}") from e


def _example_inputs(shapes: list[tuple[list[int], str]]) -> tuple[Any, ...]:
    """Fake tensors of `shapes`: export needs only their shapes and dtypes, so no size
    allocates memory (torch.export traces with fake tensors itself; it takes the mode of these)."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode(allow_non_fake_inputs=True):
        return tuple(torch.empty(shape, dtype=getattr(torch, dtype)) for shape, dtype in shapes)


def _as_module(fn: Any) -> Any:
    import torch

    class Function(torch.nn.Module):
        def forward(self, *args: Any) -> Any:
            return fn(*args)

    # torch.export names the placeholders after forward's parameters: give it fn's.
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature: keep *args
        return Function()
    self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    Function.forward.__signature__ = inspect.Signature([self_param, *params])  # type: ignore[attr-defined]
    return Function()


def _print(module: Any) -> str:
    from xdsl.printer import Printer

    stream = io.StringIO()
    Printer(stream=stream, print_debuginfo=True).print_op(module)
    return stream.getvalue() + "\n"


@contextlib.contextmanager
def _stderr_to_nowhere(enabled: bool) -> Iterator[None]:
    if not enabled:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    with open(os.devnull, "w") as devnull, contextlib.redirect_stderr(devnull):
        os.dup2(devnull.fileno(), 2)  # also what C++ and early-bound log handlers write
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def _fail(message: str) -> int:
    print(f"mlc-import: error: {message}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
