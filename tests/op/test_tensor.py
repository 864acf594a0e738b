"""Elementwise/broadcast ops: type relation and reference value against numpy."""

import math

import numpy as np
import pytest

import relayir as relay
from relayir.testing.op_check import check_op, infer_op_type, rand

SHAPE_PAIRS = [((), ()), ((5,), (5,)), ((2, 3), (3,)), ((4, 1, 3), (2, 1)), ((7, 9), (1, 9))]


def _trunc_div(a, b):
    return (np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))).astype(a.dtype)


BINARY = {
    "add": lambda a, b: a + b,
    "subtract": lambda a, b: a - b,
    "multiply": lambda a, b: a * b,
    "divide": lambda a, b: a / b if a.dtype.kind == "f" else _trunc_div(a, b),
    "floor_divide": lambda a, b: np.floor(a / b) if a.dtype.kind == "f" else a // b,
    "mod": lambda a, b: np.fmod(a, b),
    "floor_mod": lambda a, b: np.mod(a, b),
    "power": lambda a, b: np.power(a, b),
    "maximum": np.maximum,
    "minimum": np.minimum,
}


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("shapes", SHAPE_PAIRS, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_binary(name, shapes, dtype):
    a = rand(shapes[0], dtype, seed=1)
    b = rand(shapes[1], dtype, seed=2, low=0.5 if dtype == "float32" else 1)
    if dtype == "int32":
        b = np.where(b == 0, 1, b).astype(dtype)
        if name == "power":
            a = np.clip(a, -3, 3).astype(dtype)
            b = np.clip(b, 0, 3).astype(dtype)
    if name == "power" and dtype == "float32":
        a = np.abs(a) + 0.1
    check_op(name, [a, b], BINARY[name](a, b).astype(dtype))


def test_integer_division_truncates_like_c():
    a = np.array([7, -7, 7, -7], "int32")
    b = np.array([2, 2, -2, -2], "int32")
    check_op("divide", [a, b], np.array([3, -3, -3, 3], "int32"))
    check_op("mod", [a, b], np.array([1, -1, 1, -1], "int32"))
    check_op("floor_divide", [a, b], np.array([3, -4, -4, 3], "int32"))
    check_op("floor_mod", [a, b], np.array([1, 1, -1, -1], "int32"))


COMPARE = {
    "equal": np.equal, "not_equal": np.not_equal, "less": np.less,
    "less_equal": np.less_equal, "greater": np.greater, "greater_equal": np.greater_equal,
}


@pytest.mark.parametrize("name", sorted(COMPARE))
@pytest.mark.parametrize("shapes", SHAPE_PAIRS[1:], ids=str)
def test_compare(name, shapes):
    a = rand(shapes[0], "int32", seed=3)
    b = rand(shapes[1], "int32", seed=4)
    check_op(name, [a, b], COMPARE[name](a, b))


@pytest.mark.parametrize("name,fn", [("logical_and", np.logical_and),
                                     ("logical_or", np.logical_or),
                                     ("logical_xor", np.logical_xor)])
def test_logical(name, fn):
    a, b = rand((3, 4), "bool", seed=1), rand((4,), "bool", seed=2)
    check_op(name, [a, b], fn(a, b))
    check_op("logical_not", [a], np.logical_not(a))
    with pytest.raises(relay.TypeInferenceError, match=f"{name}: expected bool"):
        infer_op_type(name, [a.astype("int32"), b.astype("int32")])


_erf = np.vectorize(math.erf)

UNARY_FLOAT = {
    "exp": np.exp, "log": np.log, "log2": np.log2, "log10": np.log10, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x), "tanh": np.tanh, "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "erf": _erf, "floor": np.floor, "ceil": np.ceil, "round": np.round, "trunc": np.trunc,
    "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "sinh": np.sinh, "cosh": np.cosh, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
}
POSITIVE_ONLY = {"log", "log2", "log10", "sqrt", "rsqrt"}
# inputs inside the function's domain: (low, high)
DOMAIN = {"asin": (-0.99, 0.99), "acos": (-0.99, 0.99), "atanh": (-0.99, 0.99),
          "acosh": (1.0, 4.0)}


@pytest.mark.parametrize("name", sorted(UNARY_FLOAT))
@pytest.mark.parametrize("shape", [(), (7,), (3, 5, 2)], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unary_float(name, shape, dtype):
    low, high = DOMAIN.get(name, (0.1 if name in POSITIVE_ONLY else -3.0, 3.0))
    x = rand(shape, dtype, seed=5, low=low, high=high)
    expected = np.asarray(UNARY_FLOAT[name](x.astype("float64"))).astype(dtype)
    check_op(name, [x], expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(UNARY_FLOAT))
def test_unary_float_rejects_ints(name):
    with pytest.raises(relay.TypeInferenceError, match=f"{name}: data must have a float dtype"):
        infer_op_type(name, [np.zeros(3, "int32")])


@pytest.mark.parametrize("name,fn", [("abs", np.abs), ("negative", np.negative),
                                     ("sign", np.sign), ("copy", np.copy)])
@pytest.mark.parametrize("dtype", ["float32", "int32", "int64"])
def test_unary_any(name, fn, dtype):
    x = rand((4, 3), dtype, seed=6)
    check_op(name, [x], fn(x))


@pytest.mark.parametrize("name", ["sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh",
                                  "atanh"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unary_float_kernel_on_cpu(name, dtype):
    """The generated C (libm's function) agrees with the numpy reference."""
    low, high = DOMAIN.get(name, (-3.0, 3.0))
    x = rand((3, 17), dtype, seed=11, low=low, high=high)
    v = relay.var("x", shape=x.shape, dtype=dtype)
    mod = relay.IRModule.from_expr(relay.Function([v], getattr(relay, name)(v)))
    out = relay.create_executor("graph", mod=mod, target="cpu").evaluate()(x)
    expected = np.asarray(UNARY_FLOAT[name](x.astype("float64"))).astype(dtype)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def test_isnan_isinf():
    x = np.array([1.0, np.nan, np.inf, -np.inf], "float32")
    check_op("isnan", [x], np.isnan(x))
    check_op("isinf", [x], np.isinf(x))
    check_op("isfinite", [x], np.isfinite(x))


def test_sigmoid_is_stable_for_large_inputs():
    x = np.array([-1000.0, 0.0, 1000.0], "float32")
    check_op("sigmoid", [x], np.array([0.0, 0.5, 1.0], "float32"))


def test_binary_shape_error_names_both_types():
    with pytest.raises(relay.TypeInferenceError) as err:
        infer_op_type("multiply", [np.zeros((2, 3), "float32"), np.zeros((2,), "float32")])
    assert "multiply: shapes do not broadcast" in str(err.value)


def test_wrong_number_of_inputs():
    with pytest.raises(relay.OpError, match="add takes 2 inputs"):
        relay.op.call("add", [relay.var("x")])
    with pytest.raises(relay.OpError, match="did you mean"):
        relay.get_op("nn.dence")
