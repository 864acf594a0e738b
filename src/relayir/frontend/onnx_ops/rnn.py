"""Recurrent layers: RNN, GRU, LSTM over their (static) sequence length.

The input projection of all steps is one ``nn.dense``. The recurrence of a standard
cell (default activations, or relu for the RNN; no clip, peepholes or input_forget;
float32/float64) is one ``nn.lstm_sequence`` / ``nn.gru_sequence`` / ``nn.rnn_sequence``
per direction (``op/nn/recurrent.py``: every step in one kernel, the gates fused), with
the gates reordered to torch's order (LSTM i, f, g, o; GRU r, z, n) and ``R`` packed,
both folded at build time. Any other cell is unrolled: each time step is plain Relay
(``nn.dense``, activations, elementwise math) in ONNX's gate orders (GRU: z, r, h;
LSTM: i, o, f, c; peepholes: i, o, f). ``layout=1`` (batch first) is transposed at the
edges; ``direction="bidirectional"`` runs the two directions separately.
"""

from __future__ import annotations

import numpy as np

from ...ir.expr import TupleGetItem, const
from ...op import nn as N
from ...op import tensor as E
from ...op import transform as T
from ..common import ConversionError
from .base import OnnxTable, dtype, shape, value

TABLE = OnnxTable()


def _activation(name: str, alpha, beta):
    def scalar(v, x):
        return const(np.asarray(v, dtype(x)))

    table = {
        "relu": N.relu, "tanh": E.tanh, "sigmoid": E.sigmoid,
        "affine": lambda x: E.add(E.multiply(scalar(alpha, x), x), scalar(beta, x)),
        "leakyrelu": lambda x: N.leaky_relu(x, alpha=float(alpha)),
        "scaledtanh": lambda x: E.multiply(scalar(alpha, x),
                                           E.tanh(E.multiply(scalar(beta, x), x))),
        "hardsigmoid": lambda x: T.clip(E.add(E.multiply(scalar(alpha, x), x),
                                              scalar(beta, x)), 0.0, 1.0),
        "softsign": lambda x: E.divide(x, E.add(scalar(1, x), E.abs(x))),
        "softplus": lambda x: E.log(E.add(E.exp(x), scalar(1, x))),
    }
    key = name.lower()
    if key not in table:
        raise ConversionError(f"activation {name!r} not supported")
    return table[key]


def _activations(names, alphas, betas, defaults, num_dir):
    names = list(names) if names else defaults * num_dir
    alphas, betas = list(alphas or []), list(betas or [])
    out = []
    for k, name in enumerate(names):
        alpha = alphas[k] if k < len(alphas) else {"leakyrelu": 0.01, "hardsigmoid": 0.2}.get(
            name.lower(), 1.0)
        beta = betas[k] if k < len(betas) else {"hardsigmoid": 0.5}.get(name.lower(), 0.0)
        out.append(_activation(name, alpha, beta))
    n = len(defaults)
    return [out[d * n:(d + 1) * n] for d in range(num_dir)]


def _gates(x, n):
    parts = T.split(x, n, axis=-1)
    return [TupleGetItem(parts, i) for i in range(n)]


