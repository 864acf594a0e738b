"""Samplers for the QNN dialect (``qnn.*``): int8/uint8 tensors with their scales and
zero points, per tensor or per channel. Their outputs are integers, so the fuzzer's
comparison allows no rounding there: every executor must give ONNX Runtime's integers
(the references') exactly. Registered into ``fuzz_ops.SAMPLERS``.

Scales are float32 constants drawn from values a calibration gives (powers of two and
not); zero points int32 constants inside the dtype's range. ``qnn.contrib_*`` ops take
their weights packed at build time (``op.qnn.packed``), as the lowering makes them.
"""

from __future__ import annotations

import numpy as np

from ..op.qnn.packed import conv_kernel_columns, pack_weight
from .fuzz_build import Builder
from .fuzz_ops import sampler

QUANT = ("int8", "uint8")
_SCALES = (0.5, 0.25, 0.1, 0.0173, 0.02, 1 / 64, 0.0039, 1.7)


def _scale(b: Builder, n: int | None = None) -> int:
    if n is None:
        return b.new((), "float32", const=True, exact=b.choice(_SCALES))
    return b.new((n,), "float32", const=True,
                 exact=[b.choice(_SCALES) for _ in range(n)])


def _zp(b: Builder, dtype: str, n: int | None = None) -> int:
    lo, hi = (-20, 20) if dtype in ("int8", "int32") else (100, 160)
    if dtype in ("int8", "int32") and b.coin(0.5):
        lo = hi = 0  # symmetric
    if n is None:
        return b.new((), "int32", const=True, exact=b.randint(lo, hi))
    return b.new((n,), "int32", const=True, exact=[b.randint(lo, hi) for _ in range(n)])


def _qdata(b: Builder, ndim, dtypes=QUANT, lo: int = 1, hi: int = 5, pred=None) -> int:
    return b.data(ndim, dtypes, lo=lo, hi=hi, pred=pred)


def _per_channel(b: Builder, i: int) -> tuple:
    """``(axis, channels)`` for a per-channel parameter of step ``i``, or ``(-1, None)``."""
    shape = b.shape(i)
    if shape and b.coin(0.4):
        axis = b.randint(0, len(shape) - 1)
        return axis, shape[axis]
    return -1, None


@sampler("qnn.quantize")
def _quantize(b):
    x = b.data((0, 4), ("float32",), lo=0)
    axis, n = _per_channel(b, x)
    out = b.choice(QUANT + ("int32",) if b.coin(0.1) else QUANT)
    return [x, _scale(b, n), _zp(b, out, n)], {"axis": axis, "out_dtype": out}


@sampler("qnn.dequantize")
def _dequantize(b):
    x = _qdata(b, (0, 4), QUANT + ("int32",), lo=0)
    axis, n = _per_channel(b, x)
    return [x, _scale(b, n), _zp(b, b.dtype(x), n)], {"axis": axis}


@sampler("qnn.requantize")
def _requantize(b):
    x = _qdata(b, (0, 4), QUANT + ("int32",), lo=0)
    axis, n = _per_channel(b, x)
    out = b.choice(QUANT)
    return [x, _scale(b, n), _zp(b, b.dtype(x), n), _scale(b, n), _zp(b, out, n)], {
        "axis": axis, "out_dtype": out}


@sampler("qnn.add", "qnn.mul")
def _binary(b, name):
    a = _qdata(b, (0, 4), lo=0)
    c = b.broadcast_partner(a)
    d = b.dtype(a)
    return [a, c, _scale(b), _zp(b, d), _scale(b), _zp(b, d), _scale(b), _zp(b, d)], {}


@sampler("qnn.concatenate")
def _concatenate(b):
    a = _qdata(b, (1, 4))
    shape, d = list(b.shape(a)), b.dtype(a)
    axis = b.randint(0, len(shape) - 1)
    other = shape.copy()
    other[axis] = b.randint(1, 3)
    c = b.like(other, d)
    return [(a, c), (_scale(b), _scale(b)), (_zp(b, d), _zp(b, d)), _scale(b), _zp(b, d)], {
        "axis": axis}


@sampler("qnn.avg_pool2d")
def _avg_pool(b):
    x = _qdata(b, 4, lo=2, hi=7)
    k = b.randint(1, 3)
    d = b.dtype(x)
    return [x, _scale(b), _zp(b, d), _scale(b), _zp(b, d)], {
        "pool_size": (k, k), "strides": (b.choice((1, 2)),) * 2,
        "padding": (b.randint(0, k - 1),) * 4, "count_include_pad": b.coin(0.5),
        "ceil_mode": b.coin(0.2)}


def _linear_params(b: Builder, data: int, channels: int) -> list:
    per = b.coin(0.5)
    return [_zp(b, b.dtype(data)), _zp(b, "int8", channels if per else None),
            _scale(b), _scale(b, channels if per else None)]


