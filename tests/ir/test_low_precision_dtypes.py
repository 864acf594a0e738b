"""ONNX's low-precision dtypes (bfloat16, float8, float4, int4, int2) in the type system,
the text format and the executors. numpy spells them through ml_dtypes, which relayir
imports only when one is used."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import relayir as relay
from relayir.errors import Error
from relayir.ir.structural import assert_structural_equal
from relayir.ir.types import (
    LOW_PRECISION_DTYPES,
    TensorType,
    check_dtype,
    dtype_range,
    is_float,
    is_int,
)

ml_dtypes = pytest.importorskip("ml_dtypes")

FLOATS = [d for d in LOW_PRECISION_DTYPES if not d.startswith(("int", "uint"))]
INTS = [d for d in LOW_PRECISION_DTYPES if d.startswith(("int", "uint"))]


def test_import_relayir_needs_no_ml_dtypes():
    code = "import sys, relayir; print('ml_dtypes' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "False"


def test_missing_ml_dtypes_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "ml_dtypes", None)  # import ml_dtypes → ImportError
    with pytest.raises(Error, match="'float8_e4m3fn' needs the ml_dtypes package"):
        TensorType((2,), "float8_e4m3fn")
    assert TensorType((2,), "float16").dtype == "float16"  # native dtypes unaffected


@pytest.mark.parametrize("dtype", LOW_PRECISION_DTYPES)
def test_dtype_is_classified_and_has_numpy_range(dtype):
    assert check_dtype(getattr(ml_dtypes, dtype)) == dtype  # the scalar type names it
    assert check_dtype(np.dtype(dtype)) == dtype
    assert is_float(dtype) == (dtype in FLOATS) and is_int(dtype) == (dtype in INTS)
    info = (ml_dtypes.iinfo if dtype in INTS else ml_dtypes.finfo)(dtype)
    assert dtype_range(dtype) == (info.min, info.max)


def test_unknown_dtype_still_rejected():
    with pytest.raises(Error, match="unsupported dtype 'float8'"):
        TensorType((2,), "float8")


@pytest.mark.parametrize("dtype", LOW_PRECISION_DTYPES)
def test_text_round_trip_of_types_casts_and_constants(dtype):
    values = np.array([[1, 2], [0.5 if dtype in FLOATS else 0, 1]]).astype(dtype)
    x = relay.var("x", shape=(2, 2), dtype="float32")
    body = relay.Tuple([relay.cast(x, dtype), relay.const(values),
                        relay.const(np.array(1).astype(dtype))])
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x], body)))
    text = mod.astext(show_meta_data=True)
    assert f"Tensor[(2, 2), {dtype}]" in text and f'dtype="{dtype}"' in text
    back = relay.parse(text)
    assert_structural_equal(back, mod)
    consts = [f for f in back["main"].body.fields[1:]]
    assert consts[0].data.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(consts[0].data.astype("float32"), values.astype("float32"))
    hand = relay.parse('#[version = "0.0.5"]\n'
                       f"def @main(%a: Tensor[(3), {dtype}]) -> Tensor[(3), float32] {{\n"
                       '  cast(%a, dtype="float32")\n}')
    assert hand["main"].params[0].type_annotation == TensorType((3,), dtype)


@pytest.mark.parametrize("dtype", LOW_PRECISION_DTYPES)
@pytest.mark.parametrize("executor", ["graph", "vm"])
def test_cpu_target_runs_low_precision_functions_through_numpy(dtype, executor):
    """C has no such types: functions touching one run the numpy reference."""
    x = relay.var("x", shape=(2, 3), dtype=dtype)
    y = relay.multiply(relay.cast(x, "float32"), relay.const(0.5))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.cast(y, dtype)))
    a = np.array([[1, 2, 3], [1, 0, 1]]).astype(dtype)
    with relay.transform.PassContext(opt_level=3):
        got = relay.create_executor(executor, mod, target="cpu").evaluate()(a)
    want = (a.astype("float32") * np.float32(0.5)).astype(dtype)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(got).astype("float32"), want.astype("float32"))


@pytest.mark.parametrize(("src", "mid"), [("bfloat16", "float32"), ("int4", "int8"),
                                          ("int8", "float8_e4m3fn"), ("float8_e5m2", "float16")])
def test_cast_chains_simplify_without_losing_values(src, mid):
    x = relay.var("x", shape=(4,), dtype=src)
    mod = relay.IRModule.from_expr(relay.Function(
        [x], relay.cast(relay.cast(x, mid), "float64")))
    a = np.array([1, -2, 3, 7]).astype(src)
    with relay.transform.PassContext(opt_level=3):
        got = relay.create_executor("graph", mod, target="cpu").evaluate()(a)
    np.testing.assert_array_equal(got, a.astype(mid).astype("float64"))
