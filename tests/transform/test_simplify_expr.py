"""SimplifyExpr: each rule as text → expected text, the cases where it must decline,
the fixed point, the debug flag, random programs with injected identities, scale."""

from __future__ import annotations

import numpy as np
import pytest

import relayir as relay
from relayir.errors import Error
from relayir.ir.expr import Call
from relayir.ir.functor import post_order
from relayir.ir.structural import assert_structural_equal
from relayir.ir.types import TensorType
from relayir.testing.pass_check import (
    assert_same_results,
    check_main,
    evaluate,
    parse_main,
    wrap_calls,
)
from relayir.testing.random_programs import random_program
from relayir.transform.rewrite import Rule, is_op, rewrite, wildcard
from relayir.transform.simplify_expr import SimplifyExpr, lossless


def _context(**config):
    return relay.transform.PassContext(config={f"relay.SimplifyExpr.{k}": v
                                               for k, v in config.items()})


def simplify(mod, **config):
    with _context(**config):
        return SimplifyExpr()(mod)


def check(params: str, before: str, after: str, *arrays, **config):
    with _context(**config):
        return check_main(SimplifyExpr(), params, before, after, *arrays)


X = "%x: Tensor[(2, 3), float32]"
I = "%i: Tensor[(2, 3), int32]"
ONES23 = np.ones((2, 3), "float32")


@pytest.mark.parametrize("before", [
    "multiply(%x, 1f)",
    "multiply(1f, %x)",
    "multiply(%x, ones(shape=[3]))",  # broadcasts, but the type stays (2, 3)
    "multiply(%x, meta[relay.Constant][0])",
    "add(%x, -0f)",  # a float x + 0.0 is not x for x = -0.0; x + -0.0 is
    "add(-0f, %x)",
    "add(%x, full(-0f, shape=[2, 1]))",
    "subtract(%x, zeros(shape=[2, 3]))",
    "subtract(%x, 0f)",
    "divide(%x, 1f)",
    "negative(negative(%x))",
    "reshape(%x, newshape=[2, 3])",
    "reshape(%x, newshape=[0, -1])",
    "expand_dims(%x, axis=1, num_newaxis=0)",
    "squeeze(%x)",  # no unit axis to remove
    "broadcast_to(%x, shape=[2, 3])",
    "tile(%x, reps=[1, 1])",
    "transpose(%x, axes=[0, 1])",
    "transpose(transpose(%x))",
    "transpose(transpose(%x, axes=[1, 0]), axes=[1, 0])",
    'cast(%x, dtype="float32")',
    'cast(cast(%x, dtype="float64"), dtype="float32")',
    "reshape(reshape(%x, newshape=[3, 2]), newshape=[2, 3])",
    "concatenate((%x,), axis=1)",
    "where(True, %x, meta[relay.Constant][0])",
    "where(ones(shape=[2, 3], dtype=\"bool\"), %x, meta[relay.Constant][0])",
    "where(False, meta[relay.Constant][0], %x)",
    # several rules to a fixed point
    "negative(negative(multiply(reshape(reshape(%x, newshape=[6]), newshape=[2, 3]), 1f)))",
])
def test_identity_rules_give_x(before):
    check(X, before, "%x", ONES23)


@pytest.mark.parametrize("before", [
    "multiply(%i, 1)", "add(0, %i)", "subtract(%i, 0)", "divide(%i, 1)",
    "negative(negative(%i))", 'cast(cast(%i, dtype="int64"), dtype="int32")',
])
def test_integer_identities(before):
    check(I, before, "%i")


@pytest.mark.parametrize("before", [
    # broadcasting changes the type: x (1, 3) becomes (2, 3)
    "multiply(%m, meta[relay.Constant][0])",
    "multiply(%m, ones(shape=[2, 3]))",
    "add(%m, zeros(shape=[2, 1]))",
    # not identities
    "multiply(%m, 2f)",
    "add(%m, 1f)",
    "subtract(0f, %m)",
    "divide(1f, %m)",
    "negative(%m)",
    "transpose(%m)",
    "reshape(%m, newshape=[3])",
    'cast(%m, dtype="float16")',
    # -0.0 + 0.0 is +0.0 (fuzz seed 36017), -0.0 - -0.0 is +0.0
    "add(%m, 0f)",
    "add(zeros_like(%m), %m)",
    "add(%m, full(0f, shape=[1, 1]))",
    "subtract(%m, -0f)",
    # float x - x and x * 0 are nan for inf/nan x: kept without fast-math
    "subtract(%m, %m)",
    "multiply(%m, 0f)",
    "multiply(zeros(shape=[1, 3]), %m)",
])
def test_declines(before):
    text = parse_main("%m: Tensor[(1, 3), float32]", before, ONES23)
    assert_structural_equal(simplify(text), text)


def test_square_transpose_is_not_a_noop():
    text = parse_main("%s: Tensor[(3, 3), float32]", "transpose(%s)")
    assert_structural_equal(simplify(text), text)


