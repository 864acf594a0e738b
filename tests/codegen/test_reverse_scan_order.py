"""A reverse ``cumprod`` / ``cumsum`` runs from the end of the axis, as numpy's does (flip,
scan, flip): the order decides a float product's underflow and ``inf * 0`` (fuzz seed
51118: ``[-inf, 5e-324, 5e-324]`` reversed gives NaN first, not -inf) and a sum's
rounding. The cpu target against the numpy reference, exactly."""

import numpy as np
import pytest

import relayir as relay
from relayir.codegen import has_compiler

pytestmark = pytest.mark.skipif(not has_compiler(), reason="no C compiler on this machine")


def _both(op, x: np.ndarray, **attrs):
    v = relay.var("x", shape=x.shape, dtype=x.dtype.name)
    mod = relay.IRModule.from_expr(relay.Function([v], op(v, **attrs)))
    got = relay.create_executor("graph", mod=mod, target="cpu").evaluate()(x)
    want = relay.create_executor("debug", mod=mod).evaluate()(x)
    return got, want


@pytest.mark.parametrize("dtype, tiny", [("float64", 5e-324), ("float32", 1e-45)])
@pytest.mark.parametrize("exclusive", [False, True])
def test_reverse_cumprod_multiplies_from_the_end(dtype, tiny, exclusive):
    x = np.array([[-np.inf, tiny, tiny], [2.0, np.inf, 0.0]], dtype)
    with np.errstate(invalid="ignore", over="ignore", under="ignore"):
        got, want = _both(relay.cumprod, x, axis=1, reverse=True, exclusive=exclusive)
    np.testing.assert_array_equal(got, want)
    if not exclusive:
        assert np.isnan(got[0, 0]) and got[0, 1] == 0


def test_reverse_cumsum_adds_from_the_end():
    x = np.array([1e16, 1.0, -1e16, 1.0], "float64")
    got, want = _both(relay.cumsum, x, axis=0, reverse=True)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(want, np.flip(np.cumsum(np.flip(x))))
