"""Gradients of the recurrent sequence ops (``op/nn/recurrent.py``): back-propagation
through time, written with existing ops so it runs on every backend.

The forward pass is not run again step by step: every step's previous hidden state is
known (``h0`` and the op's own ``y``), so the gate pre-activations of all steps are one
``nn.dense`` over the whole sequence. Only the LSTM's cell state is rebuilt step by step
(elementwise). The backward pass then walks the steps from the last processed to the
first, carrying ``dh`` (and ``dc``) through ``dA W`` per step; the data gradient is the
stack of the gate gradients and the weight gradient one ``nn.dense`` of them with the
previous states, packed like the weight (padding units get zero). Static shapes only.
"""

from __future__ import annotations

from ....ir.expr import TupleGetItem, const
from ....op import nn as _nn
from ....op import reduce as _r
from ....op import tensor as _e
from ....op import transform as _t
from ....op.nn.recurrent import GATES, pack_recurrent_weight
from . import GRADIENT
from ._util import dtype_of, shape_of


def _unpack(weight, hidden: int):
    """The packed ``(blocks, H, G, block)`` weight as ``W`` ``(G * H, H)``."""
    blocks, k, gates, block = shape_of(weight)
    w = _t.reshape(_t.transpose(weight, (2, 0, 3, 1)), (gates, blocks * block, k))
    return _t.reshape(_t.strided_slice(w, [0, 0, 0], [gates, hidden, k]), (gates * hidden, k))


def _steps(x, seq: int) -> list:
    """``x (seq, ...)`` as ``seq`` tensors ``(...)``."""
    if seq == 1:
        return [_t.squeeze(x, [0])]
    parts = _t.split(x, seq, axis=0)
    return [_t.squeeze(TupleGetItem(parts, t), [0]) for t in range(seq)]


class _Sequence:
    """What every cell's rule shares: shapes, processing order, previous states."""

    def __init__(self, call, out, hidden_arg: int = 1):
        self.data, self.h0 = call.args[0], call.args[hidden_arg]
        self.seq, self.batch, _ = shape_of(self.data)
        self.hidden = shape_of(self.h0)[1]
        self.dtype = dtype_of(self.data)
        self.order = list(range(self.seq))[::-1] if call.attrs.reverse else list(range(self.seq))
        self.y = TupleGetItem(out, 0)
        ys = _steps(self.y, self.seq)
        self.prev = {}  # step -> the hidden state it started from
        last = self.h0
        for t in self.order:
            self.prev[t] = last
            last = ys[t]
        self.prev_all = _t.stack([self.prev[t] for t in range(self.seq)], 0)  # (S, B, H)

    def one(self):
        return const(1.0, self.dtype)

    def weight_grad(self, grads_by_step: dict, prev=None):
        """``sum_t dA_t^T prev_t`` (``prev``: what the weight multiplied, by default the
        previous hidden states): ``(width of dA, H)``."""
        da = _t.stack([grads_by_step[t] for t in range(self.seq)], 0)
        flat_da = _t.reshape(da, (self.seq * self.batch, -1))
        flat_h = _t.reshape(self.prev_all if prev is None else prev,
                            (self.seq * self.batch, self.hidden))
        return _nn.dense(_t.transpose(flat_da, (1, 0)), _t.transpose(flat_h, (1, 0)))


def _packed_like(dw, weight, gates: int, hidden: int):
    block = shape_of(weight)[3]
    return pack_recurrent_weight(dw, gates, hidden, block, dtype=dtype_of(weight))


@GRADIENT.register("nn.lstm_sequence")
def _lstm_sequence(call, out, g):
    s = _Sequence(call, out)
    weight = call.args[3]
    w = _unpack(weight, s.hidden)
    one = s.one()
    a = s.data + _nn.dense(s.prev_all, w)  # (S, B, 4H): every step's pre-activations
    parts = _t.split(a, 4, axis=-1)
    gi, gf, gg, go = (_steps(f(TupleGetItem(parts, k)), s.seq)
                      for k, f in enumerate((_e.sigmoid, _e.sigmoid, _e.tanh, _e.sigmoid)))
    c_prev, cell, c = {}, {}, call.args[2]
    for t in s.order:  # the cell states, rebuilt (elementwise)
        c_prev[t] = c
        c = cell[t] = gf[t] * c + gi[t] * gg[t]
    gys = _steps(g[0], s.seq)
    w_t = _t.transpose(w, (1, 0))
    dh, dc, da = g[1], g[2], {}
    for t in reversed(s.order):
        dh = gys[t] + dh
        tc = _e.tanh(cell[t])
        do = dh * tc
        dc = dc + dh * go[t] * (one - tc * tc)
        di, dg, df = dc * gg[t], dc * gi[t], dc * c_prev[t]
        dc = dc * gf[t]
        da[t] = _t.concatenate([di * gi[t] * (one - gi[t]), df * gf[t] * (one - gf[t]),
                                dg * (one - gg[t] * gg[t]), do * go[t] * (one - go[t])], -1)
        dh = _nn.dense(da[t], w_t)
    dw = s.weight_grad(da)
    return [_t.stack([da[t] for t in range(s.seq)], 0), dh, dc,
            _packed_like(dw, weight, 4, s.hidden)]


