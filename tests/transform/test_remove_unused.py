"""RemoveUnusedFunctions: globals unreachable from the entries go."""

from __future__ import annotations

import time

import numpy as np
import pytest

import relayir as relay
from relayir.ir.expr import Function
from relayir.ir.structural import assert_structural_equal
from relayir.ir.types import FuncType, TensorType
from relayir.testing.pass_check import assert_same_results, parse, results, typed_chain
from relayir.testing.random_programs import random_program
from relayir.transform import PassContext, Sequential, VerifyAfterEachPass
from relayir.transform.remove_unused_functions import RemoveUnusedFunctions

SRC = """
def @used_by_value(%a: Tensor[(2), float32]) { negative(%a) }
def @apply(%f: fn (Tensor[(2), float32]) -> Tensor[(2), float32], %a: Tensor[(2), float32]) {
  %f(%a)
}
def @self_loop(%n: int32) -> int32 { @self_loop(%n) }
def @helper(%a: Tensor[(2), float32]) { @used_by_value(%a) }
def @other_entry(%a: Tensor[(2), float32]) { @helper(%a) }
def @main(%x: Tensor[(2), float32]) { @apply(@used_by_value, %x) }
"""


def names(mod):
    return sorted(gv.name_hint for gv in mod.functions)


def run(mod, **kwargs):
    with PassContext(instruments=[VerifyAfterEachPass()]):
        out = RemoveUnusedFunctions(**kwargs)(mod)
    assert out is not mod
    return out


def test_callees_and_globals_used_as_values_are_kept():
    mod = parse(SRC)
    out = run(mod)
    assert names(out) == ["apply", "main", "used_by_value"]
    assert len(mod.functions) == 6  # the input is untouched
    assert_structural_equal(out["main"], mod["main"])


def test_entry_functions():
    mod = parse(SRC)
    assert names(run(mod, entry_functions=["main", "other_entry"])) == [
        "apply", "helper", "main", "other_entry", "used_by_value"]
    assert names(run(mod, entry_functions=["self_loop", "missing"])) == ["self_loop"]


def test_prelude_keeps_only_what_main_needs():
    mod = relay.IRModule()
    relay.Prelude(mod)
    mod = parse("""
def @main(%x: Tensor[(2), float32]) {
  @foldl(fn (%a, %b) { add(%a, %b) }, %x, @map(fn (%e) { negative(%e) }, Cons(%x, Nil)))
}""", mod=mod)
    out = run(mod)
    assert names(out) == ["foldl", "main", "map"]
    assert out.has_type("List")  # type definitions stay
    x = np.array([1.0, 2.0], "float32")
    np.testing.assert_allclose(relay.create_executor("debug", out).evaluate()(x),
                               relay.create_executor("debug", mod).evaluate()(x))


def test_in_a_sequential_at_its_opt_level():
    mod = parse(SRC)
    assert RemoveUnusedFunctions().info.opt_level == 1
    with PassContext(opt_level=0):
        assert len(Sequential([RemoveUnusedFunctions()])(mod).functions) == 6
    assert len(Sequential([RemoveUnusedFunctions()])(mod).functions) == 3


@pytest.mark.parametrize("seed", range(50))
def test_random_programs_keep_their_meaning(seed):
    prog, inputs = random_program(seed)
    mod = prog.copy()
    mod["unused"] = Function([], relay.const(1.0))
    out = run(mod)
    assert names(out) == ["main"]
    assert_same_results(results(out, inputs), results(prog, inputs), rtol=1e-6, atol=0)


@pytest.mark.parametrize("kind", ["ops", "lets"])
def test_long_chains(kind):
    mod = typed_chain(kind)
    fn = mod["main"]
    unused = Function([], relay.const(1.0))
    for node in (unused, unused.body):
        node.set_checked_type(FuncType([], TensorType((), "float32")) if node is unused
                              else TensorType((), "float32"))
    mod["unused"] = unused
    start = time.process_time()
    out = RemoveUnusedFunctions()(mod)
    elapsed = time.process_time() - start
    assert names(out) == ["main"] and out["main"] is fn and elapsed < 10, elapsed
