"""ToANormalForm and ToGraphNormalForm: text → expected text, scoping, round trips, scale."""

from __future__ import annotations

import time

import numpy as np
import pytest

import relayir as relay
from relayir.ir.adt import Match
from relayir.ir.analysis import check_well_formed
from relayir.ir.expr import (
    Call,
    Constant,
    Function,
    GlobalVar,
    If,
    Let,
    Op,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)
from relayir.ir.functor import dataflow_inputs, post_order
from relayir.ir.structural import assert_structural_equal
from relayir.ir.types import TensorType
from relayir.testing.pass_check import (
    CHAIN_TYPE,
    assert_same_results,
    check_pass,
    parse,
    plain_text,
    results,
    run_pass,
    typed_chain,
)
from relayir.testing.random_programs import random_program
from relayir.transform.to_a_normal_form import ToANormalForm, to_a_normal_form_expr
from relayir.transform.to_graph_normal_form import ToGraphNormalForm, to_graph_normal_form_expr

ATOMS = (Var, GlobalVar, Op, Constant, relay.Constructor)


def assert_anf(expr):
    """Every compound node has atomic operands; every scope is a let chain to an atom."""
    def scope_ok(e):
        while type(e) is Let:
            assert type(e.value) is not Let
            e = e.body
        assert isinstance(e, ATOMS), relay.astext(e)

    for n in post_order(expr):
        t = type(n)
        if t is Function and not n.is_primitive:
            scope_ok(n.body)
        elif t is If:
            assert isinstance(n.cond, ATOMS)
            scope_ok(n.true_branch)
            scope_ok(n.false_branch)
        elif t is Match:
            assert isinstance(n.data, ATOMS)
            for c in n.clauses:
                scope_ok(c.rhs)
        elif t is Call:
            assert all(isinstance(a, ATOMS) for a in n.args)
            assert isinstance(n.op, (*ATOMS, Op))
        elif t in (Tuple, TupleGetItem, RefCreate, RefRead, RefWrite):
            assert all(isinstance(a, ATOMS) for a in dataflow_inputs(n))


# ---------------------------------------------------------------- ANF: text → text


def test_anf_binds_every_compound_node_once():
    check_pass(ToANormalForm(), """
def @main(%x: Tensor[(2), float32], %y: Tensor[(2), float32]) {
  %0 = add(%x, %y);
  multiply(%0, %0)
}""", """
def @main(%x: Tensor[(2), float32], %y: Tensor[(2), float32]) {
  let %a = add(%x, %y);
  let %b = multiply(%a, %a);
  %b
}""")


def test_anf_node_shared_by_both_branches_is_bound_before_the_if():
    check_pass(ToANormalForm(), """
def @main(%x: Tensor[(2), float32], %c: bool) {
  %0 = add(%x, %x);
  %1 = negative(%x);
  if (%c) { multiply(%0, %1) } else { subtract(%0, %x) }
}""", """
def @main(%x: Tensor[(2), float32], %c: bool) {
  let %s = add(%x, %x);
  let %r = if (%c) {
    let %n = negative(%x);
    let %m = multiply(%s, %n);
    %m
  } else {
    let %d = subtract(%s, %x);
    %d
  };
  %r
}""")


def test_anf_nested_ifs_bind_at_the_lowest_common_scope():
    check_pass(ToANormalForm(), """
def @main(%x: Tensor[(2), float32], %c: bool, %d: bool) {
  %0 = negative(%x);
  %1 = tanh(%x);
  if (%c) {
    if (%d) { add(%0, %1) } else { %0 }
  } else {
    %1
  }
}""", """
def @main(%x: Tensor[(2), float32], %c: bool, %d: bool) {
  let %t = tanh(%x);
  let %r = if (%c) {
    let %n = negative(%x);
    let %r2 = if (%d) {
      let %a = add(%n, %t);
      %a
    } else {
      %n
    };
    %r2
  } else {
    %t
  };
  %r
}""")


def test_anf_closure_keeps_its_own_nodes_and_captures_shared_ones():
    check_pass(ToANormalForm(), """
def @main(%x: Tensor[(2), float32]) {
  %0 = add(%x, %x);
  %1 = fn (%y: Tensor[(2), float32]) { multiply(%y, add(%0, negative(%x))) };
  (%1(%x), %0)
}""", """
def @main(%x: Tensor[(2), float32]) {
  let %s = add(%x, %x);
  let %f = fn (%y: Tensor[(2), float32]) {
    let %n = negative(%x);
    let %a = add(%s, %n);
    let %m = multiply(%y, %a);
    %m
  };
  let %c = %f(%x);
  let %t = (%c, %s);
  %t
}""")


def test_anf_match_clauses_are_scopes(list_mod):
    mod, *_ = list_mod
    check_pass(ToANormalForm(), """
def @main(%xs: List[Tensor[(2), float32]], %y: Tensor[(2), float32]) {
  %0 = negative(%y);
  %1 = tanh(%y);
  match (%xs) {
    Cons(%h, _) => add(add(%h, %0), %1),
    Nil => %0,
  }
}""", """
def @main(%xs: List[Tensor[(2), float32]], %y: Tensor[(2), float32]) {
  let %n = negative(%y);
  let %r = match (%xs) {
    Cons(%h, _) => {
      let %a = add(%h, %n);
      let %t = tanh(%y);
      let %b = add(%a, %t);
      %b
    },
    Nil => %n,
  };
  %r
}""", mod=mod)


