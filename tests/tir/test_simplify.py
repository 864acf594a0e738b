"""The simplifier on index arithmetic: flattened offsets, div/mod, bounds."""

import pytest

from relayir.te import expr as E
from relayir.te.computes.common import ravel, unravel
from relayir.tir.simplify import simplify

i, j, k, f = E.Var("i"), E.Var("j"), E.Var("k"), E.Var("f")
R = {i: (0, 3), j: (0, 5), k: (0, 3), f: (0, 95)}


def s(e):
    return simplify(e, R)


def test_constant_folding_and_identities():
    assert s(E.IntImm(2) * 3 + 4) == E.IntImm(10)
    assert s(i * 1 + 0) is i
    assert s(i * 0) == E.IntImm(0)
    assert s(i - i) == E.IntImm(0)
    assert s(E.FloatImm(1.5) * E.FloatImm(2.0)) == E.FloatImm(3.0)
    x = E.Var("x", "float32")
    assert s(x * 1.0) is x
    assert s(x + 0.0) == x + 0.0  # -0.0 + 0.0 is +0.0: not an identity in IEEE


def test_integer_folding_wraps_like_c():
    a = E.IntImm(100, "int8") + E.IntImm(100, "int8")
    assert s(a) == E.IntImm(-56, "int8")
    assert s(E.TruncDiv(E.IntImm(-7, "int32"), E.IntImm(2, "int32"))) == E.IntImm(-3, "int32")
    assert s(E.FloorDiv(E.IntImm(-7, "int32"), E.IntImm(2, "int32"))) == E.IntImm(-4, "int32")
    assert s(E.TruncMod(E.IntImm(-7, "int32"), E.IntImm(2, "int32"))) == E.IntImm(-1, "int32")


def test_linear_terms_are_collected():
    assert s((i + j) * 4 - j * 4 + 2 - 2) == s(i * 4)
    assert s(i * 6 + j - (i * 6 + j)) == E.IntImm(0)


def test_div_mod_of_a_linear_form():
    assert s(E.TruncDiv(i * 6 + j, E.IntImm(6))) is i
    assert s(E.TruncMod(i * 6 + j, E.IntImm(6))) is j
    assert s(E.TruncDiv(j + 6, E.IntImm(6))) == E.IntImm(1)
    assert s(E.TruncMod(i * 12 + 8, E.IntImm(4))) == E.IntImm(0)
    assert s(E.TruncDiv(i * 12 + 8, E.IntImm(4))) == s(i * 3 + 2)
    assert s(E.TruncDiv(E.TruncDiv(f, E.IntImm(4)), E.IntImm(3))) == E.TruncDiv(f, E.IntImm(12))


def test_div_mod_by_a_symbolic_extent():
    from relayir.tir.simplify import Simplifier

    n, m = E.Var("n"), E.Var("m")
    ranges = {i: (0, 3), j: (0, None), n: (0, None)}
    simp = Simplifier(ranges, extents={j: n})
    assert simp(E.TruncDiv(i * n + j, n)) is i
    assert simp(E.TruncMod(i * n + j, n)) is j
    assert simp(E.TruncDiv(E.TruncDiv(i * n + j, n), E.IntImm(4))) == E.IntImm(0)
    # j's extent is n, not m; and without the extent nothing is known
    assert simp(E.TruncDiv(i * m + j, m)) == E.TruncDiv(i * m + j, m)
    assert simplify(E.TruncDiv(i * n + j, n), ranges) == E.TruncDiv(i * n + j, n)


def test_floor_ops_become_trunc_when_non_negative():
    assert s(E.FloorDiv(i * 6 + j, E.IntImm(6))) is i
    neg = E.Var("n")  # unknown sign: stays a floor division
    assert isinstance(simplify(E.FloorDiv(neg - 1, E.IntImm(2))), E.FloorDiv)


def test_ravel_of_unravel_is_the_position():
    assert s(ravel(unravel(f, (4, 6, 4)), (4, 6, 4))) is f
    # reshape (4, 6, 4) -> (24, 4) -> (4, 6, 4) reads the original index
    flat = ravel((i, j, k), (4, 6, 4))
    back = unravel(ravel(unravel(flat, (24, 4)), (24, 4)), (4, 6, 4))
    assert [s(x) for x in back] == [i, j, k]


def test_bounds_decide_comparisons_min_max():
    assert s(E.LT(i * 2 + k, E.IntImm(10))) == E.IntImm(1, "bool")
    assert s(E.GE(i, E.IntImm(0))) == E.IntImm(1, "bool")
    assert s(E.GT(j, E.IntImm(5))) == E.IntImm(0, "bool")
    assert s(E.Min(i, E.IntImm(7))) is i
    assert s(E.Max(i - 4, E.IntImm(0))) == E.IntImm(0)
    undecided = s(E.LT(i, E.IntImm(2)))
    assert isinstance(undecided, E.LT)


@pytest.mark.parametrize("shape", [(3, 5), (2, 3, 4), (7,)])
def test_mod_chains_merge(shape):
    n = 1
    for d in shape:
        n *= d
    v = E.Var("v")
    idx = unravel(v, shape)
    assert simplify(ravel(idx, shape), {v: (0, n - 1)}) is v
