"""Hugging Face models through `torch.compile(model, backend="mlc")`, against eager.

GPT-2, Llama, BERT, T5, ViT and ResNet, each built by transformers from a tiny config with
random weights (no download): hidden 32, sequences of 8 tokens, vocabularies of 128-256 (2048
for Llama: its loss then reduces 7 x 2048 logits, more than the 8192 elements that
`--split-reductions` leaves whole, so a split reduction's index code is exercised), 16x16
images; two layers for the decoders GPT-2 and Llama (one sequence each), one for BERT and ViT
(a batch of two: BERT's second sequence is padded), one encoder and one decoder block for T5,
one basic block per stage for ResNet. The sizes are small because under Triton's interpreter
every program of a grid runs in Python: time grows with rows and columns, not with FLOPs.
Each model is tested twice, the eager reference a `copy.deepcopy` taken before compiling, so
both start from the same weights:

* inference: under `torch.no_grad()` (a forward graph only), every tensor of the output
  (logits, loss, T5's encoder state) against eager;
* a training step: the model's own loss (labels passed in), `.backward()`, then the loss, the
  outputs and every parameter's gradient against eager, by name (and for ResNet, whose batch
  norms run in training mode, the running statistics the step updated).

Determinism: every dropout probability is 0 and the transformers run in `eval()` mode (an
active dropout module would draw random masks that differ between mlc and eager); ResNet has
no dropout and trains in `train()` mode, so batch norm uses batch statistics. Attention is
`attn_implementation="sdpa"`: on CPU `F.scaled_dot_product_attention` reaches AOTAutograd as
`_scaled_dot_product_flash_attention_for_cpu` (GPT-2, Llama, BERT, ViT: its backward is an
aten op too) or, where the mask needs a gradient (T5's learned position bias), as the math
decomposition (matmul, `_safe_softmax`). ViT's patch embedding and ResNet's stem are
convolutions of inputs that need no gradient (`convolution_backward` with output mask
[False, True, ...]). Every model compiles with `fullgraph=True`: no graph break is needed.

Tolerances (float32): outputs atol 1e-4, rtol 1e-3 (matmuls are the same ATen calls in both,
but reductions and fused pointwise chains sum and round in other orders). Gradients are
compared with rtol 1e-3 and an atol of 1e-4 times the largest entry of eager's gradient, so
a wrong gradient of a parameter whose gradient is tiny (BERT's position embeddings: ~5e-4)
is not hidden by an absolute tolerance made for gradients of order one. That scale is floored
at 1e-3 times the model's largest gradient entry: a gradient that is zero in exact arithmetic
(attention's key bias, since softmax ignores a shift of its row) is rounding noise of the terms
that cancel in it (ViT on CUDA: 1.9e-10 against eager's 1e-10), not a value to match.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
import torch
import transformers as tf
from torch import nn

ATOL, RTOL = 1e-4, 1e-3
BATCH, SEQ, IMAGE = 2, 8, 16


def _tokens(vocab: int, device: torch.device, batch: int = BATCH) -> torch.Tensor:
    return torch.randint(0, vocab, (batch, SEQ), device=device)


def _causal_lm(model: nn.Module, vocab: int, device: torch.device) -> tuple[nn.Module, dict[str, Any]]:
    ids = _tokens(vocab, device, batch=1)  # one sequence: the interpreter's time grows with rows
    return model, {"input_ids": ids, "labels": ids}


def gpt2(device: torch.device) -> tuple[nn.Module, dict[str, Any]]:
    config = tf.GPT2Config(
        vocab_size=256, n_positions=32, n_embd=32, n_inner=64, n_layer=2, n_head=2, bos_token_id=0, eos_token_id=0,
        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, use_cache=False, attn_implementation="sdpa",
    )
    model = tf.GPT2LMHeadModel(config)
    # transformers finds no loss for the class name GPT2LMHeadModel and logs a warning from
    # inside forward (a graph break under Dynamo); name the loss it falls back to.
    model.loss_type = "ForCausalLM"
    return _causal_lm(model, config.vocab_size, device)


def llama(device: torch.device) -> tuple[nn.Module, dict[str, Any]]:
    config = tf.LlamaConfig(
        vocab_size=2048, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=32, use_cache=False, attn_implementation="sdpa",
    )
    return _causal_lm(tf.LlamaForCausalLM(config), config.vocab_size, device)


def bert(device: torch.device) -> tuple[nn.Module, dict[str, Any]]:
    config = tf.BertConfig(
        vocab_size=128, hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
        max_position_embeddings=32, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
        attn_implementation="sdpa",
    )
    ids = _tokens(config.vocab_size, device)
    mask = torch.ones_like(ids)
    mask[1, SEQ - 3:] = 0  # the second sequence is padded: a real attention mask
    segments = (torch.arange(SEQ, device=device) >= SEQ // 2).long().expand(BATCH, SEQ)
    labels = torch.where(torch.rand(ids.shape, device=device) < 0.5, ids, -100)  # masked-LM labels
    inputs = {"input_ids": ids, "attention_mask": mask, "token_type_ids": segments, "labels": labels}
    return tf.BertForMaskedLM(config), inputs


def t5(device: torch.device) -> tuple[nn.Module, dict[str, Any]]:
    config = tf.T5Config(
        vocab_size=128, d_model=32, d_kv=8, d_ff=64, num_layers=1, num_decoder_layers=1, num_heads=2,
        relative_attention_num_buckets=8, relative_attention_max_distance=16, dropout_rate=0.0,
        decoder_start_token_id=0, use_cache=False, attn_implementation="sdpa",
    )
    ids = _tokens(config.vocab_size, device)
    return tf.T5ForConditionalGeneration(config), {"input_ids": ids, "labels": _tokens(config.vocab_size, device)}


def _images(labels: int, device: torch.device) -> dict[str, Any]:
    pixels = torch.randn(BATCH, 3, IMAGE, IMAGE, device=device)
    return {"pixel_values": pixels, "labels": torch.randint(0, labels, (BATCH,), device=device)}


def vit(device: torch.device) -> tuple[nn.Module, dict[str, Any]]:
    config = tf.ViTConfig(
        image_size=IMAGE, patch_size=8, num_channels=3, hidden_size=32, num_hidden_layers=1,
        num_attention_heads=2, intermediate_size=64, hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0, num_labels=4, attn_implementation="sdpa",
    )
    return tf.ViTForImageClassification(config), _images(config.num_labels, device)


def resnet(device: torch.device) -> tuple[nn.Module, dict[str, Any]]:
    config = tf.ResNetConfig(num_channels=3, embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1],
                             layer_type="basic", num_labels=4)
    return tf.ResNetForImageClassification(config), _images(config.num_labels, device)


MODELS: dict[str, Callable[[torch.device], tuple[nn.Module, dict[str, Any]]]] = {
    "gpt2": gpt2, "llama": llama, "bert": bert, "t5": t5, "vit": vit, "resnet": resnet,
}
TRAINS_IN_TRAIN_MODE = {"resnet"}  # batch norm with batch statistics; no dropout to disable


def _pair(name: str, device: torch.device, training: bool) -> tuple[nn.Module, nn.Module, dict[str, Any]]:
    """(model for mlc, its eager twin with the same weights, inputs)."""
    model, inputs = MODELS[name](device)
    model = model.to(device).train(training and name in TRAINS_IN_TRAIN_MODE)
    return model, copy.deepcopy(model), inputs


def _assert_outputs(actual: Any, expected: Any) -> None:
    """Every tensor of a transformers ModelOutput, by key."""
    assert list(actual.keys()) == list(expected.keys())
    for key, e in expected.items():
        if isinstance(e, torch.Tensor):
            torch.testing.assert_close(actual[key], e, atol=ATOL, rtol=RTOL, msg=lambda m, k=key: f"output {k}: {m}")


def _assert_close_scaled(actual: torch.Tensor | None, expected: torch.Tensor, what: str, floor: float) -> None:
    """rtol RTOL, atol ATOL times the largest entry of `expected`, at least `floor` (see the
    module docstring)."""
    assert actual is not None, f"{what}: no gradient through mlc (eager has one)"
    scale = expected.abs().max().item() if expected.numel() else 0.0
    torch.testing.assert_close(actual, expected, atol=ATOL * max(scale, floor, 1e-6), rtol=RTOL,
                               msg=lambda m: f"{what}: {m}")


@pytest.fixture(autouse=True)
def _fresh_dynamo() -> None:
    # Every torch.compile(model) guards the same code object (nn.Module's call); twelve models
    # would pass Dynamo's recompile limit (8), an error under fullgraph=True.
    torch._dynamo.reset()


@pytest.mark.parametrize("name", MODELS)
def test_inference(name, compile, device):
    model, eager, inputs = _pair(name, device, training=False)
    with torch.no_grad():
        expected = eager(**inputs)
        actual = compile(model)(**inputs)
    _assert_outputs(actual, expected)


@pytest.mark.parametrize("name", MODELS)
def test_training_step(name, compile, device):
    """Loss, outputs, every parameter's gradient (and updated buffers) match eager."""
    model, eager, inputs = _pair(name, device, training=True)
    expected = eager(**inputs)
    expected.loss.backward()
    actual = compile(model)(**inputs)
    actual.loss.backward()
    _assert_outputs(actual, expected)
    grads = {n: p.grad for n, p in model.named_parameters()}
    floor = 1e-3 * max(p.grad.abs().max().item() for p in eager.parameters() if p.grad is not None and p.grad.numel())
    for n, p in eager.named_parameters():
        if p.grad is None:
            assert grads[n] is None, f"gradient of {n}: mlc has one, eager none"
        else:
            _assert_close_scaled(grads[n], p.grad, f"gradient of {n}", floor)
    buffers = dict(model.named_buffers())
    for n, b in eager.named_buffers():
        torch.testing.assert_close(buffers[n], b, atol=ATOL, rtol=RTOL, msg=lambda m, n=n: f"buffer {n}: {m}")