def test_mixed_where_condition_stays():
    cond = np.array([[True, False, True]] * 2)
    text = parse_main(X, "where(meta[relay.Constant][0], %x, 0f)", cond)
    assert_structural_equal(simplify(text), text)


def test_where_broadcasts_the_chosen_branch():
    check("%x: Tensor[(3), float32], %y: Tensor[(2, 3), float32]",
          "where(True, %x, %y)", "broadcast_to(%x, shape=[2, 3])")
    check("%x: Tensor[(3), float32], %y: Tensor[(2, 3), float32]",
          "where(meta[relay.Constant][0], %y, %x)", "broadcast_to(%x, shape=[2, 3])",
          np.zeros((2, 3), bool))


def test_zeros_for_integers_and_fast_math():
    check(I, "subtract(%i, %i)", 'zeros(shape=[2, 3], dtype="int32")')
    check(I, "multiply(%i, 0)", 'zeros(shape=[2, 3], dtype="int32")')
    check("%i: Tensor[(3), int32]", "multiply(zeros(shape=[2, 3], dtype=\"int32\"), %i)",
          'zeros(shape=[2, 3], dtype="int32")')
    check(X, "subtract(%x, %x)", "zeros(shape=[2, 3])", fast_math=True)
    check(X, "multiply(%x, 0f)", "zeros(shape=[2, 3])", fast_math=True)
    # x - y with distinct operands is not x - x
    text = parse_main(f"{I}, %j: Tensor[(2, 3), int32]", "subtract(%i, %j)")
    assert_structural_equal(simplify(text), text)


def test_dynamic_shapes():
    # zeros of an unknown shape come from zeros_like
    check("%i: Tensor[(?, 3), int32]", "subtract(%i, %i)", "zeros_like(%i)")
    # a reshape between two unknown shapes may move data: only known ones are no-ops
    text = parse_main("%d: Tensor[(?, ?), float32]", "reshape(%d, newshape=[-1, 0])")
    assert_structural_equal(simplify(text), text)
    check("%d: Tensor[(?, 3), float32]", "expand_dims(%d, axis=0, num_newaxis=0)", "%d")


def test_consecutive_reshapes():
    check(X, "reshape(reshape(%x, newshape=[3, 2]), newshape=[-1])", "reshape(%x, newshape=[6])")
    check(X, "reshape(expand_dims(%x, axis=0), newshape=[3, -1])",
          "reshape(%x, newshape=[3, 2])")
    check(X, "reshape(nn.batch_flatten(expand_dims(%x, axis=2)), newshape=[6, 1])",
          "reshape(%x, newshape=[6, 1])")
    # special codes refer to the inner shape: with an unknown shape they cannot move
    text = parse_main("%d: Tensor[(?, 6), float32]", "reshape(reshape(%d, newshape=[0, 2, 3]), "
                      "newshape=[0, -1])")
    assert_structural_equal(simplify(text), text)
    check("%d: Tensor[(?, 6), float32]",
          "reshape(reshape(%d, newshape=[0, 2, 3]), newshape=[3, 4])",
          "reshape(%d, newshape=[3, 4])")


def test_transposes_compose():
    check("%t: Tensor[(2, 3, 4), float32]",
          "transpose(transpose(%t, axes=[1, 2, 0]), axes=[0, 2, 1])",
          "transpose(%t, axes=[1, 0, 2])")
    check("%t: Tensor[(2, 3, 4), float32]",
          "transpose(transpose(%t, axes=[1, 2, 0]), axes=[2, 0, 1])", "%t")


def test_casts():
    check("%b: Tensor[(3), int8]", 'cast(cast(%b, dtype="int32"), dtype="float32")',
          'cast(%b, dtype="float32")')
    check("%b: Tensor[(3), bool]", 'cast(cast(%b, dtype="int8"), dtype="bool")', "%b")
    # lossy first casts stay: float32 -> int32 truncates, int32 -> float32 rounds
    for params, body in [("%f: Tensor[(3), float32]",
                          'cast(cast(%f, dtype="int32"), dtype="float32")'),
                         ("%n: Tensor[(3), int32]",
                          'cast(cast(%n, dtype="float32"), dtype="int32")'),
                         ("%n: Tensor[(3), int32]",
                          'cast(cast(%n, dtype="int8"), dtype="int32")'),
                         # numpy calls int64 -> float64 "safe"; 2**53 + 1 says otherwise
                         ("%n: Tensor[(3), int64]",
                          'cast(cast(%n, dtype="float64"), dtype="int64")')]:
        text = parse_main(params, body)
        assert_structural_equal(simplify(text), text)


