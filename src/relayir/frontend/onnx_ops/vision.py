"""Vision layers: GridSample (16, 20), RoiAlign (10, 16), NonMaxSuppression (10)."""

from __future__ import annotations

import numpy as np

from ...ir.expr import const
from ...op import dynamic_params as DP
from ...op import image as I
from ...op import transform as T
from ...op import vision as V
from ..common import ConversionError
from .base import OnnxTable, constant_value, dtype, ndim, run_time, value

TABLE = OnnxTable()


@TABLE.register("GridSample", since=16)
def grid_sample(x, grid, align_corners=0, mode="bilinear", padding_mode="zeros"):
    """ONNX's grid is ``(N, *out, ndim)``; Relay's is channel-first ``(N, ndim, *out)``."""
    n = ndim(x) - 2
    if not 1 <= n <= 3:
        raise ConversionError(f"GridSample of {n} spatial axes not supported (1 to 3)")
    grid = T.transpose(grid, [0, n + 1, *range(1, n + 1)])
    return I.grid_sample(x, grid, method=mode, layout={1: "NCW", 2: "NCHW", 3: "NCDHW"}[n],
                         padding_mode=padding_mode, align_corners=bool(align_corners))


@TABLE.register("RoiAlign", since=10)
def roi_align_v10(x, rois, batch_indices, mode="avg", output_height=1, output_width=1,
                  sampling_ratio=0, spatial_scale=1.0):
    """Opset 10 has no ``coordinate_transformation_mode``: it behaves as
    ``output_half_pixel``."""
    return roi_align(x, rois, batch_indices, "output_half_pixel", mode, output_height,
                     output_width, sampling_ratio, spatial_scale)


@TABLE.register("RoiAlign", since=16)
def roi_align(x, rois, batch_indices, coordinate_transformation_mode="half_pixel",
              mode="avg", output_height=1, output_width=1, sampling_ratio=0,
              spatial_scale=1.0):
    """Relay's rois carry the batch index as column 0."""
    if coordinate_transformation_mode not in ("half_pixel", "output_half_pixel"):
        raise ConversionError(f"RoiAlign coordinate_transformation_mode "
                              f"{coordinate_transformation_mode!r} not supported")
    index = T.expand_dims(T.cast(batch_indices, dtype(rois)), 1)
    return V.roi_align(x, T.concatenate([index, rois], axis=1),
                       (int(output_height), int(output_width)), float(spatial_scale),
                       sample_ratio=int(sampling_ratio), mode=mode,
                       aligned=coordinate_transformation_mode == "half_pixel")


def _scalar(x, what: str, kind):
    """An optional scalar input (absent or empty: None); a constant at import time."""
    if x is None:
        return None
    v = np.asarray(value(x, what)).reshape(-1)
    return None if v.size == 0 else kind(v[0])


@TABLE.register("NonMaxSuppression", since=10)
def non_max_suppression(boxes, scores, max_output_boxes_per_class=None, iou_threshold=None,
                        score_threshold=None, center_point_box=0):
    limits = (max_output_boxes_per_class, iou_threshold, score_threshold)
    if any(v is not None and constant_value(v) is None for v in limits):
        # read when the model runs (dyn.vision.non_max_suppression); absent: empty
        m, iou, score = (
            const(np.zeros(0, kind)) if v is None else T.cast(run_time(v, what), kind)
            for v, what, kind in zip(limits, ("max_output_boxes_per_class", "iou_threshold",
                                              "score_threshold"),
                                     ("int64", "float32", "float32")))
        return DP.non_max_suppression(boxes, scores, m, iou, score,
                                      center_point_box=int(center_point_box))
    return V.non_max_suppression(
        boxes, scores,
        max_output_boxes_per_class=_scalar(max_output_boxes_per_class,
                                           "max_output_boxes_per_class", int) or 0,
        iou_threshold=_scalar(iou_threshold, "iou_threshold", float) or 0.0,
        score_threshold=_scalar(score_threshold, "score_threshold", float),
        center_point_box=int(center_point_box))
