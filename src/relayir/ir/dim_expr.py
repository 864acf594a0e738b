"""Symbolic dimensions: named dims and integer expressions over them.

A tensor dim is an ``int``, ``Any()`` or a :class:`DimExpr`: a named dim
(:class:`SymbolicDim`, ``n``) or an expression of named dims and ints built with
``+ - * floordiv floormod min max`` (``n - 1``, ``2 * n``, ``floordiv(n, 4)``), as TVM's
``tir`` arithmetic builds shapes. Every constructor returns the *canonical form*, so
structural equality is ``==`` and two spellings of one value are one object value:

- a sum is a polynomial ``Σ coef·monomial + const`` (:class:`DimSum`): constants
  folded, like terms collected, monomials sorted (``d * 2`` and ``2 * d`` are equal,
  ``(d + 1) - 1`` is ``d``); a sum that is one atom is that atom, one without terms an int;
- ``floordiv`` / ``floormod`` / ``min`` / ``max`` that do not fold are atoms
  (:class:`DimOp`): ``floordiv(q·c + r, c)`` is ``q + floordiv(r, c)`` with every
  coefficient of ``r`` in ``[0, c)``, ``floormod`` keeps only ``r``, nested constant
  divisions merge, ``min`` / ``max`` of arguments a constant apart pick one, and the
  arguments of ``min`` / ``max`` are sorted.

``Any`` absorbs: any arithmetic with an unknown dim is unknown. Dim expressions are
small (a shape's own arithmetic), so functions here recurse over them freely.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import Error


class Any:
    """A dimension known only at run time (printed ``?``)."""

    __slots__ = ()
    _instance: Any | None = None

    def __new__(cls) -> Any:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "?"

    def __reduce__(self):
        return (Any, ())

    # arithmetic with an unknown dim is unknown (relations may compute with it freely)
    def _unknown(self, other=None) -> Any:
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _unknown
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __neg__ = _unknown


class DimExpr:
    """A symbolic dim: a named dim or an expression over named dims (canonical)."""

    __slots__ = ()

    def __add__(self, o):
        return dim_add(self, _operand(o))

    def __radd__(self, o):
        return dim_add(_operand(o), self)

    def __sub__(self, o):
        return dim_sub(self, _operand(o))

    def __rsub__(self, o):
        return dim_sub(_operand(o), self)

    def __mul__(self, o):
        return dim_mul(self, _operand(o))

    def __rmul__(self, o):
        return dim_mul(_operand(o), self)

    def __floordiv__(self, o):
        return floordiv(self, _operand(o))

    def __rfloordiv__(self, o):
        return floordiv(_operand(o), self)

    def __mod__(self, o):
        return floormod(self, _operand(o))

    def __rmod__(self, o):
        return floormod(_operand(o), self)

    def __neg__(self):
        return dim_sub(0, self)

    def __repr__(self) -> str:
        return dim_text(self)


@dataclass(frozen=True, slots=True, repr=False)
class SymbolicDim(DimExpr):
    """A named dimension (``n``): equal to itself wherever it appears."""

    name: str

    def __repr__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True, repr=False)
class DimSum(DimExpr):
    """``Σ coef·monomial + const``; a monomial is a sorted tuple of atoms (a repeated
    atom is a power). ``terms`` are ``(monomial, coef)`` pairs, sorted, coefs non-zero.
    Build with the arithmetic functions, which return the canonical form."""

    terms: tuple
    const: int = 0


DIM_OPS = ("floordiv", "floormod", "min", "max")


@dataclass(frozen=True, slots=True, repr=False)
class DimOp(DimExpr):
    """``op(a, b)`` for ``op`` in ``DIM_OPS`` that does not simplify further."""

    op: str
    args: tuple


Dim = int | Any | DimExpr


def _operand(o):
    if isinstance(o, (DimExpr, Any)):
        return o
    if isinstance(o, (int, np.integer)) and not isinstance(o, bool):
        return int(o)
    raise Error(f"dim arithmetic takes ints and dims, found {o!r}")


def is_dim(d) -> bool:
    return isinstance(d, (int, Any, DimExpr)) and not isinstance(d, bool)


# ---------------------------------------------------------------- polynomials


def _atom_key(a) -> tuple:
    return (0, a.name) if isinstance(a, SymbolicDim) else (1, a.op, dim_text(a))


def _mono_key(m: tuple) -> tuple:
    return (len(m), tuple(_atom_key(a) for a in m))


def _poly(d) -> tuple[dict, int]:
    if isinstance(d, int):
        return {}, d
    if isinstance(d, DimSum):
        return dict(d.terms), d.const
    return {(d,): 1}, 0


def _make(terms: dict, const: int):
    terms = {m: c for m, c in terms.items() if c}
    if not terms:
        return const
    if const == 0 and len(terms) == 1:
        ((m, c),) = terms.items()
        if c == 1 and len(m) == 1:
            return m[0]
    return DimSum(tuple(sorted(terms.items(), key=lambda e: _mono_key(e[0]))), const)


def _linear(a, b, sign: int):
    ta, ca = _poly(a)
    tb, cb = _poly(b)
    for m, c in tb.items():
        ta[m] = ta.get(m, 0) + sign * c
    return _make(ta, ca + sign * cb)


def dim_add(a, b):
    if isinstance(a, Any) or isinstance(b, Any):
        return Any()
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    return _linear(a, b, 1)


def dim_sub(a, b):
    if isinstance(a, Any) or isinstance(b, Any):
        return Any()
    if isinstance(a, int) and isinstance(b, int):
        return a - b
    return _linear(a, b, -1)


def dim_mul(a, b):
    if a == 0 or b == 0:
        return 0
    if isinstance(a, Any) or isinstance(b, Any):
        return Any()
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    ta, ca = _poly(a)
    tb, cb = _poly(b)
    ta[()] = ca
    tb[()] = cb
    out: dict = {}
    for ma, x in ta.items():
        for mb, y in tb.items():
            if x and y:
                m = tuple(sorted(ma + mb, key=_atom_key))
                out[m] = out.get(m, 0) + x * y
    return _make(out, out.pop((), 0))


def _split(a, c: int):
    """``a = c·q + r`` with every coefficient of ``r`` (and its constant) in ``[0, c)``."""
    terms, const = _poly(a)
    q, r = {}, {}
    for m, k in terms.items():
        q[m], r[m] = divmod(k, c)
    q0, r0 = divmod(const, c)
    return _make(q, q0), _make(r, r0)


def floordiv(a, b):
    a, b = _operand(a), _operand(b)
    if isinstance(a, Any) or isinstance(b, Any):
        return Any()
    if b == 0:
        raise Error(f"dim division by zero: floordiv({dim_text(a)}, 0)")
    if isinstance(b, int):
        if isinstance(a, int):
            return a // b
        if b == 1:
            return a
        if b > 0:
            if isinstance(a, DimOp) and a.op == "floordiv" and isinstance(a.args[1], int) \
                    and a.args[1] > 0:
                return floordiv(a.args[0], a.args[1] * b)
            q, r = _split(a, b)
            if isinstance(r, int):  # 0 <= r < b
                return q
            if q != 0:
                return dim_add(q, floordiv(r, b))
            g = _content(a, b)  # floordiv(4 * n, 16) is floordiv(n, 4)
            if g > 1:
                return floordiv(exact_div(a, g), b // g)
    elif a == b:
        return 1  # a dim divided by itself (a zero divisor is an error at run time)
    return DimOp("floordiv", (a, b))


def _content(a, b: int) -> int:
    """The gcd of ``b`` and every coefficient and the constant of ``a``."""
    terms, const = _poly(a)
    return math.gcd(b, const, *terms.values())


def floormod(a, b):
    a, b = _operand(a), _operand(b)
    if isinstance(a, Any) or isinstance(b, Any):
        return Any()
    if b == 0:
        raise Error(f"dim division by zero: floormod({dim_text(a)}, 0)")
    if isinstance(b, int):
        if isinstance(a, int):
            return a % b
        if b == 1:
            return 0
        if b > 0:
            if isinstance(a, DimOp) and a.op == "floormod" and isinstance(a.args[1], int) \
                    and a.args[1] > 0 and a.args[1] % b == 0:
                a = a.args[0]
            _, a = _split(a, b)
            if isinstance(a, int):
                return a
    elif a == b:
        return 0
    return DimOp("floormod", (a, b))


def _minmax(op: str, a, b):
    a, b = _operand(a), _operand(b)
    pick = min if op == "min" else max
    if isinstance(a, Any) or isinstance(b, Any):
        return Any()
    if a == b:
        return a
    diff = dim_sub(a, b)
    if isinstance(diff, int):
        return a if pick(diff, 0) == diff else b
    low = lower_bound(diff)  # names are sizes (>= 0): max(n, 0) is n, min(n + 1, 1) is 1
    if low is not None and low >= 0:
        return b if op == "min" else a
    low = lower_bound(dim_sub(b, a))
    if low is not None and low >= 0:
        return a if op == "min" else b
    lo, hi = sorted((a, b), key=lambda d: (1, dim_text(d)) if not isinstance(d, int) else (0, d))
    return DimOp(op, (lo, hi))


def lower_bound(d) -> int | None:
    """A lower bound of ``d`` that holds since every name is ``>= 0`` (None: unknown)."""
    if isinstance(d, int):
        return d
    if isinstance(d, SymbolicDim):
        return 0
    if isinstance(d, DimSum):
        if any(c < 0 for _, c in d.terms):
            return None
        if any((low := lower_bound(a)) is None or low < 0 for m, _ in d.terms for a in m):
            return None
        return d.const
    if isinstance(d, DimOp):
        lows = [lower_bound(x) for x in d.args]
        if d.op == "floormod":
            return 0 if isinstance(d.args[1], int) and d.args[1] > 0 else None
        if d.op == "floordiv":
            return lows[0] // d.args[1] if lows[0] is not None and isinstance(
                d.args[1], int) and d.args[1] > 0 else None
        if d.op == "min":
            return None if None in lows else min(lows)
        known = [x for x in lows if x is not None]
        return max(known) if known else None
    return None


def dim_min(a, b):
    return _minmax("min", a, b)


def dim_max(a, b):
    return _minmax("max", a, b)


OPS = {"floordiv": floordiv, "floormod": floormod, "min": dim_min, "max": dim_max}


# ---------------------------------------------------------------- questions


def dim_text(d) -> str:
    """The text of a dim as the Relay printer writes it (``2 * n - 1``, ``floordiv(n, 4)``)."""
    if isinstance(d, Any):
        return "?"
    if isinstance(d, int):
        return str(d)
    if isinstance(d, SymbolicDim):
        return d.name
    if isinstance(d, DimOp):
        return f"{d.op}({dim_text(d.args[0])}, {dim_text(d.args[1])})"
    out = ""
    for m, c in d.terms:
        mono = " * ".join(_factor_text(a) for a in m)
        mag = abs(c)
        body = mono if mag == 1 else f"{mag} * {mono}"
        out += (f"-{body}" if c < 0 else body) if not out else \
            (f" - {body}" if c < 0 else f" + {body}")
    if d.const:
        out += f" - {-d.const}" if d.const < 0 else f" + {d.const}"
    return out


def _factor_text(a) -> str:
    return dim_text(a)  # atoms are names and calls: no parentheses needed


def dim_symbols(d) -> set[str]:
    """The names a dim expression mentions."""
    if isinstance(d, SymbolicDim):
        return {d.name}
    if isinstance(d, DimSum):
        return {n for m, _ in d.terms for a in m for n in dim_symbols(a)}
    if isinstance(d, DimOp):
        return dim_symbols(d.args[0]) | dim_symbols(d.args[1])
    return set()


def substitute_dim(d, env: dict):
    """``d`` with each name in ``env`` (name -> dim) replaced; an int when every name
    ``d`` mentions is bound to an int."""
    if isinstance(d, SymbolicDim):
        return env.get(d.name, d)
    if isinstance(d, DimSum):
        out = d.const
        for m, c in d.terms:
            term = c
            for a in m:
                term = dim_mul(term, substitute_dim(a, env))
            out = dim_add(out, term)
        return out
    if isinstance(d, DimOp):
        return OPS[d.op](substitute_dim(d.args[0], env), substitute_dim(d.args[1], env))
    return d


def solve_dim(d, value: int):
    """For a dim linear in one name (``c·n + k``): ``(name, v)`` with ``c·v + k ==
    value``, or ``False`` when no dim ``v >= 0`` solves it; ``None`` when ``d`` is not
    of that form (nothing is known)."""
    if isinstance(d, SymbolicDim):
        return (d.name, value) if value >= 0 else False
    if not isinstance(d, DimSum) or len(d.terms) != 1:
        return None
    ((m, c),) = d.terms
    if len(m) != 1 or not isinstance(m[0], SymbolicDim):
        return None
    v, rem = divmod(value - d.const, c)
    return (m[0].name, v) if rem == 0 and v >= 0 else False


def certainly_differ(a, b) -> bool:
    """True only when dims ``a`` and ``b`` can be equal for no values of their names
    (each name a size: an int ``>= 0``)."""
    if isinstance(a, Any) or isinstance(b, Any) or a == b:
        return False
    diff = dim_sub(a, b)
    if isinstance(diff, int):
        return diff != 0
    if isinstance(a, int) or isinstance(b, int):
        e, v = (b, a) if isinstance(a, int) else (a, b)
        return solve_dim(e, v) is False
    return False


def exact_div(a, b):
    """``a / b`` when ``b`` divides ``a`` for every value of the names (``6 * n * m`` by
    ``2 * m`` is ``3 * n``), else None. ``b`` must be an int or a single term."""
    if isinstance(a, Any) or isinstance(b, Any) or b == 0:
        return None
    if isinstance(b, int):
        if isinstance(a, int):
            return a // b if a % b == 0 else None
        terms, const = _poly(a)
        if const % b or any(c % b for c in terms.values()):
            return None
        return _make({m: c // b for m, c in terms.items()}, const // b)
    bt, bc = _poly(b)
    if bc or len(bt) != 1:
        return None
    ((bm, bk),) = bt.items()
    terms, const = _poly(a)
    if const:
        return None
    out = {}
    for m, c in terms.items():
        rest = list(m)
        for atom in bm:
            if atom not in rest:
                return None
            rest.remove(atom)
        if c % bk:
            return None
        out[tuple(rest)] = c // bk
    return _make(out, out.pop((), 0))


def dim_product(dims):
    """The product of ``dims`` (``Any`` if one is unknown and none is 0)."""
    out = 1
    for d in dims:
        out = dim_mul(out, d)
    return out
