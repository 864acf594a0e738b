"""``relayir.tvm``'s Relay ops spelled as relayir ops (``relay/op/_like_ops.py``): each
against numpy on the VM, with the result type Relay gives."""

from __future__ import annotations

import numpy as np
import pytest

import relayir
from relayir.tvm import relay
from relayir.tvm.relay.testing import check_grad, run_infer_type

RNG = np.random.default_rng(0)


def _run(params, body, *args):
    mod = relayir.IRModule.from_expr(relayir.Function(params, body))
    return np.asarray(relayir.create_executor("vm", mod=mod).evaluate()(*args))


@pytest.mark.parametrize("shape, like", [((3, 1, 4), (2, 3, 5, 4)), ((4,), (3, 4))])
def test_broadcast_and_collapse_are_inverse_shapes(shape, like):
    x, y = relay.var("x", shape=shape), relay.var("y", shape=like)
    data = RNG.normal(size=shape).astype("float32")
    got = _run([x, y], relay.broadcast_to_like(x, y), data, np.zeros(like, "float32"))
    np.testing.assert_array_equal(got, np.broadcast_to(data, like))
    big = relay.var("big", shape=like)
    wide = RNG.normal(size=like).astype("float32")
    z = relay.collapse_sum_like(big, x)
    assert run_infer_type(z).checked_type == relay.TensorType(shape, "float32")
    lead = len(like) - len(shape)
    want = wide.sum(axis=tuple(range(lead))).sum(
        axis=tuple(i for i, d in enumerate(shape) if d == 1), keepdims=True)
    np.testing.assert_allclose(_run([big, x], z, wide, data), want, rtol=1e-5)
    np.testing.assert_allclose(_run([big], relay.collapse_sum_to(big, shape), wide), want,
                               rtol=1e-5)


def test_cast_like_slice_like_reverse_reshape():
    x, y = relay.var("x", shape=(3, 4, 5)), relay.var("y", shape=(1, 2), dtype="int8")
    data = RNG.normal(size=(3, 4, 5)).astype("float32")
    assert run_infer_type(relay.cast_like(x, y)).checked_type.dtype == "int8"
    got = _run([x, y], relay.slice_like(x, y), data, np.zeros((1, 2), "int8"))
    np.testing.assert_array_equal(got, data[:1, :2])
    z = relay.var("z", shape=(1, 2, 3))
    got = _run([x, z], relay.slice_like(x, z, axes=(-1, -3)), data, np.zeros((1, 2, 3), "f4"))
    np.testing.assert_array_equal(got, data[:1, :, :3])
    r = relay.reverse_reshape(x, newshape=(-1, 0))  # 0 copies the LAST dim, -1 takes the rest
    assert run_infer_type(r).checked_type == relay.TensorType((12, 5), "float32")
    np.testing.assert_array_equal(_run([x], r, data), data.reshape(12, 5))


@pytest.mark.parametrize("axis, shape", [(0, (5, 3, 2)), (1, (3, 5))])
def test_sequence_mask(axis, shape):
    data = RNG.normal(size=shape)
    x = relay.var("x", shape=shape, dtype="float64")
    n = relay.var("n", shape=(shape[1 - axis],), dtype="float32")
    lengths = np.array([0, 5, 2][:shape[1 - axis]], "float32")
    got = _run([x, n], relay.sequence_mask(x, n, -1.5, axis), data, lengths)
    steps = np.arange(shape[axis])
    keep = steps[:, None] < lengths[None, :] if axis == 0 else steps[None, :] < lengths[:, None]
    want = np.where(keep.reshape(keep.shape + (1,) * (len(shape) - 2)), data, -1.5)
    np.testing.assert_array_equal(got, want)


def test_cross_entropies_and_their_gradients():
    p = RNG.uniform(0.2, 1, (2, 5))
    t = RNG.uniform(0, 1, (2, 5))
    x, y = relay.var("x", shape=(2, 5), dtype="float64"), relay.var("y", shape=(2, 5),
                                                                     dtype="float64")
    np.testing.assert_allclose(_run([x, y], relay.nn.cross_entropy(x, y), p, t),
                               -np.sum(np.log(p) * t) / 2)
    np.testing.assert_allclose(_run([x, y], relay.nn.cross_entropy_with_logits(x, y), p, t),
                               -np.sum(p * t) / 2)
    check_grad(relay.Function([x, y], relay.nn.cross_entropy(x, y)), inputs=[p, t], eps=1e-6)


def test_an_unknown_type_is_a_clear_error():
    with pytest.raises(relayir.Error, match="slice_like: the type of the like must be known"):
        relay.slice_like(relay.var("x", shape=(2,)), relay.var("y"))


def test_l2_normalize_lrn_reference_and_post_order_visit():
    import relayir.tvm as tvm
    from relayir.tvm.relay.analysis import post_order_visit

    data = RNG.normal(size=(2, 3, 4))
    x = relay.var("x", shape=(2, 3, 4), dtype="float64")
    got = _run([x], relay.nn.l2_normalize(x, eps=1e-3, axis=[1]), data)
    np.testing.assert_allclose(
        got, tvm.topi.testing.l2_normalize_python(data, 1e-3, [1]), rtol=1e-12)
    np.testing.assert_allclose(
        _run([x], relay.nn.lrn(x, size=3, axis=1, bias=1.0, alpha=0.5, beta=0.75), data),
        tvm.topi.testing.lrn_python(data, 3, 1, 1.0, 0.5, 0.75), rtol=1e-12)
    seen = []
    post_order_visit(relay.nn.relu(x) + x, lambda n: seen.append(type(n).__name__))
    assert seen == ["Var", "Op", "Call", "Op", "Call"]
