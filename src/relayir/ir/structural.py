"""Structural equality and hashing, up to renaming of bound variables.

``structural_equal(a, b)`` walks both terms side by side with an explicit stack. Bound
variables (let, parameters, pattern variables, type parameters) are paired at their
binding site; a use must then refer to the paired variable. Free variables are equal
only if they are the same object, unless ``map_free_vars=True``.

``structural_hash`` is consistent with it: a variable hashes by its type annotation,
never by name or identity, and a shared sub-graph is hashed once.
"""

from __future__ import annotations

import numpy as np

from .adt import (
    Clause,
    Constructor,
    Match,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    TypeData,
)
from .expr import (
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
from .module import IRModule
from .node_table import NODES
from .types import (
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    TypeCall,
    TypeVar,
    is_float,
)


class _Unequal(Exception):
    def __init__(self, a, b, why: str):
        self.a, self.b, self.why = a, b, why


class _Equal:
    def __init__(self, map_free_vars: bool):
        self.map_free_vars = map_free_vars
        self.lhs: dict = {}
        self.rhs: dict = {}
        self.seen: set = set()
        self.stack: list = []

    def bind(self, a, b) -> None:
        if a in self.lhs or b in self.rhs:
            if self.lhs.get(a) is b:
                return
            raise _Unequal(a, b, "a variable is bound twice")
        self.lhs[a] = b
        self.rhs[b] = a
        if isinstance(a, Var):
            self.push(a.type_annotation, b.type_annotation)

    def push(self, a, b) -> None:
        self.stack.append((a, b))

    def push_all(self, xs, ys, what) -> None:
        if len(xs) != len(ys):
            raise _Unequal(xs, ys, f"different number of {what}")
        self.stack.extend(zip(reversed(xs), reversed(ys)))

    def run(self, a, b) -> None:
        self.push(a, b)
        while self.stack:
            a, b = self.stack.pop()
            if a is b and not isinstance(a, (Var, TypeVar)):
                continue
            if a is None or b is None or type(a) is not type(b):
                raise _Unequal(a, b, "different kinds of node")
            key = (id(a), id(b))
            if key in self.seen:
                continue
            self.seen.add(key)
            self.compare(a, b)

    def var(self, a, b) -> None:
        mapped = self.lhs.get(a)
        if mapped is not None:
            if mapped is not b:
                raise _Unequal(a, b, "different variables")
            return
        if b in self.rhs:
            raise _Unequal(a, b, "different variables")
        if a is b:
            return
        if self.map_free_vars or (isinstance(a, TypeVar) and a.name_hint == b.name_hint):
            self.bind(a, b)
            return
        raise _Unequal(a, b, "different free variables")

    def compare(self, a, b) -> None:  # noqa: C901  (one case per node kind)
        t = type(a)
        if t is Var or t is TypeVar:
            self.var(a, b)
        elif t is Call:
            if a.attrs != b.attrs:
                raise _Unequal(a, b, "different attributes")
            self.push_all(a.args, b.args, "arguments")
            self.push_all(a.type_args, b.type_args, "type arguments")
            self.push(a.op, b.op)
        elif t is Constant:
            x, y = a.data, b.data
            if x.dtype != y.dtype or x.shape != y.shape:
                raise _Unequal(a, b, "different constant types")
            nan_ok = x.dtype.kind == "f" or is_float(x.dtype.name)  # bfloat16 too
            if not np.array_equal(x, y, equal_nan=nan_ok):
                raise _Unequal(a, b, "different constant values")
        elif t is GlobalVar or t is Constructor or t is GlobalTypeVar:
            if a != b:
                raise _Unequal(a, b, "different names")
        elif t is Op:
            raise _Unequal(a, b, "different operators")
        elif t is Tuple:
            self.push_all(a.fields, b.fields, "tuple fields")
        elif t is TupleGetItem:
            if a.index != b.index:
                raise _Unequal(a, b, "different tuple index")
            self.push(a.tuple_value, b.tuple_value)
        elif t is Let:
            self.bind(a.var, b.var)
            self.push(a.body, b.body)
            self.push(a.value, b.value)
        elif t is If:
            self.push(a.false_branch, b.false_branch)
            self.push(a.true_branch, b.true_branch)
            self.push(a.cond, b.cond)
        elif t is Function:
            if dict(a.attrs) != dict(b.attrs):
                raise _Unequal(a, b, "different function attributes")
            if len(a.params) != len(b.params) or len(a.type_params) != len(b.type_params):
                raise _Unequal(a, b, "different number of parameters")
            for x, y in zip(a.type_params, b.type_params):
                self.bind(x, y)
            for x, y in zip(a.params, b.params):
                self.bind(x, y)
            self.push(a.body, b.body)
            self.push(a.ret_type, b.ret_type)
        elif t is Match:
            if a.complete != b.complete:
                raise _Unequal(a, b, "match completeness differs")
            self.push_all(a.clauses, b.clauses, "clauses")
            self.push(a.data, b.data)
        elif t is Clause:
            self.push(a.rhs, b.rhs)
            self.push(a.lhs, b.lhs)
        elif t is PatternVar:
            self.bind(a.var, b.var)
        elif t is PatternConstructor:
            if a.constructor != b.constructor:
                raise _Unequal(a, b, "different constructors")
            self.push_all(a.patterns, b.patterns, "sub-patterns")
        elif t is PatternTuple:
            self.push_all(a.patterns, b.patterns, "sub-patterns")
        elif t is PatternWildcard:
            pass
        elif t is RefCreate:
            self.push(a.value, b.value)
        elif t is RefRead:
            self.push(a.ref, b.ref)
        elif t is RefWrite:
            self.push(a.value, b.value)
            self.push(a.ref, b.ref)
        elif t is TensorType:
            if a != b:
                raise _Unequal(a, b, "different tensor types")
        elif t is TupleType:
            self.push_all(a.fields, b.fields, "tuple type fields")
        elif t is FuncType:
            if len(a.type_params) != len(b.type_params):
                raise _Unequal(a, b, "different type parameters")
            for x, y in zip(a.type_params, b.type_params):
                self.bind(x, y)
            self.push(a.ret_type, b.ret_type)
            self.push_all(a.arg_types, b.arg_types, "argument types")
        elif t is TypeCall:
            self.push_all(a.args, b.args, "type arguments")
            self.push(a.func, b.func)
        elif t is RefType:
            self.push(a.value, b.value)
        elif t is IncompleteType:
            raise _Unequal(a, b, "different incomplete types")
        elif t is TypeData:
            if a.header != b.header:
                raise _Unequal(a, b, "different type names")
            if len(a.type_vars) != len(b.type_vars):
                raise _Unequal(a, b, "different number of type parameters")
            for x, y in zip(a.type_vars, b.type_vars):
                self.bind(x, y)
            if len(a.constructors) != len(b.constructors):
                raise _Unequal(a, b, "different number of constructors")
            for x, y in zip(a.constructors, b.constructors):
                if x != y:
                    raise _Unequal(x, y, "different constructors")
                self.push_all(x.inputs, y.inputs, "constructor fields")
        elif t is IRModule:
            fa = {gv.name_hint: f for gv, f in a.functions.items()}
            fb = {gv.name_hint: f for gv, f in b.functions.items()}
            if set(fa) != set(fb):
                raise _Unequal(a, b, f"different functions: {sorted(fa)} vs {sorted(fb)}")
            ta = {gv.name_hint: d for gv, d in a.type_definitions.items()}
            tb = {gv.name_hint: d for gv, d in b.type_definitions.items()}
            if set(ta) != set(tb):
                raise _Unequal(a, b, f"different types: {sorted(ta)} vs {sorted(tb)}")
            # each global binds its own variables: compare each pair with a fresh mapping
            for name in sorted(ta):
                _Equal(self.map_free_vars).run(ta[name], tb[name])
            for name in sorted(fa):
                _Equal(self.map_free_vars).run(fa[name], fb[name])
        elif t is list or t is tuple:  # attribute values, shapes
            self.push_all(a, b, "elements")
        elif t in (int, float, str, bool):
            if a != b:
                raise _Unequal(a, b, "different values")
        else:
            raise _Unequal(a, b, f"cannot compare {t.__name__}")


def structural_equal(a, b, map_free_vars: bool = False) -> bool:
    try:
        _Equal(map_free_vars).run(a, b)
    except _Unequal:
        return False
    return True


def assert_structural_equal(a, b, map_free_vars: bool = False) -> None:
    """Like ``structural_equal`` but raises with both texts and the first difference."""
    try:
        _Equal(map_free_vars).run(a, b)
    except _Unequal as exc:
        from .printer import astext

        def show(x):
            try:
                return astext(x)
            except Exception:  # pragma: no cover - best effort for the message
                return repr(x)

        raise AssertionError(
            f"not structurally equal ({exc.why}):\n{show(exc.a)}\nvs\n{show(exc.b)}\n"
            f"--- lhs ---\n{show(a)}\n--- rhs ---\n{show(b)}"
        ) from None


# ---------------------------------------------------------------- hashing


def _type_hash(t) -> int:
    cls = type(t)
    if t is None:
        return 0
    if cls is TensorType:
        return hash(t)
    if cls is TypeVar:
        return hash(("TypeVar", t.kind))
    if cls is TupleType:
        return hash(("TupleType", *(_type_hash(f) for f in t.fields)))
    if cls is FuncType:
        return hash(("FuncType", len(t.type_params), _type_hash(t.ret_type),
                     *(_type_hash(a) for a in t.arg_types)))
    if cls is TypeCall:
        return hash(("TypeCall", _type_hash(t.func), *(_type_hash(a) for a in t.args)))
    if cls is RefType:
        return hash(("RefType", _type_hash(t.value)))
    if cls is GlobalTypeVar:
        return hash(t)
    return hash(cls.__name__)


def _pattern_hash(p) -> int:
    if isinstance(p, PatternVar):
        return hash(("PVar", _type_hash(p.var.type_annotation)))
    if isinstance(p, PatternConstructor):
        return hash(("PCtor", hash(p.constructor), *(_pattern_hash(q) for q in p.patterns)))
    if isinstance(p, PatternTuple):
        return hash(("PTuple", *(_pattern_hash(q) for q in p.patterns)))
    return hash("PWild")


def structural_hash(node) -> int:
    if isinstance(node, IRModule):
        return hash(tuple(sorted(
            (gv.name_hint, structural_hash(f)) for gv, f in node.functions.items()
        )))
    if type(node) not in NODES:
        return _type_hash(node)
    nodes = NODES
    hashes: dict[int, int] = {}
    stack = [(node, False)]
    while stack:
        e, expanded = stack.pop()
        if id(e) in hashes:
            continue
        children = nodes[type(e)].children(e)
        if not expanded:
            stack.append((e, True))
            stack.extend((c, False) for c in children if id(c) not in hashes)
            continue
        hashes[id(e)] = _node_hash(e, [hashes[id(c)] for c in children])
    return hashes[id(node)]


def _node_hash(e, child_hashes: list[int]) -> int:
    t = type(e)
    if t is Var:
        return hash(("Var", _type_hash(e.type_annotation)))
    if t is Constant:
        return hash(("Constant", e.data.dtype.name, e.data.shape, e.data.tobytes()))
    if t is Call:
        return hash(("Call", e.op.name if isinstance(e.op, Op) else "", hash(e.attrs),
                     *child_hashes))
    if t is Function:
        return hash(("Function", _type_hash(e.ret_type), len(e.type_params),
                     hash(e.attrs), *child_hashes))
    if t is TupleGetItem:
        return hash(("TupleGetItem", e.index, *child_hashes))
    if t is Match:
        return hash(("Match", e.complete, *(_pattern_hash(c.lhs) for c in e.clauses),
                     *child_hashes))
    if t is GlobalVar or t is Constructor:
        return hash(e)
    if t is Op:
        return hash(("Op", e.name))
    return hash((t.__name__, *child_hashes))