@pytest.mark.parametrize("src,dst,exact", [
    ("int8", "float16", True), ("int16", "float16", False), ("int16", "float32", True),
    ("int32", "float32", False), ("int32", "float64", True), ("int64", "float64", False),
    ("uint8", "int16", True), ("int8", "uint8", False), ("uint32", "int64", True),
    ("float16", "float64", True), ("float64", "float32", False), ("bool", "uint8", True),
    ("uint8", "bool", False), ("float32", "int64", False),
])
def test_lossless_casts(src, dst, exact):
    assert lossless(src, dst) is exact
    if exact:  # the extreme values survive the round trip
        if src == "bool":
            values = np.array([False, True])
        elif src.startswith("float"):
            info = np.finfo(src)
            values = np.array([info.min, info.max, info.tiny, info.eps], src)
        else:
            info = np.iinfo(src)
            values = np.array([info.min, info.max, info.max - 1], src)
        np.testing.assert_array_equal(values.astype(dst).astype(src), values)


def test_reshape_to_a_shape_with_zeros():
    # a literal 0 copies a dimension; the combined reshape says allowzero
    check("%e: Tensor[(0, 3), float32]",
          "reshape(reshape(%e, newshape=[3, 0], allowzero=True), newshape=[1, 0, 3], "
          "allowzero=True)",
          "reshape(%e, newshape=[1, 0, 3], allowzero=True)")


def test_debug_flag_prints_rules(capsys):
    simplify(parse_main(X, "negative(negative(multiply(%x, 1f)))"), debug=True)
    out = capsys.readouterr().out
    assert "SimplifyExpr: rules fired: mul-one x1, neg-neg x1" in out
    simplify(parse_main(X, "negative(negative(multiply(%x, 1f)))"))
    assert capsys.readouterr().out == ""


def test_a_rule_that_changes_the_type_is_an_error():
    x = wildcard("x")
    bad = Rule("bad", is_op("negative")(x), lambda m: relay.reshape(m["x"], (-1,)))
    e = relay.transform.infer_type(relay.negative(relay.var("x", shape=(2, 3))))
    with pytest.raises(Error, match="rule bad changed the type"):
        rewrite(e, [bad])


def test_inside_closures_and_lets():
    check(X, "let %y = multiply(%x, 1f); let %f = fn (%z: Tensor[(2, 3), float32]) "
          "{ negative(negative(%z)) }; %f(%y)",
          "let %y = %x; let %f = fn (%z: Tensor[(2, 3), float32]) { %z }; %f(%y)")


# ---------------------------------------------------------------- random programs


def _inject_identities(mod, seed):
    """Wrap tensor nodes of ``@main`` in identities that SimplifyExpr must remove."""
    rng = np.random.default_rng(seed)

    def wrap(e, ty):
        if not isinstance(ty, TensorType) or ty.dtype != "float32":
            return e
        shape, k = ty.shape, rng.integers(9)
        if k == 0:
            return relay.multiply(e, relay.ones(shape))
        if k == 1:
            return relay.add(relay.full_like(e, relay.const(-0.0, "float32")), e)  # -0.0
        if k == 2:
            return relay.negative(relay.negative(e))
        if k == 3:
            return relay.reshape(relay.reshape(e, (-1,)), shape)
        if k == 4 and len(shape) == 2:
            return relay.transpose(relay.transpose(e))
        if k == 5:
            return relay.cast(relay.cast(e, "float64"), "float32")
        if k == 6:
            return relay.where(relay.const(True), e, relay.zeros(shape))
        if k == 7:
            return relay.divide(e, relay.const(1.0))
        return relay.expand_dims(e, axis=0, num_newaxis=0)

    return wrap_calls(mod, wrap)


@pytest.mark.parametrize("seed", range(50))
def test_random_programs_with_injected_identities(seed):
    mod, inputs = random_program(seed)
    injected = _inject_identities(mod, seed)
    out = SimplifyExpr()(injected)
    # every rule is exact
    assert_same_results(evaluate(out, inputs), evaluate(injected, inputs), exact=True)
    # every injected identity is gone: the result is the original, simplified
    assert_structural_equal(out, SimplifyExpr()(mod))


def test_chain_of_100000_ops():
    x = relay.var("x", shape=(2,))
    one, two = relay.const(1.0), relay.const(2.0)
    e = x
    for i in range(100_000):  # -(-(x) * 1) + 2, 25,000 times
        k = i % 4
        e = (relay.negative(e) if k in (0, 2) else relay.multiply(e, one) if k == 1
             else relay.add(e, two))
    out = SimplifyExpr()(relay.IRModule.from_expr(relay.Function([x], e)))
    calls = [n for n in post_order(out["main"]) if isinstance(n, Call)]
    assert len(calls) == 25_000 and all(c.op.name == "add" for c in calls)


def test_adding_plus_zero_keeps_the_sign_of_a_negative_zero():
    text = parse_main("%m: Tensor[(4), float32]", "add(%m, 0f)")
    data = np.array([-0.0, 0.0, -1.0, np.nan], "float32")
    got = evaluate(simplify(text), [data])
    assert not np.signbit(got[0]) and np.isnan(got[3])  # -0.0 + 0.0 is +0.0, as numpy
