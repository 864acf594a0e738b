"""Tuning tasks: one per distinct primitive function a build lowers.

``extract_tasks(mod, params, target)`` runs ``build``'s own pipeline (bind params,
optimise under the current ``PassContext``, graph codegen) and keeps one ``Task`` per
distinct kernel, with ``weight``: how many times one inference calls it. Records and
``apply_history_best`` find a task again by its ``key``: the function's structural
digest (``workload_digest``: operators, attributes, types; constant values only when
small, so retrained weights keep their records), the target and the CPU.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import platform
from collections import Counter

import numpy as np

from ..backend.build_module import bind_param_arrays, optimize
from ..backend.graph_codegen import GraphCodegenError, graph_codegen
from ..backend.lowering import uses_reference_only
from ..backend.target import BuildError, Target
from ..codegen import cache
from ..errors import Error
from ..ir.expr import Call, Constant, Function, Op, Tuple, TupleGetItem, Var
from ..ir.functor import post_order
from ..ir.module import IRModule
from ..te import expr as E
from ..te.visit import collect
from ..tir import build_te
from ..typing.infer import infer_module

# A stage's schedule is decided by its heaviest compute (``tir/lower.py`` anchors stages
# the same way): a task's kind is the heaviest tag among its computes.
KINDS = ("conv", "dense", "pool", "softmax", "norm", "reduce", "injective", "broadcast",
         "elemwise")
_SMALL_CONSTANT = 16  # constants up to this many elements take part in the digest by value


class TuningError(Error):
    """A model, task or option the tuner cannot use."""


@dataclasses.dataclass(frozen=True)
class Profile:
    """What the tuner knows about a task's computation without lowering it."""

    kind: str            # the anchor tag (``KINDS``)
    flops: float         # floating point operations of one call (2 per multiply-add)
    rows: int            # the kind's stage: rows (second to last output axis)
    columns: int         # columns (last output axis)
    reduction: int       # reduction length per output element (1: none)
    hints: tuple         # ``(knob, value)`` hints of the kind's computes (``attrs["schedule"]``)


@dataclasses.dataclass(eq=False)
class Task:
    """One distinct kernel: ``func`` (a primitive function) built for ``target``.

    ``name``: the kernel's name in the build; ``weight``: calls per inference; ``key``:
    ``(workload digest, target, cpu)`` — what a record is matched by."""

    name: str
    func: Function
    target: Target
    weight: int = 1
    workload: str = ""
    cpu: str = ""

    def __post_init__(self):
        self.workload = self.workload or workload_digest(self.func)
        self.cpu = self.cpu or host_cpu()

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.workload, target_name(self.target), self.cpu)

    @functools.cached_property
    def profile(self) -> Profile:
        return profile(self.func)

    @property
    def kind(self) -> str:
        return self.profile.kind

    @property
    def flops(self) -> float:
        return self.profile.flops

    def __repr__(self) -> str:
        return (f"Task({self.name}, {self.kind}, {self.flops / 1e6:.1f} MFLOP, x{self.weight}, "
                f"{self.workload[:8]})")


def target_name(target) -> str:
    """The target as records name it: its kind and options (``"llvm"`` is ``"cpu"``), its
    CPU last (``-mcpu=native`` is left out: ``"cpu"``, as records written before named
    CPUs say)."""
    t = Target.parse(target)
    options = [o for o in t.options if not o.startswith("-mcpu=")]
    cpu = [f"-mcpu={t.cpu}"] if t.cpu not in ("", "native") else []
    return " ".join((t.kind, *options, *cpu))


