"""``tvm.ir``: modules, types, structural equality, ``Op``."""

from __future__ import annotations

from ...ir.analysis import free_type_vars as _free_type_vars
from ...ir.analysis import free_vars as _free_vars
from ...ir.expr import Expr as RelayExpr
from ...ir.expr import GlobalVar, Op, Span
from ...ir.module import IRModule
from ...ir.structural import assert_structural_equal, structural_equal
from ...ir.structural import structural_hash as _structural_hash
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
from ..error import NotInRelayirError, missing_attribute, not_in_relayir
from .node_json import load_json, save_json

BaseExpr = RelayExpr
PrimExpr = int

register_op_attr = not_in_relayir(
    "tvm.ir.register_op_attr", "relayir's operators keep their rules in per-layer tables "
    "keyed by op name (relayir.op, relayir.te, relayir.transform.autodiff), not in TVM's "
    "op attribute registry")


def structural_hash(node, map_free_vars: bool = False) -> int:
    """TVM's ``structural_hash(node, map_free_vars)``. relayir's hash sees a free variable
    by its type alone (the ``map_free_vars=True`` view); without ``map_free_vars`` two
    nodes are equal only with the same free variables (the same ``Var`` objects, type
    variables of the same name, as ``structural_equal`` compares them), so those are
    hashed in too, in order of first use: unequal nodes then hash apart as in TVM."""
    h = _structural_hash(node)
    if map_free_vars or isinstance(node, IRModule):
        return h
    if isinstance(node, RelayExpr):
        free = tuple(id(v) for v in _free_vars(node))
    elif isinstance(node, Type):
        free = tuple(t.name_hint for t in _free_type_vars(node))
    else:
        return h
    return hash((h, free)) if free else h


def make_node(type_key: str, **fields):
    """TVM's reflection constructor: relayir's nodes are Python classes, made directly
    (``relay.Var(...)``, ``relay.Call(...)``); no node is made by its type key."""
    raise NotInRelayirError(
        f"tvm.ir.make_node({type_key!r}, ...) is not part of relayir: relayir has no "
        f"reflection registry of node types (make the node with its class)")


def __getattr__(name: str):
    if name == "EnvFunc":  # the relations Relay's solver tests name (relay/_type_solver.py)
        from ..relay._type_solver import EnvFunc

        return EnvFunc
    raise missing_attribute(__name__, name)


__all__ = ["BaseExpr", "FuncType", "GlobalTypeVar", "GlobalVar", "IRModule", "IncompleteType",
           "Node", "Op", "PrimExpr", "RefType", "RelayExpr", "Span", "TensorType", "TupleType",
           "Type", "TypeCall", "TypeVar", "assert_structural_equal", "structural_equal",
           "structural_hash", "transform", "load_json", "make_node", "register_op_attr",
           "save_json"]
