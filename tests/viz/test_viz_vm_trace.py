"""``VirtualMachine.trace``: a run recorded instruction by instruction, as the
explorer's VM view steps through it."""

import numpy as np
import pytest

import relayir as relay
from relayir.runtime.values import ConstructorValue, to_list
from relayir.testing.models import get_workload
from relayir.viz import example_module
from relayir.vm.opcodes import Opcode
from relayir.vm.trace import CLEARED, RESULT, TRACE, summarize

TARGETS = ["numpy", "cpu"]
A = np.array([1, 2], "float32")
B = np.array([10, 20], "float32")


def _machine(mod, target):
    return relay.vm.VirtualMachine(relay.vm.compile(mod, target=target))


def _op(trace, step):
    return trace.exe.functions[step.func].instructions[step.pc].op


@pytest.mark.parametrize("target", TARGETS)
def test_a_traced_run_returns_what_a_run_returns_and_records_every_instruction(target):
    vm = _machine(example_module("list"), target)
    trace = vm.trace(A, B)
    out = vm.run(A, B)
    np.testing.assert_allclose(trace.result[0], out[0])
    np.testing.assert_allclose(trace.result[0], [120, 480])  # (1+10+1)*[10, 20] summed
    # the profiler counts every executed instruction once: the same count
    assert len(trace.steps) == vm.profile(A, B).instructions
    assert not trace.truncated
    # frames: depth 0 starts and ends the run; a call goes one deeper, its ret back
    assert trace.steps[0].depth == 0 and trace.steps[-1].depth == 0
    for prev, step in zip(trace.steps, trace.steps[1:]):
        op = _op(trace, prev)
        expected = prev.depth + (op in (Opcode.Invoke, Opcode.InvokeClosure)) - \
            (op is Opcode.Ret)
        assert step.depth == expected, (prev, step)
    assert trace.steps[-1].writes[0][0] == RESULT


def test_jumps_land_where_the_bytecode_says():
    trace = _machine(example_module("list"), "numpy").trace(A, B)
    taken = 0
    for prev, step in zip(trace.steps, trace.steps[1:]):
        ins = trace.exe.functions[prev.func].instructions[prev.pc]
        if ins.op in (Opcode.If, Opcode.Goto):
            targets = {prev.pc + ins.args[i] for i in ins.op.spec.jumps}
            assert (step.func, step.depth) == (prev.func, prev.depth)
            assert step.pc in targets
            taken += 1
    assert taken >= 8  # map and foldl each branch once per element and once at Nil


def test_adt_steps_show_the_values_built_and_taken_apart():
    trace = _machine(example_module("list"), "numpy").trace(A, B)
    built = [s.writes[0][2] for s in trace.steps if _op(trace, s) is Opcode.AllocADT]
    assert "Nil" in built
    assert "Cons([1., 2.], Cons([10., 20.], Cons([1., 2.], Nil)))" in built
    tags = [s.writes[0][2] for s in trace.steps if _op(trace, s) is Opcode.GetTag]
    # Cons thrice per walk; at Nil the first clause fails and the second reads the tag again
    assert tags.count("0") == 6 and tags.count("1") == 4
    fields = [s.writes[0][2] for s in trace.steps if _op(trace, s) is Opcode.GetField]
    assert "[10., 20.]" in fields
    kills = [w for s in trace.steps if _op(trace, s) is Opcode.KillRegister for w in s.writes]
    assert kills and all(v == CLEARED for _, _, v in kills)
    # a call's step shows the callee's parameters; a ret's the caller's destination
    invoke = next(s for s in trace.steps if _op(trace, s) is Opcode.Invoke)
    assert [w[0] for w in invoke.writes] == [0, 1]
    assert invoke.writes[0][1] == "closure"


def test_tensor_values_are_summarised_when_written():
    mod, params, _ = get_workload("mlp")
    vm = relay.vm.VirtualMachine(relay.vm.compile(mod, target="numpy", params=params))
    x = np.random.default_rng(0).standard_normal((1, 784)).astype("float32")
    trace = vm.trace(x)
    packed = [s for s in trace.steps if _op(trace, s) is Opcode.InvokePacked]
    assert len(packed) == 3
    ty, text = packed[-1].writes[0][1:]
    assert ty == "float32[1, 10]"
    out = vm.run(x)
    assert f"{float(out[0, 0]):.4g}" in text  # the softmax's first value, read at the time
    assert "min" in text and "max" in text


def test_the_limit_stops_recording_not_the_run():
    vm = _machine(example_module("list"), "numpy")
    trace = vm.trace(A, B, limit=10)
    assert len(trace.steps) == 10 and trace.truncated
    np.testing.assert_allclose(trace.result[0], [120, 480])


def test_normal_runs_dispatch_no_markers():
    vm = _machine(example_module("list"), "cpu")
    vm.trace(A, B)
    for code in vm.code:
        assert all(ins[0] != TRACE for ins in code)
    assert vm.run(A, B)[0].tolist() == [120, 480]


def test_trace_needs_inputs():
    vm = _machine(example_module("list"), "numpy")
    with pytest.raises(relay.vm.VMError, match="takes 2 inputs"):
        vm.trace()


def test_long_lists_are_summarised_without_recursion():
    mod = example_module("list")
    cons, nil = mod.get_constructor("Cons"), mod.get_constructor("Nil")
    value = ConstructorValue(nil.tag, (), nil)
    for i in range(100_000):
        value = ConstructorValue(cons.tag, (np.array(i, "int32"), value), cons)
    kind, text = summarize(value)
    assert kind == "Cons" and text.startswith("Cons(99999, Cons(99998") and text.endswith("...")
    assert len(text) < 300
    assert len(to_list(value)) == 100_000
