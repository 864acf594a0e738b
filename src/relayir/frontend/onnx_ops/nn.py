"""Layers: MatMul, Gemm, Conv (1/2/3-D), ConvTranspose, pooling, normalisation (LRN
included), softmax, Dropout."""

from __future__ import annotations

import itertools

import numpy as np

from ...ir.expr import const
from ...op import dynamic as D
from ...op import nn as N
from ...op import reduce as R
from ...op import tensor as E
from ...op import transform as T
from ..common import ConversionError
from .base import OnnxTable, dtype, ndim, shape, value

TABLE = OnnxTable()


@TABLE.register("MatMul")
def matmul(a, b):
    """numpy ``matmul``: 1-D operands get a unit dim (dropped after), batch dims broadcast."""
    na, nb = ndim(a), ndim(b)
    if na == 1:
        a = T.expand_dims(a, 0)
    if nb == 1:
        b = T.expand_dims(b, 1)
    sa, sb = shape(a), shape(b)
    if len(sa) == 2 and len(sb) == 2:
        y = N.matmul(a, b)
    elif len(sb) == 2:
        k = sa[-1] if isinstance(sa[-1], int) else sb[0]  # the shared extent
        rows = T.reshape(a, (-1, k)) if isinstance(k, int) else D.reshape(
            a, T.concatenate([const(np.asarray([-1], "int64")),
                              T.strided_slice(D.shape_of(b), [0], [1])], 0))
        y = _unflatten(N.matmul(rows, b), a, sb[-1])
    else:
        lead = tuple(np.broadcast_shapes(tuple(sa[:-2]), tuple(sb[:-2])))
        a3 = T.reshape(T.broadcast_to(a, (*lead, *sa[-2:])), (-1, *sa[-2:]))
        b3 = T.reshape(T.broadcast_to(b, (*lead, *sb[-2:])), (-1, *sb[-2:]))
        y = T.reshape(N.batch_matmul(a3, b3, transpose_b=False), (*lead, sa[-2], sb[-1]))
    if na == 1:
        y = T.squeeze(y, [ndim(y) - 2])
    if nb == 1:
        y = T.squeeze(y, [ndim(y) - 1])
    return y


def _unflatten(y, a, last):
    """``y`` (rows, ``last``) reshaped to ``a``'s leading dims + ``last``; more than one
    run-time leading extent takes the target from ``shape_of(a)``."""
    dims = (*shape(a)[:-1], last)
    unknown = [d for d in dims if not isinstance(d, int)]
    if len(unknown) <= 1:
        return T.reshape(y, [d if isinstance(d, int) else -1 for d in dims])
    target = T.concatenate([T.strided_slice(D.shape_of(a), [0], [len(dims) - 1]),
                            T.strided_slice(D.shape_of(y), [1], [2])], 0)
    return D.reshape(y, target)


@TABLE.register("Gemm")
def gemm(a, b, c=None, alpha=1.0, beta=1.0, transA=0, transB=0, **_):  # noqa: N803
    y = N.matmul(a, b, transpose_a=bool(transA), transpose_b=bool(transB))
    if alpha != 1.0:
        y = E.multiply(y, const(np.asarray(alpha, dtype(a))))
    if c is not None:
        if beta != 1.0:
            c = E.multiply(c, const(np.asarray(beta, dtype(a))))
        y = E.add(y, c)
    return y


