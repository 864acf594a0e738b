"""``tvm._ffi``: only ``base.TVMError`` (relayir has no C++ FFI)."""

from . import base

__all__ = ["base"]
