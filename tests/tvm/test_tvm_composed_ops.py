"""Relay ops the layer spells as graphs of relayir ops (``relay/op/_composed.py``):
``reverse_sequence``, ``adv_index``, ``sliding_window``, ``fixed_point_multiply``, ``stft``,
``searchsorted``, ``ndarray_size``, ``nn.dilate`` and ``nn.mirror_pad``, each against a
numpy reference, on the graph executor (C) and the VM."""

import numpy as np
import pytest

from relayir.errors import Error
from relayir.tvm import relay


def _run(params, body, *args, kind="graph"):
    mod = relay.transform.InferType()(relay.IRModule.from_expr(relay.Function(params, body)))
    out = relay.create_executor(kind, mod=mod, target="llvm").evaluate()(*args)
    return out.numpy()


def _reverse_sequence_ref(x, lengths, seq_axis, batch_axis):
    out = np.array(x)
    for b, n in enumerate(lengths):
        n = int(np.clip(n, 0, x.shape[seq_axis]))
        src = [slice(None)] * x.ndim
        src[batch_axis], src[seq_axis] = b, slice(0, n)
        dst = list(src)
        dst[seq_axis] = slice(n - 1, None, -1) if n else slice(0, 0)
        out[tuple(src)] = x[tuple(dst)]
    return out


@pytest.mark.parametrize("seq_axis, batch_axis", [(0, 1), (1, 0), (2, 0), (-1, 1)])
def test_reverse_sequence_against_numpy(seq_axis, batch_axis):
    x_np = np.arange(2 * 3 * 4, dtype="float32").reshape(2, 3, 4)
    x_np[0, 0, :2] = [-0.0, np.inf]
    x_np[1, 1, 1] = np.nan
    n_batch = x_np.shape[batch_axis]
    lengths = np.array([-1, 5, 2][:n_batch], "int32")
    x = relay.var("x", shape=x_np.shape)
    z = relay.reverse_sequence(x, relay.const(lengths), seq_axis, batch_axis)
    assert relay.testing.run_infer_type(z).checked_type == x.type_annotation
    want = _reverse_sequence_ref(x_np, lengths, seq_axis % 3, batch_axis % 3)
    for kind in ("graph", "vm"):
        got = _run([x], z, x_np, kind=kind)
        np.testing.assert_array_equal(got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want))


def test_reverse_sequence_checks_the_lengths():
    x = relay.var("x", shape=(4, 4))
    with pytest.raises(Error, match="batch_axis = 4, and seq_length size = 5"):
        relay.reverse_sequence(x, relay.const(np.ones(5, "int32")), 1, 0)


@pytest.mark.parametrize("shape, index_shapes", [
    ((10, 5), [(3, 4), (3, 1)]), ((10, 5), [(2,)]), ((6, 5, 7), [(1, 2, 1), (1, 2, 3)]),
])
def test_adv_index_against_numpy(shape, index_shapes):
    rng = np.random.default_rng(0)
    data_np = rng.standard_normal(shape).astype("float32")
    data_np.flat[:3] = [np.nan, -np.inf, -0.0]
    idx_np = [rng.integers(0, shape[i], s).astype("int64" if i else "int32")
              for i, s in enumerate(index_shapes)]
    data = relay.var("data", shape=shape)
    idx = [relay.var(f"i{k}", shape=s, dtype=str(a.dtype)) for k, (s, a) in
           enumerate(zip(index_shapes, idx_np))]
    got = _run([data, *idx], relay.op.adv_index([data, *idx]), data_np, *idx_np)
    np.testing.assert_array_equal(got, data_np[tuple(idx_np)])


def test_sliding_window_against_numpy():
    data_np = np.random.rand(2, 3, 9, 8).astype("float32")
    data_np[0, 0, 0, 0] = -0.0
    x = relay.var("x", shape=data_np.shape)
    y = relay.sliding_window(x, 1, [3, 4, 5], [1, 2, 3])
    assert relay.testing.run_infer_type(y).checked_type == relay.TensorType((2, 1, 3, 2, 3, 4, 5))
    got = _run([x], y, data_np)
    want = np.lib.stride_tricks.sliding_window_view(data_np, (3, 4, 5), axis=(1, 2, 3))
    np.testing.assert_array_equal(got, want[:, ::1, ::2, ::3])
    assert np.signbit(got[0, 0, 0, 0, 0, 0, 0])
    with pytest.raises(Error, match="does not fit"):
        relay.sliding_window(x, 2, [10, 1], [1, 1])


def _q_multiply_shift_ref(x, m, shift):
    left, right = max(shift, 0), 31 + max(-shift, 0)
    v = (x.astype(np.int64) << left) * m
    return ((v + (1 << (right - 1))) >> right).astype(x.dtype)


@pytest.mark.parametrize("m, shift", [(1073741824, -3), (1518500250, 2), (2147483647, 0)])
def test_fixed_point_multiply_against_numpy(m, shift):
    x_np = np.array([23, -23, 0, 1, -1, 7, 1 << 20, -(1 << 20)], "int32")
    x = relay.var("x", shape=x_np.shape, dtype="int32")
    got = _run([x], relay.fixed_point_multiply(x, m, shift), x_np)
    want = _q_multiply_shift_ref(x_np, m, shift)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, np.round(x_np * (m / 2.0 ** 31) * 2.0 ** shift), atol=1)


