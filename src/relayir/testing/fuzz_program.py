"""The fuzzer's programs: typed, valued SSA blocks that render to Relay.

A ``Block`` is a list of ``Step``s (each names earlier steps of its block by index) and
the indices of its outputs. Every step carries its declared type (dimensions may be
``Any`` in a dynamic program) and its concrete value, computed while the program is
built by the ops' numpy references (the same ones the interpreter runs), so samplers see
concrete shapes and a step whose reference fails is never added.

Step kinds: ``param`` (an input of the block), ``const``, ``call`` (an op), ``get``
(a tuple field), ``tuple``; and the control flow the interpreter-vs-VM pair checks:
``if`` (on ``sum(x) > 0``), ``closure`` (a local function applied once), ``loop`` (a
recursive global function run ``n`` times), ``fold`` (the prelude's ``foldl`` over a
``List`` built with ``Cons``/``Nil``) and ``match`` (``Some``/``None`` chosen at run
time, then matched). Their bodies are blocks whose params are the captured values.

``to_module(block)`` renders ``@main``; steps marked ``let`` are bound with ``let``, the
others are shared in the dataflow graph.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..ir.adt import Clause, Match, PatternConstructor, PatternVar, PatternWildcard
from ..ir.expr import (
    Call,
    Constant,
    Expr,
    Function,
    GlobalVar,
    If,
    Let,
    Tuple,
    TupleGetItem,
    Var,
    const,
)
from ..ir.module import IRModule
from ..ir.op import call, get_op, make_attrs
from ..ir.types import Any, TensorType, TupleType, Type, scalar_type
from ..prelude import Prelude
from ..typing.infer import infer_module

COMPOUND = ("if", "closure", "loop", "fold", "match")


@dataclasses.dataclass
class Step:
    kind: str
    type: Type
    value: object = None  # numpy array, or a tuple of them
    args: tuple = ()  # step indices; a call's tuple-valued argument is a tuple of indices
    op: str = ""
    attrs: dict = dataclasses.field(default_factory=dict)
    index: int = 0  # get: the field
    let: bool = False
    body: Block | None = None  # compound steps (the then-branch of ``if``)
    orelse: Block | None = None  # ``if``: the else-branch
    name: str = ""  # param


@dataclasses.dataclass
class Block:
    steps: list
    outputs: list

    def params(self) -> list[int]:
        return [i for i, s in enumerate(self.steps) if s.kind == "param"]

    def copy(self) -> Block:
        return Block([dataclasses.replace(s) for s in self.steps], list(self.outputs))


class StepError(Exception):
    """A sampled step that is not valid (its type relation or reference refused it)."""


# ---------------------------------------------------------------- types and values


def call_type(op_name: str, arg_types: list, attrs: dict) -> Type:
    """The type ``op_name`` gives arguments of ``arg_types`` (a list entry may be a list
    of types: a tuple argument); raises ``StepError`` when its relation refuses."""
    params, args = [], []
    for k, t in enumerate(arg_types):
        if isinstance(t, list):
            vs = [Var(f"a{k}_{j}", f) for j, f in enumerate(t)]
            params.extend(vs)
            args.append(Tuple(vs))
        else:
            v = Var(f"a{k}", t)
            params.append(v)
            args.append(v)
    try:
        mod = infer_module(IRModule.from_expr(Function(params, call(op_name, args, **attrs))))
    except Exception as exc:  # noqa: BLE001  (any refusal makes the sample invalid)
        raise StepError(f"{op_name}: {exc}") from exc
    return mod["main"].body.checked_type


def reference(op_name: str, values: list, attrs: dict):
    op = get_op(op_name)
    try:
        with np.errstate(all="ignore"):
            out = op.reference(*values, make_attrs(op, attrs))
    except Exception as exc:  # noqa: BLE001
        raise StepError(f"{op_name} reference: {exc}") from exc
    if isinstance(out, (tuple, list)):
        return tuple(np.asarray(o) for o in out)
    return np.asarray(out)


def _sum_positive(x: np.ndarray) -> bool:
    total = reference("sum", [x], {})
    return bool(reference("greater", [total, np.zeros((), total.dtype)], {}))


def evaluate(block: Block, params: list) -> list:
    """Every step's value with ``params`` bound to the block's params, in order."""
    vals: list = []
    it = iter(params)
    for s in block.steps:
        vals.append(_step_value(s, vals, it))
    return vals


def _step_value(s: Step, vals: list, params):
    k = s.kind
    if k == "param":
        return next(params)
    if k == "const":
        return s.value
    if k == "call":
        args = [tuple(vals[j] for j in a) if isinstance(a, tuple) else vals[a] for a in s.args]
        return reference(s.op, args, s.attrs)
    if k == "get":
        return vals[s.args[0]][s.index]
    if k == "tuple":
        return tuple(vals[j] for j in s.args)
    caps = [vals[j] for j in s.args]
    if k == "if":
        branch = s.body if _sum_positive(caps[0]) else s.orelse
        return _output(branch, caps[1:])
    if k == "closure":
        return _output(s.body, caps)
    if k == "loop":
        state = caps[1]
        for _ in range(max(int(caps[0]), 0)):
            state = _output(s.body, [state, *caps[2:]])
        return state
    if k == "fold":
        acc = caps[0]
        for e in caps[1:]:
            acc = _output(s.body, [acc, e])
        return acc
    if k == "match":
        return _output(s.body, caps[1:]) if _sum_positive(caps[0]) else caps[1]
    raise ValueError(f"unknown step kind {k!r}")


def step_value(step: Step, values: list):
    """The value of a step that is not a ``param``, given its block's values so far."""
    return _step_value(step, values, iter(()))


