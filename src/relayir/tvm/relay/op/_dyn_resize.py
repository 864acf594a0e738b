"""Relay's resizes with run-time sizes or scales, as relayir's ``dyn.image.resize*d``.

``relay.image.resize2d(x, size_expr)`` and ``relay.nn.upsampling(x, scale_expr, ...)``
pick Relay's ``dyn`` ops when an argument is an expression. relayir has one dynamic
resize per rank (``op/dynamic_params.py``); an upsampling by run-time scales is that
resize to ``round(extent * scale)`` computed from ``shape_of`` in the graph, as Relay's
shape function computes it. ``upsampling3d`` (no op of its own in relayir) is
``image.resize3d`` to the scaled size when the scales are numbers and the spatial
extents static, the dynamic resize otherwise.
"""

from __future__ import annotations

import numpy as np

from ....ir.expr import Constant, Expr
from ....op import dynamic_params as dyn_params
from ....op.dynamic import shape_of
from ....op.image import resize3d as _resize3d
from ....op.nn import upsampling as _upsampling
from ....op.tensor import multiply  # type: ignore[attr-defined]
from ....op.tensor import round as _round  # type: ignore[attr-defined]
from ....op.transform import cast, concatenate, reshape, take
from ._arg_facts import constant_value, known_type

_METHOD = {"bilinear": "linear", "trilinear": "linear", "bicubic": "cubic"}


def _nearest_rounding(method: str, coordinate_transformation_mode: str) -> str:
    """TOPI's rounding for a nearest-neighbour resize given none (see ``image.py``)."""
    if method not in ("nearest_neighbor", "nearest"):
        return ""
    return "round_prefer_ceil" if coordinate_transformation_mode == "align_corners" else "floor"


def dynamic_resize(n: int, data, size, roi=None, layout: str = "", **attrs):
    """``dyn.image.resize<n>d``: ``size`` an int expression of ``n`` entries."""
    roi = np.zeros(0) if roi is None else np.asarray(constant_value(roi), "float32").reshape(-1)
    attrs["out_dtype"] = attrs.get("out_dtype") or ""
    return dyn_params.resize(n, data, size, Constant(np.zeros(0, "float32")),
                             Constant(roi.astype("float32")), layout=layout, **attrs)


def _scaled_size(data, layout: str, scales: dict):
    """``round(extent * scale)`` of each axis in ``scales`` (layout letters), as an int64
    tensor in layout order."""
    extents = cast(shape_of(data, "int64"), "float64")
    parts = []
    for axis, letter in enumerate(layout):
        if letter not in scales:
            continue
        scale = scales[letter]
        scale = cast(scale, "float64") if isinstance(scale, Expr) else Constant(
            np.array(float(scale), "float64"))
        extent = take(extents, Constant(np.array([axis], "int64")))
        parts.append(cast(_round(multiply(extent, reshape(scale, (1,)))), "int64"))
    return concatenate(parts, 0)


def _scales(*scales):
    """Numbers for constants; expressions stay."""
    out = []
    for s in scales:
        v = constant_value(s)
        out.append(v[0] if isinstance(v, list) and len(v) == 1 else v)
    return out


def upsampling(data, scale_h=1, scale_w=1, layout: str = "NCHW",
               method: str = "nearest_neighbor", align_corners: bool = False):
    scale_h, scale_w = _scales(scale_h, scale_w)
    if not any(isinstance(s, Expr) for s in (scale_h, scale_w)):
        return _upsampling(data, scale_h, scale_w, layout, method, align_corners)
    mode = "align_corners" if align_corners else "asymmetric"
    size = _scaled_size(data, layout, {"H": scale_h, "W": scale_w})
    return dynamic_resize(2, data, size, layout=layout, method=_METHOD.get(method, method),
                          coordinate_transformation_mode=mode,
                          rounding_method=_nearest_rounding(method, mode))


def upsampling3d(data, scale_d=1, scale_h=1, scale_w=1, layout: str = "NCDHW",
                 method: str = "nearest_neighbor",
                 coordinate_transformation_mode: str = "half_pixel"):
    scales = dict(zip("DHW", _scales(scale_d, scale_h, scale_w)))
    attrs = {"method": _METHOD.get(method, method),
             "coordinate_transformation_mode": coordinate_transformation_mode,
             "rounding_method": _nearest_rounding(method, coordinate_transformation_mode)}
    ty = known_type(data)
    if ty is not None and not any(isinstance(s, Expr) for s in scales.values()):
        extents = dict(zip(layout, ty.shape))
        if all(isinstance(extents[a], int) for a in "DHW"):
            size = tuple(int(round(extents[a] * float(scales[a]))) for a in "DHW")
            return _resize3d(data, size, layout=layout, **attrs)
    return dynamic_resize(3, data, _scaled_size(data, layout, scales), layout=layout, **attrs)
