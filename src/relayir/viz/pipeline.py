"""The Pipeline view's data: the module as imported, then after each pass of the
pipeline ``build`` runs (``backend.optimize`` at the chosen opt level and target).

A pass instrument keeps the module after every *leaf* pass (a ``Sequential`` runs the
others). For each step the report gets the Relay text (constants elided), the graph of
``@main`` (``dataflow.py``), and what changed: op counts added and removed, constants
before and after, the graph nodes that are new (their op, type and inputs' ops were not
in the step before), and the rewrite rules that fired: the passes built on
``transform.rewrite`` print them when their ``relay.<Pass>.debug`` config is on, and the
instrument cuts that printed text per pass. A step whose text equals the one before is
marked ``same`` and carries no copy.
"""

from __future__ import annotations

import contextlib
import io
import re
import time
from collections import Counter

from ..backend import optimize
from ..ir.expr import Constant
from ..ir.functor import post_order
from ..ir.module import IRModule
from ..transform import PassContext
from .dataflow import function_graph
from .graph import Graph

# passes that report the rules that fired (transform/rewrite.py's debug line)
RULE_PASSES = ("SimplifyInference", "SimplifyExpr", "CanonicalizeOps", "DynamicToStatic")
_FIRED = re.compile(r"rules fired: (.*)")
_RULE = re.compile(r"^(.*) x(\d+)$")


class _Steps:
    """A pass instrument: the module after each leaf pass, its time, and the text the
    pass printed (where the rules that fired are)."""

    def __init__(self, out: io.StringIO):
        self.out = out
        self.stack: list[list] = []  # [start time, printed from, ran a nested pass]
        self.steps: list[tuple[str, float, IRModule, str]] = []

    def run_before_pass(self, mod, info) -> None:
        if self.stack:
            self.stack[-1][2] = True
        self.stack.append([time.perf_counter(), self.out.tell(), False])

    def run_after_pass(self, mod, info) -> None:
        start, printed, nested = self.stack.pop()
        if not nested:
            text = self.out.getvalue()[printed:]
            self.steps.append((info.name, time.perf_counter() - start, mod, text))


def rules_fired(printed: str) -> dict[str, int]:
    """``{"rule": times}`` from a pass's debug line(s) (``fired_text``'s format)."""
    fired: Counter = Counter()
    for m in _FIRED.finditer(printed):
        for item in m.group(1).split(", "):
            r = _RULE.match(item.strip())
            if r:
                fired[r.group(1)] += int(r.group(2))
    return dict(fired)


def _constants(mod: IRModule) -> int:
    return sum(1 for fn in mod.functions.values() for n in post_order(fn) if type(n) is Constant)


def _signatures(graph: Graph) -> list[tuple]:
    """Per node: its op, type and its inputs' ops (what marks a node as new)."""
    inputs: list[list[str]] = [[] for _ in graph.nodes]
    for s, d in graph.edges:
        inputs[d].append(graph.nodes[s]["l"])
    return [(n["l"], n["t"], tuple(sorted(i))) for n, i in zip(graph.nodes, inputs)]


def pipeline_steps(mod: IRModule, opt_level: int = 3, target="cpu",
                   disabled_pass=()) -> tuple[list[dict], IRModule]:
    """The steps (imported, then each pass) as report data, and the optimised module.
    ``mod`` must be typed, with its weights bound."""
    printed = io.StringIO()
    capture = _Steps(printed)
    config = {f"relay.{p}.debug": True for p in RULE_PASSES}
    with contextlib.redirect_stdout(printed), PassContext(
            opt_level=opt_level, disabled_pass=list(disabled_pass), config=config,
            instruments=[capture]):
        optimized = optimize(mod, target=target)
    steps: list[dict] = []
    previous = None  # (text, graph, signatures, op counts, constants)
    for name, seconds, m, text in [("imported", 0.0, mod, "")] + capture.steps:
        step = {"name": name, "ms": round(seconds * 1e3, 3), "rules": rules_fired(text)}
        body = m.astext(show_meta_data=False)
        if previous is not None and body == previous[0]:
            step["same"] = True
            steps.append(step)
            continue
        graph = function_graph(m["main"])
        sigs = _signatures(graph)
        ops = graph.op_counts()
        consts = _constants(m)
        if previous is not None:
            before = Counter(previous[2])
            for node, sig in zip(graph.nodes, sigs):
                if before[sig] > 0:
                    before[sig] -= 1
                else:
                    node["a"] = 1  # new in this step
            old_ops = previous[3]
            step["added"] = {k: v - old_ops.get(k, 0) for k, v in ops.items()
                             if v > old_ops.get(k, 0)}
            step["removed"] = {k: v - ops.get(k, 0) for k, v in old_ops.items()
                               if v > ops.get(k, 0)}
            step["constants_before"] = previous[4]
        step.update(text=body, graph=graph.to_json(), constants=consts,
                    ops=sum(ops.values()), nodes=len(graph.nodes),
                    fused=sum(1 for c in graph.clusters if c["k"] == "fused"))
        steps.append(step)
        previous = (body, graph, sigs, ops, consts)
    return steps, optimized


__all__ = ["RULE_PASSES", "pipeline_steps", "rules_fired"]
