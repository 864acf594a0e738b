"""Elementwise and broadcast operators: arithmetic, comparison, logic, unary math.

Each op is one row of a table: name, numpy reference, relation. Relay semantics that
differ from numpy's defaults are spelled out in the reference (integer ``divide``
truncates like C, ``mod`` has the sign of the dividend like C's ``%``/``fmod``).
"""

from __future__ import annotations

import math

import numpy as np

from ..ir.op import OpPattern, call, register_op
from ..ir.types import is_float
from .type_rel import (
    bool_identity_rel,
    broadcast_bool_rel,
    broadcast_rel,
    fail,
    float_identity_rel,
    identity_rel,
    require_float,
    tensor,
)


def _int_trunc_divide(a, b):
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.floor_divide(a, b)
        fix = (q < 0) & (q * b != a)
    return q + fix.astype(q.dtype)


def _divide(a, b, attrs=None):
    if is_float(a.dtype.name):
        return np.divide(a, b)
    return _int_trunc_divide(a, b)


def _floor_divide(a, b, attrs=None):
    if is_float(a.dtype.name):
        return np.floor(np.divide(a, b))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.floor_divide(a, b)


def _mod(a, b, attrs=None):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.fmod(a, b)


def _floor_mod(a, b, attrs=None):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.mod(a, b)


def _power(a, b, attrs=None):
    """Integer powers wrap like repeated multiplication; a negative exponent gives the
    truncated ``1 / a**-b``: 1 for ``a == 1``, +-1 for ``a == -1``, else 0 (0 for
    ``a == 0`` too, where numpy raises)."""
    if is_float(a.dtype.name):
        return np.power(a, b)
    negative = b < 0
    out = np.power(a, np.where(negative, 0, b).astype(b.dtype))
    if not negative.any():
        return out
    odd = (b & 1).astype(bool)
    inverse = np.where(a == 1, 1, np.where((a == -1) & odd, -1, np.where(a == -1, 1, 0)))
    return np.where(negative, inverse, out).astype(out.dtype)


def _binary(fn):
    return lambda a, b, attrs=None: fn(a, b)


_BINARY = {
    "add": _binary(np.add),
    "subtract": _binary(np.subtract),
    "multiply": _binary(np.multiply),
    "divide": _divide,
    "floor_divide": _floor_divide,
    "mod": _mod,
    "floor_mod": _floor_mod,
    "power": _power,
    "maximum": _binary(np.maximum),
    "minimum": _binary(np.minimum),
}

_COMPARE = {
    "equal": np.equal,
    "not_equal": np.not_equal,
    "less": np.less,
    "less_equal": np.less_equal,
    "greater": np.greater,
    "greater_equal": np.greater_equal,
}

_LOGICAL = {
    "logical_and": np.logical_and,
    "logical_or": np.logical_or,
    "logical_xor": np.logical_xor,
}


def _bool_args_rel(types, attrs):
    out = broadcast_bool_rel(types, attrs)
    if tensor(types[0]).dtype != "bool":
        fail(f"expected bool tensors, found {types[0]}")
    return out


for _name, _fn in _BINARY.items():
    register_op(_name, rel=broadcast_rel, ref=_fn, pattern=OpPattern.BROADCAST,
                num_inputs=2, arg_names=("lhs", "rhs"))
for _name, _fn in _COMPARE.items():
    register_op(_name, rel=broadcast_bool_rel, ref=_binary(_fn), pattern=OpPattern.BROADCAST,
                num_inputs=2, arg_names=("lhs", "rhs"))
for _name, _fn in _LOGICAL.items():
    register_op(_name, rel=_bool_args_rel, ref=_binary(_fn), pattern=OpPattern.BROADCAST,
                num_inputs=2, arg_names=("lhs", "rhs"))


# ---------------------------------------------------------------- unary


def _sigmoid(x):
    with np.errstate(over="ignore"):
        return (1 / (1 + np.exp(-x))).astype(x.dtype)


