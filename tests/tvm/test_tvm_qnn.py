"""``relay.qnn`` is relayir's QNN dialect under Relay's signatures; what Relay offers
beyond relayir's arithmetic is refused by name; ``Legalize`` runs hooks registered from
Python (``TempOpAttr``, ``register_legalize``) once per call, and none of its own."""

import numpy as np
import pytest

import relayir
from relayir.tvm import relay
from relayir.tvm.error import NotInRelayirError
from relayir.tvm.relay.testing.temp_op_attr import TempOpAttr


def _run(expr, *args):
    mod = relay.transform.InferType()(relayir.IRModule.from_expr(
        relay.Function(relay.analysis.free_vars(expr), expr)))
    return relay.create_executor("debug", mod=mod, target="numpy").evaluate()(*args).numpy()


def test_qnn_constructors_take_relays_arguments():
    x = relay.var("x", shape=(1, 2, 4, 4), dtype="uint8")
    w = relay.var("w", shape=(3, 2, 1, 1), dtype="int8")
    y = relay.qnn.op.conv2d(x, w, relay.const(2), relay.const(0), relay.const(0.5),
                            relay.const(0.25), kernel_size=(1, 1), channels=3)
    y = relay.qnn.op.requantize(y, relay.const(0.125), relay.const(0), relay.const(1.0),
                                relay.const(0), out_dtype="int8")
    xs = np.random.randint(0, 255, (1, 2, 4, 4)).astype("uint8")
    ws = np.random.randint(-128, 127, (3, 2, 1, 1)).astype("int8")
    acc = np.einsum("nchw,oc->nohw", xs.astype(np.int64) - 2, ws[:, :, 0, 0].astype(np.int64))
    want = np.clip(np.rint(acc.astype(np.float32) * np.float32(0.125)), -128, 127)
    np.testing.assert_array_equal(_run(y, xs, ws), want.astype("int8"))
    assert relay.qnn.quantize is relay.qnn.op.quantize is relay.qnn.op.qnn.quantize


def test_dequantize_takes_a_float64_constant_scale_as_float32():
    """relay.const of a numpy float64 array is float64; Relay's dequantize takes it."""
    x = relay.var("x", shape=(1, 3), dtype="int8")
    y = relay.qnn.op.dequantize(x, relay.const(np.array([0.5, 1.0, 2.0])),
                                relay.const(np.array([0, 1, 2], "int32")), axis=1)
    assert y.args[1].data.dtype == np.float32
    np.testing.assert_array_equal(_run(y, np.array([[2, 3, 4]], "int8")), [[1.0, 2.0, 4.0]])


def test_unary_qnn_ops_are_quantized_float_ops_that_become_tables():
    """relay.qnn.op.sigmoid(x, s, z, os, oz) is quantize(sigmoid(dequantize(x))); the
    build's FakeQuantizationToInteger reads a table of its 256 values."""
    x = relay.var("x", shape=(256,), dtype="uint8")
    y = relay.qnn.op.sigmoid(x, relay.const(0.05), relay.const(128), relay.const(1 / 256),
                             relay.const(0))
    assert y.op.name == "qnn.quantize" and y.args[0].op.name == "sigmoid"
    mod = relay.transform.FakeQuantizationToInteger()(relay.transform.InferType()(
        relay.IRModule.from_expr(relay.Function([x], y))))
    assert "take" in mod.astext() and "sigmoid" not in mod.astext()
    xs = np.arange(256).astype("uint8")
    want = np.clip(np.rint(256 / (1 + np.exp(-0.05 * (xs - 128.0)))), 0, 255)
    assert np.abs(_run(y, xs).astype(int) - want).max() <= 1
    leaky = relay.qnn.op.leaky_relu(x, 0.5, relay.const(0.25), relay.const(100),
                                    relay.const(0.25), relay.const(100))
    got = _run(leaky, xs).astype(int)
    xi = xs.astype(int)
    np.testing.assert_array_equal(got, np.where(xi < 100, np.rint(100 + (xi - 100) * 0.5), xi))


def test_what_relayir_does_not_compute_is_refused_by_name():
    x = relay.var("x", shape=(4,), dtype="int32")
    one, zero = relay.const(1.0), relay.const(0)
    with pytest.raises(NotInRelayirError, match=r"requantize\(rounding='UPWARD'\)"):
        relay.qnn.op.requantize(x, one, zero, one, zero, rounding="UPWARD")
    with pytest.raises(NotInRelayirError, match="qnn.op.subtract"):
        relay.qnn.op.subtract(x, x, one, zero, one, zero, one, zero)
    with pytest.raises(NotInRelayirError, match="use_qat"):
        relay.transform.FakeQuantizationToInteger(use_qat=True)
    with pytest.raises(NotInRelayirError, match="FTVMAlterOpLayout"):
        TempOpAttr("nn.conv2d", "FTVMAlterOpLayout", lambda *a: None)


def test_legalize_runs_a_temporary_hook_once_per_call():
    x = relay.var("x", shape=(2, 3))
    calls = []

    def legalize(attrs, inputs, types):
        calls.append((dict(attrs), types[-1]))
        return relay.nn.relu(relay.add(inputs[0], relay.const(0.0)))

    f = relay.Function([x], relay.nn.relu(x))
    mod = relayir.IRModule.from_expr(f)
    with TempOpAttr("nn.relu", "FTVMLegalize", legalize):
        out = relay.transform.Legalize()(mod)
    assert len(calls) == 1 and calls[0][1] == relay.TensorType((2, 3))
    assert "add" in out.astext()
    assert relay.transform.Legalize()(mod).astext() == relay.transform.InferType()(
        mod).astext()  # the hook is gone after the block


def test_build_unpacks_as_relays_older_api(needs_cc):
    x = relay.var("x", shape=(2,))
    graph, lib, params = relay.build(relayir.IRModule.from_expr(relay.Function([x], x + x)))
    assert '"nodes"' in graph and params == {}
