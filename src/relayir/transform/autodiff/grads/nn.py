"""Gradients of neural-network ops (``op/nn/``), built from existing ops only.

Convolution: the input gradient is a transposed convolution written as dilate (by the
stride) + pad + ``conv2d`` with flipped, group-transposed weights; the weight gradient
is a ``conv2d`` of the padded input with the output gradient as kernel (batch and
channels swapped, stride and dilation exchanged). Pooling scatters each window tap back
with dilate + pad. So gradients run on every backend that runs the forward ops.
"""

from __future__ import annotations

import itertools

import numpy as np

from ....errors import Error
from ....ir.expr import const
from ....op import nn as _nn
from ....op import reduce as _r
from ....op import tensor as _e
from ....op import transform as _t
from ....op.nn.pool import avg_pool_counts, pool_geometry
from . import GRADIENT
from ._util import along, dilate, dtype_of, pad_crop, scalar, shape_of

# Inference ops that AlterOpLayout introduces after the program a user differentiates.
REFUSED = dict.fromkeys(
    ("nn.contrib_conv2d_NCHWc", "nn.contrib_depthwise_conv2d_NCHWc",
     "nn.contrib_conv2d_winograd_NCHWc", "nn.contrib_conv2d_winograd_weight_transform"),
    "a blocked / Winograd convolution that AlterOpLayout makes for inference; "
    "differentiate the NCHW nn.conv2d program instead")
REFUSED["nn.deformable_conv2d"] = ("no gradient rule yet (a scatter of the bilinear sample "
                                   "weights into data, slopes into offset)")
REFUSED["nn.contrib_dense_pack"] = ("a dense layer with a pre-packed weight, made for inference; "
                                    "differentiate the nn.dense program instead")


def _flat2(e, shape):
    return _t.reshape(e, (int(np.prod(shape[:-1])), shape[-1]))


@GRADIENT.register("nn.dense")
def _dense(call, out, g):
    x, w = call.args
    xs, gs = shape_of(x), shape_of(call)
    dx = _nn.dense(g, _t.transpose(w, (1, 0)))
    dw = _nn.dense(_t.transpose(_flat2(g, gs), (1, 0)), _t.transpose(_flat2(x, xs), (1, 0)))
    return [dx, dw]


@GRADIENT.register("nn.matmul")
def _matmul(call, out, g):
    a, b = call.args
    ta, tb = call.attrs.transpose_a, call.attrs.transpose_b
    if len(shape_of(a)) != 2:
        raise Error("gradient of nn.matmul: only rank-2 tensor_a is supported")
    da = (_nn.matmul(b, g, transpose_a=tb, transpose_b=True) if ta
          else _nn.matmul(g, b, transpose_b=not tb))
    db = (_nn.matmul(g, a, transpose_a=True, transpose_b=ta) if tb
          else _nn.matmul(a, g, transpose_a=not ta))
    return [da, db]


@GRADIENT.register("nn.batch_matmul")
def _batch_matmul(call, out, g):
    a, b = call.args
    ta, tb = call.attrs.transpose_a, call.attrs.transpose_b
    da = (_nn.batch_matmul(b, g, transpose_a=tb, transpose_b=True) if ta
          else _nn.batch_matmul(g, b, transpose_b=not tb))
    db = (_nn.batch_matmul(g, a, transpose_a=True, transpose_b=ta) if tb
          else _nn.batch_matmul(a, g, transpose_a=not ta, transpose_b=False))
    sa, sb, so = shape_of(a), shape_of(b), shape_of(call)
    da = _t.reshape(_r.sum(da, axis=[0], keepdims=True), sa) if sa[0] != so[0] else da
    db = _t.reshape(_r.sum(db, axis=[0], keepdims=True), sb) if sb[0] != so[0] else db
    return [da, db]


@GRADIENT.register("nn.bias_add")
def _bias_add(call, out, g):
    n = len(shape_of(call))
    axis = call.attrs.axis % n
    return [g, _r.sum(g, axis=[i for i in range(n) if i != axis])]


@GRADIENT.register("nn.relu")
def _relu(call, out, g):
    x = call.args[0]
    return [_t.where(_e.greater(x, scalar(0.0, x)), g, scalar(0.0, x))]


@GRADIENT.register("nn.leaky_relu")
def _leaky_relu(call, out, g):
    x = call.args[0]
    return [_t.where(_e.greater(x, scalar(0.0, x)), g, g * scalar(call.attrs.alpha, x))]


