"""ONNX spatial layers (Resize, Upsample, ConvTranspose, 1-D/3-D Conv and pools, global
pools, LRN, DepthToSpace, SpaceToDepth) against onnx's reference evaluator, run through
the interpreter and, for a sample, built for the cpu target."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import relayir  # noqa: E402
from relayir.executor import create_executor  # noqa: E402
from relayir.frontend import from_onnx  # noqa: E402
from relayir.testing.onnx_oracle import expected_outputs  # noqa: E402

RNG = np.random.default_rng(0)


def x(*shape):
    return RNG.uniform(-2, 2, shape).astype("float32")


def _model(node, inputs, consts, opset):
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape) for n, a in inputs.items()],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.asarray(v), n) for n, v in consts.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=8)


def check(op, inputs, consts=None, opset=19, target=None, rtol=1e-5, atol=1e-5,
          input_names=None, ort=False, **attrs):
    """``op`` with ``inputs`` (fed) and ``consts`` (initializers) matches onnx's reference
    (onnxruntime with ``ort``, for semantics the reference no longer implements).

    ``input_names`` orders the node's inputs ("" for an omitted optional one)."""
    consts = consts or {}
    names = input_names or [*inputs, *consts]
    model = _model(helper.make_node(op, names, ["y"], **attrs), inputs, consts, opset)
    (want,) = expected_outputs(model, inputs, onnxruntime=ort)
    mod, params = from_onnx(model)
    if target is None:
        got = create_executor("debug", mod).evaluate()(*inputs.values(), **params)
    else:
        with relayir.transform.PassContext(opt_level=3):
            lib = relayir.build(mod, target=target, params=params)
        m = relayir.graph_executor.GraphModule(lib)
        m.set_input(**inputs)
        m.run()
        got = m.get_output(0)
    got = np.asarray(got)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


# ---------------------------------------------------------------- Resize

F32 = np.float32
RESIZE = [
    # (input shape, scales or None, sizes or None, attrs)
    ((1, 2, 4, 5), [1, 1, 2, 1.5], None, dict(mode="nearest")),
    ((1, 2, 4, 5), [1, 1, 0.6, 0.5], None, dict(mode="nearest", nearest_mode="floor")),
    ((1, 1, 5, 4), [1, 1, 1.7, 2.3], None, dict(mode="nearest", nearest_mode="ceil",
                                                coordinate_transformation_mode="asymmetric")),
    ((1, 1, 5, 4), [1, 1, 1.5, 2.5], None, dict(mode="nearest", nearest_mode="round_prefer_ceil",
                                                coordinate_transformation_mode="align_corners")),
    ((1, 2, 4, 5), None, [1, 2, 7, 3], dict(mode="nearest")),
    ((1, 2, 4, 5), [1, 1, 2, 2], None, dict(mode="linear")),
    ((1, 2, 4, 5), [1, 1, 0.6, 0.7], None, dict(mode="linear")),
    ((1, 2, 4, 5), None, [1, 2, 8, 3], dict(mode="linear",
                                            coordinate_transformation_mode="align_corners")),
    ((1, 2, 4, 5), None, [1, 2, 1, 9], dict(mode="linear",
                                            coordinate_transformation_mode="pytorch_half_pixel")),
    ((1, 2, 4, 5), [1, 1, 1.6, 0.7], None, dict(mode="linear",
                                                coordinate_transformation_mode="asymmetric")),
    ((1, 2, 5, 5), [1, 1, 1.3, 0.7], None, dict(mode="linear",
                                                coordinate_transformation_mode="half_pixel_symmetric")),
    ((1, 2, 4, 5), [1, 1, 2, 1.5], None, dict(mode="cubic")),
    ((1, 2, 6, 5), [1, 1, 0.5, 0.8], None, dict(mode="cubic", cubic_coeff_a=-0.5,
                                                exclude_outside=1)),
    ((1, 2, 4, 5), None, [1, 2, 9, 3], dict(mode="cubic",
                                            coordinate_transformation_mode="align_corners")),
    ((2, 3, 5), [1, 1, 1.8], None, dict(mode="linear")),
    ((1, 2, 3, 4, 5), [1, 1, 2, 1, 0.6], None, dict(mode="linear")),
    ((1, 1, 3, 4, 5), None, [1, 1, 5, 4, 2], dict(mode="nearest")),
    ((4, 6), [1.5, 0.5], None, dict(mode="linear")),
    ((2, 3, 4, 5), [0.5, 1, 2, 1], None, dict(mode="nearest")),
]


