"""Gradients of the resizes (``image.resize*d``, ``nn.upsampling``) and of the block
rearrangements (``nn.depth_to_space`` / ``nn.space_to_depth``).

A resize is linear and separable: along each spatial axis it multiplies by the ``(out,
in)`` matrix :func:`relayir.op.image.axis_weights` builds (the one the reference uses), so
its gradient multiplies by the transposed matrices, one ``dense`` per axis; positions
filled with ``extrapolation_value`` pass no gradient. The block rearrangements are
permutations whose inverses are each other (same block size, layout and mode).

``image.grid_sample`` builds its taps in Relay with the very helpers its reference uses
(:class:`_Sym` gives a Relay expression numpy's operators): w.r.t. ``data`` it scatters
``grad * weight`` to the taps' flat indices, w.r.t. ``grid`` it sums ``grad * value *
d weight / d coordinate`` (``nearest`` and clamped coordinates pass no grid gradient).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ....errors import Error
from ....ir.expr import const
from ....op import nn as _nn
from ....op import reduce as _r
from ....op import scatter as _s
from ....op import tensor as _e
from ....op import transform as _t
from ....op.image import (
    axis_weights,
    grid_bounds,
    grid_coordinate,
    grid_tap_index,
    grid_unnormalise,
)
from . import GRADIENT
from ._util import dtype_of, shape_of


def _resize_grad(g, attrs, xs: tuple, dtype: str):
    lay, sp = attrs.layout, attrs._spatial
    outside = np.zeros((1,) * len(xs), bool)
    matrices = []
    for j, a in enumerate(sp):
        axis = lay.index(a)
        matrix, out_j = axis_weights(attrs, j, xs[axis])
        matrices.append((axis, matrix))
        mask_shape = [1] * len(xs)
        mask_shape[axis] = -1
        outside = outside | out_j.reshape(mask_shape)
    if outside.any():
        g = g * const((~outside).astype(dtype))
    cur = [xs[i] if a not in sp else attrs.size[sp.index(a)] for i, a in enumerate(lay)]
    for axis, matrix in matrices:
        n = len(cur)
        perm = [i for i in range(n) if i != axis] + [axis]
        moved = _t.transpose(g, perm)
        lead = [cur[i] for i in perm[:-1]]
        flat = _t.reshape(moved, (int(np.prod(lead, dtype=np.int64)), cur[axis]))
        back = _nn.dense(flat, const(matrix.T.astype(dtype)))  # (rows, in)
        cur[axis] = matrix.shape[1]
        g = _t.transpose(_t.reshape(back, (*lead, cur[axis])), [perm.index(i) for i in range(n)])
    return g


@GRADIENT.register("image.resize1d", "image.resize2d", "image.resize3d")
def _resize(call, out, g):
    x = call.args[0]
    if call.attrs.out_dtype and call.attrs.out_dtype != dtype_of(x):
        raise Error("gradient of resize: out_dtype must equal the input dtype")
    return [_resize_grad(g, call.attrs, shape_of(x), dtype_of(x))]


@GRADIENT.register("nn.upsampling")
def _upsampling(call, out, g):
    x = call.args[0]
    xs = shape_of(x)
    return [_resize_grad(g, call.attrs.as_resize(xs), xs, dtype_of(x))]


@GRADIENT.register("nn.depth_to_space")
def _depth_to_space(call, out, g):
    a = call.attrs
    return [_nn.space_to_depth(g, a.block_size, layout=a.layout, mode=a.mode)]


@GRADIENT.register("nn.space_to_depth")
def _space_to_depth(call, out, g):
    a = call.attrs
    return [_nn.depth_to_space(g, a.block_size, layout=a.layout, mode=a.mode)]


class _Sym:
    """A Relay expression with numpy's operators (constants take its dtype), so that
    ``op.image``'s grid_sample helpers build Relay graphs."""

    __slots__ = ("e", "dtype")

    def __init__(self, e, dtype: str):
        self.e, self.dtype = e, dtype

    def _arg(self, o):
        return o.e if isinstance(o, _Sym) else const(np.asarray(o, self.dtype))

    def _op(self, fn, *args):
        return _Sym(fn(*(self._arg(a) for a in args)), self.dtype)

    def __add__(self, o):
        return self._op(_e.add, self, o)

    def __radd__(self, o):
        return self._op(_e.add, o, self)

    def __sub__(self, o):
        return self._op(_e.subtract, self, o)

    def __rsub__(self, o):
        return self._op(_e.subtract, o, self)

    def __mul__(self, o):
        return self._op(_e.multiply, self, o)

    def __rmul__(self, o):
        return self._op(_e.multiply, o, self)

    def __neg__(self):
        return self._op(_e.negative, self)

    def __lt__(self, o):
        return self._op(_e.less, self, o)

    def __gt__(self, o):
        return self._op(_e.greater, self, o)

    def __le__(self, o):
        return self._op(_e.less_equal, self, o)

    def __ge__(self, o):
        return self._op(_e.greater_equal, self, o)

    def __and__(self, o):
        return self._op(_e.logical_and, self, o)

    def __or__(self, o):
        return self._op(_e.logical_or, self, o)


def _where(cond, a, b):
    ref = next(v for v in (a, b, cond) if isinstance(v, _Sym))
    return ref._op(_t.where, cond, a, b)


