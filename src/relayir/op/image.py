"""Image operators: ``image.resize1d``, ``image.resize2d``, ``image.resize3d``.

Relay's names and arguments, with ONNX ``Resize`` semantics (opset 19), which are
separable: each spatial axis maps output index ``x`` to a source coordinate ``x_in``
(``coordinate_transformation_mode``), then reads

- ``nearest_neighbor``: ``x_in`` rounded by ``rounding_method`` (``round_prefer_floor``,
  ``round_prefer_ceil``, ``floor``, ``ceil``, or ``round``: half away from zero);
- ``linear``: the two neighbours ``floor(x_in)``, ``+1`` weighted by distance;
- ``cubic``: four neighbours with Keys' kernel (``cubic_alpha``); ``cubic_exclude``
  drops taps outside the input and renormalises the rest.

``antialias`` (ONNX 18) stretches the linear/cubic kernel by ``1 / scale`` when an axis
is downscaled, over as many taps as it then covers, normalised to sum to one.

Reads outside the input clamp to the edge. ``tf_crop_and_resize`` maps the output onto
the ``roi`` window ``(start..., end...)`` (fractions of the input) and writes
``extrapolation_value`` where the source coordinate leaves the input. ``scales``
(optional, one per spatial axis) is the scale the coordinates use when it is not
``size / input`` (ONNX's ``scales`` input: the size is ``floor(input * scale)``).

The per-axis maps are also used as dense ``(out, in)`` matrices: the numpy reference
and the gradient (the transposed matrices) share :func:`axis_weights`.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math

import numpy as np

from ..ir.op import Attrs, OpPattern, call, register_op
from ..ir.types import TensorType, is_float
from .attrs_util import attr_dtype, set_fields
from .type_rel import fail, tensor

METHODS = ("nearest_neighbor", "linear", "cubic")
_METHOD_ALIASES = {"nearest": "nearest_neighbor", "bilinear": "linear", "trilinear": "linear",
                   "bicubic": "cubic", "tricubic": "cubic"}
COORDINATE_MODES = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                    "align_corners", "asymmetric", "tf_half_pixel_for_nn",
                    "tf_crop_and_resize")
ROUNDING = ("round", "round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def _choice(value: str, allowed, name: str) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}, found {value!r}")
    return value


@dataclasses.dataclass(frozen=True)
class Resize2DAttrs(Attrs):
    size: tuple = ()
    roi: tuple = ()
    layout: str = "NCHW"
    method: str = "linear"
    coordinate_transformation_mode: str = "half_pixel"
    rounding_method: str = ""  # "" means "round" (TVM) for nearest_neighbor
    cubic_alpha: float = -0.5
    cubic_exclude: int = 0
    extrapolation_value: float = 0.0
    out_dtype: str = ""
    scales: tuple = ()
    antialias: bool = False

    _spatial = "HW"

    def __post_init__(self):
        n = len(self._spatial)
        size = tuple(int(v) for v in np.asarray(self.size).reshape(-1))
        if len(size) != n or min(size) < 1:
            raise ValueError(f"size needs {n} positive ints, found {self.size!r}")
        roi = tuple(float(v) for v in np.asarray(self.roi, dtype="float64").reshape(-1))
        if roi and len(roi) != 2 * n:
            raise ValueError(f"roi needs {2 * n} values (start..., end...), found {self.roi!r}")
        if roi == (0.0,) * n + (1.0,) * n:
            roi = ()
        scales = tuple(float(v) for v in np.asarray(self.scales, dtype="float64").reshape(-1))
        if scales and (len(scales) != n or min(scales) <= 0):
            raise ValueError(f"scales needs {n} positive values, found {self.scales!r}")
        method = _METHOD_ALIASES.get(self.method, self.method)
        rounding = self.rounding_method or ("round" if method == "nearest_neighbor" else "")
        if rounding:
            _choice(rounding, ROUNDING, "rounding_method")
        if sorted(self.layout) != sorted("NC" + self._spatial):
            raise ValueError(f"layout must be a permutation of NC{self._spatial}, "
                             f"found {self.layout!r}")
        set_fields(self, size=size, roi=roi, scales=scales,
                   method=_choice(method, METHODS, "method"),
                   coordinate_transformation_mode=_choice(
                       self.coordinate_transformation_mode, COORDINATE_MODES,
                       "coordinate_transformation_mode"),
                   rounding_method="" if rounding == "round" else rounding,
                   cubic_alpha=float(self.cubic_alpha),
                   cubic_exclude=int(bool(self.cubic_exclude)), antialias=bool(self.antialias),
                   extrapolation_value=float(self.extrapolation_value),
                   out_dtype="" if self.out_dtype in ("", None)
                   else attr_dtype(self.out_dtype, "out_dtype"))

    @property
    def rounding(self) -> str:
        return self.rounding_method or "round"

    def axis_roi(self, j: int) -> tuple[float, float]:
        n = len(self._spatial)
        return (self.roi[j], self.roi[j + n]) if self.roi else (0.0, 1.0)

    def axis_scale(self, j: int, in_size: int) -> float:
        return self.scales[j] if self.scales else self.size[j] / in_size

    def antialias_taps(self, j: int, in_size: int) -> tuple[int, float] | None:
        """``(taps, kernel scale)`` of an antialiased axis (a linear or cubic kernel
        stretched by ``1 / scale`` when downscaling), or None for the plain kernel."""
        scale = self.axis_scale(j, in_size)
        if not self.antialias or self.method == "nearest_neighbor" or scale >= 1:
            return None
        reach = 1 if self.method == "linear" else 2
        return 2 * (1 - (math.floor(-reach / scale) + 1)), scale


@dataclasses.dataclass(frozen=True)
class Resize1DAttrs(Resize2DAttrs):
    layout: str = "NCW"

    _spatial = "W"


@dataclasses.dataclass(frozen=True)
class Resize3DAttrs(Resize2DAttrs):
    layout: str = "NCDHW"

    _spatial = "DHW"


# ---------------------------------------------------------------- per-axis geometry


def source_coordinate(mode: str, x, in_size: int, out_size: int, scale: float, roi):
    """ONNX's map from output index ``x`` to the input coordinate (numpy or TE exprs:
    only arithmetic on ``x``, the rest are Python numbers).

    Scales divide, as ONNX writes them: no product here meets an addition, so a C
    compiler's multiply-add contraction cannot move a coordinate that is exactly an
    integer (``(4 + 0.5) * (1/3) - 0.5`` fused is 0.9999999999999999, which picks
    another pixel than 1.0 does)."""
    out_float = scale * in_size
    if mode == "align_corners":
        return x * 0.0 if out_float == 1 else x * float(in_size - 1) / (out_float - 1)
    if mode == "asymmetric":
        return x / scale
    if mode == "tf_half_pixel_for_nn":
        return (x + 0.5) / scale
    if mode == "tf_crop_and_resize":
        start, end = roi
        if out_float == 1:
            return x * 0.0 + (end - start) * (in_size - 1) / 2 + start * (in_size - 1)
        return x * ((end - start) * (in_size - 1)) / (out_float - 1) + start * (in_size - 1)
    if mode == "pytorch_half_pixel" and out_float == 1:
        return x * 0.0 - 0.5
    if mode == "half_pixel_symmetric":
        offset = in_size / 2 * (1 - out_size / out_float)
        return (x + 0.5) / scale - 0.5 + offset
    return (x + 0.5) / scale - 0.5  # half_pixel, pytorch_half_pixel


def cubic_weights(t, a: float):
    """Keys' kernel at distances ``1 + t, t, 1 - t, 2 - t`` (taps ``floor - 1 .. floor +
    2`` for the fraction ``t``)."""
    s = 1 - t
    return [((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a,
            ((a + 2) * t - (a + 3)) * t * t + 1,
            ((a + 2) * s - (a + 3)) * s * s + 1,
            ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a]


def antialias_kernel(d, method: str, a: float, where, absolute):
    """The linear (triangle) or cubic (Keys) kernel at distance ``d`` (numpy or TE, given
    its ``where(cond, x, y)`` and ``abs``)."""
    d = absolute(d)
    if method == "linear":
        return where(d < 1.0, 1.0 - d, d * 0.0)
    d2 = d * d
    near = ((a + 2) * d - (a + 3)) * d2 + 1
    far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return where(d <= 1.0, near, where(d < 2.0, far, d * 0.0))


def _nearest(x: np.ndarray, rounding: str) -> np.ndarray:
    if rounding == "round_prefer_floor":
        return np.ceil(x - 0.5)
    if rounding == "round_prefer_ceil":
        return np.floor(x + 0.5)
    if rounding == "floor":
        return np.floor(x)
    if rounding == "ceil":
        return np.ceil(x)
    return np.where(x >= 0, np.floor(x + 0.5), np.ceil(x - 0.5))


def axis_weights(attrs, j: int, in_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Axis ``j`` as a dense ``(out, in)`` float64 matrix, and the mask of output
    positions that take ``extrapolation_value`` instead."""
    taps, weights, outside = axis_taps(attrs, j, in_size)
    matrix = np.zeros((attrs.size[j], in_size))
    rows = np.broadcast_to(np.arange(attrs.size[j])[:, None], taps.shape)
    np.add.at(matrix, (rows, taps), weights)
    return matrix, outside


