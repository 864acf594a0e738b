"""Dim expressions: canonical form, Python operators, text round trip, type inference."""

from __future__ import annotations

import pytest

import relayir as relay
from relayir.errors import Error, ParseError, TypeInferenceError
from relayir.ir.dim_expr import (
    Any,
    DimExpr,
    SymbolicDim,
    certainly_differ,
    dim_max,
    dim_min,
    dim_symbols,
    exact_div,
    floordiv,
    floormod,
    solve_dim,
    substitute_dim,
)
from relayir.ir.types import TensorType
from relayir.typing import infer_module

n, m = SymbolicDim("n"), SymbolicDim("m")


@pytest.mark.parametrize("a, b", [
    (n * 2, 2 * n),
    ((n + 1) - 1, n),
    (n + n, 2 * n),
    (n - n, 0),
    (3 + n - 3, n),
    (n * m, m * n),
    ((n + 1) * (n - 1), n * n - 1),
    (floordiv(4 * n + 3, 4), n),
    (floordiv(8 * n, 4), 2 * n),
    (floordiv(floordiv(n, 2), 4), floordiv(n, 8)),
    (floordiv(n, 1), n),
    (floordiv(n - 1, 4), floordiv(n + 3, 4) - 1),
    (floormod(4 * n + 5, 4), 1),
    (floormod(n + 4, 4), floormod(n, 4)),
    (floormod(n, 1), 0),
    (dim_min(n, n + 1), n),
    (dim_max(n, n - 3), n),
    (dim_max(n, 0), n),
    (dim_min(n + 1, 1), 1),
    (dim_min(n, m), dim_min(m, n)),
    (n // 4, floordiv(n, 4)),
    (n % 4, floormod(n, 4)),
    (-n + 4, 4 - n),
    (floordiv(n, n), 1),
])
def test_canonical_form(a, b):
    assert a == b and hash(a) == hash(b)
    assert str(a) == str(b)


def test_ints_fold_and_distinct_forms_differ():
    assert floordiv(7, 2) == 3 and floormod(7, 2) == 1 and dim_min(3, 5) == 3
    assert n + 1 != n and 2 * n != n * n and floordiv(n, 4) != floordiv(n, 2)
    assert isinstance(n - 1, DimExpr) and isinstance(n, DimExpr)
    assert {n - 1, n + -1, 2 * n} == {n - 1, n * 2}


def test_any_absorbs_and_operand_errors():
    assert n + Any() is Any() and Any() - 1 is Any() and floordiv(Any(), 2) is Any()
    assert n * 0 == 0
    with pytest.raises(Error, match="division by zero"):
        floordiv(n, 0)
    with pytest.raises(Error, match="ints and dims"):
        n + 1.5


def test_questions():
    e = 2 * n + floordiv(m, 4) - 1
    assert dim_symbols(e) == {"n", "m"}
    assert substitute_dim(e, {"n": 3, "m": 9}) == 7
    assert substitute_dim(e, {"n": 3}) == floordiv(m, 4) + 5
    assert solve_dim(2 * n - 1, 7) == ("n", 4)
    assert solve_dim(2 * n, 3) is False and solve_dim(n + 5, 3) is False
    assert solve_dim(floordiv(n, 4), 3) is None
    assert certainly_differ(n + 1, n) and certainly_differ(2 * n, 3)
    assert not certainly_differ(n, m) and not certainly_differ(n - 1, 3)
    assert exact_div(6 * n * m, 2 * m) == 3 * n and exact_div(n + 1, 2) is None


def test_text_round_trip():
    d = SymbolicDim("d")
    dims = (d, floordiv(d, 4), 2 * d, d - 1, floormod(d, 3), dim_min(d, 8), d * d - 2 * d + 1)
    x = relay.var("x", shape=dims)
    mod = relay.IRModule.from_expr(relay.Function([x], x))
    text = mod.astext()
    assert "floordiv(d, 4), 2 * d, d - 1, floormod(d, 3), min(8, d)" in text
    again = relay.parse(text)
    assert again["main"].params[0].type_annotation == x.type_annotation
    assert again.astext() == text


@pytest.mark.parametrize("text, dim", [
    ("n -1", n - 1),
    ("-n + 2 * (n + 1)", n + 2),
    ("n*m - 1", m * n - 1),
    ("floordiv(4 * n + 3, 4)", n),
    ("max(n, 0)", n),
])
def test_parse_spellings(text, dim):
    mod = relay.parse(f'#[version = "0.0.5"]\ndef @main(%x: Tensor[({text}, 3), float32]) '
                      "{ %x }")
    assert mod["main"].params[0].type_annotation.shape == (dim, 3)


@pytest.mark.parametrize("text", ["(n +, 3)", "(floordiv(n), 3)", "(floordiv(n, 0), 3)",
                                  "(n - 5 - n, 3)"])
def test_parse_errors(text):
    with pytest.raises(ParseError):
        relay.parse(f'#[version = "0.0.5"]\ndef @main(%x: Tensor[{text}, float32]) {{ %x }}')


def _typed(fn):
    return infer_module(relay.IRModule.from_expr(fn))["main"].body.checked_type


def test_unify_expressions():
    x = relay.var("x", TensorType((n - 1, 4)))
    f = relay.var("f", relay.FuncType([TensorType((n - 1, 4))], TensorType((n - 1, 4))))
    assert _typed(relay.Function([x, f], f(x))) == TensorType((n - 1, 4))
    # an int the expression can take unifies (to Any: the name stays unbound)
    y = relay.var("y", TensorType((3, 4)))
    assert _typed(relay.Function([y, f], f(y))) == TensorType((n - 1, 4))
    # an int it can never take is a type error
    g = relay.var("g", relay.FuncType([TensorType((2 * n, 4))], TensorType((n, 4))))
    with pytest.raises(TypeInferenceError, match="mismatch"):
        _typed(relay.Function([y, g], g(y)))
    z = relay.var("z", TensorType((n, 4)))
    with pytest.raises(TypeInferenceError, match="mismatch"):
        _typed(relay.Function([z, f], f(z)))


def test_relations_compute_expressions():
    x = relay.var("x", TensorType((n, 8)))
    parts = relay.split(x, 2, axis=0)
    body = relay.concatenate([relay.strided_slice(x, (1,), (2**31 - 1,)), x,
                              relay.reshape(x, (-1, 8))], axis=0)
    assert _typed(relay.Function([x], body)) == TensorType((dim_max(n - 1, 0) + 2 * n, 8))
    assert _typed(relay.Function([x], relay.TupleGetItem(parts, 0))) == \
        TensorType((floordiv(n, 2), 8))
    flat = relay.reshape(relay.reshape(x, (-1, 4)), (-1,))
    assert _typed(relay.Function([x], flat)) == TensorType((8 * n,))
    y = relay.var("y", TensorType((2 * n, 4)))
    assert _typed(relay.Function([x, y], relay.reshape(x, (-1, 4)) + y)) == \
        TensorType((2 * n, 4))
    bad = relay.var("b", TensorType((3, 4)))
    with pytest.raises(TypeInferenceError, match="broadcast"):
        _typed(relay.Function([x, bad], relay.reshape(x, (-1, 4)) + bad))


def test_expression_chain_does_not_recurse():
    """A 100,000-node chain of ops whose types are dim expressions (the graph is
    user-sized; each dim expression stays small)."""
    x = relay.var("x", TensorType((n - 1, 4)))
    y = x
    for _ in range(100_000):
        y = relay.nn.relu(y)
    mod = relay.IRModule.from_expr(relay.Function([x], y))
    assert infer_module(mod)["main"].body.checked_type == TensorType((n - 1, 4))
    text = mod.astext()
    assert relay.parse(text)["main"].params[0].type_annotation.shape == (n - 1, 4)
