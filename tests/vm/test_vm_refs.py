"""References on the VM (``RefCreate`` / ``RefRead`` / ``RefWrite``): ref programs and
the higher-order gradients that keep adjoints in cells equal the reference interpreter;
liveness never plans or pools a value a cell holds; executables with refs round-trip."""

import numpy as np
import pytest

import relayir as relay
from relayir.ir.types import TensorType
from relayir.runtime.values import RefValue, values_equal
from relayir.testing.models import lstm_recursive
from relayir.testing.prelude_text import parse_with_prelude
from relayir.transform.autodiff import gradient
from relayir.transform.pass_infra import PassContext
from relayir.vm import Opcode
from relayir.vm.liveness import private_tensors

TARGETS = ["numpy", "cpu"]
F = "float64"


module = parse_with_prelude


def check(mod, target, *args, rtol=1e-7, atol=1e-9):
    want = relay.create_executor("debug", mod).evaluate()(*args)
    exe = relay.vm.compile(mod, target=target)
    got = relay.vm.VirtualMachine(exe).run(*args)
    assert values_equal(got, want, rtol=rtol, atol=atol), (got, want)
    return exe, got


def rnd(*shape, seed=0, dtype=F):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


COUNTER = """
def @main(%x: Tensor[(3), float32]) {
  let %c = ref(%x);
  let %inc = fn (%d: Tensor[(3), float32]) { ref_write(%c, add(ref_read(%c), %d)) };
  let %u1 = %inc(%x);
  let %u2 = %inc(multiply(%x, %x));
  (ref_read(%c), %u2, %c)
}
"""

# the cell goes through a tail-recursive loop: each step's kernel output is stored in it,
# so a planned (arena) or pooled buffer would be overwritten by the next step
RECURSIVE = """
def @twice(%r: Ref[Tensor[(3), float32]], %n: int32) -> () {
  if (equal(%n, 0)) {
    ()
  } else {
    let %u = ref_write(%r, add(multiply(ref_read(%r), 2f), 1f));
    @twice(%r, subtract(%n, 1))
  }
}
def @main(%x: Tensor[(3), float32]) {
  let %r = ref(%x);
  let %u = @twice(%r, 5);
  let %first = ref_read(%r);
  let %v = @twice(%r, 2);
  (%first, ref_read(%r))
}
"""

TUPLE_AND_CLOSURE = """
def @main(%x: Tensor[(3), float32], %y: Tensor[(3), float32]) {
  let %t = ref((%x, %y));
  let %u = ref_write(%t, (%y, add(%x, %y)));
  let %f = ref(fn (%a: Tensor[(3), float32]) { multiply(%a, %x) });
  let %g = ref_read(%f);
  let %u2 = ref_write(%f, fn (%a: Tensor[(3), float32]) { add(%g(%a), %y) });
  let %h = ref_read(%f);
  (ref_read(%t), %h(%x), %t)
}
"""


@pytest.mark.parametrize("target", TARGETS)
def test_counter_incremented_in_a_closure(target):
    x = np.array([1.0, -2.0, 3.0], "float32")
    _, got = check(module(COUNTER), target, x)
    np.testing.assert_allclose(got[0], x + x + x * x)
    assert got[1] == () and isinstance(got[2], RefValue)  # unit, and the cell itself


@pytest.mark.parametrize("target", TARGETS)
def test_ref_through_a_recursive_function(target):
    x = np.array([0.5, -1.0, 2.0], "float32")
    _, (first, last) = check(module(RECURSIVE), target, x)
    after5 = x
    for _ in range(5):
        after5 = after5 * 2 + 1
    np.testing.assert_allclose(first, after5)
    np.testing.assert_allclose(last, (after5 * 2 + 1) * 2 + 1)


@pytest.mark.parametrize("target", TARGETS)
def test_ref_holding_a_tuple_and_a_closure(target):
    x, y = rnd(3, dtype="float32"), rnd(3, seed=1, dtype="float32")
    _, got = check(module(TUPLE_AND_CLOSURE), target, x, y)
    np.testing.assert_allclose(got[1], x * x + y, rtol=1e-6)


