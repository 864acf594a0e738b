"""``create_executor``: Relay's one entry point for running a module.

``"debug"`` is the reference interpreter; ``"graph"`` builds ``@main`` with
``relayir.build`` and runs it on the graph executor; ``"aot"`` builds it into one native
entry point (``executor="aot"``) run by ``AotModule``; ``"vm"`` compiles the module with
``relayir.vm.compile``. This module sits above the back end and the VM (it uses both),
so the executors are one table here, not registered from below.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .backend.build_module import build
from .errors import Error
from .ir.expr import Expr, Function, const
from .ir.module import IRModule
from .ir.types import TupleType
from .runtime.executor import AotModule
from .runtime.graph_executor import GraphExecutorError, GraphModule
from .runtime.interpreter import Interpreter
from .runtime.tensors import check_tensor_input
from .runtime.values import Closure
from .transform.bind import bind_params
from .typing.infer import infer_module
from .vm import VirtualMachine
from .vm import compile as vm_compile
from .vm.shape_func import DIM_RANGES, bind_input_dims, parse_dim_ranges


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
        ranges = parse_dim_ranges(fn.attrs.get(DIM_RANGES)) if fn.attrs else {}

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
                check_tensor_input(p.name_hint, a, p.checked_type if p.has_type else None)
                for p, a in zip(params, args)
            ]
            # one symbolic dim is one size, inside the range the model was made for
            # (e.g. torch's derived range), as the VM checks it
            bind_input_dims("@main", [p.name_hint for p in params],
                            [p.checked_type if p.has_type else None for p in params],
                            checked, ranges)
            return self.interpreter.call_closure(closure, checked)

        return run


class GraphExecutor:
    """``create_executor("graph", mod, target=...)``: build ``@main``, run it per call."""

    executor = "graph"  # what ``build`` makes, and what runs it
    runner = GraphModule

    def __init__(self, mod, target="numpy", device=None):
        self.mod = mod
        self.target = target
        self.device = device

    def evaluate(self, expr=None):
        mod = self.mod
        if expr is not None:
            if not isinstance(expr, Function):
                raise GraphExecutorError("the graph executor evaluates @main or a function")
            mod = mod.copy()
            mod["main"] = expr
        lib = build(mod, target=self.target, executor=self.executor)
        gm = self.runner(lib)
        ret = lib.ir_mod["main"].checked_type.ret_type
        names = list(gm.get_input_info()[0])
        n_out = gm.get_num_outputs()

        def run(*args, **kwargs):
            if len(args) > len(names):
                raise GraphExecutorError(f"main takes {len(names)} inputs, found {len(args)}")
            for name, a in zip(names, args):
                if name in kwargs:
                    raise GraphExecutorError(f"input {name!r} given twice")
                kwargs[name] = a
            missing = [n for n in names if n not in kwargs]
            if missing:
                raise GraphExecutorError(f"missing inputs: {', '.join(missing)}")
            gm.run(**kwargs)
            return _restructure(ret, [gm.get_output(i) for i in range(n_out)])

        run.module = gm
        return run


def _restructure(ty, flat: Sequence[np.ndarray]):
    it = iter(flat)

    def build(t):
        if isinstance(t, TupleType):
            return tuple(build(f) for f in t.fields)
        return next(it)

    return build(ty)


class AotExecutor(GraphExecutor):
    """``create_executor("aot", mod, target="cpu")``: ``@main`` as one native entry point."""

    executor = "aot"
    runner = AotModule


class VMExecutor:
    """``create_executor("vm", mod, target=...)``: compiles ``@main`` once."""

    def __init__(self, mod, target: str = "numpy", device=None):
        self.mod = mod
        self.target = target
        self.executable = None
        self.vm = None

    def evaluate(self, expr=None):
        if expr is not None:
            raise Error("the vm executor evaluates the module's @main only")
        if self.vm is None:
            self.executable = vm_compile(self.mod, target=self.target)
            self.vm = VirtualMachine(self.executable)
        vm = self.vm
        params = self.executable.functions[self.executable.func_index["main"]].param_names

        def run(*args, **kwargs):
            args = list(args)
            for p in params[len(args):]:
                if p not in kwargs:
                    raise Error(f"missing input {p}")
                args.append(kwargs.pop(p))
            if kwargs:
                raise Error(f"unknown inputs {', '.join(kwargs)}")
            return vm.run(*args)

        run.vm = vm
        return run


EXECUTORS: dict[str, type] = {"debug": DebugExecutor, "graph": GraphExecutor,
                              "aot": AotExecutor, "vm": VMExecutor}


def create_executor(kind: str = "debug", mod: IRModule | None = None, device=None,
                    target: str = "numpy", params=None):
    """Relay's ``create_executor``; ``kind`` is ``"debug"``, ``"graph"``, ``"aot"`` or
    ``"vm"``."""
    if mod is None:
        mod = IRModule()
    try:
        cls = EXECUTORS[kind]
    except KeyError:
        raise Error(
            f"unknown executor kind {kind!r}; available: {', '.join(sorted(EXECUTORS))}"
        ) from None
    if params:
        mod = bind_params(mod, {k: const(np.asarray(v)) for k, v in params.items()})
    return cls(mod, target=target, device=device)
