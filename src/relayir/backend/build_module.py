"""``relayir.build``: optimise a module, turn ``@main`` into a graph and its kernels.

The steps, under the current ``PassContext``:

1. bind ``params`` (weights become constants; their shapes and dtypes are checked);
2. ``optimize``: the pipeline of ``transform.pipeline`` (each pass runs when the
   context's opt level reaches the level it declares);
3. graph codegen: ``@main`` → TVM's graph JSON with its memory plan, the params and one
   primitive function per distinct kernel (``graph_codegen``);
4. lowering: the target's lowering turns the primitive functions into a kernel library
   (``numpy``: the ops' numpy references; ``cpu``: generated C, once registered).

Targets: ``"numpy"``, and ``"cpu"`` with its TVM-style aliases ``"llvm"``,
``"llvm -mcpu=..."`` and ``"c"``. A target's lowering is registered with
``register_lowering(kind, fn)``; ``fn(functions, target) -> KernelLibrary`` gets the
``(kernel name, primitive function)`` pairs of the whole module at once, so a C
backend can compile all kernels in one translation unit.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import Error
from ..ir.expr import Function, const
from ..ir.functor import post_order
from ..ir.module import IRModule
from ..ir.types import TensorType
from ..runtime.module import GraphExecutorFactoryModule
from ..transform import pipeline
from ..transform.bind import bind_params
from ..typing.infer import infer_module
from .graph_codegen import check_static, graph_codegen
from .kernels import KernelLibrary, lower_numpy


class BuildError(Error):
    """``build`` cannot compile this module for this target."""


# ---------------------------------------------------------------- targets


@dataclass(frozen=True)
class Target:
    """A parsed target string: ``kind`` is ``"numpy"`` or ``"cpu"``; ``options`` are the
    ``-key=value`` flags of an ``"llvm ..."`` string."""

    kind: str
    options: tuple[str, ...] = ()
    text: str = ""

    @staticmethod
    def parse(target) -> Target:
        if isinstance(target, Target):
            return target
        if target is None:
            return Target("numpy", (), "numpy")
        if not isinstance(target, str):
            raise BuildError(f"a target is a string such as 'numpy' or 'cpu', found {target!r}")
        words = target.split()
        head = words[0] if words else ""
        kind = {"numpy": "numpy", "cpu": "cpu", "llvm": "cpu", "c": "cpu"}.get(head)
        if kind is None:
            raise BuildError(
                f"unknown target {target!r}; expected 'numpy', 'cpu' or an 'llvm ...' string")
        return Target(kind, tuple(words[1:]), target)

    def __str__(self) -> str:
        return self.text or self.kind


_LOWERINGS: dict[str, Callable] = {"numpy": lambda functions, target: lower_numpy(
    functions, str(target))}


def register_lowering(kind: str, lower: Callable[[list, Target], KernelLibrary]) -> None:
    """Make ``build(target=kind)`` lower primitive functions with ``lower``."""
    _LOWERINGS[kind] = lower


def get_lowering(target: Target) -> Callable:
    lower = _LOWERINGS.get(target.kind)
    if lower is None and target.kind == "cpu":
        try:  # the C backend registers its lowering when imported
            importlib.import_module("relayir.codegen")
        except ModuleNotFoundError as exc:
            if exc.name not in ("relayir.codegen",):
                raise
        lower = _LOWERINGS.get(target.kind)
        if lower is None:
            raise BuildError(
                f"target {str(target)!r}: the cpu target (tensor expressions → C) is not built "
                f"yet in this relayir; build with target=\"numpy\" to run the model with the "
                f"numpy reference kernels (no C compiler needed)")
    if lower is None:
        raise BuildError(f"no lowering is registered for target kind {target.kind!r}")
    return lower


# ---------------------------------------------------------------- optimisation


def optimize(mod: IRModule, target: str | Target = "numpy") -> IRModule:
    """The optimisation pipeline (``transform.pipeline``) under the current
    ``PassContext``; the result is fused and typed."""
    mod = pipeline.optimize(mod)
    if not _typed(mod["main"]):
        mod = mod.copy()
        infer_module(mod)
    return mod


def _typed(fn: Function) -> bool:
    return all(n.has_type for n in post_order(fn))


# ---------------------------------------------------------------- build


def bind_param_arrays(mod: IRModule, params: dict) -> IRModule:
    """``@main``'s parameters named in ``params`` (numpy arrays or torch tensors) become
    constants; each value is checked against the parameter's declared type first."""
    main = mod["main"]
    by_name = {p.name_hint: p for p in main.params}
    bound = {}
    for name, value in params.items():
        if hasattr(value, "numpy") and not isinstance(value, np.ndarray):  # torch tensors
            value = value.detach().cpu().numpy() if hasattr(value, "detach") else value.numpy()
        value = np.asarray(value)
        p = by_name.get(name)
        ann = p.type_annotation if p is not None else None
        if isinstance(ann, TensorType) and (value.dtype.name != ann.dtype or not _fits(
                value.shape, ann.shape)):
            raise BuildError(
                f"param {name}: @main declares {ann}, found shape {value.shape} dtype "
                f"{value.dtype.name}")
        bound[name] = const(value)
    return bind_params(mod, bound)


def _fits(shape: tuple, declared: tuple) -> bool:
    return len(shape) == len(declared) and all(
        not isinstance(d, int) or d == s for s, d in zip(shape, declared))


def build(mod: IRModule | Function, target="numpy", params: dict | None = None,
          executor: str = "graph", mod_name: str = "default") -> GraphExecutorFactoryModule:
    """Relay's ``relay.build``: compile ``mod["main"]`` for the graph executor."""
    if isinstance(mod, Function):
        mod = IRModule.from_expr(mod)
    if not isinstance(mod, IRModule):
        raise BuildError(f"build takes an IRModule or a Function, found {type(mod).__name__}")
    if executor != "graph":
        raise BuildError(f"build makes modules for the graph executor; executor={executor!r} "
                         f"is built with relayir.vm.compile (vm) or its own entry point")
    tgt = Target.parse(target)
    lower = get_lowering(tgt)  # fail before any work when the target cannot be built
    if params:
        mod = bind_param_arrays(mod, params)
    typed = mod.copy()
    infer_module(typed)
    for p in typed["main"].params:
        check_static(p.checked_type, f"input %{p.name_hint}")
    fused = optimize(typed, tgt)
    graph, consts, functions = graph_codegen(fused["main"])
    lib = lower(functions, tgt)
    return GraphExecutorFactoryModule(json.dumps(graph), lib, consts, str(tgt), mod_name, fused)


__all__ = ["BuildError", "Target", "bind_param_arrays", "build", "get_lowering", "optimize",
           "register_lowering"]
