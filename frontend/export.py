"""Import a `torch.export.ExportedProgram`: decompose with mlc's table, then import its graph.

In an exported program's graph, parameters, buffers and tensor constants are lifted to
placeholders ahead of the user inputs (`p_fc1_weight`, `b_running_mean`, `c_lifted_tensor_0`,
then `x`), so they are ordinary function arguments; `ImportedGraph.lifted` says which tensor
each of them receives.
"""

from __future__ import annotations

import torch
from torch.export.graph_signature import InputKind

from mlc.frontend.decompositions import decomposition_table
from mlc.frontend.importer import ImportedGraph, import_graph


def import_exported(ep: torch.export.ExportedProgram, name: str = "forward") -> ImportedGraph:
    """Decompose `ep` to the ops mlc lowers and import it as `func.func @name`."""
    ep = ep.run_decompositions(decomposition_table())
    imported = import_graph(ep.graph_module, name)
    for spec in ep.graph_signature.input_specs:
        if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER):
            tensor = ep.state_dict.get(spec.target) if spec.persistent is not False else None
            if tensor is None:  # a non-persistent buffer lives with the constants
                tensor = ep.constants.get(spec.target)
        elif spec.kind == InputKind.CONSTANT_TENSOR:
            tensor = ep.constants.get(spec.target)
        else:
            continue
        if isinstance(tensor, torch.Tensor):
            imported.lifted[spec.arg.name] = tensor
    return imported