@GRADIENT.register("nn.prelu")
def _prelu(call, out, g):
    x, alpha = call.args
    n = len(shape_of(x))
    axis = call.attrs.axis % n
    pos = _e.greater(x, scalar(0.0, x))
    ab = along(alpha, axis, n)
    dx = _t.where(pos, g, g * ab)
    da = _r.sum(_t.where(pos, scalar(0.0, x), g * x), axis=[i for i in range(n) if i != axis])
    return [dx, da]


@GRADIENT.register("nn.softmax")
def _softmax(call, out, g):
    axis = call.attrs.axis
    return [out * (g - _r.sum(g * out, axis=[axis], keepdims=True))]


@GRADIENT.register("nn.log_softmax")
def _log_softmax(call, out, g):
    axis = call.attrs.axis
    return [g - _e.exp(out) * _r.sum(g, axis=[axis], keepdims=True)]


@GRADIENT.register("nn.dropout")
def _dropout(call, out, g):
    return [g[0]]  # inference mode: the identity


@GRADIENT.register("nn.pad")
def _pad(call, out, g):
    x = call.args[0]
    if call.attrs.pad_mode != "constant":
        raise Error(f"gradient of nn.pad: pad_mode {call.attrs.pad_mode!r} is not supported")
    shape = shape_of(x)
    begin = [int(b) for b, _ in call.attrs.pad_width]
    dx = _t.strided_slice(g, begin, [b + d for b, d in zip(begin, shape)])
    dv = _r.sum(g) - _r.sum(dx)
    return [dx, dv]


# ---------------------------------------------------------------- convolution

_CONV = {1: _nn.conv1d, 2: _nn.conv2d, 3: _nn.conv3d}


def _conv_check(attrs, kernel_letters="OI"):
    sp = attrs._spatial
    data, kernel = "NC" + sp, kernel_letters + sp
    if attrs.data_layout != data or (attrs.kernel_layout or kernel) != kernel or (
            attrs.out_layout or data) != data:
        raise Error(f"gradient of convolution: only {data}/{kernel} layouts are supported, "
                    f"found {attrs.data_layout}/{attrs.kernel_layout}")


def _spatial_axes(nd: int) -> tuple:
    return tuple(range(2, 2 + nd))


def conv_input_grad(w, g, xs, ws, gs, strides, padding, dilation, groups, dtype):
    """The input gradient of the N-d ``conv(x, w)`` (``NC...``/``OI...``) for output
    gradient ``g``: dilate ``g`` by the stride, pad, correlate with flipped weights."""
    c, sizes = xs[1], xs[2:]
    o, ig, *ks = ws
    outs, nd, og = gs[2:], len(sizes), o // groups
    gd, cur = g, list(gs)
    for i in range(nd):
        gd = dilate(gd, tuple(cur), 2 + i, strides[i], dtype)
        cur[2 + i] = (outs[i] - 1) * strides[i] + 1
    pads = [(0, 0), (0, 0)]
    for i in range(nd):
        kd = dilation[i] * (ks[i] - 1) + 1
        pads.append((kd - 1 - padding[i],
                     sizes[i] + padding[i] - 1 - (outs[i] - 1) * strides[i]))
    gd = pad_crop(gd, tuple(cur), pads, 0.0, dtype)
    wt = _t.reshape(w, (groups, og, ig, *ks))
    wt = _t.reshape(_t.transpose(wt, (0, 2, 1, *range(3, 3 + nd))), (groups * ig, og, *ks))
    for axis in _spatial_axes(nd):
        wt = _t.reverse(wt, axis)
    return _CONV[nd](gd, wt, dilation=dilation, groups=groups, channels=c, kernel_size=ks)


