"""``relay.image.dilation2d`` (morphological dilation) as a graph of relayir ops.

``out[b, c, y, x] = max over (i, j) of pad(data)[b, c, y*sh + i*dh, x*sw + j*dw] +
weight[c, i, j]`` (``NCHW`` data, ``IHW`` weight; ``NHWC`` / ``HWI`` are transposed to
them and back), the padding zeros as Relay (TOPI) pads. It is written as two ``take``s
of constant ``(positions, taps)`` indices, an ``add`` of the weight and a ``max`` over the
taps; the data's height and width and the weight's shape must be static.
"""

from __future__ import annotations

import numpy as np

from ....errors import Error
from ....ir.expr import Constant
from ....op.nn import pad
from ....op.reduce import max as _max
from ....op.tensor import add
from ....op.transform import cast, expand_dims, take, transpose
from ._composed import _type_of


def _pair(v, name: str) -> tuple:
    v = tuple(int(x) for x in (v if isinstance(v, (list, tuple)) else (v, v)))
    if len(v) == 4 and name in ("strides", "dilations"):  # Relay's NHWC-style (1, s, s, 1)
        v = v[1:3]
    if len(v) != 2 or min(v) < 1:
        raise Error(f"relay.image.dilation2d: {name} needs two positive ints, found {v}")
    return v


def _padding(v) -> tuple:
    v = tuple(int(x) for x in (v if isinstance(v, (list, tuple)) else (v,)))
    if len(v) == 1:
        v = v * 4
    elif len(v) == 2:
        v = v + v
    if len(v) != 4 or min(v) < 0:
        raise Error(f"relay.image.dilation2d: padding needs 1, 2 or 4 ints >= 0, found {v}")
    return v  # top, left, bottom, right


def dilation2d(data, weight, strides=(1, 1), padding=(0, 0), dilations=(1, 1),
               data_layout="NCHW", kernel_layout="IHW", out_dtype=""):
    if (data_layout, kernel_layout) not in (("NCHW", "IHW"), ("NHWC", "HWI")):
        raise Error(f"relay.image.dilation2d: takes NCHW data with an IHW kernel or NHWC "
                    f"with HWI, found {data_layout} and {kernel_layout}")
    (sh, sw), (dh, dw) = _pair(strides, "strides"), _pair(dilations, "dilations")
    top, left, bottom, right = _padding(padding)
    dtype = _type_of(data, "image.dilation2d")
    wtype = _type_of(weight, "image.dilation2d")
    if data_layout == "NHWC":
        data, weight = transpose(data, (0, 3, 1, 2)), transpose(weight, (2, 0, 1))
        shape = [dtype.shape[i] for i in (0, 3, 1, 2)]
        wshape = [wtype.shape[i] for i in (2, 0, 1)]
    else:
        shape, wshape = list(dtype.shape), list(wtype.shape)
    if len(shape) != 4 or len(wshape) != 3 or not all(
            isinstance(d, int) for d in (*shape[2:], *wshape[1:])):
        raise Error(f"relay.image.dilation2d: needs 4-d data and a 3-d weight with static "
                    f"spatial extents, found {dtype} and {wtype}")
    (h, w), (kh, kw) = shape[2:], wshape[1:]
    oh = (h + top + bottom - (kh - 1) * dh - 1) // sh + 1
    ow = (w + left + right - (kw - 1) * dw - 1) // sw + 1
    if oh < 1 or ow < 1:
        raise Error(f"relay.image.dilation2d: the dilated {kh}x{kw} kernel does not fit the "
                    f"padded {h}x{w} input")
    if top or left or bottom or right:
        data = pad(data, ((0, 0), (0, 0), (top, bottom), (left, right)))
    rows = np.arange(oh)[:, None] * sh + np.arange(kh)[None, :] * dh  # (oh, kh)
    cols = np.arange(ow)[:, None] * sw + np.arange(kw)[None, :] * dw  # (ow, kw)
    x = take(data, Constant(rows.astype("int64")), axis=2)  # (n, c, oh, kh, w')
    x = take(x, Constant(cols.astype("int64")), axis=4)  # (n, c, oh, kh, ow, kw)
    wt = expand_dims(expand_dims(weight, 1), 3)  # (c, 1, kh, 1, kw): c, oh, kh, ow, kw
    out = _max(add(x, wt), axis=(3, 5))  # (n, c, oh, ow)
    if out_dtype and out_dtype != dtype.dtype:
        out = cast(out, out_dtype)
    return transpose(out, (0, 2, 3, 1)) if data_layout == "NHWC" else out
