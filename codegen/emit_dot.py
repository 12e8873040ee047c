"""The buffer-level graph as Graphviz dot: what `--fuse` decided, as a picture.

    mlc-opt graph.mlir -p 'lower-aten,inline,realize,deps,fuse{explain=true}' | mlc-translate --emit-dot
    MLC_DUMP_DIR=dir ...      # the backend writes dir/graph_N_<kind>/fusion.dot (and .svg with `dot`)

One node per buffer: inputs as ellipses, computed and scatter nodes as boxes with their origins,
sizes (`reduce` sizes for reductions) and dtype, externs as 3-D boxes with their overload, views
dashed. Each kernel is a cluster, `kernel N` in program order: a `buffer.fused` group with all
its members, or a computed or scatter node alone (as --convert-to-triton makes them). An edge
runs from the node that writes a buffer to each node that reads it, labelled with the kind of
the dependency (`memory`, `star` for a whole-buffer read, `weak` for an ordering only). Where
the graph carries `--fuse{explain=true}`'s remarks, each refused candidate pair is a dashed red
edge labelled with the refusal's category, its reason in the tooltip. The output node lists the
graph's results. Output is deterministic: nodes and edges in program order.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr

from mlc.analysis.dependencies import dep_buffer, read_writes
from mlc.dialects import buffer
from mlc.dialects.buffer_layout import LayoutAttr
from mlc.dialects.sym import expr_str

DEP_KINDS = {buffer.MemoryDepAttr: "memory", buffer.StarDepAttr: "star", buffer.WeakDepAttr: "weak"}
REFUSAL = re.compile(r"^refused (\S+) \+ (\S+): \[([^\]]+)\] (.*)$")


class NoBufferGraph(ValueError):
    """The module holds no buffer.graph to draw."""


def emit_dot(module: ModuleOp) -> str:
    """One `digraph` per buffer.graph of `module` (NoBufferGraph when there is none)."""
    graphs = [op for op in module.walk() if isinstance(op, buffer.GraphOp)]
    if not graphs:
        raise NoBufferGraph("emit-dot expects buffer IR (a buffer.graph), found none")
    return "".join(graph_dot(g) for g in graphs)


def graph_dot(graph: buffer.GraphOp) -> str:
    lines = [f"digraph {_q(graph.sym_name.data)} {{", "  rankdir=TB;",
             '  node [shape=box, fontname="monospace", fontsize=10];', '  edge [fontname="monospace", fontsize=9];']
    writer: dict[str, str] = {}  # buffer name -> the dot node that writes it
    edges: list[str] = []
    kernels = 0
    for node in graph.nodes():
        members = node.members() if isinstance(node, buffer.FusedOp) else [node]
        if isinstance(node, (buffer.FusedOp, buffer.BodyNode)):  # one kernel: one cluster
            lines.append(f"  subgraph {_q(f'cluster_{kernels}')} {{")
            lines.append(f"    label={_q(f'kernel {kernels}: ' + ' + '.join(n for m in members for n in m.defined_names()))};")
            lines.append('    style="rounded,filled"; fillcolor="#f2f2f2";')
            lines += [f"  {line}" for m in members for line in _node_lines(m)]
            lines.append("  }")
            kernels += 1
        else:
            lines += _node_lines(node)
        for m in members:
            edges += _edges(m, writer)
            writer.update({name: name for name in m.defined_names()})
    output = next((op for op in graph.body.block.ops if isinstance(op, buffer.OutputOp)), None)
    if output is not None:
        lines.append(f'  "output" [shape=doubleoctagon, label={_q("output: " + ", ".join(output.names))}];')
        edges += [f'  {_q(writer[n])} -> "output";' for n in dict.fromkeys(output.names) if n in writer]
    lines += edges
    lines += _refusals(graph, writer)
    return "\n".join([*lines, "}"]) + "\n"


def _node_lines(node: buffer.BufferNode) -> list[str]:
    if isinstance(node, buffer.SizeInputOp):
        name = node.buffer.data
        return [f"  {_q(name)} [shape=plaintext, label={_q(name + ' = ' + node.size.text.data)}];"]
    if isinstance(node, buffer.InputOp):
        name = node.defined_names()[0]
        return [f"  {_q(name)} [shape=ellipse, label={_q(name + chr(10) + _layout(node.layout))}];"]
    if isinstance(node, buffer.ViewOp):
        name = node.defined_names()[0]
        label = f"{name} = view of {node.referenced_names()[0]}\n{_layout(node.layout)}"
        return [f"  {_q(name)} [style=dashed, label={_q(label)}];"]
    if isinstance(node, buffer.ExternOp):
        names = node.defined_names() or ["extern"]
        label = f"{', '.join(names)}\nextern {node.overload.data}"
        return [f"  {_q(names[0])} [shape=box3d, label={_q(label)}];"]
    if isinstance(node, buffer.BodyNode):
        name = node.buffer.data
        sizes = ", ".join(expr_str(r) for r in node.range_exprs)
        reduce = node.reduction_range_exprs
        shape = f"[{sizes}]" + (f" reduce [{', '.join(expr_str(r) for r in reduce)}]" if reduce else "")
        kind = "scatter into " + node.base_name + "\n" if isinstance(node, buffer.ScatterOp) else ""
        label = f"{name}\n{kind}{', '.join(node.origin_names)}\n{shape} {node.layout.dtype}"
        return [f"  {_q(name)} [label={_q(label)}];"]
    return []


def _edges(node: buffer.BufferNode, writer: dict[str, str]) -> Iterator[str]:
    """An edge from the writer of each buffer `node` reads, labelled with the dependency's kind."""
    reads, _ = read_writes(node)
    target = (node.defined_names() or ["extern"])[0]
    seen: set[tuple[str, str]] = set()
    for dep in reads:
        source = writer.get(dep_buffer(dep))
        kind = DEP_KINDS.get(type(dep), "dep")
        if source is not None and (source, kind) not in seen:
            seen.add((source, kind))
            yield f"  {_q(source)} -> {_q(target)} [label={_q(kind)}];"


def _refusals(graph: buffer.GraphOp, writer: dict[str, str]) -> list[str]:
    """Dashed edges for the candidate pairs `--fuse{explain=true}` refused (a group is drawn
    from its first member)."""
    remarks = graph.attributes.get("fusion")
    if not isinstance(remarks, ArrayAttr):
        return []
    out, drawn = [], set()
    for remark in remarks.data:
        match = REFUSAL.match(remark.data) if isinstance(remark, StringAttr) else None
        if match is None:
            continue
        a, b = (writer.get(side.split("+")[0]) for side in match.group(1, 2))
        if a is not None and b is not None and (a, b) not in drawn:  # a later round refuses again
            drawn.add((a, b))
            out.append(f"  {_q(a)} -> {_q(b)} [style=dashed, color=red, fontcolor=red, constraint=false, "
                       f"dir=none, label={_q(match.group(3))}, tooltip={_q(match.group(4))}];")
    return out


def _layout(layout: LayoutAttr) -> str:
    return f"[{', '.join(expr_str(s) for s in layout.sizes)}] {layout.dtype}"


def _q(text: str) -> str:
    """A dot string: quoted, with quotes, backslashes and newlines escaped."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
