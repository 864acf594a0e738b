"""Compute of ``nn.contrib_conv2d_winograd_NCHWc``: Winograd F(m×m, r×r) on blocked data.

Stages (``P`` tiles of ``m×m`` outputs, ``α = m + r - 1``; ``x``/``y`` the input/output
channel blocks; every stage runs along a channel block, so each inner loop is one
contiguous vector):

1. ``pad``: the input with zeros around it, and below/right up to whole tiles;
2. ``winograd_bt``, ``winograd_at``: the constant matrices ``Bᵀ`` and ``Aᵀ`` as small
   tables (filled once per call), so that each transform is a product of a table and
   the data, which ``tir/matmul.py`` tiles like any matrix product: the table entry is
   the broadcast scalar, the channel block the vector;
3. ``winograd_rows``: ``D[ξ, b] = Σ_a Bᵀ[ξ, a] d[a, b]`` per tile (the input tile is
   read in place from the padded input);
4. ``winograd_v``: ``V[ξ, ν, p, c] = Σ_b D[ξ, b] Bᵀ[ν, b]``, laid out tile-major so the
   next stage reads a tile's channels contiguously;
5. ``winograd_gemm``: ``M[ξ, ν, o, p] = Σ_c V[ξ, ν, p, c] U[ξ, ν, o, c]``: α² matrix
   products over the channels, tiled ``p × y`` with the transformed weight ``U``
   (packed ``HWOI[x]i[y]o`` when the model was built) read in place;
6. ``winograd_z``: ``Z[o, p, i, ν] = Σ_ξ Aᵀ[i, ξ] M[ξ, ν, o, p]``;
7. the output: ``Y[h, w] = Σ_ν Z[o, p(h, w), h % m, ν] Aᵀ[w % m, ν]``, cropped to the
   output size, with the fused epilogue (bias, ReLU, residual add) applied as it stores.
   Where ``Y`` comes out NaN or ±Inf, the output is the direct sum over its window
   instead, from the weight in the direct convolution's packing (the op's third input):
   the transforms mix a whole tile, so a non-finite input pixel (or an overflow) spoils
   outputs whose window never reads it, and ``inf - inf`` turns the ±Inf the direct
   convolution gives into NaN. Every output whose window holds a non-finite value comes
   out non-finite from the transforms too, so the check finds all of them; the direct
   sums run only there (``tir/loops.py``: a reduction in a select's untaken branch is
   not computed), and a row of outputs that are all finite costs one vector compare.

The two 1-D passes per transform cost ``2α`` multiply-adds per value instead of ``α²``.
"""

from __future__ import annotations

import numpy as np

from ...op.nn.winograd import winograd_matrices
from .. import expr as E
from .. import tensor as te
from ..tensor import compute
from .common import COMPUTE, static
from .conv import padded
from .conv_nchwc import DIRECT
from .nn import product_acc


def _table(matrix: np.ndarray, name: str, dtype: str):
    """A constant matrix as a tensor filled by a select chain, kept in its own buffer
    (its reads are then plain loads a matrix-product tile can broadcast)."""
    rows, cols = matrix.shape

    def fn(i, j):
        value = E.const(0, dtype)
        for (a, b), v in np.ndenumerate(matrix):
            if v != 0:
                hit = E.logical_and(E.equal(i, E.IntImm(a)), E.equal(j, E.IntImm(b)))
                value = E.select(hit, E.const(float(v), dtype), value)
        return value

    return compute((rows, cols), fn, name=name, tag="injective", attrs={"materialize": True})


def _static_all(*dims) -> list[int]:
    vals = [static(d) for d in dims]
    if None in vals:
        raise E.TEError("a Winograd convolution needs static shapes")
    return vals


