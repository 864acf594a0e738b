"""``relay.ty``: the type classes."""

from ...ir.types import (  # noqa: F401
    Any,
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    Kind,
    RefType,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeVar,
    scalar_type,
)
from ...ir.types import SymbolicDim as ShapeVar  # noqa: F401

TypeKind = Kind


class TypeRelation(Type):
    """Relay's ``TypeRelation(func, args, num_inputs, attrs)`` node: a relation over
    ``args`` (its first ``num_inputs`` are inputs). relayir's type relations are the ops'
    own (``relayir.ir.op``); this node only carries Relay's fields (for the type functors)."""

    __slots__ = ("func", "args", "num_inputs", "attrs")

    def __init__(self, func, args, num_inputs: int, attrs=None):
        object.__setattr__(self, "func", func)
        object.__setattr__(self, "args", tuple(args))
        object.__setattr__(self, "num_inputs", int(num_inputs))
        object.__setattr__(self, "attrs", attrs)

__all__ = ["Any", "FuncType", "GlobalTypeVar", "IncompleteType", "Kind", "RefType", "ShapeVar",
           "TensorType", "TupleType", "Type", "TypeCall", "TypeKind", "TypeRelation", "TypeVar",
           "scalar_type"]
