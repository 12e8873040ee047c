"""The FX importer on graphs from make_fx (with mlc's decomposition table) and torch.export."""

from __future__ import annotations

import io
import operator

import pytest
import torch
import torch.fx.traceback as fx_traceback
from torch import nn
from torch.fx.experimental.proxy_tensor import make_fx
from xdsl.dialects.builtin import ModuleOp, NameLoc, StringAttr, TensorType
from xdsl.parser import Parser
from xdsl.printer import Printer

from mlc.dialects.aten import AtenOp, CallOp
from mlc.dialects.registry import make_context
from mlc.frontend.decompositions import decomposition_table
from mlc.frontend.export import import_exported
from mlc.frontend.importer import ImportedGraph, UnsupportedGraph, import_graph

aten = torch.ops.aten

# torch.export's own deprecation notices (torch 2.13) are not about this code.
pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")


def trace(fn, *args, table=None) -> torch.fx.GraphModule:
    # preserve_node_meta makes make_fx record `original_aten`, as AOTAutograd does.
    with fx_traceback.preserve_node_meta():
        return make_fx(fn, decomposition_table=table or decomposition_table())(*args)


def imported(fn, *args, **kw) -> ImportedGraph:
    graph = import_graph(trace(fn, *args, **kw))
    check_round_trip(graph.module)
    return graph


def check_round_trip(module: ModuleOp) -> None:
    text = str(module)
    assert str(Parser(make_context(), text).parse_module()) == text
    with_locs = print_with_locations(module)
    assert print_with_locations(Parser(make_context(), with_locs).parse_module()) == with_locs


def print_with_locations(module: ModuleOp) -> str:
    stream = io.StringIO()
    Printer(stream=stream, print_debuginfo=True).print_op(module)
    return stream.getvalue()


def ops(graph: ImportedGraph) -> list:
    return list(graph.func.body.block.ops)[:-1]  # without func.return


def names(graph: ImportedGraph) -> list[str]:
    return [op.overload.data if isinstance(op, CallOp) else op.name for op in ops(graph)]


def loc(op) -> str:
    assert isinstance(op.location, NameLoc)
    return op.location.desc.data


def shape(value) -> tuple[list[int], str]:
    assert isinstance(value.type, TensorType)
    return list(value.type.get_shape()), str(value.type.element_type)


X = torch.randn(8, 32)


# -- elementwise ops, arguments, types -------------------------------------------------------


def test_elementwise_chain():
    g = imported(lambda x, w: (x * w).erf().exp(), X, torch.randn(32))
    assert names(g) == ["aten.mul.Tensor", "aten.erf", "aten.exp"]
    assert [loc(op) for op in ops(g)] == ["mul", "erf", "exp"]
    assert g.arg_names == ["x_1", "w_1"]
    assert g.output_spec == [0]
    func = g.func
    assert [shape(a) for a in func.args] == [([8, 32], "f32"), ([32], "f32")]
    assert [str(t) for t in func.function_type.outputs] == ["tensor<8x32xf32>"]
    # xDSL drops a trailing _N from name hints; the importer writes it .N, the location keeps it.
    assert "func.func @forward(%x.1: tensor<8x32xf32>, %w.1: tensor<32xf32>)" in str(g.module)
    assert '%x.1: tensor<8x32xf32> loc("x_1")' in print_with_locations(g.module)
    assert 'loc("mul")' in print_with_locations(g.module)


def test_broadcasting_and_dtypes():
    g = imported(
        lambda x, b, i: ((x + b) > 0, x.sum(), i + 1),
        X,
        torch.randn(1, 32),
        torch.ones(4, dtype=torch.int64),
    )
    assert names(g) == ["aten.add.Tensor", "aten.gt.Scalar", "aten.sum", "aten.add.Scalar"]
    add, gt, total, iadd = ops(g)
    assert shape(add.results[0]) == ([8, 32], "f32")
    assert shape(gt.results[0]) == ([8, 32], "i1")
    assert shape(total.results[0]) == ([], "f32")
    assert shape(iadd.results[0]) == ([4], "i64")


