"""The `aten` dialect: an imported FX graph, one op per aten overload.

Produced by the FX importer (`frontend/`), consumed by `--lower-aten`. Ops are named after the
overload as torch-mlir names them (`aten.add.Tensor`, `aten.sum.dim_IntList`, `aten.convolution`
for `.default`). Tensor arguments are operands, in schema order; every other argument is an
entry of the op's argument dictionary, keyed by its schema name; the FX node's name is the op's
location. An overload without a dedicated op imports as `aten.call`, so every graph imports.

    %0 = aten.mul.Tensor %x, %y : (tensor<8x64xf32>, tensor<64xf32>) -> tensor<8x64xf32> loc("mul")
    %1 = aten.sum.dim_IntList %0 {dim = array<i64: 1>, keepdim = false} : (tensor<8x64xf32>) -> tensor<8xf32>
    %2 = aten.cat [%x, %x] {dim = 1 : i64} : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x128xf32>
    %3 = aten.convolution %x, %w, none {stride = array<i64: 1, 1>, ...} : (...) -> tensor<...>
    %v, %i = aten.max.dim %x {dim = 1 : i64} : (tensor<8x64xf32>) -> (tensor<8xf32>, tensor<8xi64>)
    %4 = aten.call "fft_fft" (%x) {args = [#aten.tensor, 8 : i64]} : (...) -> tensor<...>

In `aten.call`, `args`/`kwargs` hold the Python arguments with `#aten.tensor` marking where the
next operand goes (nested in lists for Tensor[] arguments) and `#aten.none` for None.

Argument values: int `3 : i64`, float `0.5 : f64`, bool `true`, int list `array<i64: 1, 2>`,
dtype `f16`, anything else (device, memory format, reduction mode strings) a string.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import sympy

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    StringAttr,
    TensorType,
    i32,
)
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    var_operand_def,
    var_result_def,
)
from xdsl.irdl.declarative_assembly_format import (
    AttributeVariable,
    CustomDirective,
    FormatProgram,
    ParsingState,
    PrintingState,
    VariadicOperandVariable,
    irdl_custom_directive,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from mlc.dialects.aten_checks import verify_arguments
from mlc.dialects.aten_schemas import SCHEMAS
from mlc.dialects.sym import sizes_of
from mlc.dialects.syntax import CallArgs, FunctionTypeOf
from mlc.dialects.values import NoneArgAttr, TensorArgAttr, attr_to_py

# ---------------------------------------------------------------------------------------------
# Schemas: a small reader of torch's schema strings (no torch import: mlc-opt must start fast).


@dataclass(frozen=True)
class Arg:
    name: str
    type: str  # as written, minus alias annotations: "Tensor", "Tensor?", "Tensor[]", "int[]", ...
    default: str | None
    kwarg_only: bool

    @property
    def tensor_kind(self) -> str | None:
        """'one', 'optional', 'list' (Tensor[] and Tensor?[]) or None for a non-tensor."""
        return {"Tensor": "one", "Tensor?": "optional", "Tensor[]": "list", "Tensor?[]": "list"}.get(
            self.type
        )


@dataclass(frozen=True)
class Schema:
    overload: str  # "add.Tensor", "cat" (for .default)
    args: tuple[Arg, ...]
    returns: tuple[str, ...]  # return types, alias annotations removed
    fresh_results: bool = True  # no return carries an alias annotation: the op returns new tensors

    @property
    def op_name(self) -> str:
        return "aten." + self.overload

    @property
    def packet(self) -> str:
        return self.overload.split(".")[0]

    @property
    def tensor_args(self) -> tuple[Arg, ...]:
        return tuple(a for a in self.args if a.tensor_kind)

    @property
    def variadic_results(self) -> bool:
        return self.returns == ("Tensor[]",)

    def arg(self, name: str) -> Arg:
        for a in self.args:
            if a.name == name:
                return a
        raise KeyError(f"{self.overload} has no argument {name!r}")


_ALIAS = re.compile(r"\([a-z][a-z!* \->|]*\)")  # alias annotations: (a), (a!), (a -> *)


def parse_schema(text: str) -> Schema:
    # Drop alias annotations first: `Tensor(a -> *) self` would otherwise split at its arrow.
    head, _, rets = _ALIAS.sub("", text).partition(" -> ")
    name, _, arglist = head.partition("(")
    args: list[Arg] = []
    kwarg_only = False
    for item in _split_top(arglist.removesuffix(")")):
        if item == "*":
            kwarg_only = True
            continue
        decl, _, default = item.partition("=")
        typ, _, argname = _ALIAS.sub("", decl).rpartition(" ")
        args.append(Arg(argname, typ, default or None, kwarg_only))
    rets = _ALIAS.sub("", rets.strip())
    if rets.startswith("("):
        returns = tuple(r.split(" ")[0] for r in _split_top(rets[1:-1]))
    else:
        returns = (rets,)
    fresh = _ALIAS.search(text.rpartition(") -> ")[2]) is None
    return Schema(name, tuple(args), tuple(r for r in returns if r), fresh)


def _split_top(s: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def default_value(arg: Arg) -> Any:
    """The schema default as a Python value (None when absent)."""
    d = arg.default
    if d is None or d == "None":
        return None
    if d in ("True", "False"):
        return d == "True"
    if d.startswith("["):
        return [int(x) for x in d[1:-1].split(",") if x.strip()]
    if d.startswith('"') or d.startswith("'"):
        return d[1:-1]
    try:
        return int(d)
    except ValueError:
        pass
    try:
        return float(d)
    except ValueError:
        return d


# ---------------------------------------------------------------------------------------------
# Syntax: tensors by schema argument, other arguments as a dictionary


@irdl_custom_directive
class SchemaOperands(CustomDirective):
    """The tensor operands, one group per tensor argument of the op's schema: `%x`, `none` for
    an absent optional tensor, `[%a, %b]` for a list; `segments` records the group sizes."""

    tensors: VariadicOperandVariable
    segments: AttributeVariable

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        assert isinstance(op, AtenOp)
        if op.SCHEMA.tensor_args:
            state.print_whitespace(printer)
        for i, (arg, group) in enumerate(zip(op.SCHEMA.tensor_args, op._groups())):
            printer.print_string(", " if i else "")
            self._print_group(printer, arg, group)

    @staticmethod
    def _print_group(printer: Printer, arg: Arg, group: list[SSAValue]) -> None:
        if arg.tensor_kind == "list":
            printer.print_string("[")
            printer.print_list(group, printer.print_ssa_value)
            printer.print_string("]")
        elif group:
            printer.print_ssa_value(group[0])
        else:
            printer.print_string("none")

    def parse(self, parser: Parser, state: ParsingState) -> None:
        op_type = state.op_type
        assert issubclass(op_type, AtenOp)
        groups = [self._parse_group(parser, arg, i) for i, arg in enumerate(op_type.SCHEMA.tensor_args)]
        self.tensors.set(state, [o for g in groups for o in g])
        if op_type._needs_segments():
            self.segments.set(state, DenseArrayBase.from_list(i32, [len(g) for g in groups]))

    @staticmethod
    def _parse_group(parser: Parser, arg: Arg, i: int) -> list[UnresolvedOperand]:
        if i:
            parser.parse_punctuation(",")
        if arg.tensor_kind == "list":
            return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_unresolved_operand)
        if arg.tensor_kind == "optional" and parser.parse_optional_keyword("none"):
            return []
        return [parser.parse_unresolved_operand()]


@irdl_custom_directive
class ArgDict(CustomDirective):
    """The non-tensor arguments by schema name, `{dim = 1 : i64, keepdim = false}` (nothing
    when there are none)."""

    args: AttributeVariable

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        args = self.args.get(op)
        if isinstance(args, DictionaryAttr) and args.data:
            state.print_whitespace(printer)
            printer.print_attr_dict(args.data)

    def parse(self, parser: Parser, state: ParsingState) -> None:
        if args := parser.parse_optional_attr_dict():
            self.args.set(state, DictionaryAttr(args))


# ---------------------------------------------------------------------------------------------
# Ops


ATEN_FORMAT = (
    "custom<SchemaOperands>($tensors, $segments) custom<ArgDict>($args) attr-dict-with-keyword"
    " `:` custom<FunctionTypeOf>(ref($tensors), type($tensors), type($outputs))"
)
"""The assembly format of every dedicated op: `%x, none {alpha = 2 : i64} : (...) -> ...`."""


@functools.cache
def _aten_format() -> FormatProgram:
    """ATEN_FORMAT, compiled once: every dedicated op has AtenOp's fields, so one program
    parses and prints them all."""
    return FormatProgram.from_str(ATEN_FORMAT, next(iter(OPS.values())).get_irdl_definition())


class AtenOp(IRDLOperation):
    """Base class of the dedicated ops; `SCHEMA` says how operands and arguments map."""

    SCHEMA: ClassVar[Schema]

    tensors = var_operand_def()
    outputs = var_result_def()
    args = opt_prop_def(DictionaryAttr)
    # Operands per tensor argument; present only when the schema has optional or list tensors.
    segments = opt_prop_def(DenseArrayBase)
    custom_directives = (SchemaOperands, ArgDict, FunctionTypeOf)

    def __init__(
        self,
        tensors: Sequence[SSAValue | None | Sequence[SSAValue]],
        args: dict[str, Attribute],
        result_types: Sequence[Attribute],
    ):
        flat: list[SSAValue] = []
        sizes: list[int] = []
        for t in tensors:
            group = [] if t is None else list(t) if isinstance(t, (list, tuple)) else [t]
            flat += group
            sizes.append(len(group))
        props: dict[str, Attribute] = {}  # in the order of the syntax, as parsing sets them
        if self._needs_segments():
            props["segments"] = DenseArrayBase.from_list(i32, sizes)
        if args:
            props["args"] = DictionaryAttr(args)
        super().__init__(operands=[flat], result_types=[list(result_types)], properties=props)

    @classmethod
    def _needs_segments(cls) -> bool:
        return any(a.tensor_kind != "one" for a in cls.SCHEMA.tensor_args)

    # -- access by schema name ------------------------------------------------------------------

    def _groups(self) -> list[list[SSAValue]]:
        sizes = (
            self.segments.get_values() if self.segments is not None else [1] * len(self.tensors)
        )
        groups, start = [], 0
        for size in sizes:
            groups.append(list(self.tensors[start : start + size]))
            start += size
        return groups

    def tensor(self, name: str) -> SSAValue | None:
        """The operand passed for Tensor / Tensor? argument `name` (None when absent)."""
        idx = [a.name for a in self.SCHEMA.tensor_args].index(name)
        group = self._groups()[idx]
        return group[0] if group else None

    def tensor_list(self, name: str) -> list[SSAValue]:
        idx = [a.name for a in self.SCHEMA.tensor_args].index(name)
        return self._groups()[idx]

    def arg(self, name: str) -> Any:
        """A non-tensor argument as a Python value, the schema default when not given."""
        if self.args is not None and name in self.args.data:
            return attr_to_py(self.args.data[name])
        return default_value(self.SCHEMA.arg(name))

    # -- verification ---------------------------------------------------------------------------

    def verify_(self) -> None:
        schema = self.SCHEMA
        names = {a.name for a in schema.args if not a.tensor_kind}
        if self.args is not None:
            for key in self.args.data:
                if key not in names:
                    raise VerifyException(f"{self.name}: unknown argument '{key}'")
        groups = self._groups()
        if self._needs_segments():
            if self.segments is None:
                raise VerifyException(f"{self.name}: missing operand segments")
            if sum(self.segments.get_values()) != len(self.tensors):
                raise VerifyException(f"{self.name}: operand segments do not add up to the operands")
        if len(groups) != len(schema.tensor_args):
            raise VerifyException(
                f"{self.name}: expected {len(schema.tensor_args)} tensor arguments, got {len(groups)}"
            )
        for arg, group in zip(schema.tensor_args, groups):
            if arg.tensor_kind == "one" and len(group) != 1:
                raise VerifyException(f"{self.name}: argument '{arg.name}' needs one tensor")
            if arg.tensor_kind == "optional" and len(group) > 1:
                raise VerifyException(f"{self.name}: argument '{arg.name}' takes at most one tensor")
        for operand in self.tensors:
            if not isinstance(operand.type, TensorType):
                raise VerifyException(f"{self.name}: operand type {operand.type} is not a tensor")
        if not schema.variadic_results and len(self.outputs) != len(schema.returns):
            raise VerifyException(
                f"{self.name}: expected {len(schema.returns)} results, got {len(self.outputs)}"
            )
        if self.packet in ELEMENTWISE:
            _verify_broadcast(self)
        verify_arguments(self)  # dims in range, reduction and view shapes

    @property
    def packet(self) -> str:
        return self.SCHEMA.packet

    # ATEN_FORMAT, shared: an `assembly_format` per generated class would cost ~0.2 s of start-up.
    @classmethod
    def parse(cls, parser: Parser) -> AtenOp:
        return _aten_format().parse(parser, cls)

    def print(self, printer: Printer) -> None:
        _aten_format().print(printer, self)


# Packets whose result shape is the broadcast of their tensor operands' shapes.
ELEMENTWISE = frozenset(
    """add sub rsub mul div true_divide floor_divide remainder fmod neg abs exp exp2 expm1 log
    log1p log2 log10 sqrt rsqrt reciprocal pow sin cos tan tanh sigmoid erf relu gelu silu elu
    leaky_relu hardtanh softplus hardsigmoid hardswish mish sign floor ceil round trunc isnan
    isinf clamp clamp_min clamp_max maximum minimum where eq ne lt le gt ge logical_and
    logical_or logical_not logical_xor bitwise_and bitwise_or bitwise_xor bitwise_not
    masked_fill threshold_backward gelu_backward sigmoid_backward tanh_backward""".split()
)


def broadcast_shapes(shapes: Sequence[Sequence[int | sympy.Expr]]) -> list[int | sympy.Expr] | None:
    """NumPy broadcasting; None when static sizes do not broadcast. A symbolic size is never 1
    (Dynamo specializes sizes 0 and 1), and two sizes that are not both static are taken to
    agree: Dynamo guarded on whatever made the graph's shapes broadcast."""
    rank = max((len(s) for s in shapes), default=0)
    out: list[int | sympy.Expr] = [1] * rank
    for shape in shapes:
        for i, d in enumerate(shape, start=rank - len(shape)):
            if d == 1:
                continue
            if out[i] != 1 and isinstance(out[i], int) and isinstance(d, int) and out[i] != d:
                return None
            out[i] = d if out[i] == 1 or not isinstance(d, int) else out[i]
    return out


