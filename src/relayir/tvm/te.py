"""``tvm.te``: only what Relay code uses to name shape dimensions (``te.size_var("n")``,
``te.var("n")``: a relayir ``SymbolicDim``). relayir's tensor expressions are
``relayir.te``, with their own API."""

from ..ir.types import SymbolicDim
from .runtime.ndarray import cpu, device  # noqa: F401 (TVM re-exports them here)


def size_var(name: str = "size", dtype: str = "int32", span=None) -> SymbolicDim:
    return SymbolicDim(name)


def var(name: str = "tindex", dtype: str = "int32", span=None) -> SymbolicDim:
    return SymbolicDim(name)


__all__ = ["size_var", "var"]