def test_anf_flattens_nested_lets_and_keeps_let_names():
    check_pass(ToANormalForm(), """
def @main(%x: Tensor[(2), float32]) {
  let %a = (let %b = negative(%x); add(%b, %b));
  multiply(%a, (%x, %a).1)
}""", """
def @main(%x: Tensor[(2), float32]) {
  let %b = negative(%x);
  let %a = add(%b, %b);
  let %t = (%x, %a);
  let %p = %t.1;
  let %m = multiply(%a, %p);
  %m
}""")


def test_anf_recursive_function_and_primitive_function():
    check_pass(ToANormalForm(), """
def @main(%n: int32, %x: Tensor[(2), float32]) {
  let %f = fn (%m: int32) -> int32 {
    if (equal(%m, 0)) { 0 } else { %f(subtract(%m, 1)) }
  };
  %0 = fn (%p, Primitive=1) { negative(add(%p, %p)) };
  (%f(%n), %0(%x))
}""", """
def @main(%n: int32, %x: Tensor[(2), float32]) {
  let %f = fn (%m: int32) -> int32 {
    let %e = equal(%m, 0);
    let %r = if (%e) {
      0
    } else {
      let %s = subtract(%m, 1);
      let %c = %f(%s);
      %c
    };
    %r
  };
  let %a = %f(%n);
  let %g = fn (%p, Primitive=1) { negative(add(%p, %p)) };
  let %b = %g(%x);
  let %t = (%a, %b);
  %t
}""")


def test_anf_node_shared_with_a_recursive_functions_body_is_split():
    # %k calls %f; it is used inside %f and after the let: each side gets its own node
    f, m = relay.var("f"), relay.var("m", dtype="int32")
    k = Call(f, (relay.const(0),))
    body = relay.If(relay.equal(m, relay.const(0)), relay.const(7), relay.add(m, k))
    fn = relay.Function([m], body, TensorType((), "int32"))
    main = relay.Function([], relay.Let(f, fn, relay.Tuple([k, Call(f, (relay.const(1),))])))
    mod = relay.IRModule.from_expr(main)
    out = run_pass(ToANormalForm(), mod)
    assert_anf(out["main"])
    assert_same_results(results(mod, []), results(out, []))


def test_anf_refs_and_expression_entry_point():
    x = relay.var("x", shape=(2,))
    r = RefCreate(x)
    e = relay.Tuple([RefWrite(r, relay.negative(x)), RefRead(r)])
    out = to_a_normal_form_expr(e)
    expected = relay.parse_expr(
        "free_var %x: Tensor[(2), float32]; let %r = ref(%x); let %n = negative(%x);"
        " let %w = ref_write(%r, %n); let %v = ref_read(%r); let %t = (%w, %v); %t")
    assert_structural_equal(out, expected, map_free_vars=True)
    check_well_formed(out, allow_free=True)


def test_anf_is_idempotent_and_input_is_untouched():
    mod = parse("""
def @main(%x: Tensor[(2), float32], %c: bool) {
  %0 = add(%x, %x);
  if (%c) { negative(%0) } else { %0 }
}""")
    before = plain_text(mod)
    once = run_pass(ToANormalForm(), mod)
    assert plain_text(mod) == before
    assert plain_text(run_pass(ToANormalForm(), once)) == plain_text(once)


# ---------------------------------------------------------------- GNF: text → text


def test_gnf_turns_lets_into_sharing():
    out = check_pass(ToGraphNormalForm(), """
def @main(%x: Tensor[(2), float32], %y: Tensor[(2), float32]) {
  let %a = add(%x, %y);
  let %b = multiply(%a, %a);
  %b
}""", """
def @main(%x: Tensor[(2), float32], %y: Tensor[(2), float32]) {
  %0 = add(%x, %y);
  multiply(%0, %0)
}""")
    body = out["main"].body
    assert body.args[0] is body.args[1]


def test_gnf_keeps_recursive_functions_and_reference_effects():
    check_pass(ToGraphNormalForm(), """
def @main(%n: int32, %x: Tensor[(2), float32]) {
  let %f = fn (%m: int32) -> int32 {
    let %e = equal(%m, 0);
    if (%e) { 0 } else { let %s = subtract(%m, 1); %f(%s) }
  };
  let %g = fn (%z: int32) { add(%z, 1) };
  let %r = ref(%x);
  let %w = ref_write(%r, negative(%x));
  let %v = ref_read(%r);
  let %a = add(%v, %v);
  (%f(%n), %g(%n), %a)
}""", """
def @main(%n: int32, %x: Tensor[(2), float32]) {
  let %f = fn (%m: int32) -> int32 {
    if (equal(%m, 0)) { 0 } else { %f(subtract(%m, 1)) }
  };
  let %r = ref(%x);
  let %w = ref_write(%r, negative(%x));
  let %v = ref_read(%r);
  %0 = add(%v, %v);
  (%f(%n), fn (%z: int32) { add(%z, 1) }(%n), %0)
}""")


