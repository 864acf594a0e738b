"""Running one program through every executor and target, against the interpreter.

``run(mod, inputs, pairs)`` evaluates ``@main`` with the reference interpreter (the
oracle), then with each ``(executor, target)`` pair; ``check(...)`` returns the
``Disagreement``s: a crash (any exception where the oracle ran), or a result that
``fuzz_compare.differences`` finds different and that is not explained by rounding in
an ill-conditioned program. A program the oracle itself refuses is not checked.

``pairs_for(block, executors, targets)`` picks the pairs a program can run on: the
graph executor and AOT run dataflow with static shapes only, AOT needs the cpu target
and exists only when ``relayir.create_executor`` knows it.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..executor import EXECUTORS, create_executor
from ..ir.expr import Constant, Function
from ..ir.functor import ExprMutator, post_order
from ..ir.module import IRModule
from ..te.computes import COMPUTE
from .fuzz_compare import differences, ill_conditioned, nudge, rounding_at_scale
from .fuzz_program import Block, is_dataflow, ops_of

EXECUTOR_KINDS = {"interp": "debug", "graph": "graph", "vm": "vm", "aot": "aot"}
TARGETS = ("numpy", "cpu")


@dataclasses.dataclass
class Disagreement:
    executor: str
    target: str
    kind: str  # "crash" | "mismatch"
    detail: str

    @property
    def pair(self) -> str:
        return f"{self.executor}/{self.target}"


def available_executors() -> list[str]:
    return [name for name, kind in EXECUTOR_KINDS.items() if kind in EXECUTORS]


def pairs_for(block: Block, executors, targets) -> list:
    """The ``(executor, target)`` pairs to compare with the interpreter."""
    flow = is_dataflow(block)
    # AOT compiles every kernel to C: an op that only has a numpy reference keeps a
    # program off it (a documented refusal, not a finding)
    native = all(op in COMPUTE for op in ops_of(block))
    out = []
    for e in executors:
        if e == "interp" or e not in available_executors():
            continue
        for t in targets:
            if e in ("graph", "aot") and not flow:
                continue
            if e == "aot" and (t != "cpu" or not native):
                continue
            out.append((e, t))
    return out


def evaluate(mod: IRModule, inputs: list, executor: str = "interp", target: str = "numpy"):
    fn = create_executor(EXECUTOR_KINDS[executor], mod=mod, target=target).evaluate()
    with np.errstate(all="ignore"):
        return _as_arrays(fn(*inputs))


def _as_arrays(v):
    if isinstance(v, (tuple, list)):
        return tuple(_as_arrays(x) for x in v)
    return np.asarray(v)


class _NudgeConstants(ExprMutator):
    def __init__(self, rng, ulps: float):
        super().__init__()
        self.rng, self.ulps = rng, ulps

    def visit_constant(self, c):
        return Constant(nudge(self.rng, np.asarray(c.data), self.ulps)).with_span(c.span)


def _nudged_oracle(mod: IRModule):
    """``run(inputs, ulps)``: the interpreter on ``mod`` with its float constants nudged
    like the inputs (a shrunk program often holds its data as constants)."""
    rng = np.random.default_rng(1)

    def run(xs, ulps):
        nudged = mod.copy()
        for gv in mod.get_global_vars():
            fn = mod[gv]
            if isinstance(fn, Function):
                nudged[gv] = _NudgeConstants(rng, ulps).visit(fn)
        return evaluate(nudged, xs)

    return run


def check(mod: IRModule, inputs: list, pairs: list, oracle=None) -> list[Disagreement]:
    """Every pair that disagrees with the interpreter on ``mod`` (none when the
    interpreter itself refuses the program: it is then not a valid test)."""
    if oracle is None:
        try:
            oracle = evaluate(mod, inputs)
        except Exception:  # noqa: BLE001
            return []
    found = []
    for e, t in pairs:
        try:
            got = evaluate(mod, inputs, e, t)
        except Exception as exc:  # noqa: BLE001  (a crash is a finding)
            found.append(Disagreement(e, t, "crash", f"{type(exc).__name__}: {exc}"[:2000]))
            continue
        diff = differences(oracle, got)
        if diff and not (rounding_at_scale(oracle, got, _float_scale(mod, inputs))
                         or ill_conditioned(_nudged_oracle(mod), inputs, oracle, got)):
            found.append(Disagreement(e, t, "mismatch", "; ".join(diff)[:2000]))
    return found


def _float_scale(mod: IRModule, inputs: list) -> float:
    """The largest finite magnitude among the float inputs and constants of ``mod``."""
    arrays = [np.asarray(x) for x in inputs]
    for gv in mod.get_global_vars():
        fn = mod[gv]
        if isinstance(fn, Function):
            arrays += [np.asarray(n.data) for n in post_order(fn) if type(n) is Constant]
    scale = 0.0
    for a in arrays:
        if a.dtype.kind == "f" and a.size:
            finite = np.abs(a[np.isfinite(a)].astype("float64"))
            if finite.size:
                scale = max(scale, float(finite.max()))
    return scale
