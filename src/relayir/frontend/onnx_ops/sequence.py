"""ONNX sequences and optionals whose structure is known when importing.

A sequence is a Python list of expressions while the graph converts and a Relay tuple
where it leaves the graph (or enters it: a sequence input is a tuple parameter whose
element shapes ``from_onnx(shape=...)`` gives). Positions (``SequenceAt``,
``SequenceInsert``, ``SequenceErase``) must be known, since they pick which expression
flows on. An optional is its value when present, and ``EMPTY`` when not (an optional
graph input bound to ``None`` with ``const_inputs``).
"""

from __future__ import annotations

import numpy as np

from ...ir.expr import TupleGetItem, const
from ...op import transform as T
from ..common import ConversionError
from .base import OnnxTable, convert_subgraph, ints, ndim, shape, value
from .base import axis as _axis

TABLE = OnnxTable()


def _seq(s, what="input_sequence") -> list:
    if not isinstance(s, list):
        raise ConversionError(f"{what} must be a sequence built in the graph (a sequence "
                              "graph input has a run-time length: not supported)")
    return s


def _position(position, n, default):
    if position is None:
        return default
    p = int(np.asarray(value(position, "position")).reshape(()))
    return p + n if p < 0 else p


@TABLE.register("SequenceEmpty", since=11)
def sequence_empty(dtype=1):
    return []


@TABLE.register("SequenceConstruct", since=11)
def sequence_construct(*tensors):
    return list(tensors)


@TABLE.register("SequenceAt", since=11)
def sequence_at(seq, position):
    seq = _seq(seq)
    p = _position(position, len(seq), 0)
    if not 0 <= p < len(seq):
        raise ConversionError(f"position {p} is outside a sequence of length {len(seq)}")
    return seq[p]


@TABLE.register("SequenceInsert", since=11)
def sequence_insert(seq, tensor, position=None):
    seq = list(_seq(seq))
    seq.insert(_position(position, len(seq), len(seq)), tensor)
    return seq


@TABLE.register("SequenceErase", since=11)
def sequence_erase(seq, position=None):
    seq = list(_seq(seq))
    del seq[_position(position, len(seq), len(seq) - 1)]
    return seq


@TABLE.register("SequenceLength", since=11)
def sequence_length(seq):
    return const(np.asarray(len(_seq(seq)), "int64"))


@TABLE.register("ConcatFromSequence", since=11)
def concat_from_sequence(seq, axis=0, new_axis=0):  # noqa: A002
    seq = _seq(seq)
    return T.stack(seq, int(axis)) if new_axis else T.concatenate(seq, int(axis))


@TABLE.register("SplitToSequence", since=11)
def split_to_sequence(x, split=None, axis=0, keepdims=1):  # noqa: A002
    a = _axis(axis, ndim(x))
    d = shape(x)[a]
    if not isinstance(d, int):
        raise ConversionError("SplitToSequence of a run-time extent is not supported")
    sizes = None if split is None else ints(split, "split")
    if sizes is None:
        sizes = [1] * d
    elif np.ndim(value(split, "split")) == 0:
        sizes = [sizes[0]] * (d // sizes[0]) + ([d % sizes[0]] if d % sizes[0] else [])
    cuts = [int(c) for c in np.cumsum(sizes)[:-1]]
    parts = T.split(x, cuts, axis=a) if cuts else None
    out = [TupleGetItem(parts, i) for i in range(len(sizes))] if parts is not None else [x]
    if split is None and not keepdims:
        out = [T.squeeze(o, [a]) for o in out]
    return out


@TABLE.register("SequenceMap", since=17)
def sequence_map(seq, *extra, body):
    """The body once per element: sequence inputs give their i-th element, tensor inputs
    themselves; each body output collects into a sequence."""
    seq = _seq(seq)
    formal = list(body.input)
    for e in extra:
        if isinstance(e, list) and len(e) != len(seq):
            raise ConversionError(f"SequenceMap sequences differ in length ({len(seq)} vs "
                                  f"{len(e)})")
    outs = [[] for _ in body.output]
    for i in range(len(seq)):
        args = [seq[i]] + [e[i] if isinstance(e, list) else e for e in extra]
        for k, o in enumerate(convert_subgraph(body, {f.name: a for f, a in zip(formal, args)})):
            outs[k].append(o)
    return outs[0] if len(outs) == 1 else tuple(outs)


class _Empty:
    """The value of an empty optional while importing."""

    def __repr__(self):
        return "EMPTY"


EMPTY = _Empty()


@TABLE.register("Optional", since=15)
def optional(value=None, type=None):  # noqa: A002
    return EMPTY if value is None else value


@TABLE.register("OptionalHasElement", since=15)
def optional_has_element(value=None):
    return const(np.asarray(value is not None and value is not EMPTY))


@TABLE.register("OptionalGetElement", since=15)
def optional_get_element(value):
    if value is EMPTY:
        raise ConversionError("OptionalGetElement of an empty optional")
    return value
