"""``qnn.quantize``, ``qnn.dequantize``, ``qnn.requantize``: moving between float and
integer values, per tensor or per channel along ``axis``."""

from __future__ import annotations

import dataclasses

import numpy as np

from ...ir.op import Attrs, OpPattern, call, register_op
from ...ir.types import TensorType
from ..attrs_util import attr_dtype, attr_int, set_fields
from ..type_rel import fail, tensors
from ._common import (
    QUANT_DTYPES,
    along,
    as_param,
    centered,
    check_quant,
    check_scale_zp,
    norm_axis,
    ratio,
    requantize_values,
    saturate_round,
)


@dataclasses.dataclass(frozen=True)
class QuantizeAttrs(Attrs):
    axis: int = -1
    out_dtype: str = "int8"

    def __post_init__(self):
        set_fields(self, axis=attr_int(self.axis, "axis"),
                   out_dtype=attr_dtype(self.out_dtype, "out_dtype"))
        if self.out_dtype not in QUANT_DTYPES + ("int32",):
            raise ValueError(f"out_dtype must be int8, uint8 or int32, found {self.out_dtype}")


@dataclasses.dataclass(frozen=True)
class DequantizeAttrs(Attrs):
    axis: int = -1


def _channels(data: TensorType, axis: int):
    return data.shape[norm_axis(axis, data.ndim)] if data.ndim else None


def _quantize_rel(types, attrs):
    data, scale, zp = tensors(types, ("data", "output_scale", "output_zero_point"))
    if data.dtype != "float32":
        fail(f"data must be float32, found {data}")
    check_scale_zp(scale, zp, "output", _channels(data, attrs.axis), f"data axis {attrs.axis}")
    return TensorType(data.shape, attrs.out_dtype)


def _quantize_ref(data, scale, zp, attrs):
    nd, ax = data.ndim, attrs.axis
    v = data.astype(np.float32) / along(scale, nd, ax).astype(np.float32)
    return saturate_round(v, along(zp, nd, ax), attrs.out_dtype)


def _dequantize_rel(types, attrs):
    data, scale, zp = tensors(types, ("data", "input_scale", "input_zero_point"))
    check_quant(data, "data", QUANT_DTYPES + ("int32",))
    check_scale_zp(scale, zp, "input", _channels(data, attrs.axis), f"data axis {attrs.axis}")
    return TensorType(data.shape, "float32")


def _dequantize_ref(data, scale, zp, attrs):
    nd, ax = data.ndim, attrs.axis
    return centered(data, along(zp, nd, ax)).astype(np.float32) * along(scale, nd, ax)


def _requantize_rel(types, attrs):
    data, in_s, in_zp, out_s, out_zp = tensors(
        types, ("data", "input_scale", "input_zero_point", "output_scale", "output_zero_point"))
    check_quant(data, "data", QUANT_DTYPES + ("int32",))
    ch, note = _channels(data, attrs.axis), f"data axis {attrs.axis}"
    check_scale_zp(in_s, in_zp, "input", ch, note)
    check_scale_zp(out_s, out_zp, "output", ch, note)
    return TensorType(data.shape, attrs.out_dtype)


def _requantize_ref(data, in_s, in_zp, out_s, out_zp, attrs):
    nd, ax = data.ndim, attrs.axis
    r = along(ratio(in_s, out_s), nd, ax)
    return requantize_values(centered(data, along(in_zp, nd, ax)), r, along(out_zp, nd, ax),
                             attrs.out_dtype)


register_op("qnn.quantize", rel=_quantize_rel, ref=_quantize_ref, pattern=OpPattern.ELEMWISE,
            num_inputs=3, arg_names=("data", "output_scale", "output_zero_point"),
            attrs=QuantizeAttrs,
            description="float32 → int: round(data / scale) + zero_point, saturated")
register_op("qnn.dequantize", rel=_dequantize_rel, ref=_dequantize_ref,
            pattern=OpPattern.ELEMWISE, num_inputs=3,
            arg_names=("data", "input_scale", "input_zero_point"), attrs=DequantizeAttrs,
            description="int → float32: (data - zero_point) * scale")
register_op("qnn.requantize", rel=_requantize_rel, ref=_requantize_ref,
            pattern=OpPattern.ELEMWISE, num_inputs=5,
            arg_names=("data", "input_scale", "input_zero_point", "output_scale",
                       "output_zero_point"), attrs=QuantizeAttrs,
            description="int → int: round((data - in_zp) * (in_scale / out_scale)) + out_zp")


def quantize(data, output_scale, output_zero_point, axis=-1, out_dtype="int8"):
    """``round(data / scale) + zero_point`` saturated to ``out_dtype`` (half to even)."""
    return call("qnn.quantize", [data, as_param(output_scale, "float32"),
                                 as_param(output_zero_point, "int32")],
                axis=axis, out_dtype=out_dtype)


def dequantize(data, input_scale, input_zero_point, axis=-1):
    """``(data - zero_point) * scale`` in float32."""
    return call("qnn.dequantize", [data, as_param(input_scale, "float32"),
                                   as_param(input_zero_point, "int32")], axis=axis)


def requantize(data, input_scale, input_zero_point, output_scale, output_zero_point, axis=-1,
               out_dtype="int8"):
    """Re-express integers of one scale / zero point in another: the scale ratio in
    float32, as ONNX Runtime computes it (see ``qnn/__init__``)."""
    return call("qnn.requantize", [data, as_param(input_scale, "float32"),
                                   as_param(input_zero_point, "int32"),
                                   as_param(output_scale, "float32"),
                                   as_param(output_zero_point, "int32")],
                axis=axis, out_dtype=out_dtype)
