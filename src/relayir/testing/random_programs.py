"""Random well-typed Relay programs, for property tests of passes and executors.

``random_program(seed)`` returns ``(mod, inputs)``: a module whose ``@main`` mixes
dataflow sharing, ``let``, tuples, ``if``, closures and calls of elementwise and
broadcast ops, and numpy inputs for it. Values stay finite (bounded ops only), so
results can be compared with tolerances.
"""

from __future__ import annotations

import random

import numpy as np

from ..ir.expr import Call, Function, If, Let, Tuple, TupleGetItem, Var, const
from ..ir.module import IRModule
from ..ir.op import call
from ..ir.types import TensorType

_SHAPES = [(2, 3), (3,), (1, 3), ()]
_UNARY = ["tanh", "sigmoid", "negative", "abs", "floor", "ceil", "sin", "cos"]
_BINARY = ["add", "subtract", "multiply", "maximum", "minimum"]


def _broadcast(a, b):
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + a
    b = (1,) * (n - len(b)) + b
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y))
    return tuple(out)


class _Gen:
    def __init__(self, seed: int, size: int):
        self.rng = random.Random(seed)
        self.size = size
        self.pool: list[tuple] = []  # (expr, shape)
        self.lets: list[tuple[Var, object]] = []
        self.counter = 0

    def fresh(self, prefix: str) -> Var:
        self.counter += 1
        return Var(f"{prefix}{self.counter}")

    def pick(self, shape=None):
        cands = [p for p in self.pool if shape is None or p[1] == shape]
        return self.rng.choice(cands) if cands else None

    def add(self, expr, shape):
        if self.rng.random() < 0.3:  # bind with let instead of sharing in the graph
            v = self.fresh("v")
            self.lets.append((v, expr))
            expr = v
        self.pool.append((expr, shape))

    def step(self) -> None:
        r = self.rng.random()
        a, sa = self.pick()
        if r < 0.3:
            self.add(call(self.rng.choice(_UNARY), [a]), sa)
        elif r < 0.65:
            b, sb = self.pick()
            shape = _broadcast(sa, sb)
            if shape is None:
                b, sb = a, sa
                shape = sa
            self.add(call(self.rng.choice(_BINARY), [a, b]), shape)
        elif r < 0.72:
            data = np.asarray(self.rng.uniform(-1, 1), "float32") if not sa else (
                np.random.default_rng(self.rng.randrange(1 << 30)).uniform(-1, 1, sa)
                .astype("float32"))
            self.add(call("add", [a, const(data)]), sa)
        elif r < 0.8:
            b, sb = self.pick()
            idx = self.rng.randrange(2)
            self.add(TupleGetItem(Tuple([a, b]), idx), (sa, sb)[idx])
        elif r < 0.9:
            b, sb = self.pick(sa)
            cond = call("less", [call("tanh", [a]), call("sigmoid", [b])])
            if sa:
                cond_scalar = self.pick(())
                if cond_scalar is None:
                    return
                cond = call("less", [cond_scalar[0], const(np.float32(0.2))])
            self.add(If(cond, call("negative", [a]), call("tanh", [b])), sa)
        else:
            p = Var(f"p{self.counter}", TensorType(sa, "float32"))
            b, sb = self.pick()
            shape = _broadcast(sa, sb) or sa
            body = call("multiply", [p, b]) if _broadcast(sa, sb) else call("tanh", [p])
            fn = Function([p], body)
            f = self.fresh("f")
            self.lets.append((f, fn))
            self.pool.append((Call(f, (a,)), shape))


def random_program(seed: int, size: int = 12):
    """A random module and inputs; ``size`` is the number of construction steps."""
    g = _Gen(seed, size)
    rng = np.random.default_rng(seed)
    params, inputs = [], []
    for i in range(g.rng.randint(1, 3)):
        shape = g.rng.choice(_SHAPES)
        p = Var(f"x{i}", TensorType(shape, "float32"))
        params.append(p)
        inputs.append(rng.uniform(-1, 1, shape).astype("float32"))
        g.pool.append((p, shape))
    g.pool.append((const(np.float32(0.5)), ()))
    for _ in range(size):
        g.step()
    outs = [e for e, _ in g.pool[-2:]]
    body = Tuple(outs) if g.rng.random() < 0.5 else outs[-1]
    for v, value in reversed(g.lets):
        body = Let(v, value, body)
    return IRModule.from_expr(Function(params, body)), inputs
