"""The decomposition table mlc's frontends trace with: which aten ops reach `--lower-aten`.

Inductor's `select_decomp_table()` is the model: the core ATen decompositions, plus a list
Inductor adds, minus the ops it lowers directly. mlc builds the same kind of table from
`torch._decomp` alone (importing `torch._inductor` would pull in the whole of Inductor) and
makes its own choices where its lowering pass differs. `--lower-aten` handles elementwise ops,
views and reductions, so an op is decomposed when its decomposition is made of those, and kept
when a direct lowering is better or a decomposition would leave the aten opset:

decomposed (as Inductor)
    gelu (`x * 0.5 * (1 + erf(x * M_SQRT1_2))`, the body of seed 000; the ops carry
    `origin = "gelu"`), `_softmax`, `_log_softmax`, `native_layer_norm` (→ `var_mean` and
    elementwise), group/batch norm, elu, hardtanh (→ clamp), leaky_relu, index_select
    (→ index.Tensor), addcmul/addcdiv/lerp (Inductor keeps them for FMA; mlc has no FMA yet),
    nll_loss_forward and nll_loss2d_forward (a `gather` of `x[n, target[n]]` after masking the
    target, then sums). Kept whole, nll_loss_forward is an op AOTAutograd's partitioner cannot
    recompute, so the log-softmax it reads counts as written by the forward anyway: over bf16
    logits (BERT's head) the partitioner saved that [rows, classes] log-softmax for the
    backward. The gather lets it save the logits with each row's max and log-sum-exp instead,
    and the backward recomputes the log-softmax as it reads the logits. (`--lower-aten` still
    lowers the op itself, for IR that carries it: passes/lowering/losses.py.)
kept (as Inductor)
    silu (lowered with eager's exact formula `x / (1 + exp(-x))`), clamp_min/clamp_max, sum,
    squeeze, split.Tensor, unbind (views and reductions lowered directly), baddbmm (an extern
    call), `_softmax_backward_data` (lowered as a sum and a pointwise),
    embedding_dense_backward (dedicated aten ops).
kept (unlike Inductor)
    arange and flip (their decompositions produce `prims.iota` / `prims.rev`, which are not
    aten ops), full, empty_like and `_to_copy` (dedicated aten ops already; their
    decompositions only add `empty_strided` + `copy_` noise), clamp (one elementwise op
    rather than clamp_min + clamp_max).
replaced (unlike Inductor)
    nll_loss_backward: torch's decomposition builds the gradient with a `scatter` into zeros
    (a second kernel); mlc's is the pointwise `where(c == target[n], -grad * w[c], 0)`, which
    fuses into the log-softmax backward. It is not kept as one op because the op reads the
    forward's input (the log-softmax, used only for its shape): AOTAutograd's partitioner would
    then save that vocabulary-wide float32 tensor for the backward, where with the pointwise
    form it saves the logits and recomputes the log-softmax inside the backward kernel.
    `_scaled_dot_product_flash_attention_for_cpu` (as Inductor: its decomposition returns the
    attention weights where the op returns the logsumexp, and the backward, which stays an aten
    op, reads that slot as the logsumexp: gradients would be wrong). The attention ops, forward
    and backward, on CPU and GPU, run as extern calls.

The table is a plain dict, usable by `make_fx(..., decomposition_table=...)`, AOTAutograd and
`ExportedProgram.run_decompositions`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import torch
from torch._decomp import core_aten_decompositions, get_decompositions

aten = torch.ops.aten


# Names rather than torch.ops attributes: an op missing from some torch version is skipped
# instead of failing the import of this module.
ADDITIONS = """
    gelu _softmax _log_softmax native_layer_norm native_group_norm native_batch_norm
    _native_batch_norm_legit _native_batch_norm_legit_functional
    _native_batch_norm_legit_no_training _batch_norm_with_update
    _batch_norm_with_update_functional _batch_norm_no_update batch_norm_backward
    elu hardtanh leaky_relu index_select addmv linalg_vector_norm permute_copy unbind_copy.int
""".split()
"""Ops outside the core set that mlc wants decomposed (packets, or `packet.overload`)."""

KEPT = """
    silu clamp_min clamp_max sum squeeze split.Tensor unbind baddbmm _softmax_backward_data
    embedding_dense_backward arange flip full empty_like _to_copy clamp
    _scaled_dot_product_flash_attention_for_cpu
""".split()
"""Ops the core table decomposes but mlc keeps (see the module docstring)."""


def _resolve(names: list[str]) -> list[torch._ops.OpOverload]:
    ops = []
    for name in names:
        packet_name, _, overload = name.partition(".")
        packet = getattr(aten, packet_name, None)
        if packet is None:
            continue
        if overload:
            op = getattr(packet, overload, None)
            ops += [op] if op is not None else []
        else:
            ops += [getattr(packet, o) for o in packet.overloads()]
    return ops


@cache
def _table() -> dict[torch._ops.OperatorBase, Callable]:
    # core_aten_decompositions() is a lazily materialized CustomDecompTable on torch >= 2.6;
    # items() materializes it, and a plain dict keeps make_fx and export on the same footing.
    table: dict[torch._ops.OperatorBase, Callable] = dict(core_aten_decompositions().items())
    table.update(get_decompositions(_resolve(ADDITIONS)))  # type: ignore[arg-type]
    for op in _resolve(KEPT):
        table.pop(op, None)
    table[aten.nll_loss_backward.default] = _nll_loss_backward
    return table


def _nll_loss_backward(
    grad_output: torch.Tensor,
    self: torch.Tensor,
    target: torch.Tensor,
    weight: torch.Tensor | None,
    reduction: int,
    ignore_index: int,
    total_weight: torch.Tensor,
) -> torch.Tensor:
    """d(loss)/d(self) as one pointwise op over `self`'s shape; `self` gives only the shape."""
    class_dim = 0 if self.dim() < 2 else 1
    if reduction == 1:  # mean
        grad_output = grad_output / total_weight
    if grad_output.dim() > 0 and self.dim() > grad_output.dim():
        grad_output = grad_output.unsqueeze(class_dim)
    if weight is not None:  # the classes are the last dim
        grad_output = grad_output * weight
    target = target.unsqueeze(class_dim)
    classes = torch.arange(self.shape[class_dim], device=self.device)
    hit = (classes == target) & (target != ignore_index)
    return torch.where(hit, -grad_output, 0).to(self.dtype)


def decomposition_table() -> dict[torch._ops.OperatorBase, Callable]:
    """The ops to decompose before import, and how (a fresh dict each call; callers may edit it)."""
    return dict(_table())