@pytest.mark.parametrize("shape,scales,sizes,attrs", RESIZE)
def test_resize(shape, scales, sizes, attrs):
    consts = {"roi": np.zeros(0, F32)}
    if scales is not None:
        consts["scales"] = np.asarray(scales, F32)
    else:
        consts["scales"] = np.zeros(0, F32)
        consts["sizes"] = np.asarray(sizes, np.int64)
    check("Resize", {"x": x(*shape)}, consts, **attrs)


@pytest.mark.parametrize("mode,extrapolation", [("linear", 10.0), ("nearest", -1.0),
                                                ("cubic", 0.0)])
def test_resize_tf_crop_and_resize(mode, extrapolation):
    consts = {"roi": np.asarray([0, 0, 0.4, 0.6, 1, 1, 1.2, 0.7], F32),
              "scales": np.zeros(0, F32), "sizes": np.asarray([1, 2, 3, 3], np.int64)}
    check("Resize", {"x": x(1, 2, 4, 5)}, consts, mode=mode,
          coordinate_transformation_mode="tf_crop_and_resize",
          extrapolation_value=extrapolation)


@pytest.mark.parametrize("axes,sizes,policy", [
    ([2, 3], [7, 8], "stretch"), ([3, 2], [8, 7], "not_larger"), ([2, 3], [7, 8], "not_smaller"),
    ([3], [9], "stretch")])
def test_resize_opset18_axes_and_aspect_ratio(axes, sizes, policy):
    consts = {"sizes": np.asarray(sizes, np.int64)}
    check("Resize", {"x": x(1, 2, 4, 5)}, consts, input_names=["x", "", "", "sizes"],
          opset=18, mode="linear", axes=axes, keep_aspect_ratio_policy=policy)


@pytest.mark.parametrize("mode,exclude", [("linear", 0), ("cubic", 0), ("cubic", 1)])
def test_resize_antialias(mode, exclude):
    consts = {"scales": np.asarray([1, 1, 0.4, 0.7], F32)}
    check("Resize", {"x": x(1, 2, 9, 8)}, consts, input_names=["x", "", "scales"], opset=18,
          mode=mode, antialias=1, exclude_outside=exclude)
    check("Resize", {"x": x(1, 2, 9, 8)}, consts, input_names=["x", "", "scales"], opset=18,
          mode=mode, antialias=1, exclude_outside=exclude, target="cpu")


def test_resize_tf_half_pixel_for_nn():
    consts = {"roi": np.zeros(0, F32), "scales": np.asarray([1, 1, 1.7, 0.6], F32)}
    check("Resize", {"x": x(1, 2, 4, 5)}, consts, opset=11, ort=True, mode="nearest",
          coordinate_transformation_mode="tf_half_pixel_for_nn")


@pytest.mark.parametrize("scales", [[1, 1, 0.6, 0.5], [1, 1, 1.7, 0.4], [1, 1, 2.5, 1.5]])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_resize_opset10(mode, scales):
    check("Resize", {"x": x(1, 2, 5, 7)}, {"scales": np.asarray(scales, F32)}, opset=10,
          ort=True, mode=mode)


def test_resize_opset10_and_upsample():
    # Resize-10 and Upsample: asymmetric coordinates, nearest rounds down
    model = _model(helper.make_node("Resize", ["x", "scales"], ["y"], mode="nearest"),
                   {"x": x(1, 1, 3, 3)}, {"scales": np.asarray([1, 1, 2, 3], F32)}, 10)
    data = x(1, 1, 3, 3)
    mod, params = from_onnx(model)
    got = create_executor("debug", mod).evaluate()(data, **params)
    np.testing.assert_array_equal(got, data.repeat(2, axis=2).repeat(3, axis=3))
    check("Upsample", {"x": x(1, 2, 3, 4)}, {"scales": np.asarray([1, 1, 2, 3], F32)},
          opset=9, mode="nearest")
    for mode in ("nearest", "linear"):
        model = _model(helper.make_node("Upsample", ["x"], ["y"], mode=mode,
                                        scales=[1.0, 1.0, 2.0, 2.0]), {"x": data}, {}, 7)
        mod, params = from_onnx(model)
        got = np.asarray(create_executor("debug", mod).evaluate()(data, **params))
        want = data.repeat(2, axis=2).repeat(2, axis=3) if mode == "nearest" else None
        assert got.shape == (1, 1, 6, 6)
        if want is not None:
            np.testing.assert_array_equal(got, want)
        else:  # asymmetric linear: even positions are the input, odd ones midpoints
            np.testing.assert_allclose(got[..., ::2, ::2], data, rtol=1e-6)
            np.testing.assert_allclose(got[..., 1:-1:2, 0], (data[..., :-1, 0] + data[..., 1:, 0])
                                       / 2, rtol=1e-5)


