"""The generator of ordinary fuzz programs: `Generator` (tools/fuzz.py `generate` picks it).

    program = Generator(seed).generate()  # deterministic: the same seed, the same program

A `Program` is plain data (tools/fuzz_program.py): its inputs (`Input`: shape, dtype, value
range, whether it requires grad, the seed of its values) and a short list of statements
(`Stmt`: `t3 = op(args, params)` over named tensors, the ops of tools/fuzz_ops.py), returning
some of them. The generator writes it while running it eagerly on CPU, so every statement is
checked as it is added: an op that raises, or whose values are not finite or too large for the
dtype, is dropped and another is tried; an op with a restricted domain (log, sqrt, division,
pow, ...) gets a guard in front of it (`x.abs() + c`, `tanh(x) * a + b`, `clamp`) when the
actual values fall outside. Ops whose result jumps at a point (floor, comparisons, argmax,
integer casts, ...) only take values that eager and mlc compute bit for bit the same
(`fuzz_ops.DISCONTINUOUS`).

Shapes come from profiles chosen to cross the thresholds of mlc's passes: reductions of fewer
than 8 elements (unrolled, `--lower-aten`), up to 1024 (persistent) or more (looped,
`--convert-to-triton`), long reductions into fewer than 2 * 132 outputs (split,
`--split-reductions`: rnumel > 8192), 2-D tiles (transposed accesses with both tile groups >=
32), non-powers of two and size-1 dims; a tensor holds at most `max_numel` elements.
"""

from __future__ import annotations

import math
import random
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from mlc.tools.fuzz_ops import DISCONTINUOUS, EXACT, EXTREMA, F32_EXACT, OPS, UNARY_FLOAT, apply
from mlc.tools.fuzz_program import Input, Program, Stmt

FLOATS = (torch.float32, torch.float16, torch.bfloat16)
INTS = (torch.int32, torch.int64)
LIMIT = {torch.float16: 2e4, torch.bfloat16: 1e6, torch.float32: 1e6}
"""The largest magnitude a generated value may reach (headroom for the ops after it)."""


# -- shapes -----------------------------------------------------------------------------------

MATMUL_FRACTION = 0.15
"""The share of seeds whose program starts with a matrix product (`Generator.matmul`), drawn
from a stream of its own: every other seed gives the program it gave before there were any."""

SMALL = (1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 32, 33, 64)
ROW = (100, 255, 256, 1000, 1023, 1024, 1025, 1500, 2048, 4097, 8192, 8193, 12000, 20000, 65536, 100003, 131072,
       300000)
TILE = (31, 32, 33, 40, 64, 65, 100, 128, 129, 256)
SPLIT = (8193, 10000, 16384, 20000, 50000, 100000, 131071)
PROFILES = {"small": 22, "row": 15, "column": 8, "tile2d": 12, "unroll": 10, "split": 8, "mixed": 12, "tiny": 5}