def axis_taps(attrs, j: int, in_size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Axis ``j``'s taps: ``(out, k)`` clamped input indices and their float64 weights,
    and the mask of output positions that take ``extrapolation_value`` instead."""
    out_size = attrs.size[j]
    x = source_coordinate(attrs.coordinate_transformation_mode,
                          np.arange(out_size, dtype="float64"), in_size, out_size,
                          attrs.axis_scale(j, in_size), attrs.axis_roi(j))
    x = np.broadcast_to(np.asarray(x, "float64"), (out_size,))
    outside = np.zeros(out_size, bool)
    if attrs.coordinate_transformation_mode == "tf_crop_and_resize":
        outside = (x < 0) | (x > in_size - 1)
    stretched = attrs.antialias_taps(j, in_size)
    if attrs.method == "nearest_neighbor":
        taps = _nearest(x, attrs.rounding)[:, None]
        weights = np.ones_like(taps)
    elif stretched is not None:  # ONNX: the n taps nearest to x, normalised, then excluded
        n, scale = stretched
        taps = np.floor(x)[:, None] + np.arange(n) - (n // 2 - 1)
        weights = antialias_kernel((taps - x[:, None]) * scale, attrs.method,
                                   attrs.cubic_alpha, np.where, np.abs)
        weights = weights / weights.sum(axis=1, keepdims=True)
        if attrs.cubic_exclude:
            weights = np.where((taps >= 0) & (taps < in_size), weights, 0.0)
            weights = weights / weights.sum(axis=1, keepdims=True)
    else:
        base = np.floor(x)
        t = x - base
        if attrs.method == "linear":
            taps = base[:, None] + np.arange(2)
            weights = np.stack([1 - t, t], axis=1)
        else:
            taps = base[:, None] + np.arange(-1, 3)
            weights = np.stack(cubic_weights(t, attrs.cubic_alpha), axis=1)
            if attrs.cubic_exclude:
                weights = np.where((taps >= 0) & (taps < in_size), weights, 0.0)
                weights = weights / weights.sum(axis=1, keepdims=True)
    return np.clip(taps, 0, in_size - 1).astype("int64"), weights, outside


# ---------------------------------------------------------------- relation and reference


def _resize_rel(types, attrs):
    data = tensor(types[0])
    lay = attrs.layout
    if data.ndim != len(lay):
        fail(f"data must have rank {len(lay)} ({lay}), found {data}")
    dtype = attrs.out_dtype or data.dtype
    if attrs.method != "nearest_neighbor" and not (is_float(data.dtype) and is_float(dtype)):
        fail(f"{attrs.method} interpolation needs float data and out_dtype, found {data}"
             f"{' -> ' + dtype if attrs.out_dtype else ''}")
    dims = dict(zip(lay, data.shape))
    dims.update(zip(attrs._spatial, attrs.size))
    return TensorType(tuple(dims[a] for a in lay), dtype)


def _resize_ref(data, attrs):
    dtype = attrs.out_dtype or data.dtype.name
    lay, sp = attrs.layout, attrs._spatial
    nearest = attrs.method == "nearest_neighbor"
    x = data if nearest else data.astype("float64")  # nearest copies: int64 stays exact
    outside = False
    for j, a in enumerate(sp):
        # a sum over the taps (as the kernels compute), not a product with the dense
        # weight matrix, whose zero entries would spread a NaN or Inf across the axis
        axis = lay.index(a)
        taps, weights, out_j = axis_taps(attrs, j, data.shape[axis])
        shape = [1] * x.ndim
        shape[axis] = -1
        if nearest:
            x = np.take(x, taps[:, 0], axis=axis)
        else:
            # reduce, not sum(): sum() starts from the int 0, and 0 + -0.0 is +0.0
            x = functools.reduce(np.add, (np.take(x, taps[:, k], axis=axis)
                                          * weights[:, k].reshape(shape)
                                          for k in range(taps.shape[1])))
        mask_shape = [1] * x.ndim
        mask_shape[axis] = -1
        outside = outside | out_j.reshape(mask_shape)
    if np.any(outside):
        fill = attrs.extrapolation_value
        if x.dtype.kind in "iu":  # rounded half to even, like every integer result
            fill = np.asarray(np.round(fill)).astype(x.dtype)
        x = np.where(outside, fill, x)
    if not is_float(dtype) and x.dtype.kind == "f":
        x = np.round(x)
    return x.astype(dtype)


for _n, _attrs in ((1, Resize1DAttrs), (2, Resize2DAttrs), (3, Resize3DAttrs)):
    register_op(f"image.resize{_n}d", rel=_resize_rel, ref=_resize_ref,
                pattern=OpPattern.INJECTIVE, num_inputs=1, attrs=_attrs)


def _call(n, data, size, roi, layout, method, coordinate_transformation_mode,
          rounding_method, cubic_alpha, cubic_exclude, extrapolation_value, out_dtype, scales,
          antialias):
    return call(f"image.resize{n}d", [data], size=size, roi=roi or (), layout=layout,
                method=method, coordinate_transformation_mode=coordinate_transformation_mode,
                rounding_method=rounding_method, cubic_alpha=cubic_alpha,
                cubic_exclude=cubic_exclude, extrapolation_value=extrapolation_value,
                out_dtype=out_dtype or "", scales=scales or (), antialias=antialias)


def resize1d(data, size, roi=None, layout="NCW", method="linear",
             coordinate_transformation_mode="half_pixel", rounding_method="", cubic_alpha=-0.5,
             cubic_exclude=0, extrapolation_value=0.0, out_dtype=None, scales=None,
             antialias=False):
    return _call(1, data, size, roi, layout, method, coordinate_transformation_mode,
                 rounding_method, cubic_alpha, cubic_exclude, extrapolation_value, out_dtype,
                 scales, antialias)


def resize2d(data, size, roi=None, layout="NCHW", method="linear",
             coordinate_transformation_mode="half_pixel", rounding_method="", cubic_alpha=-0.5,
             cubic_exclude=0, extrapolation_value=0.0, out_dtype=None, scales=None,
             antialias=False):
    """Relay's ``image.resize2d``; ``scales`` and ``antialias`` are extensions (see the
    module docstring)."""
    return _call(2, data, size, roi, layout, method, coordinate_transformation_mode,
                 rounding_method, cubic_alpha, cubic_exclude, extrapolation_value, out_dtype,
                 scales, antialias)


def resize3d(data, size, roi=None, layout="NCDHW", method="linear",
             coordinate_transformation_mode="half_pixel", rounding_method="", cubic_alpha=-0.5,
             cubic_exclude=0, extrapolation_value=0.0, out_dtype=None, scales=None,
             antialias=False):
    return _call(3, data, size, roi, layout, method, coordinate_transformation_mode,
                 rounding_method, cubic_alpha, cubic_exclude, extrapolation_value, out_dtype,
                 scales, antialias)


def resize_output_size(in_size: int, scale: float) -> int:
    """ONNX's output extent for a scale: ``floor(in * scale)``."""
    return int(math.floor(in_size * scale))


