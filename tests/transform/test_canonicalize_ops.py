"""CanonicalizeOps: ``nn.bias_add`` → broadcasting ``add``, text → expected text."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import relayir as relay
from relayir.ir.expr import Call, Op
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
from relayir.transform import PassContext, Sequential
from relayir.transform.canonicalize_ops import CanonicalizeOps

check = functools.partial(check_main, CanonicalizeOps())


@pytest.mark.parametrize("shape,axis,after", [
    ("(2, 3, 4, 5)", 1, "expand_dims(%b, axis=1, num_newaxis=2)"),
    ("(2, 3, 4, 5)", -3, "expand_dims(%b, axis=1, num_newaxis=2)"),
    ("(2, 3, 4, 5)", 0, "expand_dims(%b, axis=1, num_newaxis=3)"),
    ("(2, 3, 4, 5)", 2, "expand_dims(%b, axis=1)"),
    ("(2, 3, 4, 5)", -1, "%b"),
    ("(3)", 0, "%b"),
])
def test_bias_add(shape, axis, after):
    dims = [int(d) for d in shape.strip("()").split(",")]
    c = dims[axis]
    params = f"%x: Tensor[{shape}, float32], %b: Tensor[({c}), float32]"
    check(params, f"nn.bias_add(%x, %b, axis={axis})", f"add(%x, {after})")


def test_dynamic_and_other_dtypes():
    check("%x: Tensor[(?, 4), int32], %b: Tensor[(4), int32]", "nn.bias_add(%x, %b, axis=1)",
          "add(%x, %b)")
    check("%x: Tensor[(?, 4, ?), float16], %b: Tensor[(4), float16]", "nn.bias_add(%x, %b)",
          "%0 = expand_dims(%b, axis=1); add(%x, %0)")


def test_declines_when_add_would_change_the_type():
    # a bias of unknown length on an unknown channel axis: add would give (2, ?) again,
    # but a static bias would make the type more precise than bias_add's
    text = parse_main("%x: Tensor[(2, ?), float32], %b: Tensor[(5), float32]",
                      "nn.bias_add(%x, %b)")
    assert_structural_equal(CanonicalizeOps()(text), text)


def test_only_at_opt_level_3():
    text = parse_main("%x: Tensor[(2, 3), float32], %b: Tensor[(3), float32]",
                      "nn.bias_add(%x, %b)")
    seq = Sequential([CanonicalizeOps()])
    assert CanonicalizeOps().info.opt_level == 3
    assert_structural_equal(seq(text), text)  # default opt level 2: not run
    with PassContext(opt_level=3):
        assert_structural_equal(seq(text), parse_main("%x: Tensor[(2, 3), float32], "
                                                      "%b: Tensor[(3), float32]", "add(%x, %b)"))


def _inject_bias_adds(mod, seed):
    rng = np.random.default_rng(seed)

    def wrap(e, ty):
        if not isinstance(ty, TensorType) or not ty.shape:
            return e
        axis = int(rng.integers(-len(ty.shape), len(ty.shape)))
        b = rng.standard_normal(ty.shape[axis]).astype("float32")
        return relay.nn.bias_add(e, relay.const(b), axis=axis)

    return wrap_calls(mod, wrap)


@pytest.mark.parametrize("seed", range(50))
def test_random_programs_keep_their_meaning(seed):
    mod, inputs = random_program(seed)
    injected = _inject_bias_adds(mod, seed)
    out = CanonicalizeOps()(injected)
    # the same additions, in the same order
    assert_same_results(evaluate(out, inputs), evaluate(injected, inputs), exact=True)
    assert not any(isinstance(n, Call) and isinstance(n.op, Op) and n.op.name == "nn.bias_add"
                   for n in post_order(out["main"]))


def test_chain_of_100000_ops():
    x = relay.var("x", shape=(2, 3))
    b = relay.var("b", shape=(3,))
    e = x
    for _ in range(100_000):
        e = relay.nn.bias_add(e, b)
    out = CanonicalizeOps()(relay.IRModule.from_expr(relay.Function([x, b], e)))
    calls = [n for n in post_order(out["main"]) if isinstance(n, Call)]
    assert len(calls) == 100_000 and all(c.op.name == "add" for c in calls)
