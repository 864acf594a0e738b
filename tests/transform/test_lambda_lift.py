"""LambdaLift: closure conversion, text → expected text, prelude programs, scale."""

from __future__ import annotations

import functools
import time

import numpy as np
import pytest

import relayir as relay
from relayir.ir.expr import Function, Let
from relayir.ir.functor import post_order
from relayir.ir.structural import assert_structural_equal
from relayir.ir.types import FuncType
from relayir.testing.pass_check import (
    assert_same_results,
    check_pass,
    parse,
    results,
    run_pass,
    typed_chain,
)
from relayir.testing.random_programs import random_program
from relayir.transform.lambda_lift import LambdaLift
from relayir.transform.remove_unused_functions import RemoveUnusedFunctions
from relayir.transform.to_a_normal_form import ToANormalForm

lift = functools.partial(run_pass, LambdaLift())
check = functools.partial(check_pass, LambdaLift())


def local_functions(mod):
    """Function literals left inside globals, other than lifted closures and primitives."""
    out = []
    for fn in mod.functions.values():
        body = fn.body.body if type(fn.body) is Function and fn.body.attrs.get("Closure") \
            else fn.body
        out += [n for n in post_order(body) if type(n) is Function and not n.is_primitive]
    return out


# ---------------------------------------------------------------- text → text


def test_function_without_free_variables_becomes_a_global():
    check("""
def @main(%x: Tensor[(2), float32]) {
  let %f = fn (%y: Tensor[(2), float32]) { negative(%y) };
  %f(%x)
}""", """
def @lifted_name_0(%y: Tensor[(2), float32]) { negative(%y) }
def @main(%x: Tensor[(2), float32]) {
  let %f = @lifted_name_0;
  %f(%x)
}""")


def test_closure_takes_its_captured_variables_first():
    check("""
def @main(%x: Tensor[(2), float32], %z: Tensor[(2), float32]) {
  %0 = fn (%y) { add(%y, multiply(%x, %z)) };
  %0(%x)
}""", """
def @lifted_name_0(%x: Tensor[(2), float32], %z: Tensor[(2), float32]) {
  fn (%y, Closure=1) { add(%y, multiply(%x, %z)) }
}
def @main(%x: Tensor[(2), float32], %z: Tensor[(2), float32]) {
  %0 = @lifted_name_0(%x, %z);
  %0(%x)
}""")


def test_recursive_let_bound_closure_calls_itself_through_the_global():
    check("""
def @main(%n: int32, %s: int32) {
  let %f = fn (%m: int32) -> int32 {
    if (equal(%m, 0)) { %s } else { add(%s, %f(subtract(%m, 1))) }
  };
  %f(%n)
}""", """
def @lifted_name_0(%s: int32) {
  fn (%m: int32, Closure=1) -> int32 {
    if (equal(%m, 0)) { %s } else { add(%s, @lifted_name_0(%s)(subtract(%m, 1))) }
  }
}
def @main(%n: int32, %s: int32) {
  let %f = @lifted_name_0(%s);
  %f(%n)
}""")


def test_recursive_function_without_captures():
    check("""
def @main(%n: int32) {
  let %f = fn (%m: int32) -> int32 {
    if (equal(%m, 0)) { 1 } else { multiply(%m, %f(subtract(%m, 1))) }
  };
  %f(%n)
}""", """
def @lifted_name_0(%m: int32) -> int32 {
  if (equal(%m, 0)) { 1 } else { multiply(%m, @lifted_name_0(subtract(%m, 1))) }
}
def @main(%n: int32) {
  let %f = @lifted_name_0;
  %f(%n)
}""")


def test_nested_closures_capture_through_each_level():
    check("""
def @main(%x: Tensor[(2), float32]) {
  let %outer = fn (%a: Tensor[(2), float32]) {
    let %inner = fn (%b: Tensor[(2), float32]) { add(%a, add(%b, %x)) };
    %inner(%a)
  };
  %outer(%x)
}""", """
def @lifted_name_0(%x: Tensor[(2), float32]) {
  fn (%a: Tensor[(2), float32], Closure=1) {
    let %inner = @lifted_name_1(%a, %x);
    %inner(%a)
  }
}
def @lifted_name_1(%a: Tensor[(2), float32], %x: Tensor[(2), float32]) {
  fn (%b: Tensor[(2), float32], Closure=1) { add(%a, add(%b, %x)) }
}
def @main(%x: Tensor[(2), float32]) {
  let %outer = @lifted_name_0(%x);
  %outer(%x)
}""")


