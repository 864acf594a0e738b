"""Operators. Importing this package registers every op family."""

from . import layout, nn, reduce, tensor, transform  # noqa: F401  (registration side effects)
from .registry import (
    Attrs,
    OpPattern,
    OpTable,
    call,
    get_op,
    has_op,
    list_ops,
    register_op,
)

__all__ = ["Attrs", "OpPattern", "OpTable", "call", "get_op", "has_op", "list_ops",
           "register_op", "layout", "nn", "reduce", "tensor", "transform"]
