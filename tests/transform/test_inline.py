"""Inline: globals marked Inline=1 replaced by their bodies; recursion kept; scale."""

from __future__ import annotations

import functools
import time

import pytest

import relayir as relay
from relayir.ir.expr import Call, Function, GlobalVar, Let, Op, Var
from relayir.ir.functor import post_order
from relayir.ir.types import FuncType, TensorType
from relayir.testing import pass_check
from relayir.testing.pass_check import (
    assert_same_results,
    check_pass,
    results,
    run_pass,
    typed_chain_function,
)
from relayir.testing.random_programs import random_program
from relayir.transform.inline import Inline, cyclic_globals

T2 = {"T2": "Tensor[(2), float32]"}
parse = functools.partial(pass_check.parse, aliases=T2)
check = functools.partial(check_pass, Inline(), aliases=T2)


# ---------------------------------------------------------------- text → text


def test_marked_globals_are_inlined_and_dropped():
    check("""
def @sq(%a: T2, Inline=1) { multiply(%a, %a) }
def @keep(%c: T2) { negative(%c) }
def @main(%x: T2) {
  (@sq(%x), @sq(negative(%x)), @keep(%x))
}""", """
def @keep(%c: T2) { negative(%c) }
def @main(%x: T2) {
  (multiply(%x, %x), multiply(negative(%x), negative(%x)), @keep(%x))
}""")


def test_nested_inlining_gets_fresh_variables():
    out = check("""
def @sq(%a: T2, Inline=1) { let %t = multiply(%a, %a); add(%t, %t) }
def @twice(%b: T2, Inline=1) { @sq(@sq(%b)) }
def @main(%x: T2) {
  (@twice(%x), @sq(%x))
}""", """
def @main(%x: T2) {
  %0 = let %t1 = multiply(%x, %x); add(%t1, %t1);
  %1 = let %t2 = multiply(%0, %0); add(%t2, %t2);
  (%1, let %t3 = multiply(%x, %x); add(%t3, %t3))
}""")
    lets = [n.var for n in post_order(out["main"]) if type(n) is Let]
    assert len(lets) == len(set(lets)) == 3


def test_recursive_and_mutually_recursive_globals_stay():
    src = """
def @fact(%n: int32, Inline=1) -> int32 {
  if (equal(%n, 0)) { 1 } else { multiply(%n, @fact(subtract(%n, 1))) }
}
def @even(%n: int32, Inline=1) -> bool {
  if (equal(%n, 0)) { True } else { @odd(subtract(%n, 1)) }
}
def @odd(%n: int32, Inline=1) -> bool {
  if (equal(%n, 0)) { False } else { @even(subtract(%n, 1)) }
}
def @main(%k: int32) { (@fact(%k), @even(%k)) }"""
    check(src, src)
    mod = parse(src)
    names = {gv.name_hint for gv in cyclic_globals(
        {gv: [g for g in mod.get_global_vars() if g in _mentions(f)]
         for gv, f in mod.functions.items()})}
    assert names == {"fact", "even", "odd"}


def _mentions(fn):
    return {n for n in post_order(fn) if type(n) is GlobalVar}


def test_a_global_used_as_a_value_is_kept_and_its_calls_inlined():
    mod = relay.IRModule()
    relay.Prelude(mod)
    out = run_pass(Inline(), parse("""
def @inc(%a: T2, Inline=1) { add(%a, 1f) }
def @main(%x: T2) {
  (@map(@inc, Cons(%x, Nil)), @inc(%x))
}""", mod=mod))
    assert "inc" in out
    main = out["main"].body
    assert isinstance(main.fields[1], Call) and isinstance(main.fields[1].op, Op)


def test_primitive_external_and_polymorphic_globals_are_not_inlined():
    src = """
def @prim(%a: T2, Primitive=1, Inline=1) { negative(%a) }
def @ext(%a: T2, Compiler="ccompiler", Inline=1) { negative(%a) }
def @poly[A](%a: A, Inline=1) -> A { %a }
def @main(%x: T2) { (@prim(%x), @ext(%x), @poly(%x)) }"""
    check(src, src)


def test_effectful_arguments_are_bound_first():
    check("""
def @dup(%a: T2, Inline=1) { (%a, %a) }
def @main(%x: T2) {
  let %r = ref(%x);
  @dup(ref_read(%r))
}""", """
def @main(%x: T2) {
  let %r = ref(%x);
  let %a: T2 = ref_read(%r);
  (%a, %a)
}""")


# ---------------------------------------------------------------- semantics


@pytest.mark.parametrize("seed", range(50))
def test_random_programs_keep_their_meaning(seed):
    """The random program becomes an Inline=1 global that @main calls twice."""
    prog, inputs = random_program(seed)
    fn = prog["main"]
    body_fn = Function(fn.params, fn.body, fn.ret_type, attrs={"Inline": 1})
    params = [Var(p.name_hint, p.type_annotation) for p in fn.params]
    g = GlobalVar("body")
    mod = relay.IRModule({g: body_fn})
    mod["main"] = Function(params, relay.Tuple([Call(g, tuple(params)),
                                                 Call(g, tuple(params))]))
    out = run_pass(Inline(), mod)
    assert list(out.functions) == [out.get_global_var("main")]
    ref = results(prog, inputs)
    assert_same_results(ref + ref, results(out, inputs))


# ---------------------------------------------------------------- scale


@pytest.mark.parametrize("kind", ["ops", "lets"])
def test_long_chains(kind):
    ty = TensorType((2,), "float32")
    g = GlobalVar("chain")
    y = relay.var("y", ty)
    y.set_checked_type(ty)
    call = Call(g, (y,))
    call.set_checked_type(ty)
    main = Function([y], call)
    main.set_checked_type(FuncType([ty], ty))
    mod = relay.IRModule({g: typed_chain_function(kind, attrs={"Inline": 1})})
    mod["main"] = main
    start = time.process_time()
    out = Inline()(mod)
    elapsed = time.process_time() - start
    assert list(out.functions) == [out.get_global_var("main")]
    body = out["main"].body
    assert type(body) is (Let if kind == "lets" else Call) and body.has_type
    assert elapsed < 15, elapsed
