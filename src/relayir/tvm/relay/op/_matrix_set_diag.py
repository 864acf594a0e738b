"""``relay.matrix_set_diag(data, diagonal, k=0, align="RIGHT_LEFT")`` as relayir ops:
the diagonals ``k`` (one offset, or a band ``(k_lo, k_hi)``) of each innermost matrix of
``data`` replaced by ``diagonal``'s values, as TensorFlow's ``MatrixSetDiagV3`` and
Relay define it.

``diagonal`` is ``(..., L)`` for one offset, ``(..., k_hi - k_lo + 1, L)`` for a band
(row 0 is ``k_hi``), ``L`` the longest diagonal of the band. A diagonal shorter than
``L`` is aligned left (its values first) or right (last): ``align``'s first word is for
the diagonals at or above the main one, its second for those below. The matrix shape
is static, so where each element comes from is a constant: ``where(mask, take(flat
diagonal, index), data)``.
"""

from __future__ import annotations

import numpy as np

from ....errors import Error
from ....ir.expr import Constant
from ....op.transform import reshape, take, where
from ._composed import _type_of

ALIGNS = ("RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT")


def diagonal_sources(rows: int, cols: int, k, align: str) -> tuple[np.ndarray, np.ndarray]:
    """``(mask, index)``, both ``(rows, cols)``: whether an element is on a set diagonal,
    and its position in the flattened ``(diagonals, L)`` values."""
    lo, hi = (int(k), int(k)) if np.ndim(k) == 0 else (int(k[0]), int(k[-1]))
    if align not in ALIGNS:
        raise Error(f"relay.matrix_set_diag: align is one of {ALIGNS}, found {align!r}")
    if lo > hi or hi >= cols or -lo >= rows:
        raise Error(f"relay.matrix_set_diag: diagonals k=({lo}, {hi}) of a {rows}x{cols} "
                    f"matrix need k_lo <= k_hi, k_hi < {cols}, k_lo > {-rows}")
    longest = min(rows + min(0, hi), cols - max(0, lo))
    upper_right, lower_right = (word == "RIGHT" for word in align.split("_"))
    i, j = np.indices((rows, cols))
    d = j - i
    length = np.minimum(rows + np.minimum(0, d), cols - np.maximum(0, d))
    right = np.where(d >= 0, upper_right, lower_right)
    position = np.minimum(i, j) + np.where(right, longest - length, 0)
    mask = (d >= lo) & (d <= hi)
    index = np.where(mask, (hi - d) * longest + position, 0)
    return mask, index.astype("int64")


def matrix_set_diag(data, diagonal, k=0, align: str = "RIGHT_LEFT"):
    t = _type_of(data, "relay.matrix_set_diag")
    if len(t.shape) < 2 or not all(isinstance(s, int) for s in t.shape[-2:]):
        raise Error(f"relay.matrix_set_diag: data must end in a static matrix, found {t}")
    mask, index = diagonal_sources(t.shape[-2], t.shape[-1], k, align)
    if np.ndim(k) != 0:  # a band: its rows of values flattened into one axis
        diagonal = reshape(diagonal, [0] * (len(t.shape) - 2) + [-3])
    picked = take(diagonal, Constant(index), axis=-1)
    return where(Constant(mask), picked, data)


__all__ = ["matrix_set_diag"]
