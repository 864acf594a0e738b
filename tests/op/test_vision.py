"""``image.grid_sample`` against torch's ``grid_sample`` (float64), ``vision.roi_align``
against a scalar loop written from ONNX RoiAlign's specification, and
``vision.non_max_suppression`` against hand-worked cases."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from test_nn import expect_type_error

from relayir.errors import OpError
from relayir.ir.types import Any
from relayir.testing.op_check import check_op, rand, run_op

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _torch_grid_sample(x, grid, method, padding, corners):
    """torch wants the grid channel-last: (N, *out, ndim)."""
    g = np.moveaxis(grid, 1, -1)
    return TF.grid_sample(torch.from_numpy(x), torch.from_numpy(g), mode=method,
                          padding_mode=padding, align_corners=corners).numpy()


# bicubic with border padding: ONNX clamps the coordinate before taking the taps, torch
# clamps each tap; ONNX's is the semantics (tests/frontend/test_onnx_vision.py checks it)
@pytest.mark.parametrize("method,padding,corners", [
    c for c in itertools.product(("bilinear", "nearest", "bicubic"),
                                 ("zeros", "border", "reflection"), (False, True))
    if c[:2] != ("bicubic", "border")])
def test_grid_sample_2d_matches_torch(method, padding, corners):
    x = rand((2, 3, 5, 4), "float64", 1)
    grid = rand((2, 2, 3, 6), "float64", 2, low=-1.4, high=1.4)
    check_op("image.grid_sample", [x, grid], _torch_grid_sample(x, grid, method, padding,
                                                                corners),
             {"method": method, "padding_mode": padding, "align_corners": corners},
             rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("method,padding", [("bilinear", "reflection"), ("nearest", "zeros"),
                                            ("bilinear", "border")])
def test_grid_sample_3d_matches_torch(method, padding):
    x = rand((1, 2, 3, 4, 5), "float64", 3)
    grid = rand((1, 3, 2, 3, 2), "float64", 4, low=-1.3, high=1.3)
    check_op("image.grid_sample", [x, grid], _torch_grid_sample(x, grid, method, padding,
                                                                False),
             {"method": method, "padding_mode": padding, "align_corners": False,
              "layout": "NCDHW"}, rtol=1e-10, atol=1e-10)


def test_grid_sample_1d_is_2d_with_one_row():
    """A 1-D sample equals torch's 2-D sample of a one-row image at y = 0."""
    x = rand((2, 3, 6), "float64", 5)
    grid = rand((2, 1, 7), "float64", 6, low=-1.3, high=1.3)
    grid2 = np.stack([grid[:, 0], np.zeros_like(grid[:, 0])], axis=1)[:, :, None]
    want = _torch_grid_sample(x[:, :, None], grid2, "bilinear", "border", False)[:, :, 0]
    check_op("image.grid_sample", [x, grid], want,
             {"layout": "NCW", "padding_mode": "border", "align_corners": False})


def test_grid_sample_type_errors():
    x = rand((1, 2, 3, 4), "float32")
    expect_type_error("image.grid_sample", [x, rand((1, 3, 2, 2), "float32")],
                      fragment="grid must be (N, 2, *out)")
    expect_type_error("image.grid_sample", [rand((1, 2, 3), "float32"),
                                            rand((1, 2, 2, 2), "float32")],
                      fragment="data must have rank 4", shown=[0])
    with pytest.raises(OpError, match="padding_mode must be one of zeros"):
        check_op("image.grid_sample", [x, rand((1, 2, 2, 2), "float32")], x,
                 {"padding_mode": "wrap"})


# ---------------------------------------------------------------- roi_align


def _bilinear(img, y, x):
    """ONNX RoiAlign's bilinear read of one sample, and its four weighted corners."""
    h, w = img.shape
    if y < -1.0 or y > h or x < -1.0 or x > w:
        return [0.0] * 4
    y, x = max(y, 0.0), max(x, 0.0)
    y0, x0 = int(y), int(x)
    if y0 >= h - 1:
        y0 = y1 = h - 1
        y = float(y0)
    else:
        y1 = y0 + 1
    if x0 >= w - 1:
        x0 = x1 = w - 1
        x = float(x0)
    else:
        x1 = x0 + 1
    ly, lx = y - y0, x - x0
    return [(1 - ly) * (1 - lx) * img[y0, x0], (1 - ly) * lx * img[y0, x1],
            ly * (1 - lx) * img[y1, x0], ly * lx * img[y1, x1]]


