"""Reductions whose answer numpy fixes beyond rounding: a float sum starts from +0.0 (so
a sum over no axes of -0.0 is +0.0, and so is an einsum's product without a contraction),
a cumsum starts from its first element (a prefix of -0.0 stays -0.0), and a float16
cumprod rounds each step to half (subnormal running products stay numpy's). The cpu
target gives numpy's bits."""

from __future__ import annotations

import numpy as np
import pytest

import relayir as relay
from relayir.ir.module import IRModule
from relayir.transform import PassContext


def _run(body, params, inputs, opt_level=0, target="cpu"):
    mod = IRModule.from_expr(relay.Function(params, body))
    with PassContext(opt_level=opt_level):
        return relay.create_executor("graph", mod=mod, target=target).evaluate()(*inputs)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("op", ["sum", "mean"])
def test_a_reduction_over_no_axes_of_negative_zero_is_positive_zero(op, dtype):
    x = relay.var("x", shape=(), dtype=dtype)
    data = np.array(-0.0, dtype)
    want = getattr(np, op)(data, dtype=dtype)
    got = np.asarray(_run(getattr(relay, op)(x, keepdims=True), [x], [data]))
    assert got.dtype == want.dtype and got == 0 and np.signbit(got) == np.signbit(want)
    # a scalar that is not a zero, NaN and the infinities pass through
    for value in (1.5, np.nan, np.inf, -np.inf):
        got = np.asarray(_run(getattr(relay, op)(x), [x], [np.array(value, dtype)]))
        np.testing.assert_equal(got, np.array(value, dtype))


def test_a_sum_over_an_axis_of_negative_zeros_is_numpys_zero():
    x = relay.var("x", shape=(3, 5), dtype="float32")
    data = np.full((3, 5), -0.0, "float32")
    got = _run(relay.sum(x, axis=[1]), [x], [data])
    assert not np.signbit(got).any() and not np.signbit(np.sum(data, axis=1)).any()


@pytest.mark.parametrize("opt_level", [0, 3])
def test_a_float16_cumprod_rounds_each_step_like_numpy(opt_level):
    # subnormal running products (6e-8 is float16's smallest): rounding once at the
    # end gave 1.2e-7 where numpy's per-step rounding keeps 6e-8
    data = np.array([5.96e-08, 1.224, -0.894, 1.0, -1.475, 2.672, np.inf, -0.0, np.nan,
                     3.0], "float16")
    x = relay.var("x", shape=data.shape, dtype="float16")
    got = _run(relay.cumprod(x), [x], [data], opt_level)
    with np.errstate(invalid="ignore"):
        want = np.cumprod(data)
    np.testing.assert_array_equal(got.view("uint16"), want.view("uint16"))


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_a_cumsum_keeps_numpys_zero_signs(dtype, exclusive, reverse):
    # numpy accumulates from the first element: a prefix of -0.0 stays -0.0; a sum that
    # starts from +0.0 (the C reduction) gave +0.0 (fuzz seed 130152)
    data = np.array([[-0.0, -0.0, 0.0, -0.0], [-0.0, 1.0, -1.0, -0.0],
                     [np.nan, -0.0, np.inf, -np.inf]], dtype)
    x = relay.var("x", shape=data.shape, dtype=dtype)
    body = relay.cumsum(x, axis=1, exclusive=exclusive, reverse=reverse)
    got = np.asarray(_run(body, [x], [data]))
    with np.errstate(invalid="ignore"):
        want = np.asarray(_run(body, [x], [data], target="numpy"))
    np.testing.assert_array_equal(got, want)
    numbers = ~np.isnan(want)  # a NaN's sign bit is no part of its value
    assert (np.signbit(got) == np.signbit(want))[numbers].all()


def test_an_einsum_without_a_contraction_sums_into_zero_like_numpy():
    # i,j->ij of -0.0 and 5 is +0.0 in numpy (products summed into a zeroed output); a
    # single operand (i->i) is a copy and keeps -0.0 (fuzz seed 130129)
    a = np.array([-0.0, 1.0, np.inf], "float32")
    b = np.array([5.0, -0.0], "float32")
    x, y = relay.var("x", shape=(3,)), relay.var("y", shape=(2,))
    for eq, args, vals in (("i,j->ij", [x, y], [a, b]), ("i->i", [x], [a])):
        got = np.asarray(_run(relay.einsum(args, eq), args, vals))
        with np.errstate(invalid="ignore"):
            want = np.einsum(eq, *vals)
        np.testing.assert_array_equal(got, want)
        assert (np.signbit(got) == np.signbit(want)).all(), eq
