"""Constant integer bounds of expressions (TVM's ``ConstIntBound``).

``bound(e)`` is ``(lo, hi)``, either side ``None`` when unknown. Loop variables get
their ranges from the caller; the analysis is what lets the simplifier drop a
``(i * 6 + j) / 6`` to ``i`` when ``0 <= j < 6``, or a bounds check that always holds.
"""

from __future__ import annotations

import numpy as np

from ..te import expr as E

Bound = tuple  # (lo | None, hi | None)
UNKNOWN: Bound = (None, None)


def _add(a, b):
    return None if a is None or b is None else a + b


def _dtype_range(dtype: str) -> Bound:
    if dtype == "bool":
        return (0, 1)
    if E.is_int(dtype):
        info = np.iinfo(dtype)
        return (int(info.min), int(info.max))
    return UNKNOWN


def _mul(a: Bound, b: Bound) -> Bound:
    if None in a or None in b:
        # still useful: a non-negative times a non-negative constant
        if b[0] is not None and b[0] == b[1] and b[0] >= 0 and a[0] is not None and a[0] >= 0:
            return (a[0] * b[0], None if a[1] is None else a[1] * b[0])
        if a[0] is not None and a[0] == a[1] and a[0] >= 0 and b[0] is not None and b[0] >= 0:
            return (b[0] * a[0], None if b[1] is None else b[1] * a[0])
        if a[0] is not None and b[0] is not None and a[0] >= 0 and b[0] >= 0:
            return (a[0] * b[0], None)
        return UNKNOWN
    products = [x * y for x in a for y in b]
    return (min(products), max(products))


def _trunc_div(x: int, c: int) -> int:
    q = abs(x) // abs(c)
    return q if (x >= 0) == (c > 0) else -q


class Bounds:
    """Bounds under ``ranges`` (``{Var: (lo, hi)}``, inclusive); memoised per node."""

    def __init__(self, ranges: dict | None = None):
        self.ranges = ranges or {}
        self.memo: dict = {}

    def __call__(self, e: E.Expr) -> Bound:
        hit = self.memo.get(e)
        if hit is None:
            hit = self.memo[e] = self._bound(e)
        return hit

    def _bound(self, e: E.Expr) -> Bound:
        if isinstance(e, E.IntImm):
            return (e.value, e.value)
        if not (E.is_int(e.dtype) or e.dtype == "bool"):
            return UNKNOWN
        if isinstance(e, E.Var):
            return self.ranges.get(e, _dtype_range(e.dtype) if e.dtype != E.INDEX else UNKNOWN)
        t = type(e)
        if t is E.Add:
            a, b = self(e.a), self(e.b)
            return (_add(a[0], b[0]), _add(a[1], b[1]))
        if t is E.Sub:
            a, b = self(e.a), self(e.b)
            return (_add(a[0], None if b[1] is None else -b[1]),
                    _add(a[1], None if b[0] is None else -b[0]))
        if t is E.Mul:
            return _mul(self(e.a), self(e.b))
        if t in (E.TruncDiv, E.FloorDiv, E.TruncMod, E.FloorMod):
            return self._div_mod(t, self(e.a), E.const_value(e.b))
        if t is E.Min:
            a, b = self(e.a), self(e.b)
            lo = None if a[0] is None or b[0] is None else min(a[0], b[0])
            hi = b[1] if a[1] is None else (a[1] if b[1] is None else min(a[1], b[1]))
            return (lo, hi)
        if t is E.Max:
            a, b = self(e.a), self(e.b)
            lo = b[0] if a[0] is None else (a[0] if b[0] is None else max(a[0], b[0]))
            hi = None if a[1] is None or b[1] is None else max(a[1], b[1])
            return (lo, hi)
        if t is E.Select:
            a, b = self(e.t), self(e.f)
            lo = None if a[0] is None or b[0] is None else min(a[0], b[0])
            hi = None if a[1] is None or b[1] is None else max(a[1], b[1])
            return (lo, hi)
        return _dtype_range(e.dtype) if e.dtype != E.INDEX else UNKNOWN

    @staticmethod
    def _div_mod(t, a: Bound, c) -> Bound:
        if not isinstance(c, int) or c <= 0:
            return UNKNOWN
        lo, hi = a
        if t is E.TruncDiv:
            if lo is not None and lo >= 0:
                return (lo // c, None if hi is None else hi // c)
            if lo is not None and hi is not None:
                return (_trunc_div(lo, c), _trunc_div(hi, c))
            return UNKNOWN
        if t is E.FloorDiv:
            return (None if lo is None else lo // c, None if hi is None else hi // c)
        if t is E.TruncMod:
            if lo is not None and lo >= 0:
                return (lo, hi) if hi is not None and hi < c else (0, c - 1)
            return (-(c - 1), c - 1)
        # FloorMod
        if lo is not None and lo >= 0 and hi is not None and hi < c:
            return (lo, hi)
        return (0, c - 1)
