"""Recurrent sequences: a whole recurrent layer, in one direction, as one op.

``nn.lstm_sequence``, ``nn.gru_sequence`` and ``nn.rnn_sequence`` run every time step of
a layer, so a back end can run the recurrence in one kernel (the C back end: one routine
call, each thread keeping its slice of the weight in cache across steps, the gates
fused). The input projection is NOT part of the op: ``data`` is ``x W_ih^T + b_ih`` for
all steps at once (``(seq, batch, gates * hidden)``), one GEMM made before. For each step
``t`` (from the last when ``reverse``), with ``h`` the previous hidden state and
``W`` the recurrent weight ``W_hh`` (torch's ``weight_hh``: ``(gates * hidden, hidden)``)::

    LSTM (gates i, f, g, o)  a = data[t] + h W^T
                             c = σ(a_f) c + σ(a_i) tanh(a_g);  h = σ(a_o) tanh(c)
    GRU  (gates r, z, n)     b = h W^T + bias   (bias: b_hh, (3 * hidden,))
                             r = σ(data_r + b_r);  z = σ(data_z + b_z)
                             n = tanh(data_n + r b_n)                linear_before_reset
                             n = tanh(data_n + (r h) W_n^T + bias_n) otherwise (ONNX's 0)
                             h = (1 - z) n + z h
    RNN                      h = tanh or relu (data[t] + h W^T)

Results: ``y`` (every step's ``h``, in time order, ``(seq, batch, hidden)``), the final
``h`` (``(batch, hidden)``) and, for the LSTM, the final ``c``. A bias that is only ever
added to the input's (the LSTM's and the RNN's ``b_hh``) belongs in ``data``.

The recurrent weight is taken packed: ``(blocks, hidden, gates, block)`` with
``packed[b, k, g, v] = W[g * hidden + b * block + v, k]`` (zero past ``hidden``), so the
kernel reads one contiguous panel per block of ``block`` hidden units and keeps their
gates in registers. ``block`` (at most ``MAX_BLOCK``) is the packing's only knob: 16 or
32 take the C routines' unrolled paths. ``pack_recurrent_weight`` makes the packed
weight from ``W`` with reshape/pad/transpose, which ``FoldConstant`` folds into the
constant at build time.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...ir.expr import Expr, const
from ...ir.op import Attrs, OpPattern, call, register_op
from ...ir.types import Any, TensorType, TupleType
from ..attrs_util import set_fields
from ..transform import reshape, transpose
from ..type_rel import dim_may_equal, dim_unify, fail, require_float, same_dtype, tensors
from .layers import _known_dtype, pad

MAX_BLOCK = 64  # the C routines keep ``gates * block`` accumulators on the stack
DEFAULT_BLOCK = 16  # fills a 512-bit register per gate; two 256-bit ones on AVX2
GATES = {"nn.lstm_sequence": 4, "nn.gru_sequence": 3, "nn.rnn_sequence": 1}


@dataclasses.dataclass(frozen=True)
class RecurrentAttrs(Attrs):
    """``reverse``: run from the last step to the first (``y`` stays in time order)."""

    reverse: bool = False

    def __post_init__(self):
        set_fields(self, reverse=bool(self.reverse))


@dataclasses.dataclass(frozen=True)
class GRUAttrs(RecurrentAttrs):
    """``linear_before_reset``: the reset gate multiplies ``h W_n^T + b_n`` (torch's GRU,
    ONNX's 1), else it multiplies ``h`` before the product (ONNX's default 0)."""

    linear_before_reset: bool = True

    def __post_init__(self):
        super().__post_init__()
        set_fields(self, linear_before_reset=bool(self.linear_before_reset))


@dataclasses.dataclass(frozen=True)
class RNNAttrs(RecurrentAttrs):
    activation: str = "tanh"

    def __post_init__(self):
        super().__post_init__()
        if self.activation not in ("tanh", "relu"):
            raise ValueError(f"activation must be tanh or relu, found {self.activation!r}")


# ---------------------------------------------------------------- type relation


def _recurrent_rel(op_name: str, names: tuple):
    gates = GATES[op_name]

    def rel(types, attrs):
        ts = tensors(types, names)
        data, h0, weight = ts[0], ts[1], ts[names.index("weight")]
        require_float(data)
        for t, name in zip(ts[1:], names[1:]):
            same_dtype(data, t, ("data", name))
        if data.ndim != 3:
            fail(f"data must be (seq, batch, {gates} * hidden), found {data}")
        if h0.ndim != 2:
            fail(f"h0 must be (batch, hidden), found {h0}")
        if weight.ndim != 4:
            fail(f"weight must be packed (blocks, hidden, {gates}, block), found {weight}")
        seq, batch, width = data.shape
        batch = dim_unify(batch, h0.shape[0])
        hidden = h0.shape[1]
        if batch is None:
            fail(f"data and h0 disagree on the batch: data is {data} but h0 is {h0}")
        if isinstance(hidden, int) and isinstance(width, int) and width != gates * hidden:
            fail(f"data must have {gates} * hidden = {gates * hidden} features for h0 {h0}, "
                 f"found {data}")
        blocks, k, g, block = weight.shape
        if not (dim_may_equal(k, hidden) and dim_may_equal(g, gates)):
            fail(f"weight must be packed (blocks, {hidden}, {gates}, block) for h0 {h0}, "
                 f"found {weight}")
        if isinstance(block, int) and not 1 <= block <= MAX_BLOCK:
            fail(f"the packed weight's block must be between 1 and {MAX_BLOCK}, found {weight}")
        if (isinstance(block, int) and isinstance(hidden, int) and isinstance(blocks, int)
                and blocks != -(-hidden // block)):
            fail(f"weight must have ceil({hidden} / {block}) = {-(-hidden // block)} blocks, "
                 f"found {weight}")
        for t, name in zip(ts, names):
            if name == "c0" and not all(dim_may_equal(a, b) for a, b in zip(t.shape, h0.shape)):
                fail(f"c0 must have the shape of h0 {h0}, found {t}")
            if name == "bias" and (t.ndim != 1 or not dim_may_equal(t.shape[0], width)):
                fail(f"bias must be ({gates} * hidden,) like data's features, found {t}")
        state = TensorType((batch if batch is not None else Any(), hidden), data.dtype)
        y = TensorType((seq, state.shape[0], hidden), data.dtype)
        return TupleType((y, state, state) if gates == 4 else (y, state))

    return rel


# ---------------------------------------------------------------- numpy references


def _unpack(weight: np.ndarray, hidden: int) -> np.ndarray:
    """``(blocks, hidden, gates, block)`` → ``W`` ``(gates * hidden, hidden)``, float64."""
    blocks, k, gates, block = weight.shape
    w = weight.astype("float64").transpose(2, 0, 3, 1).reshape(gates, blocks * block, k)
    return w[:, :hidden].reshape(gates * hidden, k)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _steps(seq: int, reverse: bool):
    return range(seq - 1, -1, -1) if reverse else range(seq)


def _lstm_ref(data, h0, c0, weight, attrs):
    hidden = h0.shape[1]
    w = _unpack(weight, hidden)
    h, c = h0.astype("float64"), c0.astype("float64")
    y = np.zeros(data.shape[:2] + (hidden,), "float64")
    for t in _steps(data.shape[0], attrs.reverse):
        i, f, g, o = np.split(data[t].astype("float64") + h @ w.T, 4, axis=-1)
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
        h = y[t] = _sigmoid(o) * np.tanh(c)
    dt = data.dtype
    return y.astype(dt), h.astype(dt), c.astype(dt)


def _gru_ref(data, h0, weight, bias, attrs):
    hidden = h0.shape[1]
    w = _unpack(weight, hidden)
    b = bias.astype("float64")
    h = h0.astype("float64")
    y = np.zeros(data.shape[:2] + (hidden,), "float64")
    for t in _steps(data.shape[0], attrs.reverse):
        x_r, x_z, x_n = np.split(data[t].astype("float64"), 3, axis=-1)
        rec = h @ w.T + b
        r = _sigmoid(x_r + rec[:, :hidden])
        z = _sigmoid(x_z + rec[:, hidden:2 * hidden])
        if attrs.linear_before_reset:
            n = np.tanh(x_n + r * rec[:, 2 * hidden:])
        else:
            n = np.tanh(x_n + (r * h) @ w[2 * hidden:].T + b[2 * hidden:])
        h = y[t] = (1 - z) * n + z * h
    return y.astype(data.dtype), h.astype(data.dtype)


def _rnn_ref(data, h0, weight, attrs):
    hidden = h0.shape[1]
    w = _unpack(weight, hidden)
    act = np.tanh if attrs.activation == "tanh" else (lambda v: np.maximum(v, 0))
    h = h0.astype("float64")
    y = np.zeros(data.shape[:2] + (hidden,), "float64")
    for t in _steps(data.shape[0], attrs.reverse):
        h = y[t] = act(data[t].astype("float64") + h @ w.T)
    return y.astype(data.dtype), h.astype(data.dtype)


_LSTM_ARGS = ("data", "h0", "c0", "weight")
_GRU_ARGS = ("data", "h0", "weight", "bias")
_RNN_ARGS = ("data", "h0", "weight")
register_op("nn.lstm_sequence", rel=_recurrent_rel("nn.lstm_sequence", _LSTM_ARGS),
            ref=_lstm_ref, pattern=OpPattern.OPAQUE, num_inputs=4, arg_names=_LSTM_ARGS,
            attrs=RecurrentAttrs,
            description="every step of an LSTM layer: (y, h_n, c_n) from the projected input")
register_op("nn.gru_sequence", rel=_recurrent_rel("nn.gru_sequence", _GRU_ARGS),
            ref=_gru_ref, pattern=OpPattern.OPAQUE, num_inputs=4, arg_names=_GRU_ARGS,
            attrs=GRUAttrs,
            description="every step of a GRU layer: (y, h_n) from the projected input")
register_op("nn.rnn_sequence", rel=_recurrent_rel("nn.rnn_sequence", _RNN_ARGS),
            ref=_rnn_ref, pattern=OpPattern.OPAQUE, num_inputs=3, arg_names=_RNN_ARGS,
            attrs=RNNAttrs,
            description="every step of an Elman RNN layer: (y, h_n) from the projected input")


# ---------------------------------------------------------------- constructors


def pack_recurrent_weight(weight: Expr, gates: int, hidden: int, block: int = DEFAULT_BLOCK,
                          dtype: str | None = None) -> Expr:
    """``W`` ``(gates * hidden, hidden)`` (torch's ``weight_hh``) as the packed
    ``(ceil(hidden / block), hidden, gates, block)`` the sequence ops take: Relay ops,
    folded into a constant by ``FoldConstant`` when ``W`` is one. ``dtype`` (the zero
    rows' when ``block`` does not divide ``hidden``) defaults to ``W``'s known dtype."""
    if not 1 <= block <= MAX_BLOCK:
        raise ValueError(f"block must be between 1 and {MAX_BLOCK}, found {block}")
    blocks = -(-hidden // block)
    w = reshape(weight, (gates, hidden, hidden))
    if blocks * block != hidden:
        zero = const(0, dtype or _known_dtype(weight) or "float32")
        w = pad(w, ((0, 0), (0, blocks * block - hidden), (0, 0)), zero)
    w = reshape(w, (gates, blocks, block, hidden))
    return transpose(w, (1, 3, 0, 2))


def lstm_sequence(data, h0, c0, weight, reverse=False):
    """``(y, h_n, c_n)``; ``weight`` packed (``pack_recurrent_weight(W_hh, 4, hidden)``)."""
    return call("nn.lstm_sequence", [data, h0, c0, weight], reverse=reverse)


def gru_sequence(data, h0, weight, bias, reverse=False, linear_before_reset=True):
    """``(y, h_n)``; ``weight`` packed (``pack_recurrent_weight(W_hh, 3, hidden)``)."""
    return call("nn.gru_sequence", [data, h0, weight, bias], reverse=reverse,
                linear_before_reset=linear_before_reset)


def rnn_sequence(data, h0, weight, activation="tanh", reverse=False):
    """``(y, h_n)``; ``weight`` packed (``pack_recurrent_weight(W_hh, 1, hidden)``)."""
    return call("nn.rnn_sequence", [data, h0, weight], activation=activation,
                reverse=reverse)
