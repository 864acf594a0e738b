"""Upsampling (``F.interpolate``) as ``image.resize{1,2,3}d``.

torch's coordinate rules in ONNX terms: ``nearest`` is asymmetric rounding down,
``nearest-exact`` half-pixel rounding half up, ``(bi/tri)linear`` and ``bicubic`` (Keys,
a = -0.75) are half-pixel or align-corners. When a scale factor is given torch maps
coordinates with it rather than with ``out / in``, which is the resize's ``scales``.
"""

from __future__ import annotations

from ...op import image as I
from ..common import ConversionError, ConverterTable
from .base import out_shape, shape, static

TABLE = ConverterTable()
_RESIZE = {1: I.resize1d, 2: I.resize2d, 3: I.resize3d}


def _scales(scales, n: int):
    if scales is None:
        return None
    vals = list(scales) if isinstance(scales, (list, tuple)) else [scales] * n
    return None if any(v is None for v in vals) else [float(v) for v in vals]


def _given(scales, named) -> list | None:
    """The per-axis scales of an ``.default`` overload, positional or by name."""
    out = list(scales) + [named[k] for k in ("scales", "scales_d", "scales_h", "scales_w")
                          if k in named]
    return out or None


def _resize(x, method, scales, align_corners=None, nearest="floor"):
    xs, ys = shape(x), out_shape()
    n = len(xs) - 2
    if not static(*xs[2:], *ys[2:]) or n not in _RESIZE:
        raise ConversionError(f"upsampling of {n} dynamic or unsupported spatial dimensions")
    if method == "nearest_neighbor":
        mode = "asymmetric" if nearest == "floor" else "half_pixel"
        kw = {"rounding_method": nearest}
    else:
        mode = "align_corners" if align_corners else "half_pixel"
        kw = {"cubic_alpha": -0.75} if method == "cubic" else {}
    return _RESIZE[n](x, ys[2:], method=method, coordinate_transformation_mode=mode,
                      scales=None if align_corners else _scales(scales, n), **kw)


@TABLE.register("aten.upsample_nearest1d.vec", "aten.upsample_nearest2d.vec",
                "aten.upsample_nearest3d.vec")
def upsample_nearest_vec(input, output_size, scale_factors):  # noqa: A002
    return _resize(input, "nearest_neighbor", scale_factors)


@TABLE.register("aten._upsample_nearest_exact1d.vec", "aten._upsample_nearest_exact2d.vec",
                "aten._upsample_nearest_exact3d.vec")
def upsample_nearest_exact_vec(input, output_size, scale_factors):  # noqa: A002
    return _resize(input, "nearest_neighbor", scale_factors, nearest="round_prefer_ceil")


@TABLE.register("aten.upsample_nearest1d.default", "aten.upsample_nearest2d.default",
                "aten.upsample_nearest3d.default")
def upsample_nearest(self, output_size, *scales, **named):
    return _resize(self, "nearest_neighbor", _given(scales, named))


@TABLE.register("aten._upsample_nearest_exact1d.default",
                "aten._upsample_nearest_exact2d.default",
                "aten._upsample_nearest_exact3d.default")
def upsample_nearest_exact(self, output_size, *scales, **named):
    return _resize(self, "nearest_neighbor", _given(scales, named), nearest="round_prefer_ceil")


@TABLE.register("aten.upsample_linear1d.vec", "aten.upsample_bilinear2d.vec",
                "aten.upsample_trilinear3d.vec")
def upsample_linear_vec(input, output_size, align_corners, scale_factors):  # noqa: A002
    return _resize(input, "linear", scale_factors, bool(align_corners))


@TABLE.register("aten.upsample_linear1d.default", "aten.upsample_bilinear2d.default",
                "aten.upsample_trilinear3d.default")
def upsample_linear(self, output_size, align_corners, *scales, **named):
    return _resize(self, "linear", _given(scales, named), bool(align_corners))


@TABLE.register("aten.upsample_bicubic2d.vec")
def upsample_bicubic_vec(input, output_size, align_corners, scale_factors):  # noqa: A002
    return _resize(input, "cubic", scale_factors, bool(align_corners))


@TABLE.register("aten.upsample_bicubic2d.default")
def upsample_bicubic(self, output_size, align_corners, *scales, **named):
    return _resize(self, "cubic", _given(scales, named), bool(align_corners))
