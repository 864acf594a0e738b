"""Simplification of scalar expressions: constant folding and index arithmetic.

Index expressions (``int64``) are put in a canonical linear form — a sum of
``coefficient * atom`` plus a constant — where the rules that matter for flattened
buffer offsets apply (``x`` non-negative where the rule says so):

- ``(c*Q + R) / c -> Q + R / c`` and ``(c*Q + R) % c -> R % c`` when ``Q, R >= 0``,
  then ``R / c -> 0`` and ``R % c -> R`` when ``0 <= R < c``;
- ``c*(x / c) + x % c -> x`` (C's truncating division makes this always hold);
- ``c1*((x / c1) % c2) + x % c1 -> x % (c1*c2)`` for ``x >= 0``;
- ``(x / a) / b -> x / (a*b)``, ``(x % a) % b -> x % b`` when ``b`` divides ``a``;
- comparisons, ``min``/``max`` and selects decided by bounds.

So a reshape of a reshape reads its input at the output's own offset, and a window
that never leaves the input loses its bounds check. Float expressions are only folded
where the result is exact in IEEE arithmetic (``x * 1.0``, not ``x + 0.0``).
"""

from __future__ import annotations

import numpy as np

from ..te import expr as E
from ..te.visit import rewrite
from .bounds import Bounds

