"""``FakeQuantizationToInteger``: float ops between ``qnn.dequantize`` and
``qnn.quantize`` (the QDQ form that ONNX Runtime's ``quantize_static`` writes and
relayir's own quantizer emits) become integer QNN ops (Relay's pass of that name).

Each rule is rooted at a ``qnn.quantize(f(dequantize(a), ...), s, z)``:

- ``conv2d`` / ``dense`` / ``matmul`` (+ a bias dequantized from int32 with the scale
  ``input_scale * weight_scale``) → ``qnn.conv2d`` / ``qnn.dense`` (+ the int32 bias)
  → ``qnn.requantize``: what ONNX Runtime fuses into QLinearConv / QLinearMatMul, with
  its arithmetic, so the answers are ONNX Runtime's;
- ``batch_matmul`` → ``qnn.batch_matmul`` → ``qnn.requantize``;
- ``add`` → ``qnn.add``; ``multiply`` → ``qnn.mul``; ``subtract`` / ``minimum`` /
  ``maximum`` (and a per-channel ``add``) of both sides requantized to the output's
  parameters;
  ``concatenate`` → ``qnn.concatenate``; ``avg_pool2d`` / ``global_avg_pool2d`` →
  ``qnn.avg_pool2d``; ``mean`` → an int32 ``sum`` requantized;
- ops that commute with a per-tensor affine map (reshapes, transposes, a split's
  field, max pooling and reductions, ``topk`` values, ``relu`` as a maximum with the
  zero point: ``fake_quantization_inputs``) run on the integers, followed by a
  ``qnn.requantize`` when the scale or zero point changes; the operands of the rules
  above may sit under such ops too (``transpose`` then ``conv2d``);
- an elementwise float function of one quantized tensor and scalar constants
  (sigmoid, exp, clip, ``add(x, 1.0)``...) becomes a lookup in a table of its 256
  results (``fake_quantization_tables``);
- ``quantize(dequantize(q))`` is ``q`` (the same parameters) or a ``requantize``.

A ``dequantize`` whose value is used only by rewritten ops becomes dead, so
activations stay 8-bit between quantized ops. Patterns that do not fit are left in
float. First in the pipeline, at every opt level, before ``CanonicalizeQNN``.
"""

from __future__ import annotations

import numpy as np

from ..ir.expr import Constant, Expr, Tuple
from ..ir.module import IRModule
from ..ir.op import call
from .canonicalize_ops import same_type_or_none
from .fake_quantization_inputs import Deq, callee, deq, int_input, scalar
from .fake_quantization_tables import table_rule
from .pass_infra import Pass, PassContext, module_pass, register_pass
from .rewrite import MatchResult, Rule, is_op, rewrite_module, wildcard


def _same_params(a_scale: Expr, a_zp: Expr, b_scale: Expr, b_zp: Expr) -> bool:
    consts = all(isinstance(e, Constant) for e in (a_scale, a_zp, b_scale, b_zp))
    if consts:
        return (np.array_equal(a_scale.data, b_scale.data)
                and np.array_equal(a_zp.data, b_zp.data))
    return a_scale is b_scale and a_zp is b_zp


def _requantize_to(q: Expr, d: Deq, m: MatchResult) -> Expr:
    """``q`` (integers of ``d``'s dtype and parameters) in the quantize's parameters."""
    _, s, z = m.node.args
    out = m.node.attrs.out_dtype
    if _same_params(d.scale, d.zp, s, z) and d.dtype == out:
        return q
    return call("qnn.requantize", [q, d.scale, d.zp, s, z], axis=-1, out_dtype=out)


def _bias(e: Expr, channels_axis: int):
    """``(float op, int32 bias or None)`` from ``bias_add(op, deq(b))`` /
    ``add(op, deq(b))`` or a bare op."""
    name = callee(e)
    if name == "nn.bias_add" and e.attrs.axis in (channels_axis, channels_axis
                                                 + e.checked_type.ndim):
        b = deq(e.args[1], per_tensor=False)
        return (e.args[0], b) if b is not None and b.dtype == "int32" else (None, None)
    if name == "add" and channels_axis == -1:
        b = deq(e.args[1], per_tensor=False)
        if b is not None and b.dtype == "int32" and b.data.checked_type.ndim == 1:
            return e.args[0], b
        return None, None
    return e, None


