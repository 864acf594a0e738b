"""Helpers shared by the transform families."""

from __future__ import annotations

from ...ir.types import TensorType
from ..attrs_util import attr_ints
from ..type_rel import (
    fail,
    tuple_of_tensors,
)


def _check_tensor_list(ty, what: str = "data") -> list[TensorType]:
    ts = tuple_of_tensors(ty, what)
    if not ts:
        fail(f"{what} must hold at least one tensor, found an empty tuple")
    return ts


def _attr_shape(value) -> tuple[int, ...]:
    shape = attr_ints(value, "shape")
    if any(d < 0 for d in shape):
        raise ValueError(f"shape {shape} has a negative dimension")
    return shape