def _auto_pads(auto_pad, in_hw, kernel, strides, dilations):
    before, after = [], []
    for d, k, s, dl in zip(in_hw, kernel, strides, dilations):
        out = -(-d // s)
        total = max((out - 1) * s + (k - 1) * dl + 1 - d, 0)
        small, big = total // 2, total - total // 2
        lo, hi = (small, big) if auto_pad == "SAME_UPPER" else (big, small)
        before.append(lo)
        after.append(hi)
    return before + after


def _geometry(x, kernel, strides, pads, dilations, auto_pad):
    n = len(kernel)
    strides = list(strides or [1] * n)
    dilations = list(dilations or [1] * n)
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        pads = _auto_pads(auto_pad, shape(x)[2:], kernel, strides, dilations)
    elif auto_pad == "VALID" or pads is None:
        pads = [0] * (2 * n)
    return strides, list(pads), dilations


def _spatial(x, what: str, ranks=(1, 2, 3)) -> int:
    n = ndim(x) - 2
    if n not in ranks:
        raise ConversionError(f"{what} on a {n}-D input not supported "
                              f"({'/'.join(f'{r}-D' for r in ranks)} only)")
    return n


_CONV = {1: N.conv1d, 2: N.conv2d, 3: N.conv3d}
_MAX_POOL = {1: N.max_pool1d, 2: N.max_pool2d, 3: N.max_pool3d}
_AVG_POOL = {1: N.avg_pool1d, 2: N.avg_pool2d, 3: N.avg_pool3d}
_CONV_TRANSPOSE = {1: N.conv1d_transpose, 2: N.conv2d_transpose, 3: N.conv3d_transpose}


@TABLE.register("Conv")
def conv(x, w, b=None, auto_pad="NOTSET", dilations=None, group=1, kernel_shape=None,
         pads=None, strides=None):
    n = _spatial(x, "Conv")
    kernel = list(kernel_shape or shape(w)[2:])
    strides, pads, dilations = _geometry(x, kernel, strides, pads, dilations, auto_pad)
    y = _CONV[n](x, w, strides=strides, padding=pads, dilation=dilations, groups=int(group),
                 channels=shape(w)[0], kernel_size=kernel)
    return y if b is None else N.bias_add(y, b, axis=1)


def _transpose_pads(x, kernel, strides, dilations, output_padding, output_shape, auto_pad):
    """ONNX's padding of ConvTranspose when ``output_shape`` or SAME auto_pad fix the
    output: the total is split evenly, the odd one out going after (before for
    SAME_LOWER and NOTSET, as the spec says)."""
    size = shape(x)[2:]
    if output_shape is None:
        output_shape = [d * s for d, s in zip(size, strides)]
    output_shape = list(output_shape)[-len(size):]
    before, after = [], []
    for d, k, s, dl, op, o in zip(size, kernel, strides, dilations, output_padding,
                                  output_shape):
        total = s * (d - 1) + op + (k - 1) * dl + 1 - o
        small, big = total // 2, total - total // 2
        before.append(small if auto_pad == "SAME_UPPER" else big)
        after.append(big if auto_pad == "SAME_UPPER" else small)
    return before + after


@TABLE.register("ConvTranspose")
def conv_transpose(x, w, b=None, auto_pad="NOTSET", dilations=None, group=1,
                   kernel_shape=None, output_padding=None, output_shape=None, pads=None,
                   strides=None):
    n = _spatial(x, "ConvTranspose")
    kernel = list(kernel_shape or shape(w)[2:])
    strides = list(strides or [1] * n)
    dilations = list(dilations or [1] * n)
    output_padding = list(output_padding or [0] * n)
    if output_shape is not None or (pads is None and auto_pad in ("SAME_UPPER", "SAME_LOWER")):
        pads = _transpose_pads(x, kernel, strides, dilations, output_padding, output_shape,
                               auto_pad)
    pads = list(pads or [0] * (2 * n))
    for j in range(n):  # a negative end pad (output_shape past the natural size) extends
        if pads[n + j] < 0:
            output_padding[j] -= pads[n + j]
            pads[n + j] = 0
    y = _CONV_TRANSPOSE[n](x, w, strides=strides, padding=pads, dilation=dilations,
                           groups=int(group), channels=shape(w)[1] * int(group),
                           kernel_size=kernel, output_padding=output_padding)
    return y if b is None else N.bias_add(y, b, axis=1)


def _pool(table, x, kernel_shape, auto_pad, pads, strides, dilations, ceil_mode, **extra):
    n = _spatial(x, "pooling")
    strides, pads, dilations = _geometry(x, kernel_shape, strides, pads, dilations, auto_pad)
    return table[n](x, pool_size=tuple(kernel_shape), strides=strides, dilation=dilations,
                    padding=pads, ceil_mode=bool(ceil_mode), **extra)


@TABLE.register("MaxPool")
def max_pool(x, kernel_shape, auto_pad="NOTSET", pads=None, strides=None, dilations=None,
             ceil_mode=0, storage_order=0, _outputs=1):
    y = _pool(_MAX_POOL, x, kernel_shape, auto_pad, pads, strides, dilations, ceil_mode)
    if _outputs == 1:
        return y
    strides, pads, dilations = _geometry(x, kernel_shape, strides, pads, dilations, auto_pad)
    return y, _max_pool_indices(x, shape(y), kernel_shape, strides, pads, dilations,
                                int(storage_order))


def _max_pool_indices(x, out_shape, kernel, strides, pads, dilations, storage_order):
    """ONNX's Indices output: the flat input position of each window's first maximum.

    Every window tap is a strided slice of the (-inf padded) input; ``argmax`` over the
    stacked taps picks the tap, and constant tables turn (tap, output position) into the
    input position, flattened row-major (``storage_order=1``: spatial axes reversed)."""
    xs, nd = shape(x), ndim(x) - 2
    if not all(isinstance(d, int) for d in (*xs, *out_shape)):
        raise ConversionError("MaxPool Indices need static shapes")
    outs, size = out_shape[2:], xs[2:]
    need = [(o - 1) * s + (k - 1) * d + 1 for o, s, k, d in zip(outs, strides, kernel,
                                                                  dilations)]
    widths = [(0, 0), (0, 0)] + [(pads[j], max(need[j] - size[j] - pads[j], 0))
                                 for j in range(nd)]
    xp = N.pad(x, widths, const(np.asarray(-np.inf, dtype(x))))
    offsets = list(itertools.product(*(range(k) for k in kernel)))
    taps = []
    for offset in offsets:
        begin = [r * d for r, d in zip(offset, dilations)]
        end = [b + (o - 1) * s + 1 for b, o, s in zip(begin, outs, strides)]
        taps.append(T.strided_slice(xp, [0, 0, *begin], [*xs[:2], *end], [1, 1, *strides]))
    tap = T.cast(R.argmax(T.stack(taps, axis=-1), axis=[-1]), "int64")
    table = np.asarray(offsets, "int64")  # (taps, nd)
    order = list(range(nd)) if storage_order == 0 else list(reversed(range(nd)))
    flat = None
    for j in order:
        axis_shape = [1] * (2 + nd)
        axis_shape[2 + j] = outs[j]
        base = (np.arange(outs[j]) * strides[j] - pads[j]).reshape(axis_shape)
        pos = E.add(T.take(const(table[:, j] * dilations[j]), tap),
                    const(base.astype("int64")))
        flat = pos if flat is None else E.add(E.multiply(flat, const(np.int64(size[j]))), pos)
    spatial = int(np.prod(size))
    lead = (np.arange(xs[0])[:, None] * xs[1] + np.arange(xs[1])) * spatial
    return E.add(flat, const(lead.reshape(*xs[:2], *[1] * nd).astype("int64")))


@TABLE.register("AveragePool")
def avg_pool(x, kernel_shape, auto_pad="NOTSET", pads=None, strides=None, dilations=None,
             ceil_mode=0, count_include_pad=0):
    return _pool(_AVG_POOL, x, kernel_shape, auto_pad, pads, strides, dilations, ceil_mode,
                 count_include_pad=bool(count_include_pad))


@TABLE.register("LpPool")
def lp_pool(x, kernel_shape, auto_pad="NOTSET", pads=None, strides=None, dilations=None,
            ceil_mode=0, p=2):
    """``(sum over the window of |x|^p)^(1/p)``, padding counted as zeros: the window sum
    is an average pool that counts the padding, times the window size."""
    xp = E.power(E.abs(x), const(np.asarray(p, dtype(x))))
    avg = _pool(_AVG_POOL, xp, kernel_shape, auto_pad, pads, strides, dilations, ceil_mode,
                count_include_pad=True)
    total = E.multiply(avg, const(np.asarray(np.prod(kernel_shape), dtype(x))))
    return E.power(total, const(np.asarray(1.0 / p, dtype(x))))


@TABLE.register("GlobalLpPool")
def global_lp_pool(x, p=2):
    xp = E.power(E.abs(x), const(np.asarray(p, dtype(x))))
    total = R.sum(xp, axis=list(range(2, ndim(x))), keepdims=True)
    return E.power(total, const(np.asarray(1.0 / p, dtype(x))))


@TABLE.register("GlobalAveragePool")
def global_avg_pool(x):
    if ndim(x) == 4:
        return N.global_avg_pool2d(x)
    return R.mean(x, axis=list(range(2, ndim(x))), keepdims=True)


@TABLE.register("GlobalMaxPool")
def global_max_pool(x):
    if ndim(x) == 4:
        return N.global_max_pool2d(x)
    return R.max(x, axis=list(range(2, ndim(x))), keepdims=True)


@TABLE.register("LRN")
def lrn(x, size, alpha=1e-4, beta=0.75, bias=1.0):
    return N.lrn(x, size=int(size), axis=1, alpha=float(alpha), beta=float(beta),
                 bias=float(bias))


@TABLE.register("BatchNormalization")
def batch_norm(x, scale, bias, mean, var, epsilon=1e-5, momentum=0.9, training_mode=0,
               _outputs=1, **_):
    if training_mode:
        return _batch_norm_training(x, scale, bias, mean, var, epsilon, momentum, _outputs)
    from ...ir.expr import TupleGetItem

    return TupleGetItem(N.batch_norm(x, scale, bias, mean, var, axis=1,
                                     epsilon=float(epsilon)), 0)


def _batch_norm_training(x, scale, bias, mean, var, epsilon, momentum, outputs):
    """Normalise with the batch's statistics; the running mean and variance (outputs 1
    and 2) move towards them by ``1 - momentum``."""
    n = ndim(x)
    axes = [0] + list(range(2, n))
    unit = (-1,) + (1,) * (n - 2)
    cur_mean = R.mean(x, axis=axes)
    centred = E.subtract(x, T.reshape(cur_mean, unit))
    cur_var = R.mean(E.multiply(centred, centred), axis=axes)
    inv = E.divide(scale, E.sqrt(E.add(cur_var, const(np.asarray(epsilon, dtype(x))))))
    y = E.add(E.multiply(centred, T.reshape(inv, unit)), T.reshape(bias, unit))
    m = const(np.asarray(momentum, dtype(x)))
    keep = const(np.asarray(1 - momentum, dtype(x)))
    run_mean = E.add(E.multiply(mean, m), E.multiply(cur_mean, keep))
    run_var = E.add(E.multiply(var, m), E.multiply(cur_var, keep))
    return (y, run_mean, run_var)[:outputs] if outputs > 1 else y


@TABLE.register("LayerNormalization")
def layer_norm(x, scale, bias=None, axis=-1, epsilon=1e-5, stash_type=1,  # noqa: A002
               _outputs=1):
    """The optional Mean and InvStdDev outputs are float32 (``stash_type=1``) with the
    normalised axes kept as 1s."""
    n = ndim(x)
    a = axis % n if axis < 0 else axis
    if a != n - 1 or _outputs > 1:
        xs = T.cast(x, "float32") if stash_type == 1 and dtype(x) != "float32" else x
        mean = R.mean(xs, axis=list(range(a, n)), keepdims=True)
        cen = E.subtract(xs, mean)
        var = R.mean(E.multiply(cen, cen), axis=list(range(a, n)), keepdims=True)
        eps = const(np.asarray(epsilon, dtype(xs)))
        inv = E.divide(const(np.asarray(1, dtype(xs))), E.sqrt(E.add(var, eps)))
        y = E.multiply(cen, inv)
        y = E.multiply(y if dtype(y) == dtype(x) else T.cast(y, dtype(x)), scale)
        y = y if bias is None else E.add(y, bias)
        return (y, mean, inv)[:_outputs] if _outputs > 1 else y
    if bias is None:
        bias = const(np.zeros(shape(x)[-1], dtype(x)))
    return N.layer_norm(x, scale, bias, axis=-1, epsilon=float(epsilon))


@TABLE.register("RMSNormalization")
def rms_norm(x, scale, axis=-1, epsilon=1e-5, stash_type=1):  # noqa: A002
    n = ndim(x)
    axes = list(range(axis + n if axis < 0 else axis, n))
    ms = R.mean(E.multiply(x, x), axis=axes, keepdims=True)
    eps = const(np.asarray(epsilon, dtype(x)))
    return E.multiply(E.divide(x, E.sqrt(E.add(ms, eps))), scale)


@TABLE.register("InstanceNormalization")
def instance_norm(x, scale, bias, epsilon=1e-5):
    return N.instance_norm(x, scale, bias, axis=1, epsilon=float(epsilon))


def _softmax_v1(make):
    def convert(x, axis=1):  # noqa: A002
        n = ndim(x)
        a = axis + n if axis < 0 else axis
        s = shape(x)
        flat = T.reshape(x, (int(np.prod(s[:a], dtype=np.int64)), -1))
        return T.reshape(make(flat, axis=1), s)
    return convert


TABLE.register("Softmax")(_softmax_v1(N.softmax))
TABLE.register("LogSoftmax")(_softmax_v1(N.log_softmax))


@TABLE.register("Softmax", since=13)
def softmax(x, axis=-1):  # noqa: A002
    return N.softmax(x, axis=int(axis))


@TABLE.register("LogSoftmax", since=13)
def log_softmax(x, axis=-1):  # noqa: A002
    return N.log_softmax(x, axis=int(axis))


@TABLE.register("Dropout")
def dropout(x, ratio=None, training_mode=None, _outputs=1, **_):
    """Inference (or a zero ratio): the identity; the optional mask output is all ones.
    Training with a nonzero ratio draws random masks, which has no Relay op."""
    if training_mode is not None and bool(value(training_mode, "training_mode")):
        r = 0.5 if ratio is None else float(value(ratio, "ratio"))
        if r != 0.0:
            raise ConversionError("Dropout in training mode not supported")
    if _outputs == 1:
        return x
    return x, const(np.ones(shape(x), "bool"))