def test_python_scalars_use_the_scalar_overload():
    g = imported(lambda x: (x * 2 + 1.5) ** 3, X)
    assert names(g) == ["aten.mul.Scalar", "aten.add.Scalar", "aten.pow.Tensor_Scalar"]
    mul, add, pow_ = ops(g)
    assert mul.arg("other") == 2 and add.arg("other") == 1.5 and pow_.arg("exponent") == 3
    assert "{other = 2 : i64}" in str(g.module)
    # A number first: the overload that takes it second.
    g = imported(lambda x: (1 - x, 2 * x, 0 < x), X)
    assert names(g) == ["aten.rsub.Scalar", "aten.mul.Scalar", "aten.gt.Scalar"]


def test_python_scalar_without_scalar_overload_stays_a_call():
    # aten.maximum has no Scalar overload: aten.call passes the number through.
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    x.meta["val"] = X
    m = graph.call_function(aten.maximum.default, (x, 2.0))
    m.meta["val"] = X
    graph.output((m,))
    g = import_graph(torch.fx.GraphModule({}, graph))
    check_round_trip(g.module)
    (call,) = ops(g)
    assert isinstance(call, CallOp) and call.overload.data == "maximum"
    assert 'aten.call "maximum" (%x) {args = [#aten.tensor, 2.000000e+00 : f64]}' in str(g.module)


def test_dtype_device_and_memory_format_arguments():
    g = imported(
        lambda x: (x.to(torch.float16), torch.full((2,), 3.0, device="cpu"), x.t().contiguous()), X
    )
    assert names(g) == ["aten._to_copy", "aten.full", "aten.permute", "aten.clone"]
    to_copy, full, _, clone = ops(g)
    assert str(to_copy.args.data["dtype"]) == "f16"
    assert shape(to_copy.results[0]) == ([8, 32], "f16")
    assert full.arg("device") == "cpu" and full.arg("size") == [2]
    assert clone.arg("memory_format") == "contiguous_format"


def test_convert_element_type_becomes_to_copy():
    table = decomposition_table()
    table.update(torch._decomp.get_decompositions([aten._to_copy]))
    gm = trace(lambda x: x.to(torch.bfloat16), X, table=table)
    assert any(n.target == torch.ops.prims.convert_element_type.default for n in gm.graph.nodes)
    g = import_graph(gm)
    (op,) = ops(g)
    assert op.name == "aten._to_copy" and str(op.args.data["dtype"]) == "bf16"
    assert loc(op) == "convert_element_type"


# -- views, multiple results -----------------------------------------------------------------


def test_views():
    def views(x):
        a = x.permute(1, 0).reshape(-1)[2:10]
        b = torch.cat([x, x[:, :1].expand(8, 3)], dim=1)
        return a, b, x[None].squeeze(0), x[:, 3]

    g = imported(views, X)
    assert names(g) == [
        "aten.permute", "aten.clone", "aten.view", "aten.slice.Tensor",  # reshape of a permute copies
        "aten.slice.Tensor", "aten.expand", "aten.cat",
        "aten.unsqueeze", "aten.squeeze.dim", "aten.select.int",
    ]  # fmt: skip
    permute, _, view, slc, _, expand, cat, *_ = ops(g)
    assert permute.arg("dims") == [1, 0] and view.arg("size") == [256]
    assert (slc.arg("start"), slc.arg("end"), slc.arg("step")) == (2, 10, 1)
    assert expand.arg("size") == [8, 3]
    assert len(cat.tensor_list("tensors")) == 2 and shape(cat.results[0]) == ([8, 35], "f32")
    assert view.attributes["origin"] == StringAttr("_unsafe_view")


def test_getitem_on_multi_result_ops():
    g = imported(lambda x: (x.max(dim=1)[1], *x.split(16, dim=1)), X)
    mx, split = ops(g)
    assert isinstance(mx, AtenOp) and mx.name == "aten.max.dim" and len(mx.results) == 2
    assert len(split.results) == 2  # Tensor[] results: as many as the traced value has
    assert [shape(r) for r in split.results] == [([8, 16], "f32")] * 2
    ret = g.func.body.block.last_op
    assert list(ret.operands) == [mx.results[1], *split.results]


