"""``relay.adt``: algebraic data types and pattern matching."""

from ...ir.adt import (  # noqa: F401
    Clause,
    Constructor,
    Match,
    Pattern,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    TypeData,
)

__all__ = ["Clause", "Constructor", "Match", "Pattern", "PatternConstructor", "PatternTuple",
           "PatternVar", "PatternWildcard", "TypeData"]
