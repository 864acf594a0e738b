"""Unification of types and a worklist of deferred type relations.

``IncompleteType`` holes are bound in a substitution map (a union-find without ranks:
chains are short because ``find`` compresses them). A relation that cannot run yet
(an input is still a hole) waits in a queue; ``solve`` retries the queue until nothing
changes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..errors import TypeInferenceError
from ..ir.dim_expr import certainly_differ
from ..ir.types import (
    Any,
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeVar,
)


@dataclass
class Relation:
    fn: Callable[[list[Type]], Type]  # resolved input types -> output type
    inputs: list[Type]
    output: Type
    describe: Callable[[], str]  # where, for error messages
    # (input types, None where unknown) -> a type per input or None: the inputs the
    # relation's attributes imply (``input_rules``), asked only when solving is stuck
    complete: Callable[[list], list | None] | None = None


class TypeSolver:
    def __init__(self) -> None:
        self._subst: dict[IncompleteType, Type] = {}
        self._pending: list[Relation] = []

    # ------------------------------------------------------------ substitution

    def find(self, t: Type) -> Type:
        if type(t) is not IncompleteType:
            return t
        path = []
        while type(t) is IncompleteType and t in self._subst:
            path.append(t)
            t = self._subst[t]
        for p in path[:-1]:
            self._subst[p] = t
        return t

    def resolve(self, t: Type) -> Type:
        """``t`` with every bound hole replaced, deeply."""
        t = self.find(t)
        cls = type(t)
        if cls is TensorType or cls is TypeVar or cls is GlobalTypeVar or cls is IncompleteType:
            return t
        if cls is TupleType:
            fields = tuple(self.resolve(f) for f in t.fields)
            return t if all(a is b for a, b in zip(fields, t.fields)) else TupleType(fields)
        if cls is FuncType:
            args = tuple(self.resolve(a) for a in t.arg_types)
            return FuncType(args, self.resolve(t.ret_type), t.type_params, t.type_constraints)
        if cls is TypeCall:
            return TypeCall(self.resolve(t.func), tuple(self.resolve(a) for a in t.args))
        if cls is RefType:
            return RefType(self.resolve(t.value))
        return t

    def is_resolved(self, t: Type) -> bool:
        t = self.find(t)
        cls = type(t)
        if cls is TensorType:
            return True
        if cls is IncompleteType:
            return False
        if cls is TupleType:
            return all(self.is_resolved(f) for f in t.fields)
        if cls is FuncType:
            return all(self.is_resolved(a) for a in t.arg_types) and self.is_resolved(t.ret_type)
        if cls is TypeCall:
            return all(self.is_resolved(a) for a in t.args)
        if cls is RefType:
            return self.is_resolved(t.value)
        return True

    # ------------------------------------------------------------ unification

    def unify(self, a: Type, b: Type, where: Callable[[], str]) -> Type:
        try:
            return self._unify(a, b)
        except _Mismatch:
            raise TypeInferenceError(
                f"type mismatch {where()}: expected {self.resolve(a)}, found {self.resolve(b)}"
            ) from None

    def _unify(self, a: Type, b: Type) -> Type:
        a, b = self.find(a), self.find(b)
        if type(a) is GlobalTypeVar:  # a bare ADT name is the ADT applied to no arguments
            a = TypeCall(a, ())
        if type(b) is GlobalTypeVar:
            b = TypeCall(b, ())
        if a is b:
            return a
        if type(a) is IncompleteType:
            if self._occurs(a, b):
                raise _Mismatch
            self._subst[a] = b
            return b
        if type(b) is IncompleteType:
            return self._unify(b, a)
        if type(a) is not type(b):
            raise _Mismatch
        cls = type(a)
        if cls is TensorType:
            if a.dtype != b.dtype or len(a.shape) != len(b.shape):
                raise _Mismatch
            dims = tuple(_unify_dim(x, y) for x, y in zip(a.shape, b.shape))
            return a if dims == a.shape else TensorType(dims, a.dtype)
        if cls is TupleType:
            if len(a.fields) != len(b.fields):
                raise _Mismatch
            return TupleType(tuple(self._unify(x, y) for x, y in zip(a.fields, b.fields)))
        if cls is FuncType:
            if len(a.arg_types) != len(b.arg_types) or len(a.type_params) != len(b.type_params):
                raise _Mismatch
            if b.type_params:
                b = substitute(b, dict(zip(b.type_params, a.type_params)))
            args = tuple(self._unify(x, y) for x, y in zip(a.arg_types, b.arg_types))
            return FuncType(args, self._unify(a.ret_type, b.ret_type), a.type_params)
        if cls is TypeCall:
            if a.func != b.func or len(a.args) != len(b.args):
                raise _Mismatch
            return TypeCall(a.func, tuple(self._unify(x, y) for x, y in zip(a.args, b.args)))
        if cls is RefType:
            return RefType(self._unify(a.value, b.value))
        if cls is GlobalTypeVar and a == b:
            return a
        raise _Mismatch

    def _occurs(self, hole: IncompleteType, t: Type) -> bool:
        t = self.find(t)
        if t is hole:
            return True
        if isinstance(t, TupleType):
            return any(self._occurs(hole, f) for f in t.fields)
        if isinstance(t, FuncType):
            return any(self._occurs(hole, x) for x in (*t.arg_types, t.ret_type))
        if isinstance(t, TypeCall):
            return any(self._occurs(hole, x) for x in t.args)
        if isinstance(t, RefType):
            return self._occurs(hole, t.value)
        return False

    # ------------------------------------------------------------ relations

    def add_relation(self, rel: Relation) -> None:
        """Run ``rel`` now if its inputs are known, else queue it."""
        if not self._try(rel):
            self._pending.append(rel)

    def _try(self, rel: Relation) -> bool:
        if not all(self.is_resolved(t) for t in rel.inputs):
            return False
        inputs = [self.resolve(t) for t in rel.inputs]
        try:
            out = rel.fn(inputs)
        except TypeInferenceError as exc:
            raise TypeInferenceError(f"{exc} {rel.describe()}") from None
        self.unify(rel.output, out, lambda: f"for the result {rel.describe()}")
        return True

    def _complete(self, rel: Relation) -> bool:
        """Type the unknown inputs of ``rel`` that its completion rule implies."""
        if rel.complete is None:
            return False
        known = [self.resolve(t) if self.is_resolved(t) else None for t in rel.inputs]
        implied = rel.complete(known) or ()
        done = False
        for i, (t, guess) in enumerate(zip(rel.inputs, implied)):
            if guess is not None and known[i] is None:
                self.unify(t, guess, lambda i=i: f"for input {i} {rel.describe()}")
                done = True
        return done

    def solve(self) -> None:
        progress = True
        while self._pending and progress:
            progress = False
            still = []
            for rel in self._pending:
                if self._try(rel):
                    progress = True
                else:
                    still.append(rel)
            self._pending = still
            if not progress:  # stuck: let relations type the inputs their attrs imply
                progress = any([self._complete(rel) for rel in self._pending])
        if self._pending:
            rel = self._pending[0]
            known = ", ".join(str(self.resolve(t)) for t in rel.inputs)
            raise TypeInferenceError(
                f"cannot infer the type {rel.describe()}: input types are ({known}); "
                f"add type annotations"
            )


class _Mismatch(Exception):
    pass


def _unify_dim(x, y):
    """Equal dims unify; dims that no values of their names make equal (``3`` and ``4``,
    ``n`` and ``n + 1``, ``2 * n`` and ``3``) do not; any other pair may be equal at run
    time, and unifies to ``Any`` (never to a static answer that might be wrong)."""
    if x == y:
        return x
    if certainly_differ(x, y) or (isinstance(x, int) and isinstance(y, int)):
        raise _Mismatch
    return Any()


def substitute(t: Type, mapping: dict) -> Type:
    """Replace type variables (or holes) by ``mapping``; types are small, recursion is fine."""
    if not mapping:
        return t
    cls = type(t)
    if cls is TypeVar or cls is IncompleteType:
        return mapping.get(t, t)
    if cls is TupleType:
        return TupleType(tuple(substitute(f, mapping) for f in t.fields))
    if cls is FuncType:
        inner = {k: v for k, v in mapping.items() if k not in t.type_params}
        return FuncType(
            tuple(substitute(a, inner) for a in t.arg_types),
            substitute(t.ret_type, inner),
            t.type_params,
            t.type_constraints,
        )
    if cls is TypeCall:
        return TypeCall(substitute(t.func, mapping), tuple(substitute(a, mapping) for a in t.args))
    if cls is RefType:
        return RefType(substitute(t.value, mapping))
    return t


def instantiate(t: Type) -> Type:
    """A polymorphic function type with its type parameters replaced by fresh holes."""
    if isinstance(t, FuncType) and t.type_params:
        fresh = {p: IncompleteType() for p in t.type_params}
        return FuncType(
            tuple(substitute(a, fresh) for a in t.arg_types),
            substitute(t.ret_type, fresh),
        )
    return t
