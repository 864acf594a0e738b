"""sparse_fill_empty_rows, sparse_reshape, sparse_to_dense / dyn.sparse_to_dense
(``op/sparse.py``) and segment_sum / dyn.segment_sum (``op/scatter.py``,
``op/dynamic.py``) against hand-computed values,
on the reference interpreter and on the VM with the cpu target (static and ``?``
input shapes), and the errors a bad input raises."""

from __future__ import annotations

import numpy as np
import pytest

import relayir as relay
from relayir.errors import Error, TypeInferenceError
from relayir.ir.types import Any
from relayir.op import dynamic as D
from relayir.op import sparse as S
from relayir.op.scatter import segment_sum
from relayir.te.computes import REFERENCE_ONLY
from relayir.te.computes.common import COMPUTE


def _vars(values, dynamic: bool):
    return [relay.var(f"a{k}", shape=(Any(),) * v.ndim if dynamic else v.shape,
                      dtype=v.dtype.name) for k, v in enumerate(values)]


def _run(build, values, dynamic=False, executor="vm"):
    """``build(*vars)`` run on ``values``: the VM (cpu target) or the reference."""
    params = _vars(values, dynamic)
    mod = relay.transform.InferType()(relay.IRModule.from_expr(
        relay.Function(params, build(*params))))
    if executor == "vm":
        vm = relay.vm.VirtualMachine(relay.vm.compile(mod, target="cpu"))
        out = vm.invoke("main", *values)
    else:
        out = relay.create_executor("debug", mod).evaluate()(*values)
    return out if isinstance(out, (list, tuple)) else [out]


def _i(rows, dtype="int64"):
    return np.asarray(rows, dtype=dtype)


# ---------------------------------------------------------------- sparse_fill_empty_rows

FILL = [
    # TVM's docstring example: rows 1 and 4 empty (one inside, one at the end)
    ("inside-and-end", [[0, 1], [0, 3], [2, 0], [3, 1]], [1, 2, 3, 4], [5, 6], 10,
     [[0, 1], [0, 3], [1, 0], [2, 0], [3, 1], [4, 0]], [1, 2, 10, 3, 4, 10],
     [0, 1, 0, 0, 1]),
    ("empty-at-start", [[2, 2], [3, 0]], [7, 8], [4, 3], -1,
     [[0, 0], [1, 0], [2, 2], [3, 0]], [-1, -1, 7, 8], [1, 1, 0, 0]),
    ("no-empty-rows", [[0, 0], [1, 1], [1, 2]], [5, 6, 7], [2, 3], 0,
     [[0, 0], [1, 1], [1, 2]], [5, 6, 7], [0, 0]),
    ("no-values", np.zeros((0, 3)), [], [3, 2, 2], 9,
     [[0, 0, 0], [1, 0, 0], [2, 0, 0]], [9, 9, 9], [1, 1, 1]),
    ("one-dim", [[1], [2]], [7, 8], [5], 4, [[0], [1], [2], [3], [4]], [4, 7, 8, 4, 4],
     [1, 0, 0, 1, 1]),
]


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dyn"])
@pytest.mark.parametrize("dtype", ["int64", "int32"])
@pytest.mark.parametrize("case", FILL, ids=[c[0] for c in FILL])
def test_sparse_fill_empty_rows(case, dtype, dynamic):
    _, ind, val, shape, default, want_ind, want_val, want_empty = case
    values = [_i(ind, dtype).reshape(-1, len(shape)), _i(val, dtype), _i(shape, dtype),
              _i([default], dtype)]
    got = _run(S.sparse_fill_empty_rows, values, dynamic)
    np.testing.assert_array_equal(got[0], _i(want_ind, dtype).reshape(-1, len(shape)))
    np.testing.assert_array_equal(got[1], _i(want_val, dtype))
    np.testing.assert_array_equal(got[2], np.asarray(want_empty, dtype=bool))
    assert [g.dtype.name for g in got] == [dtype, dtype, "bool"]


