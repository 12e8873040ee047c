"""The FX importer: a `torch.fx.GraphModule` of aten ops → the `aten` dialect.

Given the graph of `make_fx(lambda x, w: gelu(x * w), decomposition_table=...)(x, w)`:

    def forward(self, x_1, w_1):
        mul = torch.ops.aten.mul.Tensor(x_1, w_1)
        mul_1 = torch.ops.aten.mul.Tensor(mul, 0.5)
        ...
        mul_3 = torch.ops.aten.mul.Tensor(mul_1, add)
        return mul_3

the importer builds one `func.func @forward` (printed here with locations):

    func.func @forward(%x.1: tensor<8x32xf32> loc("x_1"), %w.1: tensor<32xf32> loc("w_1")) -> tensor<8x32xf32> {
      %0 = aten.mul.Tensor %x.1, %w.1 : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32> loc("mul")
      %1 = aten.mul.Scalar %0 {other = 5.000000e-01 : f64} attributes {origin = "gelu"} : (tensor<8x32xf32>) -> tensor<8x32xf32> loc("mul_1")
      ...
      %5 = aten.mul.Tensor %1, %4 attributes {origin = "gelu"} : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32> loc("mul_3")
      func.return %5 : tensor<8x32xf32> loc("output")
    }

* Function arguments are the placeholders in order, then one argument per tensor the graph
  reads through `get_attr` (`ImportedGraph.constants`, in argument order). An argument's
  location is the FX name; its SSA name is the FX name too, except that a trailing `_N` is
  written `.N` (`%primals.1`), because xDSL drops `_N` suffixes from name hints.
* Each op's location is its FX node name. An op produced by a decomposition carries the
  decomposed op's packet as `origin` (`origin = "gelu"` on the mul/erf/add of a gelu); kernel
  names are built from these, as Inductor builds them from `original_aten`.
* A Python number where the schema wants a tensor (`mul.Tensor(x, 0.5)`, `sub.Tensor(1, x)`)
  selects the overload that takes a Scalar (`mul.Scalar`, `rsub.Scalar`), as eager's wrapped
  numbers mean the same; with no such overload the op becomes an `aten.call`
  (`frontend/schemas.py`).
* Graph outputs that are None are not function results: `ImportedGraph.output_spec` maps each
  graph output to a function result index, or None.
* Functional collectives (`_c10d_functional::all_reduce`, `wait_tensor`, ...) import as
  `aten.call`s; after a collective's wait its result is read as the wait's result, and calls
  mlc cannot order are refused (`frontend/collectives.py`).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import sympy
import torch
import torch.fx
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    FunctionType,
    ModuleOp,
    NameLoc,
    NoneAttr,
    NoneType,
    StringAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from mlc.dialects.buffer_layout import (
    INPUT_STRIDES, OPERAND_STRIDES, OUTPUT_STRIDES, RESULT_STRIDES, contiguous_strides, is_dense,
)
from mlc.dialects.aten import FRESH_RESULTS, CallOp, NoneArgAttr, TensorArgAttr, op_class
from mlc.dialects.sym import CeilDiv, FloorDiv, IntType, ModularIndexing, SizesAttr, equal, size_symbol
from mlc.dialects.sym import tensor_type as sym_tensor_type
from mlc.dialects.values import DTYPES, py_to_attr
from mlc.frontend.collectives import CollectiveError, InFlight, is_wait
from mlc.frontend.schemas import (
    dedicated_op, is_int_list, is_python_number, number_first_swapped, returns_fresh, returns_list, scalar_overload,
    tensor_arg_kind,
)


class UnsupportedGraph(Exception):
    """The graph holds something the aten dialect cannot represent; the message names the node."""


@dataclass(frozen=True)
class SizeOutput:
    """A graph output that is a size computed from the inputs' sizes (AOTAutograd saves `s0*s1`
    for the backward): the caller evaluates it from `ImportedGraph.size_sources`."""

    expr: sympy.Expr


@dataclass
class ImportedGraph:
    module: ModuleOp
    """One `func.func` of aten ops."""
    constants: dict[str, torch.Tensor] = field(default_factory=dict)
    """get_attr target -> tensor; these are the trailing function arguments, in this order."""
    output_spec: list[int | None | SizeOutput] = field(default_factory=list)
    """Per graph output: the index of the function result holding it, None for a None output,
    or a size computed from the inputs' sizes (`SizeOutput`)."""
    arg_names: list[str] = field(default_factory=list)
    """FX names of the function arguments (placeholder names, then get_attr node names)."""
    lifted: dict[str, torch.Tensor] = field(default_factory=dict)
    """For exported programs: placeholder name -> the parameter, buffer or constant it receives."""
    size_sources: dict[sympy.Symbol, tuple[int, int | None]] = field(default_factory=dict)
    """Each size symbol's first source among the placeholders: (position, None) for a size
    input, (position, dim) for a tensor's dim."""

    @property
    def func(self) -> FuncOp:
        op = self.module.body.block.first_op
        assert isinstance(op, FuncOp)
        return op


