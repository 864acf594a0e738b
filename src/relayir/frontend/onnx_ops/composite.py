"""ONNX ops that are short compositions of Relay ops: activations (Celu, Mish, HardSwish,
Softsign, Swish, SwiGLU, ThresholdedRelu, Shrink), hyperbolic and inverse trigonometric
functions, Hardmax, normalisations (LpNormalization, MeanVarianceNormalization,
GroupNormalization), IsInf/IsNaN, EyeLike, small determinants, CenterCropPad with a
constant shape, ReverseSequence and Col2Im.
"""

from __future__ import annotations

import numpy as np

from ...ir.expr import const
from ...op import nn as N
from ...op import reduce as R
from ...op import tensor as E
from ...op import transform as T
from ..common import ConversionError
from . import base
from .base import OnnxTable, dtype, ints, ndim, shape
from .base import axis as norm_axis
from .elementwise import _scalar, onnx_dtype
from .shape import _static

TABLE = OnnxTable()


# ---------------------------------------------------------------- activations


@TABLE.register("Celu", since=12)
def celu(x, alpha=1.0):
    a = _scalar(alpha, x)
    neg = E.multiply(a, E.subtract(E.exp(E.divide(x, a)), _scalar(1, x)))
    return E.add(E.maximum(x, _scalar(0, x)), E.minimum(neg, _scalar(0, x)))


def _softplus(x):
    return E.log(E.add(E.exp(x), _scalar(1, x)))


@TABLE.register("Mish", since=18)
def mish(x):
    return E.multiply(x, E.tanh(_softplus(x)))


@TABLE.register("HardSwish", since=14)
def hard_swish(x):
    gate = T.clip(E.add(E.divide(x, _scalar(6, x)), _scalar(0.5, x)), 0.0, 1.0)
    return E.multiply(x, gate)


@TABLE.register("Softsign")
def softsign(x):
    return E.divide(x, E.add(E.abs(x), _scalar(1, x)))


def _swish(x, alpha):
    return E.multiply(x, E.sigmoid(x if alpha == 1.0 else E.multiply(_scalar(alpha, x), x)))


@TABLE.register("Swish", since=24)
def swish(x, alpha=1.0):
    return _swish(x, float(alpha))


@TABLE.register("SwiGLU", since=28)
def swiglu(a, b, alpha=1.0):
    if shape(a) != shape(b) or dtype(a) != dtype(b):
        raise ConversionError(f"SwiGLU needs A and B of one shape and dtype, found "
                              f"{shape(a)} {dtype(a)} and {shape(b)} {dtype(b)}")
    return E.multiply(_swish(a, float(alpha)), b)


@TABLE.register("ThresholdedRelu", since=10)
def thresholded_relu(x, alpha=1.0):
    return T.where(E.greater(x, _scalar(alpha, x)), x, _scalar(0, x))


@TABLE.register("Shrink", since=9)
def shrink(x, bias=0.0, lambd=0.5):
    lam = _scalar(lambd, x)
    b = _scalar(bias, x)
    above = T.where(E.greater(x, lam), E.subtract(x, b), _scalar(0, x))
    return T.where(E.less(x, E.negative(lam)), E.add(x, b), above)


# ---------------------------------------------------------------- hyperbolic functions


def _half(x):
    return _scalar(0.5, x)


@TABLE.register("Sinh", since=9)
def sinh(x):
    return E.multiply(_half(x), E.subtract(E.exp(x), E.exp(E.negative(x))))


@TABLE.register("Cosh", since=9)
def cosh(x):
    return E.multiply(_half(x), E.add(E.exp(x), E.exp(E.negative(x))))


@TABLE.register("Asinh", since=9)
def asinh(x):
    return E.log(E.add(x, E.sqrt(E.add(E.multiply(x, x), _scalar(1, x)))))


@TABLE.register("Acosh", since=9)
def acosh(x):
    return E.log(E.add(x, E.sqrt(E.subtract(E.multiply(x, x), _scalar(1, x)))))