def _roi_align_loop(data, rois, pooled, scale, ratio, mode, aligned):
    out = np.zeros((len(rois), data.shape[1], *pooled))
    off = 0.5 if aligned else 0.0
    for r, (b, x1, y1, x2, y2) in enumerate(rois):
        x1, y1, x2, y2 = (v * scale - off for v in (x1, y1, x2, y2))
        rw, rh = x2 - x1, y2 - y1
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / pooled[0], rw / pooled[1]
        gh = ratio if ratio > 0 else math.ceil(rh / pooled[0])
        gw = ratio if ratio > 0 else math.ceil(rw / pooled[1])
        for c, i, j in itertools.product(range(data.shape[1]), *map(range, pooled)):
            samples = [_bilinear(data[int(b), c], y1 + i * bh + (iy + 0.5) * bh / gh,
                                 x1 + j * bw + (ix + 0.5) * bw / gw)
                       for iy in range(gh) for ix in range(gw)]
            if not samples:
                continue
            out[r, c, i, j] = (sum(map(sum, samples)) / len(samples) if mode == "avg"
                               else max(map(max, samples)))
    return out


ROIS = np.array([[0, 0.0, 0.0, 6.0, 6.0], [1, 1.2, 0.5, 4.8, 7.1], [1, 2.0, 3.0, 2.4, 3.2],
                 [0, -1.0, -2.0, 9.0, 3.0]])


@pytest.mark.parametrize("pooled,scale,ratio,mode,aligned", [
    ((2, 2), 1.0, 2, "avg", False), ((3, 2), 0.5, 0, "avg", True),
    ((2, 3), 1.0, 0, "max", False), ((1, 1), 0.8, 1, "max", True)])
def test_roi_align_matches_loop(pooled, scale, ratio, mode, aligned):
    data = rand((2, 3, 8, 7), "float64", 7)
    check_op("vision.roi_align", [data, ROIS],
             _roi_align_loop(data, ROIS, pooled, scale, ratio, mode, aligned),
             {"pooled_size": pooled, "spatial_scale": scale, "sample_ratio": ratio,
              "mode": mode, "aligned": aligned}, rtol=1e-10, atol=1e-12)


def test_roi_align_type_errors():
    expect_type_error("vision.roi_align", [rand((1, 2, 4, 4), "float32"),
                                           rand((3, 4), "float32")],
                      {"pooled_size": (2, 2), "spatial_scale": 1.0},
                      fragment="rois must be (num_rois, 5)", shown=[1])


# ---------------------------------------------------------------- non_max_suppression

# ONNX's suppress_by_IOU example: boxes 0-2 overlap, 3-5 overlap
BOXES = np.array([[[0.0, 0.0, 1.0, 1.0], [0.0, 0.1, 1.0, 1.1], [0.0, -0.1, 1.0, 0.9],
                   [0.0, 10.0, 1.0, 11.0], [0.0, 10.1, 1.0, 11.1], [0.0, 100.0, 1.0, 101.0]]],
                 "float32")
SCORES = np.array([[[0.9, 0.75, 0.6, 0.95, 0.5, 0.3]]], "float32")


@pytest.mark.parametrize("attrs,rows", [
    (dict(max_output_boxes_per_class=3, iou_threshold=0.5), [[0, 0, 3], [0, 0, 0], [0, 0, 5]]),
    (dict(max_output_boxes_per_class=2, iou_threshold=0.5), [[0, 0, 3], [0, 0, 0]]),
    (dict(max_output_boxes_per_class=9, iou_threshold=0.5, score_threshold=0.4),
     [[0, 0, 3], [0, 0, 0]]),
    (dict(max_output_boxes_per_class=9, iou_threshold=0.95), [[0, 0, 3], [0, 0, 0], [0, 0, 1],
                                                              [0, 0, 2], [0, 0, 4], [0, 0, 5]]),
    (dict(max_output_boxes_per_class=0, iou_threshold=0.5), []),
])
def test_non_max_suppression_keeps_the_expected_boxes(attrs, rows):
    out, ty = run_op("vision.non_max_suppression", [BOXES, SCORES], attrs)
    assert isinstance(ty.shape[0], Any) and ty.shape[1] == 3 and ty.dtype == "int64"
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, np.asarray(rows, "int64").reshape(-1, 3))


def test_non_max_suppression_center_point_boxes_equal_corner_boxes():
    corners = BOXES[0]
    centers = np.stack([(corners[:, 1] + corners[:, 3]) / 2, (corners[:, 0] + corners[:, 2]) / 2,
                        corners[:, 3] - corners[:, 1], corners[:, 2] - corners[:, 0]], axis=1)
    attrs = dict(max_output_boxes_per_class=4, iou_threshold=0.5)
    want, _ = run_op("vision.non_max_suppression", [BOXES, SCORES], attrs)
    got, _ = run_op("vision.non_max_suppression", [centers[None], SCORES],
                    {**attrs, "center_point_box": 1})
    np.testing.assert_array_equal(got, want)
