"""``relay.backend``: ``Executor``/``Runtime`` descriptors, ``vm``, ``interpreter``."""

from __future__ import annotations

from . import interpreter, te_compiler, vm


class Executor:
    """``Executor("graph")`` / ``Executor("aot", {...})``: which executor ``relay.build``
    makes."""

    def __init__(self, name: str = "graph", options: dict | None = None):
        self.name = name
        self.options = dict(options or {})

    def __repr__(self) -> str:
        return self.name


class Runtime:
    """``Runtime("cpp")``: accepted; relayir has one runtime."""

    def __init__(self, name: str = "cpp", options: dict | None = None):
        self.name = name
        self.options = dict(options or {})

    def __repr__(self) -> str:
        return self.name


__all__ = ["Executor", "Runtime", "interpreter", "te_compiler", "vm"]
