"""``install_alias()``: ``import tvm`` / ``import tvm.X`` resolve to ``relayir.tvm`` /
``relayir.tvm.X``, so unmodified Relay-era code runs.

A ``sys.meta_path`` finder placed first: for ``tvm`` and ``tvm.*`` it imports the
``relayir.tvm`` module of the same dotted path and hands that very object to the import
system, so ``tvm.relay is relayir.tvm.relay`` (one module, two names). The original
``__spec__`` is put back after the import system stamps the alias's spec on it.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys

from ..errors import Error

ALIAS = "tvm"
TARGET = __name__.rsplit(".", 1)[0]  # relayir.tvm


class AliasError(Error):
    """The ``tvm`` name is already taken by another package in this process."""


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, module):
        self.module = module
        self.spec = module.__spec__

    def create_module(self, spec):
        return self.module

    def exec_module(self, module) -> None:
        module.__spec__ = self.spec  # keep relayir.tvm.X's own identity


class TvmAliasFinder(importlib.abc.MetaPathFinder):
    """Finds ``tvm`` and ``tvm.*`` as the ``relayir.tvm`` modules of the same path."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != ALIAS and not fullname.startswith(ALIAS + "."):
            return None
        real = TARGET + fullname[len(ALIAS):]
        try:
            module = importlib.import_module(real)
        except ModuleNotFoundError as exc:
            if exc.name != real:
                raise
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: relayir.tvm has no {real!r} (see "
                f"docs/tvm-compat.md for what the compatibility layer covers)",
                name=fullname) from None
        search = getattr(module, "__path__", None)
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(module),
                                              is_package=search is not None)


def _is_alias(module) -> bool:
    return getattr(module, "__name__", "").startswith(TARGET)


def install_alias() -> None:
    """Make ``import tvm`` import ``relayir.tvm`` (idempotent). Refuses when a real
    ``tvm`` is already imported: the two cannot share the name in one process."""
    existing = sys.modules.get(ALIAS)
    if existing is not None and not _is_alias(existing):
        where = getattr(existing, "__file__", None) or "an unknown location"
        raise AliasError(
            f"install_alias: a real 'tvm' package is already imported (from {where}); "
            f"call relayir.tvm.install_alias() before anything imports tvm, or import "
            f"relayir.tvm directly")
    if not any(isinstance(f, TvmAliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, TvmAliasFinder())


def uninstall_alias() -> None:
    """Undo ``install_alias``: drop the finder and the ``tvm`` names it made."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, TvmAliasFinder)]
    for name in [n for n in sys.modules if n == ALIAS or n.startswith(ALIAS + ".")]:
        if _is_alias(sys.modules[name]):
            del sys.modules[name]


__all__ = ["AliasError", "TvmAliasFinder", "install_alias", "uninstall_alias"]
