"""``relay.analysis`` counters: ``get_total_mac_number`` (convolutions, dense, matmuls),
``count_layers`` (the deepest chain, not the total) and ``list_op_freqs``."""

from __future__ import annotations

import relayir.tvm as tvm
from relayir.tvm import relay
from relayir.tvm.relay import analysis


def typed(body, *params):
    mod = relay.transform.InferType()(tvm.IRModule.from_expr(relay.Function(list(params), body)))
    return mod


def test_macs_of_grouped_and_strided_convolutions_in_either_layout():
    x = relay.var("x", shape=(1, 8, 9, 9))
    w = relay.var("w", shape=(16, 4, 3, 3))
    conv = relay.nn.conv2d(x, w, channels=16, kernel_size=(3, 3), strides=(2, 2), groups=2)
    # out (1, 16, 4, 4): each element takes 4 input channels x 9 taps
    assert analysis.get_total_mac_number(typed(conv, x, w)["main"]) == 16 * 16 * 4 * 9
    xh = relay.var("xh", shape=(1, 9, 9, 8))
    wh = relay.var("wh", shape=(3, 3, 8, 16))
    nhwc = relay.nn.conv2d(xh, wh, channels=16, kernel_size=(3, 3), data_layout="NHWC",
                           kernel_layout="HWIO")
    assert analysis.get_total_mac_number(typed(nhwc, xh, wh)["main"]) == 49 * 16 * 8 * 9


def test_macs_of_dense_and_batch_matmul_and_nothing_for_other_ops():
    a = relay.var("a", shape=(5, 7))
    b = relay.var("b", shape=(3, 7))
    x = relay.var("x", shape=(2, 5, 7))
    y = relay.var("y", shape=(2, 3, 7))
    body = relay.Tuple([relay.nn.dense(a, b), relay.nn.batch_matmul(x, y),
                        relay.nn.relu(a)])
    assert analysis.get_total_mac_number(typed(body, a, b, x, y)["main"]) == 105 + 2 * 105


def test_layers_count_the_deepest_chain_and_op_freqs_count_every_call():
    x = relay.var("x", shape=(1, 4, 8, 8))
    w = relay.var("w", shape=(4, 4, 3, 3))

    def conv(e):
        return relay.nn.conv2d(e, w, channels=4, kernel_size=(3, 3), padding=(1, 1))

    deep = conv(relay.nn.relu(conv(conv(x))))
    body = relay.add(deep, conv(x))  # a parallel branch of depth 1
    mod = typed(body, x, w)
    assert analysis.count_layers(mod, valid_ops=["nn.conv2d"]) == 3
    assert analysis.count_layers(mod, valid_ops=["nn.relu", "add"]) == 2
    assert analysis.list_op_freqs(mod) == {"nn.conv2d": 4, "nn.relu": 1, "add": 1}
    fused = relay.transform.FuseOps(fuse_opt_level=3)(mod)
    assert analysis.list_op_freqs(fused) == {"nn.conv2d": 4, "nn.relu": 1, "add": 1}