def test_optional_tensor_list_with_none_is_a_call():
    g = imported(lambda x, i: x[:, i], X, torch.tensor([1, 2]))
    (index,) = ops(g)
    assert isinstance(index, CallOp) and index.overload.data == "index.Tensor"
    assert "{args = [#aten.tensor, [#aten.none, #aten.tensor]]}" in str(g.module)


# -- outputs ---------------------------------------------------------------------------------


def test_outputs_none_and_aliases():
    g = imported(lambda x, y: (x + y, None, x, x + y), X, X.clone())
    assert g.output_spec == [0, None, 1, 2]
    ret = g.func.body.block.last_op
    assert ret.operands[1] is g.func.args[0]  # returning an input is fine
    assert len(g.func.function_type.outputs) == 3

    same = imported(lambda x: (x.exp(),) * 2, X)
    ret = same.func.body.block.last_op
    assert same.output_spec == [0, 1] and ret.operands[0] is ret.operands[1]


# -- constants, decompositions, models --------------------------------------------------------


def test_get_attr_constant_is_a_trailing_argument():
    c = torch.arange(32.0)
    g = imported(lambda x: x * c + torch.ones(32) * 0, X)
    assert g.arg_names[0] == "x_1" and g.arg_names[1:] == list(g.constants)
    assert len(g.constants) >= 1
    name, tensor = next(iter(g.constants.items()))
    assert torch.equal(tensor, c) and name.startswith("_tensor_constant")
    assert shape(g.func.args[1]) == ([32], "f32")


def test_decomposed_ops_carry_their_origin():
    g = imported(lambda x: nn.functional.gelu(x) + nn.functional.silu(x), X)
    gelu_ops = [op for op in ops(g) if "origin" in op.attributes]
    assert [op.name for op in gelu_ops] == [
        "aten.mul.Scalar", "aten.mul.Scalar", "aten.erf", "aten.add.Scalar", "aten.mul.Tensor",
    ]  # fmt: skip
    assert {op.attributes["origin"] for op in gelu_ops} == {StringAttr("gelu")}
    assert "aten.silu" in names(g)  # silu is lowered directly, not decomposed


class MLP(nn.Module):
    """Seed 000's model."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 64)
        self.fc3 = nn.Linear(64, 64)
        self.fc4 = nn.Linear(64, 64)
        self.fc5 = nn.Linear(64, 64)

    def forward(self, x):
        x = self.fc5(self.fc4(self.fc3(self.fc2(self.fc1(x)))))
        return nn.functional.gelu(x)


def test_mlp_through_export():
    model = MLP()
    x = torch.randn(8, 32)
    g = import_exported(torch.export.export(model, (x,)))
    check_round_trip(g.module)
    assert g.arg_names == [f"p_fc{i}_{k}" for i in range(1, 6) for k in ("weight", "bias")] + ["x"]
    assert torch.equal(g.lifted["p_fc1_weight"], model.fc1.weight)
    assert "x" not in g.lifted and g.constants == {}
    assert names(g)[:2] == ["aten.permute", "aten.addmm"]
    assert names(g).count("aten.addmm") == 5
    tail = ops(g)[-5:]
    assert [op.name for op in tail] == [
        "aten.mul.Scalar", "aten.mul.Scalar", "aten.erf", "aten.add.Scalar", "aten.mul.Tensor",
    ]  # fmt: skip
    assert all(op.attributes["origin"] == StringAttr("gelu") for op in tail)
    assert loc(tail[-1]) == "mul_2"
    assert shape(g.func.body.block.last_op.operands[0]) == ([8, 64], "f32")


def test_mlp_through_make_fx():
    # make_fx of a module reads the parameters through get_attr: they become trailing arguments.
    model = MLP()
    g = imported(model, torch.randn(8, 32))
    assert g.arg_names[0] == "arg0_1" and len(g.constants) == 10
    assert g.arg_names[1:] == list(g.constants) == [f"_param_constant{i}" for i in range(10)]
    assert torch.equal(g.constants["_param_constant0"], model.fc1.weight)
    assert sum(op.attributes.get("origin") == StringAttr("gelu") for op in ops(g)) == 5


def test_export_buffers_and_tensor_constants():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("scale", torch.full((32,), 2.0))

        def forward(self, x):
            return x * self.scale + torch.tensor(1.0)

    g = import_exported(torch.export.export(M(), (X,)))
    check_round_trip(g.module)
    assert g.arg_names[0] == "b_scale" and g.arg_names[-1] == "x"
    assert set(g.lifted) == set(g.arg_names[:-1])


# -- errors ----------------------------------------------------------------------------------


def test_call_module_is_unsupported():
    gm = torch.fx.symbolic_trace(nn.Sequential(nn.ReLU()))
    for node in gm.graph.nodes:
        node.meta["val"] = X
    with pytest.raises(UnsupportedGraph, match=r"node '_0' \(call_module 0\): not an aten op"):
        import_graph(gm)


def test_non_aten_target_is_unsupported():
    gm = torch.fx.symbolic_trace(lambda x: torch.relu(x))
    for node in gm.graph.nodes:
        node.meta["val"] = X
    with pytest.raises(UnsupportedGraph, match=r"node 'relu' \(torch.relu\): only aten ops"):
        import_graph(gm)


def test_symbolic_sizes_are_named_s0_s1():
    """make_fx's symbolic sizes become `?` dims named by `#sym.sizes`, renumbered s0, s1, ..."""
    with fx_traceback.preserve_node_meta():
        gm = make_fx(lambda x: x.sum(0) * 2, tracing_mode="symbolic")(X)
    text = str(import_graph(gm).module)
    assert "tensor<?x?xf32, #sym.sizes<[s0, s1]>>" in text
    assert "-> tensor<?xf32, #sym.sizes<[s1]>>" in text