def import_graph(gm: torch.fx.GraphModule, name: str = "forward") -> ImportedGraph:
    """Import `gm` (aten ops with `meta["val"]` on every node) as `func.func @name`."""
    return _Importer(gm).run(name)


# ---------------------------------------------------------------------------------------------


def tensor_type(val: Any, node: torch.fx.Node, sizes: _SizeNames | None = None) -> TensorType:
    """The builtin tensor type of a FakeTensor (or real tensor) value; its symbolic sizes
    (dynamic shapes) named by `sizes`."""
    if not isinstance(val, torch.Tensor):
        if node.target is torch.ops.aten._local_scalar_dense.default:
            raise UnsupportedGraph(
                f"{_describe(node)}: a number read out of a tensor ({val!r}) is computed with inside the graph; "
                "data-dependent values are not supported yet (only returning them is)"
            )
        raise UnsupportedGraph(f"{_describe(node)}: value {val!r} is not a tensor")
    if all(isinstance(d, int) for d in val.shape):
        return TensorType(_dtype(val.dtype, node), list(val.shape))
    if sizes is None:
        raise UnsupportedGraph(f"{_describe(node)}: a constant with symbolic sizes")
    return sym_tensor_type(_dtype(val.dtype, node), [sizes.expr(d, node) for d in val.shape])


class _SizeNames:
    """Dynamo's size symbols (`s77`, `s27`) renamed `s0, s1, ...` in the order the graph's
    inputs first use them, so that the IR of one program reads the same however Dynamo
    numbered its symbols."""

    def __init__(self) -> None:
        self.names: dict[sympy.Symbol, sympy.Symbol] = {}

    def bind(self, value: Any) -> None:
        """Names the symbols of an input (a SymInt, or a tensor's sizes) not named yet."""
        dims = [value] if isinstance(value, torch.SymInt) else list(value.shape) if isinstance(value, torch.Tensor) else []
        for d in dims:
            if isinstance(d, torch.SymInt):
                for s in sorted(d.node.expr.free_symbols, key=str):
                    self.names.setdefault(s, size_symbol(len(self.names)))

    def expr(self, value: Any, node: torch.fx.Node) -> int | sympy.Expr:
        """A size as an int or an expression of the named symbols."""
        if isinstance(value, int):
            return value
        expr = value.node.expr
        unknown = expr.free_symbols - set(self.names)
        if unknown:
            raise UnsupportedGraph(
                f"{_describe(node)}: {expr} depends on {', '.join(sorted(map(str, unknown)))}, which no input "
                "gives: data-dependent values are not supported yet"
            )
        try:
            return _mlc_expr(expr.xreplace(self.names))
        except ValueError as e:
            raise UnsupportedGraph(f"{_describe(node)}: size {expr}: {e}") from None


