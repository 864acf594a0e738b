"""Gradient status of ``op/vision.py``.

``non_max_suppression`` outputs integer indices: non-differentiable. ``roi_align`` is
differentiable w.r.t. ``data`` (a scatter of the bilinear sample weights) and ``rois``
but has no rule yet: asking for it is a clear error (``REFUSED``), never a silent zero.
"""

from __future__ import annotations

NON_DIFFERENTIABLE = frozenset({"vision.non_max_suppression"})

REFUSED = {
    "vision.roi_align": "no gradient rule yet (a scatter of the bilinear sample weights "
                        "into data, slopes into rois)",
}
