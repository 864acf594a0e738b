"""Normalising op attributes: the ``__post_init__`` helpers of the attrs dataclasses.

Attrs are frozen dataclasses compared and hashed by value (CSE and structural equality
key on them), so every field is stored in one canonical form: Python ints in tuples,
dtype names as strings. A bad value raises ``TypeError``/``ValueError``, which
``make_attrs`` reports naming the op.
"""

from __future__ import annotations

import numpy as np

from ..errors import Error
from ..ir.types import check_dtype


def set_fields(obj, **values) -> None:
    """Assign fields of a frozen dataclass (from its ``__post_init__``)."""
    for key, value in values.items():
        object.__setattr__(obj, key, value)


def attr_int(value, name: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, found {value!r}")
    return int(value)


def attr_ints(value, name: str) -> tuple[int, ...]:
    """An int or a sequence of ints as a tuple of Python ints (hashable, printable)."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return (int(value),)
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{name} must be an int or a sequence of ints, found {value!r}")
    return tuple(attr_int(v, name) for v in value)


def attr_dtype(value, name: str = "dtype") -> str:
    """A dtype (a name, a numpy dtype or scalar type) as its canonical name."""
    try:
        return check_dtype(value)
    except Error as exc:
        raise ValueError(f"{name}: {exc}") from None


__all__ = ["attr_dtype", "attr_int", "attr_ints", "set_fields"]
