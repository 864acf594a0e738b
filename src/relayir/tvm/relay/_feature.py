"""``relay.analysis.detect_feature``: which kinds of node a program uses (Relay's
``Feature`` set), read off relayir's node walk: every node kind present, ``fGraph`` when
a non-atomic node is read by more than one parent (a DAG, not a tree), ``fLetRec`` when
a ``let``-bound function refers to its own variable."""

from __future__ import annotations

from collections import Counter
from enum import IntEnum

from ...ir.adt import Constructor, Match
from ...ir.analysis import free_vars
from ...ir.expr import (
    Call,
    Constant,
    Function,
    GlobalVar,
    If,
    Let,
    Op,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)
from ...ir.functor import post_order
from ...ir.module import IRModule
from ...ir.node_table import children


class Feature(IntEnum):
    fVar = 0
    fGlobalVar = 1
    fConstant = 2
    fTuple = 3
    fTupleGetItem = 4
    fFunction = 5
    fOp = 6
    fCall = 7
    fLet = 8
    fIf = 9
    fRefCreate = 10
    fRefRead = 11
    fRefWrite = 12
    fConstructor = 13
    fMatch = 14
    fGraph = 15
    fLetRec = 16


_KIND = {Var: Feature.fVar, GlobalVar: Feature.fGlobalVar, Constant: Feature.fConstant,
         Tuple: Feature.fTuple, TupleGetItem: Feature.fTupleGetItem,
         Function: Feature.fFunction, Op: Feature.fOp, Call: Feature.fCall, Let: Feature.fLet,
         If: Feature.fIf, RefCreate: Feature.fRefCreate, RefRead: Feature.fRefRead,
         RefWrite: Feature.fRefWrite, Constructor: Feature.fConstructor,
         Match: Feature.fMatch}
_ATOMS = (Var, GlobalVar, Constant, Op, Constructor)


def _features(root) -> set[Feature]:
    nodes = post_order(root)
    out = {_KIND[type(n)] for n in nodes if type(n) in _KIND}
    if any(isinstance(n, Call) and isinstance(n.op, Op) for n in nodes):
        out.add(Feature.fOp)  # the walk does not list a call's op as a child
    readers = Counter(id(c) for n in nodes for c in children(n) if not isinstance(c, _ATOMS))
    if any(k > 1 for k in readers.values()):
        out.add(Feature.fGraph)
    if any(isinstance(n, Let) and isinstance(n.value, Function)
           and n.var in free_vars(n.value) for n in nodes):
        out.add(Feature.fLetRec)
    return out


def detect_feature(a, b=None) -> set[Feature]:
    """The features of an expression, a module's functions, or both (Relay's signature)."""
    out: set[Feature] = set()
    for x in (a, b):
        if isinstance(x, IRModule):
            for fn in x.functions.values():
                out |= _features(fn)
        elif x is not None:
            out |= _features(x)
    return out