def _verify_broadcast(op: AtenOp) -> None:
    shapes = [sizes_of(t.type) for t in op.tensors]
    expected = broadcast_shapes(shapes)
    if expected is None:
        raise VerifyException(
            f"{op.name}: operand shapes {', '.join(str(s) for s in shapes)} do not broadcast"
        )
    for r in op.outputs:
        if not isinstance(r.type, TensorType):
            continue
        got = sizes_of(r.type)
        if len(got) != len(expected) or any(
            isinstance(g, int) and isinstance(e, int) and g != e for g, e in zip(got, expected)
        ):
            raise VerifyException(
                f"{op.name}: result shape {got} is not the broadcast shape {expected} of the operands"
            )


class ExternCallBase(IRDLOperation):
    """An op call with Python-style arguments: `"overload" (%tensors) {args = [...], kwargs = {...}}`.

    In `args`/`kwargs`, `#aten.tensor` marks where the next operand goes (nested in lists for
    Tensor[] arguments) and `#aten.none` stands for None."""

    overload = prop_def(StringAttr)
    tensors = var_operand_def()
    outputs = var_result_def()
    args = prop_def(ArrayAttr)
    kwargs = opt_prop_def(DictionaryAttr)
    assembly_format = (
        "$overload ` ` `(` $tensors `)` custom<CallArgs>($args, $kwargs) attr-dict-with-keyword"
        " `:` custom<FunctionTypeOf>(ref($tensors), type($tensors), type($outputs))"
    )
    custom_directives = (CallArgs, FunctionTypeOf)

    def __init__(
        self,
        overload: str,
        tensors: Sequence[SSAValue],
        args: Sequence[Attribute],
        kwargs: dict[str, Attribute] | None,
        result_types: Sequence[Attribute],
    ):
        props: dict[str, Attribute] = {"overload": StringAttr(overload), "args": ArrayAttr(list(args))}
        if kwargs:
            props["kwargs"] = DictionaryAttr(kwargs)
        super().__init__(operands=[list(tensors)], result_types=[list(result_types)], properties=props)

    def verify_(self) -> None:
        n = count_tensor_marks(self.args) + (
            sum(count_tensor_marks(v) for v in self.kwargs.data.values()) if self.kwargs else 0
        )
        if n != len(self.tensors):
            raise VerifyException(
                f"{self.name}: arguments mark {n} tensors but the op has {len(self.tensors)} operands"
            )


