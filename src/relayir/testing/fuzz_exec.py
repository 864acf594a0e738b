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
import itertools

import numpy as np

from ..executor import EXECUTORS, create_executor
from ..ir.expr import Call, Constant, Function, Let, Op, Tuple
from ..ir.functor import ExprMutator, post_order
from ..ir.module import IRModule
from ..ir.op import OpPattern
from ..te.computes import COMPUTE
from .fuzz_compare import (
    differences,
    ill_conditioned,
    mismatch_mask,
    nudge,
    rounding_at_scale,
)
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
        if diff:
            scale = _float_scale(mod, inputs)
            if not (rounding_at_scale(oracle, got, scale)
                    or ill_conditioned(_nudged_oracle(mod), inputs, oracle, got)
                    or _last_op_sees_rounded_zeros(mod, inputs, oracle, got, scale)):
                found.append(Disagreement(e, t, "mismatch", "; ".join(diff)[:2000]))
    return found


def _last_op_sees_rounded_zeros(mod: IRModule, inputs: list, oracle, got,
                                scale: float) -> bool:
    """Whether, where ``got`` differs, it is what the op that makes that output gives
    when its float arguments there that are within rounding of 0 at the program's scale
    (64 ulps of ``scale``) are 0 or -0: a sum that cancels (``x - x`` of huge terms, a
    conv over tiny ones) may end at 0 in one order and at 1e-38 in another, and a
    division right after turns that into inf against a finite number. Outputs made by
    an elementwise op only (``@main``'s body, or a field of its result tuple)."""
    fn = mod["main"]
    lets, result = [], fn.body
    while type(result) is Let:
        lets.append((result.var, result.value))
        result = result.body
    exprs = list(result.fields) if type(result) is Tuple else [result]
    wants = list(oracle) if type(result) is Tuple else [oracle]
    gots = list(got) if type(result) is Tuple else [got]
    if not (len(exprs) == len(wants) == len(gots)):
        return False
    for expr, want, g in zip(exprs, wants, gots):
        if isinstance(want, tuple) or isinstance(g, tuple):
            if differences(want, g):
                return False
            continue
        want, g = np.asarray(want), np.asarray(g)
        if want.shape != g.shape or want.dtype != g.dtype:
            return False
        bad = mismatch_mask(want, g)
        if bad.any() and not _flushed_zeros_explain(fn, lets, expr, inputs, bad, g, scale):
            return False
    return True


def _flushed_zeros_explain(fn, lets, call, inputs, bad, got, scale) -> bool:
    if (type(call) is not Call or not isinstance(call.op, Op) or not call.args
            or call.op.pattern > OpPattern.BROADCAST):
        return False
    body = Tuple(list(call.args))
    for var, value in reversed(lets):  # the lets the arguments may read
        body = Let(var, value, body)
    try:
        args = evaluate(IRModule.from_expr(Function(fn.params, body)), inputs)
        args = [np.broadcast_to(np.asarray(a), got.shape) for a in args]
        tiny = 64.0 * float(np.finfo(np.float32).eps) * scale
        explained = np.zeros(int(bad.sum()), bool)
        floats = [k for k, a in enumerate(args) if a.dtype.kind == "f"]
        # the argument that came out of the cancelling sum, at either zero
        for k, zero in itertools.product(floats, (0.0, -0.0)):
            flushed = list(args)
            a = args[k]
            flushed[k] = np.where(bad & (np.abs(a) <= tiny), np.asarray(zero, a.dtype), a)
            with np.errstate(all="ignore"):
                value = np.asarray(call.op.reference(*flushed, call.attrs))
            if value.shape != got.shape:
                return False
            explained |= ~mismatch_mask(value[bad], got[bad])
    except Exception:  # noqa: BLE001  (no explanation, then)
        return False
    return bool(explained.all())


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
