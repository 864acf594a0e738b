"""Upsampling (``F.interpolate``) without a resize op: nearest as a gather of static source
indices, (bi)linear as products with static interpolation matrices. Both tables of
numbers come from torch itself on 1-D probes, so the coordinate rules are torch's."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from ...ir.expr import const
from ...op import nn as N
from ...op import transform as T
from ..common import ConversionError, ConverterTable
from .base import dtype, out_shape, shape, static

TABLE = ConverterTable()


def _scale(scales, i):
    if scales is None:
        return None
    s = scales[i] if isinstance(scales, (list, tuple)) else scales
    return None if s is None else float(s)


def _probe(size_in, size_out, scale, mode, align_corners=None):
    """torch's 1-D resize applied to the identity: an ``(in, out)`` matrix."""
    eye = torch.eye(size_in, dtype=torch.float64)[None]
    kw = {"scale_factor": scale} if scale is not None else {"size": size_out}
    if align_corners is not None:
        kw["align_corners"] = align_corners
    m = F.interpolate(eye, mode=mode, **kw)[0]
    if m.shape[-1] != size_out:  # the scale did not reproduce the size: use the size
        m = F.interpolate(eye, size=size_out, mode=mode, align_corners=align_corners)[0]
    return m.numpy()


def _resize(x, mode, scales, align_corners=None):
    xs, ys = shape(x), out_shape()
    if not static(*xs[2:], *ys[2:]):
        raise ConversionError("upsampling with dynamic spatial dimensions")
    y = x
    for i, a in enumerate(range(2, len(xs))):
        if xs[a] == ys[a] and _scale(scales, i) in (None, 1.0):
            continue
        m = _probe(xs[a], ys[a], _scale(scales, i), mode, align_corners)
        if mode == "nearest":
            idx = m.argmax(axis=0).astype("int64")
            factor = ys[a] // xs[a]
            if ys[a] == factor * xs[a] and np.array_equal(idx, np.arange(ys[a]) // factor):
                y = T.repeat(y, factor, a)
            else:
                y = T.take(y, const(idx), axis=a)
        else:  # move axis a last, multiply by the (out, in) matrix, move it back
            n = len(xs)
            perm = [d for d in range(n) if d != a] + [a]
            inv = list(np.argsort(perm))
            moved = T.transpose(y, perm) if a != n - 1 else y
            w = const(np.ascontiguousarray(m.T).astype(dtype(x)))
            prod = N.matmul(moved, w, transpose_b=True)
            y = T.transpose(prod, [int(d) for d in inv]) if a != n - 1 else prod
    return y




@TABLE.register("aten.upsample_nearest2d.vec", "aten.upsample_nearest1d.vec")
def upsample_nearest_vec(input, output_size, scale_factors):  # noqa: A002
    return _resize(input, "nearest", scale_factors)


@TABLE.register("aten.upsample_nearest2d.default")
def upsample_nearest2d(self, output_size, scales_h=None, scales_w=None):
    return _resize(self, "nearest", [scales_h, scales_w])


@TABLE.register("aten.upsample_bilinear2d.vec")
def upsample_bilinear_vec(input, output_size, align_corners, scale_factors):  # noqa: A002
    return _resize(input, "linear", scale_factors, bool(align_corners))


@TABLE.register("aten.upsample_linear1d.vec")
def upsample_linear_vec(input, output_size, align_corners, scale_factors):  # noqa: A002
    return _resize(input, "linear", scale_factors, bool(align_corners))


@TABLE.register("aten.upsample_bilinear2d.default")
def upsample_bilinear2d(self, output_size, align_corners, scales_h=None, scales_w=None):
    return _resize(self, "linear", [scales_h, scales_w], bool(align_corners))