def conv_weight_grad(x, g, xs, ws, gs, strides, padding, dilation, groups, dtype):
    """The weight gradient of the N-d ``conv(x, w)``: the padded input correlated with
    ``g`` (batch and channels swapped, stride and dilation exchanged)."""
    sizes, outs, nd = xs[2:], gs[2:], len(xs) - 2
    o, ig, *ks = ws
    og = o // groups
    pads = [(0, 0), (0, 0)]
    for i in range(nd):
        kd = dilation[i] * (ks[i] - 1) + 1
        pads.append((padding[i], (outs[i] - 1) * strides[i] + kd - sizes[i] - padding[i]))
    xp = pad_crop(x, xs, pads, 0.0, dtype)
    swap = (1, 0, *_spatial_axes(nd))
    r = _CONV[nd](_t.transpose(xp, swap), _t.transpose(g, swap), strides=dilation,
                  dilation=strides, kernel_size=outs)  # (c, o, k...)
    if groups == 1:
        return _t.transpose(r, swap)
    r = _t.reshape(r, (groups, ig, groups, og, *ks))
    eye = np.eye(groups, dtype=dtype).reshape(groups, 1, groups, 1, *[1] * nd)
    r = _r.sum(r * const(eye), axis=[2])
    return _t.reshape(_t.transpose(r, (0, 2, 1, *range(3, 3 + nd))), ws)


@GRADIENT.register("nn.conv1d", "nn.conv2d", "nn.conv3d")
def _conv(call, out, g):
    x, w = call.args
    a = call.attrs
    _conv_check(a)
    xs, ws, gs, dtype = shape_of(x), shape_of(w), shape_of(call), dtype_of(x)
    geometry = (a.strides, a.padding, a.dilation, a.groups, dtype)
    return [conv_input_grad(w, g, xs, ws, gs, *geometry),
            conv_weight_grad(x, g, xs, ws, gs, *geometry)]


@GRADIENT.register("nn.conv1d_transpose", "nn.conv2d_transpose", "nn.conv3d_transpose")
def _conv_transpose(call, out, g):
    """``conv_transpose(x, w)`` is the input gradient of ``conv(., w)`` (``w`` read as
    ``OI...``), so its input gradient is that conv of ``g`` and its weight gradient that
    conv's weight gradient with ``g`` as input and ``x`` as output gradient."""
    x, w = call.args
    a = call.attrs
    _conv_check(a, "IO")
    xs, ws, gs, dtype = shape_of(x), shape_of(w), shape_of(call), dtype_of(x)
    nd = len(xs) - 2
    dx = _CONV[nd](g, w, strides=a.strides, padding=a.padding, dilation=a.dilation,
                   groups=a.groups, channels=xs[1], kernel_size=ws[2:])
    dw = conv_weight_grad(g, x, gs, ws, xs, a.strides, a.padding, a.dilation, a.groups, dtype)
    return [dx, dw]


# ---------------------------------------------------------------- pooling


def _pool_scatter(taps, xs, attrs, outs, dtype):
    """Sum of the window taps ``taps[offset]`` (each output-shaped) placed at their
    input positions, cropped to the input."""
    n, c, *sizes = xs
    nd = len(sizes)
    pads, _ = pool_geometry(np.empty((1, 1, *sizes), dtype="float32"), attrs)
    need = [(o - 1) * s + (k - 1) * d + 1 for o, s, k, d in
            zip(outs, attrs.strides, attrs.pool_size, attrs.dilation)]
    acc = None
    for offset, tap in taps.items():
        cur = [n, c, *outs]
        for i in range(nd):
            tap = dilate(tap, tuple(cur), 2 + i, attrs.strides[i], dtype)
            cur[2 + i] = (outs[i] - 1) * attrs.strides[i] + 1
        off = [r * d for r, d in zip(offset, attrs.dilation)]
        placed = pad_crop(tap, tuple(cur), [(0, 0), (0, 0)] + [
            (off[i], need[i] - off[i] - cur[2 + i]) for i in range(nd)], 0.0, dtype)
        acc = placed if acc is None else acc + placed
    crop = [(0, 0), (0, 0)] + [(-pads[i], sizes[i] - (need[i] - pads[i])) for i in range(nd)]
    return pad_crop(acc, (n, c, *need), crop, 0.0, dtype)


def _pool_check(attrs):
    want = "NC" + getattr(attrs, "_spatial", "HW")
    if attrs.layout != want or (attrs.out_layout or want) != want:
        raise Error(f"gradient of pooling: only {want} is supported, found {attrs.layout}")


