"""EliminateCommonSubexpr: text → expected text (sharing checked), scopes, semantics, scale."""

from __future__ import annotations

import functools
import time

import pytest

import relayir as relay
from relayir.ir.expr import Call, Op
from relayir.ir.functor import post_order
from relayir.ir.types import TensorType
from relayir.testing import pass_check
from relayir.testing.pass_check import (
    CHAIN_TYPE,
    assert_same_results,
    check_pass,
    parse,
    results,
    typed_chain,
    wrap_calls,
)
from relayir.testing.random_programs import random_program
from relayir.transform.eliminate_common_subexpr import (
    EliminateCommonSubexpr,
    eliminate_common_subexpr,
)
from relayir.transform.to_a_normal_form import ToANormalForm
from relayir.typing.infer import infer_module

# CSE is an opt-level-3 pass: it is checked under that level
run_pass = functools.partial(pass_check.run_pass, opt_level=3)


def check(before, after, fskip=None, mod=None):
    """Structural equality does not see sharing; the printed text does."""
    return check_pass(EliminateCommonSubexpr(fskip), before, after, mod, opt_level=3,
                      same_text=True)


def nodes(mod):
    return len(post_order(mod["main"]))


# ---------------------------------------------------------------- text → text


def test_same_op_same_args_same_attrs_merge():
    check("""
def @main(%x: Tensor[(2, 3), float32]) {
  %0 = add(%x, 1f);
  %1 = add(%x, 1f);
  %2 = sum(%x, axis=[1]);
  %3 = sum(%x, axis=[0]);
  %4 = sum(%x, axis=[1]);
  %5 = negative(%0);
  %6 = negative(%1);
  (%5, %6, %2, %3, %4)
}""", """
def @main(%x: Tensor[(2, 3), float32]) {
  %0 = add(%x, 1f);
  %1 = negative(%0);
  %2 = sum(%x, axis=[1]);
  %3 = sum(%x, axis=[0]);
  (%1, %1, %2, %3, %2)
}""")


def test_tuples_projections_and_constants():
    check("""
def @main(%x: Tensor[(2), float32]) {
  %0 = (%x, negative(%x));
  %1 = (%x, negative(%x));
  %2 = multiply(%0.1, 2f);
  %3 = multiply(%1.1, 2f);
  %4 = add(%x, 0f);
  %5 = add(%x, -0f);
  (%2, %3, %0.0, %4, %5)
}""", """
def @main(%x: Tensor[(2), float32]) {
  %0 = negative(%x);
  %1 = (%x, %0);
  %2 = %1.1;
  %3 = multiply(%2, 2f);
  %4 = %1.0;
  %5 = add(%x, 0f);
  %6 = add(%x, -0f);
  (%3, %3, %4, %5, %6)
}""")


def test_sibling_branches_do_not_merge_but_an_enclosing_node_is_reused():
    check("""
def @main(%x: Tensor[(2), float32], %c: bool) {
  %0 = tanh(%x);
  %1 = if (%c) { multiply(tanh(%x), 2f) } else { multiply(%x, 3f) };
  %2 = if (%c) { multiply(%x, 3f) } else { negative(%x) };
  (%0, %1, %2)
}""", """
def @main(%x: Tensor[(2), float32], %c: bool) {
  %0 = tanh(%x);
  %1 = if (%c) { multiply(%0, 2f) } else { multiply(%x, 3f) };
  %2 = if (%c) { multiply(%x, 3f) } else { negative(%x) };
  (%0, %1, %2)
}""")


def test_functions_and_match_clauses_are_scopes(list_mod):
    mod, *_ = list_mod
    check("""
def @main(%xs: List[Tensor[(2), float32]], %x: Tensor[(2), float32]) {
  %0 = negative(%x);
  %1 = fn (%y: Tensor[(2), float32]) { add(negative(%x), add(%y, %y)) };
  %2 = fn (%z: Tensor[(2), float32]) { add(%z, %z) };
  %3 = match (%xs) {
    Cons(%h, _) => add(tanh(%h), tanh(%h)),
    Nil => tanh(%x),
  };
  (%0, %1(%x), %2(%x), %3, tanh(%x))
}""", """
def @main(%xs: List[Tensor[(2), float32]], %x: Tensor[(2), float32]) {
  %0 = negative(%x);
  %1 = fn (%y: Tensor[(2), float32]) { add(%0, add(%y, %y)) };
  %2 = fn (%z: Tensor[(2), float32]) { add(%z, %z) };
  %3 = match (%xs) {
    Cons(%h, _) => { %4 = tanh(%h); add(%4, %4) },
    Nil => tanh(%x),
  };
  (%0, %1(%x), %2(%x), %3, tanh(%x))
}""", mod=mod)


