"""``FakeQuantizationToInteger``'s rule for elementwise float functions of one quantized
tensor: ``quantize(f(dequantize(q), constants...))`` with ``q`` int8 / uint8 is a
function of ``q`` alone, which takes 256 values at most; the rule computes them once
(a table) and the integer graph reads the table (``take``).

The table is computed with the ops' numpy references (dequantize, ``f``, quantize),
which are what the reference interpreter runs on the float graph, so the integers are
the float-QDQ graph's exactly there (a C float kernel may round a last bit differently
near a rounding boundary: one unit at most). It covers sigmoid, tanh, exp, erf, log,
sqrt, rsqrt, abs, clip, leaky_relu and binary ops with a scalar constant
(``add(dequantize(q), 1.0)``), where TVM has an op or a rewrite for each. Ops that
move elements may sit between the function and the quantize (``walk``): the table
commutes with them.
"""

from __future__ import annotations

import numpy as np

from ..ir.expr import Constant, Expr
from ..ir.op import OpPattern, call
from ..ir.types import is_float
from .fake_quantization_inputs import callee, deq, scalar, walk
from .rewrite import MatchResult

_PATTERNS = (OpPattern.ELEMWISE, OpPattern.BROADCAST)


def _one_quantized_input(e: Expr):
    """The per-tensor constant dequantize among ``e``'s arguments when every other one is
    a scalar constant, else None."""
    if callee(e) is None or callee(e).startswith("qnn.") or e.op.pattern not in _PATTERNS:
        return None
    found = [deq(a) for a in e.args if callee(a) == "qnn.dequantize"]
    others = [a for a in e.args if callee(a) != "qnn.dequantize"]
    if len(found) != 1 or found[0] is None or not found[0].constant:
        return None
    if not all(isinstance(a, Constant) and a.data.size == 1 for a in others):
        return None
    d = found[0]
    if d.dtype not in ("int8", "uint8") or e.checked_type.shape != d.data.checked_type.shape:
        return None
    return d


def table_rule(m: MatchResult) -> Expr | None:
    base, layers, ordered = walk(m["e"])
    d = _one_quantized_input(base)
    _, s, z = m.node.args
    if d is None or ordered or not (isinstance(s, Constant) and isinstance(z, Constant)):
        return None  # an order-using op after f: f need not be increasing
    if not (scalar(s) and scalar(z)) or not is_float(base.checked_type.dtype):
        return None
    info = np.iinfo(d.dtype)
    values = np.arange(info.min, info.max + 1).astype(d.dtype)
    with np.errstate(all="ignore"):  # log(0), sqrt(-1): the float graph meets them too
        x = d.call.op.reference(values, d.scale.data, d.zp.data, d.call.attrs)
        args = [x if a is d.call else a.data.reshape(()) for a in base.args]
        y = np.asarray(base.op.reference(*args, base.attrs), dtype=base.checked_type.dtype)
        table = m.node.op.reference(y, s.data, z.data, m.node.attrs)
    index = call("cast", [d.data], dtype="int32")
    if info.min:
        index = call("add", [index, Constant(np.array(-info.min, "int32"))])
    q = call("take", [Constant(np.ascontiguousarray(table)), index], axis=0, mode="clip")
    for layer in layers:
        q = layer(q, d)  # moves only: the parameters no longer matter to them
        if q is None:
            return None
    return q


__all__ = ["table_rule"]
