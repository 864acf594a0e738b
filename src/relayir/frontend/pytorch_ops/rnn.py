"""Recurrent layers: ``aten.lstm`` / ``gru`` / ``rnn_tanh`` / ``rnn_relu`` (whole stacked,
optionally bidirectional layers with flat weights) and their one-step cells.

For each layer and direction the input projection of every time step is one ``nn.dense``
over the whole sequence ``(seq, batch, in)``, computed before the recurrence. The
recurrence itself is one ``nn.lstm_sequence`` / ``nn.gru_sequence`` / ``nn.rnn_sequence``
(``op/nn/recurrent.py``: every step in one kernel, the gates fused) with ``W_hh`` packed
for it (folded at build time). An LSTM with a projection (``proj_size``) or a dtype the
sequence kernels lack (not float32/float64), and the one-step cells, are unrolled over
the static sequence length into dense, split, sigmoid/tanh/relu, multiply/add and stack.
Gates are in torch's order: LSTM i, f, g, o; GRU r, z, n with the reset gate applied to
``W_hn h + b_hn``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...ir.expr import Expr, const
from ...op import nn as N
from ...op import tensor as E
from ...op import transform as T
from ..common import ConversionError, ConverterTable
from .base import dtype, shape

TABLE = ConverterTable()


@dataclass(frozen=True)
class _Weights:
    """One layer and direction: ``W_ih (G*H, in)``, ``W_hh (G*H, H_out)``, the biases,
    and the LSTM projection ``W_hr (H_out, H)`` when ``proj_size > 0``."""

    w_ih: Expr
    w_hh: Expr
    b_ih: Expr | None = None
    b_hh: Expr | None = None
    w_hr: Expr | None = None


def _add(x, bias):
    return x if bias is None else E.add(x, bias)


def _unstack(x, n: int, axis: int = 0) -> list:
    """``x`` cut into its ``n`` slices along ``axis``, that axis dropped."""
    parts = T.split(x, n, axis)
    return [T.squeeze(parts[i], [axis]) for i in range(n)]


def _gates(x, n: int) -> list:
    """The ``n`` equal gate blocks of ``x``'s last axis, in torch's order."""
    parts = T.split(x, n, axis=-1)
    return [parts[i] for i in range(n)]


# ---------------------------------------------------------------- one step per cell type
# A step takes ``gi`` (this step's input projection, biases that can be hoisted already
# added), the state tuple and the weights; it returns the new state, whose first field is
# the step's output ``h``.


def _lstm_step(gi, state, w: _Weights):
    h, c = state
    i, f, g, o = _gates(E.add(gi, N.dense(h, w.w_hh)), 4)
    c = E.add(E.multiply(E.sigmoid(f), c), E.multiply(E.sigmoid(i), E.tanh(g)))
    h = E.multiply(E.sigmoid(o), E.tanh(c))
    if w.w_hr is not None:
        h = N.dense(h, w.w_hr)
    return h, c


def _gru_step(gi, state, w: _Weights):
    (h,) = state
    i_r, i_z, i_n = _gates(gi, 3)
    h_r, h_z, h_n = _gates(_add(N.dense(h, w.w_hh), w.b_hh), 3)
    r = E.sigmoid(E.add(i_r, h_r))
    z = E.sigmoid(E.add(i_z, h_z))
    n = E.tanh(E.add(i_n, E.multiply(r, h_n)))
    return (E.add(n, E.multiply(z, E.subtract(h, n))),)  # (1 - z) n + z h, as torch


def _rnn_step(activation: Callable):
    def step(gi, state, w: _Weights):
        (h,) = state
        return (activation(E.add(gi, N.dense(h, w.w_hh))),)

    return step


# kind -> (step, whether b_hh can be folded into the hoisted input projection)
_CELLS = {
    "lstm": (_lstm_step, True),
    "gru": (_gru_step, False),
    "rnn_tanh": (_rnn_step(E.tanh), True),
    "rnn_relu": (_rnn_step(N.relu), True),
}


def _input_projection(x, w: _Weights, fold_b_hh: bool):
    """``x W_ih^T + b_ih`` (``+ b_hh`` where the cell only ever adds it to the input's)."""
    bias = w.b_ih
    if fold_b_hh and w.b_hh is not None:
        bias = w.b_hh if bias is None else E.add(bias, w.b_hh)
    return _add(N.dense(x, w.w_ih), bias)


# ---------------------------------------------------------------- whole layers


_SEQUENCE_DTYPES = ("float32", "float64")


def _sequence(kind, xs, state: tuple, w: _Weights, reverse: bool):
    """One layer in one direction as one sequence op: ``(y, final state)``."""
    _, fold = _CELLS[kind]
    data = _input_projection(xs, w, fold)
    gates, hidden = shape(w.w_hh)[0] // shape(w.w_hh)[1], shape(w.w_hh)[1]
    dt = dtype(w.w_hh)
    packed = N.pack_recurrent_weight(w.w_hh, gates, hidden, dtype=dt)
    if kind == "lstm":
        out = N.lstm_sequence(data, *state, packed, reverse=reverse)
        return out[0], (out[1], out[2])
    if kind == "gru":
        bias = w.b_hh if w.b_hh is not None else const(np.zeros(gates * hidden, dt))
        out = N.gru_sequence(data, *state, packed, bias, reverse=reverse)
    else:
        out = N.rnn_sequence(data, *state, packed, activation=kind[4:], reverse=reverse)
    return out[0], (out[1],)


def _run_direction(kind, xs, seq_len: int, state: tuple, w: _Weights, reverse: bool):
    """One layer in one direction over ``xs (seq, batch, in)``: the stacked outputs
    ``(seq, batch, H_out)`` in time order, and the final state."""
    if w.w_hr is None and dtype(w.w_hh) in _SEQUENCE_DTYPES and seq_len > 0:
        return _sequence(kind, xs, state, w, reverse)
    step, fold = _CELLS[kind]
    projected = _unstack(_input_projection(xs, w, fold), seq_len)
    outs = [None] * seq_len
    for t in (reversed(range(seq_len)) if reverse else range(seq_len)):
        state = step(projected[t], state, w)
        outs[t] = state[0]
    return T.stack(outs, 0), state


def _group_weights(params, has_biases: bool, count: int) -> list[_Weights]:
    """torch's flat weight list -> one ``_Weights`` per layer and direction (per group:
    ``w_ih, w_hh[, b_ih, b_hh][, w_hr]``)."""
    params = list(params)
    size, extra = divmod(len(params), count)
    expected = 2 + 2 * bool(has_biases)
    if extra or size not in (expected, expected + 1):
        raise ConversionError(f"{len(params)} weights for {count} layer-direction(s) with "
                              f"has_biases={has_biases}")
    groups = []
    for k in range(count):
        g = params[k * size:(k + 1) * size]
        biases = g[2:4] if has_biases else [None, None]
        projection = g[expected] if size > expected else None
        groups.append(_Weights(g[0], g[1], *biases, w_hr=projection))
    return groups


def _recurrent(kind, input, hx: list, params, has_biases, num_layers, dropout,  # noqa: A002
               train, bidirectional, batch_first):
    """A whole ``nn.LSTM`` / ``nn.GRU`` / ``nn.RNN``: ``(output, h_n[, c_n])`` as torch."""
    if train and dropout and num_layers > 1:
        raise ConversionError(f"dropout={dropout} between layers in training mode "
                              f"(use model.eval())")
    seq_len = shape(input)[1 if batch_first else 0]
    if not isinstance(seq_len, int):
        raise ConversionError(f"the sequence length is dynamic ({seq_len}); recurrent "
                              f"layers are unrolled, so it must be static")
    num_layers, dirs = int(num_layers), 2 if bidirectional else 1
    weights = _group_weights(params, has_biases, num_layers * dirs)
    initial = [_unstack(s, num_layers * dirs) for s in hx]  # per state: one (batch, H) each
    finals = [[] for _ in hx]
    xs = T.transpose(input, [1, 0, 2]) if batch_first else input
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            y, state = _run_direction(kind, xs, seq_len, tuple(s[k] for s in initial),
                                      weights[k], reverse=d == 1)
            outs.append(y)
            for final, s in zip(finals, state):
                final.append(s)
        xs = outs[0] if dirs == 1 else T.concatenate(outs, 2)
    output = T.transpose(xs, [1, 0, 2]) if batch_first else xs
    return (output, *(T.stack(f, 0) for f in finals))


@TABLE.register("aten.lstm.input")
def lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,  # noqa: A002
         batch_first):
    return _recurrent("lstm", input, list(hx), params, has_biases, num_layers, dropout,
                      train, bidirectional, batch_first)