def test_in_place_ops_are_unsupported():
    with pytest.raises(UnsupportedGraph, match=r"node 'add_' \(aten.add_.Tensor\): in-place"):
        import_graph(trace(lambda x: x.add_(1), X.clone()))


def test_getitem_on_a_tensor_is_unsupported():
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    x.meta["val"] = X
    item = graph.call_function(operator.getitem, (x, 0))
    graph.output((item,))
    with pytest.raises(
        UnsupportedGraph, match=r"node 'getitem' \(getitem\): getitem on a single value"
    ):
        import_graph(torch.fx.GraphModule({}, graph))


def test_none_and_number_outputs_of_a_multi_output_op():
    """CUDA's flash attention returns None (cum_seq_q/k) and, at run time, numbers (max_q/k) in
    some positions, and a uint64 philox seed: those results are typed `none`, and the backward
    that takes them gets the constants."""

    def attention(q, k, v):
        out = aten._scaled_dot_product_flash_attention(q, k, v, 0.0, True)
        return aten._scaled_dot_product_flash_attention_backward(
            out[0], q, k, v, out[0], out[1], out[2], out[3], out[4], out[5], 0.0, True, out[6], out[7]
        )

    q, k, v = (torch.empty(2, 2, 16, 16, device="meta", dtype=torch.float16) for _ in range(3))
    graph = imported(attention, q, k, v)
    text = str(graph.module)
    assert "tensor<2x2x16x16xf16>, tensor<2x2x16xf32>, none, none, none, none, tensor<2xui64>" in text
    backward = [op for op in graph.module.walk() if isinstance(op, CallOp)][-1]
    args = str(backward.args)
    assert "#aten.none, #aten.none" in args and "16 : i64, 16 : i64" in args


