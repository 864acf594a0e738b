"""ONNX vision layers (GridSample, RoiAlign, NonMaxSuppression) against onnx's reference
evaluator, run through the interpreter and, for a sample, built for the cpu target."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import relayir  # noqa: E402
from relayir.executor import create_executor  # noqa: E402
from relayir.frontend import from_onnx  # noqa: E402
from relayir.testing.onnx_oracle import expected_outputs  # noqa: E402

RNG = np.random.default_rng(0)


def _model(node, inputs, consts, opset):
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
         for n, a in inputs.items()],
        [helper.make_tensor_value_info(
            "y", TensorProto.INT64 if node.op_type == "NonMaxSuppression" else TensorProto.FLOAT,
            None)],
        [numpy_helper.from_array(np.asarray(v), n) for n, v in consts.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=8)


def check(op, inputs, consts=None, opset=20, target=None, rtol=1e-5, atol=1e-5, ort=False,
          **attrs):
    """``op`` with ``inputs`` (fed) and ``consts`` (initializers) matches onnx's reference
    (onnxruntime with ``ort``: the reference gives opset 10's RoiAlign opset 16's default
    half-pixel mode)."""
    consts = consts or {}
    model = _model(helper.make_node(op, [*inputs, *consts], ["y"], **attrs), inputs, consts,
                   opset)
    (want,) = expected_outputs(model, inputs, onnxruntime=ort)
    mod, params = from_onnx(model)
    if target is None:
        got = create_executor("debug", mod).evaluate()(*inputs.values(), **params)
    elif target == "vm-cpu":  # dynamic output shapes
        got = create_executor("vm", mod, target="cpu", params=params).evaluate()(
            *inputs.values())
    else:
        with relayir.transform.PassContext(opt_level=3):
            lib = relayir.build(mod, target=target, params=params)
        m = relayir.graph_executor.GraphModule(lib)
        m.set_input(**inputs)
        m.run()
        got = m.get_output(0)
    got = np.asarray(got)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def _grid(*shape):
    return RNG.uniform(-1.3, 1.3, shape).astype("float32")  # some points outside


# ---------------------------------------------------------------- GridSample


@pytest.mark.parametrize("mode,padding,corners", list(itertools.product(
    ("linear", "nearest", "cubic"), ("zeros", "border", "reflection"), (0, 1))))
def test_grid_sample_2d(mode, padding, corners):
    check("GridSample", {"x": RNG.normal(size=(2, 3, 4, 5)).astype("float32"),
                         "grid": _grid(2, 3, 6, 2)},
          mode=mode, padding_mode=padding, align_corners=corners)


@pytest.mark.parametrize("old,new", [("bilinear", "linear"), ("bicubic", "cubic")])
def test_grid_sample_opset16_names(old, new):
    """Opset 16's mode names (onnx's reference knows only opset 20's)."""
    inputs = {"x": RNG.normal(size=(1, 2, 3, 4)).astype("float32"), "grid": _grid(1, 2, 5, 2)}
    (want,) = ReferenceEvaluator(_model(helper.make_node("GridSample", ["x", "grid"], ["y"],
                                                         mode=new), inputs, {}, 20)
                                 ).run(None, inputs)
    mod, params = from_onnx(_model(helper.make_node("GridSample", ["x", "grid"], ["y"],
                                                    mode=old), inputs, {}, 16))
    got = create_executor("debug", mod).evaluate()(*inputs.values(), **params)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode,padding", [("linear", "reflection"), ("nearest", "border"),
                                          ("linear", "zeros")])
def test_grid_sample_3d_and_1d(mode, padding):
    check("GridSample", {"x": RNG.normal(size=(1, 2, 3, 4, 2)).astype("float32"),
                         "grid": _grid(1, 2, 3, 2, 3)}, mode=mode, padding_mode=padding)
    check("GridSample", {"x": RNG.normal(size=(2, 3, 5)).astype("float32"),
                         "grid": _grid(2, 4, 1)}, mode=mode, padding_mode=padding)


def test_grid_sample_builds_for_cpu():
    check("GridSample", {"x": RNG.normal(size=(2, 3, 4, 5)).astype("float32"),
                         "grid": _grid(2, 3, 6, 2)}, target="cpu", mode="cubic",
          padding_mode="reflection")


# ---------------------------------------------------------------- RoiAlign

ROIS = np.array([[0.0, 0.0, 6.0, 6.0], [1.2, 0.5, 4.8, 7.1], [2.0, 3.0, 2.4, 3.2],
                 [-1.0, -2.0, 9.0, 3.0]], "float32")


@pytest.mark.parametrize("opset,attrs", [
    (10, {}),
    (10, dict(mode="max", output_height=2, output_width=3, sampling_ratio=2)),
    (16, dict(coordinate_transformation_mode="half_pixel", output_height=3, output_width=2,
              spatial_scale=0.5)),
    (16, dict(coordinate_transformation_mode="output_half_pixel", output_height=4,
              output_width=4, sampling_ratio=1, mode="max")),
])
def test_roi_align(opset, attrs):
    check("RoiAlign", {"x": RNG.normal(size=(2, 3, 8, 7)).astype("float32"), "rois": ROIS,
                       "batch_indices": np.array([0, 1, 1, 0], "int64")}, opset=opset,
          ort=opset == 10, **attrs)


def test_roi_align_builds_for_cpu_through_its_reference():
    check("RoiAlign", {"x": RNG.normal(size=(2, 3, 8, 7)).astype("float32"), "rois": ROIS,
                       "batch_indices": np.array([1, 0, 1, 0], "int64")}, opset=16,
          target="cpu", output_height=2, output_width=2, sampling_ratio=2)


# ---------------------------------------------------------------- NonMaxSuppression


def _boxes(batches, n, seed):
    rng = np.random.default_rng(seed)
    lo = rng.uniform(0, 4, (batches, n, 2))
    hi = lo + rng.uniform(0.5, 3, (batches, n, 2))
    return np.concatenate([lo, hi], axis=-1).astype("float32")


@pytest.mark.parametrize("center,limit,iou,score", [
    (0, 3, 0.4, None), (0, 10, 0.2, 0.3), (1, 2, 0.5, 0.1), (0, 0, 0.5, None)])
def test_non_max_suppression(center, limit, iou, score):
    consts = {"max": np.array([limit], "int64"), "iou": np.array([iou], "float32")}
    if score is not None:
        consts["score"] = np.array([score], "float32")
    scores = np.random.default_rng(1).uniform(0, 1, (2, 3, 9)).astype("float32")
    scores[0, 0, 4] = scores[0, 0, 7]  # a tie: the lower index goes first
    check("NonMaxSuppression", {"boxes": _boxes(2, 9, 0), "scores": scores}, consts,
          opset=11, center_point_box=center)


def test_non_max_suppression_runs_on_the_vm():
    consts = {"max": np.array([4], "int64"), "iou": np.array([0.3], "float32")}
    check("NonMaxSuppression", {"boxes": _boxes(1, 7, 2),
                                "scores": RNG.uniform(size=(1, 2, 7)).astype("float32")},
          consts, opset=11, target="vm-cpu")
