"""``random.threefry_generate`` / ``random.threefry_split``: Random123's known answers
for Threefry-2x64-20, keys as pure values (same key, same bits; the next key continues
the stream), split keys independent, bad keys refused, every executor the same; and
``relay.random``'s uniform and normal on them."""

from __future__ import annotations

import numpy as np
import pytest

import relayir as r
from relayir.op import random as R
from relayir.typing.infer import infer_expr


def test_threefry_known_answers():
    """Random123's kat_vectors for threefry2x64_20."""
    zero = np.array([0], "uint64")
    x0, x1 = R.threefry2x64(np.uint64(0), np.uint64(0), zero, zero)
    assert (int(x0[0]), int(x1[0])) == (0xc2b6e3a8c2c69865, 0x6f81ed42f350084d)
    ones = np.array([0xffffffffffffffff], "uint64")
    x0, x1 = R.threefry2x64(ones[0], ones[0], ones, ones)
    assert (int(x0[0]), int(x1[0])) == (0xe02cb7c4d95d277a, 0xd06633d0893b8b68)


def _run(body, kind="vm"):
    mod = r.IRModule.from_expr(r.Function([], body))
    return r.create_executor(kind, mod=mod).evaluate()()


@pytest.mark.parametrize("kind", ["debug", "graph", "vm"])
def test_streams_continue_and_split_keys_differ(kind):
    key = r.const(R.threefry_key(7))
    whole = np.asarray(_run(r.TupleGetItem(R.threefry_generate(key, (8,)), 1), kind))
    first = R.threefry_generate(key, (2, 2))
    second = R.threefry_generate(r.TupleGetItem(first, 0), (4,))
    a, b = _run(r.Tuple([r.TupleGetItem(first, 1), r.TupleGetItem(second, 1)]), kind)
    np.testing.assert_array_equal(np.concatenate([np.asarray(a).reshape(-1), np.asarray(b)]),
                                  whole)
    left, right = _run(R.threefry_split(key), kind)
    left, right = np.asarray(left), np.asarray(right)
    assert left.dtype == np.uint64 and not np.array_equal(left, right)
    again = np.asarray(_run(r.TupleGetItem(R.threefry_generate(key, (8,)), 1), kind))
    np.testing.assert_array_equal(again, whole)
    assert len(set(whole.tolist())) == 8


def test_types_and_bad_keys():
    key = r.const(R.threefry_key(1))
    ty = infer_expr(R.threefry_generate(key, (3, 0))).checked_type
    assert ty == r.TupleType([R.KEY_TYPE, r.TensorType((3, 0), "uint64")])
    assert np.asarray(_run(r.TupleGetItem(R.threefry_generate(key, (3, 0)), 1))).shape == (3, 0)
    with pytest.raises(r.Error, match=r"key must be a Tensor\[\(10\), uint64\]"):
        infer_expr(R.threefry_split(r.const(np.zeros(9, "uint64"))))
    with pytest.raises(r.Error, match="out_shape must be non-negative"):
        R.threefry_generate(key, (-1,))


def test_relay_uniform_and_normal():
    from relayir.tvm import relay

    key = relay.random.threefry_key(3)
    _, u = _run(relay.random.uniform(key, (4000,), "float64", low=-2.0, high=3.0))
    u = np.asarray(u)
    assert u.dtype == np.float64 and u.min() >= -2.0 and u.max() < 3.0
    assert abs(u.mean() - 0.5) < 0.1
    nxt, z = _run(relay.random.normal(key, (50, 80), "float32", mean=1.0, scale=2.0))
    z = np.asarray(z)
    assert z.shape == (50, 80) and z.dtype == np.float32 and np.isfinite(z).all()
    assert abs(z.mean() - 1.0) < 0.1 and abs(z.std() - 2.0) < 0.1
    assert np.asarray(nxt)[2] == 4000  # 2 x 4000 draws, two per counter block
