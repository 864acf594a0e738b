"""Building the fuzzer's random programs step by step (``fuzz_gen.generate``).

``Builder`` is what an op's sampler (``fuzz_ops.SAMPLERS``) sees: random choices, the
values built so far (concrete shapes and dtypes), and ways to get inputs — reuse an
earlier value, or make a new input (a parameter or a constant) salted with edge values.
``Builder.call`` adds a step only when the op's type relation accepts it and its numpy
reference runs; it raises ``TypeDisagrees`` when the relation's static type and the
reference's value differ (a bug of the op, reported like any other).
"""

from __future__ import annotations

import random

import numpy as np

from ..ir.types import Any, TensorType, TupleType
from .fuzz_program import Block, Step, StepError, call_type, reference, value_type
from .fuzz_values import values

FLOATS = ("float32",) * 6 + ("float64", "float16")
INTS = ("int32", "int32", "int64", "int8", "uint8", "int16")
NUMERIC = FLOATS + INTS
ALL = NUMERIC + ("bool",)


class TypeDisagrees(Exception):
    """An op's type relation and its reference disagree on a value's shape or dtype."""


class Builder:
    def __init__(self, seed: int, edges: float = 0.0, dynamic: bool = False):
        self.rng = random.Random(seed)
        self.nrng = np.random.default_rng(seed)
        self.edges = edges
        self.dynamic = dynamic
        self.block = Block([], [])
        self.inputs = 0
        self.allow_params = True  # a body block's only params are its captured values

    # ------------------------------------------------------------ random choices

    def choice(self, xs):
        return self.rng.choice(list(xs))

    def randint(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def coin(self, p: float = 0.5) -> bool:
        return self.rng.random() < p

    def sample(self, xs, k: int) -> list:
        return self.rng.sample(list(xs), k)

    # ------------------------------------------------------------ what exists

    def value(self, i: int):
        return self.block.steps[i].value

    def shape(self, i: int) -> tuple:
        return tuple(np.shape(self.value(i)))

    def dtype(self, i: int) -> str:
        return self.value(i).dtype.name

    def ndim(self, i: int) -> int:
        return len(self.shape(i))

    def pick(self, pred=None) -> int | None:
        cands = [i for i, s in enumerate(self.block.steps)
                 if isinstance(s.type, TensorType) and (pred is None or pred(
                     tuple(s.value.shape), s.value.dtype.name))]
        return self.choice(cands) if cands else None

    # ------------------------------------------------------------ new values

    def random_shape(self, ndim: int, lo: int = 1, hi: int = 5) -> tuple:
        shape = [self.randint(lo, hi) for _ in range(ndim)]
        if ndim and lo == 0 and self.coin(0.1):
            shape[self.randint(0, ndim - 1)] = 0  # an empty tensor
        return tuple(shape)

    def new(self, shape, dtype: str, *, const: bool | None = None, edges: float | None = None,
            low: float = -3.0, high: float = 3.0, exact=None) -> int:
        """A new input: a parameter (a dynamic program may declare some of its dimensions
        ``?``) or a constant, of ``shape``; ``exact`` gives its values."""
        if exact is not None:
            v = np.asarray(exact).astype(dtype)
        else:
            v = values(self.nrng, shape, dtype, self.edges if edges is None else edges, low,
                       high)
        if const is None:
            const = self.coin(0.2)
        if const or not self.allow_params:
            return self.add(Step("const", value_type(v), v))
        dyn = ()
        if self.dynamic and v.ndim and self.coin(0.6):
            dyn = tuple(k for k in range(v.ndim) if self.coin(0.5)) or (0,)
        self.inputs += 1
        return self.add(Step("param", value_type(v, dyn), v, name=f"x{self.inputs}"))

    def data(self, ndim=(1, 4), dtypes=FLOATS, lo: int = 1, hi: int = 5, reuse: float = 0.7,
             pred=None) -> int:
        """A tensor with rank in ``ndim`` (an int or an inclusive range) and a dtype in
        ``dtypes``: an earlier value when one fits (chance ``reuse``), else a new one."""
        lo_n, hi_n = (ndim, ndim) if isinstance(ndim, int) else ndim
        if self.coin(reuse):
            i = self.pick(lambda s, d: lo_n <= len(s) <= hi_n and d in dtypes
                          and all(x >= lo for x in s) and (pred is None or pred(s, d)))
            if i is not None:
                return i
        for _ in range(20):
            shape = self.random_shape(self.randint(lo_n, hi_n), lo, hi)
            dtype = self.choice(dtypes)
            if pred is None or pred(shape, dtype):
                return self.new(shape, dtype)
        raise StepError("no input shape satisfies the sampler")

    def like(self, shape, dtype: str, reuse: float = 0.5, **kw) -> int:
        """A tensor of exactly ``shape`` and ``dtype``."""
        shape = tuple(shape)
        if self.coin(reuse):
            i = self.pick(lambda s, d: s == shape and d == dtype)
            if i is not None:
                return i
        return self.new(shape, dtype, **kw)

    def broadcast_partner(self, i: int, dtype: str | None = None) -> int:
        """A tensor whose shape broadcasts with ``i``'s (same dtype unless given)."""
        shape, dtype = list(self.shape(i)), dtype or self.dtype(i)
        r = self.rng.random()
        if r < 0.4:
            other = shape
        elif r < 0.6:
            other = shape[self.randint(0, len(shape)):]  # a suffix (maybe a scalar)
        elif r < 0.85:
            other = [1 if self.coin(0.4) else d for d in shape]
        else:  # the other side broadcasts: i's size-1 axes grow
            other = [self.randint(1, 3) if d == 1 else d for d in shape]
            other = [self.randint(1, 2)] * self.randint(0, 1) + other
        return self.like(other, dtype)

    def index(self, shape, n: int, dtype: str = "int64", negative: bool = True) -> int:
        """Indices into an axis of ``n`` (in ``[-n, n)``, or ``[0, n)``), never salted."""
        lo = -n if negative else 0
        v = self.nrng.integers(lo, max(n, 1), size=tuple(shape)) if n else np.zeros(shape)
        return self.new(shape, dtype, edges=0.0, exact=v)

    def ints(self, values_, dtype: str = "int64", const: bool | None = None) -> int:
        """A 1-D (or 0-D for a scalar) integer tensor holding ``values_`` exactly."""
        return self.new(np.shape(values_), dtype, exact=np.asarray(values_), const=const,
                        edges=0.0)

    def scalar(self, value, dtype: str, const: bool | None = None) -> int:
        return self.new((), dtype, exact=np.asarray(value), const=const, edges=0.0)

    # ------------------------------------------------------------ adding steps

    def add(self, step: Step) -> int:
        self.block.steps.append(step)
        return len(self.block.steps) - 1

    def call(self, op: str, args: list, attrs: dict | None = None) -> int:
        """Add ``op(args, attrs)`` (``args``: step indices, a tuple for a tuple input);
        its fields too when it gives a tuple."""
        attrs = dict(attrs or {})
        steps = self.block.steps
        types = [[steps[j].type for j in a] if isinstance(a, tuple) else steps[a].type
                 for a in args]
        vals = [tuple(steps[j].value for j in a) if isinstance(a, tuple) else steps[a].value
                for a in args]
        ty = call_type(op, types, attrs)
        value = reference(op, vals, attrs)
        try:
            _check_agrees(op, ty, value)
        except TypeDisagrees as exc:
            raise TypeDisagrees(f"{exc} (inputs {types}, attrs {attrs})") from None
        i = self.add(Step("call", ty, value, args=tuple(args), op=op, attrs=attrs,
                          let=self.coin(0.3)))
        if isinstance(ty, TupleType):
            for k, f in enumerate(ty.fields):
                if isinstance(f, TensorType):
                    self.add(Step("get", f, value[k], args=(i,), index=k))
        return i


def _check_agrees(op: str, ty, value) -> None:
    if isinstance(ty, TupleType):
        if not isinstance(value, tuple) or len(value) != len(ty.fields):
            raise TypeDisagrees(f"{op}: the type is {ty} but the reference gives "
                                f"{type(value).__name__}")
        for f, v in zip(ty.fields, value):
            _check_agrees(op, f, v)
        return
    if isinstance(value, tuple) or not isinstance(ty, TensorType):
        raise TypeDisagrees(f"{op}: the type is {ty} but the reference gives a tuple")
    shape_ok = len(ty.shape) == value.ndim and all(
        isinstance(d, Any) or d == n for d, n in zip(ty.shape, value.shape))
    if not shape_ok or ty.dtype != value.dtype.name:
        raise TypeDisagrees(f"{op}: the type relation gives {ty} but the reference gives "
                            f"{value.dtype.name}{list(value.shape)}")