@pytest.mark.parametrize("attrs", [
    dict(mode="linear"), dict(mode="cubic"),
    dict(mode="nearest", coordinate_transformation_mode="asymmetric"),
    dict(mode="linear", coordinate_transformation_mode="tf_crop_and_resize")])
def test_resize_on_cpu(attrs):
    consts = {"roi": np.asarray([0, 0, 0.2, -0.1, 1, 1, 0.9, 1.1], F32),
              "scales": np.asarray([1, 1, 1.5, 0.7], F32)}
    check("Resize", {"x": x(1, 3, 6, 7)}, consts, target="cpu", **attrs)


# ---------------------------------------------------------------- conv / pool

CONV_TRANSPOSE = [
    ((1, 3, 4, 5), (3, 2, 3, 3), dict()),
    ((1, 4, 4, 5), (4, 3, 3, 2), dict(strides=[2, 3], pads=[1, 0, 1, 1], output_padding=[1, 2])),
    ((2, 4, 3, 3), (4, 1, 3, 3), dict(group=2, dilations=[2, 1], strides=[2, 2])),
    ((1, 2, 5, 4), (2, 3, 3, 3), dict(strides=[2, 2], output_shape=[10, 8])),
    ((1, 2, 5, 4), (2, 3, 3, 3), dict(strides=[2, 2], auto_pad="SAME_UPPER")),
    ((1, 2, 5, 4), (2, 3, 4, 4), dict(strides=[2, 2], auto_pad="SAME_LOWER")),
    ((2, 3, 7), (3, 4, 3), dict(strides=[2], pads=[1, 2])),
    ((1, 2, 3, 4, 3), (2, 2, 2, 3, 2), dict(strides=[2, 1, 2], pads=[1, 0, 0, 0, 1, 1])),
    ((1, 1, 3, 3), (1, 2, 3, 3), dict(strides=[3, 2], output_shape=[10, 8])),
]


@pytest.mark.parametrize("xs,ws,attrs", CONV_TRANSPOSE)
def test_conv_transpose(xs, ws, attrs):
    # onnx's reference mis-slices grouped weights and fails with output_shape: onnxruntime
    ort = "group" in attrs or "output_shape" in attrs
    check("ConvTranspose", {"x": x(*xs)}, {"w": x(*ws), "b": x(ws[1] * attrs.get("group", 1))},
          ort=ort, **attrs)


def test_conv_transpose_on_cpu():
    check("ConvTranspose", {"x": x(1, 4, 5, 6)}, {"w": x(4, 3, 3, 3)}, target="cpu",
          strides=[2, 2], pads=[1, 1, 0, 1], output_padding=[1, 0])


@pytest.mark.parametrize("xs,ws,attrs", [
    ((2, 3, 9), (4, 3, 3), dict(strides=[2], pads=[1, 1])),
    ((1, 4, 9), (4, 2, 3), dict(group=2, dilations=[2], auto_pad="SAME_UPPER")),
    ((1, 2, 5, 6, 4), (3, 2, 3, 3, 2), dict(pads=[1, 1, 0, 1, 1, 1], strides=[2, 1, 1])),
    ((1, 4, 4, 5, 5), (4, 1, 2, 2, 2), dict(group=4, dilations=[1, 2, 1])),
])
def test_conv_1d_3d(xs, ws, attrs):
    check("Conv", {"x": x(*xs)}, {"w": x(*ws)}, **attrs)


