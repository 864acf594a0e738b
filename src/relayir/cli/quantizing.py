"""``--quantize int8 --calibration data.npz``: the model quantized before it is compiled
(``relayir compile``, ``run`` and ``compare`` take the same options).

``int8`` is static post-training quantization (``relay.quantize.quantize(mode="static")``:
uint8 activations, int8 per-channel weights, ranges from the calibration samples);
``int8-dynamic`` quantizes dense / matmul weights now and activations per call (no
calibration). The calibration file is a ``.npz`` (no pickle) with one array per model
input: either one sample of the input's shape, or samples stacked along a new first axis.
"""

from __future__ import annotations

import argparse

import numpy as np

from ..ir.types import TensorType
from ..quantize import quantize
from ..quantize.calibrate import METHODS
from ..transform import InferType
from .console import Console
from .inputs import read_npz
from .runners import CommandError

MODES = {"int8": "static", "int8-dynamic": "dynamic"}


def add_quantize_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quantize", choices=tuple(MODES),
                   help="int8: static post-training quantization from --calibration; "
                        "int8-dynamic: int8 dense/matmul weights, activations per call")
    p.add_argument("--calibration", metavar="DATA.npz",
                   help="calibration samples by input name (one sample of the input's "
                        "shape, or samples stacked along a new first axis)")
    p.add_argument("--calibration-method", choices=METHODS, default="minmax",
                   help="activation ranges: minmax, percentile (99.99%%) or entropy "
                        "(KL divergence, as TensorRT / ONNX Runtime) (default: minmax)")


def calibration_samples(path: str, mod, params: dict) -> list[dict]:
    """The samples of ``path`` as a list of ``{input name: array}``."""
    arrays = read_npz(path)
    ranks = {p.name_hint: len(p.checked_type.shape) for p in mod["main"].params
             if p.name_hint not in params and isinstance(p.checked_type, TensorType)}
    missing = [n for n in ranks if n not in arrays]
    if missing:
        raise CommandError(f"{path}: no array for input {missing[0]!r} (the model's inputs: "
                           f"{', '.join(ranks)})")
    counts = {n: (len(arrays[n]) if arrays[n].ndim == r + 1 else 1) for n, r in ranks.items()}
    if len(set(counts.values())) != 1:
        raise CommandError(f"{path}: the inputs hold different numbers of samples: "
                           + ", ".join(f"{n}: {c}" for n, c in counts.items()))
    n = next(iter(counts.values()), 0)

    def sample(name: str, i: int) -> np.ndarray:
        a = arrays[name]
        return np.asarray(a[i] if a.ndim == ranks[name] + 1 else a, order="C")

    return [{k: sample(k, i) for k in ranks} for i in range(n)]


def maybe_quantize(mod, params: dict, args, console: Console):
    """``(mod, params)``, quantized when ``--quantize`` asks for it."""
    kind = getattr(args, "quantize", None)
    if not kind:
        if getattr(args, "calibration", None):
            raise CommandError("--calibration needs --quantize int8")
        return mod, params
    mode = MODES[kind]
    if mode == "static" and not args.calibration:
        raise CommandError("--quantize int8 needs --calibration DATA.npz (samples by input "
                           "name); --quantize int8-dynamic needs none")
    mod = InferType()(mod)
    samples = calibration_samples(args.calibration, mod, params) if mode == "static" else None
    what = f"{len(samples)} calibration samples, {args.calibration_method}" if samples else \
        "dynamic"
    with console.task(f"quantizing to int8 ({what})"):
        return quantize(mod, params, dataset=samples, mode=mode,
                        calibration=args.calibration_method), {}


__all__ = ["MODES", "add_quantize_options", "calibration_samples", "maybe_quantize"]
