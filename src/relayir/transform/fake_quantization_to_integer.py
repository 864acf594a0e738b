"""``FakeQuantizationToInteger``: float ops between ``qnn.dequantize`` and
``qnn.quantize`` (the QDQ form that ONNX Runtime's ``quantize_static`` writes and
relayir's own quantizer emits) become integer QNN ops (Relay's pass of that name).

Each rule is rooted at a ``qnn.quantize(f(dequantize(a), ...), s, z)``:

- ``conv2d`` / ``dense`` / ``matmul`` (+ a bias dequantized from int32 with the scale
  ``input_scale * weight_scale``) → ``qnn.conv2d`` / ``qnn.dense`` (+ the int32 bias)
  → ``qnn.requantize``: what ONNX Runtime fuses into QLinearConv / QLinearMatMul, with
  its arithmetic, so the answers are ONNX Runtime's;
- ``add`` → ``qnn.add``; ``concatenate`` → ``qnn.concatenate``; ``avg_pool2d`` /
  ``global_avg_pool2d`` → ``qnn.avg_pool2d``;
- ops that commute with a per-tensor affine map (max pooling, reshapes, transposes,
  ``relu`` as a maximum with the zero point) run on the integers, followed by a
  ``qnn.requantize`` when the scale or zero point changes;
- ``quantize(dequantize(q))`` is ``q`` (the same parameters) or a ``requantize``.

A ``dequantize`` whose value is used only by rewritten ops becomes dead, so
activations stay 8-bit between quantized ops. Patterns that do not fit are left in
float. First in the pipeline, at every opt level, before ``CanonicalizeQNN``.
"""

from __future__ import annotations

import numpy as np

from ..ir.expr import Call, Constant, Expr, Op, Tuple
from ..ir.module import IRModule
from ..ir.op import call
from .canonicalize_ops import same_type_or_none
from .pass_infra import Pass, PassContext, module_pass, register_pass
from .rewrite import MatchResult, Rule, is_op, rewrite_module, wildcard

_COMMUTING = frozenset({
    "nn.max_pool2d", "reshape", "nn.batch_flatten", "transpose", "squeeze", "expand_dims",
    "layout_transform", "strided_slice", "nn.pad",
})


def _callee(e: Expr) -> str | None:
    return e.op.name if type(e) is Call and type(e.op) is Op else None


def _scalar(e: Expr) -> bool:
    t = e.checked_type
    return t.ndim == 0 or (t.ndim == 1 and t.shape[0] == 1)


class _Deq:
    """A matched ``qnn.dequantize(data, scale, zero_point)``."""

    def __init__(self, e: Expr):
        self.data, self.scale, self.zp = e.args
        self.axis = e.attrs.axis
        self.per_tensor = _scalar(self.scale) and _scalar(self.zp)
        self.dtype = self.data.checked_type.dtype


def _deq(e: Expr, per_tensor: bool = True) -> _Deq | None:
    if _callee(e) != "qnn.dequantize":
        return None
    d = _Deq(e)
    return d if d.per_tensor or not per_tensor else None


def _same_params(a_scale: Expr, a_zp: Expr, b_scale: Expr, b_zp: Expr) -> bool:
    consts = all(isinstance(e, Constant) for e in (a_scale, a_zp, b_scale, b_zp))
    if consts:
        return (np.array_equal(a_scale.data, b_scale.data)
                and np.array_equal(a_zp.data, b_zp.data))
    return a_scale is b_scale and a_zp is b_zp


def _requantize_to(q: Expr, d: _Deq, m: MatchResult) -> Expr:
    """``q`` (integers of ``d``'s dtype and parameters) in the quantize's parameters."""
    _, s, z = m.node.args
    out = m.node.attrs.out_dtype
    if _same_params(d.scale, d.zp, s, z) and d.dtype == out:
        return q
    return call("qnn.requantize", [q, d.scale, d.zp, s, z], axis=-1, out_dtype=out)


def _bias(e: Expr, channels_axis: int):
    """``(float op, int32 bias or None)`` from ``bias_add(op, deq(b))`` /
    ``add(op, deq(b))`` or a bare op."""
    name = _callee(e)
    if name == "nn.bias_add" and e.attrs.axis in (channels_axis, channels_axis
                                                 + e.checked_type.ndim):
        b = _deq(e.args[1], per_tensor=False)
        return (e.args[0], b) if b is not None and b.dtype == "int32" else (None, None)
    if name == "add" and channels_axis == -1:
        b = _deq(e.args[1], per_tensor=False)
        if b is not None and b.dtype == "int32" and b.data.checked_type.ndim == 1:
            return e.args[0], b
        return None, None
    return e, None


def _bias_fits(b, x: _Deq, w: _Deq) -> bool:
    """ONNX Runtime's quantizer stores the bias as int32 in the scale ``x_scale *
    w_scale`` with a zero point 0; that is what the integer form adds."""
    consts = [b.scale, b.zp, x.scale, w.scale]
    if not all(isinstance(c, Constant) for c in consts):
        return False
    want = x.scale.data.astype(np.float32) * w.scale.data.astype(np.float32)
    return (not b.zp.data.any() and np.allclose(b.scale.data, want, rtol=1e-6, atol=0)
            and b.scale.data.size in (1, np.size(want)))


