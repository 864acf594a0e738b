"""``tvm.runtime.name_transforms``: ``sanitize_name``, the C identifier TVM makes from a
user's name (``"input:0"`` -> ``"input_0"``).

relayir has one sanitiser for every name that reaches C (``relayir.tir.names``); this is
that sanitiser without the kernel prefix and length cut relayir's own kernels add.
"""

from __future__ import annotations

from ...errors import Error
from ...tir.names import c_identifier


def sanitize_name(original_name: str) -> str:
    """``original_name`` with every character that is not an ASCII letter, digit or ``_``
    replaced by ``_`` (the length is kept, so two names that differ only there collide,
    as in TVM)."""
    if not original_name:
        raise Error("Name is empty")
    return c_identifier(original_name, prefix="", max_len=None)


__all__ = ["sanitize_name"]