@TABLE.register("Atanh", since=9)
def atanh(x):
    one = _scalar(1, x)
    return E.multiply(_half(x), E.log(E.divide(E.add(one, x), E.subtract(one, x))))


@TABLE.register("Tan", since=7)
def tan(x):
    return E.tan(x)


# ---------------------------------------------------------------- inverse trigonometry


def _atan(x):
    """Cephes' ``atanf``: reduce |x| to [0, tan(pi/8)] around 0, pi/4 or pi/2, then a
    degree-9 odd polynomial. Accurate to float32 rounding (float64 inputs get float32
    accuracy: Relay has no atan primitive)."""
    a = E.abs(x)
    big = E.greater(a, _scalar(2.414213562373095, x))
    mid = E.greater(a, _scalar(0.4142135623730950, x))
    one = _scalar(1, x)
    r = T.where(big, E.negative(E.divide(one, a)),
                T.where(mid, E.divide(E.subtract(a, one), E.add(a, one)), a))
    base = T.where(big, _scalar(np.pi / 2, x), T.where(mid, _scalar(np.pi / 4, x),
                                                       _scalar(0, x)))
    z = E.multiply(r, r)
    poly = _scalar(8.05374449538e-2, x)
    for c in (-1.38776856032e-1, 1.99777106478e-1, -3.33329491539e-1):
        poly = E.add(E.multiply(poly, z), _scalar(c, x))
    y = E.add(E.add(E.multiply(E.multiply(poly, z), r), r), base)
    return T.where(E.less(x, _scalar(0, x)), E.negative(y), y)


@TABLE.register("Atan", since=7)
def atan(x):
    return _atan(x)


@TABLE.register("Asin", since=7)
def asin(x):
    """``atan(x / sqrt((1 - x)(1 + x)))``; the factored form keeps precision near 1."""
    one = _scalar(1, x)
    return _atan(E.divide(x, E.sqrt(E.multiply(E.subtract(one, x), E.add(one, x)))))


@TABLE.register("Acos", since=7)
def acos(x):
    """``2 atan(sqrt((1 - x) / (1 + x)))``, accurate near 1 where ``pi/2 - asin`` is not."""
    one = _scalar(1, x)
    half = _atan(E.sqrt(E.divide(E.subtract(one, x), E.add(one, x))))
    return E.multiply(_scalar(2, x), half)


# ---------------------------------------------------------------- hardmax, IsInf, IsNaN


def _hardmax(x, a):
    """1 at the first maximum along axis ``a``, 0 elsewhere."""
    s = _static(x, "Hardmax")
    idx = R.argmax(x, axis=[a], keepdims=True)
    lay = [1] * len(s)
    lay[a] = s[a]
    ids = const(np.arange(s[a], dtype=dtype(idx)).reshape(lay))
    return T.cast(E.equal(idx, ids), dtype(x))


@TABLE.register("Hardmax")
def hardmax_v1(x, axis=1):  # noqa: A002
    """Before opset 13: the hardmax of the input flattened to 2-D at ``axis``."""
    s = _static(x, "Hardmax")
    a = norm_axis(axis, len(s))
    flat = T.reshape(x, (int(np.prod(s[:a], dtype=np.int64)), -1))
    return T.reshape(_hardmax(flat, 1), s)


@TABLE.register("Hardmax", since=13)
def hardmax(x, axis=-1):  # noqa: A002
    return _hardmax(x, norm_axis(axis, ndim(x)))


@TABLE.register("IsInf", since=10)
def is_inf(x, detect_negative=1, detect_positive=1):
    inf = E.isinf(x)
    if detect_negative and detect_positive:
        return inf
    if not detect_negative and not detect_positive:
        return E.logical_and(inf, E.logical_not(inf))
    sign = E.greater if detect_positive else E.less
    return E.logical_and(inf, sign(x, _scalar(0, x)))


@TABLE.register("IsNaN", since=9)
def is_nan(x):
    return E.isnan(x)