def _stft_ref(data, n_fft, hop, win_length, window, normalized, onesided):
    lpad = (n_fft - win_length) // 2
    window = np.pad(window.astype("float64"), (lpad, n_fft - win_length - lpad))
    frames = (data.shape[-1] - n_fft) // hop + 1
    idx = np.arange(frames)[:, None] * hop + np.arange(n_fft)
    spec = np.fft.fft(data[..., idx] * window, axis=-1)  # (..., frames, n_fft)
    if onesided:
        spec = spec[..., : n_fft // 2 + 1]
    if normalized:
        spec = spec / np.sqrt(n_fft)
    spec = np.swapaxes(spec, -1, -2)
    return np.stack([spec.real, spec.imag], -1)


@pytest.mark.parametrize("n_fft, hop, win_length, normalized, onesided", [
    (3, 3, 3, False, True), (4, 1, 4, True, True), (4, 2, 2, False, False), (5, 2, 3, True, False),
])
@pytest.mark.parametrize("dynamic", [False, True])
def test_stft_against_numpy_fft(n_fft, hop, win_length, normalized, onesided, dynamic):
    data_np = np.random.rand(2, 11).astype("float32")
    window_np = np.random.rand(win_length).astype("float32")
    shape = (relay.Any(), relay.Any()) if dynamic else data_np.shape
    data = relay.var("data", relay.TensorType(shape, "float32"))
    window = relay.var("window", relay.TensorType((win_length,), "float32"))
    z = relay.op.stft(data, n_fft, hop, win_length, window, normalized, onesided)
    got = _run([data, window], z, data_np, window_np, kind="vm" if dynamic else "graph")
    want = _stft_ref(data_np, n_fft, hop, win_length, window_np, normalized, onesided)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_stft_of_a_vector_and_non_finite_samples():
    data_np = np.arange(9, dtype="float32")
    data_np[7] = np.nan
    data = relay.var("data", shape=data_np.shape)
    got = _run([data], relay.op.stft(data, 4, 2), data_np)  # no window: ones
    assert got.shape == (3, 3, 2)
    want = _stft_ref(data_np, 4, 2, 4, np.ones(4), False, True)
    np.testing.assert_allclose(got[:, :2], want[:, :2], rtol=1e-5, atol=1e-5)
    assert np.isnan(got[:, 2]).any() and not np.isnan(got[:, :2]).any()  # frame 2 has the NaN


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("seq_shape, val_shape", [((6,), (4,)), ((2, 3, 5), (2, 3, 4)),
                                                  ((5,), (2, 3))])
def test_searchsorted_against_numpy(seq_shape, val_shape, right):
    rng = np.random.default_rng(2)
    seq = np.sort(rng.integers(0, 4, seq_shape).astype("float32"), axis=-1)
    vals = rng.integers(-1, 5, val_shape).astype("float32")  # ties with the sequence
    vals.flat[0] = np.inf
    vals.flat[-1] = -np.inf
    x = relay.var("x", shape=tuple(relay.Any() for _ in seq_shape))
    y = relay.var("y", shape=tuple(relay.Any() for _ in val_shape))
    got = _run([x, y], relay.searchsorted(x, y, right, "int64"), seq, vals, kind="vm")
    side = "right" if right else "left"
    if seq.ndim == 1:
        want = np.searchsorted(seq, vals, side=side)
    else:
        flat_s, flat_v = seq.reshape(-1, seq.shape[-1]), vals.reshape(-1, vals.shape[-1])
        want = np.stack([np.searchsorted(s, v, side=side) for s, v in zip(flat_s, flat_v)])
        want = want.reshape(vals.shape)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)


def test_ndarray_size_static_and_dynamic():
    x = relay.var("x", shape=(relay.Any(), 3))
    assert _run([x], relay.ndarray_size(x), np.zeros((5, 3), "float32"), kind="vm") == 15
    s = relay.var("s", shape=())
    assert _run([s], relay.ndarray_size(s, "int64"), np.float32(1)).item() == 1


@pytest.mark.parametrize("strides, value", [((1, 3), 0.0), ((2, 1, 4), -0.0), ((3,), np.nan)])
def test_dilate_against_numpy(strides, value):
    shape = (2, 3, 4)[-len(strides):]
    data = np.arange(np.prod(shape), dtype="float32").reshape(shape) - 3
    data.flat[0] = np.inf
    x = relay.var("x", shape=tuple(relay.Any() for _ in shape))
    got = _run([x], relay.nn.dilate(x, strides, value), data, kind="vm")
    want = np.full([(d - 1) * s + 1 for d, s in zip(shape, strides)], value, "float32")
    want[tuple(slice(None, None, s) for s in strides)] = data
    np.testing.assert_array_equal(got, want)  # NaN where the fill is NaN
    assert np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("mode", ["SYMMETRIC", "REFLECT"])
def test_mirror_pad_against_numpy(mode):
    data = np.arange(2 * 4 * 5, dtype="float32").reshape(2, 4, 5)
    data[0, 0, 0] = -0.0
    widths = ((0, 0), (2, 1), (3, 2))
    x = relay.var("x", shape=(2, relay.Any(), relay.Any()))
    got = _run([x], relay.nn.mirror_pad(x, widths, mode), data, kind="vm")
    want = np.pad(data, widths, mode=mode.lower())
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))
    with pytest.raises(Error, match="SYMMETRIC or REFLECT"):
        relay.nn.mirror_pad(x, widths, "EDGE")
