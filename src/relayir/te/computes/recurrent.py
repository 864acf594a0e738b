"""Computes of the recurrent sequence ops: one call of a hand-written C routine each.

A recurrence is not one loop nest per output (step ``t`` needs all of step ``t - 1``),
so ``nn.lstm_sequence`` / ``nn.gru_sequence`` / ``nn.rnn_sequence`` are ``te.extern``
stages: ``codegen/routines_recurrent.py`` runs every step in one call with the gates
fused (see there for the threading). Tagged ``recurrent``: the stage's ``Schedule``
gives ``parallel`` / ``parallel_min_work``, the per-step work worth one more thread.
"""

from __future__ import annotations

from .. import expr as E
from ..tensor import extern
from .common import COMPUTE

_SUFFIX = {"float32": "f32", "float64": "f64"}


def _routine(cell: str, dtype: str) -> str:
    if dtype not in _SUFFIX:
        raise E.TEError(f"the {cell} sequence routine takes float32 or float64, "
                        f"found {dtype}")
    return f"rl_{cell}_sequence_{_SUFFIX[dtype]}"


def _sequence(cell: str, inputs, out, *flags):
    data, h0, weight = inputs[0], inputs[1], inputs[2 if cell != "lstm" else 3]
    seq, batch, _ = data.shape
    scalars = (seq, batch, h0.shape[1], weight.shape[3], *flags)
    return extern([(o.shape, o.dtype) for o in out], inputs, _routine(cell, data.dtype),
                  scalars, name=f"{cell}_sequence", tag="recurrent")


@COMPUTE.register("nn.lstm_sequence")
def lstm_sequence(attrs, inputs, out):
    return _sequence("lstm", inputs, out, int(attrs.reverse))


@COMPUTE.register("nn.gru_sequence")
def gru_sequence(attrs, inputs, out):
    return _sequence("gru", inputs, out, int(attrs.reverse), int(attrs.linear_before_reset))


@COMPUTE.register("nn.rnn_sequence")
def rnn_sequence(attrs, inputs, out):
    return _sequence("rnn", inputs, out, int(attrs.reverse), int(attrs.activation == "relu"))
