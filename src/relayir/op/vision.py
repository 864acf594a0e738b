"""Vision operators: ``vision.roi_align`` and ``vision.non_max_suppression``.

``roi_align`` is Relay's (``rois`` rows are ``batch index, x1, y1, x2, y2``) with ONNX
RoiAlign's arithmetic: each output bin averages (``avg``) or maxes (``max``) a
``sample_ratio``² grid of bilinear samples (``sample_ratio <= 0``: ``ceil(roi extent /
pooled extent)`` per axis, so the sample count depends on the boxes). ``aligned`` is
ONNX's ``half_pixel`` mode (coordinates shifted by half a pixel, no minimum roi size of
one). As ONNX (and onnxruntime), ``max`` takes the largest *weighted corner* of each
sample, not the largest interpolated value.

``non_max_suppression`` is ONNX NonMaxSuppression with its scalar inputs as attrs: per
batch and class, boxes scoring above ``score_threshold`` are visited by decreasing score
(ties: lower index first) and kept unless their IoU with a kept box exceeds
``iou_threshold``, up to ``max_output_boxes_per_class``. The result is one ``(batch,
class, box)`` int64 row per kept box: its length is data, an ``Any`` dim.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..ir.op import Attrs, OpPattern, call, register_op
from ..ir.types import Any, TensorType, is_float
from .attrs_util import attr_ints, set_fields
from .type_rel import fail, tensor


@dataclasses.dataclass(frozen=True)
class ROIAlignAttrs(Attrs):
    pooled_size: tuple = (1, 1)
    spatial_scale: float = 1.0
    sample_ratio: int = -1
    layout: str = "NCHW"
    mode: str = "avg"
    aligned: bool = False

    def __post_init__(self):
        size = attr_ints(self.pooled_size, "pooled_size")
        if len(size) == 1:
            size = size * 2
        if len(size) != 2 or min(size) < 1:
            raise ValueError(f"pooled_size needs 2 positive ints, found {self.pooled_size!r}")
        if self.layout != "NCHW":
            raise ValueError(f"roi_align supports layout NCHW, found {self.layout!r}")
        if self.mode not in ("avg", "max"):
            raise ValueError(f"mode must be avg or max, found {self.mode!r}")
        set_fields(self, pooled_size=size, spatial_scale=float(self.spatial_scale),
                   sample_ratio=int(self.sample_ratio), aligned=bool(self.aligned))


def _roi_align_rel(types, attrs):
    data, rois = tensor(types[0]), tensor(types[1], "rois")
    if data.ndim != 4:
        fail(f"data must have rank 4 (NCHW), found {data}")
    if rois.ndim != 2 or (isinstance(rois.shape[1], int) and rois.shape[1] != 5):
        fail(f"rois must be (num_rois, 5): batch index, x1, y1, x2, y2; found {rois}")
    if not (is_float(data.dtype) and is_float(rois.dtype)):
        fail(f"roi_align needs float data and rois, found {data} and {rois}")
    return TensorType((rois.shape[0], data.shape[1], *attrs.pooled_size), data.dtype)


def _bilinear_corners(y: np.ndarray, x: np.ndarray, height: int, width: int):
    """ONNX RoiAlign's four ``(row, col, weight)`` corners of each sample (weights 0 for
    samples more than one pixel outside)."""
    outside = (y < -1.0) | (y > height) | (x < -1.0) | (x > width)
    y, x = np.maximum(y, 0.0), np.maximum(x, 0.0)
    y0, x0 = np.floor(y).astype("int64"), np.floor(x).astype("int64")
    y_edge, x_edge = y0 >= height - 1, x0 >= width - 1
    y0, x0 = np.where(y_edge, height - 1, y0), np.where(x_edge, width - 1, x0)
    y = np.where(y_edge, y0, y)
    x = np.where(x_edge, x0, x)
    y1, x1 = np.where(y_edge, y0, y0 + 1), np.where(x_edge, x0, x0 + 1)
    ly, lx = y - y0, x - x0
    hy, hx = 1.0 - ly, 1.0 - lx
    keep = ~outside
    return [(y0, x0, hy * hx * keep), (y0, x1, hy * lx * keep),
            (y1, x0, ly * hx * keep), (y1, x1, ly * lx * keep)]


def _roi_align_ref(data, rois, attrs):
    x = data.astype("float64")
    _, channels, height, width = x.shape
    ph, pw = attrs.pooled_size
    out = np.zeros((rois.shape[0], channels, ph, pw))
    offset = 0.5 if attrs.aligned else 0.0
    for r, roi in enumerate(rois.astype("float64")):
        x1, y1, x2, y2 = roi[1:] * attrs.spatial_scale - offset
        roi_w, roi_h = x2 - x1, y2 - y1
        if not attrs.aligned:
            roi_w, roi_h = max(roi_w, 1.0), max(roi_h, 1.0)
        bin_h, bin_w = roi_h / ph, roi_w / pw
        grid_h = attrs.sample_ratio if attrs.sample_ratio > 0 else int(math.ceil(roi_h / ph))
        grid_w = attrs.sample_ratio if attrs.sample_ratio > 0 else int(math.ceil(roi_w / pw))
        # sample positions: (ph, grid_h) rows and (pw, grid_w) columns
        ys = y1 + np.arange(ph)[:, None] * bin_h + (np.arange(grid_h) + 0.5) * bin_h / grid_h
        xs = x1 + np.arange(pw)[:, None] * bin_w + (np.arange(grid_w) + 0.5) * bin_w / grid_w
        yy = np.broadcast_to(ys[:, None, :, None], (ph, pw, grid_h, grid_w))
        xx = np.broadcast_to(xs[None, :, None, :], (ph, pw, grid_h, grid_w))
        if grid_h * grid_w == 0:  # an empty roi: zeros, as ONNX
            continue
        image = x[int(roi[0])]
        terms = [w * image[:, row, col] for row, col, w in
                 _bilinear_corners(yy, xx, height, width)]  # each (C, ph, pw, gh, gw)
        if attrs.mode == "avg":
            out[r] = sum(terms).sum(axis=(-2, -1)) / max(grid_h * grid_w, 1)
        else:
            out[r] = np.max(np.stack(terms), axis=(0, -2, -1))
    return out.astype(data.dtype)


register_op("vision.roi_align", rel=_roi_align_rel, ref=_roi_align_ref,
            pattern=OpPattern.OPAQUE, num_inputs=2, arg_names=("data", "rois"),
            attrs=ROIAlignAttrs, description="bilinear pooling of each region of interest")


def roi_align(data, rois, pooled_size, spatial_scale, sample_ratio=-1, layout="NCHW",
              mode="avg", aligned=False):
    """Relay's ``vision.roi_align``; ``aligned`` (ONNX ``half_pixel``) is an extension."""
    return call("vision.roi_align", [data, rois], pooled_size=pooled_size,
                spatial_scale=spatial_scale, sample_ratio=sample_ratio, layout=layout,
                mode=mode, aligned=aligned)