def _fit(shape: list[int], max_numel: int, keep: int) -> tuple[int, ...]:
    """Halve the dims other than `keep` until the shape holds at most max_numel elements."""
    while math.prod(shape) > max_numel:
        others = [k for k in range(len(shape)) if k != keep and shape[k] > 1]
        if not others:
            shape[keep] = max(1, max_numel)
            break
        k = max(others, key=lambda k: shape[k])
        shape[k] = max(1, shape[k] // 2)
    return tuple(shape)


def base_shape(rng: random.Random, max_numel: int) -> tuple[int, ...]:
    """A first input's shape, from a profile aimed at one of the passes' thresholds."""
    profile = rng.choices(list(PROFILES), weights=list(PROFILES.values()))[0]
    if profile == "small":
        return _fit([rng.choice(SMALL) for _ in range(rng.randint(1, 4))], max_numel, -1)
    if profile == "tiny":
        return tuple(rng.choice((1, 2, 3)) for _ in range(rng.randint(0, 3)))
    if profile == "row":
        return _fit([rng.choice((1, 2, 3, 4, 7, 8, 16, 64)), rng.choice(ROW)], max_numel, 1)
    if profile == "column":
        return _fit([rng.choice(ROW), rng.choice((1, 2, 3, 5, 8, 16))], max_numel, 0)
    if profile == "tile2d":
        dims = [rng.choice(TILE), rng.choice(TILE)]
        return _fit([rng.choice((2, 3))] + dims if rng.random() < 0.3 else dims, max_numel, -1)
    if profile == "unroll":
        lead = [rng.choice(SMALL + (100, 1000)) for _ in range(rng.randint(1, 2))]
        return _fit(lead + [rng.randint(2, 7)], max_numel, -1)
    if profile == "split":
        return _fit([rng.randint(1, 8), rng.choice(SPLIT)], max_numel, 1)
    dims = [rng.choice(SMALL) for _ in range(3)]
    dims[rng.randrange(3)] = rng.choice(ROW[:10])
    return _fit(dims, max_numel, -1)


def broadcast_partner(rng: random.Random, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape that broadcasts against `shape` to `shape`: some dims 1, leading dims dropped."""
    if rng.random() < 0.1:
        return ()
    dims = [1 if rng.random() < 0.3 else d for d in shape]
    drop = rng.randint(0, len(dims)) if rng.random() < 0.3 else 0
    return tuple(dims[drop:])


def reduction_dims(rng: random.Random, shape: Sequence[int], single: bool = False, full: bool = True) -> Any:
    """A reduction's dim argument: one dim (the longest more often than not: long rows are
    where looped and split reductions start; sometimes negative), several, or None (all)."""
    rank = len(shape)
    if rank == 0:
        return None if full else 0
    r = rng.random()
    if full and r < 0.15:
        return None
    if single or rank == 1 or r < 0.6:
        longest = max(range(rank), key=lambda k: shape[k])
        d = rng.choice([longest, longest, rank - 1, 0, rng.randrange(rank)])
        return d - rank if rng.random() < 0.2 else d
    dims = rng.sample(range(rank), rng.randint(2, rank))
    return tuple(dims)


# -- the generator ----------------------------------------------------------------------------


@dataclass
class Generator:
    """Writes one program (see the module docstring); `values` holds each name's eager value."""

    seed: int
    max_numel: int = 400_000
    backward_fraction: float = 0.5
    max_stmts: int = 10
    rng: random.Random = field(init=False)
    inputs: list[Input] = field(default_factory=list)
    stmts: list[Stmt] = field(default_factory=list)
    values: dict[str, torch.Tensor] = field(default_factory=dict)
    exact: dict[str, bool] = field(default_factory=dict)
    backward: bool = False
    newest: bool = False

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.backward = self.rng.random() < self.backward_fraction

    # -- bookkeeping --

    def new_input(self, shape: Sequence[int], dtype: torch.dtype, low: float | None = None,
                  high: float | None = None, grad: bool = True) -> str:
        rng = self.rng
        if low is None or high is None:
            if dtype.is_floating_point:
                low, high = rng.choice(((-3.0, 3.0), (-1.0, 1.0), (0.1, 2.0), (-10.0, 10.0), (-3.0, 0.5)))
            elif dtype == torch.bool:
                low, high = 0, 1
            else:
                low, high = rng.choice(((-20, 20), (0, 10), (-3, 3)))
        grad = grad and self.backward and dtype.is_floating_point and rng.random() < 0.85
        name = f"x{len(self.inputs)}"
        inp = Input(name, tuple(shape), dtype, low, high, grad, self.seed * 1000 + len(self.inputs))
        self.inputs.append(inp)
        self.values[name] = inp.make().detach()
        self.exact[name] = True
        return name

    def emit(self, op: str, args: Sequence[str], **params: Any) -> str | None:
        """Add `op(args)` if eager runs it to finite, bounded values; its name, else None."""
        try:
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = apply(op, [self.values[a] for a in args], params)
        except (RuntimeError, ValueError, IndexError, TypeError):
            return None
        if not isinstance(value, torch.Tensor) or not self.acceptable(value):
            return None
        name = f"t{len(self.stmts)}"
        self.stmts.append(Stmt(name, op, tuple(args), tuple(sorted(params.items())), value.dtype))
        self.values[name] = value
        self.exact[name] = self._exactness(op, args, value.dtype)
        return name

    def acceptable(self, value: torch.Tensor) -> bool:
        """Whether a statement may produce `value`: not empty, not too large, finite and within
        the dtype's `LIMIT`."""
        if value.numel() == 0 or value.numel() > 1.5 * self.max_numel:
            return False
        if value.dtype.is_floating_point:
            return bool(torch.isfinite(value).all() and value.abs().max() <= LIMIT.get(value.dtype, 1e6))
        return value.dtype not in INTS or bool(value.abs().max() <= 2**20)

    def _exactness(self, op: str, args: Sequence[str], dtype: torch.dtype) -> bool:
        kind = OPS[op].exactness
        exact = all(self.exact[a] for a in args)
        if kind == EXACT or op == "neg":
            return exact
        if kind == F32_EXACT:
            return exact and dtype not in (torch.float16, torch.bfloat16)
        return False

    def names(self, pred: Callable[[torch.Tensor, str], bool] = lambda v, n: True) -> list[str]:
        return [n for n, v in self.values.items() if pred(v, n)]

    def pick(self, pred: Callable[[torch.Tensor, str], bool] = lambda v, n: True) -> str | None:
        """A value satisfying `pred`: the newest one more often than not (chains of ops), the
        newest one for sure after `chain` asked for it."""
        names = self.names(pred)
        if not names:
            return None
        return names[-1] if self.newest or self.rng.random() < 0.5 else self.rng.choice(names)

    def chain(self, first: str, then: str) -> str | None:
        """Category `first`, then category `then` on its result (a view then a reduction, ...)."""
        name = getattr(self, first)()
        if name is None:
            return None
        self.newest = True
        try:
            return getattr(self, then)() or name
        finally:
            self.newest = False

    def view_reduce(self) -> str | None:
        return self.chain("view", "reduce")

    def view_pointwise(self) -> str | None:
        return self.chain("view", self.rng.choice(["binary", "unary", "activation"]))

    def reduce_broadcast(self) -> str | None:
        """`x - x.amax(d, keepdim=True)`-like: a keepdim reduction combined with its input."""
        rng = self.rng
        x = self.pick(lambda v, n: v.dtype.is_floating_point and v.dim() >= 1 and v.numel() > 1)
        if x is None:
            return None
        v = self.values[x]
        op = rng.choice(["amax", "sum", "mean", "logsumexp", "amin"])
        if op in EXTREMA and self.backward and not self.exact[x]:
            op = "logsumexp"
        r = self.emit(op, [x], dim=reduction_dims(rng, v.shape, full=False), keepdim=True,
                      **({"dtype": None} if op == "sum" else {}))
        if r is None:
            return None
        if rng.random() < 0.5:
            return self.emit(rng.choice(["sub", "add", "maximum"]), [x, r])
        r = self.guard(r, 0.1, None)
        return None if r is None else self.emit("div", [x, r])

    def is_float(self, v: torch.Tensor, n: str) -> bool:
        return v.dtype.is_floating_point

    def is_exact(self, v: torch.Tensor, n: str) -> bool:
        return self.exact[n] and v.dtype != torch.bool

    # -- guards: bring a value into [lo, hi] --

    def guard(self, name: str, lo: float | None, hi: float | None) -> str | None:
        """`name` itself when its values lie in [lo, hi], else a guarded copy (or None)."""
        v = self.values[name]
        vmin, vmax = float(v.min()), float(v.max())
        if (lo is None or vmin >= lo) and (hi is None or vmax <= hi):
            return name
        rng = self.rng
        if not v.dtype.is_floating_point:
            name = self.emit("to", [name], dtype=torch.float32)
            if name is None:
                return None
        if hi is None:
            c = round(lo + rng.choice((0.1, 0.5, 1.0)), 2)
            if rng.random() < 0.5:
                return self.emit("abs_add", [name], c=c)
            return self.emit("sigmoid_affine", [name], a=rng.choice((1.0, 2.0, 4.0)), b=c)
        if lo is None:
            lo = hi - 20.0
        mid, half = (lo + hi) / 2, (hi - lo) / 2
        if rng.random() < 0.6:
            return self.emit("tanh_affine", [name], a=round(half * 0.9, 3), b=round(mid, 3))
        # bounds the dtype holds exactly: eager clamps to the rounded bound, mlc (in f32) to the bound
        dtype = self.values[name].dtype
        lo, hi = (float(torch.tensor(b, dtype=dtype)) for b in (lo * 0.95 + hi * 0.05, hi * 0.95 + lo * 0.05))
        return self.emit("clamp", [name], lo=lo, hi=hi)

    def partner(self, name: str, float_only: bool = False) -> str | None:
        """A second operand broadcasting against `name`: an existing value or a new input."""
        v, rng = self.values[name], self.rng

        def fits(w: torch.Tensor, n: str) -> bool:
            if n == name or w.dtype == torch.bool or (float_only and not w.dtype.is_floating_point):
                return False
            try:
                return math.prod(torch.broadcast_shapes(v.shape, w.shape)) <= self.max_numel
            except RuntimeError:
                return False

        if rng.random() < 0.4 and (other := self.pick(fits)) is not None:
            return other
        dtype = v.dtype if rng.random() < 0.75 else rng.choice(FLOATS + INTS)
        if float_only and not dtype.is_floating_point:
            dtype = torch.float32
        return self.new_input(broadcast_partner(rng, tuple(v.shape)), dtype)

    # -- the categories of statements --

    def unary(self) -> str | None:
        rng = self.rng
        x = self.pick(lambda v, n: v.dtype != torch.bool)
        if x is None:
            return None
        op = rng.choice(list(UNARY_FLOAT) + ["pow_scalar", "rpow", "square"])
        if op in UNARY_FLOAT:
            x = self.guard(x, *UNARY_FLOAT[op])
            return None if x is None else self.emit(op, [x])
        if op == "square":
            x = self.guard(x, -100.0, 100.0)
            return None if x is None else self.emit(op, [x])
        if op == "rpow":
            x = self.guard(x, -10.0, 10.0)
            return None if x is None else self.emit(op, [x], base=rng.choice((2.0, 0.5, 3.0)))
        exponent = rng.choice((2, 3, 0.5, 1.5, -1, -0.5, 2.5))
        x = self.guard(x, -20.0, 20.0) if isinstance(exponent, int) and exponent > 0 else self.guard(x, 0.1, 100.0)
        if x is None:
            return None
        if not self.values[x].dtype.is_floating_point and exponent < 0:
            return None  # integers to negative integer powers are not allowed
        return self.emit("pow_scalar", [x], exponent=exponent)

    def activation(self) -> str | None:
        rng = self.rng
        x = self.pick(self.is_float)
        if x is None:
            return None
        op = rng.choice(["relu", "gelu", "silu", "mish", "elu", "leaky_relu", "hardtanh", "softplus",
                         "hardsigmoid", "hardswish", "abs", "neg", "clamp"])
        params: dict[str, Any] = {
            "gelu": {"approximate": rng.choice(("none", "tanh"))},
            "elu": {"alpha": rng.choice((1.0, 0.5, 1.5))},
            "leaky_relu": {"slope": rng.choice((0.01, 0.1, 0.3))},
            "hardtanh": {"lo": rng.choice((-1.0, -0.5, -2.0)), "hi": rng.choice((1.0, 0.5, 2.0))},
            "softplus": {"beta": rng.choice((1.0, 2.0, 0.5)), "threshold": rng.choice((20.0, 4.0, 1.0))},
            "clamp": rng.choice(({"lo": -0.5, "hi": 0.75}, {"lo": 0.25, "hi": None}, {"lo": None, "hi": 1.0})),
        }.get(op, {})
        return self.emit(op, [x], **params)

    def rounding(self) -> str | None:
        x = self.pick(self.is_exact)
        if x is None:
            return None
        return self.emit(self.rng.choice(["floor", "ceil", "round", "trunc", "sign"]), [x])

    def scalar_arith(self) -> str | None:
        rng = self.rng
        x = self.pick(lambda v, n: v.dtype != torch.bool)
        if x is None:
            return None
        op = rng.choice(["add_scalar", "rsub_scalar", "mul_scalar", "div_scalar"])
        c = rng.choice((2, -1, 3) if not self.values[x].dtype.is_floating_point and op != "div_scalar" else
                       (0.5, -1.5, 2.0, 3.0, 0.1, -0.25, 7.0))
        return self.emit(op, [x], c=c)

    def binary(self) -> str | None:
        rng = self.rng
        x = self.pick(lambda v, n: v.dtype != torch.bool)
        if x is None:
            return None
        y = self.partner(x)
        if y is None:
            return None
        op = rng.choice(["add", "sub", "mul", "div", "add_alpha", "maximum", "minimum", "pow", "lerp", "addcmul"])
        if op == "div":
            y = self.guard(y, 0.1, None) if rng.random() < 0.7 else y
            if y is None or bool((self.values[y].abs() < 0.1).any()):
                return None
        if op == "pow":
            x, y = self.guard(x, 0.1, 10.0), self.guard(y, -3.0, 3.0)
            if x is None or y is None:
                return None
        if op == "add_alpha":
            return self.emit(op, [x, y], alpha=rng.choice((2.5, -0.5, 2)))
        if op == "lerp":
            return self.emit(op, [x, y], weight=rng.choice((0.25, 0.7)))
        if op == "addcmul":
            y, z = self.partner(x, float_only=True), self.partner(x, float_only=True)
            return None if z is None else self.emit(op, [x, y, z], value=rng.choice((0.5, -2.0)))
        return self.emit(op, [x, y])

    def integer_arith(self) -> str | None:
        """Rounding divisions, remainders and bitwise ops: exact operands only."""
        rng = self.rng
        x = self.pick(self.is_exact)
        if x is None:
            return None
        op = rng.choice(["div_mode", "remainder", "fmod", "bitwise", "bitwise_not"])
        if op == "bitwise_not":
            return None if self.values[x].dtype.is_floating_point else self.emit(op, [x])
        y = self.pick(lambda v, n: n != x and self.is_exact(v, n) and _broadcasts(v, self.values[x]))
        y = y if y is not None and rng.random() < 0.5 else self.partner(x)
        if y is None:
            return None
        if op == "bitwise":
            if self.values[x].dtype.is_floating_point or self.values[y].dtype.is_floating_point:
                return None
            return self.emit(op, [x, y], sym=rng.choice(("&", "|", "^")))
        if not self.exact[y] or bool((self.values[y].abs() < (1 if self.values[y].dtype in INTS else 0.1)).any()):
            y = self.emit("abs_add", [y], c=1 if not self.values[y].dtype.is_floating_point else 0.5)
            if y is None or not self.exact[y]:
                return None
        if op == "div_mode":
            return self.emit(op, [x, y], mode=rng.choice(("floor", "trunc")))
        return self.emit(op, [x, y])

    def condition(self) -> str | None:
        """A comparison of exact values, often used at once by where / masked_fill / logical ops."""
        rng = self.rng
        x = self.pick(self.is_exact)
        if x is None:
            return None
        sym = rng.choice(("==", "!=", "<", "<=", ">", ">="))
        if rng.random() < 0.1:
            cond = self.emit("isnan", [x])
        elif rng.random() < 0.5:
            v = self.values[x]
            c = float(v.flatten()[rng.randrange(v.numel())]) if v.dtype.is_floating_point else int(v.flatten()[0])
            cond = self.emit("compare_scalar", [x], sym=sym, c=c)
        else:
            y = self.pick(lambda v, n: n != x and self.is_exact(v, n) and _broadcasts(v, self.values[x]))
            cond = None if y is None else self.emit("compare", [x, y], sym=sym)
        if cond is None:
            return None
        use = rng.random()
        if use < 0.4:
            a = self.pick(lambda v, n: v.dtype.is_floating_point and _broadcasts(v, self.values[cond]))
            b = None if a is None else self.partner(a)
            return None if b is None else self.emit("where", [cond, a, b])
        if use < 0.6:
            a = self.pick(lambda v, n: v.dtype.is_floating_point and _broadcasts_to(self.values[cond], v))
            return None if a is None else self.emit("masked_fill", [a, cond], value=rng.choice((0.0, -1.5, 2.0)))
        if use < 0.75:
            other = self.pick(lambda v, n: v.dtype == torch.bool and n != cond and _broadcasts(v, self.values[cond]))
            if other is not None:
                return self.emit("logical", [cond, other], kind=rng.choice(("and", "or", "xor")))
            return self.emit("logical_not", [cond])
        return cond

    def cast(self) -> str | None:
        rng = self.rng
        x = self.pick()
        if x is None:
            return None
        v = self.values[x]
        if v.dtype.is_floating_point and self.exact[x] and rng.random() < 0.3:
            if rng.random() < 0.3:
                return self.emit("to_bool", [x])
            return self.emit("to_int", [x], dtype=rng.choice(INTS))
        dtype = rng.choice([d for d in FLOATS if d != v.dtype])
        return self.emit("to", [x], dtype=dtype)

    def creation(self) -> str | None:
        rng = self.rng
        x = self.pick(lambda v, n: v.dim() >= 1 and v.dtype != torch.bool)
        if x is None:
            return None
        r = rng.random()
        if r < 0.5:
            return self.emit("arange_add", [x], n=self.values[x].shape[-1])
        fill = self.emit("full_like", [x], value=rng.choice((0.5, -2.0, 3))) if r < 0.8 else self.emit("ones_like", [x])
        return None if fill is None else self.emit("add", [fill, x])

    def view(self) -> str | None:
        rng = self.rng
        x = self.pick()
        if x is None:
            return None
        shape = list(self.values[x].shape)
        rank = len(shape)
        op = rng.choice(["permute", "transpose", "slice", "select", "expand", "squeeze", "unsqueeze", "flip",
                         "reshape", "contiguous", "split_get", "unbind_get"])
        if rank == 0 and op not in ("unsqueeze", "expand", "reshape", "contiguous"):
            return None
        dim = rng.randrange(rank) if rank else 0
        if op == "permute":
            perm = list(range(rank))
            rng.shuffle(perm)
            return self.emit(op, [x], perm=tuple(perm))
        if op == "transpose":
            return self.emit(op, [x], d0=dim, d1=rng.randrange(rank) - (rank if rng.random() < 0.3 else 0))
        if op == "slice":
            n = shape[dim]
            start = rng.choice((None, 0, 1, n // 3, -(n // 2) or None))
            stop = rng.choice((None, n - 1, n // 2 + 1, -1 if n > 2 else None))
            return self.emit(op, [x], dim=dim, start=start, stop=stop, step=rng.choice((1, 1, 2, 3, 7)))
        if op == "select":
            return self.emit(op, [x], dim=dim, index=rng.choice((0, shape[dim] - 1, -1, shape[dim] // 2)))
        if op == "expand":
            sizes = [rng.choice((2, 3, 5)) if d == 1 else -1 for d in shape]
            if rng.random() < 0.4 or 1 not in shape:
                sizes = [rng.choice((2, 3))] + sizes
            return self.emit(op, [x], sizes=tuple(sizes))
        if op == "squeeze":
            ones = [k for k, d in enumerate(shape) if d == 1]
            return self.emit(op, [x], dim=rng.choice(ones) if ones else dim)
        if op == "unsqueeze":
            return self.emit(op, [x], dim=rng.randint(-rank - 1, rank))
        if op == "flip":
            return self.emit(op, [x], dims=tuple(rng.sample(range(rank), rng.randint(1, rank))))
        if op == "reshape":
            return self.emit(op, [x], shape=_reshaped(rng, shape))
        if op in ("split_get", "unbind_get") and shape[dim] > 64:
            return None  # hundreds of thousands of graph outputs: a compile-time explosion, not a test
        if op == "split_get":
            size = max(1, shape[dim] // rng.choice((2, 3)))
            return self.emit(op, [x], size=size, dim=dim, k=rng.randrange(-(-shape[dim] // size)))
        if op == "unbind_get":
            return self.emit(op, [x], dim=dim, k=rng.randrange(shape[dim]))
        return self.emit(op, [x])

    def cat_pad(self) -> str | None:
        rng = self.rng
        x = self.pick(lambda v, n: v.dim() >= 1)
        if x is None:
            return None
        v = self.values[x]
        if rng.random() < 0.5:
            pads = []
            for _ in range(rng.randint(1, min(2, v.dim()))):
                pads += [rng.choice((0, 1, 2, 3, -1)), rng.choice((0, 1, 5, -1))]
            return self.emit("pad", [x], pads=tuple(pads), value=rng.choice((0.0, -1.0, 2.5)) if
                             v.dtype.is_floating_point else 0)
        dim = rng.randrange(v.dim())
        shape = list(v.shape)
        shape[dim] = rng.choice((1, 2, 5, shape[dim]))
        same = self.pick(lambda w, n: n != x and w.dim() == v.dim() and w.dtype == v.dtype and
                         all(a == b for k, (a, b) in enumerate(zip(w.shape, v.shape)) if k != dim))
        other = same if same is not None and rng.random() < 0.5 else self.new_input(shape, v.dtype)
        args = [x, other] + ([x] if rng.random() < 0.3 else [])
        return self.emit("cat", args, dim=dim - v.dim() if rng.random() < 0.3 else dim)

    def reduce(self) -> str | None:
        rng = self.rng
        x = self.pick(lambda v, n: v.numel() > 1)
        if x is None:
            return None
        v = self.values[x]
        rank = v.dim()
        if v.dtype == torch.bool:
            ops = ["any", "all", "sum"]
        elif not v.dtype.is_floating_point:
            ops = ["sum", "prod", "amax", "amin", "argmax", "argmin", "max_dim_values", "max_dim_indices", "any", "all",
                   "max_all"]
        else:
            ops = ["sum", "sum", "prod", "amax", "amin", "argmax", "argmin", "max_dim_values", "max_dim_indices",
                   "min_dim_values", "min_dim_indices", "max_all", "mean", "mean", "var", "std", "var_mean",
                   "logsumexp", "vector_norm", "any", "all"]
        op = rng.choice(ops)
        if op in DISCONTINUOUS and not self.exact[x]:
            op = "amax"
        if op in EXTREMA and self.backward and not self.exact[x]:
            op = "sum"
        keepdim = rng.random() < 0.3
        if op == "max_all":
            return self.emit(op, [x])
        if op in ("argmax", "argmin", "max_dim_values", "max_dim_indices", "min_dim_values", "min_dim_indices",
                  "any", "all"):
            dim = reduction_dims(rng, v.shape, single=True, full=op in ("argmax", "argmin", "any", "all"))
            return self.emit(op, [x], dim=dim, keepdim=keepdim)
        if op == "prod":
            dim = reduction_dims(rng, v.shape, single=True) if v.numel() <= 256 else min(range(rank), key=lambda k: v.shape[k])
            if (v.numel() if dim is None else v.shape[dim]) > 256:
                return None
            x = self.guard(x, 0.8, 1.25) if v.dtype.is_floating_point else x
            return None if x is None else self.emit(op, [x], dim=dim, keepdim=keepdim)
        dim = reduction_dims(rng, v.shape, full=op not in ("logsumexp",))
        if op == "sum":
            dtype = torch.float32 if v.dtype in (torch.float16, torch.bfloat16) and rng.random() < 0.3 else None
            return self.emit(op, [x], dim=dim, keepdim=keepdim, dtype=dtype)
        if op in ("var", "std"):
            return self.emit(op, [x], dim=dim, keepdim=keepdim, correction=rng.choice((0, 1, 2)))
        if op == "var_mean":
            return self.emit(op, [x], dim=dim, keepdim=keepdim, correction=rng.choice((0, 1)), k=rng.choice((0, 1)))
        if op == "vector_norm":
            return self.emit(op, [x], ord=rng.choice((2, 1, 3)),
                             dim=dim, keepdim=keepdim)
        return self.emit(op, [x], dim=dim, keepdim=keepdim)

    def norm(self) -> str | None:
        rng = self.rng
        x = self.pick(lambda v, n: v.dtype.is_floating_point and v.dim() >= 1 and v.numel() > 1)
        if x is None:
            return None
        v = self.values[x]
        shape, rank, dtype = tuple(v.shape), v.dim(), v.dtype
        op = rng.choice(["softmax", "log_softmax", "normalize", "layer_norm", "rms_norm", "group_norm", "batch_norm"])
        eps = rng.choice((1e-5, 1e-6, 0.1))
        if op in ("softmax", "log_softmax", "normalize"):
            return self.emit(op, [x], dim=rng.randrange(rank) - (rank if rng.random() < 0.5 else 0))
        weight = rng.random() < 0.6
        bias = weight and rng.random() < 0.7  # a bias without weight trips eager's CUDA batch_norm backward
        if op in ("layer_norm", "rms_norm"):
            normalized = shape[rank - rng.randint(1, min(2, rank)):]
            args = [x] + [self.new_input(normalized, dtype) for _ in range(weight + (bias and op == "layer_norm"))]
            if op == "rms_norm":
                return self.emit(op, args, arg=normalized, weight=weight, eps=eps)
            return self.emit(op, args, arg=normalized, weight=weight, bias=bias, eps=eps)
        if rank < 2:
            return None
        channels = shape[1]
        affine = [self.new_input((channels,), dtype) for _ in range(weight + bias)]
        if op == "group_norm":
            groups = rng.choice([g for g in (1, 2, 3, 4, 8, channels) if channels % g == 0])
            return self.emit(op, [x] + affine, arg=groups, weight=weight, bias=bias, eps=eps)
        training = rng.random() < 0.6
        stats = [] if training else [self.new_input((channels,), dtype, -1.0, 1.0, grad=False),
                                     self.new_input((channels,), dtype, 0.5, 2.0, grad=False)]
        return self.emit(op, [x] + stats + affine, training=training, weight=weight, bias=bias, eps=eps)

    def loss(self) -> str | None:
        rng = self.rng
        x = self.pick(lambda v, n: v.dtype.is_floating_point and v.dim() >= 1)
        if x is None:
            return None
        v = self.values[x]
        reduction = rng.choice(("mean", "sum", "none"))
        op = rng.choice(["cross_entropy", "cross_entropy_soft", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss"])
        if op in ("mse_loss", "l1_loss", "smooth_l1_loss"):
            y = self.pick(lambda w, n: n != x and w.shape == v.shape and w.dtype.is_floating_point)
            y = y if y is not None and rng.random() < 0.5 else self.new_input(tuple(v.shape), v.dtype)
            params = {"beta": rng.choice((1.0, 0.5))} if op == "smooth_l1_loss" else {}
            return self.emit(op, [x, y], reduction=reduction, **params)
        if v.dim() != 2:
            x = self.emit("reshape", [x], shape=(-1, v.shape[-1]))
            if x is None:
                return None
            v = self.values[x]
        n, c = v.shape
        if op == "cross_entropy_soft":
            return self.emit(op, [x, self.new_input((n, c), v.dtype, 0.0, 1.0)], reduction=reduction)
        ignore = rng.choice((-100, -1, 0))
        target = self.new_input((n,), torch.int64, -1 if ignore == -1 else 0, c - 1)
        if op == "nll_loss":
            x = self.emit("log_softmax", [x], dim=1)
            if x is None:
                return None
        return self.emit(op, [x, target], reduction=reduction, ignore_index=ignore)

    def index(self) -> str | None:
        """A load or an add at positions read from an index tensor: x[i] (negative positions
        too), index_select, gather, embedding, index_put(accumulate), index_add, scatter_add
        (positions repeat)."""
        rng = self.rng
        x = self.pick(lambda v, n: v.dim() >= 1 and v.numel() > 1 and v.dtype != torch.bool)
        if x is None:
            return None
        v = self.values[x]
        shape, rank = list(v.shape), v.dim()
        dim = rng.randrange(rank)
        size, k = shape[dim], rng.choice((1, 3, 17, 2 * shape[dim]))
        op = rng.choice(["index", "index_select", "gather", "embedding", "index_put", "index_add", "scatter_add"])
        if op in ("index", "index_select"):
            low = -size if op == "index" else 0
            return self.emit(op, [x, self.new_input((k,), torch.int64, low, size - 1)], dim=dim)
        if op == "embedding":
            if rank != 2 or not v.dtype.is_floating_point:
                return None
            return self.emit(op, [x, self.new_input((rng.choice((1, 4)), k), torch.int64, 0, shape[0] - 1)])
        if op == "index_put":
            dim, k = 0, min(k, 2 * shape[0])  # k rows of the values: at most twice x's, as elsewhere
            i = self.new_input((k,), torch.int64, -shape[0], shape[0] - 1)
            return self.emit(op, [x, i, self.new_input([k] + shape[1:], v.dtype)])
        if op == "index_add":
            src = shape[:dim] + [k] + shape[dim + 1:]
            return self.emit(op, [x, self.new_input((k,), torch.int64, 0, size - 1), self.new_input(src, v.dtype)], dim=dim)
        index_shape = shape[:dim] + [k] + shape[dim + 1:]
        if op == "gather":  # the index may be smaller than the input in the other dims
            index_shape = [d if j == dim else rng.choice((d, max(1, d // 2))) for j, d in enumerate(index_shape)]
        i = self.new_input(index_shape, torch.int64, 0, size - 1)
        if op == "gather":
            return self.emit(op, [x, i], dim=dim)
        return self.emit(op, [x, i, self.new_input(index_shape, v.dtype)], dim=dim)

    def matmul(self) -> str | None:
        """`x @ w`: a float value's last dim (K, 1 too) times a new weight [K, N], N of 1, odd,
        or past a tile; under `mlc-fuzz --gemm triton` the statements after it are candidates
        for its kernel's epilogue, a guard before it (`tanh(x) * a + b`) its operand's prologue."""
        rng = self.rng
        x = self.pick(lambda v, n: v.dtype.is_floating_point and 1 <= v.dim() <= 3 and 1 <= v.shape[-1] <= 4096)
        if x is None:
            return None
        v = self.values[x]
        k, n = v.shape[-1], rng.choice((1, 7, 33, 130))
        if v.numel() // k * n > self.max_numel:
            return None
        x = self.guard(x, -4.0, 4.0)
        bound = round(1.0 / math.sqrt(k), 4)  # products of order 1 (within float16's LIMIT)
        return None if x is None else self.emit("matmul", [x, self.new_input((k, n), v.dtype, -bound, bound)])

    CATEGORIES = {
        "unary": 12, "activation": 10, "rounding": 4, "scalar_arith": 6, "binary": 16, "integer_arith": 4,
        "condition": 6, "cast": 4, "creation": 2, "view": 8, "cat_pad": 5, "reduce": 12, "norm": 7, "loss": 3,
        "view_reduce": 8, "view_pointwise": 5, "reduce_broadcast": 5, "index": 5,
    }

    def generate(self) -> Program:
        rng = self.rng
        dtype = rng.choices(FLOATS + INTS + (torch.bool,), weights=(60, 12, 12, 6, 6, 4))[0]
        self.new_input(self.first_shape(), dtype)
        if rng.random() < 0.4:
            self.new_input(broadcast_partner(rng, tuple(self.values["x0"].shape)), rng.choice(FLOATS))
        target = rng.randint(1, self.max_stmts)
        if random.Random(f"mlc-fuzz-matmul-{self.seed}").random() < MATMUL_FRACTION:
            self.attempt("matmul")
        for _ in range(8 * target):
            if len(self.stmts) >= target:
                break
            category = rng.choices(list(self.CATEGORIES), weights=list(self.CATEGORIES.values()))[0]
            self.attempt(category)
        if not self.stmts:
            self.emit("add_scalar", ["x0"], c=1) or self.emit("to", ["x0"], dtype=torch.float32)
        return self.finish()

    def first_shape(self) -> tuple[int, ...]:
        return base_shape(self.rng, self.max_numel)

    def attempt(self, category: str) -> None:
        """Add statements of `category` (a method's name), or none."""
        getattr(self, category)()

    def finish(self) -> Program:
        outputs = tuple(dict.fromkeys(self.outputs()))
        return Program(self.seed, tuple(self.inputs), tuple(self.stmts), outputs).pruned()

    def outputs(self) -> list[str]:
        """The last value and (up to three of) the values nothing else reads."""
        used = {a for s in self.stmts for a in s.args}
        leaves = [s.out for s in self.stmts[:-1] if s.out not in used]
        outs = [self.stmts[-1].out] + self.rng.sample(leaves, min(3, len(leaves)))
        if self.rng.random() < 0.2:
            outs.append(self.rng.choice(self.stmts).out)
        return outs


def _broadcasts(a: torch.Tensor, b: torch.Tensor) -> bool:
    try:
        torch.broadcast_shapes(a.shape, b.shape)
        return True
    except RuntimeError:
        return False


def _broadcasts_to(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether `a` broadcasts to `b`'s shape (masked_fill's mask against its input)."""
    try:
        return tuple(torch.broadcast_shapes(a.shape, b.shape)) == tuple(b.shape)
    except RuntimeError:
        return False


def _reshaped(rng: random.Random, shape: list[int]) -> tuple[int, ...]:
    """Another shape of as many elements: two adjacent dims merged, one split, or flattened."""
    if len(shape) >= 2 and rng.random() < 0.4:
        k = rng.randrange(len(shape) - 1)
        return tuple(shape[:k] + [shape[k] * shape[k + 1]] + shape[k + 2:])
    splittable = [k for k, d in enumerate(shape) if any(d % f == 0 for f in (2, 3, 5)) and d > 1]
    if splittable and rng.random() < 0.7:
        k = rng.choice(splittable)
        f = next(f for f in (2, 3, 5) if shape[k] % f == 0)
        return tuple(shape[:k] + [f, -1] + shape[k + 1:])
    return (-1,)