@GRADIENT.register("nn.max_pool1d", "nn.max_pool2d", "nn.max_pool3d")
def _max_pool(call, out, g):
    x = call.args[0]
    a = call.attrs
    _pool_check(a)
    xs, dtype = shape_of(x), dtype_of(x)
    outs, nd = shape_of(call)[2:], len(xs) - 2
    pads, _ = pool_geometry(np.empty((1, 1, *xs[2:]), dtype="float32"), a)
    need = [(o - 1) * s + (k - 1) * d + 1 for o, s, k, d in
            zip(outs, a.strides, a.pool_size, a.dilation)]
    xp = pad_crop(x, xs, [(0, 0), (0, 0)] + [(pads[i], need[i] - xs[2 + i] - pads[i])
                                             for i in range(nd)], float("-inf"), dtype)
    taps, taken = {}, None
    for offset in itertools.product(*(range(k) for k in a.pool_size)):
        begin = [r * d for r, d in zip(offset, a.dilation)]
        window = _t.strided_slice(
            xp, [0, 0, *begin],
            [xs[0], xs[1], *(b + (o - 1) * s + 1 for b, o, s in zip(begin, outs, a.strides))],
            [1, 1, *a.strides])
        hit = _e.equal(window, out)
        sel = hit if taken is None else _e.logical_and(hit, _e.logical_not(taken))
        taken = hit if taken is None else _e.logical_or(taken, hit)
        taps[offset] = _t.where(sel, g, scalar(0.0, x))  # the first maximum wins
    return [_pool_scatter(taps, xs, a, outs, dtype)]


@GRADIENT.register("nn.avg_pool1d", "nn.avg_pool2d", "nn.avg_pool3d")
def _avg_pool(call, out, g):
    x = call.args[0]
    a = call.attrs
    _pool_check(a)
    xs, dtype = shape_of(x), dtype_of(x)
    gs = g / const(avg_pool_counts(xs[2:], a).astype(dtype))
    taps = {offset: gs for offset in itertools.product(*(range(k) for k in a.pool_size))}
    return [_pool_scatter(taps, xs, a, shape_of(call)[2:], dtype)]


@GRADIENT.register("nn.global_avg_pool2d")
def _global_avg_pool2d(call, out, g):
    x = call.args[0]
    _pool_check(call.attrs)
    xs = shape_of(x)
    return [_t.broadcast_to(g / scalar(float(xs[2] * xs[3]), x), xs)]


@GRADIENT.register("nn.global_max_pool2d")
def _global_max_pool2d(call, out, g):
    x = call.args[0]
    _pool_check(call.attrs)
    mask = _t.cast(_e.equal(x, out), dtype_of(x))
    ties = _r.sum(mask, axis=[2, 3], keepdims=True)
    return [g * mask / ties]


def _bins(size, out):
    m = np.zeros((out, size))
    for i in range(out):
        s, e = (i * size) // out, -((-(i + 1) * size) // out)
        m[i, s:e] = 1.0 / (e - s)
    return m


@GRADIENT.register("nn.adaptive_avg_pool2d")
def _adaptive_avg_pool2d(call, out, g):
    x = call.args[0]
    _pool_check(call.attrs)
    n, c, h, w = shape_of(x)
    oh, ow = shape_of(call)[2:]
    dtype = dtype_of(x)
    pw = const(_bins(w, ow).T.astype(dtype))  # (w, ow)
    ph = const(_bins(h, oh).T.astype(dtype))  # (h, oh)
    t = _nn.dense(_t.reshape(g, (n * c * oh, ow)), pw)  # (n*c*oh, w)
    t = _t.transpose(_t.reshape(t, (n, c, oh, w)), (0, 1, 3, 2))
    t = _nn.dense(_t.reshape(t, (n * c * w, oh)), ph)  # (n*c*w, h)
    return [_t.transpose(_t.reshape(t, (n, c, w, h)), (0, 1, 3, 2))]


# ---------------------------------------------------------------- normalisation


def _norm_grads(x, gamma, g, shape, axes, param_axis, attrs, group_shape=None):
    """(dx, dgamma, dbeta) of ``(x - mean) / sqrt(var + eps) * gamma + beta``, the
    statistics taken over ``axes`` (of ``group_shape`` when set) of the data itself."""
    n = len(shape)
    dxhat = g * along(gamma, param_axis, n) if attrs.scale else g
    xs = _t.reshape(x, group_shape) if group_shape else x
    dxs = _t.reshape(dxhat, group_shape) if group_shape else dxhat
    mean = _r.mean(xs, axis=list(axes), keepdims=True)
    xc = xs - mean
    rstd = _e.rsqrt(_r.mean(xc * xc, axis=list(axes), keepdims=True)
                    + const(float(attrs.epsilon), dtype_of(x)))
    xhat = xc * rstd
    dx = rstd * (dxs - _r.mean(dxs, axis=list(axes), keepdims=True)
                 - xhat * _r.mean(dxs * xhat, axis=list(axes), keepdims=True))
    if group_shape:
        dx, xhat = _t.reshape(dx, shape), _t.reshape(xhat, shape)
    others = [i for i in range(n) if i != param_axis]
    dgamma = _r.sum(g * xhat, axis=others) if attrs.scale else None
    dbeta = _r.sum(g, axis=others) if attrs.center else None
    return [dx, dgamma, dbeta]


