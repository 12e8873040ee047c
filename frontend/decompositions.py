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
    max_pool2d_with_indices and its backward (as Inductor, in mlc's own ops; dilation 1, windows
    of at most 127 positions, and for the forward static image sizes, else extern calls). The
    forward picks each window's maximum over
    its positions in order, keeping the position's offset in the window as int8; the int64
    indices aten returns are a pointwise function of the offsets, so the partitioner saves the
    offsets (an eighth of the indices' bytes) and the backward recomputes the indices. The
    backward gathers: each input position sums the gradients of the at most
    ceil(k/s) x ceil(k/s) windows whose index names it. It reads the input only for its shape,
    so the forward's input is not saved for it (aten's op takes the input as an operand: kept
    whole, the partitioner saved ResNet's stem activation for it, 26 MB at batch 16).
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
    table[aten.max_pool2d_with_indices.default] = _max_pool2d_with_indices
    table[aten.max_pool2d_with_indices_backward.default] = _max_pool2d_with_indices_backward
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


def _pool_params(kernel_size, stride, padding, dilation) -> list[tuple[int, int, int]] | None:
    """(kernel, stride, padding) per spatial dim of a 2-d max pool that mlc decomposes, else None
    (dilation other than 1, or a window too large for int8 offsets: the extern call)."""
    def pair(v):
        return tuple(v) * (2 // len(v)) if isinstance(v, (list, tuple)) and v else (v, v)
    kernel = pair(kernel_size)
    params = list(zip(kernel, pair(stride) if stride else kernel, pair(padding)))
    if pair(dilation) != (1, 1) or kernel[0] * kernel[1] > torch.iinfo(torch.int8).max:
        return None
    return params


def _positions(size, params: tuple[int, int, int], device: torch.device) -> torch.Tensor:
    """The first input position of each window along one dim: `arange(size) * stride - pad`."""
    _, stride, pad = params
    return torch.arange(size, dtype=torch.int64, device=device) * stride - pad


def _gather2d(x: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor) -> torch.Tensor:
    """`x[..., rows[:, None], cols]`: the last two dims read at the given positions."""
    return aten.index.Tensor(x, [None] * (x.dim() - 2) + [rows.unsqueeze(1), cols])


def _max_pool2d_with_indices(x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """The window maximum, and aten's flat index into the last two dims of where it is. Each
    window position is a strided slice of the input padded with -inf, so every load is affine in
    the output's position (realize sees the input's layout through it); which positions lie
    inside the input comes from the output's position alone."""
    params = _pool_params(kernel_size, stride, padding, dilation)
    if params is None or x.dim() not in (3, 4) or not all(isinstance(n, int) for n in x.shape[-2:]):
        return NotImplemented
    from torch._meta_registrations import pooling_output_shape
    sizes = x.shape[-2:]
    pooled = [pooling_output_shape(n, k, p, s, 1, ceil_mode) for n, (k, s, p) in zip(sizes, params)]
    after = [max(0, (out - 1) * s + k - n - p) for n, out, (k, s, p) in zip(sizes, pooled, params)]
    padded = aten.constant_pad_nd(x, [params[1][2], after[1], params[0][2], after[0]], float("-inf"))
    starts = [_positions(n, p, x.device) for n, p in zip(pooled, params)]
    kernel_w = params[1][0]
    best = offset = None
    for k in range(params[0][0] * kernel_w):
        steps = divmod(k, kernel_w)
        value = padded
        for dim, step, out, (_, s, _) in zip((-2, -1), steps, pooled, params):
            value = aten.slice.Tensor(value, dim, step, step + (out - 1) * s + 1, s)
        inside = [(start + step >= 0) & (start + step < n) for start, step, n in zip(starts, steps, sizes)]
        valid = inside[0].unsqueeze(1) & inside[1]
        if best is None:  # aten starts from the first position inside the input
            best, offset = value, torch.where(valid, 0, -1).to(torch.int8)
            continue
        take = valid & ((offset < 0) | (value > best) | torch.isnan(value))
        best = torch.where(take, value, best)
        offset = torch.where(take, k, offset)
    offset = _in_format_of(offset, x)  # saved for the backward: stored as the values are
    return _in_format_of(best, x), _in_format_of(_offsets_to_indices(offset, params, pooled, sizes[1]), x)


def _offsets_to_indices(offset, params, pooled, width) -> torch.Tensor:
    """aten's int64 index `row * width + col` of each window's maximum from its int8 offset."""
    kernel_w = params[1][0]
    wide = offset.to(torch.int64)
    row = _positions(pooled[0], params[0], offset.device).unsqueeze(1) + wide // kernel_w
    col = _positions(pooled[1], params[1], offset.device) + wide % kernel_w
    return row * width + col


def _max_pool2d_with_indices_backward(grad, x, kernel_size, stride, padding, dilation, ceil_mode, indices):
    """Each input position's gradient gathered from the windows that can hold it (Inductor's
    form): `x` gives only the shape."""
    params = _pool_params(kernel_size, stride, padding, dilation)
    if params is None or x.dim() not in (3, 4):
        return NotImplemented
    sizes, pooled = x.shape[-2:], grad.shape[-2:]
    first, end = [], []
    for n, out, (k, s, p) in zip(sizes, pooled, params):
        at = torch.arange(n, dtype=torch.int64, device=x.device) + p
        first.append(torch.div(at - k + s, s, rounding_mode="floor").clamp_min(0))
        end.append(torch.div(at, s, rounding_mode="floor").add(1).clamp_max(out))
    here = torch.arange(sizes[0], device=x.device).unsqueeze(1) * sizes[1] + torch.arange(sizes[1], device=x.device)
    total = None
    for dh in range(-(-params[0][0] // params[0][1])):
        for dw in range(-(-params[1][0] // params[1][1])):
            window = [f + d for f, d in zip(first, (dh, dw))]
            clamped = [torch.minimum(w, e - 1) for w, e in zip(window, end)]
            hit = _gather2d(indices, *clamped) == here
            if total is not None:
                hit = hit & (window[0] < end[0]).unsqueeze(1) & (window[1] < end[1])
            part = torch.where(hit, _gather2d(grad, *clamped).float(), 0.0)
            total = part if total is None else total + part
    return _in_format_of(total.to(grad.dtype), x, grad)


def _in_format_of(t: torch.Tensor, *like: torch.Tensor) -> torch.Tensor:
    """`t` in channels-last where one of `like` is, as aten's pooling lays out its results
    (`suggest_memory_format`): the gathers above are traced row-major."""
    if any(_is_channels_last(x) for x in like):
        return t.contiguous(memory_format=torch.channels_last)
    return t


def _is_channels_last(x: torch.Tensor) -> bool:
    return x.dim() == 4 and not x.is_contiguous() and x.is_contiguous(memory_format=torch.channels_last)


def decomposition_table() -> dict[torch._ops.OperatorBase, Callable]:
    """The ops to decompose before import, and how (a fresh dict each call; callers may edit it)."""
    return dict(_table())