def _mlc_expr(expr: sympy.Expr) -> sympy.Expr:
    """A size expression of torch's shape environment in the `sym` dialect's functions:
    torch's FloorDiv, ModularIndexing, CeilToInt(IntTrueDiv(a, b)), PythonMod, ... become
    FloorDiv, ModularIndexing and CeilDiv, which mlc parses, prints and simplifies."""
    if expr.is_Atom:
        return expr
    name = type(expr).__name__
    if name in ("CeilToInt", "FloorToInt") and type(expr.args[0]).__name__ == "IntTrueDiv":
        a, b = (_mlc_expr(x) for x in expr.args[0].args)
        return CeilDiv(a, b) if name == "CeilToInt" else FloorDiv(a, b)
    args = [_mlc_expr(a) for a in expr.args]
    if isinstance(expr, (sympy.Add, sympy.Mul, sympy.Min, sympy.Max)):
        return expr.func(*args)
    if isinstance(expr, sympy.Pow) and expr.exp.is_Integer and int(expr.exp) > 0:
        return expr.func(*args)
    if name in ("FloorDiv", "CleanDiv") and len(args) == 2:
        return FloorDiv(*args)
    if name == "ModularIndexing":
        return ModularIndexing(*args)
    if name == "PythonMod":  # sizes are non-negative, divisors positive: as ModularIndexing(a, 1, b)
        return ModularIndexing(args[0], sympy.Integer(1), args[1])
    raise ValueError(f"{name} is not an integer size function mlc knows")


def _dtype(dtype: torch.dtype, node: torch.fx.Node) -> Attribute:
    element = DTYPES.get(str(dtype).removeprefix("torch."))
    if element is None:
        raise UnsupportedGraph(f"{_describe(node)}: dtype {dtype} is not supported")
    return element


def _describe(node: torch.fx.Node) -> str:
    if node.op == "call_function":
        kind = _target_name(node.target)  # "aten.mul.Tensor"
    elif node.op in ("call_module", "call_method"):
        kind = f"{node.op} {node.target}"
    else:
        kind = node.op  # placeholder, get_attr, output
    return f"node '{node.name}' ({kind})"


def _result_strides(node: torch.fx.Node, names: _SizeNames) -> list[list[int | sympy.Expr]]:
    """The strides each result of an op has when traced, as `_dense_strides` says: what an
    extern call returns (attention's output is [B, H, S, D] laid out as [B, S, H, D]). realize
    reads them for extern calls only; ops it lowers choose their own layouts."""
    value = node.meta.get("val")
    return [_dense_strides(v, names, node) for v in (value if isinstance(value, (tuple, list)) else [value])]


# Calls whose results are laid out as their operands are. Fused attention: cuDNN's output is
# [B, H, S, D] stored as [B, S, H, D] when the query is (Inductor's `sdpa_constraint`), and the
# operand's last dim must be its fastest, else Inductor makes it contiguous. Convolutions and
# pooling: cuDNN and aten return channels-last where the input is channels-last
# (`suggest_memory_format`), and a convolution converts inside the call an input not in the
# format of the others. Their operands' traced strides are recorded so that realize stores
# computed operands with them, and the results come back with the traced `result_strides`
# instead of being copied into them.
LAYOUT_FOLLOWS_OPERANDS = frozenset(
    f"_scaled_dot_product_{kind}{suffix}"
    for kind in ("flash_attention", "efficient_attention", "cudnn_attention", "flash_attention_for_cpu",
                 "fused_attention_overrideable")
    for suffix in ("", "_backward")
) | {f"{op}{suffix}" for op in ("convolution", "max_pool2d_with_indices", "avg_pool2d", "_adaptive_avg_pool2d")
     for suffix in ("", "_backward")}


def _operand_strides(node: torch.fx.Node, target: torch._ops.OpOverload,
                     names: _SizeNames) -> list[list[int | sympy.Expr]]:
    """For a call in `LAYOUT_FOLLOWS_OPERANDS`, the traced strides of each tensor operand in
    operand order (`_dense_strides`: [] for row-major, and for an attention operand whose last
    dim is not its fastest), else []."""
    namespace, packet = target._schema.name.split("::")
    if namespace != "aten" or packet not in LAYOUT_FOLLOWS_OPERANDS:
        return []
    values = _bind(node, target._schema)
    operands: list[torch.fx.Node] = []
    for arg in target._schema.arguments:
        value = values.get(arg.name)
        if tensor_arg_kind(arg.type) is not None:
            given = value if isinstance(value, (list, tuple)) else [value]
            operands.extend(v for v in given if isinstance(v, torch.fx.Node))
    strides = [_dense_strides(v.meta.get("val"), names, node) for v in operands]
    if packet.startswith("_scaled_dot_product"):
        strides = [st if not st or v.meta["val"].shape[-1] == 1 or st[-1] == 1 else []
                   for v, st in zip(operands, strides)]
    return strides


