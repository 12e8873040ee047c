"""The host wrapper `triton.wrapper` (Inductor's `call(args)`) and its body ops: input, alloc,
launch, extern, view, free, return; with the check that a launch gives each kernel pointer a
buffer its accesses stay inside (the kernels' static spans, `kernel.py: kernel_accesses`)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence

import sympy
from xdsl.dialects.builtin import I64, ArrayAttr, IntegerAttr, StringAttr, SymbolNameConstraint, SymbolRefAttr, i64
from xdsl.ir import Attribute, Region
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
)
from xdsl.traits import IsolatedFromAbove, IsTerminator, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from mlc.dialects.buffer import ExternCall, NamedLayoutOp, ViewBase
from mlc.dialects.buffer_checks import storage_extent
from mlc.dialects.buffer_layout import LayoutAttr
from mlc.dialects.sym import ExprAttr, size_names_in
from mlc.dialects.syntax import Expr, SymbolRef, SymbolRefs
from mlc.dialects.triton.core import PtrType, _blame, _ref_names, _refs
from mlc.dialects.triton.kernel import Access, KernelOp, kernel_accesses, r0_blocks_up_to

# ---------------------------------------------------------------------------------------------
# The host wrapper


class WrapperBodyOp(IRDLOperation):
    """An op of `triton.wrapper`'s body: defines, references and frees named buffers."""

    custom_directives = (Expr, SymbolRef, SymbolRefs)

    def defined_names(self) -> list[str]:
        return []

    def referenced_names(self) -> list[str]:
        return []

    def layout_of(self, name: str) -> LayoutAttr | None:
        return None


@irdl_op_definition
class InputOp(NamedLayoutOp, WrapperBodyOp):
    """A graph input, in argument order: `triton.input "arg0_1" #buffer.layout<...>` (the
    emitter unpacks `args` in this order and may `assert_size_stride` it)."""

    name = "triton.input"


@irdl_op_definition
class SizeInputOp(WrapperBodyOp):
    """A graph input that is a size, in argument order: `triton.size_input "arg0_1" s0` (the
    emitter unpacks it from `args` and binds `s0`, which allocations, grids and kernels read)."""

    name = "triton.size_input"
    buffer = prop_def(StringAttr)
    size = prop_def(ExprAttr)
    assembly_format = "$buffer custom<Expr>($size) attr-dict"

    def __init__(self, name: str, size: sympy.Expr):
        super().__init__(properties={"buffer": StringAttr(name), "size": ExprAttr(size)})

    def defined_names(self) -> list[str]:
        return [self.buffer.data]


GRAPH_INPUTS = (InputOp, SizeInputOp)
"""The wrapper ops that are `call`'s arguments, in argument order."""


@irdl_op_definition
class AllocOp(NamedLayoutOp, WrapperBodyOp):
    """`triton.alloc "buf0" #buffer.layout<[8, 64], [64, 1], f32>`: `buf0 = empty_strided(...)`."""

    name = "triton.alloc"