def _output(block: Block, params: list):
    vals = evaluate(block, params)
    return vals[block.outputs[0]]


def value_type(value, dynamic_dims=()) -> Type:
    """The type of a concrete value; ``dynamic_dims`` (axes) become ``Any``."""
    if isinstance(value, tuple):
        return TupleType(tuple(value_type(v) for v in value))
    shape = tuple(Any() if k in dynamic_dims else d for k, d in enumerate(value.shape))
    return TensorType(shape, value.dtype.name)


def uses_prelude(block: Block) -> bool:
    stack = [block]
    while stack:
        b = stack.pop()
        for s in b.steps:
            if s.kind in ("fold", "match"):
                return True
            stack.extend(x for x in (s.body, s.orelse) if x is not None)
    return False


def ops_of(block: Block) -> set[str]:
    """The ops ``block`` and its bodies call."""
    out, stack = set(), [block]
    while stack:
        b = stack.pop()
        for s in b.steps:
            if s.kind == "call":
                out.add(s.op)
            stack.extend(x for x in (s.body, s.orelse) if x is not None)
    return out


def is_dataflow(block: Block) -> bool:
    """No control flow, no dynamic dimensions: every executor can run it."""
    for s in block.steps:
        if s.kind in COMPOUND:
            return False
        if not _static(s.type):
            return False
    return True


def _static(t: Type) -> bool:
    if isinstance(t, TupleType):
        return all(_static(f) for f in t.fields)
    return not isinstance(t, TensorType) or t.is_static


# ---------------------------------------------------------------- rendering


class _Renderer:
    def __init__(self, mod: IRModule, prelude: Prelude | None):
        self.mod = mod
        self.prelude = prelude
        self.loops = 0

    def block(self, block: Block, params: list) -> Expr:
        """``block``'s output expression with its params bound to ``params`` (Vars)."""
        exprs: list = []
        lets: list = []
        it = iter(params)
        for k, s in enumerate(block.steps):
            e = self.step(block, s, exprs, it)
            if s.let and s.kind not in ("param", "const"):
                v = Var(f"v{k}")
                lets.append((v, e))
                e = v
            exprs.append(e)
        outs = [exprs[i] for i in block.outputs]
        body = outs[0] if len(outs) == 1 else Tuple(outs)
        for v, e in reversed(lets):
            body = Let(v, e, body)
        return body

    def step(self, block: Block, s: Step, exprs: list, params):
        k = s.kind
        if k == "param":
            return next(params)
        if k == "const":
            return Constant(np.asarray(s.value))
        if k == "call":
            args = [Tuple([exprs[j] for j in a]) if isinstance(a, tuple) else exprs[a]
                    for a in s.args]
            return call(s.op, args, **s.attrs)
        if k == "get":
            return TupleGetItem(exprs[s.args[0]], s.index)
        if k == "tuple":
            return Tuple([exprs[j] for j in s.args])
        caps = [exprs[j] for j in s.args]
        cond_dtype = block.steps[s.args[0]].type.dtype if s.args else ""
        if k == "if":
            return If(_positive_sum(caps[0], cond_dtype), self.sub(s.body, caps[1:]),
                      self.sub(s.orelse, caps[1:]))
        if k == "closure":
            fn, f = self.function(s.body), Var("f")
            return Let(f, fn, Call(f, caps))
        if k == "loop":
            return Call(self.loop(s), caps)
        if k == "fold":
            p = self.prelude
            items = p.Nil()
            for e in reversed(caps[1:]):
                items = p.Cons(e, items)
            return Call(p.foldl, [self.function(s.body), caps[0], items])
        if k == "match":
            p = self.prelude
            y = Var("y")
            some, none = p.get_ctor("Some"), p.get_ctor("None")
            opt = If(_positive_sum(caps[0], cond_dtype), some(caps[1]), none())
            return Match(opt, [Clause(PatternConstructor(some, [PatternVar(y)]),
                                      self.sub(s.body, [y, *caps[2:]])),
                               Clause(PatternWildcard(), caps[1])])
        raise ValueError(f"unknown step kind {k!r}")

    def sub(self, block: Block, caps: list) -> Expr:
        """A body inlined where its captured values are in scope."""
        return self.block(block, caps)

    def function(self, block: Block) -> Function:
        params = [Var(f"p{j}", block.steps[i].type) for j, i in enumerate(block.params())]
        return Function(params, self.block(block, params))

    def loop(self, s: Step) -> GlobalVar:
        """``@loopN(%i, %state, %caps...)``: ``state`` after ``i`` turns of the body."""
        self.loops += 1
        gv = GlobalVar(f"loop{self.loops}")
        body = s.body
        types = [body.steps[i].type for i in body.params()]
        i = Var("i", scalar_type("int32"))
        ps = [Var(f"s{j}", t) for j, t in enumerate(types)]
        again = Call(gv, [call("subtract", [i, const(np.int32(1))]), self.block(body, ps),
                          *ps[1:]])
        fn = Function([i, *ps], If(call("less_equal", [i, const(np.int32(0))]), ps[0], again),
                      ret_type=types[0])
        self.mod[gv] = fn
        return gv


def _positive_sum(x, dtype: str):
    total = call("sum", [x])
    return call("greater", [total, const(np.zeros((), dtype))])


def to_module(block: Block) -> IRModule:
    """``@main`` (and the loops' global functions) of a top-level block."""
    mod = IRModule()
    prelude = Prelude(mod) if uses_prelude(block) else None
    r = _Renderer(mod, prelude)
    params = [Var(s.name, s.type) for s in block.steps if s.kind == "param"]
    mod["main"] = Function(params, r.block(block, params))
    return mod


def main_inputs(block: Block) -> list:
    return [s.value for s in block.steps if s.kind == "param"]
