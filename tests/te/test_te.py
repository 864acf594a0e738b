"""Tensor expressions: node construction, structural equality, dtypes, traversals."""

import pytest

from relayir import te
from relayir.te import expr as E
from relayir.te.visit import collect, substitute


def test_operators_build_typed_nodes():
    i = E.Var("i")
    e = i * 4 + 1
    assert isinstance(e, E.Add) and e.dtype == "int64"
    x = E.Var("x", "float32")
    assert (x / 2.0).dtype == "float32" and isinstance(x / 2.0, E.Div)
    assert isinstance(i / 2, E.TruncDiv)
    assert (x < 1.0).dtype == "bool"


def test_structural_equality_and_hashing():
    i, j = E.Var("i"), E.Var("j")
    assert i * 4 + j == i * 4 + j
    assert hash(i * 4 + j) == hash(i * 4 + j)
    assert i * 4 + j != j * 4 + i
    assert E.Var("i") != i  # variables are equal only to themselves
    assert E.FloatImm(0.0) != E.FloatImm(-0.0)


def test_mixed_dtypes_are_an_error():
    with pytest.raises(E.TEError, match="dtypes differ"):
        E.Var("x", "float32") + E.Var("y", "float64")
    with pytest.raises(E.TEError, match="truth value"):
        bool(E.Var("i") < 3)


def test_compute_and_reduce():
    A = te.placeholder((4, 5), "float32", "A")
    k = te.reduce_axis((0, 5), "k")
    B = te.compute((4,), lambda i: te.sum(A[i, k.var] * 2.0, k), name="B")
    assert B.shape == (E.IntImm(4),) and B.dtype == "float32"
    (red,) = collect(B.op.body, E.Reduce)
    assert red.combiner == "sum" and red.axes[0] is k
    C = te.compute((4, 5), lambda i, j: te.if_then_else(A[i, j] > 0.0, A[i, j], 0.0), "C")
    assert isinstance(C.op.body, E.Select)


def test_substitute_keeps_sharing():
    i = E.Var("i")
    shared = i * 3 + 1
    e = shared * shared
    out = substitute(e, {i: E.IntImm(2)})
    assert out.a is out.b


def test_sigmoid_is_an_expression():
    x = E.Var("x", "float32")
    s = te.sigmoid(x)
    assert isinstance(s, E.Div)
    assert any(isinstance(n, E.Call) and n.name == "exp" for n in collect(s, E.Call))