# ---------------------------------------------------------------- normalisation


@TABLE.register("LpNormalization")
def lp_normalization(x, axis=-1, p=2):  # noqa: A002
    a = norm_axis(axis, ndim(x))
    if p == 1:
        norm = R.sum(E.abs(x), axis=[a], keepdims=True)
    elif p == 2:
        norm = E.sqrt(R.sum(E.multiply(x, x), axis=[a], keepdims=True))
    else:
        raise ConversionError(f"LpNormalization supports p=1 or p=2, found p={p}")
    zero = _scalar(0, x)
    return T.where(E.equal(norm, zero), zero, E.divide(x, norm))


@TABLE.register("MeanVarianceNormalization", since=9)
def mean_variance_normalization(x, axes=(0, 2, 3)):
    """``(x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9)``, ONNX's function body."""
    axes = [norm_axis(a, ndim(x)) for a in axes]
    mean = R.mean(x, axis=axes, keepdims=True)
    var = E.subtract(R.mean(E.multiply(x, x), axis=axes, keepdims=True),
                     E.multiply(mean, mean))
    return E.divide(E.subtract(x, mean), E.add(E.sqrt(var), _scalar(1e-9, x)))


def _group_norm(x, scale, bias, num_groups, epsilon):
    return N.group_norm(x, scale, bias, num_groups=int(num_groups), axis=1,
                        epsilon=float(epsilon))


@TABLE.register("GroupNormalization", since=18)
def group_normalization_v18(x, scale, bias, num_groups, epsilon=1e-5, stash_type=1):
    """Opset 18: ``scale`` and ``bias`` hold one value per group."""
    channels = _static(x, "GroupNormalization")[1]
    per = channels // int(num_groups)
    return _group_norm(x, T.repeat(scale, per, axis=0), T.repeat(bias, per, axis=0),
                       num_groups, epsilon)


@TABLE.register("GroupNormalization", since=21)
def group_normalization(x, scale, bias, num_groups, epsilon=1e-5, stash_type=1):
    return _group_norm(x, scale, bias, num_groups, epsilon)


# ---------------------------------------------------------------- constructors


@TABLE.register("EyeLike", since=9)
def eye_like(x, dtype=0, k=0):  # noqa: A002
    s = _static(x, "EyeLike")
    if len(s) != 2:
        raise ConversionError(f"EyeLike needs a 2-D input, found {s}")
    out = onnx_dtype(dtype) if dtype else base.dtype(x)
    return const(np.eye(s[0], s[1], k=int(k), dtype=out))


def _entry(x, i, j):
    n = ndim(x)
    return T.squeeze(T.strided_slice(x, [i, j], [i + 1, j + 1], axes=[n - 2, n - 1]),
                     [n - 2, n - 1])


@TABLE.register("Det", since=11)
def det(x):
    """Cofactor expansion for matrices up to 3x3 (larger ones need a factorisation)."""
    n = _static(x, "Det")[-1]
    m = [[_entry(x, i, j) for j in range(n)] for i in range(n)]
    if n == 1:
        return m[0][0]
    if n == 2:
        return E.subtract(E.multiply(m[0][0], m[1][1]), E.multiply(m[0][1], m[1][0]))
    if n == 3:
        def minor(j):
            c = [c for c in range(3) if c != j]
            return E.subtract(E.multiply(m[1][c[0]], m[2][c[1]]),
                              E.multiply(m[1][c[1]], m[2][c[0]]))
        return E.add(E.subtract(E.multiply(m[0][0], minor(0)), E.multiply(m[0][1], minor(1))),
                     E.multiply(m[0][2], minor(2)))
    raise ConversionError(f"Det of {n}x{n} matrices not supported (up to 3x3)")


