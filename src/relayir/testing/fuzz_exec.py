"""Running one program through every executor, target and opt level, against the
interpreter.

``check(mod, inputs, pairs)`` evaluates ``@main`` with the reference interpreter (the
oracle), then with each pair ``(executor, target[, opt_level])``, and returns the
disagreements: a crash (any exception where the oracle ran), or a result that
``fuzz_compare.judge`` finds different where no rounding rule explains it (the bounds
come from ``fuzz_bounds``, computed only when something differs). A program the oracle
itself refuses is not checked. ``report`` (a ``CheckReport``) gathers what the rules
excused, by rule, and the cpu runs that used numpy reference kernels: those are not
passes of the C back end, so they are counted apart (``references``).

``opt_level`` builds under ``PassContext(opt_level=...)``: level 3 is what users run
(``AlterOpLayout``, blocked layouts, Winograd, packed weights); ``None`` is the default
context. ``schedules`` (``fuzz_schedules.RandomSchedules``) and ``pass_config`` give the
build random tuner choices.

``pairs_for(block, executors, targets, opt_levels)`` picks the pairs a program can run
on: the graph executor and AOT run dataflow with static shapes only, AOT needs the cpu
target and exists only when ``relayir.create_executor`` knows it.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections import Counter

import numpy as np

from ..executor import EXECUTORS, create_executor
from ..ir.expr import Call, Op
from ..ir.functor import post_order
from ..ir.module import IRModule
from ..runtime import wrap
from ..te.computes import COMPUTE
from ..transform import PassContext
from .fuzz_bounds import error_bounds
from .fuzz_compare import judge
from .fuzz_program import Block, is_dataflow, ops_of

EXECUTOR_KINDS = {"interp": "debug", "graph": "graph", "vm": "vm", "aot": "aot"}
TARGETS = ("numpy", "cpu")
OPT_LEVELS = (0, 1, 2, 3)


@dataclasses.dataclass
class Disagreement:
    executor: str
    target: str
    kind: str  # "crash" | "mismatch"
    detail: str
    opt_level: int | None = None

    @property
    def pair(self) -> str:
        return pair_name(self.executor, self.target, self.opt_level)


@dataclasses.dataclass
class CheckReport:
    """What ``check`` excused (elements, by rule) and which cpu pairs ran references."""

    excused: Counter = dataclasses.field(default_factory=Counter)
    references: dict = dataclasses.field(default_factory=dict)  # pair -> {kernel: why}
    rewrites: set = dataclasses.field(default_factory=set)  # level-3 ops the builds held


def pair_name(executor: str, target: str, opt_level: int | None = None) -> str:
    """``graph/cpu`` or ``graph/cpu/O3``."""
    return f"{executor}/{target}" + ("" if opt_level is None else f"/O{opt_level}")


def parse_pair(text: str) -> tuple:
    """``graph/cpu/O3`` -> ``("graph", "cpu", 3)`` (``None`` without a level)."""
    executor, target, *level = text.split("/")
    return executor, target, int(level[0][1:]) if level else None


def available_executors() -> list[str]:
    return [name for name, kind in EXECUTOR_KINDS.items() if kind in EXECUTORS]


def pairs_for(block: Block, executors, targets, opt_levels=(None,)) -> list:
    """The ``(executor, target, opt_level)`` pairs to compare with the interpreter. The
    numpy target runs the references whatever the level: it is checked once."""
    flow = is_dataflow(block)
    # AOT compiles every kernel to C: an op that only has a numpy reference keeps a
    # program off it (a documented refusal, not a finding). QNN ops have no compute of
    # their own: CanonicalizeQNN lowers each to ops that do, before any kernel exists
    native = all(op in COMPUTE or op.startswith("qnn.") for op in ops_of(block))
    out = []
    for e in executors:
        if e == "interp" or e not in available_executors():
            continue
        for t in targets:
            if e in ("graph", "aot") and not flow:
                continue
            if e == "aot" and (t != "cpu" or not native):
                continue
            levels = opt_levels if t == "cpu" else opt_levels[-1:]
            out.extend((e, t, level) for level in levels)
    return out


def _split(pair) -> tuple:
    return tuple(pair) if len(pair) == 3 else (*pair, None)


def evaluate(mod: IRModule, inputs: list, executor: str = "interp", target: str = "numpy",
             opt_level: int | None = None, schedules=None, pass_config=None,
             built: dict | None = None):
    """``@main`` of ``mod`` on ``inputs`` (numpy arrays, tuples for tuples), built under
    ``opt_level`` / ``schedules`` / ``pass_config``. ``built`` receives, for a cpu
    build, ``references`` (the kernels that ran as numpy references: name -> why) and
    ``rewrites`` (the ``nn.contrib_*`` ops the optimised graph holds: blocked
    convolutions, Winograd, packed dense; and the int8 convolutions' NHWC and
    requantizing forms)."""
    config = dict(pass_config or {})
    ctx = (PassContext(opt_level=opt_level, config=config) if opt_level is not None
           else contextlib.nullcontext())
    with ctx, schedules if schedules is not None else contextlib.nullcontext():
        fn = create_executor(EXECUTOR_KINDS[executor], mod=mod, target=target).evaluate()
        with np.errstate(all="ignore"):
            value = _as_arrays(fn(*inputs))
    if built is not None and target != "numpy":
        built["references"] = _references(fn, executor)
        if executor == "graph":
            names = (_rewrite_name(n) for n in post_order(fn.module.module.ir_mod["main"])
                     if type(n) is Call and type(n.op) is Op)
            built["rewrites"] = sorted({n for n in names if n})
    return value


def _rewrite_name(call: Call) -> str | None:
    """How a level-3 rewrite of ``call`` is counted (None: not one)."""
    name = call.op.name
    if name.startswith("nn.contrib"):
        return name
    if name.startswith("qnn.contrib_") and "conv2d" in name:  # the int8 layout / fusion
        return name if name.endswith("_requant") else f"{name} {call.attrs.layout}"
    return None


def _references(fn, executor: str) -> dict:
    """The kernels of the built program that ran as numpy references, with why (through
    ``relayir.runtime``'s one artifact interface, whatever the executor), and the VM's
    calls that ran a reference for a dim of 1."""
    vm = getattr(fn, "vm", None)
    built = fn.module.module if vm is None else vm.exe
    out = dict(wrap(built).references)
    if vm is not None:
        out.update({name: f"a dynamic dim of 1 broadcasting, no C for the call's "
                          f"shapes: ran its reference in {n} call(s)"
                    for name, n in vm.reference_runs.items()})
        # data-dependent functions compiled per call signature (vm/specialize.py): the
        # calls no static form could take ran the reference
        for name, spec in getattr(vm.exe, "specializers", {}).items():
            for why, n in spec.reference_runs.items():
                out[name] = f"{why}: ran its reference in {n} call(s)"
    return out


def _as_arrays(v):
    if isinstance(v, (tuple, list)):
        return tuple(_as_arrays(x) for x in v)
    return np.asarray(v)


def check(mod: IRModule, inputs: list, pairs: list, oracle=None, *, schedules=None,
          pass_config=None, report: CheckReport | None = None) -> list[Disagreement]:
    """Every pair that disagrees with the interpreter on ``mod`` (none when the
    interpreter itself refuses the program: it is then not a valid test)."""
    if oracle is None:
        try:
            oracle = evaluate(mod, inputs)
        except Exception:  # noqa: BLE001
            return []
    report = report if report is not None else CheckReport()
    found, bounds = [], []  # bounds: computed once, on the first difference
    for pair in pairs:
        e, t, level = _split(pair)
        built: dict = {}
        try:
            got = evaluate(mod, inputs, e, t, level, schedules if level == 3 else None,
                           pass_config if level == 3 else None, built)
        except Exception as exc:  # noqa: BLE001  (a crash is a finding)
            found.append(Disagreement(e, t, "crash", f"{type(exc).__name__}: {exc}"[:2000],
                                      level))
            continue
        if built.get("references"):
            report.references[pair_name(e, t, level)] = built["references"]
        report.rewrites.update(built.get("rewrites", ()))
        diff, excused = judge(oracle, got)
        if diff:
            if not bounds:
                bounds.append(error_bounds(mod, inputs))
            diff, excused = judge(oracle, got, bounds[0])
        report.excused.update(excused)
        if diff:
            found.append(Disagreement(e, t, "mismatch", "; ".join(diff)[:2000], level))
    return found


__all__ = ["EXECUTOR_KINDS", "OPT_LEVELS", "TARGETS", "CheckReport", "Disagreement",
           "available_executors", "check", "evaluate", "pair_name", "pairs_for", "parse_pair"]
