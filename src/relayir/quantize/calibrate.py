"""Calibration: run the float model on the user's samples and record the range of each
tensor the quantizer will quantize: min / max, a percentile, or ``entropy`` — the
clipping threshold whose 8-bit histogram is closest to the float one in KL divergence
(TensorRT's and ONNX Runtime's ``Entropy`` method), which ignores rare outliers."""

from __future__ import annotations

import numpy as np

from ..errors import Error
from ..ir.expr import Expr, Function, Tuple
from ..ir.module import IRModule
from ..ir.types import TensorType


class QuantizationError(Error):
    """A quantization request that cannot be met (empty or mistyped dataset, ...)."""


def check_dataset(fn: Function, dataset) -> list[dict]:
    """The samples as a list of ``{input name: array}``, each checked against ``fn``'s
    inputs (names, shapes, dtypes): a one-line error otherwise."""
    samples = list(dataset) if dataset is not None else []
    if not samples:
        raise QuantizationError("the calibration dataset is empty: pass at least one sample "
                                "({input name: array})")
    want = {p.name_hint: p.checked_type for p in fn.params}
    out = []
    for i, s in enumerate(samples):
        if not isinstance(s, dict):
            raise QuantizationError(f"calibration sample {i} is a {type(s).__name__}, "
                                    f"expected a dict of input name -> array")
        missing = [n for n in want if n not in s]
        if missing:
            raise QuantizationError(f"calibration sample {i} lacks input {missing[0]!r} "
                                    f"(inputs: {', '.join(want)})")
        arrays = {}
        for name, ty in want.items():
            a = np.asarray(s[name])
            shape = tuple(ty.shape) if isinstance(ty, TensorType) else None
            if shape is not None and (a.dtype.name != ty.dtype or (
                    all(isinstance(d, int) for d in shape) and a.shape != shape)):
                raise QuantizationError(
                    f"calibration sample {i}: input {name!r} is {a.dtype.name}{list(a.shape)}, "
                    f"the model takes {ty.dtype}{list(shape)}")
            arrays[name] = a
        out.append(arrays)
    return out


def collect_ranges(mod: IRModule, tensors: list[Expr], samples: list[dict], run,
                   method: str = "minmax", percentile: float = 99.99) -> list[tuple]:
    """``(lo, hi)`` of each expression of ``tensors`` (inside ``@main``) over the samples;
    ``run(mod, inputs) -> list of arrays`` executes a module."""
    fn = mod["main"]
    probe = IRModule.from_expr(Function(fn.params, Tuple(list(tensors))))
    lo = [np.inf] * len(tensors)
    hi = [-np.inf] * len(tensors)
    values: list[list] = [[] for _ in tensors]
    for s in samples:
        outs = run(probe, [s[p.name_hint] for p in fn.params])
        for k, v in enumerate(outs):
            v = np.asarray(v, np.float64)
            lo[k], hi[k] = min(lo[k], float(v.min())), max(hi[k], float(v.max()))
            if method in ("percentile", "entropy"):
                values[k].append(v.ravel())
    if method == "percentile":
        for k, vs in enumerate(values):
            allv = np.concatenate(vs)
            lo[k] = float(np.percentile(allv, 100 - percentile))
            hi[k] = float(np.percentile(allv, percentile))
    elif method == "entropy":
        for k, vs in enumerate(values):
            # uint8 steps over [0, t] for a non-negative tensor, about half per side else
            t = entropy_threshold(np.concatenate(vs), levels=256 if lo[k] >= 0 else 128)
            lo[k], hi[k] = max(lo[k], -t), min(hi[k], t)
    elif method != "minmax":
        raise QuantizationError(f"calibration method {method!r} is not one of "
                                f"{', '.join(METHODS)}")
    return list(zip(lo, hi))


METHODS = ("minmax", "percentile", "entropy")
CLIP_AT_MOST = 0.01  # entropy calibration: the largest share of values a threshold clips


def entropy_threshold(values: np.ndarray, bins: int = 2048, levels: int = 128) -> float:
    """The threshold ``t`` on ``|x|`` whose histogram clipped at ``t`` and quantized to
    ``levels`` levels is closest to the original in KL divergence (the mass beyond ``t``
    folded into the last bin, as TensorRT's calibrator does); ``max|x|`` when the
    histogram has fewer bins than levels' worth of data."""
    a = np.abs(values[np.isfinite(values)])
    amax = float(a.max()) if a.size else 0.0
    if amax == 0.0:
        return 0.0
    hist, edges = np.histogram(a, bins=bins, range=(0.0, amax))
    hist = hist.astype(np.float64)
    best, best_t = np.inf, amax
    tail = np.concatenate([np.cumsum(hist[::-1])[::-1], [0.0]])  # tail[i] = hist[i:].sum()
    # clip at most 1% of the values: below that KL divergence degenerates (every value
    # clipped into one bin matches its one-bin quantization exactly)
    first = max(levels, int(np.argmax(tail <= CLIP_AT_MOST * tail[0])))
    for i in range(first, bins + 1):
        p = hist[:i].copy()
        p[-1] += tail[i]  # what the threshold clips lands in its last bin
        # the i bins merged into `levels` groups, each spread back over its non-empty bins
        group = np.arange(i) * levels // i
        nonzero = hist[:i] > 0
        count = np.bincount(group, weights=nonzero, minlength=levels)
        total = np.bincount(group, weights=hist[:i], minlength=levels)
        q = np.where(nonzero, total[group] / np.maximum(count[group], 1), 0.0)
        mask = p > 0
        if not (q[mask] > 0).all():
            continue
        pn, qn = p[mask] / p.sum(), q[mask] / q.sum()
        kl = float(np.sum(pn * np.log(pn / qn)))
        if kl < best:
            best, best_t = kl, float(edges[i])
    return best_t


def activation_params(lo: float, hi: float) -> tuple[np.float32, int]:
    """uint8 asymmetric (ONNX Runtime's default for activations): the range widened to
    hold 0, ``scale = (hi - lo) / 255``, ``zero_point = round(-lo / scale)``."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = np.float32((hi - lo) / 255.0) if hi > lo else np.float32(1.0)
    zp = int(np.clip(np.rint(-lo / scale), 0, 255))
    return scale, zp


def weight_params(w: np.ndarray, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """int8 symmetric per channel along ``axis``: ``scale = max|w| / 127``; the values."""
    red = tuple(i for i in range(w.ndim) if i != axis)
    amax = np.abs(w).max(axis=red).astype(np.float32)
    scale = np.where(amax > 0, amax / np.float32(127), np.float32(1)).astype(np.float32)
    shape = [1] * w.ndim
    shape[axis] = -1
    q = np.clip(np.rint(w / scale.reshape(shape)), -127, 127).astype(np.int8)
    return scale, q
