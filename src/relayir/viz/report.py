"""``explore(mod, params)``: every view's data gathered from the compiler itself, then
one HTML file (``html.py``).

Each section is made by the same calls a user makes (the pipeline under a
``PassContext``, ``relay.build``, ``vm.compile``, ``transform.gradient``), so the
numbers in the report are theirs. A section that cannot apply to the program says why
instead (the graph executor runs dataflow only: a program with ADTs and recursion gets
the VM and a reason); an unexpected failure is not hidden.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence

import numpy as np

from ..backend import bind_param_arrays
from ..errors import Error
from ..ir.expr import Function
from ..ir.module import IRModule
from ..typing.infer import infer_module
from ..version import __version__
from .executor import executor_section
from .gradient_view import gradient_section
from .html import render
from .inputs import random_inputs
from .optimizers import optimizers_section
from .pipeline import pipeline_steps
from .torch_graphs import export_graph
from .vm_view import vm_section

SECTIONS = ("pipeline", "gradient", "executor", "vm", "optimizers")
Progress = Callable[[str], contextlib.AbstractContextManager]


def _no_progress(phase: str) -> contextlib.AbstractContextManager:
    return contextlib.nullcontext()


def _module(mod) -> IRModule:
    if isinstance(mod, Function):
        return IRModule.from_expr(mod)
    if not isinstance(mod, IRModule):
        raise Error(f"explore takes an IRModule or a Function, found {type(mod).__name__}")
    return mod


def report_data(mod, params: dict | None = None, *, inputs: dict | None = None,
                title: str = "model", target="cpu", opt_level: int = 3,
                loss: Function | None = None, exported_program=None,
                sections: Sequence[str] = SECTIONS, trace_limit: int = 20_000,
                progress: Progress = _no_progress) -> dict:
    """The report's data: what ``explore`` draws (see its parameters)."""
    unknown = [s for s in sections if s not in SECTIONS]
    if unknown:
        raise Error(f"explore: no section {', '.join(unknown)}; the sections are "
                    f"{', '.join(SECTIONS)}")
    start = time.perf_counter()
    mod = _module(mod)
    params = dict(params or {})
    if inputs is None:
        inputs, why_not = random_inputs(mod, params)
    else:
        inputs, why_not = {k: np.asarray(v) for k, v in inputs.items()}, ""
    data: dict = {"title": title, "version": __version__, "target": str(target),
                  "opt_level": opt_level, "sections": list(sections), "ms": {},
                  "inputs": {k: [list(v.shape), v.dtype.name] for k, v in (inputs or {}).items()},
                  "no_run": why_not}

    def section(name: str, make: Callable[[], dict], may_not_apply: bool = False) -> None:
        if name not in sections:
            return
        t0 = time.perf_counter()
        with progress(name):
            try:
                data[name] = make()
            except Error as exc:
                if not may_not_apply:
                    raise
                data[name] = {"unavailable": f"{type(exc).__name__}: {exc}"}
        data["ms"][name] = round((time.perf_counter() - t0) * 1e3, 1)

    def pipeline() -> dict:
        typed = infer_module((bind_param_arrays(mod, params) if params else mod).copy())
        steps, _ = pipeline_steps(typed, opt_level, target)
        out = {"steps": steps}
        if exported_program is not None:
            graph = export_graph(exported_program)
            out["torch"] = {"graph": graph.to_json(), "nodes": len(graph.nodes),
                            "code": exported_program.graph_module.code.strip()}
        return out

    section("pipeline", pipeline)
    section("gradient", lambda: gradient_section(loss, target, opt_level))
    section("executor", lambda: executor_section(mod, params, inputs, target, opt_level),
            may_not_apply=True)
    section("vm", lambda: vm_section(mod, params, inputs, target, opt_level, trace_limit),
            may_not_apply=True)
    section("optimizers", lambda: optimizers_section(target, opt_level))
    data["seconds"] = round(time.perf_counter() - start, 3)
    return data


def explore(mod, params: dict | None = None, *, inputs: dict | None = None,
            title: str = "model", target="cpu", opt_level: int = 3,
            loss: Function | None = None, exported_program=None,
            sections: Sequence[str] = SECTIONS, trace_limit: int = 20_000,
            progress: Progress = _no_progress) -> str:
    """One self-contained HTML page showing ``mod`` (an ``IRModule`` or a ``Function``;
    ``params``: weights by name) through the compiler, in five views:

    - *Pipeline*: ``@main`` as imported and after each pass ``build`` runs at
      ``opt_level`` for ``target``: graph, Relay text, what changed (with
      ``exported_program``, the ``torch.export`` graph it came from beside it);
    - *Gradient*: ``transform.gradient`` of ``loss`` (a scalar-valued function; the
      built-in MLP's loss by default) before and after optimisation, and PyTorch's
      autograd graph of the same loss;
    - *Graph executor*: the kernels in order and the memory plan as a timeline, with
      per-kernel times of a run on ``inputs`` (random ones from the types by default);
    - *VM*: the bytecode, stepped through a recorded run (``VirtualMachine.trace``, up
      to ``trace_limit`` steps), and VM against graph executor;
    - *Optimisers*: SGD, Momentum and AdaGrad on 2-D surfaces whose gradient is
      relayir's, for a range of learning rates.

    ``sections`` picks views; ``progress(phase)`` is entered around each one (the
    command line shows it). The page fetches nothing: it opens from ``file://``."""
    data = report_data(mod, params, inputs=inputs, title=title, target=target,
                       opt_level=opt_level, loss=loss, exported_program=exported_program,
                       sections=sections, trace_limit=trace_limit, progress=progress)
    return render(data, title)


__all__ = ["SECTIONS", "explore", "report_data"]
