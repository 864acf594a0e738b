"""Signal processing: DFT, STFT, the Hann/Hamming/Blackman windows and MelWeightMatrix.

A DFT of static length is a matrix product: the real and imaginary parts times constant
cosine/sine matrices, computed in float64 and cast back to the input dtype. Windows and mel
matrices depend only on their scalar inputs, so they import as constants (the harness
binds those inputs with ``const_inputs``).
"""

from __future__ import annotations

import numpy as np

from ...ir.expr import const
from ...op import nn as N
from ...op import tensor as E
from ...op import transform as T
from ..common import ConversionError
from .base import OnnxTable, dtype, ints
from .base import axis as norm_axis
from .elementwise import onnx_dtype
from .shape import _static

TABLE = OnnxTable()


def _dense_const(x, matrix):
    """``x (..., L) @ matrix (L, K)``, the matrix a constant of x's dtype."""
    return N.dense(x, const(np.ascontiguousarray(matrix.T).astype(dtype(x))))


def _parts(x):
    """The real and (None for a real signal) imaginary parts of (..., 1 or 2)."""
    last = _static(x, "DFT input")[-1]
    if last not in (1, 2):
        raise ConversionError(f"DFT: the last axis holds 1 (real) or 2 (complex) values, "
                              f"found {last}")
    n = len(_static(x, "DFT input")) - 1
    re = T.squeeze(T.strided_slice(x, [0], [1], axes=[n]), [n])
    im = T.squeeze(T.strided_slice(x, [1], [2], axes=[n]), [n]) if last == 2 else None
    return re, im


