"""``tvm.ir``: modules, types, structural equality, ``Op``."""

from __future__ import annotations

from ...ir.expr import Expr as RelayExpr
from ...ir.expr import GlobalVar, Op, Span
from ...ir.module import IRModule
from ...ir.structural import assert_structural_equal, structural_equal, structural_hash
from ...ir.types import (
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    Node,
    RefType,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeVar,
)
from .. import transform

BaseExpr = RelayExpr
PrimExpr = int


__all__ = ["BaseExpr", "FuncType", "GlobalTypeVar", "GlobalVar", "IRModule", "IncompleteType",
           "Node", "Op", "PrimExpr", "RefType", "RelayExpr", "Span", "TensorType", "TupleType",
           "Type", "TypeCall", "TypeVar", "assert_structural_equal", "structural_equal",
           "structural_hash", "transform"]
