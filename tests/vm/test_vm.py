"""The Relay VM (first milestone): results equal the reference interpreter on the numpy
and cpu targets, the disassembly is pinned, and bad inputs / failed matches are clear."""

import numpy as np
import pytest

import relayir as relay
from relayir.runtime.values import values_equal
from relayir.testing.models import mlp
from relayir.testing.prelude_text import parse_with_prelude

TARGETS = ["numpy", "cpu"]


module = parse_with_prelude


def reference(mod, *args, params=None):
    return relay.create_executor("debug", mod, params=params).evaluate()(*args)


def vm_run(mod, target, *args, params=None):
    exe = relay.vm.compile(mod, target=target, params=params)
    return relay.vm.VirtualMachine(exe).run(*args)


def check(mod, target, *args, rtol=1e-5, atol=1e-6):
    want = reference(mod, *args)
    got = vm_run(mod, target, *args)
    assert values_equal(got, want, rtol=rtol, atol=atol), (got, want)
    return got


@pytest.mark.parametrize("target", TARGETS)
def test_mlp_with_params(target):
    mod, params = mlp(batch_size=2, in_features=32, hidden=16)
    x = np.random.default_rng(0).standard_normal((2, 32)).astype("float32")
    want = reference(mod, x, params=params)
    got = vm_run(mod, target, x, params=params)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    ex = relay.create_executor("vm", mod, target=target, params=params).evaluate()
    np.testing.assert_allclose(ex(x), want, rtol=1e-5, atol=1e-6)


IF_TEXT = """
def @main(%c: bool, %x: Tensor[(3), float32]) -> Tensor[(3), float32] {
  if (%c) { multiply(%x, 2f) } else { subtract(%x, 1f) }
}"""


@pytest.mark.parametrize("target", TARGETS)
def test_if_on_scalar_bool(target):
    mod = module(IF_TEXT)
    x = np.array([1, 2, 3], "float32")
    for c in (True, False):
        check(mod, target, np.array(c), x)


FACT_TEXT = """
def @fact(%n: int32) -> int32 {
  if (less_equal(%n, 1)) { 1 } else { multiply(%n, @fact(subtract(%n, 1))) }
}
def @main(%n: int32) -> int32 { @fact(%n) }"""


@pytest.mark.parametrize("target", TARGETS)
def test_recursive_factorial(target):
    mod = module(FACT_TEXT)
    exe = relay.vm.compile(mod, target=target)
    vm = relay.vm.VirtualMachine(exe)
    for n in (0, 1, 5, 10):
        got = vm.run(np.array(n, "int32"))
        assert values_equal(got, reference(mod, np.array(n, "int32")))
    # deep recursion runs on the VM's own frame stack, not Python's
    assert int(vm.run(np.array(3000, "int32"))) == int(reference(mod, np.array(3000, "int32")))


LOOP_TEXT = """
def @loop(%i: int32, %acc: float32) -> float32 {
  if (equal(%i, 0)) { %acc } else { @loop(subtract(%i, 1), add(%acc, 0.5f)) }
}
def @main(%n: int32) -> float32 {
  let %step = fn (%i: int32, %acc: float32) -> float32 { @loop(%i, %acc) };
  %step(%n, 0f)
}"""


@pytest.mark.parametrize("target", TARGETS)
def test_tail_calls_replace_the_frame(target):
    from relayir.vm.interpreter import _INVOKE, _TAIL_INVOKE, _TAIL_INVOKE_CLOSURE

    mod = module(LOOP_TEXT)
    vm = relay.vm.VirtualMachine(relay.vm.compile(mod, target=target))
    exe = vm.exe
    ops = {f.name: {ins[0] for ins in vm.code[i]} for i, f in enumerate(exe.functions)}
    assert _TAIL_INVOKE in ops["loop"] and _INVOKE not in ops["loop"]
    assert _TAIL_INVOKE_CLOSURE in ops["main"] or _TAIL_INVOKE in ops["main"]
    for n in (0, 3, 20000):
        assert float(vm.run(np.array(n, "int32"))) == n * 0.5
    # a call whose result is used afterwards is not a tail call
    fact = relay.vm.VirtualMachine(relay.vm.compile(module(FACT_TEXT), target=target))
    fact_ops = {ins[0] for ins in fact.code[fact.exe.func_index["fact"]]}
    assert _INVOKE in fact_ops and _TAIL_INVOKE not in fact_ops
    assert values_equal(vm.run(np.array(7, "int32")), reference(mod, np.array(7, "int32")))


