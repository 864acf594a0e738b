"""``FuseRequantize`` (opt level 2): an NHWC int8 convolution followed by the requantize
``CanonicalizeQNN`` wrote for it becomes one requantizing convolution
(``op/qnn/packed_requant.py``), whose routine requantizes each tile in registers and
stores uint8 — instead of an int32 accumulator written out whole and read back by the
fused elementwise loop (4 bytes out and in per output, against 1).

The chain it replaces, each node used only by the next::

    acc = qnn.contrib_conv2d_packed | qnn.contrib_depthwise_conv2d (layout NHWC)
    s   = add(acc, b1) [add(., b2) ...]            int32 constants, per channel or scalar
                                                   (or nn.bias_add on the channel axis)
    v   = multiply(cast(s, float32), scale)        float32 constant, per channel or scalar
    y   = cast(round(clip(v, lo, hi)), int32) [add(., zp)] → cast(., uint8)

with integral ``lo``, ``hi`` and ``lo + zp``, ``hi + zp`` in [0, 255]. The int32 adds
sum to one bias (wrapping, as the adds do) and the rest is the fused op's definition,
so the result is the same bit for bit. Runs after the constants are folded (after
``ConvertLayout`` / ``AlterOpLayout``'s ``FoldConstant``), from the default opt level.
"""

from __future__ import annotations

import numpy as np

from ..ir.expr import Call, Constant, Expr, Op, const
from ..ir.module import IRModule
from ..ir.op import call
from .analysis import TypedMutator, calls_any_op, children, typed_module, unique_nodes
from .pass_infra import Pass, PassContext, module_pass, register_pass
from .rewrite import infer_new

_FUSED = {"qnn.contrib_conv2d_packed": "qnn.contrib_conv2d_packed_requant",
          "qnn.contrib_depthwise_conv2d": "qnn.contrib_depthwise_conv2d_requant"}


def _op(e: Expr) -> str | None:
    return e.op.name if type(e) is Call and type(e.op) is Op else None


def _per_channel(e: Expr, channels: int, dtype: str) -> np.ndarray | None:
    """A constant of ``dtype`` that broadcasts along the last (channel) axis alone, as a
    vector of ``channels`` values."""
    if not isinstance(e, Constant) or e.data.dtype != np.dtype(dtype):
        return None
    d = e.data
    if d.size == 1:
        return np.full(channels, d.reshape(-1)[0], dtype)
    if d.shape[-1] != channels or d.size != channels:
        return None
    return d.reshape(-1).astype(dtype)


def _other(c: Call, x: Expr) -> Expr | None:
    """The operand of the binary ``c`` that is not ``x`` (None if ``x`` is not one)."""
    a, b = c.args
    return b if a is x else a if b is x else None


class _Chains:
    """Where the chains start: ``match(root)`` gives the fused call's parts."""

    def __init__(self, fn):
        self.users: dict[Expr, int] = {}
        for node in unique_nodes([fn]):
            for kid in children(node):
                self.users[kid] = self.users.get(kid, 0) + 1

    def _sole(self, e: Expr) -> bool:
        return self.users.get(e, 0) == 1

    def _step(self, e: Expr, name: str) -> Expr | None:
        """``e`` if it is a call of ``name`` used once, else None."""
        return e if _op(e) == name and self._sole(e) else None

    def match(self, root: Call):
        """``(conv, bias, scale, zp, lo, hi)`` if ``root`` ends a fusable chain."""
        if _op(root) != "cast" or root.checked_type.dtype != "uint8":
            return None
        e, zp = root.args[0], 0
        if self._step(e, "add") is not None:
            z = next((a for a in e.args if isinstance(a, Constant)), None)
            if z is None or z.data.dtype != np.int32 or z.data.ndim != 0:
                return None
            zp, e = int(z.data), _other(e, z)
        to_int = self._step(e, "cast")
        rnd = to_int and self._step(to_int.args[0], "round")
        clip = rnd and self._step(rnd.args[0], "clip")
        mul = clip and self._step(clip.args[0], "multiply")
        to_float = mul and next((a for a in mul.args if self._step(a, "cast")), None)
        if to_float is None or to_int.checked_type.dtype != "int32" or (
                to_float.checked_type.dtype != "float32"):
            return None
        lo, hi = clip.attrs.a_min, clip.attrs.a_max
        if lo != int(lo) or hi != int(hi) or not 0 <= lo + zp <= hi + zp <= 255:
            return None
        e, biases = to_float.args[0], []
        while True:
            if self._step(e, "add") is not None:
                k = next((a for a in e.args if isinstance(a, Constant)), None)
            elif self._step(e, "nn.bias_add") is not None and e.attrs.axis % 4 == 3:
                k = e.args[1] if isinstance(e.args[1], Constant) else None  # opt level 2
            else:
                break
            if k is None:
                return None
            biases.append(k)
            e = e.args[0] if _op(e) == "nn.bias_add" else _other(e, k)
        if _op(e) not in _FUSED or e.attrs.layout != "NHWC" or not self._sole(e):
            return None
        channels = e.checked_type.shape[-1]
        scale = _per_channel(_other(mul, to_float), channels, "float32")
        vectors = [_per_channel(b, channels, "int32") for b in biases]
        if scale is None or any(v is None for v in vectors):
            return None
        bias = np.zeros(channels, np.int64)
        for v in vectors:
            bias += v
        bias = ((bias + 2**31) % 2**32 - 2**31).astype(np.int32)  # as the int32 adds wrap
        return e, bias, scale, zp, int(lo), int(hi)


class _Fuser(TypedMutator):
    def __init__(self, chains: _Chains):
        super().__init__()
        self.chains = chains
        self.count = 0

    def visit_call(self, c):
        parts = self.chains.match(c) if _op(c) == "cast" else None
        if parts is None:
            return super().visit_call(c)
        conv, bias, scale, zp, lo, hi = parts
        self.count += 1
        data, weight = (self.visit(a) for a in conv.args)
        return infer_new(call(_FUSED[conv.op.name], [data, weight, const(bias), const(scale)],
                              **dict(conv.attrs.items()), zero_point=zp, clip_min=lo,
                              clip_max=hi))


@module_pass(opt_level=2, name="FuseRequantize")
def _fuse_requantize(mod: IRModule, ctx: PassContext) -> IRModule:
    if not calls_any_op(mod, _FUSED):  # every cpu build runs it: most have no int8 conv
        return mod
    mod = typed_module(mod)
    functions, changed = {}, False
    for gv, fn in mod.functions.items():
        if fn.is_primitive:
            functions[gv] = fn
            continue
        fuser = _Fuser(_Chains(fn))
        functions[gv] = fuser.visit(fn)
        changed |= fuser.count > 0
    return mod.with_functions(functions) if changed else mod


def FuseRequantize() -> Pass:  # noqa: N802  (a pass constructor, as Relay names them)
    """Int8 convolutions requantized as they store (see the module docstring)."""
    return _fuse_requantize


register_pass("FuseRequantize", FuseRequantize)
