"""``relay.image.dilation2d`` (``relay/op/_dilation2d.py``) against a numpy loop, on the
graph executor (C) and the VM, in both layouts, with padding, strides and dilations."""

import numpy as np
import pytest

from relayir.errors import Error
from relayir.tvm import relay


def _dilation2d_ref(data, weight, strides, padding, dilations):
    """NCHW data, IHW weight; padding (top, left, bottom, right) with zeros."""
    (sh, sw), (dh, dw), (t, l, b, r) = strides, dilations, padding
    x = np.pad(data, ((0, 0), (0, 0), (t, b), (l, r)))
    c, kh, kw = weight.shape
    oh = (x.shape[2] - (kh - 1) * dh - 1) // sh + 1
    ow = (x.shape[3] - (kw - 1) * dw - 1) // sw + 1
    out = np.full(data.shape[:2] + (oh, ow), -np.inf, data.dtype)
    for i in range(kh):
        for j in range(kw):
            win = x[:, :, i * dh: i * dh + (oh - 1) * sh + 1: sh,
                    j * dw: j * dw + (ow - 1) * sw + 1: sw]
            out = np.maximum(out, win + weight[None, :, i, j, None, None])
    return out


@pytest.mark.parametrize("strides, padding, dilations", [
    ((1, 1), (0, 0, 0, 0), (1, 1)), ((2, 1), (1, 0, 2, 1), (1, 1)), ((1, 2), (1, 1, 1, 1), (2, 1)),
])
@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("kind", ["graph", "vm"])
def test_dilation2d_against_numpy(strides, padding, dilations, layout, kind):
    rng = np.random.default_rng(1)
    data = rng.standard_normal((2, 3, 7, 6)).astype("float32")
    data[0, 0, 0, 0] = -np.inf
    weight = rng.standard_normal((3, 3, 2)).astype("float32")
    want = _dilation2d_ref(data, weight, strides, padding, dilations)
    if layout == "NHWC":
        data, weight, want = (data.transpose(0, 2, 3, 1), weight.transpose(1, 2, 0),
                              want.transpose(0, 2, 3, 1))
    x = relay.var("x", shape=data.shape)
    w = relay.var("w", shape=weight.shape)
    y = relay.image.dilation2d(x, w, strides=strides, padding=padding, dilations=dilations,
                               data_layout=layout, kernel_layout="IHW" if layout == "NCHW"
                               else "HWI")
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x, w], y)))
    assert mod["main"].ret_type == relay.TensorType(want.shape)
    got = relay.create_executor(kind, mod=mod, target="llvm").evaluate()(data, weight).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_dilation2d_symbolic_batch_and_errors():
    x = relay.var("x", shape=("n", 10, 20, 20))
    w = relay.var("w", shape=(10, 8, 8))
    y = relay.testing.run_infer_type(relay.image.dilation2d(x, w))
    assert y.checked_type.shape[1:] == (10, 13, 13)
    with pytest.raises(Error, match="does not fit"):
        relay.image.dilation2d(x, relay.var("w", shape=(10, 30, 1)))
    with pytest.raises(Error, match="NCHW data with an IHW kernel"):
        relay.image.dilation2d(x, w, kernel_layout="HWI")