@irdl_op_definition
class LaunchOp(WrapperBodyOp):
    """`triton.launch @triton_poi_fused_gelu_0(@arg0_1, @buf0) xnumel 512`: one buffer per
    kernel pointer, in order; `kernel.run(arg0_1, buf0, 512, ...)`, grid `cdiv(xnumel, XBLOCK)`.

    A persistent kernel over a symbolic r0_numel names the looped kernel that runs larger ones:
    `triton.launch @triton_per_fused_0(@a, @b) xnumel s0 r0_numel s1 else @triton_red_fused_1
    when r0_numel > 1024` (the same buffers; which one runs is decided at run time).

    A GEMM kernel may be timed against the same work unfused: `... r0_numel 96 against
    @triton_mm_fused_0_unfused` names a `triton.wrapper` taking the launch's buffers (cuBLAS
    and the epilogue's own kernel); the first run at these sizes times both and keeps the
    faster (`triton_helpers.choose`). A wrapper that needs more than the kernel's buffers names
    them after `also`: a grouped product's unfused work reads the groups' ends, where its kernel
    reads each row's group (`against @triton_mm_fused__grouped_mm_1_unfused0 also(@offs)`).

    A batched GEMM kernel runs `znumel` products: `... znumel 12 ynumel 64 xnumel 64 r0_numel 32`."""

    name = "triton.launch"
    kernel = prop_def(SymbolRefAttr)
    args = prop_def(ArrayAttr)
    xnumel = prop_def(ExprAttr)
    r0_numel = opt_prop_def(ExprAttr)
    ynumel = opt_prop_def(ExprAttr)
    znumel = opt_prop_def(ExprAttr)
    looped = opt_prop_def(SymbolRefAttr)
    persistent_max = opt_prop_def(IntegerAttr[I64])
    unfused = opt_prop_def(SymbolRefAttr)
    unfused_args = opt_prop_def(ArrayAttr)
    assembly_format = (
        "custom<SymbolRef>($kernel) `(` custom<SymbolRefs>($args) `)` (`znumel` custom<Expr>($znumel)^)?"
        " (`ynumel` custom<Expr>($ynumel)^)? `xnumel` custom<Expr>($xnumel)"
        " (`r0_numel` custom<Expr>($r0_numel)^)? (`else` custom<SymbolRef>($looped)^ `when` `r0_numel` ` ` `>` $persistent_max)?"
        " (`against` custom<SymbolRef>($unfused)^)? (`also` `(` custom<SymbolRefs>($unfused_args)^ `)`)? attr-dict"
    )

    def __init__(
        self, kernel: str, args: Sequence[str], xnumel: sympy.Expr | int, r0_numel: sympy.Expr | int | None = None,
        ynumel: sympy.Expr | int | None = None, looped: tuple[str, int] | None = None, unfused: str | None = None,
        znumel: sympy.Expr | int | None = None, unfused_args: Sequence[str] = (),
    ):
        props: dict[str, Attribute] = {"kernel": SymbolRefAttr(kernel), "args": _refs(args)}
        if znumel is not None:
            props["znumel"] = ExprAttr(znumel)
        if ynumel is not None:
            props["ynumel"] = ExprAttr(ynumel)
        props["xnumel"] = ExprAttr(xnumel)
        if r0_numel is not None:
            props["r0_numel"] = ExprAttr(r0_numel)
        if looped is not None:
            props["looped"] = SymbolRefAttr(looped[0])
            props["persistent_max"] = IntegerAttr(looped[1], i64)
        if unfused is not None:
            props["unfused"] = SymbolRefAttr(unfused)
        if unfused_args:
            props["unfused_args"] = _refs(unfused_args)
        super().__init__(properties=props)

    @property
    def kernel_name(self) -> str:
        return self.kernel.root_reference.data

    @property
    def looped_kernel_name(self) -> str | None:
        return None if self.looped is None else self.looped.root_reference.data

    @property
    def unfused_name(self) -> str | None:
        """The wrapper that does this GEMM kernel's work unfused, which it is timed against."""
        return None if self.unfused is None else self.unfused.root_reference.data

    @property
    def kernel_names(self) -> list[str]:
        """The kernels this launch may run: the one named first, and a looped one for large r0_numel."""
        looped = self.looped_kernel_name
        return [self.kernel_name] + ([looped] if looped is not None else [])

    @property
    def arg_names(self) -> list[str]:
        return _ref_names(self.args)

    @property
    def unfused_arg_names(self) -> list[str]:
        """What the unfused wrapper reads besides the kernel's buffers (`also`)."""
        return [] if self.unfused_args is None else _ref_names(self.unfused_args)

    def referenced_names(self) -> list[str]:
        return self.arg_names + self.unfused_arg_names

    def lookup_kernel(self, name: str | None = None) -> KernelOp | None:
        wrapper = self.parent_op()
        module = wrapper.parent_op() if wrapper is not None else None
        if module is None:
            return None
        name = self.kernel_name if name is None else name
        for op in module.regions[0].block.ops:
            if isinstance(op, KernelOp) and op.sym_name.data == name:
                return op
        return None

    def verify_(self) -> None:
        if (self.looped is None) != (self.persistent_max is None):
            raise VerifyException("triton.launch: a looped kernel and its r0_numel bound go together")
        for name in self.kernel_names:
            kernel = self.lookup_kernel(name)
            if kernel is None:
                raise VerifyException(f"triton.launch: no triton.kernel @{name} in this module")
            self._verify_kernel(kernel)
        kernel = self.lookup_kernel()
        assert kernel is not None
        choosing = kernel.kernel_kind == "persistent_reduction" and kernel.takes_r0_block
        if choosing != (self.looped is not None):
            raise VerifyException(
                f"triton.launch: a persistent kernel over a symbolic r0_numel, and only one, names a looped kernel "
                f"for the sizes above its bound (`else @k when r0_numel > N`): @{self.kernel_name}"
            )
        if self.looped is not None and self.persistent_max is not None:
            self._verify_choice(kernel, self.persistent_max.value.data)
        if self.unfused_name is not None:
            self._verify_unfused(kernel)
        elif self.unfused_args is not None:
            raise VerifyException("triton.launch: `also` names what an unfused wrapper reads, and there is none (`against`)")

    def _verify_unfused(self, kernel: KernelOp) -> None:
        if kernel.kernel_kind != "matmul":
            raise VerifyException(f"triton.launch: only a matmul kernel is timed against an unfused wrapper, not @{kernel.sym_name.data}")
        wrapper = self.parent_op()
        module = wrapper.parent_op() if wrapper is not None else None
        found = None if module is None else next(
            (op for op in module.regions[0].block.ops if isinstance(op, WrapperOp) and op.sym_name.data == self.unfused_name), None)
        if module is not None and found is None:
            raise VerifyException(f"triton.launch: no triton.wrapper @{self.unfused_name} in this module")
        if found is not None and found.input_names() != self.referenced_names():
            raise VerifyException(f"triton.launch: @{self.unfused_name} takes {found.input_names()}, "
                                  f"not the launch's buffers {self.referenced_names()}")

    def _verify_kernel(self, kernel: KernelOp) -> None:
        ptrs = kernel.body.block.args
        if len(ptrs) != len(self.args):
            raise VerifyException(
                f"triton.launch: @{kernel.sym_name.data} takes {len(ptrs)} pointers, got {len(self.args)} buffers"
            )
        pairs = ((self.xnumel, kernel.xnumel, "xnumel"), (self.r0_numel, kernel.r0_numel, "r0_numel"),
                 (self.ynumel, kernel.ynumel, "ynumel"), (self.znumel, kernel.znumel, "znumel"))
        for mine, theirs, what in pairs:
            if (mine is None) != (theirs is None) or (
                mine is not None and theirs is not None and not theirs.expr.free_symbols and mine.expr != theirs.expr
            ):
                raise VerifyException(f"triton.launch: {what} does not match @{kernel.sym_name.data}'s")

    def _verify_choice(self, persistent: KernelOp, bound: int) -> None:
        looped = self.lookup_kernel(self.looped_kernel_name)
        if looped is None or looped.kernel_kind != "reduction":
            raise VerifyException(f"triton.launch: @{self.looped_kernel_name} is not a looped reduction kernel")
        if bound < 1:
            raise VerifyException(f"triton.launch: the persistent kernel's bound must be positive, got {bound}")
        blocks = {c.block_sizes["R0_BLOCK"] for c in persistent.config_list if "R0_BLOCK" in c.block_sizes}
        missing = [r for r in r0_blocks_up_to(bound) if r not in blocks]
        if missing:
            raise VerifyException(
                f"triton.launch: @{self.kernel_name} runs r0_numel up to {bound}, but no config has R0_BLOCK "
                f"{', '.join(map(str, missing))}"
            )