def test_sparse_fill_empty_rows_type():
    ind = relay.var("i", shape=(4, 2), dtype="int32")
    val = relay.var("v", shape=(4,), dtype="float32")
    shape = relay.var("s", shape=(2,), dtype="int32")
    default = relay.var("d", shape=(), dtype="float32")
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(
        [ind, val, shape, default], S.sparse_fill_empty_rows(ind, val, shape, default))))
    fields = mod["main"].body.checked_type.fields
    assert [(f.shape, f.dtype) for f in fields] == [
        ((Any(), 2), "int32"), ((Any(),), "float32"), ((Any(),), "bool")]
    assert "sparse_fill_empty_rows" in REFERENCE_ONLY


@pytest.mark.parametrize("types, message", [
    ([((4,), "int64"), ((4,), "int64"), ((1,), "int64"), ((1,), "int64")], "2-D"),
    ([((4, 2), "float32"), ((4,), "int64"), ((2,), "int64"), ((1,), "int64")], "integer"),
    ([((4, 2), "int64"), ((3,), "int64"), ((2,), "int64"), ((1,), "int64")], "one row"),
    ([((4, 2), "int64"), ((4,), "int64"), ((3,), "int64"), ((1,), "int64")], "one column"),
    ([((4, 2), "int64"), ((4,), "int64"), ((2,), "int64"), ((1,), "int32")], "dtype"),
    ([((4, 2), "int64"), ((4,), "int64"), ((2,), "int64"), ((2,), "int64")], "1-element"),
])
def test_sparse_fill_empty_rows_bad_types(types, message):
    args = [relay.var(f"a{k}", shape=s, dtype=d) for k, (s, d) in enumerate(types)]
    with pytest.raises(TypeInferenceError, match=message) as info:
        relay.transform.InferType()(relay.IRModule.from_expr(
            relay.Function(args, S.sparse_fill_empty_rows(*args))))
    assert "sparse_fill_empty_rows" in str(info.value)


@pytest.mark.parametrize("ind, message", [
    ([[2, 0], [0, 1]], "sorted ascending"),
    ([[0, 0], [5, 1]], "outside"),
])
def test_sparse_fill_empty_rows_bad_values(ind, message):
    values = [_i(ind), _i([1, 2]), _i([3, 3]), _i([0])]
    with pytest.raises(Error, match=message):
        _run(S.sparse_fill_empty_rows, values, executor="debug")


# ---------------------------------------------------------------- sparse_reshape

RESHAPE = [
    # TVM's docstring example: one -1, inferred as 4
    ("infer", [[0, 0, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0], [1, 2, 3]], [2, 3, 6], [9, -1],
     [[0, 0], [0, 1], [1, 2], [4, 2], [8, 1]], [9, 4]),
    ("infer-leading", [[0, 1], [2, 3]], [3, 6], [-1, 2], [[0, 1], [7, 1]], [9, 2]),
    # flat positions 100, 4100, 1020 of a (250, 40) tensor
    ("no-infer", [[0, 100], [200, 100], [50, 20]], [500, 20], [250, 40],
     [[2, 20], [102, 20], [25, 20]], [250, 40]),
    ("same-shape", [[1, 2], [0, 0]], [2, 3], [2, 3], [[1, 2], [0, 0]], [2, 3]),
    # the same shape after inference: indices unchanged, even outside it (TVM's kernel)
    ("same-shape-outside", [[0, 100], [3, 40]], [500, 20], [500, -1], [[0, 100], [3, 40]],
     [500, 20]),
    ("more-axes", [[5], [11]], [12], [2, 3, 2], [[0, 2, 1], [1, 2, 1]], [2, 3, 2]),
    ("no-values", np.zeros((0, 2)), [3, 6], [-1, 2], np.zeros((0, 2)), [9, 2]),
]


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dyn"])
@pytest.mark.parametrize("dtype", ["int64", "int32"])
@pytest.mark.parametrize("case", RESHAPE, ids=[c[0] for c in RESHAPE])
def test_sparse_reshape(case, dtype, dynamic):
    _, ind, prev, new, want_ind, want_shape = case
    values = [_i(ind, dtype).reshape(-1, len(prev)), _i(prev, dtype), _i(new, dtype)]
    got = _run(S.sparse_reshape, values, dynamic)
    np.testing.assert_array_equal(got[0], _i(want_ind, dtype).reshape(-1, len(new)))
    np.testing.assert_array_equal(got[1], _i(want_shape, dtype))
    assert [g.dtype.name for g in got] == [dtype, dtype]


