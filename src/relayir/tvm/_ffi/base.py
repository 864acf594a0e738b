"""``tvm._ffi.base.TVMError``: relayir's ``Error``."""

from ..error import TVMError


def py_str(value) -> str:
    """TVM's bytes-to-str helper."""
    return value.decode("utf-8") if isinstance(value, (bytes, bytearray)) else str(value)


__all__ = ["TVMError", "py_str"]
