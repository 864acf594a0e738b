"""Gradients of elementwise and broadcast ops (``op/tensor.py``)."""

from __future__ import annotations

import math

from ....op import tensor as _e
from ....op import transform as _t
from . import GRADIENT
from ._util import collapse_like, scalar


def _binary(fn):
    def rule(call, out, g):
        a, b = call.args
        ga, gb = fn(a, b, out, g)
        return [collapse_like(ga, call, a), collapse_like(gb, call, b)]

    return rule


_BINARY = {
    "add": lambda a, b, out, g: (g, g),
    "subtract": lambda a, b, out, g: (g, _e.negative(g)),
    "multiply": lambda a, b, out, g: (g * b, g * a),
    "divide": lambda a, b, out, g: (g / b, _e.negative(g * a / (b * b))),
    "power": lambda a, b, out, g: (g * b * _e.power(a, b - scalar(1.0, a)),
                                   g * out * _e.log(a)),
    "maximum": lambda a, b, out, g: (_t.where(_e.greater_equal(a, b), g, scalar(0.0, a)),
                                     _t.where(_e.greater_equal(a, b), scalar(0.0, a), g)),
    "minimum": lambda a, b, out, g: (_t.where(_e.less_equal(a, b), g, scalar(0.0, a)),
                                     _t.where(_e.less_equal(a, b), scalar(0.0, a), g)),
    "mod": lambda a, b, out, g: (g, _e.negative(g * _e.trunc(a / b))),
    "floor_mod": lambda a, b, out, g: (g, _e.negative(g * _e.floor(a / b))),
}

for _name, _fn in _BINARY.items():
    GRADIENT.register(_name)(_binary(_fn))


def _unary(fn):
    return lambda call, out, g: [fn(call.args[0], out, g)]


_UNARY = {
    "exp": lambda x, out, g: g * out,
    "log": lambda x, out, g: g / x,
    "log2": lambda x, out, g: g / (x * scalar(math.log(2.0), x)),
    "log10": lambda x, out, g: g / (x * scalar(math.log(10.0), x)),
    "sqrt": lambda x, out, g: g * scalar(0.5, x) / out,
    "rsqrt": lambda x, out, g: g * scalar(-0.5, x) * out / x,
    "tanh": lambda x, out, g: g * (scalar(1.0, x) - out * out),
    "sigmoid": lambda x, out, g: g * out * (scalar(1.0, x) - out),
    "erf": lambda x, out, g: g * scalar(2.0 / math.sqrt(math.pi), x) * _e.exp(
        _e.negative(x * x)),
    "sin": lambda x, out, g: g * _e.cos(x),
    "cos": lambda x, out, g: _e.negative(g * _e.sin(x)),
    "tan": lambda x, out, g: g * (scalar(1.0, x) + out * out),
    "sinh": lambda x, out, g: g * _e.cosh(x),
    "cosh": lambda x, out, g: g * _e.sinh(x),
    "asin": lambda x, out, g: g * _e.rsqrt(scalar(1.0, x) - x * x),
    "acos": lambda x, out, g: _e.negative(g * _e.rsqrt(scalar(1.0, x) - x * x)),
    "atan": lambda x, out, g: g / (scalar(1.0, x) + x * x),
    "asinh": lambda x, out, g: g * _e.rsqrt(x * x + scalar(1.0, x)),
    "acosh": lambda x, out, g: g * _e.rsqrt(x * x - scalar(1.0, x)),
    "atanh": lambda x, out, g: g / (scalar(1.0, x) - x * x),
    "abs": lambda x, out, g: g * _e.sign(x),
    "negative": lambda x, out, g: _e.negative(g),
    "copy": lambda x, out, g: g,
}

for _name, _fn in _UNARY.items():
    GRADIENT.register(_name)(_unary(_fn))
