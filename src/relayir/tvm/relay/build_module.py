"""``relay.build``, ``relay.create_executor`` and ``bind_params_by_name`` with Relay's
signatures and defaults, over ``relayir.build`` and ``relayir.create_executor``.

Relay's defaults differ from relayir's: the target is ``"llvm"`` (relayir: ``"numpy"``),
``evaluate(expr)`` works on every executor kind (relayir's ``vm`` takes ``@main`` only),
and values come back as ``NDArray`` / ``ADT`` / ``ConstructorValue`` (relayir: numpy
arrays, tuples).
"""

from __future__ import annotations

import numpy as np

from ... import executor as _executor
from ...backend.build_module import bind_param_arrays
from ...backend.build_module import build as _build
from ...backend.build_module import optimize as _optimize
from ...errors import Error
from ...ir.analysis import free_vars
from ...ir.expr import Function, GlobalVar, Var, const
from ...ir.module import IRModule
from ...runtime.module import GraphExecutorFactoryModule
from ...transform.bind import bind
from ..runtime.container import from_tvm, to_tvm
from ..target import resolve_target

DEFAULT_TARGET = "llvm"


def _executor_kind(executor) -> str:
    if executor is None:
        return "graph"
    kind = getattr(executor, "name", executor)
    if kind not in ("graph", "aot"):
        raise Error(f"relay.build: executor {kind!r}; relayir builds 'graph' (and 'aot' "
                    f"where relayir.build offers it)")
    return kind


def build(ir_mod, target=None, target_host=None, executor=None, runtime=None,
          workspace_memory_pools=None, constant_memory_pools=None, params=None,
          mod_name: str = "default"):
    """Relay's ``relay.build``: a factory module (``lib["default"](dev)``,
    ``get_graph_json()``, ``get_lib()``, ``get_params()``, ``export_library``)."""
    kind = _executor_kind(executor)
    if isinstance(ir_mod, Function):
        ir_mod = IRModule.from_expr(ir_mod)
    tgt = resolve_target(target, DEFAULT_TARGET)
    params = {k: np.asarray(v) for k, v in (params or {}).items()}
    kwargs = {} if kind == "graph" else {"executor": kind}
    built = _build(ir_mod, target=tgt, params=params, mod_name=mod_name, **kwargs)
    if type(built) is GraphExecutorFactoryModule:
        built = FactoryModule(built.graph_json, built.lib, built.params, built.target,
                              built.mod_name, built.ir_mod)
    return built


class FactoryModule(GraphExecutorFactoryModule):
    """relayir's factory module, which also unpacks as Relay's older API returned it:
    ``graph_json, lib, params = relay.build(...)``."""

    def __iter__(self):
        return iter((self.graph_json, self.lib, dict(self.params)))


def bind_params_by_name(func: Function, params: dict) -> Function:
    """Replace ``func``'s parameters named in ``params`` by constants."""
    by_name = {}
    for p in func.params:
        if p.name_hint in by_name:
            raise Error(f"bind_params_by_name: more than one parameter is named "
                        f"{p.name_hint!r}")
        by_name[p.name_hint] = p
    mapping = {by_name[k]: const(np.asarray(v)) for k, v in params.items() if k in by_name}
    new = bind(func, mapping)
    if isinstance(new, Function):
        keep = [p for p in new.params if p not in mapping]
        new = Function(keep, new.body, new.ret_type, new.type_params, new.attrs)
    return new


def optimize(mod, target=None, params=None):
    """``(optimised module, params)``, as Relay's ``relay.optimize``."""
    if params:
        mod = bind_param_arrays(mod, params)
    return _optimize(mod, resolve_target(target, DEFAULT_TARGET)), {}


# ---------------------------------------------------------------- executors


