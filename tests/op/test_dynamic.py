"""The dynamic-shape ops: ``dyn.*`` (shape arguments as tensors) and ``shape_of``.

Each ``dyn`` op, with its shape inputs as run-time parameters, must give exactly what
numpy gives (and what the static op gives with those values as attributes); its type
has the rank the shape tensor's length says, with ``Any`` extents."""

from __future__ import annotations

import numpy as np
import pytest

import relayir as relay
from relayir.errors import Error
from relayir.ir.types import Any
from relayir.op import dynamic as D
from relayir.te.computes import REFERENCE_ONLY
from relayir.te.computes.common import COMPUTE
from relayir.te.computes.dynamic import VALUE_SHAPED

X = np.arange(6, dtype="float32").reshape(2, 3)


def _run(build, data, *shapes):
    """``build(x, *shape vars)`` with every shape input a run-time int64 parameter."""
    x = relay.var("x", shape=data.shape, dtype=data.dtype.name)
    vs = [relay.var(f"s{i}", shape=np.shape(s), dtype="int64") for i, s in enumerate(shapes)]
    mod = relay.transform.InferType()(relay.IRModule.from_expr(
        relay.Function([x, *vs], build(x, *vs))))
    out = relay.create_executor("debug", mod).evaluate()(
        data, *[np.asarray(s, "int64") for s in shapes])
    return mod["main"].body.checked_type, out


CASES = [
    ("reshape", lambda x, s: D.reshape(x, s), [[3, -1]], X.reshape(3, 2)),
    ("reshape-copy-zero", lambda x, s: D.reshape(x, s), [[0, 3]], X),
    ("broadcast_to", lambda x, s: D.broadcast_to(x, s), [[4, 2, 3]],
     np.broadcast_to(X, (4, 2, 3))),
    ("tile", lambda x, r: D.tile(x, r), [[2, 1, 2]], np.tile(X, (2, 1, 2))),
    ("strided_slice", lambda x, b, e, s: D.strided_slice(x, b, e, s), [[0, 2], [2, 0], [1, -1]],
     X[0:2, 2:0:-1]),
    ("strided_slice-axes", lambda x, b, e, s: D.strided_slice(x, b, e, s, axes=[1]),
     [[1], [100], [1]], X[:, 1:]),
    ("zeros", lambda x, s: D.zeros(s, "int32"), [[2, 0, 3]], np.zeros((2, 0, 3), "int32")),
    ("ones", lambda x, s: D.ones(s), [[4]], np.ones(4, "float32")),
    ("full", lambda x, s: D.full(relay.sum(x), s), [[2, 2]], np.full((2, 2), 15.0, "float32")),
    ("pad", lambda x, w: D.pad(x, w, relay.const(-1.0)), [[[1, 0], [0, 2]]],
     np.pad(X, ((1, 0), (0, 2)), constant_values=-1.0)),
    ("pad-reflect", lambda x, w: D.pad(x, w, relay.const(0.0), "reflect"), [[[1, 1], [2, 0]]],
     np.pad(X, ((1, 1), (2, 0)), mode="reflect")),
]


@pytest.mark.parametrize("name,build,shapes,want", CASES, ids=[c[0] for c in CASES])
def test_matches_numpy_with_run_time_shapes(name, build, shapes, want):
    ty, out = _run(build, X, *shapes)
    assert len(ty.shape) == want.ndim
    assert out.dtype == want.dtype
    np.testing.assert_array_equal(out, want)
    if name.startswith("strided_slice-axes"):
        assert ty.shape == (2, Any())  # the axes not sliced keep their extents
    elif not name.startswith("strided_slice"):
        assert all(d == Any() for d in ty.shape)


def test_arange_of_run_time_bounds():
    a, b = relay.var("a", shape=(), dtype="int64"), relay.var("b", shape=(), dtype="int64")
    mod = relay.transform.InferType()(relay.IRModule.from_expr(
        relay.Function([a, b], D.arange(a, b, relay.const(np.int64(3))))))
    assert mod["main"].body.checked_type == relay.TensorType((Any(),), "int64")
    out = relay.create_executor("debug", mod).evaluate()(np.int64(-2), np.int64(9))
    np.testing.assert_array_equal(out, np.arange(-2, 9, 3))