@pytest.mark.parametrize("op,xs,attrs", [
    ("MaxPool", (2, 3, 9), dict(kernel_shape=[3], strides=[2], pads=[1, 1])),
    ("MaxPool", (1, 2, 9), dict(kernel_shape=[2], dilations=[2], ceil_mode=1, strides=[2])),
    ("AveragePool", (2, 3, 9), dict(kernel_shape=[3], strides=[2], pads=[1, 1])),
    ("AveragePool", (2, 3, 9), dict(kernel_shape=[3], strides=[2], pads=[1, 1],
                                    count_include_pad=1)),
    ("MaxPool", (1, 2, 5, 6, 4), dict(kernel_shape=[3, 2, 2], strides=[2, 2, 1],
                                      pads=[1, 0, 0, 1, 1, 1])),
    ("AveragePool", (1, 2, 5, 6, 4), dict(kernel_shape=[2, 3, 2], auto_pad="SAME_UPPER")),
    ("AveragePool", (1, 2, 5, 6, 5), dict(kernel_shape=[2, 2, 3], strides=[2, 2, 2],
                                          ceil_mode=1)),
])
def test_pool_1d_3d(op, xs, attrs):
    check(op, {"x": x(*xs)}, **attrs)


@pytest.mark.parametrize("xs,attrs", [
    ((1, 2, 5, 6), dict(kernel_shape=[2, 3], pads=[1, 0, 1, 1], p=3)),
    ((2, 3, 9), dict(kernel_shape=[3], strides=[2], auto_pad="SAME_UPPER")),
    ((1, 2, 4, 5, 3), dict(kernel_shape=[2, 2, 2], p=1)),
])
def test_lp_pool(xs, attrs):
    # padding counts as zeros in the norm (onnxruntime; the reference averages it away)
    check("LpPool", {"x": x(*xs)}, opset=18, ort=True, rtol=1e-4, **attrs)


@pytest.mark.parametrize("shape", [(1, 2, 3, 4), (2, 3, 5)])
def test_global_lp_pool(shape):
    check("GlobalLpPool", {"x": x(*shape)}, ort=True, rtol=1e-4, p=3)


@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool"])
@pytest.mark.parametrize("shape", [(2, 3, 5), (1, 2, 3, 4), (1, 2, 3, 4, 2)])
def test_global_pools(op, shape):
    # onnx's reference GlobalMaxPool reduces the wrong axes unless the input is 4-D
    check(op, {"x": x(*shape)}, ort=op == "GlobalMaxPool" and len(shape) != 4)


@pytest.mark.parametrize("size,attrs", [(3, {}), (5, dict(alpha=0.01, beta=0.5, bias=2.0)),
                                        (7, dict(alpha=0.1))])
def test_lrn(size, attrs):
    # onnx's reference loops over the batch instead of the channels: onnxruntime
    check("LRN", {"x": x(2, 7, 3, 4)}, ort=True, size=size, **attrs)


def test_lrn_on_cpu():
    check("LRN", {"x": x(1, 6, 4, 4)}, ort=True, size=3, alpha=0.05, target="cpu")


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space(mode):
    check("DepthToSpace", {"x": x(2, 8, 3, 4)}, blocksize=2, mode=mode)


def test_space_to_depth():
    check("SpaceToDepth", {"x": x(2, 3, 6, 4)}, blocksize=2)


@pytest.mark.parametrize("xs,attrs", [
    ((1, 2, 5, 6), dict(kernel_shape=[2, 3], strides=[2, 2], pads=[1, 0, 1, 1])),
    ((2, 1, 5, 5), dict(kernel_shape=[3, 3], strides=[2, 1], storage_order=1)),
    ((1, 2, 9), dict(kernel_shape=[3], strides=[2], dilations=[2], ceil_mode=1)),
    ((1, 1, 4, 3, 4), dict(kernel_shape=[2, 2, 2], pads=[0, 1, 1, 1, 0, 0])),
])
def test_maxpool_indices(xs, attrs):
    model = _model(helper.make_node("MaxPool", ["x"], ["y", "i"], **attrs),
                   {"x": x(*xs)}, {}, 12)
    model.graph.output.append(helper.make_tensor_value_info("i", TensorProto.INT64, None))
    data = x(*xs)
    rt = pytest.importorskip("onnxruntime")
    want = rt.InferenceSession(model.SerializeToString(),
                               providers=["CPUExecutionProvider"]).run(None, {"x": data})
    mod, params = from_onnx(model)
    got = create_executor("debug", mod).evaluate()(data, **params)
    np.testing.assert_allclose(np.asarray(got[0]), want[0], rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(got[1]), want[1])
