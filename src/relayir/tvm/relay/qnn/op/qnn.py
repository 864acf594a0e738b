"""``relay.qnn.op.qnn``: Relay's QNN constructors over relayir's QNN ops
(``relayir.op.qnn``), with Relay's signatures and defaults.

The ops are relayir's, so is their arithmetic (ONNX Runtime's: a float32 scale ratio,
round half to even; ``relayir/op/qnn/__init__.py``). What Relay offers beyond it is
refused by name (``NotInRelayirError``) rather than computed another way: a requantize
``rounding`` other than relayir's (``"UPWARD"``, ``"TONEAREST"``: Relay's fixed-point
multiplier rounds ties up or away from zero), a ``compute_dtype`` other than float32,
``requantize_config``, a dequantize to a dtype other than float32, and the QNN ops
relayir does not have (``subtract``, ``conv2d_transpose``, ``hardswish``,
``simulated_*``, ``softmax``, ``contrib_dense_pack``). The unary ops (``sigmoid``,
``exp``, ``rsqrt``, ``leaky_relu``...) are their definition, ``quantize(f(dequantize(x)))``,
which FakeQuantizationToInteger turns into a lookup table.
"""

from __future__ import annotations

import numpy as np

from .....ir.expr import Constant, Var
from .....op import nn as _nn
from .....op import qnn as _qnn
from .....op import tensor as _tensor
from ....error import NotInRelayirError, not_in_relayir

_ROUNDINGS = ("None", None)
_COMPUTE_DTYPES = ("None", None, "float32")


def _refuse(api: str, why: str):
    raise NotInRelayirError(f"tvm.relay.qnn.op.{api} is not part of relayir: {why}")


def quantize(data, output_scale, output_zero_point, axis=-1, out_dtype="int8"):
    return _qnn.quantize(data, output_scale, output_zero_point, axis=axis, out_dtype=out_dtype)


def _float32_scale(scale):
    """A float64 constant scale (``relay.const`` of a numpy float64 array) as float32:
    Relay's dequantize takes one and computes in float32; relayir's wants float32."""
    if isinstance(scale, Constant) and scale.data.dtype == np.float64:
        return Constant(scale.data.astype(np.float32))
    return scale


def dequantize(data, input_scale, input_zero_point, axis=-1, out_dtype="float32"):
    if out_dtype != "float32":
        _refuse(f"dequantize(out_dtype={out_dtype!r})", "relayir's qnn.dequantize gives "
                "float32")
    return _qnn.dequantize(data, _float32_scale(input_scale), input_zero_point, axis=axis)


def requantize(data, input_scale, input_zero_point, output_scale, output_zero_point, axis=-1,
               rounding="None", compute_dtype="None", out_dtype="int8"):
    if rounding not in _ROUNDINGS:
        _refuse(f"requantize(rounding={rounding!r})", "relayir's qnn.requantize multiplies "
                "by the float32 scale ratio and rounds half to even (ONNX Runtime's "
                "arithmetic), not Relay's fixed-point rounding modes")
    if compute_dtype not in _COMPUTE_DTYPES:
        _refuse(f"requantize(compute_dtype={compute_dtype!r})", "relayir's qnn.requantize "
                "computes in float32")
    return _qnn.requantize(data, input_scale, input_zero_point, output_scale,
                           output_zero_point, axis=axis, out_dtype=out_dtype)


def conv2d(data, kernel, input_zero_point, kernel_zero_point, input_scale, kernel_scale,
           kernel_size, channels, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
           data_layout="NCHW", kernel_layout="OIHW", out_layout="", out_dtype="int32"):
    return _qnn.conv2d(data, kernel, input_zero_point, kernel_zero_point, input_scale,
                       kernel_scale, strides=strides, padding=padding, dilation=dilation,
                       groups=groups, channels=channels, kernel_size=kernel_size,
                       data_layout=data_layout, kernel_layout=kernel_layout,
                       out_layout=out_layout, out_dtype=out_dtype)


def dense(data, weight, input_zero_point, kernel_zero_point, input_scale, kernel_scale, units,
          out_dtype="int32"):
    return _qnn.dense(data, weight, input_zero_point, kernel_zero_point, input_scale,
                      kernel_scale, units=units, out_dtype=out_dtype)


def batch_matmul(x, y, x_zero_point, y_zero_point, x_scale, y_scale, out_dtype="int32"):
    return _qnn.batch_matmul(x, y, x_zero_point, y_zero_point, x_scale, y_scale,
                             out_dtype=out_dtype)


