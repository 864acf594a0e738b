"""Operators. Importing this package registers every op family."""

from . import (  # noqa: F401,I001  (registration side effects; dynamic last, below)
    algorithm,
    bitwise,
    image,
    layout,
    nn,
    qnn,
    random,
    reduce,
    scatter,
    sparse,
    tensor,
    transform,
    vision,
)
from . import dynamic  # noqa: F401  (after the static ops its dyn.* ops stand for)
from . import dynamic_params  # noqa: F401  (dyn ops whose run-time input is a parameter)
from ..ir.op import (
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
           "register_op", "algorithm", "bitwise", "dynamic", "dynamic_params", "image",
           "layout", "nn", "qnn", "random", "reduce", "scatter", "sparse", "tensor",
           "transform", "vision"]