@COMPUTE.register("nn.contrib_conv2d_winograd_NCHWc")
def conv2d_winograd_nchwc(attrs, inputs, out):
    data, u, direct_weight = inputs
    m, r = attrs.tile_size, attrs.kernel_size[0]
    alpha = m + r - 1
    n, cb, h, w, xb = _static_all(*data.shape)
    ob, yb = _static_all(u.shape[2], u.shape[5])
    oh, ow = _static_all(out.shape[2], out.shape[3])
    th, tw = -(-oh // m), -(-ow // m)
    tiles = n * th * tw
    pt, pl = attrs.padding[0], attrs.padding[1]
    x = padded(data, "NCHWc", "HW",
               (pt, pl, th * m + r - 1 - h - pt, tw * m + r - 1 - w - pl))
    acc = product_acc(out.dtype)
    at_np, _, bt_np = winograd_matrices(m, r)
    bt = _table(bt_np, "winograd_bt", acc)
    at = _table(at_np, "winograd_at", acc)

    def rows(c, p, xi, b, cc):  # tile p = (image, tile row, tile column)
        a = te.reduce_axis(alpha, "ra")
        b_n, ti, tj = E.truncdiv(p, th * tw), E.truncmod(E.truncdiv(p, tw), th), \
            E.truncmod(p, tw)
        src = bt[xi, a.var] * E.cast(acc, x[b_n, c, ti * m + a.var, tj * m + b, cc])
        return te.sum(src, [a], dtype=acc)

    # one axis per tile, not three: fewer loops for lowering to try to fuse
    d = compute((cb, tiles, alpha, alpha, xb), rows, name="winograd_rows", tag="conv",
                attrs=DIRECT)

    def cols(xi, nu, p, c, cc):
        b = te.reduce_axis(alpha, "rb")
        return te.sum(bt[nu, b.var] * d[c, p, xi, b.var, cc], [b], dtype=acc)

    v = compute((alpha, alpha, tiles, cb, xb), cols, name="winograd_v", tag="conv",
                attrs=DIRECT)

    def gemm(xi, nu, o, p, oo):
        rc, rx = te.reduce_axis(cb, "rc"), te.reduce_axis(xb, "rx")
        src = v[xi, nu, p, rc.var, rx.var] * E.cast(acc, u[xi, nu, o, rc.var, rx.var, oo])
        return te.sum(src, [rc, rx], dtype=acc)

    mm = compute((alpha, alpha, ob, tiles, yb), gemm, name="winograd_gemm", tag="conv",
                 attrs=DIRECT)

    def inverse_rows(o, p, i, nu, oo):
        xi = te.reduce_axis(alpha, "rxi")
        return te.sum(at[i, xi.var] * mm[xi.var, nu, o, p, oo], [xi], dtype=acc)

    z = compute((ob, tiles, m, alpha, yb), inverse_rows, name="winograd_z", tag="conv",
                attrs=DIRECT)

    def direct(b_n, o, hh, ww, oo):  # x is padded like the direct convolution's input
        rc, rx = te.reduce_axis(cb, "rdc"), te.reduce_axis(xb, "rdx")
        rh, rw = te.reduce_axis(r, "rdh"), te.reduce_axis(r, "rdw")
        src = (E.cast(acc, x[b_n, rc.var, hh + rh.var, ww + rw.var, rx.var])
               * E.cast(acc, direct_weight[o, rc.var, rh.var, rw.var, rx.var, oo]))
        return te.sum(src, [rc, rh, rw, rx], dtype=acc)

    def output(b_n, o, hh, ww, oo):
        nu = te.reduce_axis(alpha, "rnu")
        p = (b_n * th + E.truncdiv(hh, m)) * tw + E.truncdiv(ww, m)
        src = z[o, p, E.truncmod(hh, m), nu.var, oo] * at[E.truncmod(ww, m), nu.var]
        y = te.sum(src, [nu], dtype=acc)
        return E.cast(out.dtype, E.select(E.isfinite(y), y, direct(b_n, o, hh, ww, oo)))

    return compute(out.shape, output, name="conv2d_winograd_NCHWc", tag="conv")


@COMPUTE.register("nn.contrib_conv2d_winograd_weight_transform")
def winograd_weight_transform(attrs, inputs, out):
    """``U[ξ, ν, o, i] = Σ_kl G[ξ, k] g[o, i, k, l] G[ν, l]`` (normally folded at build
    time; this kernel runs only for a weight that is not a constant)."""
    (weight,) = inputs
    r = static(weight.shape[2])
    _, g_np, _ = winograd_matrices(attrs.tile_size, r)
    acc = product_acc(out.dtype)
    g = _table(g_np, "winograd_g", acc)

    def fn(xi, nu, o, i):
        k, l_ = te.reduce_axis(r, "rk"), te.reduce_axis(r, "rl")
        src = g[xi, k.var] * E.cast(acc, weight[o, i, k.var, l_.var]) * g[nu, l_.var]
        return E.cast(out.dtype, te.sum(src, [k, l_], dtype=acc))

    return compute(out.shape, fn, name="winograd_weight_transform", tag="reduce")