_SYM_OPS = {"where": _where, "floor": lambda x: x._op(_e.floor, x),
            "rint": lambda x: x._op(_e.round, x), "trunc": lambda x: x._op(_e.trunc, x),
            "clip": lambda x, lo, hi: _Sym(_t.clip(x.e, lo, hi), x.dtype)}


def _weights_and_slopes(x, method: str):
    """The taps ``floor(x) + k`` with their weights and ``d weight / d x``."""
    base = _SYM_OPS["floor"](x)
    t = x - base
    if method == "bilinear":
        return [(base, 1.0 - t, -1.0), (base + 1.0, t, 1.0)]
    a, s, u, v = -0.75, 1.0 - t, t + 1.0, 2.0 - t
    weights = [((a * u - 5 * a) * u + 8 * a) * u - 4 * a,
               ((a + 2) * t - (a + 3)) * t * t + 1.0,
               ((a + 2) * s - (a + 3)) * s * s + 1.0,
               ((a * v - 5 * a) * v + 8 * a) * v - 4 * a]
    slopes = [(3 * a * u - 10 * a) * u + 8 * a,
              (3 * (a + 2) * t - 2 * (a + 3)) * t,
              -((3 * (a + 2) * s - 2 * (a + 3)) * s),
              -((3 * a * v - 10 * a) * v + 8 * a)]
    return [(base + float(k), w, d) for k, w, d in zip(range(-1, 3), weights, slopes)]


def _coordinate_slope(g, size: int, attrs):
    """``d coordinate / d g`` after padding: the unnormalising scale, times 0 where border
    padding clamps and -1 where reflection folds an even number of times."""
    scale = (size - 1) / 2.0 if attrs.align_corners else size / 2.0
    x = grid_unnormalise(g, size, attrs.align_corners)
    lo, hi = grid_bounds(size, attrs.align_corners)
    one = x * 0.0 + 1.0
    if attrs.padding_mode == "border":
        return _where((x < lo) | (x > hi), 0.0, one) * scale
    if attrs.padding_mode == "reflection":
        if hi <= lo:
            return one * 0.0
        floor = _SYM_OPS["floor"]
        turns = _where(x < lo, floor((lo - x) * (1.0 / (hi - lo))),
                       floor((x - hi) * (1.0 / (hi - lo))))
        odd = turns - floor(turns * 0.5) * 2.0 > 0.5
        return _where((x < lo) | (x > hi), _where(odd, one, -one), one) * scale
    return one * scale


@GRADIENT.register("image.grid_sample")
def _grid_sample(call, out, g):
    data, grid = call.args
    attrs = call.attrs
    dt = dtype_of(data)
    if dtype_of(grid) != dt:
        raise Error("gradient of image.grid_sample: data and grid must share a dtype")
    n, c, *sizes = shape_of(data)
    k, outs = len(sizes), shape_of(grid)[2:]
    q, p = math.prod(outs), math.prod(sizes)
    flat_data = _t.reshape(data, (n, c, p))
    flat_g = _t.reshape(g, (n, c, q))
    coords, per_axis = [], []
    for j, size in enumerate(sizes):  # axis j is read by grid coordinate k - 1 - j
        gj = _Sym(_t.reshape(_t.take(grid, const(np.int64(k - 1 - j)), axis=1), (n, q)), dt)
        coords.append(gj)
        if attrs.method == "nearest":
            x = grid_coordinate(gj, size, attrs, _SYM_OPS)
            taps = [(_SYM_OPS["trunc"](x), None, None)]
        else:
            taps = _weights_and_slopes(grid_coordinate(gj, size, attrs, _SYM_OPS),
                                       attrs.method)
        per_axis.append([(*grid_tap_index(t, size, attrs, _where, _SYM_OPS["floor"]), w, d)
                         for t, w, d in taps])
    strides = [math.prod(sizes[j + 1:]) for j in range(k)]
    grad_data = _t.zeros_like(flat_data)
    grad_coord = [None] * k
    for choice in itertools.product(*per_axis):
        flat = sum((i * float(st) for (i, _, _, _), st in zip(choice, strides)), 0.0)
        index = _t.broadcast_to(_t.expand_dims(_t.cast(flat.e, "int64"), 1), (n, c, q))
        mask = coords[0] * 0.0 + 1.0
        for _, inside, _, _ in choice:
            if inside is not None:
                mask = _where(inside, mask, 0.0)
        weight = mask
        for _, _, w, _ in choice:
            weight = weight if w is None else weight * w
        update = _e.multiply(flat_g, _t.expand_dims(weight.e, 1))
        grad_data = _s.scatter_elements(grad_data, index, update, axis=2, reduction="add")
        if attrs.method == "nearest":
            continue
        g_value = _Sym(_r.sum(_e.multiply(flat_g, _s.gather(flat_data, 2, index)), axis=1), dt)
        for j in range(k):
            term = g_value * mask * choice[j][3]
            for m in range(k):
                if m != j:
                    term = term * choice[m][2]
            grad_coord[j] = term if grad_coord[j] is None else grad_coord[j] + term
    grad_data = _t.reshape(grad_data, shape_of(data))
    if attrs.method == "nearest":
        return [grad_data, _t.zeros_like(grid)]
    rows = [(grad_coord[j] * _coordinate_slope(coords[j], sizes[j], attrs)).e
            for j in reversed(range(k))]  # grid channel i is axis k - 1 - i
    return [grad_data, _t.reshape(_t.stack(rows, axis=1), shape_of(grid))]