_INT_FOLD = {
    E.Add: lambda a, b: a + b,
    E.Sub: lambda a, b: a - b,
    E.Mul: lambda a, b: a * b,
    E.Min: min,
    E.Max: max,
    E.FloorDiv: lambda a, b: 0 if b == 0 else a // b,
    E.FloorMod: lambda a, b: 0 if b == 0 else a % b,
    E.TruncDiv: lambda a, b: 0 if b == 0 else (abs(a) // abs(b)) * (1 if (a >= 0) == (b > 0)
                                                                     else -1),
    E.TruncMod: lambda a, b: 0 if b == 0 else a - b * ((abs(a) // abs(b))
                                                      * (1 if (a >= 0) == (b > 0) else -1)),
    E.EQ: lambda a, b: a == b,
    E.NE: lambda a, b: a != b,
    E.LT: lambda a, b: a < b,
    E.LE: lambda a, b: a <= b,
    E.GT: lambda a, b: a > b,
    E.GE: lambda a, b: a >= b,
    E.And: lambda a, b: bool(a and b),
    E.Or: lambda a, b: bool(a or b),
    E.BitAnd: lambda a, b: a & b,
    E.BitOr: lambda a, b: a | b,
    E.BitXor: lambda a, b: a ^ b,
    # only shifts C defines fold (computes guard the others with a select)
    E.ShiftLeft: lambda a, b: a << b if 0 <= b < 64 else None,
    E.ShiftRight: lambda a, b: a >> b if 0 <= b < 64 else None,
}

_FLOAT_FOLD = {
    E.Add: np.add, E.Sub: np.subtract, E.Mul: np.multiply, E.Div: np.divide,
    E.Min: np.minimum, E.Max: np.maximum,
    E.EQ: np.equal, E.NE: np.not_equal, E.LT: np.less, E.LE: np.less_equal,
    E.GT: np.greater, E.GE: np.greater_equal,
}


def _wrap(value: int, dtype: str) -> int:
    """``value`` wrapped to ``dtype``'s range, as the C arithmetic does."""
    if dtype == "bool":
        return int(bool(value))
    info = np.iinfo(dtype)
    span = int(info.max) - int(info.min) + 1
    return (value - int(info.min)) % span + int(info.min)


def _compute_dtype(dtype: str) -> str:
    return "float32" if dtype == "float16" else dtype  # float16 is computed in float32


class Linear:
    """``sum(coef * atom) + const`` over ``int64`` atoms."""

    __slots__ = ("terms", "const")

    def __init__(self, terms: dict | None = None, const: int = 0):
        self.terms = terms or {}
        self.const = const

    def add(self, other: Linear, scale: int = 1) -> None:
        for atom, c in other.terms.items():
            v = self.terms.get(atom, 0) + c * scale
            if v:
                self.terms[atom] = v
            else:
                self.terms.pop(atom, None)
        self.const += other.const * scale

    def scaled(self, k: int) -> Linear:
        out = Linear()
        out.add(self, k)
        return out

    def to_expr(self) -> E.Expr:
        out = None
        for atom, c in self.terms.items():
            term = atom if abs(c) == 1 else E.Mul(atom, E.IntImm(abs(c)))
            if out is None:
                out = term if c > 0 else E.Sub(E.IntImm(0), term)
            else:
                out = E.Add(out, term) if c > 0 else E.Sub(out, term)
        if out is None:
            return E.IntImm(self.const)
        if self.const > 0:
            return E.Add(out, E.IntImm(self.const))
        if self.const < 0:
            return E.Sub(out, E.IntImm(-self.const))
        return out


class Simplifier:
    """Simplify expressions under loop-variable ``ranges`` (``{Var: (lo, hi)}``).
    ``extents`` (``{Var: symbolic extent}``) lets ``(i * n + j) / n`` drop to ``i`` when
    ``j`` runs over ``[0, n)`` for a symbolic ``n`` (a reshape's index arithmetic in a
    kernel with dynamic shapes)."""

    def __init__(self, ranges: dict | None = None, extents: dict | None = None):
        self.bounds = Bounds(ranges)
        self.extents = extents or {}
        self.memo: dict = {}
        self._linear: dict = {}

    def __call__(self, e: E.Expr) -> E.Expr:
        return rewrite(e, self._node, self.memo)

    # ------------------------------------------------------------ per node

    def _node(self, e: E.Expr) -> E.Expr:
        t = type(e)
        if isinstance(e, E.BinaryOp):
            folded = self._fold_binary(e)
            if folded is not None:
                return folded
            if e.a.dtype == E.INDEX:
                return self._index(e)
            return self._identities(e)
        if t is E.Select:
            c = E.const_value(e.cond)
            if c is not None:
                return e.t if c else e.f
            return e.t if e.t == e.f else e
        if t is E.Not:
            c = E.const_value(e.a)
            return E.IntImm(int(not c), "bool") if c is not None else e
        if t is E.Cast:
            return self._cast(e)
        return e

    def _fold_binary(self, e) -> E.Expr | None:
        a, b = E.const_value(e.a), E.const_value(e.b)
        if a is None or b is None:
            return self._fold_logic(e)
        t, dtype = type(e), e.a.dtype
        if E.is_float(dtype):
            fn = _FLOAT_FOLD.get(t)
            if fn is None:
                return None
            ct = np.dtype(_compute_dtype(dtype)).type
            with np.errstate(all="ignore"):
                v = fn(ct(a), ct(b))
            return E.const(bool(v), "bool") if e.dtype == "bool" else E.FloatImm(float(v), dtype)
        fn = _INT_FOLD.get(t)
        if fn is None:
            return None
        v = fn(int(a), int(b))
        if v is None:
            return None
        if e.dtype == "bool":
            return E.IntImm(int(bool(v)), "bool")
        return E.IntImm(_wrap(int(v), dtype), dtype)

    @staticmethod
    def _fold_logic(e) -> E.Expr | None:
        t = type(e)
        if t not in (E.And, E.Or):
            return None
        for x, y in ((e.a, e.b), (e.b, e.a)):
            c = E.const_value(x)
            if c is None:
                continue
            if t is E.And:
                return y if c else E.IntImm(0, "bool")
            return E.IntImm(1, "bool") if c else y
        return e.a if e.a == e.b else None

    def _identities(self, e) -> E.Expr:
        t, a, b = type(e), e.a, e.b
        ca, cb = E.const_value(a), E.const_value(b)
        exact_int = E.is_int(e.dtype)
        if t is E.Add and exact_int:
            if ca == 0:
                return b
            if cb == 0:
                return a
        if t is E.Sub and cb == 0:
            return a  # x - 0.0 is exact in IEEE arithmetic too
        if t is E.Mul:
            if cb == 1:
                return a
            if ca == 1:
                return b
            if exact_int and (ca == 0 or cb == 0):
                return E.const(0, e.dtype)
        if t in (E.Div, E.TruncDiv, E.FloorDiv) and cb == 1:
            return a
        if t in (E.Min, E.Max) and a == b:
            return a
        return e

    def _cast(self, e: E.Cast) -> E.Expr:
        v = E.const_value(e.value)
        if v is None:
            return e
        dtype = e.dtype
        if E.is_float(dtype):
            return E.FloatImm(float(np.dtype(dtype).type(v)), dtype)
        if dtype == "bool":
            return E.IntImm(int(v != 0), "bool")
        if isinstance(v, float):
            if not np.isfinite(v):
                return e
            v = int(np.trunc(v))
            info = np.iinfo(dtype)
            if not info.min <= v <= info.max:
                return e  # undefined in C: leave it to the compiler
        return E.IntImm(_wrap(int(v), dtype), dtype)

    # ------------------------------------------------------------ index arithmetic

    def linear(self, e: E.Expr) -> Linear:
        hit = self._linear.get(e)
        if hit is not None:
            return hit
        t = type(e)
        out = Linear()
        if t is E.IntImm:
            out.const = e.value
        elif t is E.Add:
            out.add(self.linear(e.a))
            out.add(self.linear(e.b))
        elif t is E.Sub:
            out.add(self.linear(e.a))
            out.add(self.linear(e.b), -1)
        elif t is E.Mul and E.const_value(e.b) is not None:
            out.add(self.linear(e.a), E.const_value(e.b))
        elif t is E.Mul and E.const_value(e.a) is not None:
            out.add(self.linear(e.b), E.const_value(e.a))
        else:
            out.terms[e] = 1
        self._linear[e] = out
        return out

    def bound_of(self, lin: Linear):
        lo, hi = lin.const, lin.const
        for atom, c in lin.terms.items():
            alo, ahi = self.bounds(atom)
            if c < 0:
                alo, ahi = (None if ahi is None else ahi * c), (None if alo is None else alo * c)
            else:
                alo, ahi = (None if alo is None else alo * c), (None if ahi is None else ahi * c)
            lo = None if lo is None or alo is None else lo + alo
            hi = None if hi is None or ahi is None else hi + ahi
        return lo, hi

    def _nonneg(self, lin: Linear) -> bool:
        lo = self.bound_of(lin)[0]
        return lo is not None and lo >= 0

    def _index(self, e) -> E.Expr:
        t = type(e)
        if t in (E.Add, E.Sub, E.Mul):
            lin = self.linear(e)
            merged = self._merge(lin)
            if merged is not lin:
                self._linear[e] = merged
            return self._canonical(merged)
        c = E.const_value(e.b)
        if t in (E.TruncDiv, E.TruncMod, E.FloorDiv, E.FloorMod) and isinstance(c, int) and c > 0:
            return self._div_mod(t, e, c)
        if t in (E.TruncDiv, E.TruncMod, E.FloorDiv, E.FloorMod) and c is None and self.extents:
            return self._symbolic_div_mod(t, e)
        if t in (E.Min, E.Max):
            return self._min_max(e)
        if isinstance(e, E.CmpOp):
            return self._compare(e)
        return self._identities(e)

    def _canonical(self, lin: Linear) -> E.Expr:
        out = lin.to_expr()
        self._linear.setdefault(out, lin)
        return out

    def _div_mod(self, t, e, c: int) -> E.Expr:
        x = e.a
        lin = self.linear(x)
        if t in (E.FloorDiv, E.FloorMod):
            if not self._nonneg(lin):
                exact = self._exact(t, lin, c)
                return e if exact is None else exact
            t = E.TruncDiv if t is E.FloorDiv else E.TruncMod
        is_div = t is E.TruncDiv
        if c == 1:
            return x if is_div else E.IntImm(0)
        exact = self._exact(t, lin, c)
        if exact is not None:
            return exact
        lo, hi = self.bound_of(lin)
        if lo is not None and lo >= 0 and hi is not None and hi < c:
            return E.IntImm(0) if is_div else x
        q, r = Linear(), Linear()
        for atom, k in lin.terms.items():
            (q if k % c == 0 else r).terms[atom] = k
        q.const, r.const = lin.const - lin.const % c, lin.const % c
        if (q.terms or q.const) and self._nonneg(q) and self._nonneg(r):
            rest = self._node(t(self._canonical(r), E.IntImm(c)))
            if not is_div:
                return rest
            return self._node(E.Add(self._canonical(_divided(q, c)), rest))
        if type(x) is t and is_div and isinstance(E.const_value(x.b), int) and x.b.value > 0:
            return E.TruncDiv(x.a, E.IntImm(x.b.value * c))  # (x / a) / b
        if (not is_div and type(x) is E.TruncMod and isinstance(E.const_value(x.b), int)
                and x.b.value % c == 0):
            return self._node(E.TruncMod(x.a, E.IntImm(c)))  # (x % a) % b, b | a
        return t(self._canonical(lin), E.IntImm(c)) if type(e) is not t else e

    def _symbolic_div_mod(self, t, e) -> E.Expr:
        """``(q * n + j) / n`` is ``q`` and ``% n`` is ``j`` when ``q >= 0`` and ``j`` is a
        loop variable of extent ``n``."""
        n = e.b
        quotient, rest = Linear(), Linear()
        rest.const = self.linear(e.a).const
        for atom, k in self.linear(e.a).terms.items():
            if type(atom) is E.Mul and (atom.a == n or atom.b == n):
                quotient.add(self.linear(atom.b if atom.a == n else atom.a), k)
            else:
                rest.terms[atom] = k
        if rest.const or len(rest.terms) != 1 or not self._nonneg(quotient):
            return e
        (j, k), = rest.terms.items()
        if k != 1 or self.extents.get(j) != n:
            return e
        is_div = t in (E.TruncDiv, E.FloorDiv)
        return self._canonical(quotient) if is_div else j

    def _exact(self, t, lin: Linear, c: int) -> E.Expr | None:
        """Division of a linear form whose every coefficient ``c`` divides."""
        if lin.const % c or any(k % c for k in lin.terms.values()):
            return None
        if t in (E.TruncMod, E.FloorMod):
            return E.IntImm(0)
        return self._canonical(_divided(lin, c))

    def _merge(self, lin: Linear) -> Linear:
        """Apply the div/mod recombination rules until none fires."""
        changed = True
        out = lin
        while changed:
            changed = False
            for atom, k in list(out.terms.items()):
                if type(atom) is not E.TruncMod or atom not in out.terms:
                    continue
                c1 = E.const_value(atom.b)
                if not isinstance(c1, int) or c1 <= 0:
                    continue
                x = atom.a
                div = E.TruncDiv(x, atom.b)
                if out.terms.get(div) == k * c1:  # c*(x / c) + x % c -> x
                    out = _copy(out)
                    del out.terms[div], out.terms[atom]
                    out.add(self.linear(x), k)
                    changed = True
                    break
                for other, k2 in out.terms.items():  # c1*((x / c1) % c2) + x % c1
                    if (type(other) is E.TruncMod and type(other.a) is E.TruncDiv
                            and other.a.a == x and other.a.b == atom.b and k2 == k * c1
                            and isinstance(E.const_value(other.b), int)
                            and self._nonneg(self.linear(x))):
                        out = _copy(out)
                        del out.terms[other], out.terms[atom]
                        merged = E.TruncMod(x, E.IntImm(c1 * other.b.value))
                        out.add(Linear({merged: k}))
                        changed = True
                        break
                if changed:
                    break
        return out

    def _min_max(self, e) -> E.Expr:
        d = self.bound_of(_diff(self, e.a, e.b))
        if d[1] is not None and d[1] <= 0:  # a <= b
            return e.a if type(e) is E.Min else e.b
        if d[0] is not None and d[0] >= 0:  # a >= b
            return e.b if type(e) is E.Min else e.a
        return self._identities(e)

    def _compare(self, e) -> E.Expr:
        lo, hi = self.bound_of(_diff(self, e.a, e.b))
        t = type(e)
        verdict = None
        if t is E.LT:
            verdict = True if hi is not None and hi < 0 else (
                False if lo is not None and lo >= 0 else None)
        elif t is E.LE:
            verdict = True if hi is not None and hi <= 0 else (
                False if lo is not None and lo > 0 else None)
        elif t is E.GT:
            verdict = True if lo is not None and lo > 0 else (
                False if hi is not None and hi <= 0 else None)
        elif t is E.GE:
            verdict = True if lo is not None and lo >= 0 else (
                False if hi is not None and hi < 0 else None)
        elif t in (E.EQ, E.NE):
            if lo == hi == 0:
                verdict = t is E.EQ
            elif (lo is not None and lo > 0) or (hi is not None and hi < 0):
                verdict = t is E.NE
        return e if verdict is None else E.IntImm(int(verdict), "bool")


def _copy(lin: Linear) -> Linear:
    return Linear(dict(lin.terms), lin.const)


def _divided(lin: Linear, c: int) -> Linear:
    return Linear({a: k // c for a, k in lin.terms.items()}, lin.const // c)


def _diff(s: Simplifier, a: E.Expr, b: E.Expr) -> Linear:
    out = Linear()
    out.add(s.linear(a))
    out.add(s.linear(b), -1)
    return s._merge(out)


def simplify(e: E.Expr, ranges: dict | None = None) -> E.Expr:
    """Simplify one expression; ``ranges`` maps loop ``Var``s to inclusive bounds."""
    return Simplifier(ranges)(e)
