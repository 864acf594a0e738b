"""The prelude (written in Relay text) type-checks and every function evaluates right."""

import numpy as np
import pytest

import relayir as relay
from relayir.runtime import ConstructorValue, to_list


def run(text: str, *args):
    mod = relay.IRModule()
    relay.Prelude(mod)
    mod = relay.parse(text, init_module=mod)
    return relay.create_executor("debug", mod).evaluate()(*args)


LIST3 = "Cons(1f, Cons(2f, Cons(3f, Nil)))"


def floats(value: ConstructorValue) -> list[float]:
    return [float(v) for v in to_list(value)]


def test_prelude_type_checks_with_polymorphic_types():
    mod = relay.IRModule()
    p = relay.Prelude(mod)
    mod = relay.transform.InferType()(mod)
    assert str(mod["map"].checked_type) == "fn[A, B](fn (A) -> B, List[A]) -> List[B]"
    assert str(mod["foldl"].checked_type) == "fn[A, B](fn (A, B) -> A, A, List[B]) -> A"
    assert p.Cons.tag == 0 and p.Nil.tag == 1
    assert p.map == mod.get_global_var("map")


def test_foldl_over_a_list_of_tensors():
    out = run("""
    def @main(%a: Tensor[(2), float32], %b: Tensor[(2), float32]) -> Tensor[(2), float32] {
      %0 = Cons(%a, Cons(%b, Cons(%a, Nil)));
      @foldl(fn (%acc: Tensor[(2), float32], %x: Tensor[(2), float32]) { add(%acc, %x) },
             zeros(shape=[2], dtype="float32"), %0)
    }""", np.array([1, 2], "float32"), np.array([10, 20], "float32"))
    np.testing.assert_allclose(out, [12, 24])


def test_map_foldr_length_nth_concat_rev():
    assert floats(run(f"def @main() {{ @map(fn (%x: float32) {{ multiply(%x, 2f) }}, "
                      f"{LIST3}) }}")) == [2, 4, 6]
    assert float(run(f"def @main() {{ @foldr(fn (%x: float32, %acc: float32) "
                     f"{{ subtract(%x, %acc) }}, 0f, {LIST3}) }}")) == 1 - (2 - (3 - 0))
    assert int(run(f"def @main() {{ @length({LIST3}) }}")) == 3
    assert float(run(f"def @main() {{ @nth({LIST3}, 2) }}")) == 3.0
    assert floats(run(f"def @main() {{ @concat({LIST3}, Cons(4f, Nil)) }}")) == [1, 2, 3, 4]
    assert floats(run(f"def @main() {{ @rev({LIST3}) }}")) == [3, 2, 1]
    assert float(run(f"def @main() {{ @hd(@tl({LIST3})) }}")) == 2.0


def test_filter_and_zip():
    assert floats(run(f"def @main() {{ @filter(fn (%x: float32) {{ greater(%x, 1.5f) }}, "
                      f"{LIST3}) }}")) == [2, 3]
    pairs = to_list(run(f"def @main() {{ @zip({LIST3}, Cons(5, Cons(6, Nil))) }}"))
    assert [(float(a), int(b)) for a, b in pairs] == [(1.0, 5), (2.0, 6)]


def test_iterate_composes_a_function_n_times():
    out = run("def @main() { %0 = @iterate(fn (%x: float32) { multiply(%x, 2f) }, 5); %0(1f) }")
    assert float(out) == 32.0


def test_tree_and_nat():
    tree = "Rose(1f, Cons(Rose(2f, Nil), Cons(Rose(3f, Cons(Rose(4f, Nil), Nil)), Nil)))"
    assert int(run(f"def @main() {{ @size({tree}) }}")) == 4
    doubled = run(f"def @main() {{ @tmap(fn (%x: float32) {{ add(%x, %x) }}, {tree}) }}")
    assert float(doubled.fields[0]) == 2.0
    assert int(run("def @main() { @nat_to_int(succ(succ(succ(zero)))) }")) == 3


def test_option():
    out = run("""
    def @main(%x: float32) {
      match (Some(%x)) {
        Some(%v) => add(%v, 1f),
        None => 0f,
      }
    }""", np.float32(2))
    assert float(out) == 3.0


def test_factorial_with_if_in_text():
    out = run("""
    def @fact(%n: int32) -> int32 {
      if (equal(%n, 0)) { 1 } else { multiply(%n, @fact(subtract(%n, 1))) }
    }
    def @main(%n: int32) -> int32 { @fact(%n) }
    """, np.int32(10))
    assert int(out) == 3628800


def test_incomplete_match_failure_is_a_clear_error():
    with pytest.raises(relay.InterpreterError, match="no clause"):
        run("def @main() { @hd(Nil) }")


def test_type_error_in_user_code_names_the_place():
    with pytest.raises(relay.TypeInferenceError, match="type mismatch"):
        run(f"def @main() {{ @map(fn (%x: int32) {{ %x }}, {LIST3}) }}")