def test_liveness_runs_and_never_plans_or_pools_a_stored_value():
    mod = module(RECURSIVE)
    with PassContext(disabled_pass=["VMLiveness"]):
        raw = relay.vm.compile(mod, target="numpy")
    exe = relay.vm.compile(mod, target="numpy")
    name = "twice"
    raw_fn = raw.functions[raw.func_index[name]]
    fn = exe.functions[exe.func_index[name]]
    stored = {i.args[1] for i in raw_fn.instructions if i.op is Opcode.RefWrite}
    assert stored and not stored & private_tensors(raw_fn)
    assert fn.num_regs < raw_fn.num_regs  # the pass ran on a function with refs
    written = {i.args[1] for i in fn.instructions if i.op is Opcode.RefWrite}
    for ins in fn.instructions:
        if ins.op is Opcode.AllocTensor and ins.args[0] in written:
            assert len(ins.args) == 3, ins  # no planned storage
        if ins.op is Opcode.KillRegister and len(ins.args) > 1:
            assert not set(ins.args[1]) & written, ins  # never pooled
    assert "ref_write $r" in str(exe.bytecode) and "ref_read $r" in str(exe.bytecode)


@pytest.mark.parametrize("target", TARGETS)
def test_save_load_round_trip_with_ref_opcodes(tmp_path, target):
    mod = module(TUPLE_AND_CLOSURE)
    x, y = rnd(3, dtype="float32"), rnd(3, seed=1, dtype="float32")
    exe, want = check(mod, target, x, y)
    exe.save(tmp_path / "refs.vmexe")
    loaded = relay.vm.Executable.load(tmp_path / "refs.vmexe")
    assert str(loaded.bytecode) == str(exe.bytecode)
    assert values_equal(relay.vm.VirtualMachine(loaded).run(x, y), want)


# ---------------------------------------------------------------- higher-order gradients


def _v(name, shape, dtype=F):
    return relay.var(name, shape=shape, dtype=dtype)


def _grad_module(fn, mod=None):
    mod = mod if mod is not None else relay.IRModule()
    mod["main"] = gradient(fn, mod, mode="higher_order")
    return relay.transform.InferType()(mod)


def _if_on_a_tensor_condition():
    x, w = _v("x", (3,)), _v("w", (3,))
    s = relay.sum(x * w)
    fn = relay.Function([x, w], relay.If(relay.greater(s, relay.const(0.0, F)),
                                         relay.tanh(x * w) * x, relay.exp(w) * s))
    return _grad_module(fn), [[rnd(3, seed=s), rnd(3, seed=s + 10)] for s in range(4)]


def _closure():
    x, w, a, f = _v("x", (4,)), _v("w", (4,)), _v("a", (4,)), relay.var("f")
    closure = relay.Function([a], relay.sin(a) * w + a)  # captures %w
    fn = relay.Function([x, w], relay.Let(f, closure, relay.Call(f, [relay.Call(f, [x]) * x])))
    return _grad_module(fn), [[rnd(4), rnd(4, seed=1)]]


def _recursion():
    mod = relay.IRModule()
    rep = relay.GlobalVar("repeat")
    x, w, n = _v("x", (3,)), _v("w", (3,)), relay.var("n", shape=(), dtype="int32")
    body = relay.If(relay.equal(n, relay.const(0)), x,
                    rep(relay.tanh(x * w) + x, w, relay.subtract(n, relay.const(1))))
    mod[rep] = relay.Function([x, w, n], body, TensorType((3,), F))
    x, w = _v("x", (3,)), _v("w", (3,))
    return _grad_module(relay.Function([x, w], rep(x, w, relay.const(4)) * w), mod), \
        [[rnd(3), rnd(3, seed=1)]]


