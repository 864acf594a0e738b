"""``create_executor``: Relay's one entry point for running a module.

``"debug"`` is the reference interpreter; the compiled executors (graph, vm, aot)
register themselves here as they are built.
"""

from __future__ import annotations

import numpy as np

from .errors import Error
from .ir.expr import Expr, Function
from .ir.module import IRModule
from .ir.types import TensorType
from .runtime.interpreter import Interpreter
from .runtime.values import Closure
from .typing.infer import infer_module


def check_tensor_arg(name: str, ty, value) -> np.ndarray:
    """Convert ``value`` to the parameter's dtype and check its shape against ``ty``."""
    if not isinstance(ty, TensorType):
        return value
    if not isinstance(value, np.ndarray):
        value = np.asarray(value, dtype=ty.dtype)
    if value.dtype.name != ty.dtype:
        raise Error(f"input {name}: expected dtype {ty.dtype}, found {value.dtype.name}")
    if value.ndim != len(ty.shape) or any(
        isinstance(d, int) and d != s for d, s in zip(ty.shape, value.shape)
    ):
        raise Error(f"input {name}: expected shape {ty}, found shape {value.shape}")
    return value


class DebugExecutor:
    """Runs ``@main`` (or any expression) through the reference interpreter."""

    def __init__(self, mod: IRModule, target: str = "numpy", device=None):
        self.mod = infer_module(mod.copy())  # the interpreter runs numpy references anyway
        self.interpreter = Interpreter(self.mod)

    def evaluate(self, expr: Expr | None = None):
        if expr is None:
            return self._callable(self.mod["main"], self.interpreter.global_closure(
                self.mod.get_global_var("main")))
        value = self.interpreter.eval(expr)
        if isinstance(value, Closure):
            return self._callable(value.func, value)
        return value

    def _callable(self, fn: Function, closure: Closure):
        params = fn.params

        def run(*args, **kwargs):
            args = list(args)
            for p in params[len(args):]:
                if p.name_hint not in kwargs:
                    raise Error(f"missing input {p.name_hint}")
                args.append(kwargs.pop(p.name_hint))
            if kwargs:
                raise Error(f"unknown inputs {', '.join(kwargs)}")
            if len(args) != len(params):
                raise Error(f"main takes {len(params)} inputs, found {len(args)}")
            checked = [
                check_tensor_arg(p.name_hint, p.checked_type if p.has_type else None, a)
                for p, a in zip(params, args)
            ]
            return self.interpreter.call_closure(closure, checked)

        return run


_EXECUTORS: dict = {"debug": DebugExecutor}


def register_executor(kind: str, cls) -> None:
    _EXECUTORS[kind] = cls


def create_executor(kind: str = "debug", mod: IRModule | None = None, device=None,
                    target: str = "numpy", params=None):
    """Relay's ``create_executor``; ``kind`` is ``"debug"`` (more as they land)."""
    if mod is None:
        mod = IRModule()
    try:
        cls = _EXECUTORS[kind]
    except KeyError:
        raise Error(
            f"unknown executor kind {kind!r}; available: {', '.join(sorted(_EXECUTORS))}"
        ) from None
    if params:
        from .ir.expr import const
        from .transform.bind import bind_params

        mod = bind_params(mod, {k: const(np.asarray(v)) for k, v in params.items()})
    return cls(mod, target=target, device=device)


def _register_builtin_executors() -> None:
    from .runtime.graph_executor import GraphExecutor  # imports only numpy

    register_executor("graph", GraphExecutor)


_register_builtin_executors()