# ---------------------------------------------------------------- grid_sample

GRID_METHODS = ("nearest", "bilinear", "bicubic")
_GRID_METHOD_ALIASES = {"linear": "bilinear", "trilinear": "bilinear", "cubic": "bicubic"}
PADDING_MODES = ("zeros", "border", "reflection")


@dataclasses.dataclass(frozen=True)
class GridSampleAttrs(Attrs):
    """Relay's ``image.grid_sample``, N-d: ``data`` is ``(N, C, *in)`` and ``grid`` is
    ``(N, ndim, *out)`` (Relay's channel-first grid) holding normalised ``x, y(, z)``
    coordinates in [-1, 1] (``x`` indexes the last axis)."""

    method: str = "bilinear"
    layout: str = "NCHW"
    padding_mode: str = "zeros"
    align_corners: bool = True

    def __post_init__(self):
        method = _GRID_METHOD_ALIASES.get(self.method, self.method)
        if self.layout not in ("NCW", "NCHW", "NCDHW"):
            raise ValueError(f"grid_sample layout must be NCW, NCHW or NCDHW, "
                             f"found {self.layout!r}")
        set_fields(self, method=_choice(method, GRID_METHODS, "method"),
                   padding_mode=_choice(self.padding_mode, PADDING_MODES, "padding_mode"),
                   align_corners=bool(self.align_corners))