def test_sparse_reshape_type():
    ind = relay.var("i", shape=(7, 3), dtype="int32")
    prev = relay.var("p", shape=(3,), dtype="int32")
    new = relay.var("n", shape=(2,), dtype="int64")
    mod = relay.transform.InferType()(relay.IRModule.from_expr(
        relay.Function([ind, prev, new], S.sparse_reshape(ind, prev, new))))
    fields = mod["main"].body.checked_type.fields
    assert [(f.shape, f.dtype) for f in fields] == [((7, 2), "int32"), ((2,), "int64")]
    with pytest.raises(TypeInferenceError, match="one column per axis of prev_shape"):
        bad = relay.var("b", shape=(4,), dtype="int32")
        relay.transform.InferType()(relay.IRModule.from_expr(
            relay.Function([ind, bad, new], S.sparse_reshape(ind, bad, new))))


@pytest.mark.parametrize("new, message", [
    ([-1, -1], "one -1"),
    ([4, 5], "holds 20 elements but prev_shape"),
    ([0, -1], "cannot infer"),
    ([-2, 9], "one -1"),
])
def test_sparse_reshape_bad_shapes(new, message):
    values = [_i([[0, 1]]), _i([3, 6]), _i(new)]
    with pytest.raises(Error, match=message) as info:
        _run(S.sparse_reshape, values, executor="debug")
    assert "sparse_reshape" in str(info.value)


# ---------------------------------------------------------------- segment_sum

DATA = np.array([[1, 2, 3, 4], [4, -3, 2, -1], [5, 6, 7, 8]], dtype="float32")


@pytest.mark.parametrize("ids, n, want", [
    ([0, 0, 1], 2, [[5, -1, 5, 3], [5, 6, 7, 8]]),
    ([2, 0, 0], 3, [[9, 3, 9, 7], [0, 0, 0, 0], [1, 2, 3, 4]]),
    ([1, 1], 3, [[0, 0, 0, 0], [5, -1, 5, 3], [0, 0, 0, 0]]),  # fewer ids than rows
])
@pytest.mark.parametrize("executor", ["vm", "debug"])
def test_segment_sum(ids, n, want, executor):
    got = _run(lambda d, s: segment_sum(d, s, n), [DATA, _i(ids, "int32")],
               executor=executor)[0]
    np.testing.assert_array_equal(got, np.asarray(want, "float32"))


def test_segment_sum_has_a_c_compute():
    assert "segment_sum" in COMPUTE and "segment_sum" not in REFERENCE_ONLY
    d = relay.var("d", shape=(6, 4, 5), dtype="float64")
    s = relay.var("s", shape=(6,), dtype="int64")
    mod = relay.IRModule.from_expr(relay.Function([d, s], segment_sum(d, s, 4)))
    lib = relay.build(mod, target="cpu")
    assert "segment_sum" in lib.get_lib().get_source()
    data = np.random.default_rng(0).random((6, 4, 5))
    ids = np.array([2, 0, 1, 0, 3, 2])
    m = relay.graph_executor.GraphModule(lib)
    m.set_input("d", data)
    m.set_input("s", ids)
    m.run()
    want = np.zeros((4, 4, 5))
    np.add.at(want, ids, data)
    np.testing.assert_allclose(m.get_output(0), want, rtol=1e-12)


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dyn"])
def test_dyn_segment_sum(dynamic):
    def build(d, s, n):
        return D.segment_sum(d, s, n)

    got = _run(build, [DATA, _i([2, 0, 0], "int32"), _i(3)], dynamic)[0]
    np.testing.assert_array_equal(got, [[9, 3, 9, 7], [0, 0, 0, 0], [1, 2, 3, 4]])


def test_segment_sum_errors():
    with pytest.raises(Error, match=r"segment id 3 is outside \[0, 2\)"):
        _run(lambda d, s: segment_sum(d, s, 2), [DATA, _i([0, 3, 1])], executor="debug")
    with pytest.raises(TypeInferenceError, match="segment_ids .* must be 1-D"):
        _run(lambda d, s: segment_sum(d, s, 2), [DATA, _i([[0, 1, 1]])], executor="debug")
    with pytest.raises(TypeInferenceError, match="more entries than data"):
        _run(lambda d, s: segment_sum(d, s, 2), [DATA, _i([0, 1, 1, 0])], executor="debug")
    with pytest.raises(Error, match="num_segments must be >= 0"):
        segment_sum(relay.var("d", shape=(2,)), relay.var("s", shape=(2,), dtype="int32"), -1)


