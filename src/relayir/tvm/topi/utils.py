"""``tvm.topi.utils``: ``get_const_tuple`` (shapes are Python ints in relayir)."""

from __future__ import annotations


def get_const_int(value) -> int:
    return int(value)


def get_const_tuple(in_tuple) -> tuple:
    """A shape as a tuple: static dims as ints, symbolic ones unchanged."""
    return tuple(int(d) if isinstance(d, int) else d for d in in_tuple)


__all__ = ["get_const_int", "get_const_tuple"]
