"""``CanonicalizeQNN``: every ``qnn.*`` op becomes plain integer and float ops with
kernels (Relay's ``qnn.transform.CanonicalizeOps``).

The rewrite spells out the references' arithmetic (``op/qnn``) step by step, so a
lowered program equals the reference, and ONNX Runtime, bit for bit:

- a dense layer or convolution with a constant weight is one ``vpdpbusd`` product on
  the raw 8-bit values with the zero points folded into a constant correction
  (``qnn_integer_gemm.py``); any other product centres its operands in int32 (``cast``,
  ``subtract`` of the zero point) and calls the float op's integer form (``nn.conv2d``
  ... with ``out_dtype="int32"``);
- ``requantize`` multiplies ``float32(acc - zp)`` by the float32 ratio of the scales
  (a constant after folding), clamps to the output range shifted by the zero point,
  rounds half to even (``round``), adds the zero point and casts;
- ``quantize`` divides by the scale, then the same clamp / round / zero point.

Float scale, not a fixed-point multiplier and shift: it is ONNX Runtime's arithmetic
(so imported models give its answers exactly) and costs one convert and one multiply
per output, which vectorise in the same fused elementwise kernel.

Required at every opt level (it is first in the pipeline): ``qnn.*`` ops have no
kernels of their own.
"""

from __future__ import annotations

from ..ir.expr import Constant, Expr, Tuple, TupleGetItem, const
from ..ir.module import IRModule
from ..ir.op import call
from ..ir.types import dtype_range
from .canonicalize_ops import same_type_or_none
from .pass_infra import Pass, PassContext, module_pass, register_pass
from .qnn_integer_gemm import lower_conv2d, lower_dense
from .rewrite import MatchResult, Rule, infer_new, is_op, rewrite_module

# ---------------------------------------------------------------- building blocks


def along(param: Expr, ndim: int, axis: int) -> Expr:
    """A scalar / per-channel parameter reshaped to broadcast along ``axis``."""
    t = infer_new(param).checked_type
    if t.ndim == 0:
        return param
    shape = [1] * ndim
    shape[axis % ndim] = -1
    if isinstance(param, Constant):  # laid out now: a zero vector stays a known zero
        return const(param.data.reshape(() if t.shape[0] == 1 else tuple(shape)))
    if t.shape[0] == 1:
        return call("reshape", [param], newshape=())
    return call("reshape", [param], newshape=tuple(shape))


def _is_zero(e: Expr) -> bool:
    return isinstance(e, Constant) and not e.data.any()


def centered(x: Expr, zp: Expr) -> Expr:
    """``x - zp`` exactly (``zp`` already laid out to broadcast): 8-bit values in int32,
    an int32 one (an accumulator, a requantize input) in int64, where ``INT32_MIN - zp``
    cannot wrap (the fuzzer's int32 extremes did)."""
    if x.checked_type.dtype == "int32":
        if _is_zero(zp):
            return x
        return call("subtract", [call("cast", [x], dtype="int64"),
                                 call("cast", [zp], dtype="int64")])
    x = call("cast", [x], dtype="int32")
    return x if _is_zero(zp) else call("subtract", [x, zp])


def to_float(x: Expr) -> Expr:
    return call("cast", [x], dtype="float32")


def saturate_round(v: Expr, zp: Expr, out_dtype: str) -> Expr:
    """float32 ``v`` → ``clamp(v, lo - zp, hi - zp)``, rounded half to even, ``+ zp``."""
    lo, hi = dtype_range(out_dtype)
    if isinstance(zp, Constant) and zp.data.ndim == 0:
        z = int(zp.data)
        v = call("clip", [v], a_min=float(lo - z), a_max=float(hi - z))
    else:
        zf = to_float(zp)
        v = call("minimum", [call("maximum", [v, call("subtract", [const(float(lo)), zf])]),
                             call("subtract", [const(float(hi)), zf])])
    y = call("cast", [call("round", [v])], dtype="int32")
    if not _is_zero(zp):
        y = call("add", [y, zp])
    return call("cast", [y], dtype=out_dtype)


def ratio(num: Expr, den: Expr) -> Expr:
    return call("divide", [num, den])


def requantized(acc: Expr, in_scale: Expr, in_zp: Expr, out_scale: Expr, out_zp: Expr,
                axis: int, out_dtype: str) -> Expr:
    nd = acc.checked_type.ndim
    v = call("multiply", [to_float(centered(acc, along(in_zp, nd, axis))),
                          along(ratio(in_scale, out_scale), nd, axis)])
    return saturate_round(v, along(out_zp, nd, axis), out_dtype)


# ---------------------------------------------------------------- one rule per op


