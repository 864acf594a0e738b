"""``nn.deformable_conv2d``: its reference against a per-tap loop written from the
definition (zero offsets are a plain conv2d), its types (offset and weight inferred as
Relay does), its layouts, NaN/±Inf offsets, and the executors against the reference."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import relayir as r
from relayir.ir.op import get_op, make_attrs
from relayir.op import nn
from relayir.typing.infer import infer_expr

OP = get_op("nn.deformable_conv2d")


def _bilinear(img, y, x):
    h, w = img.shape
    if not (0 <= y < h and 0 <= x < w):
        return 0.0
    y0, x0 = math.floor(y), math.floor(x)
    total = 0.0
    for yp, xp in itertools.product((y0, y0 + 1), (x0, x0 + 1)):
        if 0 <= yp < h and 0 <= xp < w:
            total += (1 - abs(y - yp)) * (1 - abs(x - xp)) * img[yp, xp]
    return total


def _loops(x, off, w, stride, pad, dil, dg, groups):
    """The definition, one tap at a time (NCHW / OIHW)."""
    n, c, _, _ = x.shape
    o, cg, kh, kw = w.shape
    oh, ow = off.shape[2:]
    off = off.reshape(n, dg, kh, kw, 2, oh, ow)
    out = np.zeros((n, o, oh, ow))
    for b, f, i, j in itertools.product(range(n), range(o), range(oh), range(ow)):
        g = f // (o // groups)
        for ci, p, q in itertools.product(range(cg), range(kh), range(kw)):
            ch = g * cg + ci
            d = ch // (c // dg)
            y = i * stride - pad + p * dil + off[b, d, p, q, 0, i, j]
            xs = j * stride - pad + q * dil + off[b, d, p, q, 1, i, j]
            out[b, f, i, j] += _bilinear(x[b, ch], y, xs) * w[f, ci, p, q]
    return out


def _ref(x, off, w, **attrs):
    return OP.reference(x, off, w, make_attrs(OP, attrs))


@pytest.mark.parametrize("stride, pad, dil, dg, groups", [
    (1, 1, 1, 1, 1), (2, 0, 1, 2, 1), (1, 2, 2, 4, 2), (2, 1, 1, 2, 4)])
def test_reference_matches_the_definition(stride, pad, dil, dg, groups):
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (2, 4, 6, 7))
    w = rng.uniform(-1, 1, (4, 4 // groups, 3, 3))
    oh = (6 + 2 * pad - dil * 2 - 1) // stride + 1
    ow = (7 + 2 * pad - dil * 2 - 1) // stride + 1
    off = rng.uniform(-2.5, 2.5, (2, dg * 18, oh, ow))
    off[0, 0, 0, 0] = 7.0  # far outside: reads 0
    got = _ref(x, off, w, strides=stride, padding=pad, dilation=dil, deformable_groups=dg,
               groups=groups)
    np.testing.assert_allclose(got, _loops(x, off, w, stride, pad, dil, dg, groups),
                               rtol=1e-12, atol=1e-12)


def test_zero_offsets_are_a_convolution():
    rng = np.random.default_rng(1)
    x, w = rng.normal(size=(1, 3, 5, 5)), rng.normal(size=(2, 3, 3, 3))
    got = _ref(x, np.zeros((1, 18, 5, 5)), w, padding=1)
    conv = get_op("nn.conv2d")
    np.testing.assert_allclose(got, conv.reference(x, w, make_attrs(conv, {"padding": 1})),
                               rtol=1e-12)


def test_nhwc_is_nchw_transposed():
    rng = np.random.default_rng(2)
    x, w = rng.normal(size=(1, 4, 5, 5)), rng.normal(size=(4, 4, 3, 3))
    off = rng.uniform(-1, 1, (1, 36, 5, 5))
    nchw = _ref(x, off, w, padding=1, deformable_groups=2)
    nhwc = _ref(x.transpose(0, 2, 3, 1), off.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0),
                padding=1, deformable_groups=2, data_layout="NHWC", kernel_layout="HWIO")
    np.testing.assert_allclose(nhwc, nchw.transpose(0, 2, 3, 1), rtol=1e-12)


def test_edge_offsets():
    """A NaN offset gives NaN where it is read; an infinite one reads outside: 0."""
    x, w = np.ones((1, 1, 3, 3), "float32"), np.ones((1, 1, 1, 1), "float32")
    off = np.zeros((1, 2, 3, 3), "float32")
    off[0, 0, 0, 0], off[0, 1, 1, 1], off[0, 0, 2, 2] = np.nan, np.inf, -np.inf
    got = _ref(x, off, w)
    assert np.isnan(got[0, 0, 0, 0]) and got[0, 0, 1, 1] == 0 and got[0, 0, 2, 2] == 0
    assert got.dtype == np.float32 and np.count_nonzero(got == 1) == 6


def test_types_infer_offset_and_weight_and_check_them():
    x = r.var("x", shape=(2, 4, 8, 8))
    y = nn.deformable_conv2d(x, r.var("off"), r.var("w"), strides=2, padding=1,
                             kernel_size=(3, 3), channels=6, deformable_groups=2, groups=2)
    typed = infer_expr(y)
    assert typed.checked_type == r.TensorType((2, 6, 4, 4), "float32")
    assert typed.args[1].checked_type == r.TensorType((2, 36, 4, 4), "float32")
    assert typed.args[2].checked_type == r.TensorType((6, 2, 3, 3), "float32")
    bad = nn.deformable_conv2d(x, r.var("off", shape=(2, 18, 4, 4)),
                               r.var("w", shape=(6, 2, 3, 3)), strides=2, padding=1,
                               deformable_groups=2, groups=2)
    with pytest.raises(r.Error, match="offset must have shape"):
        infer_expr(bad)


@pytest.mark.parametrize("kind", ["debug", "graph", "vm"])
def test_executors_match_the_reference(kind):
    rng = np.random.default_rng(3)
    x = rng.uniform(size=(1, 4, 6, 6)).astype("float32")
    off = rng.uniform(-1, 1, (1, 72, 6, 6)).astype("float32")
    w = rng.uniform(size=(4, 4, 3, 3)).astype("float32")
    params = [r.var("x", shape=x.shape), r.var("off", shape=off.shape), r.var("w", shape=w.shape)]
    y = nn.deformable_conv2d(*params, padding=1, deformable_groups=4)
    mod = r.IRModule.from_expr(r.Function(params, y))
    got = r.create_executor(kind, mod=mod).evaluate()(x, off, w)
    want = _ref(x, off, w, padding=1, deformable_groups=4)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("batch", [1, 0])
def test_cpu_target_matches_numpy_target_on_edge_values(batch):
    """NaN / ±Inf / -0.0 in data and offsets, and an empty batch: the cpu target gives
    the numpy target's answer bit for bit (NaN where NaN)."""
    x = np.array([[0.0, -0.0, np.inf], [-np.inf, np.nan, 1.0], [2.0, -0.0, 3.0]],
                 "float32").reshape(1, 1, 3, 3).repeat(batch, axis=0)
    off = np.zeros((batch, 2, 3, 3), "float32")
    if batch:
        off[0, 0, 0, 0], off[0, 1, 2, 2], off[0, 0, 1, 2] = np.nan, np.inf, -0.0
    w = np.array([[[[-0.0]]]], "float32")
    params = [r.var("x", shape=x.shape), r.var("off", shape=off.shape),
              r.var("w", shape=w.shape)]
    mod = r.IRModule.from_expr(r.Function(params, nn.deformable_conv2d(*params)))
    got = {t: np.asarray(r.create_executor("graph", mod=mod, target=t).evaluate()(x, off, w))
           for t in ("cpu", "numpy")}
    assert got["cpu"].shape == (batch, 1, 3, 3)
    np.testing.assert_array_equal(got["cpu"], got["numpy"])
    np.testing.assert_array_equal(np.signbit(got["cpu"]), np.signbit(got["numpy"]))
