"""ONNX's low-precision element types (bfloat16, float8 x5, float4_e2m1, (u)int4, (u)int2):
Cast / CastLike to and from each (with ``saturate``), initializers of those types, and
QuantizeLinear / DequantizeLinear, all checked bit for bit against onnx's reference
evaluator; and the cpu target running them through the numpy reference."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ml_dtypes = pytest.importorskip("ml_dtypes")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from relayir.executor import create_executor  # noqa: E402
from relayir.frontend import from_onnx  # noqa: E402

OPSET = 25  # the first with (u)int2
CODES = {"bfloat16": TensorProto.BFLOAT16, "float8_e4m3fn": TensorProto.FLOAT8E4M3FN,
         "float8_e4m3fnuz": TensorProto.FLOAT8E4M3FNUZ, "float8_e5m2": TensorProto.FLOAT8E5M2,
         "float8_e5m2fnuz": TensorProto.FLOAT8E5M2FNUZ,
         "float8_e8m0fnu": TensorProto.FLOAT8E8M0, "float4_e2m1fn": TensorProto.FLOAT4E2M1,
         "int4": TensorProto.INT4, "uint4": TensorProto.UINT4, "int2": TensorProto.INT2,
         "uint2": TensorProto.UINT2}
FLOAT8 = ["float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz"]
INTS = ["int4", "uint4", "int2", "uint2"]

# halves and ties (round to nearest even), each float8's largest finite values and just
# beyond, overflow, subnormals, signed zero, inf and nan
_SPECIAL = [0.0, -0.0, 0.3, 1.5, 2.5, -2.5, 3.75, 7.6, 240, 248, 256, 448, 460, 464, 500,
            57344, 61440, 6e4, 1e9, -1e9, 2.0 ** -9, 2.0 ** -17, 2.0 ** -126 * 0.75,
            2.0 ** -130, 1.0000001, 3e38, np.inf, -np.inf, np.nan]
_FINITE_SMALL = [0.0, 0.4, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.0, -3.0, 6.7, -8.0, 15.0, 17.9]


def _model(nodes, inputs, out_code, inits=()):
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
         for n, a in inputs.items()],
        [helper.make_tensor_value_info("y", out_code, None)], list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                             ir_version=11)


def _bits(a):
    """Raw storage bytes (float8/int4 and the like are one byte each in numpy)."""
    a = np.ascontiguousarray(a)
    return a.view(np.uint8 if a.dtype.itemsize == 1 else np.uint16 if a.dtype.itemsize == 2
                  else np.uint32 if a.dtype.itemsize == 4 else np.uint64)


def _check(model, inputs, target=None, **build):
    (want,) = ReferenceEvaluator(model).run(None, inputs)
    mod, params = from_onnx(model)
    kind = "graph" if target else "debug"
    got = np.asarray(create_executor(kind, mod, target=target or "numpy", **build)
                     .evaluate()(*inputs.values(), **params))
    assert got.dtype == want.dtype and got.shape == want.shape
    w, g = want.astype("float64"), got.astype("float64")  # every one is exact in float64
    nan = np.isnan(w)
    np.testing.assert_array_equal(np.isnan(g), nan)
    np.testing.assert_array_equal(g[~nan], w[~nan])
    np.testing.assert_array_equal(np.signbit(g[~nan]), np.signbit(w[~nan]))
    return got


def _every_value(dtype):
    """Every bit pattern of a one-byte dtype; a spread of bfloat16 values."""
    if dtype == "bfloat16":
        return np.array(_SPECIAL, "float32").astype("bfloat16")
    n = {"int4": 16, "uint4": 16, "int2": 4, "uint2": 4, "float4_e2m1fn": 16}.get(dtype, 256)
    if dtype.startswith("int"):
        return np.arange(-n // 2, n // 2).astype(dtype)
    if dtype.startswith("uint"):
        return np.arange(n).astype(dtype)
    return np.arange(n, dtype=np.uint8).view(dtype)


@pytest.mark.parametrize("src", ["float32", "float16"])
@pytest.mark.parametrize("dtype", list(CODES))
@pytest.mark.parametrize("saturate", [1, 0])
def test_cast_to_low_precision_matches_reference(dtype, src, saturate):
    if saturate == 0 and dtype not in FLOAT8 + ["float8_e8m0fnu"]:
        pytest.skip("saturate only applies to float8 targets")
    values = _FINITE_SMALL if dtype in INTS else _SPECIAL
    with np.errstate(over="ignore"):
        a = np.array(values, "float32").astype(src)
    model = _model([helper.make_node("Cast", ["x"], ["y"], to=CODES[dtype], saturate=saturate)],
                   {"x": a}, CODES[dtype])
    got = _check(model, {"x": a})
    assert got.dtype == np.dtype(dtype)


@pytest.mark.parametrize("dst", [("float32", TensorProto.FLOAT), ("float16", TensorProto.FLOAT16),
                                 ("int8", TensorProto.INT8)])
@pytest.mark.parametrize("dtype", list(CODES))
def test_cast_from_low_precision_matches_reference(dtype, dst):
    name, code = dst
    if name == "int8" and dtype not in INTS:
        pytest.skip("float to int8 of out-of-range values is undefined")
    a = _every_value(dtype)
    model = _model([helper.make_node("Cast", ["x"], ["y"], to=code)], {"x": a}, code)
    assert _check(model, {"x": a}).dtype == np.dtype(name)


@pytest.mark.parametrize("dtype", ["bfloat16", "float8_e4m3fn", "float8_e5m2fnuz", "int4"])
@pytest.mark.parametrize("saturate", [1, 0])
def test_cast_like_and_low_precision_initializers(dtype, saturate):
    """CastLike takes its target from an initializer of that dtype (also added to y)."""
    like = numpy_helper.from_array(np.array([1, 2, 3]).astype(dtype), "like")
    a = np.array(_FINITE_SMALL[:3] if dtype in INTS else [3.3, 1e6, np.nan], "float32")
    nodes = [helper.make_node("CastLike", ["x", "like"], ["c"], saturate=saturate),
             helper.make_node("Cast", ["c"], ["c32"], to=TensorProto.FLOAT),
             helper.make_node("Cast", ["like"], ["like32"], to=TensorProto.FLOAT),
             helper.make_node("Add", ["c32", "like32"], ["y"])]
    _check(_model(nodes, {"x": a}, TensorProto.FLOAT, [like]), {"x": a})


@pytest.mark.parametrize("dtype", INTS + FLOAT8 + ["float4_e2m1fn"])
@pytest.mark.parametrize("layout", ["scalar", "per_axis", "blocked"])
def test_quantize_dequantize_round_trip_matches_reference(dtype, layout):
    rng = np.random.default_rng(0)
    a = rng.uniform(-40, 40, (4, 6)).astype("float32")
    a[0, :3] = [1e6, -1e6, 0.5]  # saturation, a tie
    scale = {"scalar": np.array(2.0, "float32"),
             "per_axis": np.array([0.5, 1, 2, 4, 8, 16], "float32"),
             "blocked": np.array([[0.5, 2, 8]] * 4, "float32")}[layout]
    attrs = {"axis": 1, **({"block_size": 2} if layout == "blocked" else {})}
    ints = dtype in INTS or dtype == "float4_e2m1fn"
    zp = np.ones(scale.shape).astype(dtype) if ints and dtype != "float4_e2m1fn" else \
        np.zeros(scale.shape).astype(dtype)
    inits = [numpy_helper.from_array(scale, "s"), numpy_helper.from_array(zp, "zp")]
    q = _model([helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["y"], **attrs)],
               {"x": a}, CODES[dtype], inits)
    _check(q, {"x": a})
    dq = _model([helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"], **attrs),
                 helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["y"], **attrs)],
                {"x": a}, TensorProto.FLOAT, inits)
    _check(dq, {"x": a})


@pytest.mark.parametrize("saturate", [1, 0])
def test_float8_quantize_saturate(saturate):
    a = np.array([[1.0, 500.0, -1e5, np.inf]], "float32")
    nodes = [helper.make_node("QuantizeLinear", ["x", "s"], ["y"], saturate=saturate,
                              output_dtype=TensorProto.FLOAT8E4M3FN)]
    model = _model(nodes, {"x": a}, TensorProto.FLOAT8E4M3FN,
                   [numpy_helper.from_array(np.array(0.5, "float32"), "s")])
    got = _check(model, {"x": a}).astype("float32")
    assert (got[0, 1] == 448) == bool(saturate)


@pytest.mark.parametrize("dtype", ["bfloat16", "float8_e5m2", "int4", "float4_e2m1fn"])
def test_cpu_target_runs_imported_casts(dtype):
    """The C target has none of these types: their functions run the numpy reference."""
    a = np.array(_FINITE_SMALL, "float32")
    nodes = [helper.make_node("Mul", ["x", "x"], ["sq"]),
             helper.make_node("Cast", ["sq"], ["q"], to=CODES[dtype]),
             helper.make_node("Cast", ["q"], ["f"], to=TensorProto.FLOAT),
             helper.make_node("Add", ["f", "x"], ["y"])]
    _check(_model(nodes, {"x": a}, TensorProto.FLOAT), {"x": a}, target="cpu")
