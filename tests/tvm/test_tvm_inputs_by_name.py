"""Inputs by name, as TVM's executors take them: each parameter from the keyword of its
name (two parameters of one name take the same value, as TVM's unrolled LSTM relies
on), a keyword no parameter has is ignored, a missing one is an error naming it."""

import numpy as np
import pytest

from relayir.errors import Error
from relayir.tvm import relay


@pytest.mark.parametrize("kind", ["graph", "vm", "debug"])
def test_keywords_fill_parameters_by_name(kind):
    a, b = relay.var("data", shape=(2,)), relay.var("data", shape=(2,))
    w = relay.var("w", shape=(2,))
    mod = relay.IRModule.from_expr(relay.Function([a, b, w], (a + b) * w))
    run = relay.create_executor(kind, mod=mod, target="llvm").evaluate()
    x, y = np.array([1.0, 2.0], "float32"), np.array([3.0, -1.0], "float32")
    np.testing.assert_array_equal(run(data=x, w=y, data1=y).numpy(), (x + x) * y)
    np.testing.assert_array_equal(run(x, y, w=y).numpy(), (x + y) * y)
    with pytest.raises(Error, match="missing input w"):
        run(data=x)