def _run(kind, x, w, r, b, seq_lens, init_h, init_c, p, attrs, outputs):
    direction = attrs.get("direction", "forward")
    num_dir = 2 if direction == "bidirectional" else 1
    hidden = int(attrs["hidden_size"]) if attrs.get("hidden_size") else shape(r)[-1]
    layout = int(attrs.get("layout", 0))
    if layout:
        x = T.transpose(x, (1, 0, 2))
        init_h = None if init_h is None else T.transpose(init_h, (1, 0, 2))
        init_c = None if init_c is None else T.transpose(init_c, (1, 0, 2))
    steps, batch, _ = shape(x)
    if not isinstance(steps, int):
        raise ConversionError(f"{kind} needs a static sequence length, found {steps}")
    if seq_lens is not None and np.any(np.asarray(value(seq_lens, "sequence_lens")) != steps):
        raise ConversionError(f"{kind} with sequence_lens shorter than the sequence "
                              "is not supported")
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[kind]
    defaults = {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"],
                "LSTM": ["Sigmoid", "Tanh", "Tanh"]}[kind]
    acts = _activations(attrs.get("activations"), attrs.get("activation_alpha"),
                        attrs.get("activation_beta"), defaults, num_dir)
    clip = attrs.get("clip")
    dt = dtype(x)
    zeros = const(np.zeros((batch, hidden), dt))
    flat = T.reshape(x, (steps * batch, -1))
    names = [n.lower() for n in attrs.get("activations") or defaults * num_dir]
    ys, hs, cs = [], [], []
    for d in range(num_dir):
        wd, rd = T.take(w, const(np.int64(d)), axis=0), T.take(r, const(np.int64(d)), axis=0)
        bd = None if b is None else _gates(T.take(b, const(np.int64(d)), axis=0), 2)
        h = zeros if init_h is None else T.take(init_h, const(np.int64(d)), axis=0)
        c = zeros if init_c is None else T.take(init_c, const(np.int64(d)), axis=0)
        reverse = direction == "reverse" or d == 1
        cell = names[d * len(defaults):(d + 1) * len(defaults)]
        if _standard_cell(kind, cell, attrs, p, dt) and steps > 0:
            y, h, c = _sequence(kind, flat, wd, rd, bd, h, c, (steps, batch, hidden), cell,
                                reverse, attrs)
            ys.append(y)
            hs.append(h)
            cs.append(c)
            continue
        xw = T.reshape(N.dense(flat, wd), (steps, batch, gates * hidden))
        wb = rb = None
        if bd is not None:
            wb, rb = bd
            xw = E.add(xw, wb)
        pd = None if p is None else _gates(T.take(p, const(np.int64(d)), axis=0), 3)
        order = range(steps - 1, -1, -1) if reverse else range(steps)
        y = [None] * steps
        for t in order:
            xt = T.take(xw, const(np.int64(t)), axis=0)
            h, c = _STEP[kind](xt, h, c, rd, rb, pd, acts[d], clip, hidden, attrs)
            y[t] = h
        ys.append(T.stack(y, 0))
        hs.append(h)
        cs.append(c)
    y = T.stack(ys, 1)  # (steps, num_dir, batch, hidden)
    y_h, y_c = T.stack(hs, 0), T.stack(cs, 0)
    if layout:
        y = T.transpose(y, (2, 0, 1, 3))
        y_h, y_c = T.transpose(y_h, (1, 0, 2)), T.transpose(y_c, (1, 0, 2))
    outs = (y, y_h, y_c)[:max(outputs, 1)] if kind == "LSTM" else (y, y_h)[:max(outputs, 1)]
    return outs[0] if len(outs) == 1 else outs


# ---------------------------------------------------------------- one sequence op

_GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
_TORCH_ORDER = {"RNN": (0,), "GRU": (1, 0, 2), "LSTM": (0, 2, 3, 1)}  # ONNX gate per slot
_STANDARD = {"RNN": (["tanh"], ["relu"]), "GRU": (["sigmoid", "tanh"],),
             "LSTM": (["sigmoid", "tanh", "tanh"],)}


def _standard_cell(kind, activations, attrs, p, dt) -> bool:
    """Whether the sequence ops compute this cell: standard activations, no clip,
    peepholes or input_forget, a dtype their kernels have."""
    return (activations in _STANDARD[kind] and attrs.get("clip") is None and p is None
            and not attrs.get("input_forget", 0) and dt in ("float32", "float64"))


def _torch_order(x, kind):
    """``x``'s gate blocks (axis 0, ONNX's order) in torch's order."""
    perm = _TORCH_ORDER[kind]
    if perm == tuple(range(len(perm))):
        return x
    parts = T.split(x, len(perm), axis=0)
    return T.concatenate([TupleGetItem(parts, i) for i in perm], 0)