def _strides_array(strides: Sequence[Sequence[int | sympy.Expr]]) -> ArrayAttr:
    """One entry per value, as realize reads it: `array<i64: ...>` (empty: row-major), or
    `#sym.sizes<[...]>` where a stride is symbolic."""
    return ArrayAttr([
        DenseArrayBase.from_list(i64, [int(s) for s in st]) if all(isinstance(s, int) or s.is_Integer for s in st)
        else SizesAttr(st)
        for st in strides
    ])


def _input_strides(value: torch.Tensor, expanded: bool = False) -> list[int] | None:
    """An input's strides where they are static and not row-major, else None: any strided
    layout (a transposed weight, a view with gaps between rows), with broadcast dims (a stride
    0) only where `expanded` (a graph's input as it comes: the kernels read an expanded view,
    a buffer's `expand` that a forward returns and its backward takes, in place). Symbolic
    strides are not read (int() of a SymInt would guard on its value). Without strides an
    input is made row-major on each call where it comes otherwise (a no-op for one that is)."""
    strides, sizes = value.stride(), value.shape
    if not all(isinstance(d, int) for d in (*strides, *sizes)) or 0 in sizes:
        return None
    if not expanded and any(s == 0 and n != 1 for n, s in zip(sizes, strides)):
        return None
    if all(n == 1 or s == c for n, s, c in zip(sizes, strides, contiguous_strides(sizes))):
        return None
    return list(strides)


def _dense_strides(value: Any, names: _SizeNames, node: torch.fx.Node) -> list[int | sympy.Expr]:
    """A tensor's strides where they are those of a dense, non-overlapping layout other than
    row-major (a transposed result, channels-last); [] otherwise (row-major, expanded, empty
    or not a tensor), which realize reads as "no preference". Symbolic strides are
    expressions of the named sizes, proved dense and not row-major as expressions (never by
    value: int() of a SymInt would guard on, specialize, its value)."""
    if not isinstance(value, torch.Tensor) or value.dim() < 2:
        return []
    try:
        strides = [names.expr(d, node) for d in value.stride()]
        sizes = [names.expr(d, node) for d in value.shape]
    except UnsupportedGraph:  # a stride no input gives
        return []
    row_major = all(n == 1 or equal(s, c) for n, s, c in zip(sizes, strides, contiguous_strides(sizes)))
    if 0 in sizes or row_major or not is_dense(sizes, strides):
        return []
    return strides


def _returned_strides(value: Any, names: _SizeNames, node: torch.fx.Node) -> list[int | sympy.Expr]:
    """The strides eager gives a returned tensor, where they are not row-major: a dense layout
    as `_dense_strides` says (realize stores a computed result with it), or static strides of
    no dense layout as `_input_strides` says (a slice `x[:, :5]`, whose rows are 8 apart:
    realize returns a view with those strides as it is). [] where they are row-major, or
    symbolic and not dense: no preference."""
    if (dense := _dense_strides(value, names, node)) or not isinstance(value, torch.Tensor):
        return dense
    return _input_strides(value) or []


def _loc(name: str) -> NameLoc:
    return NameLoc(StringAttr(name), NoneAttr())  # loc("mul_2")


def _target_name(target: Any) -> str:
    if isinstance(target, torch._ops.OpOverload):
        return str(target)  # "aten.add.Tensor"
    try:
        name = torch.fx.node._get_qualified_name(target)  # "torch.relu", "_operator.getitem"
    except Exception:  # noqa: BLE001 - only a label for a message
        name = str(target)
    return name.removeprefix("_operator.")


def _packet(op: Any) -> str | None:
    packet = getattr(op, "_overloadpacket", None)
    return getattr(packet, "__name__", None)


_TRAILING_NUMBER = re.compile(r"_(\d+)$")


def _name_hint(name: str) -> str | None:
    # xDSL strips a trailing `_N` from name hints (it uses such suffixes to unique names), so
    # `primals_1` would print as `%primals`; `.N` survives printing and parsing.
    hint = _TRAILING_NUMBER.sub(r".\1", name)
    return hint if re.fullmatch(r"[A-Za-z_$.-][\w$.-]*", hint) else None


Value = SSAValue | list[SSAValue] | sympy.Expr  # one result, all results of a multi-result op, or a size