def _quantize(m: MatchResult) -> Expr:
    x, scale, zp = m.node.args
    a, nd = m.node.attrs.axis, x.checked_type.ndim
    v = call("divide", [x, along(scale, nd, a)])
    return saturate_round(v, along(zp, nd, a), m.node.attrs.out_dtype)


def _dequantize(m: MatchResult) -> Expr:
    x, scale, zp = m.node.args
    a, nd = m.node.attrs.axis, x.checked_type.ndim
    return call("multiply", [to_float(centered(x, along(zp, nd, a))), along(scale, nd, a)])


def _requantize(m: MatchResult) -> Expr:
    return requantized(*m.node.args, m.node.attrs.axis, m.node.attrs.out_dtype)


def _product(float_op: str, kernel_axis, fast=None):
    def rule(m: MatchResult) -> Expr:
        new = fast(m.node) if fast is not None else None
        if new is not None:
            return new
        data, kernel, izp, kzp, _, _ = m.node.args
        attrs = m.node.attrs
        ax = kernel_axis(attrs)
        k = centered(kernel, kzp if ax is None else along(kzp, kernel.checked_type.ndim, ax))
        return call(float_op, [centered(data, izp), k], **dict(attrs.items()))

    return rule


def _add(m: MatchResult) -> Expr:
    a, b, sa, za, sb, zb, sc, zc = m.node.args
    va = call("multiply", [to_float(centered(a, za)), ratio(sa, sc)])
    vb = call("multiply", [to_float(centered(b, zb)), ratio(sb, sc)])
    return saturate_round(call("add", [va, vb]), zc, m.node.checked_type.dtype)


def _mul(m: MatchResult) -> Expr:
    a, b, sa, za, sb, zb, sc, zc = m.node.args
    prod = to_float(call("multiply", [centered(a, za), centered(b, zb)]))
    v = call("multiply", [prod, ratio(call("multiply", [sa, sb]), sc)])
    return saturate_round(v, zc, m.node.checked_type.dtype)


def _fields(e: Expr) -> list:
    if isinstance(e, Tuple):
        return list(e.fields)
    return [TupleGetItem(e, i) for i in range(len(e.checked_type.fields))]


def _concatenate(m: MatchResult) -> Expr:
    data, scales, zps, sc, zc = m.node.args
    dtype, parts = m.node.checked_type.dtype, []
    for x, s, z in zip(_fields(data), _fields(scales), _fields(zps)):
        nd = x.checked_type.ndim
        same = (isinstance(s, Constant) and isinstance(sc, Constant) and isinstance(z, Constant)
                and isinstance(zc, Constant) and s.data == sc.data and z.data == zc.data)
        parts.append(x if same else requantized(x, s, z, sc, zc, nd - 1, dtype))
    return call("concatenate", [Tuple(parts)], axis=m.node.attrs.axis)


def _avg_pool2d(m: MatchResult) -> Expr:
    x, s_in, z_in, s_out, z_out = m.node.args
    mean = call("nn.avg_pool2d", [to_float(centered(x, z_in))], attrs=m.node.attrs)
    v = call("multiply", [mean, ratio(s_in, s_out)])
    return saturate_round(v, z_out, m.node.checked_type.dtype)


_RULES = {
    "qnn.quantize": _quantize,
    "qnn.dequantize": _dequantize,
    "qnn.requantize": _requantize,
    "qnn.conv2d": _product("nn.conv2d", lambda attrs: attrs.kernel_layout.index("O"),
                           lower_conv2d),
    "qnn.dense": _product("nn.dense", lambda attrs: 0, lower_dense),
    "qnn.batch_matmul": _product("nn.batch_matmul", lambda attrs: None),
    "qnn.add": _add,
    "qnn.mul": _mul,
    "qnn.concatenate": _concatenate,
    "qnn.avg_pool2d": _avg_pool2d,
}


def _typed(fn):
    """The rule's replacement, which must keep the node's type (it always does)."""
    def rule(m: MatchResult) -> Expr | None:
        return same_type_or_none(fn(m), m.node)

    return rule


RULES = [Rule(f"{name}-lower", is_op(name).any_args(), _typed(fn)) for name, fn in _RULES.items()]


@module_pass(opt_level=0, name="CanonicalizeQNN")
def _canonicalize_qnn(mod: IRModule, ctx: PassContext) -> IRModule:
    debug = bool(ctx.config.get("relay.CanonicalizeQNN.debug"))
    return rewrite_module(mod, RULES, "CanonicalizeQNN", debug)


def CanonicalizeQNN() -> Pass:  # noqa: N802  (Relay's name)
    """Lower every ``qnn.*`` op to integer / float ops that have kernels."""
    return _canonicalize_qnn


register_pass("CanonicalizeQNN", CanonicalizeQNN)
