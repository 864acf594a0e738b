"""``unmatched_cases``: the values a ``match`` does not catch, as patterns."""

import relayir as relay
from relayir.ir.adt import (
    Clause,
    Match,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
)
from relayir.ir.match_exhaustion import unmatched_cases


def _list():
    mod = relay.IRModule()
    p = relay.Prelude(mod)
    return mod, p.Cons, p.Nil


def _w():
    return PatternWildcard()


def _match(*patterns):
    v = relay.var("v")
    return Match(v, [Clause(p, v) for p in patterns])


def test_no_clause_leaves_everything_and_a_wildcard_or_a_variable_catches_all():
    (left,) = unmatched_cases(_match())
    assert isinstance(left, PatternWildcard)
    assert unmatched_cases(_match(_w())) == []
    assert unmatched_cases(_match(PatternVar(relay.var("w")))) == []


def test_a_list_of_two_or_more_misses_nil_and_the_one_element_list():
    mod, cons, nil = _list()
    match = _match(PatternConstructor(cons, [_w(), PatternConstructor(cons, [_w(), _w()])]))
    left = unmatched_cases(match, mod)
    assert sorted(p.astext() for p in left) == sorted(
        [PatternConstructor(nil).astext(),
         PatternConstructor(cons, [_w(), PatternConstructor(nil)]).astext()])
    assert all(isinstance(p, PatternConstructor) for p in left)
    assert unmatched_cases(_match(match.clauses[0].lhs, _w()), mod) == []


def test_clauses_that_cover_every_constructor_are_exhaustive_in_any_order():
    mod, cons, nil = _list()
    one = PatternConstructor(cons, [_w(), PatternConstructor(nil)])
    many = PatternConstructor(cons, [_w(), PatternConstructor(cons, [_w(), _w()])])
    assert unmatched_cases(_match(PatternConstructor(nil), one, many), mod) == []
    assert unmatched_cases(_match(many, one, PatternConstructor(nil)), mod) == []
    (left,) = unmatched_cases(_match(many, PatternConstructor(nil)), mod)
    assert left.astext() == one.astext()


def test_tuples_split_field_by_field():
    mod, cons, nil = _list()
    both_nil = PatternTuple([PatternConstructor(nil), PatternConstructor(nil)])
    left = unmatched_cases(_match(both_nil), mod)
    assert len(left) == 3 and all(isinstance(p, PatternTuple) for p in left)
    first_cons = PatternTuple([PatternConstructor(cons, [_w(), _w()]), _w()])
    second_cons = PatternTuple([_w(), PatternConstructor(cons, [_w(), _w()])])
    assert unmatched_cases(_match(both_nil, first_cons, second_cons), mod) == []