def test_primitive_functions_stay_and_lifting_is_idempotent():
    out = check("""
def @main(%x: Tensor[(2), float32]) {
  %0 = fn (%p: Tensor[(2), float32], Primitive=1) { negative(%p) };
  %1 = fn (%q: Tensor[(2), float32]) { add(%q, %x) };
  %1(%0(%x))
}""", """
def @lifted_name_0(%x: Tensor[(2), float32]) {
  fn (%q: Tensor[(2), float32], Closure=1) { add(%q, %x) }
}
def @main(%x: Tensor[(2), float32]) {
  %0 = fn (%p: Tensor[(2), float32], Primitive=1) { negative(%p) };
  @lifted_name_0(%x)(%0(%x))
}""")
    assert_structural_equal(lift(out), out)


def test_polymorphic_closure_gets_the_type_parameters(prelude):
    mod = lift(prelude)
    lifted = mod["lifted_name_0"]  # the closure inside @compose
    assert [tv.name_hint for tv in lifted.type_params] == ["A", "B", "C"]
    assert lifted.body.attrs["Closure"] == 1
    assert isinstance(mod["compose"].body, relay.Call)
    assert not local_functions(mod)


# ---------------------------------------------------------------- semantics


@pytest.fixture
def prelude():
    mod = relay.IRModule()
    relay.Prelude(mod)
    return mod


@pytest.fixture
def prelude_main(prelude):
    mod = parse("""
def @main(%x: Tensor[(2), float32], %n: int32) {
  let %c = multiply(%x, 2f);
  let %xs = Cons(%x, Cons(%c, Nil));
  let %ys = @map(fn (%e) { add(%e, %c) }, %xs);
  let %sum = @foldl(fn (%acc, %e) { add(%acc, multiply(%e, %c)) }, %x, %ys);
  let %fact = fn (%k: int32) -> int32 {
    if (equal(%k, 0)) { 1 } else { multiply(%k, %fact(subtract(%k, 1))) }
  };
  let %h = @compose(fn (%a) { negative(%a) }, fn (%b) { add(%b, %c) });
  let %adders = @map(fn (%d) { fn (%w) { add(%w, %d) } }, %ys);
  let %applied = @map(fn (%g) { %g(%x) }, %adders);
  (%sum, %fact(%n), %h(%x), @foldl(fn (%p, %q) { add(%p, %q) }, %x, %applied))
}""", mod=prelude)
    return RemoveUnusedFunctions()(mod), [np.array([1.0, 2.0], "float32"), np.int32(5)]


def test_prelude_map_and_foldl_with_closures(prelude_main):
    mod, inputs = prelude_main
    out = lift(mod)
    assert not local_functions(out)
    assert_same_results(results(mod, inputs), results(out, inputs))


def test_prelude_after_anf(prelude_main):
    mod, inputs = prelude_main
    out = lift(ToANormalForm()(mod))
    assert not local_functions(out)
    assert_same_results(results(mod, inputs), results(out, inputs))
    assert_structural_equal(lift(out), out)


@pytest.mark.parametrize("seed", range(50))
def test_random_programs_keep_their_meaning(seed):
    mod, inputs = random_program(seed)
    out = lift(mod)
    assert not local_functions(out)
    assert_same_results(results(mod, inputs), results(out, inputs))


# ---------------------------------------------------------------- scale


@pytest.mark.parametrize("kind", ["ops", "lets"])
def test_long_chains(kind):
    mod = typed_chain(kind)
    start = time.process_time()
    out = LambdaLift()(mod)
    elapsed = time.process_time() - start
    assert out["main"] is mod["main"] and elapsed < 15, elapsed


def test_closure_at_the_end_of_a_long_let_chain():
    mod = typed_chain("lets")
    fn = mod["main"]
    lets = []
    e = fn.body
    while type(e) is Let:
        lets.append(e)
        e = e.body
    ty = e.checked_type
    y, f = relay.var("y", ty), relay.var("f")
    closure = relay.Function([y], relay.add(y, e))
    call = relay.Call(f, (e,))
    closure.set_checked_type(FuncType([ty], ty))
    for node in (y, f, closure.body, call):
        node.set_checked_type(closure.checked_type if node is f else ty)
    tail = Let(f, closure, call)
    tail.set_checked_type(ty)
    for let in reversed(lets):
        tail = Let(let.var, let.value, tail)
        tail.set_checked_type(ty)
    main = relay.Function(fn.params, tail)
    main.set_checked_type(fn.checked_type)
    start = time.process_time()
    out = LambdaLift()(relay.IRModule.from_expr(main))
    elapsed = time.process_time() - start
    assert out["lifted_name_0"].body.attrs["Closure"] == 1 and elapsed < 15, elapsed