LIST_TEXT = """
def @main(%a: Tensor[(2), float32], %b: Tensor[(2), float32]) {
  %0 = Cons(%a, Cons(%b, Cons(%a, Nil)));
  %1 = @map(fn (%x: Tensor[(2), float32]) { multiply(%x, %b) }, %0);
  (@foldl(fn (%acc: Tensor[(2), float32], %x: Tensor[(2), float32]) { add(%acc, %x) },
          zeros(shape=[2], dtype="float32"), %1), %1)
}"""


@pytest.mark.parametrize("target", TARGETS)
def test_foldl_and_map_over_a_list_with_closures(target):
    mod = module(LIST_TEXT)
    out = check(mod, target, np.array([1, 2], "float32"), np.array([10, 20], "float32"))
    np.testing.assert_allclose(out[0], [120, 480])


TREE_TEXT = """
def @main(%x: int32) -> int32 {
  let %leaf = Rose(%x, Nil);
  @size(Rose(%x, Cons(%leaf, Cons(Rose(%x, Cons(%leaf, Cons(%leaf, Nil))), Nil))))
}"""


@pytest.mark.parametrize("target", TARGETS)
def test_tree_size_by_match(target):
    out = check(module(TREE_TEXT), target, np.array(7, "int32"))
    assert int(out) == 5


HD_TEXT = """
def @main(%a: Tensor[(2), float32], %empty: bool) -> Tensor[(2), float32] {
  let %xs = if (%empty) { Nil } else { Cons(%a, Nil) };
  match? (%xs) { Cons(%x, _) => add(%x, 1f) }
}"""


@pytest.mark.parametrize("target", TARGETS)
def test_incomplete_match_hits_fatal(target):
    mod = module(HD_TEXT)
    a = np.array([1, 2], "float32")
    check(mod, target, a, np.array(False))
    vm = relay.vm.VirtualMachine(relay.vm.compile(mod, target=target))
    with pytest.raises(relay.Error, match="no clause matches"):
        vm.run(a, np.array(True))


GOLDEN = """\
VM Function[0]: main($r0, $r1)
# reg file size = 3
# instruction count = 9
0: load_consti $r2 1
1: if $r0 == $r2 then +1 else +4
2: alloc_tensor $r0 [2] float32
3: invoke_packed vm_fused_0 in($r1) out($r0)
4: goto +4
5: alloc_adt $r0 Nil()
6: alloc_tuple $r0 ($r1, $r0)
7: get_field $r0 $r0[0]
8: ret $r0
"""  # registers after liveness.py: %c's register is reused once the `if` has read it


def test_golden_disassembly():
    mod = module("""
    def @main(%c: bool, %x: Tensor[(2), float32]) -> Tensor[(2), float32] {
      if (%c) { add(%x, 1f) } else { (%x, Nil).0 }
    }""")
    exe = relay.vm.compile(mod, target="numpy")
    text = str(exe.bytecode)
    assert text == GOLDEN, text


def test_wrong_input_is_a_clear_error():
    mod, params = mlp(batch_size=2, in_features=32, hidden=16)
    vm = relay.vm.VirtualMachine(relay.vm.compile(mod, target="numpy", params=params))
    with pytest.raises(relay.Error, match="input data"):
        vm.run(np.zeros((3, 32), "float32"))
    with pytest.raises(relay.Error, match="input data"):
        vm.run(np.zeros((2, 32), "int32"))
    with pytest.raises(relay.Error, match="takes 1 inputs"):
        vm.run()


NESTED_TEXT = """
def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
  let %f = fn (%y: Tensor[(2), float32]) { add(%x, %y) };
  let %p = (%f, Cons(%x, Nil));
  match (%p) {
    (%g, Cons(%h, Nil)) => %g(%h),
    (_, _) => %x,
  }
}"""


@pytest.mark.parametrize("target", TARGETS)
def test_tuple_and_nested_patterns_and_a_stored_closure(target):
    out = check(module(NESTED_TEXT), target, np.array([1, 2], "float32"))
    np.testing.assert_allclose(out, [2, 4])
