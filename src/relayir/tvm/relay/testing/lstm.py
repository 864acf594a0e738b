"""``relay.testing.lstm``: Relay's unrolled LSTM, a workload with what image nets lack:
a function literal called in the body, ``let`` chains with typed binders, tuples of
states and ``split``.

``get_net(n, ...)`` calls one cell function per step. Step ``i`` reads its own input
``%data`` (every step's input has that name, so ``create_workload`` leaves them all
out of ``params``) and its own weights ``i2h_{i}_weight``, ``i2h_{i}_bias``,
``h2h_{i}_weight``, ``h2h_{i}_bias``; the states start at zeros and the result is the
last step's hidden state, ``(batch_size, num_hidden)``.
"""

from __future__ import annotations

from .. import Call, Function, ScopeBuilder, TensorType, Tuple, TupleGetItem, TupleType, Var
from ..analysis import free_vars
from ..op import add, multiply, nn, sigmoid, split, tanh, zeros
from .init import create_workload


class _Types:
    """The cell's tensor and tuple types, for one batch size, width and dtype."""

    def __init__(self, num_hidden: int, batch_size: int, dtype: str):
        self.hidden = TensorType((batch_size, num_hidden), dtype)
        self.gates = TensorType((batch_size, 4 * num_hidden), dtype)
        self.weight = TensorType((4 * num_hidden, num_hidden), dtype)
        self.bias = TensorType((4 * num_hidden,), dtype)
        self.state = TupleType([self.hidden, self.hidden])
        self.step = TupleType([self.hidden, self.state])


def lstm_cell(num_hidden: int, batch_size: int = 1, dtype: str = "float32",
              name: str = "") -> Function:
    """One LSTM step as a function of ``(inputs, (h, c), i2h_weight, i2h_bias, h2h_weight,
    h2h_bias)`` → ``(h', (h', c'))``, each value a typed ``let`` as Relay writes it.
    ``name`` is kept for Relay's signature; the weights are parameters, so it names
    nothing."""
    t = _Types(num_hidden, batch_size, dtype)
    inputs, states = Var("inputs", t.hidden), Var("states", t.state)
    weights = [Var(n, ty) for n, ty in (("i2h_weight", t.weight), ("i2h_bias", t.bias),
                                        ("h2h_weight", t.weight), ("h2h_bias", t.bias))]
    i2h_w, i2h_b, h2h_w, h2h_b = weights
    sb = ScopeBuilder()
    i2h = sb.let(("i2h", t.gates), nn.bias_add(nn.dense(inputs, i2h_w), i2h_b, axis=-1))
    h = TupleGetItem(states, 0)
    h2h = sb.let(("h2h", t.gates), nn.bias_add(nn.dense(h, h2h_w), h2h_b, axis=-1))
    gates = sb.let(("gates", t.gates), add(i2h, h2h))
    parts = sb.let(("slice_gates", TupleType([t.hidden] * 4)),
                   split(gates, indices_or_sections=4, axis=1).astuple())
    in_gate, forget_gate, in_transform, out_gate = (
        sb.let((binder, t.hidden), act(TupleGetItem(parts, k)))
        for k, (binder, act) in enumerate((("in_gate", sigmoid), ("forget_gate", sigmoid),
                                           ("in_transform", tanh), ("out_gate", sigmoid))))
    c = TupleGetItem(states, 1)
    next_c = sb.let(("next_c", t.hidden),
                    add(multiply(forget_gate, c), multiply(in_gate, in_transform)))
    next_h = sb.let(("next_h", t.hidden), multiply(out_gate, tanh(next_c)))
    sb.ret(sb.let(("ret", t.step), Tuple([next_h, Tuple([next_h, next_c])])))
    return Function([inputs, states, *weights], sb.get(), t.step)


def get_net(iterations: int, num_hidden: int, batch_size: int = 1,
            dtype: str = "float32") -> Function:
    """``iterations`` cells chained through their states, each called with its own input
    and weights (named as Relay names them)."""
    t = _Types(num_hidden, batch_size, dtype)
    sb = ScopeBuilder()
    zero = sb.let(("zeros", t.hidden), zeros((batch_size, num_hidden), dtype))
    states = sb.let(("init_states", t.state), Tuple([zero, zero]))
    out = None
    for i in range(iterations):
        args = [Var("data", t.hidden), states]
        args += [Var(f"{layer}_{i}_{kind}", t.weight if kind == "weight" else t.bias)
                 for layer in ("i2h", "h2h") for kind in ("weight", "bias")]
        step = sb.let((f"call_{i}", t.step),
                      Call(lstm_cell(num_hidden, batch_size, dtype, f"lstm_{i}"), args))
        out = sb.let((f"out_{i}", t.hidden), TupleGetItem(step, 0))
        states = sb.let((f"states_{i}", t.state), TupleGetItem(step, 1))
    sb.ret(out)
    body = sb.get()
    return Function(free_vars(body), body, t.hidden)


def get_workload(iterations: int, num_hidden: int, batch_size: int = 1,
                 dtype: str = "float32"):
    """``(mod, params)``: every weight Xavier-initialised, biases zero; the step inputs
    (all named ``data``) are left to the caller."""
    return create_workload(get_net(iterations, num_hidden, batch_size, dtype))


__all__ = ["get_net", "get_workload", "lstm_cell"]