def test_shape_of_gives_the_run_time_shape():
    x = relay.var("x", shape=(Any(), 3))
    mod = relay.transform.InferType()(relay.IRModule.from_expr(
        relay.Function([x], D.shape_of(x, "int32"))))
    assert mod["main"].body.checked_type == relay.TensorType((2,), "int32")
    out = relay.create_executor("debug", mod).evaluate()(np.zeros((5, 3), "float32"))
    np.testing.assert_array_equal(out, np.asarray([5, 3], "int32"))


@pytest.mark.parametrize("build,shape_type,match", [
    (lambda x, s: D.reshape(x, s), ((2, 2), "int64"), "1-D integer tensor"),
    (lambda x, s: D.reshape(x, s), ((2,), "float32"), "1-D integer tensor"),
    (lambda x, s: D.broadcast_to(x, s), ((1,), "int64"), "cannot broadcast"),
    (lambda x, s: D.strided_slice(x, s, s, s, axes=[0, 1, 2]), ((3,), "int64"),
     "out of range"),
    (lambda x, s: D.pad(x, s, relay.const(0.0)), ((3, 2), "int64"), r"shape \(2, 2\)"),
])
def test_bad_shape_inputs_are_type_errors_naming_the_op(build, shape_type, match):
    x = relay.var("x", shape=(2, 3))
    s = relay.var("s", shape=shape_type[0], dtype=shape_type[1])
    with pytest.raises(Error, match=match):
        relay.transform.InferType()(relay.IRModule.from_expr(relay.Function([x, s],
                                                                             build(x, s))))


def test_every_dynamic_op_has_a_compute_or_is_reference_only_with_a_reason():
    for name in [*D.DYNAMIC, "shape_of"]:
        if name in VALUE_SHAPED:  # the static twin's compute, the shape from the values
            assert name in COMPUTE and name not in REFERENCE_ONLY
        else:
            assert REFERENCE_ONLY[name]


def test_argwhere_lists_the_nonzero_positions():
    c = relay.var("c", shape=(2, 3), dtype="bool")
    mod = relay.transform.InferType()(relay.IRModule.from_expr(
        relay.Function([c], D.argwhere(c))))
    assert mod["main"].body.checked_type == relay.TensorType((Any(), 2), "int64")
    cond = np.array([[True, False, True], [False, False, True]])
    out = relay.create_executor("debug", mod).evaluate()(cond)
    np.testing.assert_array_equal(out, np.argwhere(cond))


@pytest.mark.parametrize("is_sorted,axis", [(True, None), (False, None), (True, 0),
                                            (False, 1)])
def test_unique_matches_numpy(is_sorted, axis):
    data = np.array([[2, 1, 2], [0, 1, 0], [2, 1, 2]], "float32")
    x = relay.var("x", shape=data.shape)
    mod = relay.transform.InferType()(relay.IRModule.from_expr(
        relay.Function([x], D.unique(x, is_sorted=is_sorted, axis=axis))))
    values, first, inverse, counts = relay.create_executor("debug", mod).evaluate()(data)
    flat = data.reshape(-1) if axis is None else data
    want = np.unique(flat, return_index=True, return_inverse=True, return_counts=True,
                     axis=axis)
    if is_sorted:
        np.testing.assert_array_equal(values, want[0])
        np.testing.assert_array_equal(counts, want[3])
    else:  # first-occurrence order: the first indices increase
        assert np.all(np.diff(first) > 0)
    # the defining identities: values at first indices, values[inverse] rebuilds the data
    np.testing.assert_array_equal(np.take(flat, first, axis=axis or 0), values)
    np.testing.assert_array_equal(np.take(values, inverse, axis=axis or 0), flat)
    assert counts.sum() == flat.shape[axis or 0] and inverse.dtype == np.int64