def _map_and_foldl():
    mod = relay.IRModule()
    p = relay.Prelude(mod)
    x0, a, b, c, w = (_v(n, (2,)) for n in ("x0", "a", "b", "c", "w"))
    t, acc, y = _v("t", (2,)), _v("acc", (2,)), _v("y", (2,))
    scaled = p.map(relay.Function([t], t * w), p.Cons(a, p.Cons(b, p.Cons(c, p.Nil()))))
    out = p.foldl(relay.Function([acc, y], acc * y + relay.sin(y)), x0, scaled)
    return _grad_module(relay.Function([x0, a, b, c, w], out), mod), \
        [[rnd(2, seed=s) for s in range(5)]]


def _refs_in_the_program():
    x, w = _v("x", (3,)), _v("w", (3,))
    c, u1, u2 = relay.var("c"), relay.var("u1"), relay.var("u2")
    body = relay.Let(c, relay.RefCreate(x), relay.Let(
        u1, relay.RefWrite(c, relay.sin(relay.RefRead(c)) * w),
        relay.Let(u2, relay.RefWrite(c, relay.RefRead(c) * relay.RefRead(c)),
                  relay.RefRead(c))))
    return _grad_module(relay.Function([x, w], body)), [[rnd(3), rnd(3, seed=1)]]


PROGRAMS = {"if_tensor_condition": _if_on_a_tensor_condition, "closure": _closure,
            "recursion": _recursion, "map_foldl": _map_and_foldl,
            "refs_in_the_program": _refs_in_the_program}


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_higher_order_gradient_on_the_vm_equals_the_interpreter(program):
    mod, arg_sets = PROGRAMS[program]()
    exe = relay.vm.compile(mod, target="cpu")
    vm = relay.vm.VirtualMachine(exe)
    interp = relay.create_executor("debug", mod).evaluate()
    for args in arg_sets:
        got, want = vm.run(*args), interp(*args)
        assert values_equal(got, want, rtol=1e-10, atol=1e-12), (program, got, want)


@pytest.mark.parametrize("seq_len", [1, 3, 6])
def test_recursive_lstm_gradient_on_the_vm_equals_the_interpreter(seq_len):
    mod, params = lstm_recursive(batch_size=2, seq_len=seq_len, input_size=3, hidden_size=4,
                                 seed=seq_len)
    main = mod["main"]
    names = [p.name_hint for p in main.params]
    feeds = dict(params, data=rnd(seq_len, 2, 3, seed=seq_len, dtype="float32"))
    args = [feeds[n] for n in names]
    gmod = _grad_module(main, mod)
    want = relay.create_executor("debug", gmod).evaluate()(*args)
    got = relay.vm.VirtualMachine(relay.vm.compile(gmod, target="cpu")).run(*args)
    assert values_equal(got, want, rtol=1e-4, atol=1e-6), (got, want)
    assert len(got[1]) == len(names) and any(np.abs(g).max() > 0 for g in got[1][1:])


@pytest.mark.parametrize("target", TARGETS)
def test_a_write_whose_unit_nothing_reads_allocates_no_unit(target):
    mod = module(RECURSIVE)  # @twice's %u is never read; its () result and @main's are
    with PassContext(disabled_pass=["VMLiveness"]):
        raw = relay.vm.compile(mod, target=target)
    exe, (_, last) = check(mod, target, np.array([0.5, -1.0, 2.0], "float32"))
    np.testing.assert_allclose(last, np.array([0.5, -1.0, 2.0]) * 128 + 127)

    def units(e):  # (writes that give a unit, writes, empty tuples made)
        code = [i for f in e.functions for i in f.instructions]
        return (sum(i.op is Opcode.RefWrite and len(i.args) > 2 for i in code),
                sum(i.op is Opcode.RefWrite for i in code),
                sum(i.op is Opcode.AllocADT and i.args[1] < 0 and not i.args[2]
                    for i in code))
    assert units(raw) == (1, 1, 1)  # before liveness, the write names its unit
    assert units(exe) == (0, 1, 1)  # the write stays, its unread unit goes
    assert "ref_write $r" in str(exe.bytecode) and " unit $r" in str(raw.bytecode)