def _sequence(kind, flat, wd, rd, bd, h, c, dims, activations, reverse, attrs):
    """One direction as one sequence op: ``(y (steps, batch, hidden), h, c)``."""
    steps, batch, hidden = dims
    gates, dt = _GATES[kind], dtype(flat)
    data = T.reshape(N.dense(flat, _torch_order(wd, kind)), (steps, batch, gates * hidden))
    wb, rb = (None, None) if bd is None else (_torch_order(bd[0], kind),
                                              _torch_order(bd[1], kind))
    for bias in (wb, rb if kind != "GRU" else None):  # linear adds belong in the data
        if bias is not None:
            data = E.add(data, bias)
    packed = N.pack_recurrent_weight(_torch_order(rd, kind), gates, hidden, dtype=dt)
    if kind == "LSTM":
        out = N.lstm_sequence(data, h, c, packed, reverse=reverse)
        return TupleGetItem(out, 0), TupleGetItem(out, 1), TupleGetItem(out, 2)
    if kind == "GRU":
        bias = rb if rb is not None else const(np.zeros(gates * hidden, dt))
        out = N.gru_sequence(data, h, packed, bias, reverse=reverse,
                             linear_before_reset=bool(attrs.get("linear_before_reset", 0)))
    else:
        out = N.rnn_sequence(data, h, packed, activation=activations[0], reverse=reverse)
    return TupleGetItem(out, 0), TupleGetItem(out, 1), c


# ---------------------------------------------------------------- unrolled steps


def _clipped(v, clip):
    return v if clip is None else T.clip(v, -float(clip), float(clip))


def _rnn_step(xt, h, c, rd, rb, pd, acts, clip, hidden, attrs):
    g = E.add(xt, N.dense(h, rd))
    if rb is not None:
        g = E.add(g, rb)
    return acts[0](_clipped(g, clip)), c


def _gru_step(xt, h, c, rd, rb, pd, acts, clip, hidden, attrs):
    f, g = acts
    xz, xr, xh = _gates(xt, 3)
    rz, rr, rh = (T.strided_slice(rd, [k * hidden], [(k + 1) * hidden], axes=[0])
                  for k in range(3))
    bz = br = bh = None
    if rb is not None:
        bz, br, bh = _gates(rb, 3)

    def rec(weight, bias, state):
        out = N.dense(state, weight)
        return out if bias is None else E.add(out, bias)

    z = f(_clipped(E.add(xz, rec(rz, bz, h)), clip))
    r = f(_clipped(E.add(xr, rec(rr, br, h)), clip))
    if attrs.get("linear_before_reset", 0):
        cand = E.add(xh, E.multiply(r, rec(rh, bh, h)))
    else:
        cand = E.add(xh, rec(rh, bh, E.multiply(r, h)))
    cand = g(_clipped(cand, clip))
    one = const(np.asarray(1, dtype(h)))
    return E.add(E.multiply(E.subtract(one, z), cand), E.multiply(z, h)), c


def _lstm_step(xt, h, c, rd, rb, pd, acts, clip, hidden, attrs):
    f, g, hact = acts
    pre = E.add(xt, N.dense(h, rd))
    if rb is not None:
        pre = E.add(pre, rb)
    i, o, fg, cc = _gates(pre, 4)
    if pd is not None:
        i = E.add(i, E.multiply(pd[0], c))
        fg = E.add(fg, E.multiply(pd[2], c))
    i = f(_clipped(i, clip))
    fg = f(_clipped(fg, clip))
    if attrs.get("input_forget", 0):
        fg = E.subtract(const(np.asarray(1, dtype(h))), i)
    c_new = E.add(E.multiply(fg, c), E.multiply(i, g(_clipped(cc, clip))))
    if pd is not None:
        o = E.add(o, E.multiply(pd[1], c_new))
    o = f(_clipped(o, clip))
    return E.multiply(o, hact(c_new)), c_new


_STEP = {"RNN": _rnn_step, "GRU": _gru_step, "LSTM": _lstm_step}


@TABLE.register("RNN", since=7)
def rnn(x, w, r, b=None, sequence_lens=None, initial_h=None, _outputs=1, **attrs):
    return _run("RNN", x, w, r, b, sequence_lens, initial_h, None, None, attrs, _outputs)


@TABLE.register("GRU", since=7)
def gru(x, w, r, b=None, sequence_lens=None, initial_h=None, _outputs=1, **attrs):
    return _run("GRU", x, w, r, b, sequence_lens, initial_h, None, None, attrs, _outputs)


@TABLE.register("LSTM", since=7)
def lstm(x, w, r, b=None, sequence_lens=None, initial_h=None, initial_c=None, p=None,
         _outputs=1, **attrs):
    return _run("LSTM", x, w, r, b, sequence_lens, initial_h, initial_c, p, attrs, _outputs)
