"""A scatter whose update list is empty leaves the data (the default) as it is, and its
kernel reads nothing of the empty arrays: the 'update' mode's last-match argmax pointed
at position 0 of an empty index array (found by the fuzzer, seed 9144)."""

from __future__ import annotations

import numpy as np

import relayir as relay
from relayir.ir.op import call


def _run(body, args, values, executor="graph"):
    mod = relay.IRModule.from_expr(relay.Function(args, body))
    want = relay.create_executor("debug", mod=mod, target="numpy").evaluate()(*values)
    got = relay.create_executor(executor, mod=mod, target="cpu").evaluate()(*values)
    return got, want


def test_sparse_to_dense_without_entries_is_all_default():
    v = relay.var("v", shape=(0,), dtype="int8")
    y = call("sparse_to_dense", [relay.const(np.zeros((0, 3), "int32")), v,
                                 relay.const(np.int8(1))], output_shape=(2, 2, 4))
    for executor in ("graph", "vm", "aot"):
        got, want = _run(y, [v], [np.zeros((0,), "int8")], executor)
        assert np.array_equal(want, np.ones((2, 2, 4), "int8"))
        assert np.array_equal(got, want), executor


def test_scatter_nd_of_no_updates_keeps_the_data():
    x = relay.var("x", shape=(3, 4))
    u = relay.var("u", shape=(0, 4))
    y = call("scatter_nd", [x, relay.const(np.zeros((1, 0), "int64")), u], mode="update")
    data = np.arange(12, dtype="float32").reshape(3, 4)
    got, want = _run(y, [x, u], [data, np.zeros((0, 4), "float32")])
    assert np.array_equal(want, data) and np.array_equal(got, data)
