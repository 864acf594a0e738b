"""What ``FakeQuantizationToInteger``'s rules read below a ``qnn.quantize``: the
dequantized inputs, seen through ops that only move or select elements.

``int_input(e)`` gives, for a float expression that is a per-tensor
``qnn.dequantize(q, scale, zp)`` under a chain of such ops (a transpose then a reshape,
a split's field, a max pool...), the same chain over the integers ``q`` and the
parameters they are in: a rule can then work on ``q`` as if the dequantize fed it
directly. Ops that move elements (``_MOVING``) commute with any elementwise map of the
values; ops that pick or mix them by order or by linear weights (``_ORDERED``: max
pools and reductions, ``topk``, resizes) commute with an increasing affine map only,
that is a dequantize with positive scales. ``nn.relu`` at the bottom of a chain is a
maximum with the zero point, in the same parameters.

``fake_quantized_ops(expr)`` counts the float ops of the regions the pass looks at:
everything between a ``qnn.quantize`` and the ``qnn.dequantize`` calls (and
constants) it reads (Relay's ``list_fake_quantized_op_freqs``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import numpy as np

from ..ir.expr import Call, Constant, Expr, Op, Tuple, TupleGetItem
from ..ir.functor import post_order
from ..ir.op import call
from ..ir.types import is_float

_MOVING = frozenset({
    "reshape", "nn.batch_flatten", "transpose", "squeeze", "expand_dims", "layout_transform",
    "strided_slice", "take", "nn.depth_to_space", "nn.space_to_depth", "reverse", "tile",
    "broadcast_to", "repeat",
})
_ORDERED = frozenset({"nn.max_pool2d", "max", "min", "topk", "image.resize2d", "nn.pad"})


def callee(e: Expr) -> str | None:
    return e.op.name if type(e) is Call and type(e.op) is Op else None


def scalar(e: Expr) -> bool:
    t = e.checked_type
    return t.ndim == 0 or (t.ndim == 1 and t.shape[0] == 1)


class Deq:
    """A matched ``qnn.dequantize(data, scale, zero_point)``."""

    def __init__(self, e: Expr):
        self.call = e
        self.data, self.scale, self.zp = e.args
        self.axis = e.attrs.axis
        self.per_tensor = scalar(self.scale) and scalar(self.zp)
        self.dtype = self.data.checked_type.dtype

    @property
    def positive(self) -> bool:
        """Whether its scales are constants > 0 (the map is increasing)."""
        return isinstance(self.scale, Constant) and bool(np.all(self.scale.data > 0))

    @property
    def constant(self) -> bool:
        return isinstance(self.scale, Constant) and isinstance(self.zp, Constant)


def deq(e: Expr, per_tensor: bool = True) -> Deq | None:
    if callee(e) != "qnn.dequantize":
        return None
    d = Deq(e)
    return d if d.per_tensor or not per_tensor else None


# a layer rebuilds one op of a chain over new integers (None: it cannot)
Layer = Callable[[Expr, Deq], "Expr | None"]


def walk(e: Expr) -> tuple[Expr, list[Layer], bool]:
    """``e`` as ``layers`` (innermost first) over a base expression, and whether a layer
    needs an increasing map (``_ORDERED``)."""
    layers: list[Layer] = []
    ordered = False
    while True:
        if type(e) is TupleGetItem and callee(e.tuple_value) == "split":
            split = e.tuple_value
            layers.append(lambda q, d, s=split, i=e.index: TupleGetItem(
                Call(s.op, (q,), s.attrs), i))
            e = split.args[0]
            continue
        name = callee(e)
        if name not in _MOVING and name not in _ORDERED or not e.args:
            break
        if name == "topk" and e.attrs.ret_type != "values":
            break
        rest = e.args[1:]
        if name == "nn.pad":
            layers.append(lambda q, d, c=e: _pad(c, q, d))
        elif any(is_float(a.checked_type.dtype) for a in rest):
            break  # a float operand beside the data: not a move of the data alone
        else:
            layers.append(lambda q, d, c=e: Call(c.op, (q, *c.args[1:]), c.attrs))
        ordered = ordered or name in _ORDERED
        e = e.args[0]
    return e, layers[::-1], ordered


def _pad(e: Call, q: Expr, d: Deq) -> Expr | None:
    """``nn.pad`` of the integers: a constant float pad value becomes the integer it
    quantizes to in ``d``'s parameters (saturated: a -3.4e38 pads with the minimum)."""
    value = e.args[1]
    if value.checked_type.dtype == d.dtype:
        return Call(e.op, (q, value), e.attrs)
    if not (isinstance(value, Constant) and d.constant and d.per_tensor):
        return None
    info = np.iinfo(d.dtype)
    scale = float(np.reshape(d.scale.data, -1)[0])
    zp = int(np.reshape(d.zp.data, -1)[0])
    with np.errstate(over="ignore", invalid="ignore"):
        v = np.round(np.float64(value.data) / scale) + zp
    v = np.clip(np.nan_to_num(v, nan=zp), info.min, info.max)
    return Call(e.op, (q, Constant(np.array(v, d.dtype))), e.attrs)


def int_input(e: Expr) -> tuple[Expr, Deq] | None:
    """``(integers, their dequantize)`` for ``e`` (see the module docstring), or None."""
    base, layers, ordered = walk(e)
    if callee(base) == "nn.relu":
        d = deq(base.args[0])
        if d is None or d.dtype not in ("int8", "uint8"):
            return None
        q = call("maximum", [d.data, call("cast", [d.zp], dtype=d.dtype)])
    else:
        d = deq(base)
        if d is None:
            return None
        q = d.data
    if ordered and not d.positive:
        return None
    for layer in layers:
        q = layer(q, d)
        if q is None:
            return None
    return q, d


def fake_quantized_ops(expr: Expr) -> Counter:
    """Op name → how many calls sit in a fake-quantized region of ``expr``: one that
    reaches only dequantizes and constants from a quantize (a region that reads a float
    variable or a call result from elsewhere is not one). Each call counts once."""
    counts: Counter = Counter()
    counted: set = set()
    for q in post_order(expr):
        if callee(q) != "qnn.quantize":
            continue
        region, seen, stack, whole = [], set(), [q.args[0]], True
        while stack and whole:
            e = stack.pop()
            if e in seen or callee(e) == "qnn.dequantize" or isinstance(e, Constant):
                continue
            seen.add(e)
            if type(e) is Tuple:
                stack.extend(e.fields)
            elif type(e) is TupleGetItem:
                stack.append(e.tuple_value)
            elif callee(e) is None or callee(e) == "qnn.quantize":
                whole = False  # a variable, a function call or another region's output
            else:
                region.append(e)
                stack.extend(e.args)
        for e in region if whole else ():
            if e not in counted:
                counted.add(e)
                counts[e.op.name] += 1
    return counts


__all__ = ["Deq", "callee", "deq", "fake_quantized_ops", "int_input", "scalar", "walk"]
