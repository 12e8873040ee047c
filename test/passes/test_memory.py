"""Live bytes of a wrapper (`mlc.analysis.memory`): the peak of graphs whose lifetimes are known."""

from __future__ import annotations

from pathlib import Path

import torch
from xdsl.parser import Parser

from mlc.analysis.memory import live_bytes, peak_live_bytes, storage_holders
from mlc.dialects import triton as tt
from mlc.dialects.registry import make_context
from mlc.passes.pipeline import load_pipeline, run_pipeline
from mlc.passes.registry import DEFAULT_PIPELINE

KERNEL = """triton.kernel @k pointwise(%in_ptr0: !triton.ptr<f32>, %out_ptr0: !triton.ptr<f32>) xnumel 1024 configs [#triton.config<XBLOCK = 1024, num_warps = 4, num_stages = 1>] {
  %0 = triton.load %in_ptr0[xindex] mask xmask : f32
  triton.store %out_ptr0[xindex], %0 mask xmask : f32
}
"""
L = "#buffer.layout<[1024], [1], f32>"  # 4096 bytes


def wrapper_of(body: str) -> tt.WrapperOp:
    module = Parser(make_context(), KERNEL + "triton.wrapper @call {\n" + body + "\n}", "test.mlir").parse_module()
    (wrapper,) = [op for op in module.body.block.ops if isinstance(op, tt.WrapperOp)]
    return wrapper


CHAIN = f"""
  triton.input "x" {L}
  triton.alloc "buf0" {L}
  triton.launch @k(@x, @buf0) xnumel 1024
  triton.free @x
  triton.alloc "buf1" {L}
  triton.launch @k(@buf0, @buf1) xnumel 1024
  triton.view "v1" = @buf0 {L}
  triton.free @buf0
  triton.alloc "buf2" {L}
  triton.launch @k(@v1, @buf2) xnumel 1024
  triton.free @v1
  triton.return @buf1, @buf2"""


def test_a_storage_lives_until_its_last_holder_is_freed() -> None:
    wrapper = wrapper_of(CHAIN)
    # buf0 outlives its own free in its view v1; the outputs stay.
    assert live_bytes(wrapper) == [0, 4096, 4096, 4096, 8192, 8192, 8192, 8192, 12288, 12288, 8192, 8192]
    assert peak_live_bytes(wrapper) == 12288
    # The input counted as the wrapper's (a backward's saved tensor): live until its free.
    assert live_bytes(wrapper, inputs_owned=True)[:4] == [4096, 8192, 8192, 4096]
    assert storage_holders(list(wrapper.body.block.ops))["buf0"] == {"buf0", "v1"}


def test_plan_buffers_reuse_keeps_the_live_bytes() -> None:
    text = f"""
  triton.input "x" {L}
  triton.alloc "buf0" {L}
  triton.launch @k(@x, @buf0) xnumel 1024
  triton.alloc "buf1" {L}
  triton.launch @k(@buf0, @buf1) xnumel 1024
  triton.free @buf0
  triton.alloc "buf2" {L}
  triton.launch @k(@buf1, @buf2) xnumel 1024
  triton.free @buf1
  triton.return @buf2"""
    module = Parser(make_context(), KERNEL + "triton.wrapper @call {\n" + text + "\n}", "test.mlir").parse_module()
    (wrapper,) = [op for op in module.body.block.ops if isinstance(op, tt.WrapperOp)]
    before = live_bytes(wrapper)
    run_pipeline(module, load_pipeline("plan-buffers"), make_context())
    (wrapper,) = [op for op in module.body.block.ops if isinstance(op, tt.WrapperOp)]
    assert [op.name for op in wrapper.body.block.ops].count("triton.reuse") == 1
    assert peak_live_bytes(wrapper) == max(before) == 8192


def test_a_chain_of_matmuls_holds_two_activations_and_frees_its_inputs() -> None:
    """relu(relu(x @ w) @ w) @ w at [64, 64] float32 (16 KiB a tensor): each matmul's result
    lives until the relu after it has read it, so that at most two activations are live; x dies
    after the first matmul and w after the last. Called with x as w, the graph's x is read by
    nothing and freed after the inputs."""
    from torch.fx.experimental.proxy_tensor import make_fx

    from mlc.frontend.importer import import_graph

    def f(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return torch.relu(torch.relu(x @ w) @ w) @ w

    def compiled(*inputs: torch.Tensor) -> tt.WrapperOp:
        module = import_graph(make_fx(f)(*inputs)).module
        run_pipeline(module, load_pipeline(DEFAULT_PIPELINE), make_context())
        (wrapper,) = [op for op in module.body.block.ops if isinstance(op, tt.WrapperOp)]
        freed = [name for op in wrapper.body.block.ops if isinstance(op, tt.FreeOp) for name in op.freed]
        assert set(wrapper.input_names()) <= set(freed)
        return wrapper

    x, w = torch.randn(64, 64), torch.randn(64, 64)
    tensor = 64 * 64 * 4
    wrapper = compiled(x, w)
    assert peak_live_bytes(wrapper) == 2 * tensor
    assert peak_live_bytes(wrapper, inputs_owned=True) == 3 * tensor  # w, a matmul's result and its relu
    assert peak_live_bytes(compiled(w, w), inputs_owned=True) == 3 * tensor
