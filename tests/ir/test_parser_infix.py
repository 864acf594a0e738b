"""Relay's infix operators, unary minus and ``e; rest`` sequences in the text format:
each parses to the same program as the call syntax the printer writes."""

import pytest

import relayir as relay
from relayir.errors import ParseError


@pytest.mark.parametrize("infix,calls", [
    ("1 * 2 + 3", "add(multiply(1, 2), 3)"),
    ("1 + 2 * 3", "add(1, multiply(2, 3))"),
    ("1 - 2 - 3", "subtract(subtract(1, 2), 3)"),  # left associative
    ("1 / 2 * 3", "multiply(divide(1, 2), 3)"),
    ("1 * 1 + 1 < 1 == 1", "equal(less(add(multiply(1, 1), 1), 1), 1)"),
    ("1 == 1 < 1 + 1 * 1", "equal(1, less(1, add(1, multiply(1, 1))))"),
    ("1 * (1 + 1)", "multiply(1, add(1, 1))"),
    ("1 <= 2 != 3 >= 4", "not_equal(less_equal(1, 2), greater_equal(3, 4))"),
    ("1 > 2", "greater(1, 2)"),
    ("--10", "10"),
    ("---10", "-10"),
    ("(); ()", "let %_ = (); ()"),
])
def test_infix_parses_as_calls(infix, calls):
    assert relay.structural_equal(relay.parse_expr(infix), relay.parse_expr(calls))


def test_infix_in_a_module_round_trips():
    text = """#[version = "0.0.5"]
def @main(%x: Tensor[(2), float32], %y: Tensor[(2), float32]) {
  ref_write(ref(%x), %y);
  -%x * %y - %x / %y
}"""
    mod = relay.transform.InferType()(relay.parse(text))
    printed = mod.astext()
    assert "negative(%x)" in printed and "subtract(" in printed and "let %_" in printed
    assert relay.structural_equal(relay.parse(printed), mod)


def test_a_comment_opened_and_never_closed_is_still_named():
    with pytest.raises(ParseError, match="unterminated comment"):
        relay.parse_expr("1 / 2 /* open")


def test_int_and_float_are_tvm_dtype_aliases():
    mod = relay.parse('#[version = "0.0.5"]\n'
                      'def @main(%z: int, %w: Tensor[(2), float]) { (%z, %w) }')
    params = mod["main"].params
    assert params[0].type_annotation == relay.TensorType((), "int32")
    assert params[1].type_annotation == relay.TensorType((2,), "float32")
