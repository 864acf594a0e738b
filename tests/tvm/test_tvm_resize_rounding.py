"""``relayir.tvm``'s ``relay.image.resize*``: a nearest-neighbour resize given no
``rounding_method`` rounds as Relay's does (down, or half up with ``align_corners``),
while relayir's own op keeps rounding to nearest."""

from __future__ import annotations

import numpy as np
import pytest

import relayir
from relayir.tvm import relay


def _run(expr, x):
    mod = relayir.IRModule.from_expr(relayir.Function([expr.args[0]], expr))
    return np.asarray(relayir.create_executor("debug", mod=mod).evaluate()(x))


@pytest.mark.parametrize("mode, want", [("asymmetric", [0, 0, 1, 1, 2]),
                                        ("align_corners", [0, 1, 1, 2, 2])])
def test_relays_default_rounding(mode, want):
    x = np.arange(3, dtype="float32").reshape(1, 1, 3)
    data = relayir.var("x", shape=(1, 1, 3))
    got = _run(relay.image.resize1d(data, (5,), method="nearest_neighbor",
                                    coordinate_transformation_mode=mode), x)
    # asymmetric: in = out * 3/5 -> 0, .6, 1.2, 1.8, 2.4, floored; align_corners:
    # in = out * 2/4 -> 0, .5, 1, 1.5, 2, half up
    np.testing.assert_array_equal(got.reshape(-1), want)
    own = _run(relayir.image.resize1d(data, (5,), method="nearest_neighbor",
                                      coordinate_transformation_mode="asymmetric"), x)
    np.testing.assert_array_equal(own.reshape(-1), [0, 1, 1, 2, 2])  # relayir: nearest