@irdl_op_definition
class ExternOp(ExternCall, WrapperBodyOp):
    """`triton.extern "buf1" = "mm.default" {args = [@buf0, @arg1_1]} : #buffer.layout<...>`:
    an aten call at run time (`@name` = a buffer) defining its result buffers with these layouts
    (the emitter may call an `out=` variant into an `empty_strided`, or restride the result)."""

    name = "triton.extern"

    def referenced_names(self) -> list[str]:
        return list(ExternCall.referenced_names(self))


@irdl_op_definition
class ViewOp(ViewBase, WrapperBodyOp):
    """`triton.view "buf3" = @buf0 #buffer.layout<...>`: `reinterpret_tensor(buf0, size, stride, offset)`."""

    name = "triton.view"


@irdl_op_definition
class ReuseOp(ViewBase, WrapperBodyOp):
    """`triton.reuse "buf7" = @buf3 #buffer.layout<...>`: buf7 takes the storage of buf3, which
    nothing holds after this op (Inductor's `buf7 = buf3; del buf3  # reuse`), with its own
    layout (`reinterpret_tensor` where they differ). The wrapper's verifier checks that buf3 is
    an allocation (or a reuse) of the same dtype and storage extent, and dead from here on."""

    name = "triton.reuse"


@irdl_op_definition
class FreeOp(WrapperBodyOp):
    """`triton.free @buf0, @buf2`: `del buf0, buf2` after their last use."""

    name = "triton.free"
    names = prop_def(ArrayAttr)
    assembly_format = "custom<SymbolRefs>($names) attr-dict"

    def __init__(self, names: Sequence[str]):
        super().__init__(properties={"names": _refs(names)})

    @property
    def freed(self) -> list[str]:
        return _ref_names(self.names)

    def referenced_names(self) -> list[str]:
        return self.freed

    def verify_(self) -> None:
        if not self.names.data:
            raise VerifyException("triton.free: nothing to free")


