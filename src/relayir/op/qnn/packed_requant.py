"""``qnn.contrib_conv2d_packed_requant`` / ``qnn.contrib_depthwise_conv2d_requant``: the
int8 convolutions of ``packed.py`` with the requantize that follows them applied to each
tile while it is in registers, so the layer writes its uint8 output directly instead of
an int32 accumulator that a second loop reads back (for a 1x1 layer with few input
channels that round trip was most of the time):

``y = uint8(int32(rint(clip(float32(acc + bias) * scale, clip_min, clip_max))) + zp)``

with ``bias`` (int32) and ``scale`` (float32) one per output channel — exactly the ops
``CanonicalizeQNN`` writes for ``qnn.requantize`` after a product, in their order, so the
fused layer equals the unfused one bit for bit (``FuseRequantize`` makes the rewrite).
``clip_min + zp`` and ``clip_max + zp`` lie in [0, 255]: the final cast never wraps. The
data and output are NHWC (a pixel's channels contiguous: what the tiles store)."""

from __future__ import annotations

import dataclasses

import numpy as np

from ...ir.op import OpPattern, call, register_op
from ...ir.types import TensorType
from ..attrs_util import attr_int, set_fields
from ..type_rel import fail, tensor
from .packed import Conv2DPackedAttrs, _conv_ref, _conv_rel, _depthwise_ref, _depthwise_rel


@dataclasses.dataclass(frozen=True)
class Conv2DRequantAttrs(Conv2DPackedAttrs):
    zero_point: int = 0
    clip_min: int = 0
    clip_max: int = 255

    def __post_init__(self):
        super().__post_init__()
        set_fields(self, zero_point=attr_int(self.zero_point, "zero_point"),
                   clip_min=attr_int(self.clip_min, "clip_min"),
                   clip_max=attr_int(self.clip_max, "clip_max"))
        lo, hi = self.clip_min + self.zero_point, self.clip_max + self.zero_point
        if not 0 <= lo <= hi <= 255:
            raise ValueError(f"clip_min + zero_point and clip_max + zero_point must lie in "
                             f"[0, 255] in order, found {lo} and {hi}")


def _requant_rel(base):
    def rel(types, attrs):
        if attrs.layout != "NHWC":
            fail(f"the requantizing convolutions compute in NHWC (the layout opt level 3 "
                 f"runs int8 in), found layout {attrs.layout!r}")
        acc = base(types[:2], attrs)
        channels = acc.shape[-1]
        for ty, what, dtype in ((types[2], "bias", "int32"), (types[3], "scale", "float32")):
            t = tensor(ty, what)
            if t.dtype != dtype or tuple(t.shape) != (channels,):
                fail(f"{what} must be {dtype}[{channels}] (one per output channel), found {t}")
        return TensorType(acc.shape, "uint8")

    return rel


def requantized(acc: np.ndarray, bias: np.ndarray, scale: np.ndarray, attrs) -> np.ndarray:
    """The requantize of an NHWC int32 accumulator, in float32 as the C does."""
    with np.errstate(over="ignore"):
        v = (acc + bias).astype(np.int32).astype(np.float32) * scale.astype(np.float32)
    v = np.rint(np.clip(v, np.float32(attrs.clip_min), np.float32(attrs.clip_max)))
    v = np.where(np.isnan(v), np.float32(0), v)  # a NaN scale: relayir's cast gives 0
    return (v.astype(np.int32) + attrs.zero_point).astype(np.uint8)


def _requant_ref(base):
    def ref(data, weight, bias, scale, attrs):
        return requantized(base(data, weight, attrs), bias, scale, attrs)

    return ref


for _name, _rel, _ref, _what in (
        ("qnn.contrib_conv2d_packed_requant", _conv_rel, _conv_ref, "packed int8 kernel"),
        ("qnn.contrib_depthwise_conv2d_requant", _depthwise_rel, _depthwise_ref,
         "int8 filter per channel")):
    register_op(_name, rel=_requant_rel(_rel), ref=_requant_ref(_ref),
                pattern=OpPattern.OUT_ELEMWISE_FUSABLE, num_inputs=4,
                arg_names=("data", "weight", "bias", "scale"), attrs=Conv2DRequantAttrs,
                description=f"uint8 data x {_what} → int32, requantized per output "
                            f"channel to uint8 as it is stored")


def contrib_conv2d_packed_requant(data, weight, bias, scale, **attrs):
    """``contrib_conv2d_packed`` (same attrs) requantized: see the module docstring."""
    return call("qnn.contrib_conv2d_packed_requant", [data, weight, bias, scale], **attrs)


def contrib_depthwise_conv2d_requant(data, weight, bias, scale, **attrs):
    """``contrib_depthwise_conv2d`` (same attrs) requantized: see the module docstring."""
    return call("qnn.contrib_depthwise_conv2d_requant", [data, weight, bias, scale], **attrs)