def test_a_none_output_used_as_a_tensor_is_an_error():
    def grads(x, w):
        # The input's grad is not asked for: convolution_backward returns None first.
        g = aten.convolution_backward(x, x, w, [2], [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [False, True, True])
        return g[1], g[2]

    gm = trace(grads, torch.randn(1, 2, 4, 4), torch.randn(2, 2, 1, 1))
    conv = next(n for n in gm.graph.nodes if n.target == aten.convolution_backward.default)
    with gm.graph.inserting_after(conv):
        none = gm.graph.call_function(operator.getitem, (conv, 0))
        none.meta["val"] = None
    with gm.graph.inserting_after(none):
        neg = gm.graph.call_function(aten.neg.default, (none,))
        neg.meta["val"] = torch.empty(1, 2, 4, 4)
    with pytest.raises(UnsupportedGraph, match="'getitem.*' is not a tensor"):
        import_graph(gm)


def test_torch_size_functions_become_the_sym_dialects():
    """Sizes from torch's shape environment use its own sympy functions (the GPU attention's
    logsumexp is CeilToInt(IntTrueDiv(s1, 32)) long): they import as FloorDiv, ModularIndexing
    and CeilDiv, and a function mlc has no counterpart for is an error, not a crash."""
    from torch.utils._sympy.functions import CeilToInt, IntTrueDiv, PythonMod
    from torch.utils._sympy.functions import FloorDiv as TorchFloorDiv

    from mlc.dialects.sym import CeilDiv, FloorDiv, ModularIndexing, symbol
    from mlc.frontend.importer import _mlc_expr

    s1 = symbol("s1")
    assert _mlc_expr(CeilToInt(IntTrueDiv(s1, 32))) == CeilDiv(s1, 32)
    assert _mlc_expr(2 * TorchFloorDiv(s1, 4) + 1) == 2 * FloorDiv(s1, 4) + 1
    assert _mlc_expr(PythonMod(s1, 8)) == ModularIndexing(s1, 1, 8)
    with pytest.raises(ValueError, match="Pow is not an integer size function"):
        _mlc_expr(s1 ** -2)


def test_traced_strides_of_results_that_are_not_row_major():
    """An op's result laid out otherwise than row-major when traced (a channels-last clone, as
    attention's output is [B, H, S, D] in [B, S, H, D] order) carries `result_strides`, one
    entry per result, which realize gives an extern's buffer; row-major results carry none."""
    g = imported(lambda x: (x.clone(memory_format=torch.channels_last) + 1, x.permute(0, 2, 3, 1) * 2),
                 torch.randn(2, 3, 4, 5))
    ops = [op for op in g.module.walk() if isinstance(op, (AtenOp, CallOp))]
    tagged = {op.name: [list(a.get_values()) for a in op.attributes["result_strides"].data]
              for op in ops if "result_strides" in op.attributes}
    assert tagged == {"aten.clone": [[60, 1, 15, 3]], "aten.add.Scalar": [[60, 1, 15, 3]],
                      "aten.permute": [[60, 5, 1, 20]], "aten.mul.Scalar": [[60, 5, 1, 20]]}, tagged
    assert not any("result_strides" in op.attributes for op in imported(lambda x: x + 1, torch.randn(2, 3)).module.walk())
    check_round_trip(g.module)


def test_returned_strides_are_eagers_where_not_row_major():
    """func.return states each result's eager strides where they are not row-major: a
    transposed result (dense), a slice whose rows are 8 apart and a strided select (no dense
    layout); row-major and expanded results state none."""
    g = imported(lambda x: (x.t() * 2, x[:, :5], x[:, -1], x + 1, x[:, :1].expand(4, 3)), torch.randn(4, 8))
    ret = g.func.body.block.last_op
    stated = [list(a.get_values()) for a in ret.attributes["strides"].data]
    assert stated == [[1, 8], [8, 1], [8], [], []], stated
    check_round_trip(g.module)


def test_strides_of_inputs_that_are_not_row_major():
    """An input traced with strides other than row-major (a transposed weight, a view with gaps
    between rows, an expanded view) carries them in its argument attributes; a row-major one
    carries none."""
    with fx_traceback.preserve_node_meta():
        gm = make_fx(lambda w, v, e, x: (w + 1, v * 2, e - 1, x))(
            torch.randn(3, 2).t(), torch.randn(4, 6)[:, :3], torch.randn(3).expand(2, 3), torch.randn(2, 3))
    g = import_graph(gm)
    func = next(op for op in g.module.walk() if op.name == "func.func")
    strides = [list(a.data["strides"].get_values()) if "strides" in a.data else None for a in func.arg_attrs.data]
    assert strides == [[1, 2], [6, 1], [0, 1], None], strides
    check_round_trip(g.module)


def test_calls_returning_new_tensors_are_fresh():
    """An aten.call whose schema returns new tensors is `fresh` (plan-buffers may reuse its
    arguments' storage); one returning an alias of an argument is not, nor is a collective,
    whose wait returns the buffer it was given whatever its schema says."""
    import importlib

    from mlc.frontend.schemas import returns_fresh

    importlib.import_module("torch.distributed._functional_collectives")  # registers _c10d_functional
    ops = torch.ops
    assert returns_fresh(ops.aten._scaled_dot_product_cudnn_attention.default._schema,
                         "_scaled_dot_product_cudnn_attention.default")
    assert not returns_fresh(ops.aten.alias.default._schema, "alias.default")
    assert not returns_fresh(ops.aten.add_.Tensor._schema, "add_.Tensor")
    wait = ops._c10d_functional.wait_tensor.default
    assert not returns_fresh(wait._schema, "_c10d_functional::wait_tensor.default")


def test_traced_strides_of_attention_operands():
    """Attention lays its results out as its operands are, so it records each tensor operand's
    traced strides (`operand_strides`, [] for row-major) for realize to store computed operands
    with: here a query [B, H, S, D] in [B, S, H, D] order. Other calls record none."""
    import torch.nn.functional as F

    def attention(x, k):
        q = x.view(2, 8, 4, 16).transpose(1, 2) * 2
        return F.scaled_dot_product_attention(q, k, k), x.transpose(1, 2).contiguous() * 2

    ops = [op for op in imported(attention, torch.randn(2, 8, 64), torch.randn(2, 4, 8, 16)).module.walk()
           if "operand_strides" in op.attributes]
    assert [op.overload.data for op in ops] == ["_scaled_dot_product_flash_attention_for_cpu"], ops
    strides = [list(a.get_values()) for a in ops[0].attributes["operand_strides"].data]
    assert strides == [[512, 16, 64, 1], [], []], strides


def test_traced_strides_of_convolution_operands():
    """A convolution returns channels-last where its input is (cuDNN), so it records its
    operands' traced strides too: a channels-last input's, none for a row-major weight. An
    attention operand whose last dim is not the fastest records none (Inductor makes it
    contiguous)."""
    import torch.nn.functional as F

    def conv_and_attention(x, w, k):
        return F.conv2d(x * 2, w), F.scaled_dot_product_attention(k, k.transpose(2, 3) * 2, k)

    x = torch.randn(2, 3, 8, 8).to(memory_format=torch.channels_last)
    ops = {op.name: [list(a.get_values()) for a in op.attributes["operand_strides"].data]
           for op in imported(conv_and_attention, x, torch.randn(4, 3, 3, 3), torch.randn(2, 4, 8, 8)).module.walk()
           if "operand_strides" in op.attributes}
    assert ops == {"aten.convolution": [[192, 1, 24, 3], []]}, ops


def test_traced_strides_over_symbolic_sizes():
    """Symbolic strides are recorded as expressions where they are proved dense and not
    row-major (`#sym.sizes`), without guarding on a size: a permuted channels-last clone of
    [s0, s1, s2, s3] is [s1*s2*s3, 1, s1*s3, s1]; row-major results carry none."""
    with fx_traceback.preserve_node_meta():
        gm = make_fx(lambda x: (x.clone(memory_format=torch.channels_last) + 1, x * 2),
                     tracing_mode="symbolic")(torch.randn(2, 3, 4, 5))
    g = import_graph(gm)
    tagged = {op.name: [str(a) for a in op.attributes["result_strides"].data]
              for op in g.module.walk() if isinstance(op, AtenOp) and "result_strides" in op.attributes}
    assert tagged == {"aten.clone": ["#sym.sizes<[s1*s2*s3, 1, s1*s3, s1]>"],
                      "aten.add.Scalar": ["#sym.sizes<[s1*s2*s3, 1, s1*s3, s1]>"]}, tagged
    check_round_trip(g.module)
