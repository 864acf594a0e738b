"""Where the quantizer puts its quantize / dequantize pairs.

Static: every convolution (NCHW, one group or depthwise) and dense / matmul layer with
a constant weight is an *anchor*. Its chain is the anchor, a constant bias add and a
clamp at zero (``relu``, or ReLU6 as ``clip(0, c)`` or ``minimum(maximum(x, 0), c)``, the
form ONNX's Clip imports as); the data input gets a quantize / dequantize pair in its
calibrated uint8 parameters (none when it already has that pair: the previous chain's
output), the weight is stored int8 (per output channel, symmetric), the bias int32 in the
product's scale, and the chain's output gets a pair whose range is the clamped one — so
the clamp is the uint8 saturation at zero point 0 (and at the calibrated top, which the
clamp's bound contains) and disappears, as ONNX Runtime does it. A
residual ``add`` of two chain outputs gets a pair too. The result is the QDQ form that
``FakeQuantizationToInteger`` turns into integer QNN ops at build time. Pools and reshapes
of a quantized value get a pair in their input's parameters, so they run on uint8 too.

Dynamic: dense / matmul layers with a constant weight quantize their data at run time
(uint8, the range of each call: DynamicQuantizeLinear's rule) and multiply by the int8
weight in ``qnn.dense``; the int32 result is dequantized by ``data scale * weight scale``.
"""

from __future__ import annotations

import numpy as np

from ..ir.expr import Call, Constant, Expr, Op, const
from ..ir.functor import ExprMutator, ExprVisitor
from ..ir.op import call
from .calibrate import activation_params, weight_params

# float ops between quantized ones whose output lies in their input's range: they get
# a quantize pair in the input's parameters, so that they run on uint8 too
_KEEPS_RANGE = frozenset({"nn.max_pool2d", "nn.avg_pool2d", "nn.global_avg_pool2d",
                          "reshape", "nn.batch_flatten", "transpose", "squeeze"})


def _name(e: Expr) -> str | None:
    return e.op.name if type(e) is Call and type(e.op) is Op else None


def _anchor_axis(e: Expr) -> int | None:
    """The weight's output-channel axis if ``e`` is a quantizable product, else None."""
    name = _name(e)
    if name is None or len(e.args) < 2 or not isinstance(e.args[1], Constant):
        return None
    if e.args[1].data.dtype != np.float32 or e.args[0].checked_type.dtype != "float32":
        return None
    a = e.attrs
    if name == "nn.conv2d" and a.data_layout == "NCHW" and a.kernel_layout == "OIHW" and (
            not a.out_dtype) and (a.groups == 1 or _depthwise(e)):
        return 0
    if name == "nn.dense" and not a.out_dtype:
        return 0
    if name == "nn.matmul" and not a.transpose_a and not a.out_dtype and e.args[1].data.ndim == 2:
        return 0 if a.transpose_b else 1
    return None


def _depthwise(conv: Call) -> bool:
    """One filter per channel (the int8 depthwise routine's case), not other groupings."""
    channels = conv.args[0].checked_type.shape[1]
    return conv.attrs.groups == channels and conv.args[1].data.shape[:2] == (channels, 1)


def _zero_clamp(e: Expr, x: Expr) -> bool:
    """Whether ``e`` clamps ``x`` below at 0 and at most above (relu, ReLU6): in the
    quantized range [0, hi] of its output it is the identity."""
    name = _name(e)
    if name == "nn.relu":
        return True
    if name == "clip":
        return e.attrs.a_min == 0.0 and e.attrs.a_max > 0.0
    if name == "maximum":
        other = e.args[1] if e.args[0] is x else e.args[0]
        return isinstance(other, Constant) and other.data.size == 1 and other.data.item() == 0
    return False


def _upper_clamp(e: Expr, x: Expr) -> bool:
    """``minimum(x, c)`` with a scalar ``c > 0`` (ReLU6's top after its maximum)."""
    if _name(e) != "minimum":
        return False
    other = e.args[1] if e.args[0] is x else e.args[0]
    return isinstance(other, Constant) and other.data.size == 1 and other.data.item() > 0


class _Consumers(ExprVisitor):
    def __init__(self):
        super().__init__()
        self.users: dict[Expr, list] = {}
        self.calls: list[Call] = []

    def visit_call(self, c):
        super().visit_call(c)
        self.calls.append(c)
        for a in c.args:
            self.users.setdefault(a, []).append(c)


class Chain:
    def __init__(self, anchor: Call, axis: int):
        self.anchor, self.axis = anchor, axis
        self.bias: np.ndarray | None = None
        self.end: Expr = anchor
        self.relu = False


def _bias_of(anchor: Call, add: Call) -> np.ndarray | None:
    """The 1-D bias of ``add(anchor, constant)`` if it is one value per output channel."""
    other = add.args[1] if add.args[0] is anchor else add.args[0]
    if not isinstance(other, Constant) or other.data.dtype != np.float32:
        return None
    channels = anchor.checked_type.shape[1 if _name(anchor) == "nn.conv2d" else -1]
    b = other.data
    if b.size != channels:
        return None
    if _name(anchor) == "nn.conv2d":
        ok = b.ndim <= 4 and b.shape[-3:] in ((channels, 1, 1),) or b.shape == (1, channels, 1, 1)
    else:
        ok = b.shape in ((channels,), (1, channels))
    return b.reshape(-1) if ok else None


