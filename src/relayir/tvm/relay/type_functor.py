"""``relay.TypeFunctor``, ``TypeVisitor`` and ``TypeMutator``: dispatch over relayir's
types by class, as Relay's ``type_functor`` does (``visit_tensor_type``, ...).

``TypeFunctor`` leaves every case to a subclass (``NotImplementedError``); ``TypeVisitor``
walks the children; ``TypeMutator`` rebuilds a type from its visited children (the same
object when none changed). Types are small trees: the walk recurses.
"""

from __future__ import annotations

from ...ir.adt import TypeData
from ...ir.types import (
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    TypeCall,
    TypeVar,
)
from .ty import TypeRelation

_METHODS = {
    TypeVar: "visit_type_var", IncompleteType: "visit_incomplete_type",
    TensorType: "visit_tensor_type", FuncType: "visit_func_type",
    TupleType: "visit_tuple_type", TypeRelation: "visit_type_relation",
    RefType: "visit_ref_type", GlobalTypeVar: "visit_global_type_var",
    TypeCall: "visit_type_call", TypeData: "visit_type_data",
}


class TypeFunctor:
    """``visit(t)`` calls the ``visit_<kind>`` method of ``t``'s class, memoised."""

    def __init__(self) -> None:
        self.memo_map: dict = {}

    def visit(self, typ):
        if typ in self.memo_map:
            return self.memo_map[typ]
        method = _METHODS.get(type(typ))
        if method is None:
            raise TypeError(f"TypeFunctor: not a type: {type(typ).__name__}")
        out = getattr(self, method)(typ)
        self.memo_map[typ] = out
        return out

    def _unhandled(self, typ):
        raise NotImplementedError(f"{type(self).__name__} does not handle "
                                  f"{type(typ).__name__}")

    visit_type_var = visit_incomplete_type = visit_tensor_type = visit_func_type = \
        visit_tuple_type = visit_type_relation = visit_ref_type = visit_global_type_var = \
        visit_type_call = visit_type_data = _unhandled


class TypeVisitor(TypeFunctor):
    """Visits every child type; leaves do nothing."""

    def _leaf(self, typ):
        return None

    visit_type_var = visit_incomplete_type = visit_tensor_type = visit_global_type_var = _leaf

    def visit_func_type(self, t):
        for x in (*t.type_params, *t.arg_types, t.ret_type, *t.type_constraints):
            self.visit(x)

    def visit_tuple_type(self, t):
        for f in t.fields:
            self.visit(f)

    def visit_type_relation(self, t):
        for a in t.args:
            self.visit(a)

    def visit_ref_type(self, t):
        self.visit(t.value)

    def visit_type_call(self, t):
        self.visit(t.func)
        for a in t.args:
            self.visit(a)

    def visit_type_data(self, t):
        self.visit(t.header)
        for v in t.type_vars:
            self.visit(v)


def _same(new, old) -> bool:
    return len(new) == len(old) and all(a is b for a, b in zip(new, old))


class TypeMutator(TypeFunctor):
    """Rebuilds each type from its visited children (unchanged types are reused)."""

    def _leaf(self, typ):
        return typ

    visit_type_var = visit_incomplete_type = visit_tensor_type = visit_global_type_var = _leaf

    def visit_func_type(self, t):
        params = [self.visit(p) for p in t.type_params]
        args = [self.visit(a) for a in t.arg_types]
        ret = self.visit(t.ret_type)
        constraints = [self.visit(c) for c in t.type_constraints]
        if _same(params, t.type_params) and _same(args, t.arg_types) and ret is t.ret_type \
                and _same(constraints, t.type_constraints):
            return t
        return FuncType(args, ret, params, constraints)

    def visit_tuple_type(self, t):
        fields = [self.visit(f) for f in t.fields]
        return t if _same(fields, t.fields) else TupleType(fields)

    def visit_type_relation(self, t):
        args = [self.visit(a) for a in t.args]
        return t if _same(args, t.args) else TypeRelation(t.func, args, t.num_inputs, t.attrs)

    def visit_ref_type(self, t):
        value = self.visit(t.value)
        return t if value is t.value else RefType(value)

    def visit_type_call(self, t):
        func, args = self.visit(t.func), [self.visit(a) for a in t.args]
        return t if func is t.func and _same(args, t.args) else TypeCall(func, args)

    def visit_type_data(self, t):
        header, tvars = self.visit(t.header), [self.visit(v) for v in t.type_vars]
        if header is t.header and _same(tvars, t.type_vars):
            return t
        return TypeData(header, tvars, t.constructors)


__all__ = ["TypeFunctor", "TypeMutator", "TypeVisitor"]
