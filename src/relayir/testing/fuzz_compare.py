"""Comparing an executor's result with the interpreter's, as the fuzzer does.

Integers and bools must match exactly; so must NaN positions and infinities (with their
sign), shapes, dtypes and tuple structure. Finite floats may differ by rounding only:
fused kernels reassociate sums and contract multiply-adds, so each dtype gets a relative
tolerance and a small absolute floor; a larger difference must be explained by the
program's conditioning (below).

A float difference can still come from rounding when the program is ill-conditioned
(``x - y`` of nearly equal values, then a division or a comparison). ``ill_conditioned``
tells: it reruns the oracle on inputs nudged by a few ulps and reports whether the
oracle itself moves as much at the differing positions.
"""

from __future__ import annotations

import numpy as np

# dtype -> (rtol, atol)
TOLERANCE = {"float16": (1e-2, 1e-3), "float32": (1e-4, 1e-6), "float64": (1e-9, 1e-12)}


def differences(want, got, where: str = "out") -> list[str]:
    """What differs between the oracle's ``want`` and ``got`` (empty when they agree)."""
    out: list[str] = []
    stack = [(want, got, where)]
    while stack:
        w, g, path = stack.pop()
        if isinstance(w, tuple) or isinstance(g, tuple):
            if not (isinstance(w, tuple) and isinstance(g, tuple)) or len(w) != len(g):
                out.append(f"{path}: structure {_kind(w)} vs {_kind(g)}")
                continue
            stack.extend((a, b, f"{path}[{k}]") for k, (a, b) in enumerate(zip(w, g)))
            continue
        out.extend(_tensor_differences(np.asarray(w), np.asarray(g), path))
    return out


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
    return (nan_w != nan_g) | (inf & (wf != gf)) | far


def _tensor_differences(w: np.ndarray, g: np.ndarray, path: str) -> list[str]:
    if w.dtype != g.dtype or w.shape != g.shape:
        return [f"{path}: {_kind(w)} vs {_kind(g)}"]
    bad = mismatch_mask(w, g)
    if not bad.any():
        return []
    at = np.argwhere(bad)[:4].tolist() if bad.ndim else [[]]
    return [f"{path}: {int(bad.sum())} of {bad.size} differ, at {at}: "
            f"want {w[bad][:4].tolist()} got {g[bad][:4].tolist()}"]


def nudge(rng: np.random.Generator, x: np.ndarray, ulps: float = 4.0) -> np.ndarray:
    """``x`` with its finite, nonzero float values moved by up to ``ulps`` ulps."""
    if x.dtype.kind != "f" or x.size == 0:
        return x
    eps = float(np.finfo(x.dtype).eps) * ulps
    with np.errstate(all="ignore"):
        moved = x * (1 + rng.uniform(-eps, eps, x.shape)).astype(x.dtype)
    keep = ~np.isfinite(x) | (x == 0)
    return np.where(keep, x, moved).astype(x.dtype)


def _flat(v) -> list:
    out, stack = [], [v]
    while stack:
        x = stack.pop()
        if isinstance(x, tuple):
            stack.extend(reversed(x))
        else:
            out.append(np.asarray(x))
    return out


def _explained(w: np.ndarray, g: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Where the nudged oracle ``m`` moves away from ``w`` as far as ``g`` does (floats:
    at least half the distance, or into NaN/Inf as ``g``; other dtypes: any change)."""
    if w.dtype.kind not in "fc":
        return m != w
    wf, gf, mf = (a.astype("float64") for a in (w, g, m))
    with np.errstate(invalid="ignore"):
        far = np.abs(mf - wf) >= 0.5 * np.abs(gf - wf)
    status = ~np.isfinite(mf) & ~np.isfinite(gf)
    return np.where(np.isfinite(wf) & np.isfinite(gf) & np.isfinite(mf), far,
                    status | (~np.isfinite(wf) & mismatch_mask(w, m)))


def rounding_at_scale(want, got, scale: float, ulps: float = 64.0) -> bool:
    """Whether every float difference is within ``ulps`` ulps of ``scale``, the largest
    finite magnitude among the program's inputs and constants: reassociating a sum that
    holds a term of that size moves the result by that much however small the result
    is (``1e15 - 1e15 + 0.04``), which nudging the inputs does not reproduce. NaN, Inf
    and non-float differences are never explained this way."""
    flat_w, flat_g = _flat(want), _flat(got)
    if len(flat_w) != len(flat_g):
        return False
    for w, g in zip(flat_w, flat_g):
        if w.shape != g.shape or w.dtype != g.dtype:
            return False
        bad = mismatch_mask(w, g)
        if not bad.any():
            continue
        if w.dtype.kind != "f":
            return False
        wf, gf = w[bad].astype("float64"), g[bad].astype("float64")
        if not (np.isfinite(wf).all() and np.isfinite(gf).all()):
            return False
        if (np.abs(wf - gf) > ulps * float(np.finfo(w.dtype).eps) * scale).any():
            return False
    return True


def ill_conditioned(run_oracle, inputs: list, want, got, tries: int = 3) -> bool:
    """Whether the oracle, on slightly nudged inputs, moves away from its own result at
    least as far as ``got`` does, wherever ``got`` differs (so the difference is
    rounding in an ill-conditioned program). ``run_oracle(inputs, ulps)`` may nudge the
    program's constants by ``ulps`` too."""
    rng = np.random.default_rng(0)
    flat_w, flat_g = _flat(want), _flat(got)
    if len(flat_w) != len(flat_g) or any(w.shape != g.shape or w.dtype != g.dtype
                                         for w, g in zip(flat_w, flat_g)):
        return False
    bad = [mismatch_mask(w, g) for w, g in zip(flat_w, flat_g)]
    covered = [np.zeros_like(b) for b in bad]
    for ulps in (4.0, 64.0, 1024.0)[:tries]:
        try:
            moved = _flat(run_oracle([nudge(rng, np.asarray(x), ulps) for x in inputs], ulps))
        except Exception:  # noqa: BLE001  (the nudged program failing says nothing)
            continue
        for k, (w, g, m) in enumerate(zip(flat_w, flat_g, moved)):
            if w.shape == m.shape and w.dtype == m.dtype:
                covered[k] |= _explained(w, g, m)
    return all(not (b & ~c).any() for b, c in zip(bad, covered))