# ---------------------------------------------------------------- sparse_to_dense

TO_DENSE = [  # TVM's cases, and a repeated and a negative index
    ("scalar", 1, 3, 0, [5], [0, 3, 0, 0, 0]),
    ("vector", [0, 1, 4], [3, 3, 3], 0, [5], [3, 3, 0, 0, 3]),
    ("rows", [[0, 0], [1, 2]], [1, 2], 0, [3, 4], [[1, 0, 0, 0], [0, 0, 2, 0], [0, 0, 0, 0]]),
    ("one-value-everywhere", [[0, 1], [1, 0]], 7, -1, [2, 2], [[-1, 7], [7, -1]]),
    ("repeat-and-negative", [1, 1, -1], [5, 6, 7], 0, [4], [0, 6, 0, 7]),
]


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dyn"])
@pytest.mark.parametrize("case", TO_DENSE, ids=[c[0] for c in TO_DENSE])
def test_sparse_to_dense(case, dynamic):
    _, ind, val, default, shape, want = case
    values = [_i(ind), _i(val, "int32"), _i(default, "int32")]
    if dynamic:
        got = _run(lambda i, v, d, s: D.sparse_to_dense(i, s, v, d), [*values, _i(shape)])
    else:
        got = _run(lambda i, v, d: S.sparse_to_dense(i, shape, v, d), values)
    np.testing.assert_array_equal(got[0], _i(want, "int32"))


def test_sparse_to_dense_kernels_are_c_even_with_a_run_time_shape():
    """dyn.sparse_to_dense is value-shaped: its shape function reads the shape input."""
    assert "sparse_to_dense" in COMPUTE and "dyn.sparse_to_dense" in COMPUTE
    i = relay.var("i", shape=(2, 2), dtype="int64")
    v = relay.var("v", shape=(2,), dtype="float32")
    d = relay.var("d", shape=(), dtype="float32")
    s = relay.var("s", shape=(2,), dtype="int64")
    mod = relay.IRModule.from_expr(relay.Function([i, v, d, s], D.sparse_to_dense(i, s, v, d)))
    model = relay.runtime.wrap(relay.vm.compile(mod, target="cpu"))
    assert model.kernel_summary().startswith("all"), model.kernel_summary()
    for shape in ((2, 3), (3, 2)):
        got = model.run({"i": _i([[0, 1], [1, 0]]), "v": np.array([4, 5], "float32"),
                         "d": np.array(-1, "float32"), "s": _i(shape)})[0]
        want = np.full(shape, -1, "float32")
        want[0, 1], want[1, 0] = 4, 5
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("types, message", [
    ([((2, 2), "float32"), ((2,), "int32"), ((), "int32")], "integer"),
    ([((2, 2, 1), "int64"), ((2,), "int32"), ((), "int32")], "0-D, 1-D or 2-D"),
    ([((2, 2), "int64"), ((3,), "int32"), ((), "int32")], "one entry per value"),
    ([((2, 3), "int64"), ((2,), "int32"), ((), "int32")], "one coordinate per output axis"),
    ([((2, 2), "int64"), ((2,), "int32"), ((1,), "int32")], "default_value must be a scalar"),
    ([((2, 2), "int64"), ((2,), "int32"), ((), "int64")], "default_value must be a scalar"),
])
def test_sparse_to_dense_bad_types(types, message):
    args = [relay.var(f"a{k}", shape=s, dtype=d) for k, (s, d) in enumerate(types)]
    with pytest.raises(TypeInferenceError, match=message) as info:
        relay.transform.InferType()(relay.IRModule.from_expr(
            relay.Function(args, S.sparse_to_dense(args[0], (3, 4), args[1], args[2]))))
    assert "sparse_to_dense" in str(info.value)


def test_sparse_to_dense_index_out_of_range():
    with pytest.raises(Error, match="index 5 is out of range"):
        _run(lambda i, v, d: S.sparse_to_dense(i, (4,), v, d),
             [_i([0, 5]), _i([1, 2], "int32"), _i(0, "int32")], executor="debug")