def _bias_fits(b, x: Deq, w: Deq) -> bool:
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
    axis = 1 if callee(e) in ("nn.conv2d", "nn.bias_add") else -1
    op, b = _bias(e, axis)
    name = callee(op) if op is not None else None
    if name not in ("nn.conv2d", "nn.dense", "nn.matmul", "nn.batch_matmul"):
        return None
    xi, w = int_input(op.args[0]), deq(op.args[1], per_tensor=False)
    if xi is None or w is None or w.dtype not in ("int8", "uint8"):
        return None
    xq, x = xi
    if x.dtype not in ("int8", "uint8"):
        return None
    attrs = op.attrs
    wq, w_axis = w.data, w.axis % w.data.checked_type.ndim
    if name == "nn.conv2d":
        if attrs.data_layout != "NCHW" or attrs.out_dtype or (
                not w.per_tensor and w_axis != attrs.kernel_layout.index("O")):
            return None
        fields = {**dict(attrs.items()), "out_dtype": "int32"}
        acc = call("qnn.conv2d", [xq, wq, x.zp, w.zp, x.scale, w.scale], **fields)
    elif name == "nn.batch_matmul":
        if not w.per_tensor or attrs.out_dtype:
            return None
        acc = call("qnn.batch_matmul", [xq, wq, x.zp, w.zp, x.scale, w.scale],
                   out_dtype="int32", transpose_a=attrs.transpose_a,
                   transpose_b=attrs.transpose_b)
    else:
        transposed = name == "nn.dense" or attrs.transpose_b
        if name == "nn.matmul" and (attrs.transpose_a or attrs.out_dtype):
            return None
        if not w.per_tensor and w_axis != (0 if transposed else 1):
            return None
        if not transposed:
            wq = call("transpose", [wq], axes=(1, 0))
        acc = call("qnn.dense", [xq, wq, x.zp, w.zp, x.scale, w.scale])
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
    if callee(e) != "add":
        return None
    ai, bi = int_input(e.args[0]), int_input(e.args[1])
    _, s, z = m.node.args
    if ai is None or bi is None or not (scalar(s) and scalar(z)):
        return None
    (qa, a), (qb, b) = ai, bi
    if a.dtype != b.dtype or a.dtype != m.node.attrs.out_dtype:
        return None
    return call("qnn.add", [qa, qb, a.scale, a.zp, b.scale, b.zp, s, z])


def _commuting(m: MatchResult) -> Expr | None:
    """The quantize's input on the integers (``int_input``), requantized if need be; a
    per-channel dequantize (or a relu or clip of one) in the quantize's own parameters."""
    e = m["e"]
    got = int_input(e)
    if got is not None:
        return _requantize_to(*got, m)
    name = callee(e)
    inner = e.args[0] if name in ("nn.relu", "clip") else e
    d = deq(inner, per_tensor=False)
    _, s, z = m.node.args
    if d is None or not _same_params(d.scale, d.zp, s, z) or d.dtype != m.node.attrs.out_dtype:
        return None
    if name == "qnn.dequantize":
        return d.data
    if name == "nn.relu":
        return call("maximum", [d.data, _along_axis(d.zp, d, d.dtype)])
    if name == "clip" and d.constant:
        return _clip_per_channel(e, d)
    return None


def _along_axis(v: Expr, d: Deq, dtype: str) -> Expr:
    """A per-channel constant of ``d`` shaped to broadcast along its axis."""
    ndim = d.data.checked_type.ndim
    shape = [1] * ndim
    shape[d.axis % ndim] = -1
    if isinstance(v, Constant):
        return Constant(np.asarray(v.data).astype(dtype).reshape(shape))
    return call("reshape", [call("cast", [v], dtype=dtype)], newshape=tuple(shape))


def _clip_per_channel(e: Expr, d: Deq) -> Expr:
    """``clip`` bounds in each channel's integers (rounded, saturated to the dtype)."""
    info = np.iinfo(d.dtype)
    scale, zp = d.scale.data.astype("float64"), d.zp.data.astype("int64")

    def bound(v):
        q = np.clip(np.round(v / scale) + zp, info.min, info.max)
        return Constant(q.astype(d.dtype))

    lo = _along_axis(bound(e.attrs.a_min), d, d.dtype)
    hi = _along_axis(bound(e.attrs.a_max), d, d.dtype)
    return call("minimum", [call("maximum", [d.data, lo]), hi])


