"""``tvm._ffi``: ``base.TVMError`` and the global-function registry's names (relayir has
no C++ FFI and no registry of packed functions)."""

from ..error import NotInRelayirError, not_in_relayir
from . import base

_NO_REGISTRY = "relayir has no registry of global (packed) functions"
register_func = not_in_relayir("tvm.register_func", _NO_REGISTRY)
register_object = not_in_relayir("tvm.register_object", _NO_REGISTRY)


def get_global_func(name: str, allow_missing: bool = False):
    """``None`` with ``allow_missing`` (no function is registered in relayir), else
    ``NotInRelayirError`` naming the function."""
    if allow_missing:
        return None
    raise NotInRelayirError(f"tvm.get_global_func({name!r}) is not part of relayir: "
                            f"{_NO_REGISTRY}")


__all__ = ["base", "get_global_func", "register_func", "register_object"]
