"""int8 layer chains through the cpu pipeline at opt levels 1-3 (NHWC int8 convolutions from 2,
requantized as they store) give the reference's integers exactly: qnn.conv2d (one group
or depthwise, strided, padded, per-channel weights, nonzero zero points) → requantize
to uint8 → the next layer, on every executor, against the numpy target."""

from __future__ import annotations

import numpy as np
import pytest

import relayir as relay
from relayir import qnn

R = np.random.default_rng(3)

# (channels in, out, kernel, stride, padding, depthwise, zero point of the first, size)
LAYERS = [
    (3, 8, 3, 2, 1, False, 126, 13),   # a stem: 3 channels, padded to 4
    (8, 8, 3, 1, 1, True, 0, 7),       # depthwise after it
    (8, 20, 1, 1, 0, False, 37, 7),    # a 1x1: read in place
    (20, 20, 3, 2, 1, True, 200, 7),   # strided depthwise
    (20, 12, 3, 1, 0, False, 5, 4),    # unpadded 3x3: read in place
]


def _layer(x, cin, cout, k, s, p, depthwise, zx, scale_in):
    w = R.integers(-127, 128, (cout, 1 if depthwise else cin, k, k)).astype("int8")
    ws = R.uniform(0.002, 0.02, cout).astype("float32")
    acc = qnn.conv2d(x, relay.const(w), relay.const(np.int32(zx)),
                     relay.const(np.zeros(cout, "int32")), relay.const(np.float32(scale_in)),
                     relay.const(ws), strides=(s, s), padding=(p, p),
                     groups=cout if depthwise else 1, channels=cout, kernel_size=(k, k))
    bias = relay.const(R.integers(-2000, 2000, cout).astype("int32"))
    acc = relay.nn.bias_add(acc, bias)
    out_scale, out_zp = np.float32(R.uniform(0.02, 0.1)), int(R.integers(0, 60))
    y = qnn.requantize(acc, relay.const((np.float32(scale_in) * ws).astype("float32")),
                       relay.const(np.zeros(cout, "int32")), relay.const(out_scale),
                       relay.const(np.int32(out_zp)), axis=1, out_dtype="uint8")
    return y, out_scale, out_zp


def _model():
    size = LAYERS[0][-1]
    x = relay.var("x", shape=(1, 3, size, size), dtype="uint8")
    y, scale, zp = x, np.float32(0.05), LAYERS[0][6]
    for cin, cout, k, s, p, dw, zx, _ in LAYERS:
        # a layer's input zero point is the previous layer's output one, as in a real
        # chain (the table's for the first)
        y, scale, zp = _layer(y, cin, cout, k, s, p, dw, zx if y is x else zp, scale)
    return relay.IRModule.from_expr(relay.Function([x], y))


@pytest.mark.parametrize("executor,level", [("graph", 3), ("vm", 3), ("aot", 3),
                                            ("graph", 2), ("graph", 1)])
def test_an_int8_chain_equals_the_reference(executor, level):
    mod = _model()
    x = R.integers(0, 256, (1, 3, 13, 13)).astype("uint8")
    want = relay.create_executor("debug", mod=mod, target="numpy").evaluate()(x)
    with relay.transform.PassContext(opt_level=level):
        got = relay.create_executor(executor, mod=mod, target="cpu").evaluate()(x)
        text = relay.transform.optimize(relay.transform.InferType()(mod), fuse=False,
                                        target=relay.backend.target.Target("cpu")).astext()
    # every layer requantized in its routine, from the default opt level
    assert text.count("_requant(") == (len(LAYERS) if level >= 2 else 0)
    assert got.dtype == np.uint8 and np.array_equal(got, want)
