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

__all__ = ["Any", "FuncType", "GlobalTypeVar", "IncompleteType", "Kind", "RefType", "ShapeVar",
           "TensorType", "TupleType", "Type", "TypeCall", "TypeKind", "TypeVar", "scalar_type"]
