"""Input values for differential fuzzing: ordinary numbers salted with the values that
break compilers — NaN, +-Inf, -0.0, denormals, huge and tiny magnitudes, integer extremes.

``values(rng, shape, dtype, edges)`` draws one array; ``edges`` is the share of elements
replaced by edge values (0 for clean data). ``EDGE_SHARES`` are the mixes the fuzzer
picks from per program, so most programs see some edge values and some see none.
"""

from __future__ import annotations

import math

import numpy as np

from ..ir.types import numpy_dtype

EDGE_SHARES = (0.0, 0.0, 0.1, 0.25, 0.5)


def float_edges(dtype: str) -> np.ndarray:
    """NaN, infinities, signed zeros, denormals, the smallest normals, and magnitudes
    whose squares are still finite. Larger ones would overflow where a reference sums
    squares in float64 and a compiled program in the input's dtype (a norm's variance):
    rounding, not semantics; ``tests/codegen/test_ieee_edge_values.py`` feeds each op
    its dtype's largest values instead."""
    info = np.finfo(numpy_dtype(dtype))
    tiny, sub = float(info.tiny), float(info.smallest_subnormal)
    root = math.sqrt(float(info.max))
    big = root / (10 if root < 1e4 else 1e4)  # 1.8e15 for float32, 25.6 for float16
    return np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, sub, -sub, tiny, -tiny * 3,
                     big, -big / 3, 1e-30 if info.tiny < 1e-30 else tiny, 1.0, -1.0], dtype)


def int_edges(dtype: str) -> np.ndarray:
    if dtype == "bool":
        return np.array([False, True])
    info = np.iinfo(numpy_dtype(dtype))
    picks = {int(info.min), int(info.min) + 1, -1, 0, 1, 2, int(info.max) - 1, int(info.max)}
    return np.array(sorted(v for v in picks if info.min <= v <= info.max), dtype)


def values(rng: np.random.Generator, shape, dtype: str, edges: float = 0.0,
           low: float = -3.0, high: float = 3.0) -> np.ndarray:
    """An array of ``shape``: uniform in ``[low, high)`` (integers: small ones), then a
    share ``edges`` of its elements replaced by edge values of ``dtype``."""
    shape = tuple(int(d) for d in shape)
    np_dtype = numpy_dtype(dtype)
    if dtype == "bool":
        out = rng.random(shape) < 0.5
    elif np_dtype.kind in "iu":
        lo = 0 if np_dtype.kind == "u" else int(low) * 3
        out = rng.integers(lo, int(high) * 3 + 1, size=shape).astype(np_dtype)
    else:
        out = rng.uniform(low, high, size=shape).astype(np_dtype)
    n = out.size
    if edges > 0 and n:
        k = max(1, int(round(n * edges)))
        where = rng.choice(n, k, replace=False)
        pool = float_edges(dtype) if np_dtype.kind == "f" else int_edges(dtype)
        out.reshape(-1)[where] = rng.choice(pool, k)
    return np.asarray(out)