def _binary(op, name):
    def make(lhs, rhs, lhs_scale, lhs_zero_point, rhs_scale, rhs_zero_point, output_scale,
             output_zero_point, lhs_axis=-1, rhs_axis=-1):
        """Relay's binary QNN op; relayir's takes per-tensor parameters (a per-channel
        scale is a type error), so the axes only name the default."""
        return op(lhs, rhs, lhs_scale, lhs_zero_point, rhs_scale, rhs_zero_point,
                  output_scale, output_zero_point)

    make.__name__ = name
    return make


def _unary(name: str):
    """Relay's ``qnn.op.<name>``: ``quantize(<name>(dequantize(x)))`` in the input's
    dtype; FakeQuantizationToInteger makes it a lookup table (relayir's QNN dialect has
    no unary ops: the table is computed from the float op's reference)."""
    float_op = getattr(_tensor, name)

    def op(x, scale, zero_point, output_scale, output_zero_point):
        y = float_op(_qnn.dequantize(x, _float32_scale(scale), zero_point))
        return _qnn.quantize(y, output_scale, output_zero_point, out_dtype=_dtype_of(x))

    op.__name__ = name
    return op


def _dtype_of(x) -> str:
    if isinstance(x, Constant):
        return x.data.dtype.name
    if isinstance(x, Var) and x.type_annotation is not None:
        return x.type_annotation.dtype
    if x.has_type:
        return x.checked_type.dtype
    _refuse("unary ops on an expression of unknown dtype", "relayir needs the input's dtype "
            "to build the quantize; annotate the variable or infer types first")


tanh, exp, sqrt, rsqrt = _unary("tanh"), _unary("exp"), _unary("sqrt"), _unary("rsqrt")
erf, abs, sigmoid, log = _unary("erf"), _unary("abs"), _unary("sigmoid"), _unary("log")  # noqa: A001

def leaky_relu(x, alpha, input_scale, input_zero_point, output_scale, output_zero_point):
    """``quantize(leaky_relu(dequantize(x)))``, a table after FakeQuantizationToInteger."""
    y = _nn.leaky_relu(_qnn.dequantize(x, _float32_scale(input_scale), input_zero_point),
                       alpha)
    return _qnn.quantize(y, output_scale, output_zero_point, out_dtype=_dtype_of(x))


add = _binary(_qnn.add, "add")
mul = _binary(_qnn.mul, "mul")


def concatenate(data, input_scales, input_zero_points, output_scale, output_zero_point, axis):
    data = list(data.fields) if hasattr(data, "fields") else list(data)
    return _qnn.concatenate(data, list(input_scales), list(input_zero_points), output_scale,
                            output_zero_point, axis)


def avg_pool2d(data, input_scale, input_zero_point, output_scale, output_zero_point,
               pool_size, strides, padding, dilation, ceil_mode=False,
               count_include_pad=True, layout="NHWC", out_layout=""):
    return _qnn.avg_pool2d(data, input_scale, input_zero_point, output_scale,
                           output_zero_point, pool_size=pool_size, strides=strides,
                           dilation=dilation, padding=padding, layout=layout,
                           out_layout=out_layout, ceil_mode=ceil_mode,
                           count_include_pad=count_include_pad)


_NOT_OFFERED = {
    "subtract": "relayir's QNN dialect has add and mul, not subtract",
    "conv2d_transpose": "relayir's QNN dialect has no transposed convolution",
    "simulated_quantize": "relayir has no simulated (float) QNN ops",
    "simulated_dequantize": "relayir has no simulated (float) QNN ops",
    "contrib_dense_pack": "relayir packs int8 weights itself (qnn.contrib_dense_packed)",
    "softmax": "relayir's QNN dialect has no softmax",
    "requantize_config": "relayir's qnn.requantize has one rounding (half to even)",
    "current_requantize_config": "relayir's qnn.requantize has one rounding (half to even)",
    "RequantizeConfig": "relayir's qnn.requantize has one rounding (half to even)",
}
_NOT_OFFERED["hardswish"] = "relayir's QNN dialect has no hardswish"
for _name, _why in _NOT_OFFERED.items():
    globals()[_name] = not_in_relayir(f"tvm.relay.qnn.op.{_name}", _why)

__all__ = ["abs", "add", "avg_pool2d", "batch_matmul", "concatenate", "conv2d", "dense",
           "dequantize", "erf", "exp", "leaky_relu", "log", "mul", "quantize", "requantize",
           "rsqrt",
           "sigmoid", "sqrt", "tanh", *_NOT_OFFERED]
