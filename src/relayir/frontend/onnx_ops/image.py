"""Image layers: Resize (opsets 10-19), Upsample (7, 9), DepthToSpace, SpaceToDepth.

ONNX resizes any axes of any rank; ``image.resize{1,2,3}d`` resize the trailing axes of an
``NC...`` tensor. The axes that change are moved last and the others flattened into
``N, C`` when they are not already in place.
"""

from __future__ import annotations

import math

import numpy as np

from ...ir.expr import const
from ...op import dynamic_params as DP
from ...op import image as I
from ...op import nn as N
from ...op import reduce as R
from ...op import tensor as E
from ...op import transform as T
from ..common import ConversionError
from .base import OnnxTable, constant_value, run_time, shape, ttype, value

TABLE = OnnxTable()
_RESIZE = {1: I.resize1d, 2: I.resize2d, 3: I.resize3d}


def _floats(x, what: str):
    """An optional float input (absent or empty means not given)."""
    if x is None:
        return None
    v = np.asarray(value(x, what), dtype="float64").reshape(-1)
    return None if v.size == 0 else [float(a) for a in v]


def _plan(in_shape, scales, sizes, roi, axes, policy):
    """ONNX's per-axis output sizes and scales (full rank) and the full-rank roi."""
    r = len(in_shape)
    axes = [a + r if a < 0 else a for a in (axes or range(r))]
    full_scale, full_size = [1.0] * r, list(in_shape)
    full_roi = [0.0] * r + [1.0] * r
    if roi is not None:
        if len(roi) != 2 * len(axes):
            raise ConversionError(f"Resize: roi has {len(roi)} values, expected "
                                  f"{2 * len(axes)}")
        for i, a in enumerate(axes):
            full_roi[a], full_roi[r + a] = roi[i], roi[len(axes) + i]
    if sizes is not None:
        for i, a in enumerate(axes):
            full_size[a] = int(sizes[i])
            full_scale[a] = full_size[a] / in_shape[a]
        if policy != "stretch":
            pick = min if policy == "not_larger" else max
            s = pick(full_scale[a] for a in axes)
            for a in axes:
                full_scale[a], full_size[a] = s, int(s * in_shape[a] + 0.5)
    elif scales is not None:
        for i, a in enumerate(axes):
            full_scale[a] = float(scales[i])
            full_size[a] = I.resize_output_size(in_shape[a], full_scale[a])
    else:
        raise ConversionError("Resize needs scales or sizes")
    return full_scale, full_size, full_roi


def _resize(x, full_scale, full_size, full_roi, explicit_scales, **attrs):
    in_shape = shape(x)
    r = len(in_shape)
    moved = [a for a in range(r) if not (
        math.isclose(full_scale[a], 1.0) and full_size[a] == in_shape[a]
        and math.isclose(full_roi[a], 0.0) and math.isclose(full_roi[r + a], 1.0))]
    if not moved:
        return x
    n = len(moved)
    if n > 3:
        raise ConversionError(f"Resize of {n} axes not supported (at most 3)")
    rest = [a for a in range(r) if a not in moved]
    perm = rest + moved
    y = x if perm == list(range(r)) else T.transpose(x, perm)
    lead = [in_shape[a] for a in rest]
    direct = len(rest) == 2
    if not direct:
        y = T.reshape(y, (1, int(np.prod(lead, dtype=np.int64)), *(in_shape[a] for a in moved)))
    roi = [full_roi[a] for a in moved] + [full_roi[r + a] for a in moved]
    y = _RESIZE[n](y, [full_size[a] for a in moved], roi=roi,
                   scales=[full_scale[a] for a in moved] if explicit_scales else None, **attrs)
    if not direct:
        y = T.reshape(y, (*lead, *(full_size[a] for a in moved)))
    if perm != list(range(r)):
        y = T.transpose(y, [perm.index(a) for a in range(r)])
    return y


def _method(mode: str) -> str:
    if mode not in ("nearest", "linear", "cubic", "bilinear"):
        raise ConversionError(f"Resize mode {mode!r} not supported")
    return {"nearest": "nearest_neighbor", "bilinear": "linear"}.get(mode, mode)


@TABLE.register("Resize", since=10)
def resize_v10(x, scales, mode="nearest"):
    """Opset 10: asymmetric coordinates; nearest rounds down when upsampling and up when
    downsampling (onnxruntime's rule), so mixed axes take two resizes."""
    scales = _floats(scales, "scales")
    if mode != "nearest":
        return _upsample(x, scales, mode)
    up = [s if s >= 1 else 1.0 for s in scales]
    down = [s if s < 1 else 1.0 for s in scales]
    for part, rounding in ((up, "floor"), (down, "ceil")):
        full_scale, full_size, full_roi = _plan(shape(x), part, None, None, None, "stretch")
        x = _resize(x, full_scale, full_size, full_roi, True, method="nearest_neighbor",
                    coordinate_transformation_mode="asymmetric", rounding_method=rounding)
    return x


