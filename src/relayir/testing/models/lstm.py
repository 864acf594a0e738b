"""A single-layer LSTM (torch.nn.LSTM semantics, gates in the order i, f, g, o).

``lstm`` unrolls the recurrence into one static dataflow graph, the form the graph
executor and operator fusion see. ``lstm_recursive`` writes the same cell as a Relay
recursive global function over a prelude ``List`` of time steps, the form the VM and
higher-order autodiff work on. Parameter names are ``torch.nn.LSTM``'s
(``weight_ih_l0``, ``weight_hh_l0``, ``bias_ih_l0``, ``bias_hh_l0``).
"""

from __future__ import annotations

import math

from ...ir.adt import Clause, Match, PatternConstructor, PatternVar
from ...ir.expr import Expr, Function, GlobalVar, Let, Tuple, Var, var
from ...ir.module import IRModule
from ...ir.types import TensorType, TupleType, TypeCall
from ...op import nn
from ...op.tensor import sigmoid, tanh
from ...op.transform import split, squeeze, stack, zeros
from .layers import ParamSet, make_data

_WEIGHTS = ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0")


def _weights(seed: int, input_size: int, hidden_size: int) -> ParamSet:
    """torch.nn.LSTM's initialisation: every weight ``U(-1/sqrt(hidden), 1/sqrt(hidden))``."""
    ps = ParamSet(seed)
    k = 1 / math.sqrt(hidden_size)
    shapes = ((4 * hidden_size, input_size), (4 * hidden_size, hidden_size),
              (4 * hidden_size,), (4 * hidden_size,))
    for name, shape in zip(_WEIGHTS, shapes):
        ps.uniform(name, shape, -k, k)
    return ps


def _cell(x: Expr, h: Expr, c: Expr, weights) -> tuple[Expr, Expr]:
    """One step: ``(h, c)`` from the input ``x`` ``(batch, input)`` and the state."""
    w_ih, w_hh, b_ih, b_hh = weights
    gates = nn.dense(x, w_ih) + b_ih + nn.dense(h, w_hh) + b_hh  # (batch, 4 * hidden)
    g = split(gates, 4, axis=1)
    c = sigmoid(g[1]) * c + sigmoid(g[0]) * tanh(g[2])
    return sigmoid(g[3]) * tanh(c), c


def _data(seq_len: int, batch_size: int, input_size: int) -> Var:
    return var("data", shape=(seq_len, batch_size, input_size), dtype="float32")


def _time_steps(data: Expr, seq_len: int) -> list[Expr]:
    """``(seq, batch, input)`` -> ``seq`` tensors ``(batch, input)``."""
    parts = split(data, seq_len, axis=0)
    return [squeeze(parts[t], axis=[0]) for t in range(seq_len)]


def lstm(batch_size: int = 1, seq_len: int = 32, input_size: int = 128,
         hidden_size: int = 256, seed: int = 0):
    """``(mod, params)``: ``@main(%data: (seq, batch, input), weights...)`` returns every
    step's hidden state stacked, ``(seq, batch, hidden)``, from a zero initial state."""
    ps = _weights(seed, input_size, hidden_size)
    data = _data(seq_len, batch_size, input_size)
    h = c = zeros((batch_size, hidden_size), "float32")
    outs = []
    for x in _time_steps(data, seq_len):
        h, c = _cell(x, h, c, ps.vars)
        outs.append(h)
    return ps.module([data], stack(outs, axis=0))


def _fresh(vs) -> list[Var]:
    return [Var(v.name_hint, v.type_annotation) for v in vs]


def lstm_recursive(mod: IRModule | None = None, batch_size: int = 1, seq_len: int = 32,
                   input_size: int = 128, hidden_size: int = 256, seed: int = 0):
    """``(mod, params)`` with the prelude (added to ``mod`` if given, which is updated in
    place) and three globals:

    - ``@lstm_cell(%x, %h, %c, weights...) -> (h, c)``: one step;
    - ``@lstm(%xs: List[Tensor[(batch, input)]], %h, %c, weights...) -> h``: recursion
      over the list, returning the final hidden state;
    - ``@main(%data: (seq, batch, input), weights...)``: the list of ``data``'s time
      steps run from a zero state, i.e. ``torch.nn.LSTM``'s ``h_n[0]``.

    ``list_value`` builds a ``List`` argument to call ``@lstm`` directly.
    """
    from ...prelude import Prelude

    p = Prelude(mod)
    mod = p.mod
    ps = _weights(seed, input_size, hidden_size)
    step_t = TensorType((batch_size, input_size), "float32")
    state_t = TensorType((batch_size, hidden_size), "float32")
    list_t = TypeCall(p.List, [step_t])

    cell = GlobalVar("lstm_cell")
    x, h, c = var("x", step_t), var("h", state_t), var("c", state_t)
    w = _fresh(ps.vars)
    mod[cell] = Function([x, h, c, *w], Tuple(list(_cell(x, h, c, w))),
                         TupleType((state_t, state_t)))

    loop = GlobalVar("lstm")
    xs, h, c, w = var("xs", list_t), var("h", state_t), var("c", state_t), _fresh(ps.vars)
    x, rest, s = var("x", step_t), var("rest", list_t), var("s")
    step = Let(s, cell(x, h, c, *w), loop(rest, s[0], s[1], *w))
    body = Match(xs, [Clause(PatternConstructor(p.Cons, (PatternVar(x), PatternVar(rest))),
                             step),
                      Clause(PatternConstructor(p.Nil, ()), h)])
    mod[loop] = Function([xs, h, c, *w], body, state_t)

    data = _data(seq_len, batch_size, input_size)
    steps = p.Nil()
    for x in reversed(_time_steps(data, seq_len)):
        steps = p.Cons(x, steps)
    zero = zeros((batch_size, hidden_size), "float32")
    mod["main"] = Function([data, *ps.vars], loop(steps, zero, zero, *ps.vars), state_t)
    return mod, dict(ps.values)


def list_value(mod: IRModule, items):
    """The run-time prelude ``List`` of ``items`` (e.g. numpy time steps), for ``@lstm``."""
    from ...runtime.values import ConstructorValue

    cons, nil = mod.get_constructor("Cons"), mod.get_constructor("Nil")
    value = ConstructorValue(nil.tag, (), nil)
    for item in reversed(list(items)):
        value = ConstructorValue(cons.tag, (item, value), cons)
    return value


make_inputs = make_data
