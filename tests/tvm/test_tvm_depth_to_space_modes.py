"""Relay's ``depth_to_space`` mode names: ``CDR`` is relayir's (ONNX's) ``CRD``, the
block offset as the fast part of the channel, checked against a numpy reshape."""

import numpy as np
import pytest

from relayir.tvm import relay
from relayir.tvm.topi import testing as ref


def _numpy(x, bs, mode):
    b, c, h, w = x.shape
    if mode == "DCR":
        y = x.reshape(b, bs, bs, c // (bs * bs), h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        y = x.reshape(b, c // (bs * bs), bs, bs, h, w).transpose(0, 1, 4, 2, 5, 3)
    return y.reshape(b, c // (bs * bs), h * bs, w * bs)


@pytest.mark.parametrize("mode", ["DCR", "CDR"])
def test_depth_to_space_takes_relays_mode_names(mode):
    x = np.arange(2 * 8 * 3 * 2, dtype="float32").reshape(2, 8, 3, 2)
    v = relay.var("x", shape=x.shape)
    mod = relay.transform.InferType()(relay.IRModule.from_expr(
        relay.Function([v], relay.nn.depth_to_space(v, 2, "NCHW", mode))))
    got = relay.create_executor("graph", mod=mod, target="llvm").evaluate()(x).numpy()
    np.testing.assert_array_equal(got, _numpy(x, 2, mode))
    np.testing.assert_array_equal(ref.depth_to_space_python(x, 2, mode=mode), _numpy(x, 2, mode))