def grid_bounds(size: int, align_corners: bool) -> tuple[float, float]:
    """The coordinate range that lies inside an axis of ``size`` samples."""
    return (0.0, size - 1.0) if align_corners else (-0.5, size - 0.5)


def grid_reflect(x, lo: float, hi: float, where, floor):
    """Fold ``x`` into ``[lo, hi]`` by reflecting at the near border (numpy or TE)."""
    span = hi - lo
    if span <= 0:
        return x * 0.0 + lo

    def fold(d, near, far):  # d >= 0: the distance past ``near``
        turns = floor(d * (1.0 / span))
        rest = d - turns * span
        even = turns - floor(turns * 0.5) * 2.0 < 0.5
        return where(even, near + rest * (1.0 if near == lo else -1.0),
                     far + rest * (1.0 if far == lo else -1.0))

    return where(x < lo, fold(lo - x, lo, hi), where(x > hi, fold(x - hi, hi, lo), x))


def grid_unnormalise(g, size: int, align_corners: bool):
    """A normalised coordinate in [-1, 1] → a position along an axis of ``size``."""
    if align_corners:
        return (g + 1.0) * ((size - 1) / 2.0)
    return ((g + 1.0) * size - 1.0) * 0.5


def grid_coordinate(g, size: int, attrs, ops):
    """ONNX GridSample's source coordinate along one axis after padding (``nearest``:
    rounded half to even first). ``ops`` supplies ``where``, ``floor``, ``rint``, ``clip``."""
    where, floor = ops["where"], ops["floor"]
    x = grid_unnormalise(g, size, attrs.align_corners)
    if attrs.method == "nearest":
        x = ops["rint"](x)
    lo, hi = grid_bounds(size, attrs.align_corners)
    if attrs.padding_mode == "border":
        x = where((x < lo) | (x > hi), ops["clip"](x, 0.0, size - 1.0), x)
    elif attrs.padding_mode == "reflection":
        x = grid_reflect(x, lo, hi, where, floor)
    return x


