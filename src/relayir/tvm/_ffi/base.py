"""``tvm._ffi.base.TVMError``: relayir's ``Error``."""

from ..error import TVMError

__all__ = ["TVMError"]
