"""``relayir.build``: optimise a module, turn ``@main`` into a graph and its kernels.

The steps, under the current ``PassContext``:

1. bind ``params`` (weights become constants; their shapes and dtypes are checked);
2. ``optimize``: the pipeline of ``transform.pipeline`` (each pass runs when the
   context's opt level reaches the level it declares);
3. graph codegen: ``@main`` → TVM's graph JSON with its memory plan, the params and one
   primitive function per distinct kernel (``graph_codegen``);
4. lowering: ``lowering.lower`` turns the primitive functions into a kernel library
   (``numpy``: the ops' numpy references; ``cpu``: generated C), the same function
   ``vm.compile`` uses;
5. ``executor="aot"`` only: the graph's kernel calls and memory plan become one C
   entry point compiled with the kernels and the weights into one library
   (``aot_codegen``); the result runs with ``relayir.runtime.executor.AotModule``.

Targets (``target.Target``): ``"numpy"``, and ``"cpu"`` with its TVM-style aliases
``"llvm"``, ``"llvm -mcpu=..."`` and ``"c"``.
"""

from __future__ import annotations

import json

import numpy as np

from ..ir.expr import Function, const
from ..ir.functor import post_order
from ..ir.module import IRModule
from ..ir.types import TensorType
from ..runtime.executor import AotExecutorFactoryModule, AotLibrary
from ..runtime.module import GraphExecutorFactoryModule
from ..transform import pipeline
from ..transform.bind import bind_params
from ..typing.infer import infer_module
from . import aot_codegen, lowering
from .graph_codegen import GraphCodegenError, check_static, graph_codegen
from .target import BuildError, Target

# ---------------------------------------------------------------- optimisation


def optimize(mod: IRModule, target: str | Target = "numpy") -> IRModule:
    """The optimisation pipeline (``transform.pipeline``) under the current
    ``PassContext``; the result is fused and typed."""
    target = Target.parse(target)
    with lowering.tuned_pass_config(target):  # tuned convolution algorithms, if any
        mod = pipeline.optimize(mod, target=target)
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
          executor: str = "graph", mod_name: str = "default"
          ) -> GraphExecutorFactoryModule | AotExecutorFactoryModule:
    """Relay's ``relay.build``: compile ``mod["main"]`` for the graph executor, or with
    ``executor="aot"`` into one native entry point (C prefix ``relayir_`` for the default
    ``mod_name``, else ``relayir_<mod_name>_``)."""
    if isinstance(mod, Function):
        mod = IRModule.from_expr(mod)
    if not isinstance(mod, IRModule):
        raise BuildError(f"build takes an IRModule or a Function, found {type(mod).__name__}")
    if executor not in ("graph", "aot"):
        raise BuildError(f"build makes modules for the graph or the aot executor; "
                         f"executor={executor!r} is built with relayir.vm.compile (vm)")
    tgt = Target.parse(target)  # fail before any work when the target is unknown
    tgt.machine()  # ... or names a CPU the compiler does not know
    if executor != "aot":
        tgt.check_runs_here()  # an AOT library may be meant for another CPU
    if executor == "aot":
        aot_codegen.check_aot_target(tgt)
        aot_codegen.aot_prefix(mod_name)
    if params:
        mod = bind_param_arrays(mod, params)
    typed = mod.copy()
    infer_module(typed)
    if executor == "aot":
        aot_codegen.check_static_signature(typed["main"])
    for p in typed["main"].params:
        check_static(p.checked_type, f"input %{p.name_hint}")
    fused = optimize(typed, tgt)
    if executor == "aot":
        return _build_aot(fused, tgt, mod_name)
    graph, consts, functions = graph_codegen(fused["main"])
    lib = lowering.lower(functions, tgt)
    return GraphExecutorFactoryModule(json.dumps(graph), lib, consts, str(tgt), mod_name, fused)


def _build_aot(fused: IRModule, tgt: Target, mod_name: str) -> AotExecutorFactoryModule:
    """The graph executor's schedule, plan and kernels, as one C entry point."""
    try:
        graph, consts, functions = graph_codegen(fused["main"])
    except GraphCodegenError as exc:
        raise aot_codegen.AotBuildError(
            f"executor=\"aot\" compiles the graph executor's static schedule: {exc}") from None
    aot_codegen.check_c_only(functions)
    lib = lowering.lower(functions, tgt, runs_here=False)  # the entry point checks the CPU
    aot_codegen.check_c_only(functions, lib)
    sources = aot_codegen.aot_sources(graph, consts, lib, mod_name, str(tgt), tgt.cflags())
    library = AotLibrary(aot_codegen.compile_aot(sources, mod_name))
    return AotExecutorFactoryModule(library, str(tgt), mod_name, sources, json.dumps(graph),
                                    fused)


__all__ = ["BuildError", "Target", "bind_param_arrays", "build", "optimize"]
