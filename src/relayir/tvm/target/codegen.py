"""``tvm.target.codegen``: relayir's ``"llvm"`` target generates C for the system C
compiler; there is no LLVM. ``llvm_version_major()`` is 0 (``None`` with
``allow_none=True``), so code gated on an LLVM version (``skipif(llvm_version_major() <
15)``) takes the "feature not available" branch; every other name raises
``NotInRelayirError``."""

from __future__ import annotations

from ..error import refusing_module


def llvm_version_major(allow_none: bool = False) -> int | None:
    return None if allow_none else 0


__getattr__ = refusing_module(__name__, "relayir generates C and calls the system C "
                              "compiler, not LLVM")

__all__ = ["llvm_version_major"]