_erf_scalar = np.frompyfunc(math.erf, 1, 1)


def _erf(x):
    try:  # vectorised when scipy is around; math.erf per element (exact, slower) if not
        from scipy.special import erf
    except ImportError:
        return np.asarray(_erf_scalar(x)).astype(x.dtype)
    return np.asarray(erf(x)).astype(x.dtype)


def _rsqrt(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        return (1 / np.sqrt(x)).astype(x.dtype)


def _errstate(fn):
    def wrapped(x):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return fn(x)

    return wrapped


_FLOAT_UNARY = {
    "exp": np.exp,
    "log": _errstate(np.log),
    "log2": _errstate(np.log2),
    "log10": _errstate(np.log10),
    "sqrt": _errstate(np.sqrt),
    "rsqrt": _rsqrt,
    "tanh": np.tanh,
    "sigmoid": _sigmoid,
    "erf": _erf,
    "floor": np.floor,
    "ceil": np.ceil,
    "round": np.round,  # half to even, like C's nearbyint and ONNX Round
    "trunc": np.trunc,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "sinh": _errstate(np.sinh),
    "cosh": _errstate(np.cosh),
    "asin": _errstate(np.arcsin),
    "acos": _errstate(np.arccos),
    "atan": np.arctan,
    "asinh": np.arcsinh,
    "acosh": _errstate(np.arccosh),
    "atanh": _errstate(np.arctanh),
}

_ANY_UNARY = {
    "abs": np.abs,
    "negative": np.negative,
    "sign": np.sign,
    "copy": np.copy,
}


def _unary(fn):
    return lambda x, attrs=None: fn(x)


for _name, _fn in _FLOAT_UNARY.items():
    register_op(_name, rel=float_identity_rel, ref=_unary(_fn), pattern=OpPattern.ELEMWISE,
                num_inputs=1)
for _name, _fn in _ANY_UNARY.items():
    register_op(_name, rel=identity_rel, ref=_unary(_fn), pattern=OpPattern.ELEMWISE,
                num_inputs=1)


def _logical_not_rel(types, attrs):
    t = tensor(types[0])
    if t.dtype != "bool":
        fail(f"expected a bool tensor, found {t}")
    return t


register_op("logical_not", rel=_logical_not_rel, ref=_unary(np.logical_not),
            pattern=OpPattern.ELEMWISE, num_inputs=1)


def _float_bool_rel(types, attrs):
    require_float(tensor(types[0]))
    return bool_identity_rel(types, attrs)


register_op("isnan", rel=_float_bool_rel, ref=_unary(np.isnan), pattern=OpPattern.ELEMWISE,
            num_inputs=1)
register_op("isinf", rel=_float_bool_rel, ref=_unary(np.isinf), pattern=OpPattern.ELEMWISE,
            num_inputs=1)
register_op("isfinite", rel=_float_bool_rel, ref=_unary(np.isfinite),
            pattern=OpPattern.ELEMWISE, num_inputs=1)


# ---------------------------------------------------------------- Relay-style constructors


def binary_constructor(name):
    """Relay's Python constructor ``name(lhs, rhs)`` for a registered binary op."""
    def f(lhs, rhs):
        return call(name, [lhs, rhs])

    f.__name__ = name
    f.__doc__ = f"Elementwise ``{name}`` with numpy broadcasting."
    return f


def _make_unary(name):
    def f(data):
        return call(name, [data])

    f.__name__ = name
    f.__doc__ = f"Elementwise ``{name}``."
    return f


_EXPORTS = {n: binary_constructor(n) for n in (*_BINARY, *_COMPARE, *_LOGICAL)}
_EXPORTS.update({n: _make_unary(n) for n in (*_FLOAT_UNARY, *_ANY_UNARY, "logical_not",
                                             "isnan", "isinf", "isfinite")})
globals().update(_EXPORTS)
__all__ = sorted(_EXPORTS)