@sampler("qnn.conv2d")
def _conv(b):
    x = _qdata(b, 4, lo=1, hi=7)
    n, c, h, w = b.shape(x)
    groups = c if b.coin(0.2) else 1
    out = groups * b.randint(1, 3)
    k = b.choice((1, 3)) if min(h, w) >= 3 else 1
    weight = b.new((out, c // groups, k, k), "int8", const=b.coin(0.7))
    return [x, weight, *_linear_params(b, x, out)], {
        "strides": (b.choice((1, 2)),) * 2, "padding": (b.randint(0, k // 2),) * 4,
        "groups": groups, "channels": out, "kernel_size": (k, k), "out_dtype": "int32"}


@sampler("qnn.dense")
def _dense(b):
    x = _qdata(b, 2, lo=1, hi=9)
    units = b.randint(1, 20)
    weight = b.new((units, b.shape(x)[1]), "int8", const=b.coin(0.7))
    return [x, weight, *_linear_params(b, x, units)], {"units": units, "out_dtype": "int32"}


@sampler("qnn.batch_matmul")
def _batch_matmul(b):
    x = _qdata(b, 3, lo=1, hi=6)
    bb, m, k = b.shape(x)
    y = b.new((bb, b.randint(1, 6), k), b.choice(("int8", b.dtype(x))))
    return [x, y, _zp(b, b.dtype(x)), _zp(b, b.dtype(y)), _scale(b), _scale(b)], {
        "out_dtype": "int32"}


def _int8_weight(b: Builder, shape) -> np.ndarray:
    return b.nrng.integers(-128, 128, size=shape).astype("int8")


@sampler("qnn.contrib_dense_packed")
def _dense_packed(b):
    x = _qdata(b, 2, ("uint8",), lo=1, hi=40)
    units = b.randint(1, 40)
    w = pack_weight(_int8_weight(b, (units, b.shape(x)[1])))
    return [x, b.new(w.shape, "int8", const=True, exact=w)], {"units": units}


def _packed_window(b: Builder, hw) -> dict:
    k = b.choice((1, 3)) if min(hw) >= 3 else 1
    return {"kernel_size": (k, k), "strides": (b.choice((1, 2)),) * 2,
            "padding": (b.randint(0, k // 2),) * 4, "pad_value": b.choice((0, 128, 255))}


def _layout(b: Builder, x: int, requant: bool) -> tuple[str, int, tuple]:
    """A layout for the packed convolution of ``x`` (its 4-d shape read in it), its
    channels and its spatial extents; the requantizing forms are NHWC alone."""
    layout = "NHWC" if requant or b.coin(0.5) else "NCHW"
    n, d1, d2, d3 = b.shape(x)
    return (layout, d1, (d2, d3)) if layout == "NCHW" else (layout, d3, (d1, d2))


def _requant_inputs(b: Builder, channels: int) -> tuple[list, dict]:
    """A bias and a scale per channel, and the output's zero point and clamp."""
    zp = b.randint(0, 255)
    lo, hi = sorted((b.randint(0, 255), b.randint(0, 255)))
    bias = b.new((channels,), "int32", const=True,
                 exact=b.nrng.integers(-3000, 3000, size=channels).astype("int32"))
    scale = b.new((channels,), "float32", const=True,
                  exact=[b.choice(_SCALES) / 64 for _ in range(channels)])
    return [bias, scale], {"zero_point": zp, "clip_min": lo - zp, "clip_max": hi - zp}


def _conv_packed(requant: bool):
    def sample(b):
        x = _qdata(b, 4, ("uint8",), lo=1, hi=7)
        layout, c, hw = _layout(b, x, requant)
        attrs = {**_packed_window(b, hw), "layout": layout}
        out = b.randint(1, 20)
        kernel = _int8_weight(b, (out, c, *attrs["kernel_size"]))
        packed = pack_weight(conv_kernel_columns(kernel))
        args = [x, b.new(packed.shape, "int8", const=True, exact=packed)]
        extra, more = _requant_inputs(b, out) if requant else ([], {})
        return args + extra, {**attrs, **more, "channels": out}

    return sample


def _depthwise(requant: bool):
    def sample(b):
        x = _qdata(b, 4, ("uint8",), lo=1, hi=7)
        layout, c, hw = _layout(b, x, requant)
        attrs = {**_packed_window(b, hw), "layout": layout}
        kernel = _int8_weight(b, (c, 1, *attrs["kernel_size"]))
        args = [x, b.new(kernel.shape, "int8", const=True, exact=kernel)]
        extra, more = _requant_inputs(b, c) if requant else ([], {})
        return args + extra, {**attrs, **more, "channels": c}

    return sample


sampler("qnn.contrib_conv2d_packed")(_conv_packed(False))
sampler("qnn.contrib_conv2d_packed_requant")(_conv_packed(True))
sampler("qnn.contrib_depthwise_conv2d")(_depthwise(False))
sampler("qnn.contrib_depthwise_conv2d_requant")(_depthwise(True))


__all__: list[str] = []