@irdl_op_definition
class ReturnOp(WrapperBodyOp):
    """`triton.return @buf5, @arg0_1`: the graph outputs, in order; ends the wrapper."""

    name = "triton.return"
    outputs = prop_def(ArrayAttr)
    traits = traits_def(IsTerminator())
    assembly_format = "custom<SymbolRefs>($outputs) attr-dict"

    def __init__(self, names: Sequence[str]):
        super().__init__(properties={"outputs": _refs(names)})

    @property
    def output_names(self) -> list[str]:
        return _ref_names(self.outputs)

    def referenced_names(self) -> list[str]:
        return self.output_names


def _verify_pointees(op: LaunchOp, live: dict[str, LayoutAttr | None]) -> None:
    """Each buffer a launch passes holds what the kernels' pointers point to."""
    for name in op.kernel_names:
        kernel = op.lookup_kernel(name)
        if kernel is None:
            continue
        for arg, ptr in zip(op.arg_names, kernel.body.block.args):
            layout = live[arg]
            dtype = layout.dtype if layout is not None else None
            if isinstance(ptr.type, PtrType) and dtype is not None and ptr.type.pointee != dtype:
                raise _blame(
                    op, f"triton.launch: buffer '{arg}' holds {dtype} but %{ptr.name_hint} of @{name} points to {ptr.type.pointee}"
                )


@irdl_op_definition
class WrapperOp(IRDLOperation):
    """The host function `call(args)`: inputs, allocations, launches, extern calls, views, frees,
    in program order, ending with `triton.return`."""

    name = "triton.wrapper"
    sym_name = prop_def(SymbolNameConstraint())
    body = region_def("single_block")
    traits = traits_def(IsolatedFromAbove(), SymbolOpInterface())
    assembly_format = "$sym_name $body attr-dict-with-keyword"

    def __init__(self, name: str, body: Region):
        super().__init__(properties={"sym_name": StringAttr(name)}, regions=[body])

    def input_names(self) -> list[str]:
        return [op.buffer.data for op in self.body.block.ops if isinstance(op, GRAPH_INPUTS)]

    def output_names(self) -> list[str]:
        last = self.body.block.last_op
        return last.output_names if isinstance(last, ReturnOp) else []

    def layouts(self) -> dict[str, LayoutAttr]:
        """Every buffer name the wrapper defines, with its layout."""
        out: dict[str, LayoutAttr] = {}
        for op in self.body.block.ops:
            if isinstance(op, WrapperBodyOp):
                for name in op.defined_names():
                    out[name] = op.layout_of(name)  # type: ignore[assignment]
        return out

    def verify_(self) -> None:
        if self.body.block.args:
            raise VerifyException("triton.wrapper: the body takes no block arguments")
        if not isinstance(self.body.block.last_op, ReturnOp):
            raise VerifyException("triton.wrapper must end with triton.return")
        live: dict[str, LayoutAttr | None] = {}
        dead: set[str] = set()
        owned: set[str] = set()  # buffers whose storage the wrapper allocated: what a reuse may take
        accesses = functools.cache(kernel_accesses)  # a kernel may be launched many times
        past_inputs = False
        for op in self.body.block.ops:
            if not isinstance(op, WrapperBodyOp):
                raise _blame(op, f"triton.wrapper: {op.name} cannot appear in the wrapper")
            if isinstance(op, GRAPH_INPUTS) and past_inputs:
                raise _blame(op, f"{op.name}: inputs come first in the wrapper")
            past_inputs = past_inputs or not isinstance(op, GRAPH_INPUTS)
            for ref in op.referenced_names():
                if ref not in live:
                    why = "already freed" if ref in dead else "not defined before this use"
                    raise _blame(op, f"{op.name}: buffer '{ref}' is {why}")
            if isinstance(op, LaunchOp):
                _verify_pointees(op, live)
                verify_launch_in_bounds(op, live, accesses)
            if isinstance(op, ReuseOp):
                _verify_reuse(op, live, owned)
            for name in op.freed if isinstance(op, FreeOp) else op.referenced_names() if isinstance(op, ReuseOp) else ():
                dead.add(name)
                del live[name]
            if isinstance(op, (AllocOp, ReuseOp)):
                owned.update(op.defined_names())
            for name in op.defined_names():
                if name in live or name in dead:
                    raise _blame(op, f"{op.name}: buffer '{name}' is defined twice")
                live[name] = op.layout_of(name)  # type: ignore[assignment]
        _verify_sizes_bound(self)


