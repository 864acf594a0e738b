"""Comparing an executor's result with the interpreter's, as the fuzzer does.

Agreement: shapes, dtypes and tuple structure equal; integers and bools equal; NaN
positions, infinities (with their sign) and the sign of zeros equal; finite floats
within a small per-dtype tolerance of the oracle (``TOLERANCE``: a few hundred ulps of
the element itself, never of another value).

A difference beyond that is a mismatch unless a rule explains it, element by element,
from the bounds ``fuzz_bounds.error_bounds`` derives from the computation:

- ``error bound``: a finite float within the rounding bound of its own terms (a sum
  that cancels large terms, a Winograd convolution), or a zero whose sign rounding
  decides (its bound is not 0);
- ``signed-zero tie``: a max or min (a pool, a reduction) whose window held both +0.0
  and -0.0: which zero comes out depends on the order the operands are compared in
  (numpy's own answer does), so either sign is the op's answer; and an exactly zero
  result of a batch norm, which every compiler folds into ``x * scale + shift``, or of an
  interpolation (resize, upsampling, grid_sample: separable in the reference, tap by tap
  in C), whose zero's sign follows the order of the terms;
- ``undetermined``: the element's exact value is not fixed at the program's precision
  (a comparison, ``floor`` or integer cast of a value within rounding of the decision,
  a pole within rounding, and all that is computed from it): any result, NaN and Inf
  included, is as right as the oracle's.

``judge`` returns what no rule explains and the count of excused elements by rule;
every run of the fuzzer prints those counts (``fuzz.summary``).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from .fuzz_bounds import ZERO_TIE

# dtype -> (rtol, atol)
TOLERANCE = {"float16": (1e-2, 1e-3), "float32": (1e-4, 1e-6), "float64": (1e-9, 1e-12)}
RULES = ("error bound", "signed-zero tie", "undetermined")


def differences(want, got, where: str = "out") -> list[str]:
    """What differs between the oracle's ``want`` and ``got`` (empty when they agree)."""
    return judge(want, got, None, where)[0]


def judge(want, got, bounds=None, where: str = "out") -> tuple[list[str], Counter]:
    """The differences no rule explains, and the excused elements by rule. ``bounds``
    (the structure of ``want``, or ``None``: no rule applies) from ``error_bounds``."""
    out: list[str] = []
    excused: Counter = Counter()
    stack = [(want, got, bounds, where)]
    while stack:
        w, g, b, path = stack.pop()
        if isinstance(w, tuple) or isinstance(g, tuple):
            if not (isinstance(w, tuple) and isinstance(g, tuple)) or len(w) != len(g):
                out.append(f"{path}: structure {_kind(w)} vs {_kind(g)}")
                continue
            bs = b if isinstance(b, tuple) and len(b) == len(w) else (None,) * len(w)
            stack.extend((x, y, z, f"{path}[{k}]") for k, (x, y, z) in enumerate(zip(w, g, bs)))
            continue
        w, g = np.asarray(w), np.asarray(g)
        if w.dtype != g.dtype or w.shape != g.shape:
            out.append(f"{path}: {_kind(w)} vs {_kind(g)}")
            continue
        bad = mismatch_mask(w, g)
        if not bad.any():
            continue
        if b is not None and np.shape(b) == w.shape:
            rule = explained_by(w, g, np.asarray(b, "float64"))
            for name in RULES:
                excused[name] += int((bad & (rule == name)).sum())
            bad &= rule == ""
            if not bad.any():
                continue
        at = np.argwhere(bad)[:4].tolist() if bad.ndim else [[]]
        out.append(f"{path}: {int(bad.sum())} of {bad.size} differ, at {at}: "
                   f"want {w[bad][:4].tolist()} got {g[bad][:4].tolist()}")
    return out, excused


def _kind(v) -> str:
    if isinstance(v, tuple):
        return f"tuple of {len(v)}"
    return f"{np.asarray(v).dtype}{list(np.shape(v))}"


def mismatch_mask(w: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Where ``g`` is not ``w`` under the rules above (same shape and dtype assumed)."""
    if w.dtype.kind not in "fc":
        return w != g
    wf, gf = w.astype("float64"), g.astype("float64")
    nan_w, nan_g = np.isnan(wf), np.isnan(gf)
    inf = np.isinf(wf) | np.isinf(gf)
    rtol, atol = TOLERANCE.get(w.dtype.name, (1e-4, 1e-5))
    finite = ~(nan_w | nan_g | inf)
    with np.errstate(invalid="ignore"):
        far = finite & (np.abs(wf - gf) > atol + rtol * np.abs(wf))
        zero_sign = (wf == 0) & (gf == 0) & (np.signbit(wf) != np.signbit(gf))
    return (nan_w != nan_g) | (inf & (wf != gf)) | far | zero_sign


def explained_by(w: np.ndarray, g: np.ndarray, bound: np.ndarray) -> np.ndarray:
    """Per element, the rule that explains ``g`` against ``w`` ("" where none does)."""
    out = np.full(w.shape, "", dtype=object)
    out[np.isinf(bound)] = "undetermined"
    if w.dtype.kind == "f":
        wf, gf = w.astype("float64"), g.astype("float64")
        with np.errstate(invalid="ignore"):
            within = (np.isfinite(wf) & np.isfinite(gf) & np.isfinite(bound) & (bound > 0)
                      & (np.abs(wf - gf) <= bound))
        out[within] = "error bound"
        tie = (bound == ZERO_TIE) & (wf == 0) & (gf == 0)
        out[tie] = "signed-zero tie"
    return out


__all__ = ["RULES", "TOLERANCE", "differences", "explained_by", "judge", "mismatch_mask"]