@GRADIENT.register("nn.gru_sequence")
def _gru_sequence(call, out, g):
    s = _Sequence(call, out)
    weight, bias = call.args[2], call.args[3]
    hidden, one = s.hidden, s.one()
    w = _unpack(weight, hidden)
    w_rz, w_n = (_t.strided_slice(w, [b], [e], axes=[0]) for b, e in
                 ((0, 2 * hidden), (2 * hidden, 3 * hidden)))
    b_rz, b_n = (_t.strided_slice(bias, [b], [e], axes=[0]) for b, e in
                 ((0, 2 * hidden), (2 * hidden, 3 * hidden)))
    x = _t.split(s.data, 3, axis=-1)
    x_r, x_z, x_n = (TupleGetItem(x, k) for k in range(3))
    rec_rz = _t.split(_nn.dense(s.prev_all, w_rz) + b_rz, 2, axis=-1)
    r_all = _e.sigmoid(x_r + TupleGetItem(rec_rz, 0))
    z = _steps(_e.sigmoid(x_z + TupleGetItem(rec_rz, 1)), s.seq)
    r = _steps(r_all, s.seq)
    lbr = call.attrs.linear_before_reset
    q_in = s.prev_all if lbr else r_all * s.prev_all  # what W_n multiplies
    q_all = _nn.dense(q_in, w_n) + b_n
    q = _steps(q_all, s.seq)
    n = _steps(_e.tanh(x_n + (r_all * q_all if lbr else q_all)), s.seq)
    gys = _steps(g[0], s.seq)
    w_rz_t, w_n_t = _t.transpose(w_rz, (1, 0)), _t.transpose(w_n, (1, 0))
    dh, d_data, d_rz, d_q = g[1], {}, {}, {}
    for t in reversed(s.order):
        h_prev = s.prev[t]
        dh = gys[t] + dh
        dz = dh * (h_prev - n[t])
        dan = dh * (one - z[t]) * (one - n[t] * n[t])
        if lbr:
            d_q[t] = dan * r[t]
            dr = dan * q[t]
            d_in = None
        else:
            d_q[t] = dan
            d_in = _nn.dense(dan, w_n_t)  # d(r * h)
            dr = d_in * h_prev
        dar, daz = dr * r[t] * (one - r[t]), dz * z[t] * (one - z[t])
        d_rz[t] = _t.concatenate([dar, daz], -1)
        d_data[t] = _t.concatenate([dar, daz, dan], -1)
        back = dh * z[t] + _nn.dense(d_rz[t], w_rz_t)
        if lbr:
            back = back + _nn.dense(d_q[t], w_n_t)
        else:
            back = back + d_in * r[t]
        dh = back
    dw_rz = s.weight_grad(d_rz)
    dw_n = s.weight_grad(d_q, None if lbr else q_in)
    stacked = _t.concatenate([_t.stack([d_rz[t] for t in range(s.seq)], 0),
                              _t.stack([d_q[t] for t in range(s.seq)], 0)], -1)
    dbias = _r.sum(stacked, axis=[0, 1])
    dw = _t.concatenate([dw_rz, dw_n], 0)
    return [_t.stack([d_data[t] for t in range(s.seq)], 0), dh,
            _packed_like(dw, weight, 3, hidden), dbias]


@GRADIENT.register("nn.rnn_sequence")
def _rnn_sequence(call, out, g):
    s = _Sequence(call, out)
    weight = call.args[2]
    w = _unpack(weight, s.hidden)
    one = s.one()
    ys = _steps(s.y, s.seq)
    if call.attrs.activation == "relu":
        slope = _steps(_t.where(_e.greater(s.y, const(0.0, s.dtype)), _t.ones_like(s.y),
                                _t.zeros_like(s.y)), s.seq)
    else:
        slope = [one - y * y for y in ys]
    gys = _steps(g[0], s.seq)
    w_t = _t.transpose(w, (1, 0))
    dh, da = g[1], {}
    for t in reversed(s.order):
        dh = gys[t] + dh
        da[t] = dh * slope[t]
        dh = _nn.dense(da[t], w_t)
    return [_t.stack([da[t] for t in range(s.seq)], 0), dh,
            _packed_like(s.weight_grad(da), weight, GATES["nn.rnn_sequence"], s.hidden)]