class _Importer:
    def __init__(self, gm: torch.fx.GraphModule):
        self.gm = gm
        self.block = Block()
        self.values: dict[torch.fx.Node, Value] = {}
        self.constants: dict[str, torch.Tensor] = {}
        self.constant_args: dict[str, SSAValue] = {}
        self.arg_names: list[str] = []
        self.arg_strides: dict[int, list[int]] = {}  # by argument: an input's strides when not row-major
        self.sizes = _SizeNames()
        self.comms = InFlight()  # collective results not waited for yet (frontend/collectives.py)

    def run(self, name: str) -> ImportedGraph:
        nodes = list(self.gm.graph.nodes)
        # Placeholders first, so that the get_attr arguments come after all of them.
        for node in nodes:
            if node.op == "placeholder":
                self.sizes.bind(node.meta.get("val"))
        for node in nodes:
            if node.op == "placeholder":
                self.placeholder(node)
        output_spec: list[int | None] = []
        results: list[SSAValue] = []
        for node in nodes:
            if node.op == "placeholder":
                continue
            if node.op == "get_attr":
                self.values[node] = self.get_attr(node)
            elif node.op == "call_function":
                value = self.call_function(node)
                if value is not None:
                    self.values[node] = value
            elif node.op == "output":
                results, output_spec = self.output(node)
            else:
                raise UnsupportedGraph(
                    f"{_describe(node)}: not an aten op (trace to aten ops with make_fx or torch.export)"
                )
        ret = ReturnOp(*results)
        ret.location = _loc("output")
        outputs = _flatten(self.gm.graph.output_node().args[0])
        strides = [_returned_strides(n.meta.get("val"), self.sizes, n) for n in outputs
                   if isinstance(n, torch.fx.Node) and not isinstance(n.meta.get("val"), torch.SymInt)]
        if any(strides):
            ret.attributes[OUTPUT_STRIDES] = _strides_array(strides)
        self.block.add_op(ret)
        ftype = FunctionType.from_lists(self.block.arg_types, [r.type for r in results])
        func = FuncOp(name, ftype, Region(self.block), arg_attrs=self._arg_attrs())
        module = ModuleOp([func])
        module.verify()
        return ImportedGraph(module, self.constants, output_spec, self.arg_names, size_sources=self._size_sources(nodes))

    def _arg_attrs(self) -> ArrayAttr[DictionaryAttr] | None:
        """`{strides = array<i64: ...>}` on each input traced with strides other than row-major
        (a saved `q` viewed out of the fused qkv projection, a transposed weight): realize lays
        the input out with them, so that the call takes the tensor as it comes, uncopied."""
        if not self.arg_strides:
            return None
        return ArrayAttr([
            DictionaryAttr({INPUT_STRIDES: DenseArrayBase.from_list(i64, self.arg_strides[k])} if k in self.arg_strides else {})
            for k in range(len(self.block.args))
        ])

    def _size_sources(self, nodes: list[torch.fx.Node]) -> dict[sympy.Symbol, tuple[int, int | None]]:
        sources: dict[sympy.Symbol, tuple[int, int | None]] = {}
        placeholders = [n for n in nodes if n.op == "placeholder"]
        for pos, node in enumerate(placeholders):
            val = node.meta.get("val")
            dims = [(None, val)] if isinstance(val, torch.SymInt) else list(enumerate(val.shape)) if isinstance(val, torch.Tensor) else []
            for dim, size in dims:
                expr = self.sizes.expr(size, node) if isinstance(size, torch.SymInt) else None
                if isinstance(expr, sympy.Symbol):
                    sources.setdefault(expr, (pos, dim))
        return sources

    # -- node kinds -----------------------------------------------------------------------------

    def _add_arg(self, node: torch.fx.Node, type: Attribute) -> SSAValue:
        arg = self.block.insert_arg(type, len(self.block.args))
        arg.name_hint = _name_hint(node.name)
        arg.location = _loc(node.name)
        self.arg_names.append(node.name)
        return arg

    def placeholder(self, node: torch.fx.Node) -> None:
        if "val" not in node.meta:
            raise UnsupportedGraph(
                f"{_describe(node)}: no meta['val'] (trace with make_fx or torch.export)"
            )
        val = node.meta["val"]
        if isinstance(val, torch.SymInt):  # a size, passed as an int: `!sym.int<s0>`
            self.values[node] = self._add_arg(node, IntType(self.sizes.expr(val, node)))
            return
        if not isinstance(val, torch.Tensor):
            raise UnsupportedGraph(
                f"{_describe(node)}: only tensor and size inputs are supported, got {type(val).__name__}"
            )
        self.values[node] = self._add_arg(node, tensor_type(val, node, self.sizes))
        if (strides := _input_strides(val, expanded=True)) is not None:
            self.arg_strides[len(self.block.args) - 1] = strides

    def get_attr(self, node: torch.fx.Node) -> SSAValue:
        target = str(node.target)
        if target not in self.constant_args:
            tensor = _fetch_attr(self.gm, target)
            if not isinstance(tensor, torch.Tensor):
                raise UnsupportedGraph(
                    f"{_describe(node)}: attribute '{target}' is a {type(tensor).__name__}, "
                    "not a tensor"
                )
            self.constants[target] = tensor
            self.constant_args[target] = self._add_arg(node, tensor_type(tensor, node))
        return self.constant_args[target]

    def output(self, node: torch.fx.Node) -> tuple[list[SSAValue], list[int | None | SizeOutput]]:
        results: list[SSAValue] = []
        spec: list[int | None | SizeOutput] = []
        for out in _flatten(node.args[0]):
            if out is None:
                spec.append(None)
            elif not isinstance(out, torch.fx.Node):
                raise UnsupportedGraph(f"{_describe(node)}: cannot return {out!r}")
            elif isinstance(out.meta.get("val"), torch.SymInt):
                # A size AOTAutograd saves for the backward: computed on the host.
                spec.append(SizeOutput(sympy.sympify(self._scalar(out, node))))
            else:
                spec.append(len(results))
                results.append(self._tensor(out, node))
        return results, spec

    def call_function(self, node: torch.fx.Node) -> Value | None:
        target = node.target
        if target is operator.getitem:
            source, index = node.args
            value = self.values.get(source) if isinstance(source, torch.fx.Node) else None
            if not isinstance(value, list):
                raise UnsupportedGraph(f"{_describe(node)}: getitem on a single value")
            return value[index]  # type: ignore[index]
        if isinstance(node.meta.get("val"), torch.SymInt):
            # A size computed on the host (sym_size, s0 * s1): its expression, where it is used.
            return self.sizes.expr(node.meta["val"], node)
        if not isinstance(target, torch._ops.OpOverload):
            raise UnsupportedGraph(f"{_describe(node)}: only aten ops are supported")
        try:
            self.comms.check(target, node.args, node.kwargs)
        except CollectiveError as e:
            raise UnsupportedGraph(f"{_describe(node)}: {e}") from None
        if target == torch.ops.prims.convert_element_type.default:
            source, dtype = node.args
            cls = op_class("_to_copy")
            assert cls is not None
            op: Operation = cls(
                [self._tensor(source, node)],
                {"dtype": _dtype(dtype, node)},
                [self._result_type(node)],
            )
        else:
            if target._schema.is_mutable:
                raise UnsupportedGraph(
                    f"{_describe(node)}: in-place ops are not supported (functionalize the graph)"
                )
            if not target._schema.returns:
                if not node.users:
                    return None  # a trace-time check such as _assert_tensor_metadata
                raise UnsupportedGraph(f"{_describe(node)}: op returns nothing")
            op = self.aten_op(node, target)
            strides = _result_strides(node, self.sizes)
            if any(strides) and len(strides) == len(op.results):
                op.attributes[RESULT_STRIDES] = _strides_array(strides)
            strides = _operand_strides(node, target, self.sizes)
            if any(strides) and len(strides) == len(op.operands):
                op.attributes[OPERAND_STRIDES] = _strides_array(strides)
        op.location = _loc(node.name)
        origin = _packet(node.meta.get("original_aten"))
        if origin is not None and origin != _packet(target):
            op.attributes["origin"] = StringAttr(origin)
        self.block.add_op(op)
        self.comms.record(target, op)
        if len(op.results) == 1 and not returns_list(target):
            return op.results[0]
        return list(op.results)

    # -- aten ops -------------------------------------------------------------------------------

    def aten_op(self, node: torch.fx.Node, target: torch._ops.OpOverload) -> Operation:
        values = {k: self._size_or_value(v, node) for k, v in _bind(node, target._schema).items()}
        if any(
            is_python_number(values.get(a.name)) for a in target._schema.arguments if tensor_arg_kind(a.type)
        ):
            # Decompositions write `mul.Tensor(x, 0.5)` and `sub.Tensor(1, x)`; eager wraps the
            # number, which is what `mul.Scalar(x, 0.5)` and `rsub.Scalar(x, 1)` spell out.
            # Without such an overload the op stays an aten.call that passes the number through.
            target, values = number_first_swapped(target, values)
            target = scalar_overload(target, values) or target
        schema = target._schema
        # Ops of other namespaces (prims, custom ops) keep theirs, `ns::packet.overload`:
        # lower-aten has no rule for them, so they run as extern calls.
        namespace, packet = schema.name.split("::")
        overload = f"{packet}.{target._overloadname}"
        if namespace != "aten":
            overload = f"{namespace}::{overload}"
        result_types = self._result_types(node)
        cls = dedicated_op(overload, schema)
        if cls is not None and self._fits_dedicated(schema, values):
            tensors: list[Any] = []
            args: dict[str, Attribute] = {}
            for arg in schema.arguments:
                value = values.get(arg.name)
                kind = tensor_arg_kind(arg.type)
                if kind == "list":
                    tensors.append([self._tensor(v, node) for v in value])
                elif kind is not None:
                    tensors.append(None if value is None else self._tensor(value, node))
                elif value is not None:
                    args[arg.name] = self._attr(value, arg.type, node)
            return cls(tensors, args, result_types)
        operands: list[SSAValue] = []
        positional: list[Attribute] = []
        keywords: dict[str, Attribute] = {}
        for arg in schema.arguments:
            if arg.name not in values:
                continue
            value = values[arg.name]
            if tensor_arg_kind(arg.type) is not None:
                attr = self._tensor_marks(value, operands, node)
            else:
                attr = self._attr(value, arg.type, node)
            if arg.kwarg_only:
                keywords[arg.name] = attr
            else:
                positional.append(attr)
        call = CallOp(overload.removesuffix(".default"), operands, positional, keywords, result_types)
        if returns_fresh(schema, overload):
            call.attributes[FRESH_RESULTS] = UnitAttr()
        return call

    def _size_or_value(self, value: Any, node: torch.fx.Node) -> Any:
        """A size used as a number (`mul(x, s0)` in a backward) as its expression."""
        if isinstance(value, torch.fx.Node) and isinstance(value.meta.get("val"), torch.SymInt):
            return self._scalar(value, node)
        return value

    @staticmethod
    def _fits_dedicated(schema: torch._C.FunctionSchema, values: dict[str, Any]) -> bool:
        for arg in schema.arguments:
            kind, value = tensor_arg_kind(arg.type), values.get(arg.name)
            # A Tensor?[] holding None (index.Tensor's [None, idx]) has no place in the dedicated
            # op's operand segments; aten.call keeps the None in its argument list.
            if kind == "list" and None in value:
                return False
            if kind in ("one", "optional") and is_python_number(value):
                return False
        return True

    def _tensor_marks(self, value: Any, operands: list[SSAValue], node: torch.fx.Node) -> Attribute:
        if value is None:
            return NoneArgAttr()
        if isinstance(value, (list, tuple)):
            return ArrayAttr([self._tensor_marks(v, operands, node) for v in value])
        if is_python_number(value):
            return py_to_attr(value)
        operands.append(self._tensor(value, node))
        return TensorArgAttr()

    def _tensor(self, value: Any, node: torch.fx.Node) -> SSAValue:
        if not isinstance(value, torch.fx.Node):
            raise UnsupportedGraph(
                f"{_describe(node)}: a Python {type(value).__name__} where a tensor is expected"
            )
        result = self.values[value]
        if isinstance(result, list):
            raise UnsupportedGraph(
                f"{_describe(node)}: uses the results of '{value.name}' as one tensor"
            )
        if isinstance(result.type, NoneType):
            raise UnsupportedGraph(f"{_describe(node)}: '{value.name}' is not a tensor")
        try:  # a collective's result: the wait's, after it
            return self.comms.read(result, is_wait(node.target))
        except CollectiveError as e:
            raise UnsupportedGraph(f"{_describe(node)}: {e}") from None

    def _attr(self, value: Any, type: torch._C.JitType, node: torch.fx.Node) -> Attribute:
        if isinstance(value, (list, tuple)):
            if not value and is_int_list(type):
                return DenseArrayBase.from_list(i64, [])
            return py_to_attr([self._scalar(v, node) for v in value])
        return py_to_attr(self._scalar(value, node))

    def _scalar(self, value: Any, node: torch.fx.Node) -> Any:
        if isinstance(value, torch.fx.Node) and isinstance(self.values.get(value), sympy.Expr):
            return self.values[value]  # a size computed from sizes (sym_size, s0 * s1)
        if isinstance(value, torch.fx.Node) and isinstance(getattr(self.values.get(value), "type", None), IntType):
            return self.values[value].type.expr  # a size input
        if isinstance(value, torch.SymInt):
            return self.sizes.expr(value, node)
        if isinstance(value, torch.fx.Node) or isinstance(value, torch.SymFloat):
            raise UnsupportedGraph(
                f"{_describe(node)}: symbolic arguments other than sizes are not supported yet"
            )
        if isinstance(value, torch.dtype):
            return _dtype(value, node)
        if isinstance(value, (torch.device, torch.layout, torch.memory_format)):
            return str(value).removeprefix("torch.")  # "cuda:0", "strided", "contiguous_format"
        if isinstance(value, (bool, int, float, complex, str, sympy.Expr)) or value is None:
            return value
        raise UnsupportedGraph(f"{_describe(node)}: cannot represent argument {value!r}")

    def _result_types(self, node: torch.fx.Node) -> list[Attribute]:
        val = node.meta.get("val")
        if isinstance(val, (list, tuple)):
            # A multi-output op may return None (convolution_backward of an input that needs no
            # grad) or a number (the attention ops' max_q) in some positions: such a result is
            # typed `none`, holds no tensor, and a consumer of a number reads it as a constant.
            return [tensor_type(v, node, self.sizes) if isinstance(v, torch.Tensor) else NoneType() for v in val]
        return [self._result_type(node)]

    def _result_type(self, node: torch.fx.Node) -> Attribute:
        if "val" not in node.meta:
            raise UnsupportedGraph(f"{_describe(node)}: no meta['val'] (trace with fake tensors)")
        return tensor_type(node.meta["val"], node, self.sizes)