@TABLE.register("CenterCropPad", since=18)
def center_crop_pad(x, target, axes=None):
    """Crop or zero-pad each listed axis around its centre to a constant size."""
    s = _static(x, "CenterCropPad")
    sizes = ints(target, "shape")
    axes = list(range(len(s))) if axes is None else [norm_axis(a, len(s)) for a in axes]
    for a, want in zip(axes, sizes):
        have = s[a]
        if want < have:
            start = (have - want) // 2
            x = T.strided_slice(x, [start], [start + want], axes=[a])
        elif want > have:
            before = (want - have) // 2
            pads = [(0, 0)] * len(s)
            pads[a] = (before, want - have - before)
            x = N.pad(x, pads)
    return x


# ---------------------------------------------------------------- rearrangements


@TABLE.register("ReverseSequence", since=10)
def reverse_sequence(x, sequence_lens, batch_axis=1, time_axis=0):
    """Reverse the first ``sequence_lens[b]`` steps of each batch: a per-batch one-hot
    (time x time) matrix times the batch-major data."""
    s = _static(x, "ReverseSequence")
    b_ax, t_ax = norm_axis(batch_axis, len(s)), norm_axis(time_axis, len(s))
    rest = [i for i in range(len(s)) if i not in (b_ax, t_ax)]
    perm = [b_ax, t_ax] + rest
    steps = s[t_ax]
    data = T.reshape(T.transpose(x, perm), (s[b_ax], steps, -1))
    lens = T.reshape(T.cast(sequence_lens, "int64"), (-1, 1))
    t = const(np.arange(steps, dtype="int64").reshape(1, steps))
    src = T.where(E.less(t, lens), E.subtract(E.subtract(lens, t), const(np.int64(1))), t)
    pick = E.equal(T.expand_dims(src, 2), const(np.arange(steps, dtype="int64")))
    out = N.batch_matmul(T.cast(pick, base.dtype(x)), data, transpose_b=False)
    out = T.reshape(out, [s[i] for i in perm])
    return T.transpose(out, [perm.index(i) for i in range(len(s))])


@TABLE.register("Col2Im", since=18)
def col2im(x, image_shape, block_shape, dilations=None, pads=None, strides=None):
    """Sum the columns (N, C * prod(block), L) back into images (N, C, *image_shape)
    through a constant 0/1 placement matrix (columns x pixels)."""
    image, block = ints(image_shape, "image_shape"), ints(block_shape, "block_shape")
    n = len(image)
    dil, strd = list(dilations or [1] * n), list(strides or [1] * n)
    pad = list(pads or [0] * (2 * n))
    batch, rows, length = _static(x, "Col2Im input")
    kernel = int(np.prod(block))
    blocks = [(image[i] + pad[i] + pad[i + n] - dil[i] * (block[i] - 1) - 1) // strd[i] + 1
              for i in range(n)]
    if rows % kernel or int(np.prod(blocks)) != length:
        raise ConversionError(f"Col2Im: input {batch, rows, length} does not hold "
                              f"{blocks} blocks of {block}")
    if kernel * length * int(np.prod(image)) > 1 << 24:
        raise ConversionError("Col2Im: image too large for the placement-matrix form")
    kk = np.stack(np.unravel_index(np.arange(kernel), block), 1)  # (K, n)
    bb = np.stack(np.unravel_index(np.arange(length), blocks), 1)  # (L, n)
    pos = (bb[None] * np.asarray(strd) - np.asarray(pad[:n]) + kk[:, None] * np.asarray(dil))
    inside = np.all((pos >= 0) & (pos < np.asarray(image)), axis=-1)  # (K, L)
    place = np.zeros((kernel * length, int(np.prod(image))), base.dtype(x))
    flat = np.ravel_multi_index(tuple(np.clip(pos, 0, np.asarray(image) - 1).reshape(-1, n).T),
                                image)
    place[np.flatnonzero(inside), flat[inside.ravel()]] = 1
    cols = T.reshape(x, (batch, rows // kernel, kernel * length))
    return T.reshape(N.dense(cols, const(np.ascontiguousarray(place.T))),
                     (batch, rows // kernel, *image))
