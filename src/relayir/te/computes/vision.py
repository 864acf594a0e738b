"""Computes of ``op/vision.py``: none. Both ops run through their numpy references."""

from __future__ import annotations

from .common import declare_reference_only

declare_reference_only("vision.roi_align",
                       "with sample_ratio <= 0 the samples per bin depend on each roi's "
                       "extent, a data-dependent loop bound")
declare_reference_only("vision.non_max_suppression",
                       "sorting and a greedy data-dependent selection; the output length "
                       "is data")
