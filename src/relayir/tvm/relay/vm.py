"""``relay.vm``: ``compile(mod, target)``, ``VMCompiler`` and ``VMExecutor`` with Relay's
signatures (the target defaults to ``"llvm"``); the executable runs on
``tvm.runtime.vm.VirtualMachine``."""

from __future__ import annotations

import numpy as np

from ...vm import compile as _compile
from ..runtime.vm import Executable, VirtualMachine
from ..target import resolve_target
from .build_module import DEFAULT_TARGET, create_executor, optimize


def compile(mod, target=None, target_host=None, params=None):  # noqa: A001 (Relay's name)
    """Relay's ``relay.vm.compile``: an ``Executable`` for ``VirtualMachine(exe, dev)``."""
    params = {k: np.asarray(v) for k, v in (params or {}).items()}
    return Executable.adapt(_compile(mod, target=resolve_target(target, DEFAULT_TARGET),
                                     params=params))


class VMCompiler:
    """Relay's two-step compiler: ``lower(mod, target)`` then ``get_exec()``."""

    def __init__(self):
        self._params: dict = {}
        self._exec: Executable | None = None

    def set_params(self, params) -> None:
        self._params = dict(params or {})

    def get_params(self) -> dict:
        return dict(self._params)

    def lower(self, mod, target=None, target_host=None) -> None:
        self._exec = compile(mod, target, params=self._params)

    def codegen(self) -> None:
        """Code generation happened in ``lower``."""

    def get_exec(self) -> Executable:
        return self._exec

    def optimize(self, mod, target=None, target_host=None, params=None):
        return optimize(mod, target, params or self._params)


class VMExecutor:
    """``VMExecutor(mod, device, target).evaluate()``: what ``create_executor("vm")``
    gives."""

    def __init__(self, mod, device=None, target=None):
        self._executor = create_executor("vm", mod=mod, device=device, target=target)

    def evaluate(self, expr=None):
        return self._executor.evaluate(expr)


__all__ = ["Executable", "VMCompiler", "VMExecutor", "VirtualMachine", "compile"]