def count_tensor_marks(a: Attribute) -> int:
    if isinstance(a, TensorArgAttr):
        return 1
    if isinstance(a, (ArrayAttr, DictionaryAttr)):
        items = a.data.values() if isinstance(a, DictionaryAttr) else a.data
        return sum(count_tensor_marks(x) for x in items)
    return 0


@irdl_op_definition
class CallOp(ExternCallBase):
    """Any aten overload without a dedicated op; `--lower-aten` makes it a `loops.extern`.

        %0 = aten.call "fft_fft" (%x) {args = [#aten.tensor, 8 : i64]} attributes {fresh} : (tensor<8xf32>) -> tensor<8xcomplex<f32>>

    `fresh` (FRESH_RESULTS, recorded by the importer from torch's schema): no result is an
    argument or a view of one; the extern it becomes keeps it."""

    name = "aten.call"


FRESH_RESULTS = "fresh"  # on an aten.call, and the loops.extern it becomes: its results are new tensors


def _make_op_class(schema: Schema) -> type[AtenOp]:
    cls = type(
        "Aten_" + schema.overload.replace(".", "_"),
        (AtenOp,),
        {
            "name": schema.op_name,
            "SCHEMA": schema,
            "__annotations__": {"SCHEMA": ClassVar[Schema]},
            "__module__": __name__,
            "__doc__": f"aten::{schema.overload}",
        },
    )
    return irdl_op_definition(cls)


OPS: dict[str, type[AtenOp]] = {}
for _text in SCHEMAS:
    _schema = parse_schema(_text)
    OPS[_schema.overload] = _make_op_class(_schema)


def op_class(overload: str) -> type[AtenOp] | None:
    """The dedicated op for `overload` ('add.Tensor', 'cat' or 'cat.default'), if any."""
    return OPS.get(overload.removesuffix(".default"))


Aten = Dialect("aten", [*OPS.values(), CallOp], [TensorArgAttr, NoneArgAttr])
