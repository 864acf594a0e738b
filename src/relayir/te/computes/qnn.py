"""Computes of ``op/qnn``: none of their own. ``CanonicalizeQNN`` (in the pipeline at
every opt level) rewrites each ``qnn.*`` op into integer and float ops that have
computes; a program lowered without the pipeline still runs, through the references."""

from __future__ import annotations

from ...op import qnn as _qnn
from .common import declare_reference_only

for _name in _qnn.op.__all__:
    declare_reference_only(f"qnn.{_name}", "CanonicalizeQNN lowers it to integer ops first")
