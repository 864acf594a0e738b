"""The QNN dialect's references against ONNX Runtime's integer arithmetic, bit for bit.

Each case builds one ONNX node (QuantizeLinear, DequantizeLinear, QLinearConv,
QLinearMatMul, MatMulInteger, ConvInteger), runs it in onnxruntime, and compares with
the same computation written in ``relay.qnn.op`` and run on the reference interpreter.
Inputs include exact ties (``x / scale = k + 0.5``) and values that saturate.
"""

from __future__ import annotations

import numpy as np
import pytest

import relayir as relay
from relayir.errors import TypeInferenceError
from relayir.ir.expr import Function, Var
from relayir.ir.module import IRModule
from relayir.ir.types import TensorType

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper  # noqa: E402

qnn = relay.qnn.op
ELEM = {"float32": TensorProto.FLOAT, "int8": TensorProto.INT8, "uint8": TensorProto.UINT8,
        "int32": TensorProto.INT32}


def run_ort(op_type, inputs: dict, out_dtype, attrs=None, opset=21):
    """One ``op_type`` node over ``inputs`` (name → array; all graph inputs)."""
    names = list(inputs)
    node = helper.make_node(op_type, names, ["y"], **(attrs or {}))
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(n, ELEM[v.dtype.name], v.shape)
                      for n, v in inputs.items()],
        [helper.make_tensor_value_info("y", ELEM[out_dtype], None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    return sess.run(None, inputs)[0]


def run_relay(build, *arrays):
    """``build(*vars)`` over variables typed like ``arrays``, on the reference interpreter."""
    params = [Var(f"p{i}", TensorType(a.shape, a.dtype.name)) for i, a in enumerate(arrays)]
    mod = IRModule.from_expr(Function(params, build(*params)))
    return relay.create_executor("debug", mod=mod, target="numpy").evaluate()(*arrays)


def assert_bits(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, f"{bad.size} values differ, first at {bad[0]}: " \
                          f"{got.flat[bad[0]]} vs {want.flat[bad[0]]}"


def rng(seed=0):
    return np.random.default_rng(seed)


def ints(r, dtype, shape):
    lo, hi = (0, 256) if dtype == "uint8" else (-128, 128)
    return r.integers(lo, hi, shape).astype(dtype)


def with_ties(r, scale, shape, span=300):
    """Floats of which a third are exact ties ``(k + 0.5) * scale`` and some saturate."""
    x = (r.standard_normal(shape) * span * scale / 3).astype("float32")
    k = r.integers(-span, span, shape)
    tie = ((k + 0.5) * np.float32(scale)).astype("float32")
    return np.where(r.random(shape) < 0.33, tie, x).astype("float32")


# ---------------------------------------------------------------- quantize / dequantize


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
@pytest.mark.parametrize("per_axis", [False, True])
def test_quantize_matches_onnxruntime(dtype, per_axis):
    r = rng(1)
    x = with_ties(r, 0.05, (2, 3, 4, 5))
    scale = (np.array([0.05, 0.02, 0.11], "float32") if per_axis
             else np.array(0.05, "float32"))
    zp = (ints(r, dtype, (3,)) // 4 if per_axis else np.array(3 if dtype == "uint8" else -7,
                                                                dtype))
    want = run_ort("QuantizeLinear", {"x": x, "s": scale, "z": zp}, dtype, {"axis": 1})
    got = run_relay(lambda v, s, z: qnn.quantize(v, s, relay.cast(z, "int32"), axis=1,
                                                 out_dtype=dtype), x, scale, zp)
    assert_bits(got, want)
    assert (got == np.iinfo(dtype).max).any() and (got == np.iinfo(dtype).min).any()


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32"])
@pytest.mark.parametrize("per_axis", [False, True])
def test_dequantize_matches_onnxruntime(dtype, per_axis):
    r = rng(2)
    x = (ints(r, dtype, (2, 3, 4)) if dtype != "int32"
         else r.integers(-(1 << 30), 1 << 30, (2, 3, 4)).astype("int32"))
    scale = (np.array([0.05, 0.021, 0.11], "float32") if per_axis
             else np.array(0.037, "float32"))
    zp = (np.zeros(3 if per_axis else (), dtype) if dtype == "int32" else
          ints(r, dtype, (3,) if per_axis else ()))
    want = run_ort("DequantizeLinear", {"x": x, "s": scale, "z": zp}, "float32", {"axis": 1})
    got = run_relay(lambda v, s, z: qnn.dequantize(v, s, relay.cast(z, "int32"), axis=1),
                    x, scale, zp)
    assert_bits(got, want)


# ---------------------------------------------------------------- products


def _requantized(acc, in_scale, out_scale, out_zp, out_dtype, axis):
    return qnn.requantize(acc, in_scale, relay.const(0), out_scale, relay.cast(out_zp, "int32"),
                          axis=axis, out_dtype=out_dtype)


@pytest.mark.parametrize("xdt,wdt", [("uint8", "int8"), ("int8", "int8"), ("uint8", "uint8")])
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("groups", [1, 2])
def test_qlinear_conv_matches_onnxruntime(xdt, wdt, per_channel, groups):
    r = rng(3)
    x = ints(r, xdt, (1, 4, 7, 6))
    w = ints(r, wdt, (6, 4 // groups, 3, 3))
    b = r.integers(-5000, 5000, (6,)).astype("int32")
    xs, ys = np.array(0.02, "float32"), np.array(0.7, "float32")
    ws = (r.uniform(0.001, 0.01, (6,)) if per_channel else np.array(0.004)).astype("float32")
    xz = np.array(128 if xdt == "uint8" else 3, xdt)
    wz = np.zeros(ws.shape, wdt)  # ONNX Runtime's QLinearConv wants a zero weight zero point
    yz = np.array(100 if xdt == "uint8" else -5, xdt)
    attrs = {"pads": [1, 0, 1, 2], "strides": [2, 1], "group": groups}
    feeds = {"x": x, "xs": xs, "xz": xz, "w": w, "ws": ws, "wz": wz, "ys": ys, "yz": yz, "b": b}
    want = run_ort("QLinearConv", feeds, xdt, attrs)

    def build(x, xs, xz, w, ws, wz, ys, yz, b):
        acc = qnn.conv2d(x, w, relay.cast(xz, "int32"), relay.cast(wz, "int32"), xs, ws,
                         strides=(2, 1), padding=(1, 0, 1, 2), groups=groups)
        acc = acc + relay.reshape(b, (1, 6, 1, 1))
        return _requantized(acc, xs * ws, ys, yz, xdt, axis=1)

    assert_bits(run_relay(build, *feeds.values()), want)


@pytest.mark.parametrize("adt,bdt", [("uint8", "int8"), ("int8", "int8"), ("uint8", "uint8")])
@pytest.mark.parametrize("per_column", [False, True])
def test_qlinear_matmul_matches_onnxruntime(adt, bdt, per_column):
    r = rng(4)
    a, b = ints(r, adt, (5, 32)), ints(r, bdt, (32, 7))
    as_, ys = np.array(0.03, "float32"), np.array(2.5, "float32")
    bs = (r.uniform(0.001, 0.01, (7,)) if per_column else np.array(0.006)).astype("float32")
    az = np.array(7, adt)
    bz = (ints(r, bdt, (7,)) // 8 if per_column else np.array(1, bdt))
    yz = np.array(9, adt)
    feeds = {"a": a, "as": as_, "az": az, "b": b, "bs": bs, "bz": bz, "ys": ys, "yz": yz}
    want = run_ort("QLinearMatMul", feeds, adt)

    def build(a, as_, az, b, bs, bz, ys, yz):
        acc = qnn.dense(a, relay.transpose(b, (1, 0)), relay.cast(az, "int32"),
                        relay.cast(bz, "int32"), as_, bs)
        return _requantized(acc, as_ * bs, ys, yz, adt, axis=-1)

    assert_bits(run_relay(build, *feeds.values()), want)


@pytest.mark.parametrize("adt,bdt", [("uint8", "int8"), ("int8", "int8"), ("uint8", "uint8")])
def test_matmul_integer_matches_onnxruntime(adt, bdt):
    r = rng(5)
    a, b = ints(r, adt, (2, 3, 16)), ints(r, bdt, (2, 16, 5))
    az, bz = np.array(11, adt), np.array(-3 if bdt == "int8" else 3, bdt)
    want = run_ort("MatMulInteger", {"a": a, "b": b, "az": az, "bz": bz}, "int32")
    got = run_relay(lambda a, b, az, bz: qnn.batch_matmul(
        a, b, relay.cast(az, "int32"), relay.cast(bz, "int32"), 1.0, 1.0, transpose_b=False),
        a, b, az, bz)
    assert_bits(got, want)


@pytest.mark.parametrize("xdt,wdt", [("uint8", "int8"), ("uint8", "uint8")])
def test_conv_integer_matches_onnxruntime(xdt, wdt):
    r = rng(6)
    x, w = ints(r, xdt, (2, 3, 5, 5)), ints(r, wdt, (4, 3, 2, 2))
    xz, wz = np.array(17, xdt), np.array(2, wdt)
    want = run_ort("ConvInteger", {"x": x, "w": w, "xz": xz, "wz": wz}, "int32",
                   {"pads": [1, 1, 0, 0], "dilations": [2, 1]})
    got = run_relay(lambda x, w, xz, wz: qnn.conv2d(
        x, w, relay.cast(xz, "int32"), relay.cast(wz, "int32"), 1.0, 1.0,
        padding=(1, 1, 0, 0), dilation=(2, 1)), x, w, xz, wz)
    assert_bits(got, want)


# ---------------------------------------------------------------- the other ops


def test_requantize_rounds_half_to_even_and_saturates():
    acc = np.array([5, 15, 25, -5, -15, 1000, -1000, 7], "int32")
    got = run_relay(lambda v: qnn.requantize(v, 0.1, 0, 1.0, 2, out_dtype="int8"), acc)
    # 0.5→0, 1.5→2, 2.5→2, -0.5→0, -1.5→-2; +2; 100+2 and -100+2 fit, so scale 0.1
    assert got.tolist() == [2, 4, 4, 2, 0, 102, -98, 3]
    got = run_relay(lambda v: qnn.requantize(v, 1.0, 0, 1.0, 2, out_dtype="int8"), acc)
    assert got.tolist() == [7, 17, 27, -3, -13, 127, -128, 9]


def test_add_mul_concatenate_pool_match_float_then_round():
    r = rng(7)
    a, b = ints(r, "uint8", (2, 3, 4, 4)), ints(r, "uint8", (2, 3, 4, 4))
    sa, sb, sc = np.float32(0.1), np.float32(0.07), np.float32(0.2)
    got = run_relay(lambda a, b: qnn.add(a, b, sa, 10, sb, 3, sc, 5), a, b)
    v = ((a.astype(np.int64) - 10).astype(np.float32) * (sa / sc)
         + (b.astype(np.int64) - 3).astype(np.float32) * (sb / sc))
    assert_bits(got, np.clip(np.rint(v) + 5, 0, 255).astype("uint8"))
    got = run_relay(lambda a, b: qnn.mul(a, b, sa, 10, sb, 3, sc, 5), a, b)
    v = ((a.astype(np.int64) - 10) * (b.astype(np.int64) - 3)).astype(np.float32) * (sa * sb / sc)
    assert_bits(got, np.clip(np.rint(v) + 5, 0, 255).astype("uint8"))
    got = run_relay(lambda a, b: qnn.concatenate([a, b], [sa, sc], [10, 5], sc, 5, axis=1), a, b)
    first = np.clip(np.rint((a.astype(np.int64) - 10).astype(np.float32) * (sa / sc)) + 5, 0, 255)
    assert_bits(got, np.concatenate([first.astype("uint8"), b], axis=1))
    got = run_relay(lambda a: qnn.avg_pool2d(a, sa, 10, sc, 5, pool_size=(2, 2),
                                             strides=(2, 2)), a)
    mean = (a.astype(np.float64) - 10).reshape(2, 3, 2, 2, 2, 2).mean(axis=(3, 5))
    want = np.clip(np.rint(mean.astype(np.float32) * (sa / sc)) + 5, 0, 255).astype("uint8")
    assert_bits(got, want)


# ---------------------------------------------------------------- type relations


def _infer(build, *types):
    params = [Var(f"p{i}", t) for i, t in enumerate(types)]
    mod = relay.transform.InferType()(IRModule.from_expr(Function(params, build(*params))))
    return mod["main"].body.checked_type


def test_products_accumulate_in_int32_and_keep_the_float_op_shapes():
    t = _infer(lambda x, w: qnn.conv2d(x, w, 0, [0] * 8, 0.1, [0.1] * 8, padding=(1, 1)),
               TensorType((1, 3, 8, 8), "uint8"), TensorType((8, 3, 3, 3), "int8"))
    assert t == TensorType((1, 8, 8, 8), "int32")
    t = _infer(lambda x, w: qnn.dense(x, w, 0, 0, 0.1, 0.1),
               TensorType((4, 16), "int8"), TensorType((5, 16), "int8"))
    assert t == TensorType((4, 5), "int32")


@pytest.mark.parametrize("build,types,fragment", [
    (lambda x, w: qnn.conv2d(x, w, 0, [0] * 4, 0.1, [0.1] * 4),
     [TensorType((1, 3, 8, 8), "uint8"), TensorType((8, 3, 3, 3), "int8")],
     "kernel_scale has 4 values but kernel axis 0 has 8 channels"),
    (lambda x, w: qnn.dense(x, w, 0, 0, 0.1, 0.1),
     [TensorType((4, 16), "float32"), TensorType((5, 16), "int8")], "data must be int8 or uint8"),
    (lambda x, w: qnn.dense(x, w, [0, 0], 0, 0.1, 0.1),
     [TensorType((4, 16), "int8"), TensorType((5, 16), "int8")],
     "input_zero_point must be a scalar (per-tensor)"),
    (lambda x: qnn.quantize(x, 0.1, relay.const(0, "int64")),
     [TensorType((4,), "float32")], "output_zero_point must be int32"),
    (lambda x: qnn.quantize(x, [0.1, 0.2, 0.3], 0, axis=0),
     [TensorType((4,), "float32")], "output_scale has 3 values but data axis 0 has 4"),
    (lambda x: qnn.dequantize(x, 0.1, 0),
     [TensorType((4,), "float32")], "data must be int8 or uint8 or int32"),
    (lambda a, b: qnn.add(a, b, 0.1, 0, 0.1, 0, 0.1, 0),
     [TensorType((4,), "int8"), TensorType((4,), "uint8")], "dtype mismatch"),
])
def test_bad_scales_zero_points_and_dtypes_are_named(build, types, fragment):
    with pytest.raises(TypeInferenceError) as info:
        _infer(build, *types)
    assert fragment in str(info.value)