def test_let_bound_values_merge_to_the_first_node():
    out = run_pass(EliminateCommonSubexpr(), parse("""
def @main(%x: Tensor[(2), float32]) {
  let %a = add(%x, %x);
  let %b = add(%x, %x);
  multiply(%a, %b)
}"""))
    body = out["main"].body
    assert body.value is body.body.value  # both lets bind the same node


def test_fskip_and_calls_of_closures_are_kept_apart():
    out = check("""
def @main(%x: Tensor[(2), float32], %f: fn (Tensor[(2), float32]) -> Tensor[(2), float32]) {
  (%f(%x), %f(%x), negative(%x), negative(%x), tanh(%x), tanh(%x))
}""", """
def @main(%x: Tensor[(2), float32], %f: fn (Tensor[(2), float32]) -> Tensor[(2), float32]) {
  %0 = tanh(%x);
  (%f(%x), %f(%x), negative(%x), negative(%x), %0, %0)
}""", fskip=lambda e: isinstance(e, Call) and getattr(e.op, "name", "") == "negative")
    assert out


def test_primitive_functions_are_left_alone():
    src = """
def @main(%x: Tensor[(2), float32]) {
  %0 = fn (%p: Tensor[(2), float32], Primitive=1) { add(negative(%p), negative(%p)) };
  %0(%x)
}"""
    check(src, src)


def test_expression_entry_point_and_opt_level():
    x = relay.var("x", shape=(2,))
    e = relay.Tuple([relay.negative(x), relay.negative(x)])
    out = eliminate_common_subexpr(e)
    assert out.fields[0] is out.fields[1]
    assert EliminateCommonSubexpr().info.opt_level == 3


# ---------------------------------------------------------------- semantics


def duplicated(mod):
    """The same program with every float op call built twice (so CSE has work to do)."""

    def twice(call, ty):
        if isinstance(call.op, Op) and isinstance(ty, TensorType) and ty.dtype == "float32":
            twin = Call(call.op, call.args, call.attrs, call.type_args)
            return Call(relay.get_op("maximum"), (call, twin))
        return call

    return wrap_calls(mod, twice)


@pytest.mark.parametrize("seed", range(50))
def test_random_programs_keep_their_meaning(seed):
    mod, inputs = random_program(seed)
    infer_module(mod)
    mod = duplicated(mod)
    out = run_pass(EliminateCommonSubexpr(), mod)
    assert nodes(out) < nodes(mod)
    assert_same_results(results(mod, inputs), results(out, inputs))
    anf = run_pass(EliminateCommonSubexpr(), ToANormalForm()(mod))  # works on lets too
    assert_same_results(results(mod, inputs), results(anf, inputs))


# ---------------------------------------------------------------- scale


def twice_negated(e, i):
    """``add(neg(e), neg(e))`` with two distinct ``neg`` nodes, or ``tanh(e)``, in turn."""
    if i % 2 == 0:
        return relay.tanh(e)
    a, b = relay.negative(e), relay.negative(e)
    a.set_checked_type(CHAIN_TYPE)
    b.set_checked_type(CHAIN_TYPE)
    return relay.add(a, b)


@pytest.mark.parametrize("kind", ["ops", "lets"])
def test_long_chains(kind):
    # each op computed twice in the chain; the lets bind ``tanh``s, nothing to merge
    mod = typed_chain(kind, step=twice_negated if kind == "ops" else lambda e, i: relay.tanh(e))
    start = time.process_time()
    out = EliminateCommonSubexpr()(mod)
    elapsed = time.process_time() - start
    body = out["main"].body
    if kind == "ops":
        assert body.args[0] is body.args[1]
    else:
        assert body is mod["main"].body
    assert elapsed < 15, elapsed