def test_gnf_inlines_into_branches_and_closures():
    out = check_pass(ToGraphNormalForm(), """
def @main(%x: Tensor[(2), float32], %c: bool) {
  let %a = negative(%x);
  let %f = fn (%y: Tensor[(2), float32]) { let %z = add(%y, %a); %z };
  if (%c) { %f(%a) } else { %a }
}""", """
def @main(%x: Tensor[(2), float32], %c: bool) {
  %0 = negative(%x);
  %1 = fn (%y: Tensor[(2), float32]) { add(%y, %0) };
  if (%c) { %1(%0) } else { %0 }
}""")
    assert "let" not in plain_text(out)


def test_gnf_expression_entry_point():
    x = relay.var("x", shape=(2,))
    a = relay.var("a")
    e = relay.Let(a, relay.negative(x), relay.add(a, a))
    out = to_graph_normal_form_expr(e)
    assert isinstance(out, Call) and out.args[0] is out.args[1]


# ---------------------------------------------------------------- semantics and round trips


@pytest.mark.parametrize("seed", range(50))
def test_random_programs_keep_their_meaning(seed):
    mod, inputs = random_program(seed)
    ref = results(mod, inputs)
    anf = run_pass(ToANormalForm(), mod)
    for fn in anf.functions.values():
        assert_anf(fn)
    assert_same_results(ref, results(anf, inputs))
    gnf = run_pass(ToGraphNormalForm(), mod)
    assert " let " not in plain_text(gnf)
    assert_same_results(ref, results(gnf, inputs))
    back = run_pass(ToGraphNormalForm(), anf)  # ANF then GNF: the same graph again
    assert_structural_equal(back, gnf)
    assert plain_text(back) == plain_text(gnf)


@pytest.mark.parametrize("seed", range(0, 50, 5))
def test_graph_programs_survive_anf_then_gnf_exactly(seed):
    mod, inputs = random_program(seed)
    graph = run_pass(ToGraphNormalForm(), mod)  # no lets left: a pure dataflow graph
    back = run_pass(ToGraphNormalForm(), run_pass(ToANormalForm(), graph))
    assert plain_text(back) == plain_text(graph)


def test_prelude_programs_with_closures(prelude_main):
    mod, inputs = prelude_main
    ref = results(mod, inputs)
    anf = run_pass(ToANormalForm(), mod)
    for fn in anf.functions.values():
        if not fn.is_primitive:
            assert_anf(fn)
    assert_same_results(ref, results(anf, inputs))
    back = run_pass(ToGraphNormalForm(), anf)
    assert_same_results(ref, results(back, inputs))


@pytest.fixture
def prelude_main():
    mod = relay.IRModule()
    relay.Prelude(mod)
    mod = parse("""
def @main(%x: Tensor[(2), float32], %n: int32) {
  %0 = multiply(%x, 2f);
  %1 = Cons(%x, Cons(%0, Nil));
  %2 = @map(fn (%e) { add(%e, %0) }, %1);
  let %fact = fn (%k: int32) -> int32 {
    if (equal(%k, 0)) { 1 } else { multiply(%k, %fact(subtract(%k, 1))) }
  };
  %3 = @foldl(fn (%acc, %e) { add(%acc, multiply(%e, %0)) }, %x, %2);
  %4 = @compose(fn (%a) { negative(%a) }, fn (%b) { add(%b, %0) });
  (%3, %fact(%n), %4(%x), @length(%2))
}""", mod=mod)
    return mod, [np.array([1.0, 2.0], "float32"), np.int32(5)]


# ---------------------------------------------------------------- scale


N = 100_000


def typed_chain_with_constant(kind: str, n: int = N) -> relay.IRModule:
    """``typed_chain`` of ``negative`` and ``add`` of a constant (an atom ANF leaves alone)."""
    one = relay.const(np.ones(2, "float32"))
    one.set_checked_type(CHAIN_TYPE)
    return typed_chain(kind, n, step=lambda e, i: relay.add(e, one) if i % 2 else relay.negative(e))


@pytest.mark.parametrize("kind", ["ops", "lets"])
def test_long_chains(kind):
    mod = typed_chain_with_constant(kind)
    start = time.process_time()
    anf = ToANormalForm()(mod)
    t_anf = time.process_time() - start
    start = time.process_time()
    gnf = ToGraphNormalForm()(anf)
    t_gnf = time.process_time() - start
    body = anf["main"].body
    assert type(body) is Let and type(body.value) is Call
    assert type(gnf["main"].body) is Call and gnf["main"].body.has_type
    assert t_anf < 15 and t_gnf < 15, (t_anf, t_gnf)


def test_small_chain_is_right():
    mod = typed_chain_with_constant("ops", 4)
    anf = ToANormalForm()(mod)
    assert_anf(anf["main"])
    x = np.array([1.0, -2.0], "float32")
    assert_same_results(results(mod, [x]), results(anf, [x]))
    assert_structural_equal(ToGraphNormalForm()(anf), mod)