def plan_static(fn) -> tuple[list[Chain], list[Call]]:
    """The anchors' chains and the residual adds of ``fn``'s body."""
    v = _Consumers()
    v.visit(fn.body)

    def only_user(e):
        us = v.users.get(e, [])
        return us[0] if len(us) == 1 else None

    chains = []
    for c in v.calls:
        axis = _anchor_axis(c)
        if axis is None:
            continue
        ch = Chain(c, axis)
        u = only_user(c)
        if _name(u) == "add":
            b = _bias_of(c, u)
            if b is not None:
                ch.bias, ch.end = b, u
                u = only_user(u)
        if u is not None and _zero_clamp(u, ch.end):
            ch.relu, ch.end = True, u
            u = only_user(u)
            if _name(ch.end) == "maximum" and u is not None and _upper_clamp(u, ch.end):
                ch.end = u
        chains.append(ch)
    ends = {ch.end for ch in chains}
    adds = []
    for c in v.calls:
        if _name(c) == "add" and all(a in ends or a in set(adds) for a in c.args):
            u = only_user(c)
            adds.append(u if _name(u) == "nn.relu" else c)
    return chains, adds


def _qdq(x: Expr, scale, zp: int) -> Expr:
    if _name(x) == "qnn.dequantize" and _name(x.args[0]) == "qnn.quantize":
        s, z = x.args[1:]
        if isinstance(s, Constant) and isinstance(z, Constant) and (
                s.data.item() == np.float32(scale) and z.data.item() == zp):
            return x  # already in these parameters (the previous chain's output)
    q = call("qnn.quantize", [x, const(np.float32(scale)), const(zp)], out_dtype="uint8")
    return call("qnn.dequantize", [q, const(np.float32(scale)), const(zp)])


class StaticRewriter(ExprMutator):
    """Rewrites the chains' ends and the residual adds with their quantize pairs;
    ``ranges`` maps a calibrated expression to its ``(lo, hi)``."""

    def __init__(self, chains, adds, ranges: dict):
        super().__init__()
        self.by_end = {ch.end: ch for ch in chains}
        self.adds = set(adds)
        self.ranges = ranges

    def visit_call(self, c):
        if c in self.by_end:
            return self._chain(self.by_end[c])
        if c in self.adds:
            add = c.args[0] if _name(c) == "nn.relu" else c
            lhs, rhs = (self.visit(a) for a in add.args)
            s, z = activation_params(*self.ranges[c])
            return _qdq(call("add", [lhs, rhs]), s, z)
        new = super().visit_call(c)
        if _name(c) in _KEEPS_RANGE and new.args and _name(new.args[0]) == "qnn.dequantize":
            _, scale, zp = new.args[0].args  # pooling / reshaping stays in the input's range
            return call("qnn.dequantize", [call("qnn.quantize", [new, scale, zp],
                                                out_dtype="uint8"), scale, zp])
        return new

    def _chain(self, ch: Chain) -> Expr:
        a = ch.anchor
        x = self.visit(a.args[0])
        sx, zx = activation_params(*self.ranges[a.args[0]])
        sw, wq = weight_params(a.args[1].data, ch.axis)
        w = call("qnn.dequantize", [const(wq), const(sw), const(np.zeros(sw.shape, np.int32))],
                 axis=ch.axis)
        y = Call(a.op, (_qdq(x, sx, zx), w), a.attrs)
        if ch.bias is not None:
            sb = (np.float32(sx) * sw).astype(np.float32)
            bq = np.rint(ch.bias / sb).astype(np.int32)
            b = call("qnn.dequantize", [const(bq), const(sb), const(np.zeros(bq.shape, np.int32))],
                     axis=0)
            y = (call("nn.bias_add", [y, b], axis=1) if _name(a) == "nn.conv2d"
                 else call("add", [y, b]))
        s, z = activation_params(*self.ranges[ch.end])
        return _qdq(y, s, z)


class DynamicRewriter(ExprMutator):
    """Dense / matmul layers with constant weights as run-time-quantized ``qnn.dense``."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def visit_call(self, c):
        axis = _anchor_axis(c)
        if axis is None or _name(c) == "nn.conv2d":
            return super().visit_call(c)
        self.count += 1
        x = self.visit(c.args[0])
        w = c.args[1].data if axis == 0 else c.args[1].data.T
        sw, wq = weight_params(w, 0)
        zero = const(np.float32(0))
        hi = call("maximum", [call("max", [x]), zero])
        lo = call("minimum", [call("min", [x]), zero])
        span = call("subtract", [hi, lo])
        span = call("where", [call("equal", [span, zero]), const(np.float32(255)), span])
        scale = call("divide", [span, const(np.float32(255))])
        zp = call("cast", [call("clip", [call("round", [call("negative", [
            call("divide", [lo, scale])])])], a_min=0.0, a_max=255.0)], dtype="int32")
        xq = call("qnn.quantize", [x, scale, zp], out_dtype="uint8")
        acc = call("qnn.dense", [xq, const(wq), zp, const(np.zeros(sw.shape, np.int32)), scale,
                                 const(sw)])
        return call("qnn.dequantize", [acc, call("multiply", [scale, const(sw)]), const(0)],
                    axis=-1)