class Executor:
    """What ``create_executor`` returns: ``evaluate(expr=None)`` gives a callable whose
    results are TVM values."""

    def __init__(self, kind: str, mod: IRModule, device, target):
        self.kind = kind
        self.mod = mod
        self.device = device
        self.target = target
        self._main = None

    def _make(self, mod: IRModule):
        return _executor.create_executor(self.kind, mod=mod, device=self.device,
                                         target=self.target)

    def evaluate(self, expr=None, binds=None):
        if binds:
            expr = bind(expr, binds)
        if expr is None or (isinstance(expr, GlobalVar) and expr.name_hint == "main"):
            if self._main is None:
                self._main = self._compiled(self.mod)
            return self._main
        if self.kind == "debug":
            value = self._make(self.mod).evaluate(expr)
            if callable(value):
                return self._wrap(value, None)
            return to_tvm(value, "interpreter")
        # graph / vm: the expression becomes @main of a copy of the module
        if isinstance(expr, GlobalVar):
            expr = self.mod[expr]
        if not isinstance(expr, Function):
            if free_vars(expr):
                raise Error(f"create_executor({self.kind!r}).evaluate: the expression has "
                            f"free variables")
            return to_tvm(self._compiled(_with_main(self.mod, Function([], expr)))(), "vm")
        return self._compiled(_with_main(self.mod, expr))

    def _compiled(self, mod: IRModule):
        names = [p.name_hint for p in mod["main"].params]  # as the caller spells them
        if self.kind == "graph":
            main = _unique_param_names(mod["main"])
            if main is not mod["main"]:
                mod = _with_main(mod, main)
        fn = self._make(mod).evaluate()
        return self._wrap(fn, mod["main"], names)

    def _wrap(self, fn, main: Function | None, names: list[str] | None = None):
        adt = "interpreter" if self.kind == "debug" else "vm"
        # TVM's graph executor copies a numpy input into the declared dtype (a cast)
        dtypes = ([getattr(p.type_annotation, "dtype", None) for p in main.params]
                  if self.kind == "graph" and main is not None else [])

        def run(*args, **kwargs):
            if kwargs and names is not None:
                args = [*args, *_by_name(names[len(args):], kwargs)]
                kwargs = {}
            args = [_cast(from_tvm(a), d) for a, d in zip(args, dtypes + [None] * len(args))]
            kwargs = {k: from_tvm(v) for k, v in kwargs.items()}
            return to_tvm(fn(*args, **kwargs), adt)

        run.module = getattr(fn, "module", None)
        return run


def _by_name(names: list[str], kwargs: dict) -> list:
    """The inputs after the positional ones, as TVM's executors take them: each by its
    parameter's name (two parameters of one name take the same value); a name no
    parameter has is ignored, as TVM ignores it."""
    missing = [n for n in names if n not in kwargs]
    if missing:
        raise Error(f"missing input {missing[0]} (inputs by name: {', '.join(kwargs)})")
    return [kwargs[n] for n in names]


def _cast(value, dtype):
    """A plain numpy array cast to ``dtype`` (an ``NDArray`` is passed as it is: TVM
    refuses a mismatched one too)."""
    if dtype is None or type(value) is not np.ndarray or value.dtype.name == dtype:
        return value
    return value.astype(dtype)


def _unique_param_names(fn: Function) -> Function:
    """``fn`` with distinct parameter names (``x``, ``x_1``, ...): relayir's graph
    executor takes inputs by name, TVM's by position, so two parameters both named
    ``input`` must not collide."""
    names = [p.name_hint for p in fn.params]
    if len(set(names)) == len(names):
        return fn
    taken, seen, mapping = set(names), set(), {}
    for p in fn.params:
        if p.name_hint in seen:
            i = 1
            while f"{p.name_hint}_{i}" in taken:
                i += 1
            taken.add(f"{p.name_hint}_{i}")
            mapping[p] = Var(f"{p.name_hint}_{i}", p.type_annotation)
        seen.add(p.name_hint)
    body = bind(fn.body, mapping)
    return Function([mapping.get(p, p) for p in fn.params], body, fn.ret_type, fn.type_params,
                    fn.attrs)


def _with_main(mod: IRModule, fn: Function) -> IRModule:
    new = mod.copy()
    new["main"] = fn
    return new


def create_executor(kind: str = "debug", mod: IRModule | None = None, device=None,
                    target=DEFAULT_TARGET, params=None) -> Executor:
    """Relay's ``create_executor``: ``kind`` is ``"debug"`` (the interpreter),
    ``"graph"``, ``"vm"`` or ``"aot"``; ``target`` defaults to ``"llvm"``."""
    if kind not in _executor.EXECUTORS:
        raise Error(f"create_executor: unknown kind {kind!r}; relayir has "
                    f"{', '.join(sorted(_executor.EXECUTORS))}")
    mod = IRModule() if mod is None else mod
    if params:
        mod = bind_param_arrays(mod, params)
    return Executor(kind, mod, device, resolve_target(target, DEFAULT_TARGET))


__all__ = ["DEFAULT_TARGET", "Executor", "bind_params_by_name", "build", "create_executor",
           "optimize"]
