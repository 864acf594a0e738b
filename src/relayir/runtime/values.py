"""Run-time values shared by the interpreter and the executors.

Tensors are numpy arrays and tuples are Python tuples; closures, ADT values and
references have the small classes below.
"""

from __future__ import annotations

import numpy as np


class Closure:
    __slots__ = ("func", "env")

    def __init__(self, func, env):
        self.func = func
        self.env = env

    def __repr__(self) -> str:
        return f"<closure of {len(self.func.params)} params>"


class ConstructorValue:
    """An ADT value: ``Cons(x, xs)`` is ``ConstructorValue(tag=0, fields=(x, xs), ...)``."""

    __slots__ = ("tag", "fields", "constructor")

    def __init__(self, tag: int, fields: tuple, constructor=None):
        self.tag = tag
        self.fields = fields
        self.constructor = constructor

    @property
    def name(self) -> str:
        return self.constructor.name_hint if self.constructor is not None else f"#{self.tag}"

    def __repr__(self) -> str:
        if not self.fields:
            return self.name
        return f"{self.name}({', '.join(map(repr, self.fields))})"


class RefValue:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __repr__(self) -> str:
        return f"ref({self.value!r})"


def to_list(value: ConstructorValue) -> list:
    """Python list of the elements of a prelude ``List`` value (iteratively)."""
    out = []
    while value.fields:
        out.append(value.fields[0])
        value = value.fields[1]
    return out


def values_equal(a, b, rtol: float = 0.0, atol: float = 0.0) -> bool:
    """Structural comparison of run-time values (for tests and cross-checks)."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            x, y = np.asarray(x), np.asarray(y)
            if x.shape != y.shape or x.dtype != y.dtype:
                return False
            if not np.allclose(x, y, rtol=rtol, atol=atol, equal_nan=True):
                return False
        elif isinstance(x, tuple):
            if not isinstance(y, tuple) or len(x) != len(y):
                return False
            stack.extend(zip(x, y))
        elif isinstance(x, ConstructorValue):
            if not isinstance(y, ConstructorValue) or x.tag != y.tag:
                return False
            stack.extend(zip(x.fields, y.fields))
        elif isinstance(x, RefValue):
            if not isinstance(y, RefValue):
                return False
            stack.append((x.value, y.value))
        elif x is not y:
            return False
    return True
