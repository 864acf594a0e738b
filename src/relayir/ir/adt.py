"""Algebraic data types: type definitions, constructors, patterns and ``match``."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import Error
from .expr import Call, Expr, Var, as_expr
from .types import FuncType, GlobalTypeVar, Node, Type, TypeCall


class Constructor(Expr):
    """A data constructor (``Cons``); calling it builds an ADT value.

    ``tag`` is its position in the type definition, set when the ``TypeData`` is made.
    Equality is by (type name, constructor name), so parsed and built ones agree.
    """

    __slots__ = ("name_hint", "inputs", "belong_to", "tag")

    def __init__(self, name_hint: str, inputs, belong_to: GlobalTypeVar):
        object.__setattr__(self, "name_hint", name_hint)
        object.__setattr__(self, "inputs", tuple(inputs))
        object.__setattr__(self, "belong_to", belong_to)
        object.__setattr__(self, "tag", -1)

    def __setattr__(self, key, value):
        raise AttributeError("Constructor is immutable")

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Constructor)
            and other.name_hint == self.name_hint
            and other.belong_to == self.belong_to
        )

    def __hash__(self) -> int:
        return hash(("Constructor", self.belong_to.name_hint, self.name_hint))

    def __repr__(self) -> str:
        return self.name_hint

    def __call__(self, *args) -> Call:
        if len(args) != len(self.inputs):
            raise Error(
                f"constructor {self.name_hint} takes {len(self.inputs)} arguments, "
                f"found {len(args)}"
            )
        return Call(self, tuple(as_expr(a) for a in args))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class TypeData(Node):
    """``type List[A] { Cons(A, List[A]), Nil }``."""

    header: GlobalTypeVar
    type_vars: tuple
    constructors: tuple

    def __post_init__(self) -> None:
        object.__setattr__(self, "type_vars", tuple(self.type_vars))
        object.__setattr__(self, "constructors", tuple(self.constructors))
        for tag, ctor in enumerate(self.constructors):
            if ctor.belong_to != self.header:
                raise Error(
                    f"constructor {ctor.name_hint} belongs to {ctor.belong_to.name_hint}, "
                    f"not {self.header.name_hint}"
                )
            object.__setattr__(ctor, "tag", tag)

    def constructor_type(self, ctor: Constructor) -> FuncType:
        """``fn[A](A, List[A]) -> List[A]`` for ``Cons``."""
        return FuncType(ctor.inputs, TypeCall(self.header, self.type_vars), self.type_vars)

    def __repr__(self) -> str:
        return self.astext()


# ---------------------------------------------------------------- patterns


class Pattern(Node):
    __slots__ = ()

    def __repr__(self) -> str:
        return self.astext()


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class PatternWildcard(Pattern):
    pass


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class PatternVar(Pattern):
    var: Var


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class PatternConstructor(Pattern):
    constructor: Constructor
    patterns: tuple = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "patterns", tuple(self.patterns))


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class PatternTuple(Pattern):
    patterns: tuple = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "patterns", tuple(self.patterns))


def pattern_vars(pattern: Pattern) -> list[Var]:
    """Variables a pattern binds, left to right (patterns are small: recursion is fine)."""
    out: list[Var] = []
    stack = [pattern]
    while stack:
        p = stack.pop()
        if isinstance(p, PatternVar):
            out.append(p.var)
        elif isinstance(p, (PatternConstructor, PatternTuple)):
            stack.extend(reversed(p.patterns))
    return out


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Clause(Node):
    lhs: Pattern
    rhs: Expr


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Match(Expr):
    """``match (data) { clauses }``; ``complete=False`` prints as ``match?``."""

    data: Expr
    clauses: tuple
    complete: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "clauses", tuple(self.clauses))


def adt_type(header: GlobalTypeVar, *args: Type) -> TypeCall:
    return TypeCall(header, args)