@functools.lru_cache(maxsize=1)
def host_cpu() -> str:
    """This CPU as records name it: its model (read by people) and the fingerprint of its
    model and feature flags (``codegen.cache.host_fingerprint``: what ``-march=native``
    code depends on)."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                field, _, value = line.partition(":")
                if field.strip() in ("model name", "CPU part"):
                    model = value.strip()
                    break
    except OSError:
        pass
    return f"{model} [{cache.host_fingerprint()}]"


def workload_digest(fn: Function) -> str:
    """A structural digest of a primitive function, stable across processes and runs
    (Python's ``hash`` is salted per process): variables by first use, operators with
    their attributes, every node's type; a constant by dtype and shape (and value when
    it has at most 16 elements)."""
    index: dict[int, int] = {}
    h = hashlib.sha256()
    nodes = [*fn.params, *post_order(fn.body)]
    for k, n in enumerate(nodes):
        index[id(n)] = k
        t = type(n)
        if t is Var:
            token = f"var {_type(n)}"
        elif t is Constant:
            data = n.data
            value = data.tobytes().hex() if data.size <= _SMALL_CONSTANT else ""
            token = f"const {data.dtype.name}{tuple(data.shape)}{value}"
        elif t is Call:
            op = n.op.name if type(n.op) is Op else f"@{index.get(id(n.op), '?')}"
            args = ",".join(str(index.get(id(a), "?")) for a in n.args)
            token = f"call {op} {n.attrs!r} ({args}) {_type(n)}"
        elif t is Tuple:
            token = "tuple " + ",".join(str(index.get(id(f), "?")) for f in n.fields)
        elif t is TupleGetItem:
            token = f"get {index.get(id(n.tuple_value), '?')}.{n.index}"
        else:
            token = f"{t.__name__} {_type(n)}"
        h.update(token.encode())
        h.update(b"\n")
    h.update(f"ret {index.get(id(fn.body), '?')}".encode())
    return h.hexdigest()[:24]


def _type(n) -> str:
    return str(n.checked_type) if n.has_type else "?"


def profile(fn: Function) -> Profile:
    """Kind, floating point work and the main stage's shape of ``fn``, from its tensor
    expressions (``tir.build_te``)."""
    graph = build_te(fn)
    order, seen, stack = [], set(), list(graph.outputs)
    while stack:
        t = stack.pop()
        if id(t) in seen or t.is_placeholder:
            continue
        seen.add(id(t))
        order.append(t)
        if t.is_extern:
            stack.extend(t.op.inputs)
        else:
            stack.extend(r.tensor for r in collect(t.op.body, E.TensorRead))
    tags = {t.op.tag for t in order}
    kind = next((k for k in KINDS if k in tags), "injective")
    flops, main, hints = 0.0, None, {}
    for t in order:
        n = _numel(t.shape)
        if t.is_extern:
            flops += n
            continue
        reductions = collect(t.op.body, E.Reduce)
        red = max((_numel([a.extent for a in r.axes]) for r in reductions), default=1)
        flops += n * (2 * red if reductions else 1)
        if t.op.tag == kind:
            hints.update(t.op.attrs.get("schedule") or {})
            if main is None or n * red > main[0] * main[1]:
                main = (n, red, t)
    rows = columns = reduction = 1
    if main is not None:
        shape = [_numel([d]) for d in main[2].shape]
        columns = shape[-1] if shape else 1
        rows = shape[-2] if len(shape) > 1 else 1
        reduction = main[1]
    return Profile(kind, float(flops), rows, columns, reduction, tuple(sorted(hints.items())))


def _numel(dims) -> int:
    n = 1
    for d in dims:
        v = E.const_value(d)
        n *= int(v) if v is not None else 1  # a symbolic extent counts as 1
    return n


def extract_tasks(mod: IRModule | Function, params: dict | None = None,
                  target="cpu") -> list[Task]:
    """One ``Task`` per distinct kernel ``build(mod, target, params)`` would lower under
    the current ``PassContext``, heaviest (flops × calls) first. Functions that run
    their numpy reference (no compute, low-precision dtypes) are not tasks."""
    tgt = Target.parse(target)
    if tgt.kind != "cpu":
        raise TuningError(f"extract_tasks: tuning searches schedules of generated C; target "
                          f"{str(tgt)!r} has none (use 'cpu')")
    if isinstance(mod, Function):
        mod = IRModule.from_expr(mod)
    if params:
        mod = bind_param_arrays(mod, params)
    typed = mod.copy()
    infer_module(typed)
    fused = optimize(typed, tgt)
    try:
        graph, _, functions = graph_codegen(fused["main"])
    except (GraphCodegenError, BuildError) as exc:
        raise TuningError(f"extract_tasks: tasks come from the graph executor's static "
                          f"schedule: {exc}") from None
    calls = Counter(n["attrs"]["func_name"] for n in graph["nodes"] if n["op"] == "tvm_op")
    tasks: dict[str, Task] = {}
    for name, fn in functions:
        if uses_reference_only(fn):
            continue
        task = Task(name, fn, tgt, weight=calls[name])
        if task.workload in tasks:
            tasks[task.workload].weight += task.weight
        else:
            tasks[task.workload] = task
    return sorted(tasks.values(), key=lambda t: -t.flops * t.weight)


def random_inputs(types, seed: int = 0) -> list[np.ndarray]:
    """Inputs for measuring a kernel: normal floats, zeros for integers and booleans
    (an index read from random data could point outside its tensor)."""
    rng = np.random.default_rng(seed)
    out = []
    for t in types:
        shape = tuple(int(d) for d in t.shape)
        if t.dtype.startswith("float"):
            out.append(rng.standard_normal(shape).astype(t.dtype))
        else:
            out.append(np.zeros(shape, t.dtype))
    return out


__all__ = ["KINDS", "Profile", "Task", "TuningError", "extract_tasks", "host_cpu",
           "profile", "random_inputs", "target_name", "workload_digest"]