def grid_axis_taps(g, size: int, attrs, ops):
    """ONNX GridSample along one axis: the normalised coordinates ``g`` (numpy, TE or
    Relay) → ``[(float tap index, weight or None)]`` before padding (see
    :func:`grid_tap_index`); ``ops`` as :func:`grid_coordinate` plus ``trunc``."""
    x = grid_coordinate(g, size, attrs, ops)
    floor = ops["floor"]
    if attrs.method == "nearest":
        return [(ops["trunc"](x), None)]
    base = floor(x)
    t = x - base
    if attrs.method == "bilinear":
        return [(base, 1.0 - t), (base + 1.0, t)]
    weights = cubic_weights(t, -0.75)
    return [(base + float(k), w) for k, w in zip(range(-1, 3), weights)]


def grid_tap_index(i, size: int, attrs, where, floor):
    """A float tap index → ``(index within the axis, inside?)``: zeros padding reads 0
    outside, border clamps, reflection folds into the axis."""
    if attrs.padding_mode == "reflection":
        lo, hi = grid_bounds(size, attrs.align_corners)
        i = grid_reflect(i, lo, hi, where, floor)
        i = where(i < 0.0, -floor(-i), floor(i))  # C's truncation, as ONNX
    clipped = where(i < 0.0, i * 0.0, where(i > size - 1.0, i * 0.0 + (size - 1.0), i))
    inside = None if attrs.padding_mode != "zeros" else (i >= 0.0) & (i <= size - 1.0)
    return clipped, inside


