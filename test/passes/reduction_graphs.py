"""buffer.graph texts of single reductions, for tests (a plain module: test/ is not a package).

    reduction_graph("sum", [3, 20000], [1])    # x.sum(1) of a contiguous [3, 20000] f32 tensor

The body loads `x` (contiguous, `shape`) at the point given by kept indices i* and reduced
indices r0_* (the `dims` reduced, in order), applies `prologue` lines to `%v`, reduces it and
applies `epilogue` lines to `%r` before storing `%out` (`%r` by default). Output layout:
contiguous over the kept sizes.
"""

from __future__ import annotations

from collections.abc import Sequence

RESULT = {"argmax": "i64", "argmin": "i64", "any": "i1"}


def contiguous(shape: Sequence[int]) -> list[int]:
    strides, running = [], 1
    for n in reversed(shape):
        strides.append(running)
        running *= n
    return strides[::-1]


def layout(shape: Sequence[int], dtype: str) -> str:
    return f"#buffer.layout<{list(shape)}, {contiguous(shape)}, {dtype}>"


def _index(terms: list[tuple[str, int]]) -> str:
    parts = [var if stride == 1 else f"{stride}*{var}" for var, stride in terms if stride]
    return " + ".join(parts) or "0"


def reduction_node(
    name: str, kind: str, shape: Sequence[int], dims: Sequence[int], dtype: str = "f32", value: str = "",
    prologue: str = "", epilogue: str = "", out_dtype: str | None = None, origins: str = "",
) -> str:
    """One buffer.computed reducing `x`; `value` is the reduced type (the load's by default)."""
    strides = contiguous(shape)
    kept = [d for d in range(len(shape)) if d not in dims]
    names = {d: f"i{kept.index(d)}" for d in kept} | {d: f"r0_{list(dims).index(d)}" for d in dims}
    index = _index([(names[d], strides[d]) for d in range(len(shape))])
    out_shape = [shape[d] for d in kept]
    out_index = _index([(f"i{k}", s) for k, s in enumerate(contiguous(out_shape))])
    value = value or dtype
    results = {"welford": f"({value}, {value}, {value})"}.get(kind, RESULT.get(kind, value))
    out_dtype = out_dtype or results.strip("()").split(",")[0]
    lhs = "%r, %m2, %w" if kind == "welford" else "%r"
    body = [f"%x = buffer.load @x[{index}] : {dtype}"]
    body += [line for line in prologue.splitlines() if line.strip()]
    reduced = "%v" if prologue.strip() else "%x"
    body.append(f"{lhs} = buffer.reduce {kind} {reduced} : {value} -> {results}")
    body += [line for line in epilogue.splitlines() if line.strip()]
    out = "%out" if epilogue.strip() else "%r"
    body.append(f"buffer.store @{name}[{out_index}], {out} : {out_dtype}")
    reduce_sizes = [shape[d] for d in dims]
    origins = origins or f'["{kind}"]'
    return (
        f'buffer.computed "{name}" {layout(out_shape, out_dtype)} ranges {out_shape} reduce {reduce_sizes} '
        f"origins {origins} {{\n  " + "\n  ".join(body) + "\n}"
    )


def graph(nodes: Sequence[str], shape: Sequence[int], dtype: str = "f32", outputs: Sequence[str] = ("buf0",)) -> str:
    return (
        f'buffer.graph @forward {{\nbuffer.input "x" {layout(shape, dtype)}\n' + "\n".join(nodes)
        + "\nbuffer.output " + ", ".join(f"@{o}" for o in outputs) + "\n}"
    )


def reduction_graph(kind: str, shape: Sequence[int], dims: Sequence[int], dtype: str = "f32", **node: str) -> str:
    return graph([reduction_node("buf0", kind, shape, dims, dtype, **node)], shape, dtype)
