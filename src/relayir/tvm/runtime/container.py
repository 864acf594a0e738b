"""TVM's run-time containers, and the conversion of relayir's values into them.

relayir's executors return numpy arrays, Python tuples and ``ConstructorValue``s; TVM's
return ``NDArray``s and ``ADT``s (the VM and the graph executor: a tuple is an ADT with
tag 0, a constructor value an ADT with its tag) or ``ConstructorValue``s (the
interpreter). ``to_tvm`` converts, with an explicit stack: a prelude list of n elements
nests n deep.
"""

from __future__ import annotations

import numpy as np

from ...runtime.values import ConstructorValue
from .ndarray import as_ndarray


class ADT(tuple):
    """An algebraic data type value (a tuple's tag is 0): indexable and iterable fields."""

    def __new__(cls, tag: int, fields=()):
        obj = super().__new__(cls, fields)
        obj.tag = int(tag)
        return obj

    def __repr__(self) -> str:
        return f"ADT(tag={self.tag}, {list(self)!r})"


def tuple_object(fields=()) -> ADT:
    return ADT(0, fields)


class String(str):
    """``tvm.runtime.String``: a Python string."""


class ShapeTuple(tuple):
    """``tvm.runtime.ShapeTuple``: a tuple of ints."""

    def __new__(cls, shape=()):
        return super().__new__(cls, (int(s) for s in shape))


def to_tvm(value, adt: str = "vm"):
    """relayir's run-time value as TVM's: arrays → ``NDArray``; tuples → ``ADT`` (tag 0);
    constructor values → ``ADT`` (``adt="vm"``) or ``ConstructorValue`` with converted
    fields (``adt="interpreter"``); anything else (closures, references) unchanged."""
    if isinstance(value, np.ndarray):
        return as_ndarray(value)
    if not isinstance(value, (tuple, ConstructorValue)):
        return value
    # post-order over the containers: children converted before their parent
    done: dict[int, object] = {}
    stack = [(value, False)]
    while stack:
        v, expanded = stack.pop()
        if id(v) in done:
            continue
        fields = v.fields if isinstance(v, ConstructorValue) else v
        if not expanded:
            stack.append((v, True))
            stack.extend((f, False) for f in fields
                         if isinstance(f, (tuple, ConstructorValue)) and id(f) not in done)
            continue
        new = tuple(done[id(f)] if isinstance(f, (tuple, ConstructorValue))
                    else as_ndarray(f) if isinstance(f, np.ndarray) else f for f in fields)
        if isinstance(v, ConstructorValue):
            done[id(v)] = (ADT(v.tag, new) if adt == "vm"
                           else ConstructorValue(v.tag, new, v.constructor))
        else:
            done[id(v)] = ADT(0, new)
    return done[id(value)]


def from_tvm(value):
    """A TVM value given as an input, as relayir takes it: an ``ADT`` of tag 0 is a tuple
    (an ADT of another tag is a constructor value relayir cannot rebuild: it stays)."""
    if type(value) is ADT and value.tag == 0:
        return tuple(from_tvm(v) for v in value)
    return value


__all__ = ["ADT", "ShapeTuple", "String", "from_tvm", "to_tvm", "tuple_object"]