@TABLE.register("aten.gru.input")
def gru(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,  # noqa: A002
        batch_first):
    return _recurrent("gru", input, [hx], params, has_biases, num_layers, dropout, train,
                      bidirectional, batch_first)


@TABLE.register("aten.rnn_tanh.input")
def rnn_tanh(input, hx, params, has_biases, num_layers, dropout, train,  # noqa: A002
             bidirectional, batch_first):
    return _recurrent("rnn_tanh", input, [hx], params, has_biases, num_layers, dropout,
                      train, bidirectional, batch_first)


@TABLE.register("aten.rnn_relu.input")
def rnn_relu(input, hx, params, has_biases, num_layers, dropout, train,  # noqa: A002
             bidirectional, batch_first):
    return _recurrent("rnn_relu", input, [hx], params, has_biases, num_layers, dropout,
                      train, bidirectional, batch_first)


# ---------------------------------------------------------------- single cells


def _cell(kind, input, state: tuple, w_ih, w_hh, b_ih, b_hh):  # noqa: A002
    step, fold = _CELLS[kind]
    w = _Weights(w_ih, w_hh, b_ih, b_hh)
    return step(_input_projection(input, w, fold), state, w)


@TABLE.register("aten.lstm_cell.default")
def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):  # noqa: A002
    return _cell("lstm", input, tuple(hx), w_ih, w_hh, b_ih, b_hh)


@TABLE.register("aten.gru_cell.default")
def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):  # noqa: A002
    return _cell("gru", input, (hx,), w_ih, w_hh, b_ih, b_hh)[0]


@TABLE.register("aten.rnn_tanh_cell.default")
def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):  # noqa: A002
    return _cell("rnn_tanh", input, (hx,), w_ih, w_hh, b_ih, b_hh)[0]


@TABLE.register("aten.rnn_relu_cell.default")
def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):  # noqa: A002
    return _cell("rnn_relu", input, (hx,), w_ih, w_hh, b_ih, b_hh)[0]
