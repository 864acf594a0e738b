"""Computes of ``image.resize1d/2d/3d`` (and ``nn.upsampling``, one of them), and of the
block rearrangements ``nn.depth_to_space`` / ``nn.space_to_depth``.

Grid sample: the same per-axis taps as its reference (``grid_axis_taps``), whose indices
are read from ``grid`` (a gather with computed indices); zeros padding selects 0 for taps
outside.

Resize: per spatial axis, the source coordinate of the
output index (the same formulas as the reference, in float64), its 1, 2 or 4 taps with
clamped indices, and the product of the per-axis weights summed over all tap choices.
"""

from __future__ import annotations

import itertools

from ...op.image import (
    antialias_kernel,
    cubic_weights,
    grid_axis_taps,
    grid_tap_index,
    source_coordinate,
)
from .. import expr as E
from ..tensor import compute
from .common import COMPUTE, static

F64 = "float64"


def _round(x, rounding: str):
    if rounding == "round_prefer_floor":
        return E.ceil(x - 0.5)
    if rounding == "round_prefer_ceil":
        return E.floor(x + 0.5)
    if rounding == "floor":
        return E.floor(x)
    if rounding == "ceil":
        return E.ceil(x)
    return E.select(x >= 0.0, E.floor(x + 0.5), E.ceil(x - 0.5))


def _clamp(i, size: int):
    return E.Min(E.Max(i, E.IntImm(0)), E.IntImm(size - 1))


def _normalised(weights):
    total = weights[0]
    for w in weights[1:]:
        total = total + w
    return [w / total for w in weights]


