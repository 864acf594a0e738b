"""``relay.random`` (``relay.op.random``): relayir's Threefry ops (``op/random.py``:
its own key layout, so the bits for a seed are not TVM's) and Relay's distributions on
them, each returning ``(next key, values)`` as Relay's do:

- ``uniform(key, shape, dtype, low, high)``: the top 24 (float32) or 53 (float64) bits
  of each draw as a fraction in ``[0, 1)``, scaled to ``[low, high)``;
- ``normal(key, shape, dtype, mean, scale)``: Box-Muller of two uniforms per value.
"""

from __future__ import annotations

import math

import numpy as np

from .....errors import Error
from .....ir.expr import Constant, Expr, Tuple, TupleGetItem
from .....op import tensor as _tensor
from .....op.bitwise import right_shift
from .....op.random import threefry_generate, threefry_split
from .....op.random import threefry_key as _threefry_key
from .....op.transform import cast, reshape, strided_slice

_MANTISSA = {"float32": 24, "float64": 53}


def threefry_key(seed: int) -> Constant:
    return Constant(_threefry_key(seed))


def _scalar(v, dtype: str):
    return cast(v, dtype) if isinstance(v, Expr) else Constant(np.array(v, dtype))


def _fractions(key, shape, dtype: str):
    """``(next key, values in [0, 1))`` of ``shape``."""
    if dtype not in _MANTISSA:
        raise Error(f"relay.random: dtype must be float32 or float64, found {dtype!r}")
    gen = threefry_generate(key, shape)
    bits = _MANTISSA[dtype]
    top = right_shift(TupleGetItem(gen, 1), Constant(np.array(64 - bits, "uint64")))
    unit = _tensor.multiply(cast(top, dtype), Constant(np.array(2.0 ** -bits, dtype)))
    return TupleGetItem(gen, 0), unit


def uniform(key, shape, dtype: str = "float32", low=0.0, high=1.0):
    nxt, unit = _fractions(key, tuple(shape), dtype)
    lo = _scalar(low, dtype)
    span = _tensor.subtract(_scalar(high, dtype), lo)
    return Tuple([nxt, _tensor.add(lo, _tensor.multiply(unit, span))])


def normal(key, shape, dtype: str = "float32", mean=0.0, scale=1.0):
    shape = tuple(shape)
    nxt, unit = _fractions(key, (2, *shape), dtype)
    flat = reshape(unit, (2, -1))
    n = math.prod(shape)
    u1 = _tensor.subtract(Constant(np.array(1.0, dtype)), strided_slice(flat, [0, 0], [1, n]))
    u2 = strided_slice(flat, [1, 0], [2, n])
    radius = _tensor.sqrt(_tensor.multiply(Constant(np.array(-2.0, dtype)), _tensor.log(u1)))
    angle = _tensor.multiply(Constant(np.array(2 * math.pi, dtype)), u2)
    z = reshape(_tensor.multiply(radius, _tensor.cos(angle)), shape)
    values = _tensor.add(_scalar(mean, dtype), _tensor.multiply(z, _scalar(scale, dtype)))
    return Tuple([nxt, values])


__all__ = ["normal", "threefry_generate", "threefry_key", "threefry_split", "uniform"]
