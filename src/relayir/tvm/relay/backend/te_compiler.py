"""``relay.backend.te_compiler``: ``get().clear()`` (relayir's compiled kernels live in
an on-disk cache keyed by their source, which never needs clearing for correctness)."""


class TECompiler:
    def clear(self) -> None:
        """Nothing to clear: the kernel cache is keyed by source (see codegen/cache.py)."""


_COMPILER = TECompiler()


def get() -> TECompiler:
    return _COMPILER


__all__ = ["TECompiler", "get"]
