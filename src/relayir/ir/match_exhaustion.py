"""Which values a ``match`` does not catch: ``unmatched_cases(match, mod)`` lists
patterns (wildcards standing for "anything") that no clause matches, empty when the
match is exhaustive.

It refines candidates, starting from one wildcard: a candidate that a clause matches
outright is covered; one a clause rejects goes to the next clause; one that is too
vague for a clause to decide (a wildcard where the clause names a constructor or a
tuple) is split into the shapes that clause could tell apart (every constructor of the
type, with wildcard fields), each checked again. A candidate no clause takes is
unmatched. Patterns are small (as deep as the program text), so the helpers recurse.
"""

from __future__ import annotations

import itertools
from enum import Enum

from .adt import Pattern, PatternConstructor, PatternTuple, PatternVar, PatternWildcard


class _Fit(Enum):
    YES = 0  # the clause's pattern takes every value the candidate stands for
    NO = 1  # it takes none of them
    VAGUE = 2  # some: the candidate must be split to decide


def _fit(pattern: Pattern, cand: Pattern) -> _Fit:
    if isinstance(pattern, PatternWildcard | PatternVar):
        return _Fit.YES
    if isinstance(pattern, PatternConstructor):
        if not isinstance(cand, PatternConstructor):
            return _Fit.VAGUE
        if pattern.constructor != cand.constructor:
            return _Fit.NO
    elif not isinstance(cand, PatternTuple):
        return _Fit.VAGUE
    fits = [_fit(p, c) for p, c in zip(pattern.patterns, cand.patterns, strict=True)]
    if _Fit.NO in fits:
        return _Fit.NO
    return _Fit.VAGUE if _Fit.VAGUE in fits else _Fit.YES


def _split(pattern: Pattern, cand: Pattern, mod) -> list[Pattern]:
    """``cand`` as the more specific candidates ``pattern`` can tell apart."""
    if isinstance(pattern, PatternConstructor):
        if isinstance(cand, PatternWildcard | PatternVar):
            type_data = mod[pattern.constructor.belong_to]
            return [PatternConstructor(c, [PatternWildcard() for _ in c.inputs])
                    for c in type_data.constructors]
        return [PatternConstructor(cand.constructor, fields)
                for fields in _fields(pattern, cand, mod)]
    if isinstance(pattern, PatternTuple):
        if isinstance(cand, PatternWildcard | PatternVar):
            return [PatternTuple([PatternWildcard() for _ in pattern.patterns])]
        return [PatternTuple(fields) for fields in _fields(pattern, cand, mod)]
    return [cand]


def _fields(pattern, cand, mod) -> list[list[Pattern]]:
    options = [_split(p, c, mod) for p, c in zip(pattern.patterns, cand.patterns, strict=True)]
    return [list(fields) for fields in itertools.product(*options)]


def unmatched_cases(match, mod=None) -> list[Pattern]:
    """Patterns for the values no clause of ``match`` catches (``mod`` holds the ADT
    definitions its constructors belong to)."""
    candidates: list[Pattern] = [PatternWildcard()]
    unmatched: list[Pattern] = []
    while candidates:
        cand = candidates.pop()
        for clause in match.clauses:
            fit = _fit(clause.lhs, cand)
            if fit is _Fit.NO:
                continue
            if fit is _Fit.VAGUE:
                candidates.extend(_split(clause.lhs, cand, mod))
            break
        else:
            unmatched.append(cand)
    return unmatched