def _verify_reuse(op: ReuseOp, live: dict[str, LayoutAttr | None], owned: set[str]) -> None:
    source = op.source.root_reference.data
    if source not in owned:
        raise _blame(op, f"triton.reuse: '{source}' is not an allocation of this wrapper: its storage is not its own to give")
    given = live[source]
    if given is None or given.dtype != op.layout.dtype or given.storage_extent() != op.layout.storage_extent():
        raise _blame(
            op, f"triton.reuse: '{op.buffer.data}' needs {op.layout.storage_extent()} elements of {op.layout.dtype}, "
            f"'{source}' holds {given.storage_extent() if given else '?'} of {given.dtype if given else '?'}"
        )


def _verify_sizes_bound(wrapper: WrapperOp) -> None:
    """Every size symbol the wrapper or a kernel it launches uses is given by an input: a size
    input (`triton.size_input "n" s0`) or an input's dim of exactly that size."""
    ops = list(wrapper.body.block.ops)
    given = {op.size.expr for op in ops if isinstance(op, SizeInputOp)}
    given |= {e for op in ops if isinstance(op, InputOp) for e in op.layout.sizes}
    bound = {e.name for e in given if isinstance(e, sympy.Symbol)}
    for op in ops:
        used = set().union(*(size_names_in(a) for a in op.properties.values()))
        if isinstance(op, LaunchOp):
            kernels = [op.lookup_kernel(name) for name in op.kernel_names]
            used |= {n for kernel in kernels if kernel is not None for n in kernel.size_args}
        if unbound := sorted(used - bound):
            raise _blame(op, f"{op.name}: size {', '.join(unbound)} is not given by any input of the wrapper")


def verify_launch_in_bounds(
    launch: LaunchOp, layouts: Mapping[str, LayoutAttr | None],
    accesses_of: Callable[[KernelOp], list[Access]] = kernel_accesses,
) -> None:
    """Each kernel the launch may run keeps the accesses of every pointer inside the storage of
    the buffer the launch gives it, where that storage is static (`accesses_of`: the wrapper's
    memo of `kernel_accesses`): an allocation smaller than what the kernel stores is an error."""
    buffers = launch.arg_names
    for name in launch.kernel_names:
        kernel = launch.lookup_kernel(name)
        if kernel is None:
            continue
        for access in accesses_of(kernel):
            buffer = buffers[access.pointer.index] if access.pointer.index < len(buffers) else None
            layout = layouts.get(buffer) if buffer is not None else None
            size = storage_extent(layout) if layout is not None else None
            if size is not None and access.span[1] >= size:
                raise _blame(
                    launch, f"triton.launch: @{name} {access.describe()}, past the {size} elements of '{buffer}'"
                )