def _axis_taps(attrs, j: int, o, in_size: int):
    """``([(index, weight or None)], outside condition or None)`` for output index ``o``."""
    mode = attrs.coordinate_transformation_mode
    x = source_coordinate(mode, E.cast(F64, o), in_size, attrs.size[j],
                          attrs.axis_scale(j, in_size), attrs.axis_roi(j))
    outside = None
    if mode == "tf_crop_and_resize":
        outside = (x < 0.0) | (x > float(in_size - 1))
    if attrs.method == "nearest_neighbor":
        return [(_clamp(E.cast("int64", _round(x, attrs.rounding)), in_size), None)], outside
    base = E.floor(x)
    t = x - base
    first = E.cast("int64", base)
    stretched = attrs.antialias_taps(j, in_size)
    if stretched is not None:
        n, scale = stretched
        taps = [first + (k - (n // 2 - 1)) for k in range(n)]
        weights = [antialias_kernel((base + float(k - (n // 2 - 1)) - x) * scale, attrs.method,
                                    attrs.cubic_alpha, E.select, E.abs) for k in range(n)]
        weights = _normalised(weights)
        if attrs.cubic_exclude:
            weights = _normalised([E.select(E.logical_and(p >= 0, p < in_size), w,
                                            E.const(0, F64)) for p, w in zip(taps, weights)])
        return [(_clamp(p, in_size), w) for p, w in zip(taps, weights)], outside
    if attrs.method == "linear":
        return [(_clamp(first, in_size), 1.0 - t), (_clamp(first + 1, in_size), t)], outside
    weights = cubic_weights(t, attrs.cubic_alpha)
    taps = [first + k for k in range(-1, 3)]
    if attrs.cubic_exclude:
        weights = _normalised([E.select(E.logical_and(p >= 0, p < in_size), w, E.const(0, F64))
                               for p, w in zip(taps, weights)])
    return [(_clamp(p, in_size), w) for p, w in zip(taps, weights)], outside


@COMPUTE.register("image.resize1d", "image.resize2d", "image.resize3d")
def resize(attrs, inputs, out):
    x = inputs[0]
    lay, sp = attrs.layout, attrs._spatial
    sizes = [static(x.shape[lay.index(a)]) for a in sp]
    if None in sizes:
        raise E.TEError("resize needs static spatial dimensions")

    def fn(*i):
        pos = dict(zip(lay, i))
        per_axis, outside = [], []
        for j, a in enumerate(sp):
            taps, out_j = _axis_taps(attrs, j, pos[a], sizes[j])
            per_axis.append(taps)
            if out_j is not None:
                outside.append(out_j)
        total = None
        for choice in itertools.product(*per_axis):
            idx = dict(pos)
            idx.update({a: t[0] for a, t in zip(sp, choice)})
            value = x[tuple(idx[a] for a in lay)]
            weights = [t[1] for t in choice if t[1] is not None]
            if weights:
                term = E.cast(F64, value)
                for w in weights:
                    term = term * w
                total = term if total is None else total + term
            else:
                total = value  # nearest: one exact read
        if outside:
            fill = attrs.extrapolation_value
            if not E.is_float(total.dtype):  # rounded half to even, like the reference
                fill = round(fill)
            fill = E.const(fill, total.dtype)
            total = E.select(_any(outside), fill, total)
        if E.is_float(total.dtype) and not E.is_float(out.dtype):
            total = E.rint(total)
        return E.cast(out.dtype, total)

    return compute(out.shape, fn, name=f"resize{len(sp)}d", tag="injective")


def _any(conds):
    out = conds[0]
    for c in conds[1:]:
        out = out | c
    return out


@COMPUTE.register("nn.upsampling")
def upsampling(attrs, inputs, out):
    shape = [static(d) for d in inputs[0].shape]
    if None in shape:
        raise E.TEError("upsampling needs a static input shape")
    return resize(attrs.as_resize(shape), inputs, out)


def _block_read(x, layout: str, n, c, h, w):
    pos = {"N": n, "C": c, "H": h, "W": w}
    return x[tuple(pos[a] for a in layout)]


@COMPUTE.register("nn.depth_to_space")
def depth_to_space(attrs, inputs, out):
    x, lay, b = inputs[0], attrs.layout, attrs.block_size
    c_out = static(out.shape[lay.index("C")])
    if c_out is None:
        raise E.TEError("depth_to_space needs a static channel count")

    def fn(*i):
        o = dict(zip(lay, i))
        by, bx = E.truncmod(o["H"], b), E.truncmod(o["W"], b)
        if attrs.mode == "DCR":
            c = (by * b + bx) * c_out + o["C"]
        else:
            c = o["C"] * (b * b) + by * b + bx
        return _block_read(x, lay, o["N"], c, E.truncdiv(o["H"], b), E.truncdiv(o["W"], b))

    return compute(out.shape, fn, name="depth_to_space", tag="injective")


@COMPUTE.register("nn.space_to_depth")
def space_to_depth(attrs, inputs, out):
    x, lay, b = inputs[0], attrs.layout, attrs.block_size
    c_in = static(x.shape[lay.index("C")])
    if c_in is None:
        raise E.TEError("space_to_depth needs a static channel count")

    def fn(*i):
        o = dict(zip(lay, i))
        if attrs.mode == "DCR":
            c, block = E.truncmod(o["C"], c_in), E.truncdiv(o["C"], c_in)
        else:
            c, block = E.truncdiv(o["C"], b * b), E.truncmod(o["C"], b * b)
        by, bx = E.truncdiv(block, b), E.truncmod(block, b)
        return _block_read(x, lay, o["N"], c, o["H"] * b + by, o["W"] * b + bx)

    return compute(out.shape, fn, name="space_to_depth", tag="injective")


def _where(cond, a, b):
    return E.select(cond, a, b)


_TE_OPS = {"where": _where, "floor": E.floor, "rint": E.rint, "trunc": E.trunc,
           "clip": lambda x, lo, hi: E.select(x < lo, E.const(lo, x.dtype),
                                               E.select(x > hi, E.const(hi, x.dtype), x))}


@COMPUTE.register("image.grid_sample")
def grid_sample(attrs, inputs, out):
    x, grid = inputs
    sizes = [static(d) for d in x.shape[2:]]
    if None in sizes:
        raise E.TEError("grid_sample needs static spatial dimensions")
    n_axes = len(sizes)

    def fn(n, c, *o):
        per_axis = []
        for j, size in enumerate(sizes):  # axis j is read by grid coordinate n_axes - 1 - j
            g = E.cast(F64, grid[(n, n_axes - 1 - j, *o)])
            taps = grid_axis_taps(g, size, attrs, _TE_OPS)
            per_axis.append([(*grid_tap_index(t, size, attrs, _where, E.floor), w)
                             for t, w in taps])
        total = None
        for choice in itertools.product(*per_axis):
            term = E.cast(F64, x[(n, c, *(E.cast("int64", i) for i, _, _ in choice))])
            for _, _, w in choice:
                if w is not None:
                    term = term * w
            inside = [ok for _, ok, _ in choice if ok is not None]
            if inside:
                term = E.select(E.logical_and(*inside), term, E.const(0, F64))
            total = term if total is None else total + term
        return E.cast(out.dtype, total)

    return compute(out.shape, fn, name="grid_sample", tag="injective")