# ---------------------------------------------------------------------------------------------
# Schema binding


def _bind(node: torch.fx.Node, schema: torch._C.FunctionSchema) -> dict[str, Any]:
    """Schema argument name -> the value FX passed (arguments FX left out are absent)."""
    names = {a.name for a in schema.arguments}
    if len(node.args) > len(schema.arguments) or not set(node.kwargs) <= names:
        raise UnsupportedGraph(f"{_describe(node)}: arguments do not match {schema}")
    values = {}
    for i, arg in enumerate(schema.arguments):
        if not arg.kwarg_only and i < len(node.args):
            given = node.args[i]
        elif arg.name in node.kwargs:
            given = node.kwargs[arg.name]
        else:
            continue
        values[arg.name] = _constant_or_node(given)
        if values[arg.name] is None and given is not None and tensor_arg_kind(arg.type) == "one":
            raise UnsupportedGraph(f"{_describe(node)}: '{given}' is not a tensor")
    return values


def _constant_or_node(value: Any) -> Any:
    """An argument that is another op's None or number output (attention's `cum_seq_q`,
    `max_q`), fixed at trace time, is passed as that constant; anything else as it is."""
    if isinstance(value, (list, tuple)):
        return type(value)(_constant_or_node(v) for v in value)
    if isinstance(value, torch.fx.Node) and value.target is operator.getitem and "val" in value.meta:
        val = value.meta["val"]
        if val is None or is_python_number(val):
            return val
    return value


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _flatten(v)]
    return [value]


def _fetch_attr(gm: torch.fx.GraphModule, target: str) -> Any:
    obj: Any = gm
    for part in target.split("."):
        obj = getattr(obj, part)
    return obj