# ---------------------------------------------------------------- non-maximum suppression


@dataclasses.dataclass(frozen=True)
class NonMaxSuppressionAttrs(Attrs):
    max_output_boxes_per_class: int = 0
    iou_threshold: float = 0.0
    score_threshold: float | None = None
    center_point_box: int = 0

    def __post_init__(self):
        if self.center_point_box not in (0, 1):
            raise ValueError(f"center_point_box must be 0 or 1, found {self.center_point_box!r}")
        set_fields(self, max_output_boxes_per_class=max(int(self.max_output_boxes_per_class), 0),
                   iou_threshold=float(self.iou_threshold),
                   score_threshold=None if self.score_threshold is None
                   else float(self.score_threshold),
                   center_point_box=int(self.center_point_box))


def _nms_rel(types, attrs):
    boxes, scores = tensor(types[0], "boxes"), tensor(types[1], "scores")
    if boxes.ndim != 3 or (isinstance(boxes.shape[2], int) and boxes.shape[2] != 4):
        fail(f"boxes must be (batch, boxes, 4), found {boxes}")
    if scores.ndim != 3:
        fail(f"scores must be (batch, classes, boxes), found {scores}")
    return TensorType((Any(), 3), "int64")


def _corners(boxes: np.ndarray, center_point_box: int) -> np.ndarray:
    """``(..., 4)`` boxes as ``y_min, x_min, y_max, x_max``."""
    if center_point_box:
        cx, cy, w, h = np.moveaxis(boxes, -1, 0)
        return np.stack([cy - h / 2, cx - w / 2, cy + h / 2, cx + w / 2], axis=-1)
    y_lo, y_hi = np.minimum(boxes[..., 0], boxes[..., 2]), np.maximum(boxes[..., 0],
                                                                      boxes[..., 2])
    x_lo, x_hi = np.minimum(boxes[..., 1], boxes[..., 3]), np.maximum(boxes[..., 1],
                                                                      boxes[..., 3])
    return np.stack([y_lo, x_lo, y_hi, x_hi], axis=-1)


def _iou(box: np.ndarray, others: np.ndarray) -> np.ndarray:
    """IoU of one corner box with many (0 where either is empty or they do not meet)."""
    h = np.minimum(box[2], others[:, 2]) - np.maximum(box[0], others[:, 0])
    w = np.minimum(box[3], others[:, 3]) - np.maximum(box[1], others[:, 1])
    inter = np.where((h > 0) & (w > 0), h * w, 0.0)
    area = (box[2] - box[0]) * (box[3] - box[1])
    areas = (others[:, 2] - others[:, 0]) * (others[:, 3] - others[:, 1])
    union = area + areas - inter
    ok = (inter > 0) & (area > 0) & (areas > 0) & (union > 0)
    return np.where(ok, inter / np.where(ok, union, 1.0), 0.0)


def _nms_ref(boxes, scores, attrs):
    corners = _corners(boxes.astype("float64"), attrs.center_point_box)
    rows = []
    for b in range(scores.shape[0]):
        for c in range(scores.shape[1]):
            s = scores[b, c]
            order = np.argsort(-s.astype("float64"), kind="stable")
            if attrs.score_threshold is not None:
                order = order[s[order] > attrs.score_threshold]
            kept: list[int] = []
            for i in order:
                if len(kept) >= attrs.max_output_boxes_per_class:
                    break
                if not kept or not (_iou(corners[b, i], corners[b, kept])
                                    > attrs.iou_threshold).any():
                    kept.append(int(i))
            rows.extend((b, c, i) for i in kept)
    return np.asarray(rows, "int64").reshape(-1, 3)


register_op("vision.non_max_suppression", rel=_nms_rel, ref=_nms_ref,
            pattern=OpPattern.OPAQUE, num_inputs=2, arg_names=("boxes", "scores"),
            attrs=NonMaxSuppressionAttrs,
            description="the (batch, class, box) rows that greedy NMS keeps")


def non_max_suppression(boxes, scores, max_output_boxes_per_class=0, iou_threshold=0.0,
                        score_threshold=None, center_point_box=0):
    """ONNX NonMaxSuppression (its scalar inputs as attrs)."""
    return call("vision.non_max_suppression", [boxes, scores],
                max_output_boxes_per_class=max_output_boxes_per_class,
                iou_threshold=iou_threshold, score_threshold=score_threshold,
                center_point_box=center_point_box)