def _product(m: MatchResult) -> Expr | None:
    e = m["e"]
    axis = 1 if _callee(e) in ("nn.conv2d", "nn.bias_add") else -1
    op, b = _bias(e, axis)
    name = _callee(op) if op is not None else None
    if name not in ("nn.conv2d", "nn.dense", "nn.matmul"):
        return None
    x, w = _deq(op.args[0]), _deq(op.args[1], per_tensor=False)
    if x is None or w is None or x.dtype not in ("int8", "uint8") or w.dtype not in (
            "int8", "uint8"):
        return None
    attrs = op.attrs
    wq, w_axis = w.data, w.axis % w.data.checked_type.ndim
    if name == "nn.conv2d":
        if attrs.data_layout != "NCHW" or attrs.out_dtype or (
                not w.per_tensor and w_axis != attrs.kernel_layout.index("O")):
            return None
        fields = {**dict(attrs.items()), "out_dtype": "int32"}
        acc = call("qnn.conv2d", [x.data, wq, x.zp, w.zp, x.scale, w.scale], **fields)
    else:
        transposed = name == "nn.dense" or attrs.transpose_b
        if name == "nn.matmul" and (attrs.transpose_a or attrs.out_dtype):
            return None
        if not w.per_tensor and w_axis != (0 if transposed else 1):
            return None
        if not transposed:
            wq = call("transpose", [wq], axes=(1, 0))
        acc = call("qnn.dense", [x.data, wq, x.zp, w.zp, x.scale, w.scale])
    if b is not None:
        if not _bias_fits(b, x, w):
            return None
        acc = (call("nn.bias_add", [acc, b.data], axis=1) if name == "nn.conv2d"
               else call("add", [acc, b.data]))
    _, s, z = m.node.args
    scale = call("multiply", [x.scale, w.scale])
    return call("qnn.requantize", [acc, scale, Constant(np.array(0, "int32")), s, z],
                axis=1 if name == "nn.conv2d" else -1, out_dtype=m.node.attrs.out_dtype)


def _add(m: MatchResult) -> Expr | None:
    e = m["e"]
    if _callee(e) != "add":
        return None
    a, b = _deq(e.args[0]), _deq(e.args[1])
    _, s, z = m.node.args
    if a is None or b is None or a.dtype != b.dtype or a.dtype != m.node.attrs.out_dtype:
        return None
    if not (_scalar(s) and _scalar(z)):
        return None
    return call("qnn.add", [a.data, b.data, a.scale, a.zp, b.scale, b.zp, s, z])


def _commuting(m: MatchResult) -> Expr | None:
    e = m["e"]
    name = _callee(e)
    if name == "qnn.dequantize":
        d = _deq(e, per_tensor=False)
        if d.per_tensor:
            return _requantize_to(d.data, d, m)
        _, s, z = m.node.args
        if _same_params(d.scale, d.zp, s, z) and d.dtype == m.node.attrs.out_dtype:
            return d.data
        return None
    if name == "nn.relu":
        d = _deq(e.args[0])
        if d is None or d.dtype not in ("int8", "uint8"):
            return None
        zq = call("cast", [d.zp], dtype=d.dtype)
        return _requantize_to(call("maximum", [d.data, zq]), d, m)
    if name not in _COMMUTING or not e.args:
        return None
    d = _deq(e.args[0])
    if d is None or any(_deq(a) is None and _callee(a) == "qnn.dequantize" for a in e.args[1:]):
        return None
    if name == "nn.pad" and _callee(e.args[1]) is None:
        return None  # a float pad value: leave it
    q = Call(e.op, (d.data, *e.args[1:]), e.attrs)
    return _requantize_to(q, d, m)


def _avg_pool(m: MatchResult) -> Expr | None:
    e = m["e"]
    name = _callee(e)
    if name not in ("nn.avg_pool2d", "nn.global_avg_pool2d"):
        return None
    d = _deq(e.args[0])
    if d is None or d.dtype != m.node.attrs.out_dtype:
        return None
    _, s, z = m.node.args
    if name == "nn.global_avg_pool2d":
        if e.attrs.layout != "NCHW":
            return None
        h, w = d.data.checked_type.shape[2:]
        if not (isinstance(h, int) and isinstance(w, int)):
            return None
        fields = {"pool_size": (h, w)}
    else:
        fields = dict(e.attrs.items())
    return call("qnn.avg_pool2d", [d.data, d.scale, d.zp, s, z], **fields)


def _concatenate(m: MatchResult) -> Expr | None:
    e = m["e"]
    if _callee(e) != "concatenate" or not isinstance(e.args[0], Tuple):
        return None
    ds = [_deq(f) for f in e.args[0].fields]
    out = m.node.attrs.out_dtype
    if any(d is None or d.dtype != out for d in ds):
        return None
    _, s, z = m.node.args
    return call("qnn.concatenate", [Tuple([d.data for d in ds]), Tuple([d.scale for d in ds]),
                                    Tuple([d.zp for d in ds]), s, z], axis=e.attrs.axis)


def _typed(fn):
    def rule(m: MatchResult) -> Expr | None:
        new = fn(m)
        return None if new is None else same_type_or_none(new, m.node)

    return rule


_ROOT = is_op("qnn.quantize")(wildcard("e"), wildcard("s"), wildcard("z"))
RULES = [Rule(name, _ROOT, _typed(fn)) for name, fn in (
    ("qdq-product", _product), ("qdq-add", _add), ("qdq-commuting", _commuting),
    ("qdq-avg-pool", _avg_pool), ("qdq-concatenate", _concatenate))]


@module_pass(opt_level=0, name="FakeQuantizationToInteger")
def _fake_quantization_to_integer(mod: IRModule, ctx: PassContext) -> IRModule:
    debug = bool(ctx.config.get("relay.FakeQuantizationToInteger.debug"))
    return rewrite_module(mod, RULES, "FakeQuantizationToInteger", debug)


def FakeQuantizationToInteger() -> Pass:  # noqa: N802  (Relay's name)
    """Rewrite dequantize → float op → quantize chains as integer QNN ops."""
    return _fake_quantization_to_integer


register_pass("FakeQuantizationToInteger", FakeQuantizationToInteger)