def _operand(e: Expr):
    """``int_input``, or a per-channel dequantize's integers as they are."""
    got = int_input(e)
    if got is None and (d := deq(e, per_tensor=False)) is not None:
        got = d.data, d
    return got


def _binary(m: MatchResult) -> Expr | None:
    """``multiply`` → ``qnn.mul``; ``subtract``, ``minimum``, ``maximum`` (and an ``add``
    ``qnn.add`` cannot take: per-channel operands) of both sides requantized to the
    output's parameters (a sum or difference in int32, then saturated)."""
    e = m["e"]
    name = callee(e)
    if name not in ("add", "multiply", "subtract", "minimum", "maximum"):
        return None
    a, b = _operand(e.args[0]), _operand(e.args[1])
    _, s, z = m.node.args
    out = m.node.attrs.out_dtype
    if a is None or b is None or not (scalar(s) and scalar(z)):
        return None
    (qa, da), (qb, db) = a, b
    if name == "multiply":
        if not (da.dtype == db.dtype == out and da.per_tensor and db.per_tensor):
            return None
        return call("qnn.mul", [qa, qb, da.scale, da.zp, db.scale, db.zp, s, z])
    acc = "int32" if name in ("add", "subtract") else out

    def to_out(q, d):
        return call("qnn.requantize", [q, d.scale, d.zp, s, z],
                    axis=-1 if d.per_tensor else d.axis, out_dtype=acc)

    ra, rb = to_out(qa, da), to_out(qb, db)
    if acc == out:  # the requantize saturates, and min / max commute with it
        return call(name, [ra, rb])
    # each side carries the output zero point: a sum has one too many, a difference none
    zp = call("cast", [z], dtype="int32")
    total = (call("subtract", [call("add", [ra, rb]), zp]) if name == "add"
             else call("add", [call("subtract", [ra, rb]), zp]))
    info = np.iinfo(out)
    return call("cast", [call("clip", [total], a_min=float(info.min), a_max=float(info.max))],
                dtype=out)


def _mean(m: MatchResult) -> Expr | None:
    """``mean`` → an int32 ``sum`` requantized by ``scale / n`` from the zero point
    ``n * zp`` (n values per output): one rounding, as the float graph's quantize."""
    e = m["e"]
    if callee(e) != "mean":
        return None
    got = int_input(e.args[0])
    _, s, z = m.node.args
    if got is None or not got[1].constant or not (scalar(s) and scalar(z)):
        return None
    q, d = got
    ins, outs = d.data.checked_type.shape, e.checked_type.shape
    if not all(isinstance(n, int) for n in (*ins, *outs)):
        return None
    n = int(np.prod(ins)) // max(int(np.prod(outs)), 1)
    total = call("sum", [call("cast", [q], dtype="int32")], **dict(e.attrs.items()))
    scale = Constant(np.asarray(np.float32(d.scale.data.reshape(())) / np.float32(n)))
    zp = Constant(np.asarray(n * int(d.zp.data.reshape(())), "int32"))
    return call("qnn.requantize", [total, scale, zp, s, z], axis=-1,
                out_dtype=m.node.attrs.out_dtype)


def _avg_pool(m: MatchResult) -> Expr | None:
    e = m["e"]
    name = callee(e)
    if name not in ("nn.avg_pool2d", "nn.global_avg_pool2d"):
        return None
    d = deq(e.args[0])
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
    if callee(e) != "concatenate" or not isinstance(e.args[0], Tuple):
        return None
    ds = [deq(f) for f in e.args[0].fields]
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
    ("qdq-binary", _binary), ("qdq-mean", _mean), ("qdq-avg-pool", _avg_pool),
    ("qdq-concatenate", _concatenate), ("qdq-table", table_rule))]


@module_pass(opt_level=0, name="FakeQuantizationToInteger")
def _fake_quantization_to_integer(mod: IRModule, ctx: PassContext) -> IRModule:
    debug = bool(ctx.config.get("relay.FakeQuantizationToInteger.debug"))
    return rewrite_module(mod, RULES, "FakeQuantizationToInteger", debug)


def FakeQuantizationToInteger() -> Pass:  # noqa: N802  (Relay's name)
    """Rewrite dequantize → float op → quantize chains as integer QNN ops."""
    return _fake_quantization_to_integer


register_pass("FakeQuantizationToInteger", FakeQuantizationToInteger)
