"""``relay.sparse_fill_empty_rows``, ``relay.op.sparse_reshape``,
``relay.sparse_to_dense`` and ``relay.op.segment_sum`` under Relay's signatures: the
first gives a ``Tuple`` that unpacks into its three fields, the second a
``TupleWrapper``; ``sparse_to_dense``'s default 0 takes the values' dtype; and
``segment_sum`` with ``num_segments=None`` counts max(id) + 1 segments at run time
(``dyn.segment_sum``), with an int the static op (a C kernel)."""

import numpy as np

from relayir.tvm import relay
from relayir.tvm.relay import testing


def _vm(params, body, *args):
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(params, body)))
    return relay.create_executor("vm", mod=mod, target="llvm").evaluate()(*args)


def test_sparse_fill_empty_rows_is_a_tuple_of_three():
    ind = relay.var("i", shape=(relay.Any(), relay.Any()), dtype="int32")
    val = relay.var("v", shape=(relay.Any(),), dtype="int32")
    shape = relay.var("s", shape=(relay.Any(),), dtype="int32")
    default = relay.var("d", shape=(relay.Any(),), dtype="int32")
    z = relay.sparse_fill_empty_rows(ind, val, shape, default)
    a, b, c = testing.run_infer_type(z)
    assert (a.checked_type.dtype, b.checked_type.dtype, c.checked_type.dtype) == (
        "int32", "int32", "bool")
    out = _vm([ind, val, shape, default], z, np.array([[1, 0]], "int32"),
              np.array([5], "int32"), np.array([3, 2], "int32"), np.array([9], "int32"))
    np.testing.assert_array_equal(out[0].numpy(), [[0, 0], [1, 0], [2, 0]])
    np.testing.assert_array_equal(out[1].numpy(), [9, 5, 9])
    np.testing.assert_array_equal(out[2].numpy(), [True, False, True])


def test_sparse_reshape_is_a_tuple_wrapper():
    ind = relay.var("i", shape=(2, 2), dtype="int64")
    prev = relay.var("p", shape=(2,), dtype="int64")
    new = relay.var("n", shape=(1,), dtype="int64")
    w = relay.op.sparse_reshape(ind, prev, new)
    assert len(w) == 2
    out = _vm([ind, prev, new], w.astuple(), np.array([[0, 1], [1, 2]]), np.array([2, 3]),
              np.array([-1]))
    np.testing.assert_array_equal(out[0].numpy(), [[1], [5]])
    np.testing.assert_array_equal(out[1].numpy(), [6])


def test_segment_sum_counts_segments_at_run_time_without_num_segments():
    data = relay.var("d", shape=(3, 2), dtype="float32")
    ids = relay.var("s", shape=(3,), dtype="int32")
    values = (np.arange(6, dtype="float32").reshape(3, 2), np.array([2, 0, 2], "int32"))
    dyn = relay.op.segment_sum(data, ids)
    assert dyn.op.name == "dyn.segment_sum"
    np.testing.assert_array_equal(_vm([data, ids], dyn, *values).numpy(),
                                  [[2, 3], [0, 0], [4, 6]])
    static = relay.op.segment_sum(data, ids, 4)
    assert static.op.name == "segment_sum"
    assert testing.run_infer_type(static).checked_type == relay.TensorType((4, 2), "float32")
    np.testing.assert_array_equal(_vm([data, ids], static, *values).numpy(),
                                  [[2, 3], [0, 0], [4, 6], [0, 0]])


def test_sparse_to_dense_default_value_and_run_time_shape():
    """Relay's default 0 takes the values' dtype; an expression shape picks dyn."""
    ind = relay.var("i", shape=(2,), dtype="int64")
    val = relay.var("v", shape=(2,), dtype="float64")
    static = relay.sparse_to_dense(ind, [4], val)
    assert testing.run_infer_type(static).checked_type == relay.TensorType((4,), "float64")
    out = _vm([ind, val], static, np.array([3, 0]), np.array([1.5, 2.5]))
    np.testing.assert_array_equal(out.numpy(), [2.5, 0, 0, 1.5])
    shape = relay.var("s", shape=(1,), dtype="int64")
    dyn = relay.sparse_to_dense(ind, shape, val, relay.const(np.array(-1.0)))
    assert dyn.op.name == "dyn.sparse_to_dense"
    out = _vm([ind, val, shape], dyn, np.array([3, 0]), np.array([1.5, 2.5]), np.array([5]))
    np.testing.assert_array_equal(out.numpy(), [2.5, -1, -1, 1.5, -1])
