"""Inputs typed from the attributes (Relay's relations assign them): an unannotated
weight, bias or scale gets the type the data and the op's attributes imply."""

import numpy as np
import pytest

import relayir as relay
from relayir.errors import TypeInferenceError
from relayir.ir import TensorType


def _typed(out, *params):
    f = relay.Function(list(params), out)
    return relay.transform.InferType()(relay.IRModule.from_expr(f))["main"]


def _param_types(fn):
    return [p.checked_type for p in fn.params]


@pytest.mark.parametrize("layout, kernel, want", [
    ("NCHW", "OIHW", (8, 2, 3, 1)), ("NHWC", "HWIO", (3, 1, 2, 8)), ("NHWC", "OHWI", (8, 3, 1, 2)),
])
def test_conv2d_weight_from_channels_and_kernel_size(layout, kernel, want):
    shape = (1, 4, 9, 7) if layout == "NCHW" else (1, 9, 7, 4)
    x, w = relay.var("x", shape=shape), relay.var("w")
    fn = _typed(relay.nn.conv2d(x, w, channels=8, kernel_size=(3, 1), groups=2,
                                data_layout=layout, kernel_layout=kernel), x, w)
    assert _param_types(fn)[1] == TensorType(want, "float32")


def test_conv1d_conv3d_and_transposed_weights():
    x, w = relay.var("x", shape=(2, 6, 10), dtype="float16"), relay.var("w")
    fn = _typed(relay.nn.conv1d(x, w, channels=4, kernel_size=3), x, w)
    assert _param_types(fn)[1] == TensorType((4, 6, 3), "float16")
    x, w = relay.var("x", shape=(1, 3, 4, 5, 6)), relay.var("w")
    fn = _typed(relay.nn.conv3d(x, w, channels=2, kernel_size=(1, 2, 3)), x, w)
    assert _param_types(fn)[1] == TensorType((2, 3, 1, 2, 3), "float32")
    x, w = relay.var("x", shape=(1, 4, 5, 5)), relay.var("w")
    fn = _typed(relay.nn.conv2d_transpose(x, w, channels=6, kernel_size=(2, 2), groups=2), x, w)
    assert _param_types(fn)[1] == TensorType((4, 3, 2, 2), "float32")  # IOHW: (C, channels / g)


def test_dense_and_matmul_weights_from_units():
    x, w = relay.var("x", shape=(5, 3)), relay.var("w")
    assert _param_types(_typed(relay.nn.dense(x, w, units=7), x, w))[1] == TensorType((7, 3))
    for ta, tb, want in ((False, False, (3, 7)), (False, True, (7, 3)), (True, False, (5, 7))):
        w = relay.var("w")
        fn = _typed(relay.nn.matmul(x, w, units=7, transpose_a=ta, transpose_b=tb), x, w)
        assert _param_types(fn)[1] == TensorType(want)


def test_channel_vectors_and_symbolic_dims():
    x = relay.var("x", shape=("n", "c", 4, 4))
    b, a = relay.var("b"), relay.var("a")
    fn = _typed(relay.nn.prelu(relay.nn.bias_add(x, b), a, axis=1), x, b, a)
    c = x.type_annotation.shape[1]
    assert _param_types(fn)[1:] == [TensorType((c,))] * 2
    x = relay.var("x", shape=(2, 3, 5))
    g, be, m, v = (relay.var(n) for n in "gbmv")
    out = relay.nn.batch_norm(x, g, be, m, v, axis=2)[0]
    assert _param_types(_typed(out, x, g, be, m, v))[1:] == [TensorType((5,))] * 4
    g, be = relay.var("g"), relay.var("b")
    fn = _typed(relay.nn.layer_norm(x, g, be, axis=-1), x, g, be)
    assert _param_types(fn)[1:] == [TensorType((5,))] * 2


def test_inferred_weights_run_against_numpy():
    x, w, b = relay.var("x", shape=(2, 3)), relay.var("w"), relay.var("b")
    mod = relay.transform.InferType()(relay.IRModule.from_expr(
        relay.Function([x, w, b], relay.nn.bias_add(relay.nn.dense(x, w, units=4), b, axis=1))))
    xs, ws, bs = (np.random.rand(*s).astype("float32") for s in ((2, 3), (4, 3), (4,)))
    out = relay.create_executor("debug", mod=mod).evaluate()(xs, ws, bs)
    np.testing.assert_allclose(np.asarray(out), xs @ ws.T + bs, rtol=1e-5)


def test_without_the_attributes_the_weight_stays_unknown():
    x, w = relay.var("x", shape=(1, 3, 8, 8)), relay.var("w")
    with pytest.raises(TypeInferenceError, match="cannot infer the type in nn.conv2d"):
        _typed(relay.nn.conv2d(x, w, kernel_size=(3, 3)), x, w)  # no channels


def test_an_implied_type_that_contradicts_another_use_is_an_error():
    x, w = relay.var("x", shape=(1, 3, 8, 8)), relay.var("w")
    y = relay.nn.conv2d(x, w, channels=4, kernel_size=(3, 3))
    with pytest.raises(TypeInferenceError):  # w also used as a (4, 3, 1, 1) kernel
        _typed(relay.Tuple([y, relay.nn.conv2d(x, w, channels=4, kernel_size=(1, 1))]), x, w)
