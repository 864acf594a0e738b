"""``relay.backend``: ``Executor``/``Runtime`` descriptors, ``vm``, ``interpreter``."""

from __future__ import annotations

from . import interpreter, te_compiler, vm
from ._options import EXECUTORS, RUNTIMES, Described


class Executor(Described):
    """``Executor("graph")`` / ``Executor("aot", {...})``: which executor ``relay.build``
    makes (the options are checked, and otherwise not used: relayir's AOT entry point has
    one interface)."""

    KIND = "Executor"
    TABLE = EXECUTORS

    def __init__(self, name: str = "graph", options: dict | None = None):
        super().__init__(name, options)


class Runtime(Described):
    """``Runtime("cpp")`` / ``Runtime("crt", {...})``: accepted; relayir has one runtime."""

    KIND = "Runtime"
    TABLE = RUNTIMES

    def __init__(self, name: str = "cpp", options: dict | None = None):
        super().__init__(name, options)


__all__ = ["Executor", "Runtime", "interpreter", "te_compiler", "vm"]
