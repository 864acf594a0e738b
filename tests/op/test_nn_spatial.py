"""Tests of the spatial operators of issue 6: 1-D/3-D pools, 3-D and transposed
convolutions, LRN, resizes, upsampling, depth/space rearrangements.

Values are compared with torch (float64) where torch has the op, otherwise with a plain
loop written here from the ONNX specification.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from test_nn import expect_type_error, f64, nchw_to, np32

import relayir
from relayir import nn
from relayir.errors import OpError
from relayir.ir.expr import Var
from relayir.ir.op import OpPattern, call, get_op
from relayir.ir.types import TensorType
from relayir.op import image
from relayir.testing.op_check import check_op, rand

torch = pytest.importorskip("torch")
F = torch.nn.functional


# ---------------------------------------------------------------- 3-D conv

CONV3D = [
    ((1, 3, 5, 6, 4), 4, (3, 3, 2), {}),
    ((2, 4, 6, 5, 5), 6, (3, 2, 3), {"strides": (2, 1, 2), "padding": (1, 0, 1),
                                     "dilation": (1, 2, 1), "groups": 2}),
    ((1, 2, 4, 4, 4), 2, (2, 2, 2), {"padding": 1, "data_layout": "NDHWC"}),
]


@pytest.mark.parametrize("dshape,out_ch,kernel,attrs", CONV3D)
def test_conv3d(dshape, out_ch, kernel, attrs):
    a = get_op("nn.conv3d").attrs_type(**attrs)
    x, w = rand(dshape, seed=1), rand((out_ch, dshape[1] // a.groups, *kernel), seed=2)
    expected = np32(F.conv3d(f64(x), f64(w), stride=a.strides, padding=a.padding[:3],
                             dilation=a.dilation, groups=a.groups))
    lay = a.data_layout
    check_op("nn.conv3d", [nchw_to(x, lay, "NCDHW"), nchw_to(w, a.kernel_layout, "OIDHW")],
             nchw_to(expected, lay, "NCDHW"), attrs, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- transposed conv


def loop_conv_transpose(x, w, strides, pads, output_padding, dilation, groups):
    """Scatter every input pixel through the kernel (NC..., IO...), then crop."""
    n, c, *size = x.shape
    _, og, *ks = w.shape
    nd, cg = len(size), c // groups
    full = [(d - 1) * s + dl * (k - 1) + 1 + p
            for d, k, s, dl, p in zip(size, ks, strides, dilation, output_padding)]
    out = np.zeros((n, og * groups, *full))
    for pos in itertools.product(*(range(d) for d in size)):
        for tap in itertools.product(*(range(k) for k in ks)):
            dst = tuple(p * s + t * dl for p, s, t, dl in zip(pos, strides, tap, dilation))
            for g in range(groups):
                xin = x[(slice(None), slice(g * cg, (g + 1) * cg), *pos)].astype("float64")
                wt = w[(slice(g * cg, (g + 1) * cg), slice(None), *tap)]
                out[(slice(None), slice(g * og, (g + 1) * og), *dst)] += xin @ wt
    crop = tuple(slice(pads[j], full[j] - pads[j + nd]) for j in range(nd))
    return out[(slice(None), slice(None), *crop)].astype(x.dtype)


CONV_T = [
    ("nn.conv2d_transpose", (1, 3, 4, 5), (3, 2, 3, 3), {}),
    ("nn.conv2d_transpose", (2, 4, 3, 4), (4, 3, 3, 2), {"strides": 2, "padding": 1,
                                                          "output_padding": 1}),
    ("nn.conv2d_transpose", (1, 4, 3, 3), (4, 1, 3, 3), {"strides": (2, 3), "groups": 2,
                                                          "dilation": (2, 1)}),
    ("nn.conv1d_transpose", (2, 3, 6), (3, 4, 4), {"strides": 3, "padding": 2,
                                                   "output_padding": 2}),
    ("nn.conv3d_transpose", (1, 4, 2, 3, 3), (4, 1, 2, 3, 2), {"strides": (2, 1, 2),
                                                               "padding": 1, "groups": 2}),
]


@pytest.mark.parametrize("op,dshape,wshape,attrs", CONV_T)
def test_conv_transpose_vs_torch(op, dshape, wshape, attrs):
    a = get_op(op).attrs_type(**attrs)
    x, w = rand(dshape, seed=3), rand(wshape, seed=4)
    fn = getattr(F, op[3:].replace("d_transpose", "d").replace("conv", "conv_transpose"))
    n = len(a.strides)
    expected = np32(fn(f64(x), f64(w), stride=a.strides, padding=a.padding[:n],
                       output_padding=a.output_padding, dilation=a.dilation, groups=a.groups))
    check_op(op, [x, w], expected, attrs, rtol=1e-5, atol=1e-5)


def test_conv2d_transpose_asymmetric_padding_and_layouts():
    x, w = rand((1, 4, 3, 5), seed=5), rand((4, 3, 2, 3), seed=6)
    attrs = {"strides": (2, 2), "padding": (1, 0, 0, 2), "output_padding": (1, 0),
             "groups": 2}
    a = get_op("nn.conv2d_transpose").attrs_type(**attrs)
    expected = loop_conv_transpose(x, w, a.strides, a.padding, a.output_padding, a.dilation,
                                   a.groups)
    check_op("nn.conv2d_transpose", [x, w], expected, attrs, rtol=1e-5, atol=1e-5)
    layouts = {"data_layout": "NHWC", "kernel_layout": "HWOI", "out_layout": "NCHW"}
    check_op("nn.conv2d_transpose",
             [nchw_to(x, "NHWC"), nchw_to(w, "HWOI", "IOHW")], expected,
             {**attrs, **layouts}, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- 1-D / 3-D pools

POOL_ND = [
    (1, (2, 3, 11), {"pool_size": 3, "strides": 2, "padding": 1}),
    (1, (1, 2, 10), {"pool_size": 2, "strides": 3, "padding": 1, "ceil_mode": True}),
    (3, (1, 2, 5, 6, 7), {"pool_size": (2, 3, 2), "strides": (2, 1, 2), "padding": (1, 1, 0)}),
    (3, (1, 2, 5, 5, 6), {"pool_size": 3, "strides": 2, "padding": 1, "ceil_mode": True}),
]


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("include_pad", [False, True])
@pytest.mark.parametrize("nd,dshape,attrs", POOL_ND)
def test_pool_1d_3d(kind, include_pad, nd, dshape, attrs):
    if kind == "max" and include_pad:
        pytest.skip("count_include_pad is an average-pool attribute")
    op = f"nn.{kind}_pool{nd}d"
    a = get_op(op).attrs_type(**attrs)
    x = rand(dshape, seed=7)
    kw = {"kernel_size": a.pool_size, "stride": a.strides, "padding": a.padding[:nd],
          "ceil_mode": a.ceil_mode}
    if kind == "max":
        expected = getattr(F, f"max_pool{nd}d")(f64(x), **kw)
        check_op(op, [x], np32(expected), attrs)
    else:
        expected = getattr(F, f"avg_pool{nd}d")(f64(x), count_include_pad=include_pad, **kw)
        check_op(op, [x], np32(expected), {**attrs, "count_include_pad": include_pad})


def test_max_pool1d_dilation_and_layout():
    x = rand((2, 3, 12), seed=8)
    expected = np32(F.max_pool1d(f64(x), 3, stride=2, padding=1, dilation=2))
    check_op("nn.max_pool1d", [x], expected, {"pool_size": 3, "strides": 2, "padding": 1,
                                              "dilation": 2})
    check_op("nn.max_pool1d", [nchw_to(x, "NWC", "NCW")], nchw_to(expected, "NWC", "NCW"),
             {"pool_size": 3, "strides": 2, "padding": 1, "dilation": 2, "layout": "NWC"})


# ---------------------------------------------------------------- LRN


def loop_lrn(x, size, axis, alpha, beta, bias):
    """ONNX: the window is [c - floor((size-1)/2), c + ceil((size-1)/2)], clipped."""
    x64 = np.moveaxis(x.astype("float64"), axis, 0)
    out = np.empty_like(x64)
    lo, hi = (size - 1) // 2, -(-(size - 1) // 2)
    for c in range(x64.shape[0]):
        window = x64[max(0, c - lo):c + hi + 1]
        out[c] = x64[c] / (bias + alpha / size * (window ** 2).sum(0)) ** beta
    return np.moveaxis(out, 0, axis).astype(x.dtype)


@pytest.mark.parametrize("shape,attrs", [
    ((2, 7, 3, 4), {"size": 5}),
    ((2, 6, 5), {"size": 3, "alpha": 0.5, "beta": 0.5, "bias": 1.0}),
])
def test_lrn_vs_torch(shape, attrs):
    a = get_op("nn.lrn").attrs_type(**attrs)
    x = rand(shape, seed=9)
    expected = np32(F.local_response_norm(f64(x), a.size, alpha=a.alpha, beta=a.beta, k=a.bias))
    check_op("nn.lrn", [x], expected, attrs)


@pytest.mark.parametrize("shape,attrs", [
    ((1, 6, 2, 2), {"size": 4, "alpha": 0.3}),
    ((3, 2, 8), {"size": 2, "axis": -1, "bias": 0.5, "alpha": 1.0}),
])
def test_lrn_even_size_follows_onnx(shape, attrs):
    a = get_op("nn.lrn").attrs_type(**attrs)
    x = rand(shape, seed=10)
    expected = loop_lrn(x, a.size, a.axis % len(shape), a.alpha, a.beta, a.bias)
    check_op("nn.lrn", [x], expected, attrs)


# ---------------------------------------------------------------- resize

RESIZE_TORCH = [
    # (op, shape, size, torch mode, align_corners, our attrs)
    ("image.resize2d", (1, 2, 4, 5), (8, 7), "nearest", None,
     {"method": "nearest_neighbor", "coordinate_transformation_mode": "asymmetric",
      "rounding_method": "floor"}),
    ("image.resize2d", (1, 2, 7, 5), (3, 2), "nearest-exact", None,
     {"method": "nearest_neighbor", "rounding_method": "round_prefer_ceil"}),
    ("image.resize2d", (2, 3, 4, 5), (7, 3), "bilinear", False,
     {"method": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"}),
    ("image.resize2d", (1, 2, 4, 5), (9, 2), "bilinear", True,
     {"method": "linear", "coordinate_transformation_mode": "align_corners"}),
    ("image.resize2d", (1, 2, 5, 4), (9, 6), "bicubic", False,
     {"method": "cubic", "cubic_alpha": -0.75}),
    ("image.resize2d", (1, 2, 5, 4), (3, 7), "bicubic", True,
     {"method": "cubic", "cubic_alpha": -0.75, "coordinate_transformation_mode": "align_corners"}),
    ("image.resize1d", (2, 3, 6), (10,), "linear", False, {"method": "linear"}),
    ("image.resize3d", (1, 2, 3, 4, 5), (5, 3, 8), "trilinear", False, {"method": "linear"}),
    ("image.resize3d", (1, 2, 3, 4, 2), (6, 8, 3), "nearest", None,
     {"method": "nearest_neighbor", "coordinate_transformation_mode": "asymmetric",
      "rounding_method": "floor"}),
]


@pytest.mark.parametrize("op,shape,size,mode,corners,attrs", RESIZE_TORCH)
def test_resize_vs_torch(op, shape, size, mode, corners, attrs):
    x = rand(shape, seed=11)
    expected = np32(F.interpolate(f64(x), size=size, mode=mode, align_corners=corners))
    check_op(op, [x], expected, {"size": size, **attrs}, rtol=1e-5, atol=1e-5)


def test_resize_layouts_roi_and_ints():
    x = rand((1, 3, 4, 6), seed=12)
    attrs = {"size": (5, 4), "method": "linear",
             "coordinate_transformation_mode": "tf_crop_and_resize",
             "roi": (0.25, -0.5, 1.0, 0.75), "extrapolation_value": 7.0}
    # rows: y * 0.75 * 3 / 4 + 0.75 ; cols: x * 1.25 * 5 / 3 - 2.5 (extrapolate if < 0)
    ys = np.arange(5) * 0.75 * 3 / 4 + 0.75
    xs = np.arange(4) * 1.25 * 5 / 3 - 2.5
    expected = np.empty((1, 3, 5, 4))
    for i, y in enumerate(ys):
        for j, z in enumerate(xs):
            if not (0 <= y <= 3 and 0 <= z <= 5):
                expected[..., i, j] = 7.0
                continue
            y0, z0 = int(np.floor(y)), int(np.floor(z))
            y1, z1 = min(y0 + 1, 3), min(z0 + 1, 5)
            ty, tz = y - y0, z - z0
            expected[..., i, j] = ((1 - ty) * ((1 - tz) * x[..., y0, z0] + tz * x[..., y0, z1])
                                   + ty * ((1 - tz) * x[..., y1, z0] + tz * x[..., y1, z1]))
    expected = expected.astype("float32")
    check_op("image.resize2d", [x], expected, attrs, rtol=1e-5, atol=1e-5)
    check_op("image.resize2d", [nchw_to(x, "NHWC")], nchw_to(expected, "NHWC"),
             {**attrs, "layout": "NHWC"}, rtol=1e-5, atol=1e-5)
    xi = rand((1, 1, 2, 3), "int32", seed=13)
    check_op("image.resize2d", [xi], xi.repeat(2, axis=2).repeat(2, axis=3),
             {"size": (4, 6), "method": "nearest_neighbor", "rounding_method": "floor",
              "coordinate_transformation_mode": "asymmetric"})


def test_resize_antialias_is_a_stretched_normalised_kernel():
    x = rand((1, 1, 1, 8), seed=17)
    attrs = get_op("image.resize2d").attrs_type(size=(1, 4), method="linear", antialias=True)
    got = image._resize_ref(x, attrs)[0, 0, 0]
    want = []
    for o in (1, 2):  # scale 0.5: a triangle of half-width 2 around the centre (interior)
        centre = (o + 0.5) / 0.5 - 0.5
        w = np.array([max(0.0, 1 - abs(i - centre) * 0.5) for i in range(8)])
        want.append((w / w.sum()) @ x[0, 0, 0].astype("float64"))
    np.testing.assert_allclose(got[1:3], want, rtol=1e-6)


def test_resize_scales_attr_changes_coordinates_not_size():
    x = rand((1, 1, 1, 4), seed=14)
    # ONNX scales=1.6 on 4 pixels: 6 outputs at (x + 0.5) / 1.6 - 0.5, not 6 / 4 = 1.5
    got = image._resize_ref(x, get_op("image.resize2d").attrs_type(
        size=(1, 6), scales=(1.0, 1.6), method="linear"))
    src = np.clip((np.arange(6) + 0.5) / 1.6 - 0.5, 0, 3)
    want = np.interp(src, np.arange(4), x[0, 0, 0].astype("float64"))
    np.testing.assert_allclose(got[0, 0, 0], want, rtol=1e-6)


@pytest.mark.parametrize("method,corners", [("nearest_neighbor", False), ("linear", True)])
def test_upsampling_vs_torch(method, corners):
    x = rand((1, 2, 3, 4), seed=15)
    mode = "nearest" if method == "nearest_neighbor" else "bilinear"
    expected = np32(F.interpolate(f64(x), scale_factor=(2, 3), mode=mode,
                                  align_corners=corners if mode == "bilinear" else None))
    check_op("nn.upsampling", [x], expected,
             {"scale_h": 2, "scale_w": 3, "method": method, "align_corners": corners},
             rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- depth / space


def test_depth_to_space_and_back():
    x = rand((2, 12, 3, 4), seed=16)
    crd = np32(F.pixel_shuffle(f64(x), 2))
    check_op("nn.depth_to_space", [x], crd, {"block_size": 2, "mode": "CRD"})
    check_op("nn.space_to_depth", [crd], x, {"block_size": 2, "mode": "CRD"})
    # DCR (ONNX): out[n, c, h*b + i, w*b + j] = x[n, (i*b + j) * C' + c, h, w]
    dcr = np.empty_like(crd)
    for c, h, w, i, j in itertools.product(range(3), range(3), range(4), range(2), range(2)):
        dcr[:, c, h * 2 + i, w * 2 + j] = x[:, (i * 2 + j) * 3 + c, h, w]
    check_op("nn.depth_to_space", [x], dcr, {"block_size": 2})
    check_op("nn.space_to_depth", [dcr], x, {"block_size": 2})
    check_op("nn.depth_to_space", [nchw_to(x, "NHWC")], nchw_to(dcr, "NHWC"),
             {"block_size": 2, "layout": "NHWC"})


# ---------------------------------------------------------------- relations and attrs


def f32(shape):
    return np.zeros(shape, "float32")


BAD = [
    ("nn.conv3d", [f32((1, 4, 5, 5, 5)), f32((6, 3, 3, 3, 3))], {}, "input channels mismatch"),
    ("nn.conv2d_transpose", [f32((1, 4, 5, 5)), f32((3, 2, 3, 3))], {},
     "input channels mismatch"),
    ("nn.conv1d_transpose", [f32((1, 4, 5)), f32((4, 2, 3, 3))], {}, "rank 3"),
    ("nn.conv3d_transpose", [f32((1, 4, 5, 5, 5)), f32((4, 2, 3, 3, 3))],
     {"padding": 4}, "crops the whole output"),
    ("nn.max_pool1d", [f32((1, 3, 2))], {"pool_size": 3}, "larger than the padded input"),
    ("nn.avg_pool1d", [f32((3, 8))], {"pool_size": 2}, "rank 3"),
    ("nn.max_pool3d", [f32((1, 3, 8, 8))], {"pool_size": 2}, "rank 5"),
    ("nn.avg_pool3d", [f32((1, 3, 4, 4, 1))], {"pool_size": 2}, "larger than the padded"),
    ("nn.lrn", [np.zeros((1, 4, 3), "int32")], {}, "float"),
    ("nn.depth_to_space", [f32((1, 6, 2, 2))], {"block_size": 2}, "multiple of block_size**2"),
    ("nn.space_to_depth", [f32((1, 3, 3, 4))], {"block_size": 2}, "H must be a multiple"),
    ("nn.upsampling", [f32((3, 4, 4))], {"scale_h": 2}, "rank 4"),
    ("nn.deformable_conv2d", [f32((1, 4, 5, 5)), f32((1, 9, 5, 5)), f32((4, 4, 3, 3))],
     {"padding": 1}, "offset must have shape"),
    ("image.resize1d", [f32((1, 2, 3, 4))], {"size": (4,)}, "rank 3"),
    ("image.resize2d", [np.zeros((1, 1, 2, 2), "int32")], {"size": (4, 4)}, "float data"),
    ("image.resize3d", [f32((1, 2, 3, 4))], {"size": (2, 2, 2)}, "rank 5"),
    ("image.grid_sample", [f32((1, 2, 3, 4)), f32((1, 4, 2, 2))], {}, "grid must be"),
    # the blocked (NCHW[x]c) convolutions of AlterOpLayout: tests/op/test_nn_nchwc.py
    ("nn.contrib_conv2d_NCHWc", [f32((1, 2, 5, 5, 4)), f32((2, 1, 3, 3, 4, 4))],
     {"data_layout": "NCHW4c", "kernel_layout": "OIHW4i4o", "out_layout": "NCHW4c"},
     "input channels mismatch"),
    ("nn.contrib_depthwise_conv2d_NCHWc", [f32((1, 2, 5, 5, 4)), f32((2, 1, 3, 3, 1, 4))],
     {"kernel_layout": "OIHW1i4o", "data_layout": "NCHW4c", "out_layout": "NCHW4c"},
     "groups must equal"),
    ("nn.contrib_conv2d_winograd_NCHWc", [f32((1, 1, 5, 5, 4)), f32((4, 4, 1, 1, 4, 4)),
                                          f32((1, 1, 3, 3, 4, 4))],
     {"data_layout": "NCHW4c", "kernel_layout": "HWOI4i4o", "out_layout": "NCHW4c"},
     "alpha=6"),
    ("nn.contrib_conv2d_winograd_NCHWc", [f32((1, 1, 5, 5, 4)), f32((6, 6, 1, 1, 4, 4)),
                                          f32((6, 6, 1, 1, 4, 4))],
     {"data_layout": "NCHW4c", "kernel_layout": "HWOI4i4o", "out_layout": "NCHW4c"},
     "direct_weight must have shape (1, 1, 3, 3, 4, 4)"),
    ("nn.contrib_conv2d_winograd_weight_transform", [f32((4, 4, 3, 2))], {},
     "square kernel"),
]


@pytest.mark.parametrize("case", BAD, ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
def test_bad_input(case):
    expect_type_error(*case)


@pytest.mark.parametrize("op_name,attrs,fragment", [
    ("nn.conv2d_transpose", {"strides": 2, "output_padding": 2}, "output_padding"),
    ("nn.conv2d_transpose", {"kernel_layout": "OIHW2"}, "kernel_layout"),
    ("nn.max_pool3d", {"pool_size": (2, 2)}, "pool_size"),
    ("nn.lrn", {"size": 0}, "size"),
    ("image.resize2d", {"size": (2, 2), "method": "area"}, "method"),
    ("image.resize2d", {"size": (2, 2), "coordinate_transformation_mode": "x"},
     "coordinate_transformation_mode"),
    ("image.resize2d", {"size": (2,)}, "size"),
    ("image.resize2d", {"size": (2, 2), "roi": (0, 1)}, "roi"),
    ("nn.depth_to_space", {"block_size": 2, "mode": "XYZ"}, "mode"),
])
def test_bad_attrs(op_name, attrs, fragment):
    x = Var("x", TensorType((1, 4, 4, 4), "float32"))
    with pytest.raises(OpError, match=fragment):
        call(op_name, [x] * get_op(op_name).num_inputs, **attrs)


_WINDOW = OpPattern.OUT_ELEMWISE_FUSABLE
PATTERNS = {
    "nn.conv3d": _WINDOW, "nn.conv1d_transpose": _WINDOW, "nn.conv2d_transpose": _WINDOW,
    "nn.conv3d_transpose": _WINDOW,
    "nn.max_pool1d": _WINDOW, "nn.avg_pool1d": _WINDOW, "nn.max_pool3d": _WINDOW,
    "nn.avg_pool3d": _WINDOW, "nn.lrn": OpPattern.OPAQUE,
    "nn.depth_to_space": OpPattern.INJECTIVE, "nn.space_to_depth": OpPattern.INJECTIVE,
    "nn.upsampling": OpPattern.INJECTIVE, "nn.deformable_conv2d": OpPattern.OPAQUE,
    "image.resize1d": OpPattern.INJECTIVE,
    "image.resize2d": OpPattern.INJECTIVE, "image.resize3d": OpPattern.INJECTIVE,
    "image.grid_sample": OpPattern.INJECTIVE,
    "nn.contrib_conv2d_NCHWc": _WINDOW, "nn.contrib_depthwise_conv2d_NCHWc": _WINDOW,
    "nn.contrib_conv2d_winograd_NCHWc": _WINDOW,
    "nn.contrib_conv2d_winograd_weight_transform": OpPattern.OPAQUE,
}


def test_patterns_and_bad_input_tables_cover_the_image_family():
    assert {n: get_op(n).pattern for n in PATTERNS} == PATTERNS
    ops = {n for n in relayir.op.list_ops() if n.startswith("image.")}
    assert ops == {n for n in PATTERNS if n.startswith("image.")}
    assert ops <= {b[0] for b in BAD}


def test_constructors_have_relay_signatures():
    x = Var("x", TensorType((1, 4, 4, 4), "float32"))
    w = Var("w", TensorType((4, 2, 3, 3), "float32"))
    assert nn.conv2d_transpose(x, w, strides=(2, 2), output_padding=(1, 1)).attrs.kernel_layout \
        == "IOHW"
    assert image.resize2d(x, (8, 8), method="bilinear").attrs.method == "linear"
    assert image.resize2d(x, (8, 8), method="nearest_neighbor").attrs.rounding == "round"
    assert nn.upsampling(x, 2, 2).attrs.scale_h == 2.0
    assert nn.lrn(x, 3).attrs.window == (1, 1)
    assert nn.depth_to_space(x, 2).attrs.mode == "DCR"
    assert nn.max_pool3d(Var("v", TensorType((1, 1, 4, 4, 4))), 2).attrs.padding == (0,) * 6