def _transform(re, im, n, onesided, inverse):
    """The DFT of length ``n`` along the last axis of ``re``/``im`` (inputs longer than
    ``n`` are cut, shorter ones zero-padded): returns (real, imag or None)."""
    length = _static(re, "DFT input")[-1]
    if inverse and onesided:  # numpy irfft: the Hermitian extension of n//2+1 bins
        rows = min(length, n // 2 + 1)
        k, t = np.arange(rows)[:, None], np.arange(n)[None, :]
        weight = np.where((k == 0) | (2 * k == n), 1.0, 2.0) / n
        angle = 2 * np.pi * k * t / n
        cos, sin = weight * np.cos(angle), weight * np.sin(angle)
        re = T.strided_slice(re, [0], [rows], axes=[-1]) if rows < length else re
        out = _dense_const(re, cos)
        if im is not None:
            im = T.strided_slice(im, [0], [rows], axes=[-1]) if rows < length else im
            out = E.subtract(out, _dense_const(im, sin))
        return out, None
    rows = min(length, n)
    if rows < length:
        re = T.strided_slice(re, [0], [rows], axes=[-1])
        im = None if im is None else T.strided_slice(im, [0], [rows], axes=[-1])
    bins = n // 2 + 1 if onesided else n
    angle = 2 * np.pi * np.arange(rows)[:, None] * np.arange(bins)[None, :] / n
    cos, sin = np.cos(angle), np.sin(angle) * (1.0 if inverse else -1.0)
    if inverse:
        cos, sin = cos / n, sin / n
    out_re, out_im = _dense_const(re, cos), _dense_const(re, sin)
    if im is not None:  # (a + ib)(cos + i sin) = (a cos - b sin) + i(a sin + b cos)
        out_re = E.subtract(out_re, _dense_const(im, sin))
        out_im = E.add(out_im, _dense_const(im, cos))
    return out_re, out_im


def dft(x, axis, dft_length, onesided, inverse):
    rank = len(_static(x, "DFT input"))
    a = norm_axis(axis, rank)
    if a >= rank - 1:
        raise ConversionError(f"DFT: axis {axis} is the real/imaginary axis")
    length = _static(x, "DFT input")[a]
    n = ints(dft_length, "dft_length")[0] if dft_length is not None else (
        2 * (length - 1) if inverse and onesided else length)
    perm = [i for i in range(rank - 1) if i != a] + [a]  # the transformed axis last
    back = [perm.index(i) for i in range(rank - 1)]
    # in float64, as numpy's FFT: exact zeros (imaginary parts of real spectra) stay
    # within ONNX's absolute tolerance of 1e-7
    re, im = (None if p is None else T.cast(T.transpose(p, perm), "float64")
              for p in _parts(x))
    out_re, out_im = _transform(re, im, n, bool(onesided), bool(inverse))
    parts = [out_re] if out_im is None else [out_re, out_im]
    return T.cast(T.stack([T.transpose(p, back) for p in parts], axis=rank - 1), dtype(x))


@TABLE.register("DFT", since=17)
def dft_v17(x, dft_length=None, axis=1, inverse=0, onesided=0):  # noqa: A002
    return dft(x, int(axis), dft_length, onesided, inverse)


@TABLE.register("DFT", since=20)
def dft_v20(x, dft_length=None, axis=None, inverse=0, onesided=0):  # noqa: A002
    return dft(x, -2 if axis is None else ints(axis, "axis")[0], dft_length, onesided,
               inverse)


@TABLE.register("STFT", since=17)
def stft(signal, frame_step, window=None, frame_length=None, onesided=1):
    """Frames of ``frame_length`` every ``frame_step`` samples, windowed, each
    transformed: (batch, frames, bins, 2)."""
    batch, length, _ = _static(signal, "STFT signal")
    step = ints(frame_step, "frame_step")[0]
    if frame_length is not None:
        size = ints(frame_length, "frame_length")[0]
    else:
        size = _static(window, "STFT window")[0] if window is not None else length
    frames = 1 + (length - size) // step
    index = np.arange(frames)[:, None] * step + np.arange(size)[None, :]
    framed = T.take(signal, const(index.astype("int64")), axis=1)  # (B, F, size, C)
    if window is not None:
        framed = E.multiply(framed, T.reshape(window, (1, 1, size, 1)))
    return dft(framed, 2, None, onesided, 0)


def _window(name, size, output_datatype, periodic):
    n = ints(size, "size")[0]
    denom = n if periodic else n - 1
    k = np.arange(n, dtype="float64")
    w = {"HannWindow": lambda: np.sin(np.pi * k / denom) ** 2,
         "HammingWindow": lambda: 25 / 46 - (21 / 46) * np.cos(2 * np.pi * k / denom),
         "BlackmanWindow": lambda: 0.42 - 0.5 * np.cos(2 * np.pi * k / denom)
         + 0.08 * np.cos(4 * np.pi * k / denom)}[name]()
    return const(w.astype(onnx_dtype(output_datatype)))


for _name in ("HannWindow", "HammingWindow", "BlackmanWindow"):
    TABLE.register(_name, since=17)(
        lambda size, output_datatype=1, periodic=1, _name=_name:
        _window(_name, size, output_datatype, periodic))


@TABLE.register("MelWeightMatrix", since=17)
def mel_weight_matrix(num_mel_bins, dft_length, sample_rate, lower_edge_hertz,
                      upper_edge_hertz, output_datatype=1):
    """Triangular mel filters (spectrogram bins x mel bins), as onnx's reference builds
    them (its mel step divides the range into ``num_mel_bins + 2`` parts)."""
    from .base import value

    mels, n = ints(num_mel_bins, "num_mel_bins")[0], ints(dft_length, "dft_length")[0]
    rate = ints(sample_rate, "sample_rate")[0]
    lo = float(np.asarray(value(lower_edge_hertz, "lower_edge_hertz")))
    hi = float(np.asarray(value(upper_edge_hertz, "upper_edge_hertz")))

    def to_mel(hz):
        return 2595 * np.log1p(hz / 700) / np.log(10)

    points = np.arange(mels + 2) * (to_mel(hi) - to_mel(lo)) / (mels + 2) + to_mel(lo)
    bins = (((n + 1) * (700 * np.expm1(points / 2595 * np.log(10)))) // rate).astype(int)
    out = np.zeros((n // 2 + 1, mels))
    for i in range(mels):
        left, centre, right = bins[i], bins[i + 1], bins[i + 2]
        if centre == left:
            out[centre, i] = 1
        else:
            out[left:centre + 1, i] = (np.arange(left, centre + 1) - left) / (centre - left)
        if right > centre:
            out[centre:right, i] = (right - np.arange(centre, right)) / (right - centre)
    return const(out.astype(onnx_dtype(output_datatype)))