@GRADIENT.register("nn.layer_norm")
def _layer_norm(call, out, g):
    x, gamma, _ = call.args
    shape = shape_of(x)
    axis = call.attrs.axis % len(shape)
    return _norm_grads(x, gamma, g, shape, (axis,), axis, call.attrs)


@GRADIENT.register("nn.instance_norm")
def _instance_norm(call, out, g):
    x, gamma, _ = call.args
    shape = shape_of(x)
    axis = call.attrs.axis % len(shape)
    axes = tuple(i for i in range(len(shape)) if i not in (0, axis))
    return _norm_grads(x, gamma, g, shape, axes, axis, call.attrs)


@GRADIENT.register("nn.group_norm")
def _group_norm(call, out, g):
    x, gamma, _ = call.args
    shape = shape_of(x)
    axis = call.attrs.axis % len(shape)
    k = call.attrs.num_groups
    grouped = (*shape[:axis], k, shape[axis] // k, *shape[axis + 1:])
    axes = tuple(i for i in range(len(grouped)) if i not in (0, axis))
    return _norm_grads(x, gamma, g, shape, axes, axis, call.attrs, grouped)


@GRADIENT.register("nn.batch_norm")
def _batch_norm(call, out, g):
    """Exact gradient of the op as defined (inference mode: moving statistics)."""
    x, gamma, _, mean, var = call.args
    a = call.attrs
    shape = shape_of(x)
    n = len(shape)
    axis = a.axis % n
    others = [i for i in range(n) if i != axis]
    g0 = g[0]
    rstd = _e.rsqrt(var + const(float(a.epsilon), dtype_of(x)))
    scale = gamma * rstd if a.scale else rstd
    xc = x - along(mean, axis, n)
    dx = g0 * along(scale, axis, n)
    dgamma = _r.sum(g0 * xc, axis=others) * rstd if a.scale else None
    dbeta = _r.sum(g0, axis=others) if a.center else None
    dmean = _e.negative(_r.sum(g0, axis=others)) * scale + g[1]
    dvar = (_r.sum(g0 * xc, axis=others) * scale * rstd * rstd
            * const(-0.5, dtype_of(x))) + g[2]
    return [dx, dgamma, dbeta, dmean, dvar]




# ---------------------------------------------------------------- local response norm


def _window_sum(e, shape: tuple, axis: int, before: int, after: int, dtype: str):
    """``out[i] = sum(e[i - before : i + after + 1])`` along ``axis`` (zeros outside)."""
    pads = [(0, 0)] * len(shape)
    pads[axis] = (before, after)
    padded = pad_crop(e, shape, pads, 0.0, dtype)
    total = None
    for k in range(before + after + 1):
        begin = [0] * len(shape)
        end = list(shape)
        begin[axis], end[axis] = k, k + shape[axis]
        part = _t.strided_slice(padded, begin, end)
        total = part if total is None else total + part
    return total


@GRADIENT.register("nn.lrn")
def _lrn(call, out, g):
    """``y = x * d ** -beta`` with ``d = bias + alpha / size * W(x * x)``, ``W`` the
    window sum; ``W``'s adjoint is the window sum with before and after swapped."""
    x = call.args[0]
    a = call.attrs
    xs, dtype = shape_of(x), dtype_of(x)
    axis = a.axis % len(xs)
    before, after = a.window
    k = a.alpha / a.size
    d = scalar(a.bias, x) + scalar(k, x) * _window_sum(x * x, xs, axis, before, after, dtype)
    scale = _e.power(d, scalar(-a.beta, x))
    inner = _window_sum(g * x * scale / d, xs, axis, after, before, dtype)
    return [g * scale - scalar(2.0 * a.beta * k, x) * x * inner]