_NP_OPS = {"where": np.where, "floor": np.floor, "rint": np.rint, "clip": np.clip,
           "trunc": np.trunc}


def _grid_sample_rel(types, attrs):
    data, grid = tensor(types[0]), tensor(types[1])
    n = len(attrs.layout) - 2
    if data.ndim != n + 2:
        fail(f"data must have rank {n + 2} ({attrs.layout}), found {data}")
    if grid.ndim != n + 2 or grid.shape[1] != n:
        fail(f"grid must be (N, {n}, *out) for {attrs.layout} data {data}, found {grid}")
    if not (is_float(data.dtype) and is_float(grid.dtype)):
        fail(f"grid_sample needs float data and grid, found {data} and {grid}")
    return TensorType((data.shape[0], data.shape[1], *grid.shape[2:]), data.dtype)


def _grid_sample_ref(data, grid, attrs):
    x = data.astype("float64")
    n, c, *sizes = x.shape
    g = grid.astype("float64")
    per_axis, inside = [], True
    for j, size in enumerate(sizes):  # axis j is read by grid coordinate ndim - 1 - j
        taps = grid_axis_taps(g[:, len(sizes) - 1 - j], size, attrs, _NP_OPS)
        per_axis.append([(*grid_tap_index(t, size, attrs, np.where, np.floor), w)
                         for t, w in taps])
    batch = np.arange(n).reshape((n,) + (1,) * (g.ndim - 2))
    out = 0.0
    for choice in itertools.product(*per_axis):
        # a NaN coordinate reads index 0, as the kernels' float-to-int cast gives
        index = (np.where(np.isnan(i), 0.0, i).astype("int64") for i, _, _ in choice)
        value = np.moveaxis(x[(batch, slice(None), *index)], -1, 1)
        inside = True
        for _, ok, w in choice:
            value = value * (1.0 if w is None else np.expand_dims(w, 1))
            inside = inside & (True if ok is None else ok)
        if inside is not True:  # zeros padding: a tap outside adds 0
            value = np.where(np.expand_dims(inside, 1), value, 0.0)
        out = out + value
    return np.asarray(out, "float64").astype(data.dtype)


register_op("image.grid_sample", rel=_grid_sample_rel, ref=_grid_sample_ref,
            pattern=OpPattern.INJECTIVE, num_inputs=2, arg_names=("data", "grid"),
            attrs=GridSampleAttrs,
            description="samples data at the normalised coordinates of grid")


def grid_sample(data, grid, method="bilinear", layout="NCHW", padding_mode="zeros",
                align_corners=True):
    """Relay's ``image.grid_sample`` (``grid``: ``(N, ndim, *out)``), any of 1-3 spatial
    axes, with ONNX GridSample's modes (``bicubic`` uses Keys' ``a = -0.75``)."""
    return call("image.grid_sample", [data, grid], method=method, layout=layout,
                padding_mode=padding_mode, align_corners=align_corners)
