"""Gradients of the resizes (``image.resize*d``, ``nn.upsampling``) and of the block
rearrangements (``nn.depth_to_space`` / ``nn.space_to_depth``).

A resize is linear and separable: along each spatial axis it multiplies by the ``(out,
in)`` matrix :func:`relayir.op.image.axis_weights` builds (the one the reference uses), so
its gradient multiplies by the transposed matrices, one ``dense`` per axis; positions
filled with ``extrapolation_value`` pass no gradient. The block rearrangements are
permutations whose inverses are each other (same block size, layout and mode).
"""

from __future__ import annotations

import numpy as np

from ...errors import Error
from ...ir.expr import const
from ...op import nn as _nn
from ...op import transform as _t
from ...op.image import axis_weights
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
