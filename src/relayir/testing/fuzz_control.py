"""Control flow for the interpreter-vs-VM pair: ``if``, a closure, a recursive loop,
``foldl`` over a prelude ``List`` and a ``match`` on ``Option`` (see ``fuzz_program``).

Each construct captures earlier values; its body is a small block of shape-preserving
ops over them (``Builder.call`` checks each), so the result has the type of the first
captured value ("the state").
"""

from __future__ import annotations

import numpy as np

from .fuzz_build import Builder
from .fuzz_program import Block, Step, StepError, step_value

_STATE_DTYPES = ("float32", "float64", "int32")
_FLOAT_UNARY = ("tanh", "sigmoid", "negative", "abs", "nn.relu", "sin", "exp", "floor")
_INT_UNARY = ("negative", "abs", "nn.relu", "sign")
_BINARY = ("add", "multiply", "maximum", "minimum", "subtract")


def _body(b: Builder, caps: list[int]) -> Block:
    """A block with one param per captured value whose output has the first's type."""
    sub = Builder(b.rng.randrange(1 << 30), edges=0.0)
    sub.rng = b.rng
    sub.allow_params = False
    for j in caps:
        s = b.block.steps[j]
        sub.add(Step("param", s.type, s.value, name=f"p{j}"))
    state_t, dtype = b.block.steps[caps[0]].type, b.dtype(caps[0])
    cur = 0
    for _ in range(b.randint(1, 3)):
        if b.coin(0.5):
            unary = _FLOAT_UNARY if dtype.startswith("float") else _INT_UNARY
            cur = sub.call(b.choice(unary), [cur])
            continue
        others = [k for k in range(len(sub.block.steps)) if k != cur
                  and sub.block.steps[k].type == state_t]
        other = b.choice(others) if others and b.coin(0.6) else sub.scalar(
            b.choice((0.5, -1.0, 2.0)) if dtype.startswith("float") else b.choice((1, -2, 3)),
            dtype, const=True)
        pair = [cur, other] if b.coin(0.5) else [other, cur]
        cur = sub.call(b.choice(_BINARY), pair)
    if sub.block.steps[cur].type != state_t:
        raise StepError("the body changed the state's type")
    sub.block.outputs = [cur]
    return sub.block


def _state(b: Builder) -> int:
    i = b.pick(lambda s, d: d in _STATE_DTYPES and len(s) <= 3)
    return i if i is not None else b.data(dtypes=("float32",))


def _same(b: Builder, i: int) -> int:
    t = b.block.steps[i].type
    j = b.pick(lambda s, d: d == b.dtype(i) and s == b.shape(i))
    if j is not None and b.block.steps[j].type == t and b.coin(0.7):
        return j
    return i


def _add(b: Builder, kind: str, caps: list[int], body: Block, orelse: Block | None = None):
    step = Step(kind, b.block.steps[caps[1] if kind in ("if", "match", "loop") else caps[0]].type,
                args=tuple(caps), body=body, orelse=orelse, let=b.coin(0.3))
    step.value = step_value(step, [s.value for s in b.block.steps])
    b.add(step)


def add_control(b: Builder, n: int) -> None:
    """Add ``n`` control-flow steps to ``b``'s block."""
    for _ in range(n):
        kind = b.choice(("if", "closure", "loop", "fold", "match"))
        x = _state(b)
        extra = [_same(b, x)] if b.coin(0.5) else []
        try:
            if kind in ("if", "match"):
                cond = b.pick(lambda s, d: d in ("float32", "int32")) or x
                caps = [cond, x, *extra]
                _add(b, kind, caps, _body(b, caps[1:]),
                     _body(b, caps[1:]) if kind == "if" else None)
            elif kind == "closure":
                _add(b, kind, [x, *extra], _body(b, [x, *extra]))
            elif kind == "loop":
                count = b.new((), "int32", exact=np.int32(b.randint(0, 3)), edges=0.0,
                              const=b.coin(0.2))
                _add(b, kind, [count, x, *extra], _body(b, [x, *extra]))
            else:
                elems = [_same(b, x) for _ in range(b.randint(0, 3))]
                acc_body = _body(b, [x, x])
                _add(b, kind, [x, *elems], acc_body)
        except StepError:
            continue

