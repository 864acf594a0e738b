"""``relay.matrix_set_diag`` and ``relay.nn.nll_loss`` (graphs of relayir ops in
``relay/op``) against hand-checked values and the element-wise references of
``tvm.topi.testing``, on the graph executor (C) and the VM; ``annotation.checkpoint``
leaves values unchanged."""

import numpy as np
import pytest

from relayir.errors import Error
from relayir.tvm import relay
from relayir.tvm.topi import testing as ref


def _run(params, body, *args, kind="graph"):
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(params, body)))
    return relay.create_executor(kind, mod=mod, target="llvm").evaluate()(*args).numpy()


def test_matrix_set_diag_by_hand():
    data = np.zeros((3, 4), "float32")
    x, d = relay.var("x", shape=(3, 4)), relay.var("d", shape=(3,))
    out = _run([x, d], relay.matrix_set_diag(x, d), data, np.array([1, 2, 3], "float32"))
    np.testing.assert_array_equal(out, [[1, 0, 0, 0], [0, 2, 0, 0], [0, 0, 3, 0]])
    # a band k=(-1, 1) of a 3x3: rows are k=1, 0, -1; RIGHT_LEFT pads the short
    # superdiagonal on the left and the short subdiagonal on the right
    band = np.array([[0, 1, 2], [3, 4, 5], [6, 7, 0]], "float32")
    x, d = relay.var("x", shape=(3, 3)), relay.var("d", shape=(3, 3))
    out = _run([x, d], relay.matrix_set_diag(x, d, (-1, 1)), np.full((3, 3), 9, "float32"),
               band)
    np.testing.assert_array_equal(out, [[3, 1, 9], [6, 4, 2], [9, 7, 5]])


@pytest.mark.parametrize("kind", ["graph", "vm"])
@pytest.mark.parametrize("shape, dshape, k, align", [
    ((2, 3, 4), (2, 3), 1, "RIGHT_LEFT"),
    ((2, 3, 4), (2, 4, 3), (-1, 2), "LEFT_RIGHT"),
    ((2, 3, 4), (2, 4, 3), (-1, 2), "LEFT_LEFT"),
    ((4, 2), (3, 2), (-2, 0), "RIGHT_RIGHT"),
])
def test_matrix_set_diag_matches_the_reference(kind, shape, dshape, k, align):
    rng = np.random.default_rng(0)
    data = rng.standard_normal(shape).astype("float32")
    diag = rng.standard_normal(dshape).astype("float32")
    diag.flat[0] = np.nan
    x, d = relay.var("x", shape=shape), relay.var("d", shape=dshape)
    out = _run([x, d], relay.matrix_set_diag(x, d, k, align), data, diag, kind=kind)
    np.testing.assert_array_equal(out, ref.matrix_set_diag(data, diag, k, align))


def test_matrix_set_diag_refuses_a_band_outside_the_matrix():
    x, d = relay.var("x", shape=(3, 4)), relay.var("d", shape=(3,))
    with pytest.raises(Error, match="k_hi < 4"):
        relay.matrix_set_diag(x, d, 4)
    with pytest.raises(Error, match="align is one of"):
        relay.matrix_set_diag(x, d, 0, "MIDDLE")


@pytest.mark.parametrize("kind", ["graph", "vm"])
@pytest.mark.parametrize("shape, reduction, ignore", [
    ((6, 4), "mean", -100), ((6, 4, 2, 3), "mean", -100), ((6, 4), "sum", 2),
    ((6, 4), "none", 1), ((6, 4, 5), "mean", 3)])
def test_nll_loss_matches_the_reference(kind, shape, reduction, ignore):
    rng = np.random.default_rng(1)
    pred = rng.standard_normal(shape).astype("float32")
    targets = rng.integers(0, shape[1], size=shape[:1] + shape[2:]).astype("int32")
    weights = rng.uniform(0.5, 2, size=shape[1]).astype("float32")
    p = relay.var("p", shape=shape)
    t = relay.var("t", shape=targets.shape, dtype="int32")
    w = relay.var("w", shape=(shape[1],))
    out = _run([p, t, w], relay.nn.nll_loss(p, t, w, reduction, ignore), pred, targets,
               weights, kind=kind)
    np.testing.assert_allclose(out, ref.nll_loss(pred, targets, weights, reduction, ignore),
                               rtol=1e-6, atol=1e-6)


def test_nll_loss_by_hand_and_bad_reduction():
    pred = np.array([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]], "float32")
    targets = np.array([1, 0, -100], "int32")            # the last one ignored
    weights = np.array([2.0, 3.0], "float32")
    p, t, w = relay.var("p", shape=(3, 2)), relay.var("t", shape=(3,), dtype="int32"), \
        relay.var("w", shape=(2,))
    out = _run([p, t, w], relay.nn.nll_loss(p, t, w), pred, targets, weights)
    np.testing.assert_allclose(out, -(0.2 * 3 + 0.3 * 2) / (3 + 2), rtol=1e-6)
    with pytest.raises(Error, match="reduction is one of"):
        relay.nn.nll_loss(p, t, w, "max")


def test_checkpoint_returns_its_argument():
    x = relay.var("x", shape=(2,))
    body = relay.multiply(x, x)
    assert relay.annotation.checkpoint(body) is body