@TABLE.register("Resize", since=11)
def resize(x, roi=None, scales=None, sizes=None, antialias=0, axes=None,
           coordinate_transformation_mode="half_pixel", cubic_coeff_a=-0.75,
           exclude_outside=0, extrapolation_value=0.0, keep_aspect_ratio_policy="stretch",
           mode="nearest", nearest_mode="round_prefer_floor"):
    crop = coordinate_transformation_mode == "tf_crop_and_resize"
    attrs = dict(method=_method(mode),
                 coordinate_transformation_mode=coordinate_transformation_mode,
                 rounding_method=nearest_mode, cubic_alpha=float(cubic_coeff_a),
                 cubic_exclude=int(exclude_outside),
                 extrapolation_value=float(extrapolation_value), antialias=bool(antialias))
    if any(v is not None and not _known(v) for v in (scales, sizes, roi if crop else None)):
        return _run_time_resize(x, roi if crop else None, scales, sizes, axes,
                                keep_aspect_ratio_policy, attrs)
    sizes_v = None if sizes is None else _floats(sizes, "sizes")
    scales_v = _floats(scales, "scales")
    roi_v = _floats(roi, "roi") if crop else None
    full_scale, full_size, full_roi = _plan(shape(x), scales_v, sizes_v, roi_v, axes,
                                            keep_aspect_ratio_policy)
    explicit = sizes_v is None or keep_aspect_ratio_policy != "stretch"
    return _resize(x, full_scale, full_size, full_roi, explicit, **attrs)


def _known(x) -> bool:
    return constant_value(x) is not None


def _run_time_resize(x, roi, scales, sizes, axes, policy, attrs):
    """Resize whose scales, sizes or roi are read when the model runs
    (``dyn.image.resize{1,2,3}d``). The resized axes are the ``axes`` attribute's, else
    every axis after the first two (an ``N, C, spatial...`` tensor, as every image model
    has it); the output size and explicit scales are computed in the graph from the
    run-time values, as ``_plan`` computes them from constant ones. A model that scales
    N or C through a run-time input needs those inputs bound (``const_inputs``)."""
    in_shape = shape(x)
    r = len(in_shape)
    if not all(isinstance(d, int) for d in in_shape):
        raise ConversionError(f"Resize with run-time scales/sizes of {ttype(x)}: the input "
                              "needs a static shape")
    given = [a + r if a < 0 else a for a in (axes or range(r))]
    moved = sorted(a for a in given if axes is not None or a >= 2)
    if not 1 <= len(moved) <= 3 or moved != list(range(r - len(moved), r)) or \
            r - len(moved) != 2:
        value(scales if sizes is None else sizes, "sizes" if sizes is not None else "scales")
    pick = const(np.asarray([given.index(a) for a in moved], "int64"))  # moved, in order
    in_moved = const(np.asarray([in_shape[a] for a in moved], "float64"))

    def chosen(v, what):
        return T.take(T.cast(run_time(v, what), "float64"), pick)

    if sizes is not None and shape(sizes) != (0,):
        want = chosen(sizes, "sizes")
        if policy == "stretch":
            size, explicit = T.cast(want, "int64"), None
        else:  # one scale for every axis: the smallest (not_larger) or largest ratio
            ratio = (R.min if policy == "not_larger" else R.max)(E.divide(want, in_moved))
            scale = E.multiply(ratio, const(np.ones(len(moved), "float64")))
            half = const(np.asarray(0.5, "float64"))
            size = T.cast(E.floor(E.add(E.multiply(scale, in_moved), half)), "int64")
            explicit = scale
    else:
        explicit = chosen(scales, "scales")
        size = T.cast(E.floor(E.multiply(explicit, in_moved)), "int64")
    if roi is not None and shape(roi) != (0,):
        n_axes = len(given)
        roi_pick = [given.index(a) for a in moved] + [n_axes + given.index(a) for a in moved]
        roi_t = T.take(T.cast(run_time(roi, "roi"), "float32"),
                       const(np.asarray(roi_pick, "int64")))
    else:
        roi_t = const(np.zeros(0, "float32"))
    scales_t = (const(np.zeros(0, "float32")) if explicit is None
                else T.cast(explicit, "float32"))
    return DP.resize(len(moved), x, size, scales_t, roi_t, **attrs)


def _upsample(x, scales, mode):
    full_scale, full_size, full_roi = _plan(shape(x), scales, None, None, None, "stretch")
    return _resize(x, full_scale, full_size, full_roi, True, method=_method(mode),
                   coordinate_transformation_mode="asymmetric", rounding_method="floor")


@TABLE.register("Upsample", since=7)
def upsample_v7(x, scales, mode="nearest"):
    return _upsample(x, list(scales), mode)


@TABLE.register("Upsample", since=9)
def upsample(x, scales, mode="nearest"):
    return _upsample(x, _floats(scales, "scales"), mode)


@TABLE.register("DepthToSpace")
def depth_to_space(x, blocksize, mode="DCR"):
    return N.depth_to_space(x, int(blocksize), mode=mode)


@TABLE.register("SpaceToDepth")
def space_to_depth(x, blocksize, mode="DCR"):
    return N.space_to_depth(x, int(blocksize), mode=mode)
