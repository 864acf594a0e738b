"""``dyn`` ops whose run-time tensor is an op's parameter rather than a shape: the axes
of a reduction, ``squeeze`` or an ``Unsqueeze``, a ``topk``'s ``k``, a scan's axis, a
``trilu``'s diagonal, a one-hot depth, split sizes, a resize's size/scales/roi, NMS
limits. ONNX passes all of these as graph inputs (opset 13 on), so a model a user runs
with them as RUN-TIME inputs must compile (``frontend/onnx.py``).

Like ``op/dynamic.py``'s, each is its static op with some attributes moved into
tensor inputs (one ``DYNAMIC`` entry: the reference runs the static op's reference, and
``DynamicToStatic`` rewrites a call whose parameter inputs are constants into the static
op). The result's rank (and dtype) is known from the static lengths of those inputs
(a 1-D ``axes`` tensor of length ``n`` reduces ``n`` axes); its extents are ``Any`` where
the values decide them. The VM runs them as data-dependent calls (their numpy
references); the graph executor, which needs static shapes, refuses them.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..ir.expr import TupleGetItem
from ..ir.op import Attrs, call, get_op, make_attrs
from ..ir.types import Any, TensorType, TupleType, is_float, is_int
from .attrs_util import attr_dtype, attr_int, set_fields
from .dynamic import register_dynamic, shape_arg
from .type_rel import check_axis, fail, show_type, tensor


def _ints(v) -> tuple[int, ...]:
    return tuple(int(i) for i in np.asarray(v).reshape(-1))


def _floats(v) -> tuple[float, ...]:
    return tuple(float(i) for i in np.asarray(v, dtype="float64").reshape(-1))


def _scalar_arg(ty, what: str, kind=is_int) -> None:
    """A run-time scalar parameter: a 0-d or one-element 1-D tensor of ``kind``."""
    t = tensor(ty, what)
    if t.shape not in ((), (1,)) or not kind(t.dtype):
        fail(f"{what} must be a scalar or a 1-element tensor of "
             f"{'integer' if kind is is_int else 'float'} dtype, found {show_type(t)}")


def _one(v) -> int:
    return int(np.asarray(v).reshape(-1)[0])


# ---------------------------------------------------------------- reductions


@dataclasses.dataclass(frozen=True)
class DynReduceAttrs(Attrs):
    keepdims: bool = False

    def __post_init__(self):
        set_fields(self, keepdims=bool(self.keepdims))


def _reduce_rel(static: str):
    def rel(types, attrs):
        data = tensor(types[0])
        n = shape_arg(types[1], "axes")
        if n > data.ndim:
            fail(f"axes has {n} entries but data {show_type(data)} has rank {data.ndim}")
        # the static relation, reducing every axis, checks the dtype and names the result's
        probe = get_op(static).type_rel([data], make_attrs(get_op(static), {"keepdims": True}))
        rank = data.ndim if attrs.keepdims else (data.ndim - n if n else 0)  # () is all
        return TensorType((Any(),) * rank, probe.dtype)
    return rel


REDUCTIONS = ("sum", "mean", "max", "min", "prod", "logsumexp")
for _name in REDUCTIONS:
    register_dynamic(f"dyn.{_name}", _name, (1,), _reduce_rel(_name),
                     lambda a, axes: {"axis": _ints(axes), "keepdims": a.keepdims},
                     ("data", "axes"), DynReduceAttrs, f"{_name} over run-time axes")


def reduce(name: str, data, axes, keepdims=False):
    """``dyn.<name>(data, axes)``: ``name`` is one of ``REDUCTIONS``."""
    return call(f"dyn.{name}", [data, axes], keepdims=keepdims)


# ---------------------------------------------------------------- squeeze, unsqueeze


def _squeeze_rel(types, attrs):
    data = tensor(types[0])
    n = shape_arg(types[1], "axes")
    if n > data.ndim:
        fail(f"axes has {n} entries but data {show_type(data)} has rank {data.ndim}")
    return TensorType((Any(),) * (data.ndim - n), data.dtype)


register_dynamic("dyn.squeeze", "squeeze", (1,), _squeeze_rel,
                 lambda a, axes: {"axis": _ints(axes)}, ("data", "axes"),
                 description="remove the size-1 axes named at run time")


def _unsqueeze_rel(types, attrs):
    data = tensor(types[0])
    return TensorType((Any(),) * (data.ndim + shape_arg(types[1], "axes")), data.dtype)


def _unsqueeze_static(a, axes, data_shapes):
    """ONNX Unsqueeze: ones inserted at ``axes`` of the result (negative: from its end)."""
    shape = data_shapes[0]
    rank = len(shape) + len(np.asarray(axes).reshape(-1))
    picked = sorted(int(x) + rank if int(x) < 0 else int(x) for x in _ints(axes))
    if len(set(picked)) != len(picked) or any(not 0 <= x < rank for x in picked):
        raise ValueError(f"Unsqueeze axes {_ints(axes)} must be distinct and within the "
                         f"result's rank {rank}")
    rest = iter(shape)
    return {"newshape": tuple(1 if i in picked else next(rest) for i in range(rank))}


register_dynamic("dyn.unsqueeze", "reshape", (1,), _unsqueeze_rel, _unsqueeze_static,
                 ("data", "axes"), description="insert size-1 axes named at run time",
                 data_shapes=True)


def squeeze(data, axes):
    return call("dyn.squeeze", [data, axes])


def unsqueeze(data, axes):
    return call("dyn.unsqueeze", [data, axes])


# ---------------------------------------------------------------- cumsum, cumprod, trilu


@dataclasses.dataclass(frozen=True)
class DynScanAttrs(Attrs):
    exclusive: bool = False
    reverse: bool = False

    def __post_init__(self):
        set_fields(self, exclusive=bool(self.exclusive), reverse=bool(self.reverse))


def _scan_rel(types, attrs):
    data = tensor(types[0])
    _scalar_arg(types[1], "axis")
    if data.dtype == "bool":
        fail(f"data {show_type(data)} is bool: cast it for the running total")
    return data


for _name in ("cumsum", "cumprod"):
    register_dynamic(f"dyn.{_name}", _name, (1,), _scan_rel,
                     lambda a, axis: {"axis": _one(axis), "exclusive": a.exclusive,
                                      "reverse": a.reverse},
                     ("data", "axis"), DynScanAttrs, f"{_name} along a run-time axis")


def scan(name: str, data, axis, exclusive=False, reverse=False):
    """``dyn.cumsum`` / ``dyn.cumprod`` along the axis ``axis`` holds."""
    return call(f"dyn.{name}", [data, axis], exclusive=exclusive, reverse=reverse)


@dataclasses.dataclass(frozen=True)
class DynTriluAttrs(Attrs):
    upper: bool = True

    def __post_init__(self):
        set_fields(self, upper=bool(self.upper))


def _trilu_rel(types, attrs):
    data = tensor(types[0])
    _scalar_arg(types[1], "k")
    if data.ndim < 2:
        fail(f"data must have rank >= 2, found {show_type(data)}")
    return data


register_dynamic("dyn.trilu", "trilu", (1,), _trilu_rel,
                 lambda a, k: {"k": _one(k), "upper": a.upper}, ("data", "k"), DynTriluAttrs,
                 "a triangle from a run-time diagonal")


def trilu(data, k, upper=True):
    return call("dyn.trilu", [data, k], upper=upper)


# ---------------------------------------------------------------- topk


@dataclasses.dataclass(frozen=True)
class DynTopKAttrs(Attrs):
    axis: int = -1
    is_ascend: bool = False
    dtype: str = "int32"

    def __post_init__(self):
        set_fields(self, axis=attr_int(self.axis, "axis"), is_ascend=bool(self.is_ascend),
                   dtype=attr_dtype(self.dtype))


def _topk_rel(types, attrs):
    data = tensor(types[0])
    _scalar_arg(types[1], "k")
    axis = check_axis(attrs.axis, data.ndim, of=f"data {show_type(data)}")
    shape = data.shape[:axis] + (Any(),) + data.shape[axis + 1:]
    return TupleType((TensorType(shape, data.dtype), TensorType(shape, attrs.dtype)))


register_dynamic("dyn.topk", "topk", (1,), _topk_rel,
                 lambda a, k: {"k": _one(k), "axis": a.axis, "ret_type": "both",
                               "is_ascend": a.is_ascend, "dtype": a.dtype},
                 ("data", "k"), DynTopKAttrs, "the k largest (or smallest), k at run time")


def topk(data, k, axis=-1, is_ascend=False, dtype="int32"):
    """``(values, indices)`` of the run-time ``k`` largest along ``axis``."""
    out = call("dyn.topk", [data, k], axis=axis, is_ascend=is_ascend, dtype=dtype)
    return TupleGetItem(out, 0), TupleGetItem(out, 1)


# ---------------------------------------------------------------- one_hot


@dataclasses.dataclass(frozen=True)
class DynOneHotAttrs(Attrs):
    axis: int = -1
    dtype: str = "float32"

    def __post_init__(self):
        set_fields(self, axis=attr_int(self.axis, "axis"), dtype=attr_dtype(self.dtype))


def _one_hot_rel(types, attrs):
    idx = tensor(types[0], "indices")
    _scalar_arg(types[3], "depth", lambda d: is_int(d) or is_float(d))
    out = get_op("one_hot").type_rel(types[:3], make_attrs(
        get_op("one_hot"), {"depth": 1, "axis": attrs.axis, "dtype": attrs.dtype}))
    axis = attrs.axis + idx.ndim + 1 if attrs.axis < 0 else attrs.axis
    return TensorType(out.shape[:axis] + (Any(),) + out.shape[axis + 1:], out.dtype)


register_dynamic("dyn.one_hot", "one_hot", (3,), _one_hot_rel,
                 lambda a, depth: {"depth": _one(depth), "axis": a.axis, "dtype": a.dtype},
                 ("indices", "on_value", "off_value", "depth"), DynOneHotAttrs,
                 "one-hot encoding with a run-time depth")


def one_hot(indices, on_value, off_value, depth, axis=-1, dtype="float32"):
    return call("dyn.one_hot", [indices, on_value, off_value, depth], axis=axis, dtype=dtype)


# ---------------------------------------------------------------- split


@dataclasses.dataclass(frozen=True)
class DynSplitAttrs(Attrs):
    axis: int = 0

    def __post_init__(self):
        set_fields(self, axis=attr_int(self.axis, "axis"))


def _split_rel(types, attrs):
    data = tensor(types[0])
    n = shape_arg(types[1], "sizes")
    axis = check_axis(attrs.axis, data.ndim, of=f"data {show_type(data)}")
    part = TensorType(data.shape[:axis] + (Any(),) + data.shape[axis + 1:], data.dtype)
    return TupleType((part,) * n)


def _split_static(a, sizes, data_shapes):
    sizes = _ints(sizes)
    extent = data_shapes[0][a.axis]
    if any(s < 0 for s in sizes) or sum(sizes) != extent:
        raise ValueError(f"split sizes {sizes} must be >= 0 and add up to the extent "
                         f"{extent} of axis {a.axis}")
    return {"indices_or_sections": tuple(np.cumsum(sizes[:-1]).tolist()), "axis": a.axis}


register_dynamic("dyn.split", "split", (1,), _split_rel, _split_static, ("data", "sizes"),
                 DynSplitAttrs, "split into parts of run-time sizes", data_shapes=True)


def split(data, sizes, axis=0):
    """A tuple of ``len(sizes)`` parts (a tuple-typed call)."""
    return call("dyn.split", [data, sizes], axis=axis)


# ---------------------------------------------------------------- image.resize1d/2d/3d


@dataclasses.dataclass(frozen=True)
class DynResizeAttrs(Attrs):
    """The static resize's attrs but ``size``, ``scales`` and ``roi`` (run-time inputs;
    an empty ``scales`` or ``roi`` tensor means not given)."""

    layout: str = ""
    method: str = "linear"
    coordinate_transformation_mode: str = "half_pixel"
    rounding_method: str = ""
    cubic_alpha: float = -0.5
    cubic_exclude: int = 0
    extrapolation_value: float = 0.0
    out_dtype: str = ""
    antialias: bool = False


_DEFAULT_LAYOUT = {1: "NCW", 2: "NCHW", 3: "NCDHW"}


def _resize_rel(n: int):
    def rel(types, attrs):
        data = tensor(types[0])
        if data.ndim != n + 2:
            fail(f"data must have rank {n + 2}, found {show_type(data)}")
        layout = attrs.layout or _DEFAULT_LAYOUT[n]
        if sorted(layout) != sorted(_DEFAULT_LAYOUT[n]):
            fail(f"layout must be a permutation of {_DEFAULT_LAYOUT[n]}, found {layout!r}")
        if shape_arg(types[1], "size") != n:
            fail(f"size must have {n} entries, found {show_type(tensor(types[1]))}")
        for ty, what in ((types[2], "scales"), (types[3], "roi")):
            t = tensor(ty, what)
            if t.ndim != 1 or not is_float(t.dtype):
                fail(f"{what} must be a 1-D float tensor, found {show_type(t)}")
        shape = tuple(d if c in "NC" else Any() for c, d in zip(layout, data.shape))
        return TensorType(shape, attrs.out_dtype or data.dtype)
    return rel


def _resize_static(a, size, scales, roi):
    fields = {f.name: getattr(a, f.name) for f in dataclasses.fields(a)}
    if not fields["layout"]:
        del fields["layout"]  # the static op's default for its rank
    fields.update(size=_ints(size), scales=_floats(scales), roi=_floats(roi))
    return fields


for _n in (1, 2, 3):
    register_dynamic(f"dyn.image.resize{_n}d", f"image.resize{_n}d", (1, 2, 3),
                     _resize_rel(_n), _resize_static,
                     ("data", "size", "scales", "roi"), DynResizeAttrs,
                     f"image.resize{_n}d to a run-time size")


def resize(n: int, data, size, scales, roi, **attrs):
    """``dyn.image.resize<n>d``: ``size`` int64 (n,), ``scales`` and ``roi`` float
    tensors (empty: not given)."""
    return call(f"dyn.image.resize{n}d", [data, size, scales, roi], **attrs)


# ---------------------------------------------------------------- vision.non_max_suppression


@dataclasses.dataclass(frozen=True)
class DynNmsAttrs(Attrs):
    center_point_box: int = 0

    def __post_init__(self):
        set_fields(self, center_point_box=attr_int(self.center_point_box, "center_point_box"))


def _nms_rel(types, attrs):
    for ty, what in ((types[2], "max_output_boxes_per_class"), (types[3], "iou_threshold"),
                     (types[4], "score_threshold")):
        t = tensor(ty, what)
        if t.shape not in ((), (1,), (0,)):
            fail(f"{what} must be a scalar, a 1-element or an empty tensor, found "
                 f"{show_type(t)}")
    return get_op("vision.non_max_suppression").type_rel(
        types[:2], make_attrs(get_op("vision.non_max_suppression"), {}))


def _maybe(v, kind):
    flat = np.asarray(v).reshape(-1)
    return kind(flat[0]) if flat.size else None


register_dynamic(
    "dyn.vision.non_max_suppression", "vision.non_max_suppression", (2, 3, 4), _nms_rel,
    lambda a, m, iou, score: {"max_output_boxes_per_class": _maybe(m, int) or 0,
                              "iou_threshold": _maybe(iou, float) or 0.0,
                              "score_threshold": _maybe(score, float),
                              "center_point_box": a.center_point_box},
    ("boxes", "scores", "max_output_boxes_per_class", "iou_threshold", "score_threshold"),
    DynNmsAttrs, "non-maximum suppression with run-time limits")


def non_max_suppression(boxes, scores, max_output_boxes_per_class, iou_threshold,
                        score_threshold, center_point_box=0):
    return call("dyn.vision.non_max_suppression",
                [boxes, scores, max_output_boxes_per_class, iou_threshold, score_threshold],
                center_point_box=center_point_box)


__all__ = ["REDUCTIONS", "non_max_suppression", "one_hot", "reduce", "resize", "scan",
           "split", "squeeze", "topk", "trilu", "unsqueeze"]
