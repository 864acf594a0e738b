"""EliminateCommonSubexpr: text → expected text (sharing checked), scopes, semantics, scale."""

from __future__ import annotations

import time

import numpy as np
import pytest

import relayir as relay
from relayir.ir.analysis import check_well_formed
from relayir.ir.expr import Call, Function, GlobalVar, Let, Op, Var
from relayir.ir.functor import post_order
from relayir.ir.structural import assert_structural_equal
from relayir.ir.types import FuncType, TensorType
from relayir.testing.random_programs import random_program
from relayir.transform import PassContext, VerifyAfterEachPass
from relayir.transform.eliminate_common_subexpr import (
    EliminateCommonSubexpr,
    eliminate_common_subexpr,
)
from relayir.transform.to_a_normal_form import ToANormalForm
from relayir.typing.infer import infer_module

HEADER = '#[version = "0.0.5"]\n'


def parse(text, mod=None):
    return relay.parse(HEADER + text, init_module=mod)


def run_pass(p, mod):
    out = p(mod)
    assert out is not mod
    assert_types_are_inferred_ones(out)
    with PassContext(opt_level=3, instruments=[VerifyAfterEachPass()]):
        assert_structural_equal(p(mod), out)
    return out


def assert_types_are_inferred_ones(mod):
    nodes = [n for fn in mod.functions.values() for n in post_order(fn) if type(n) is not Op]
    for fn in mod.functions.values():
        check_well_formed(fn)
    assert all(n.has_type for n in nodes)
    own = [n.checked_type for n in nodes]
    infer_module(mod.copy())
    for n, ty in zip(nodes, own):
        assert_structural_equal(ty, n.checked_type)


def text(mod):
    return mod.astext(show_types=False)


def check(before, after, fskip=None, mod=None):
    """Structural equality does not see sharing; the printed text does."""
    out = run_pass(EliminateCommonSubexpr(fskip), parse(before, mod))
    expected = parse(after, mod)
    assert_structural_equal(out, expected)
    assert text(out) == text(expected)
    return out


def nodes(mod):
    return len(post_order(mod["main"]))


def results(mod, inputs):
    return _flat(relay.create_executor("debug", mod).evaluate()(*inputs))


def _flat(v):
    if isinstance(v, tuple):
        return [x for e in v for x in _flat(e)]
    return [np.asarray(v)]


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
    """The same program with every op call built twice (so CSE has work to do)."""
    from relayir.ir.functor import ExprMutator

    class Dup(ExprMutator):
        def visit_call(self, call):
            new = super().visit_call(call)
            if isinstance(new.op, Op):
                twin = Call(new.op, new.args, new.attrs, new.type_args)
                return Call(relay.get_op("maximum"), (new, twin)) \
                    if _is_float_tensor(call) else new
            return new

    fn = mod["main"]
    return relay.IRModule.from_expr(Function(fn.params, Dup().visit(fn.body)))


def _is_float_tensor(call):
    ty = call.checked_type if call.has_type else None
    return isinstance(ty, TensorType) and ty.dtype == "float32"


@pytest.mark.parametrize("seed", range(50))
def test_random_programs_keep_their_meaning(seed):
    mod, inputs = random_program(seed)
    infer_module(mod)
    mod = duplicated(mod)
    out = run_pass(EliminateCommonSubexpr(), mod)
    assert nodes(out) < nodes(mod)
    for a, b in zip(results(mod, inputs), results(out, inputs)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    anf = run_pass(EliminateCommonSubexpr(), ToANormalForm()(mod))  # works on lets too
    for a, b in zip(results(mod, inputs), results(anf, inputs)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- scale


def typed_chain(kind: str, n: int = 100_000) -> relay.IRModule:
    """``n`` ops in one chain (each op computed twice), or ``n`` lets; typed as built."""
    ty = TensorType((2,), "float32")
    x = relay.var("x", ty)
    x.set_checked_type(ty)
    e, lets = x, []
    for i in range(n):
        if kind == "ops" and i % 2:  # add(neg(e), neg(e)) with two distinct neg nodes
            a, b = relay.negative(e), relay.negative(e)
            a.set_checked_type(ty)
            b.set_checked_type(ty)
            e = relay.add(a, b)
        else:
            e = relay.tanh(e)
        e.set_checked_type(ty)
        if kind == "lets":
            v = Var(f"v{i}")
            v.set_checked_type(ty)
            lets.append((v, e))
            e = v
    for v, value in reversed(lets):
        e = Let(v, value, e)
        e.set_checked_type(ty)
    fn = Function([x], e)
    fn.set_checked_type(FuncType([ty], ty))
    return relay.IRModule({GlobalVar("main"): fn})


@pytest.mark.parametrize("kind", ["ops", "lets"])
def test_long_chains(kind):
    mod = typed_chain(kind)
    start = time.process_time()
    out = EliminateCommonSubexpr()(mod)
    elapsed = time.process_time() - start
    body = out["main"].body
    if kind == "ops":
        assert body.args[0] is body.args[1]
    else:
        assert body is mod["main"].body
    assert elapsed < 15, elapsed
