"""Pass infrastructure: decorators, Sequential, PassContext rules, instruments."""

import io

import pytest

import relayir as relay
from relayir.transform import (
    PassContext,
    PassTimingInstrument,
    PrintIRAfter,
    Sequential,
    VerifyAfterEachPass,
    function_pass,
    module_pass,
)


def _mod():
    x = relay.var("x", shape=(2,))
    return relay.IRModule.from_expr(relay.Function([x], relay.add(x, x)))


def _recorder(name, opt_level, log):
    @module_pass(opt_level=opt_level, name=name)
    def p(mod, ctx):
        log.append(name)
        return mod

    return p


def test_opt_level_disabled_and_required():
    log = []
    seq = Sequential([_recorder("A", 0, log), _recorder("B", 2, log), _recorder("C", 3, log)])
    seq(_mod())
    assert log == ["A", "B"]  # default opt level 2
    log.clear()
    with PassContext(opt_level=3):
        seq(_mod())
    assert log == ["A", "B", "C"]
    log.clear()
    with PassContext(opt_level=3, disabled_pass=["B"]):
        seq(_mod())
    assert log == ["A", "C"]
    log.clear()
    with PassContext(opt_level=0, required_pass=["C"]):
        seq(_mod())
    assert log == ["A", "C"]
    log.clear()
    with PassContext(opt_level=0, required_pass=["C"], disabled_pass=["C"]):
        seq(_mod())
    assert log == ["A"]


def test_direct_call_always_runs():
    log = []
    with PassContext(opt_level=0):
        _recorder("High", 3, log)(_mod())
    assert log == ["High"]


def test_function_pass_on_function_and_class():
    @function_pass(opt_level=1)
    def negate_body(func, mod, ctx):
        return relay.Function(func.params, relay.negative(func.body))

    mod = negate_body(_mod())
    assert mod["main"].body.op.name == "negative"
    assert negate_body.info.name == "negate_body"

    @function_pass(opt_level=1, name="Wrap")
    class Wrap:
        def __init__(self, op_name):
            self.op_name = op_name

        def transform_function(self, func, mod, ctx):
            return relay.Function(func.params, relay.op.call(self.op_name, [func.body]))

    mod = Wrap("abs")(_mod())
    assert mod["main"].body.op.name == "abs"


def test_passes_return_new_modules():
    mod = _mod()
    out = relay.transform.InferType()(mod)
    assert out is not mod


def test_timing_and_print_instruments():
    timing = PassTimingInstrument()
    buf = io.StringIO()
    with PassContext(instruments=[timing, PrintIRAfter(["InferType"], file=buf)]):
        Sequential([relay.transform.InferType()])(_mod())
    assert "InferType" in timing.render()
    assert "// after InferType" in buf.getvalue()
    assert "add(%x, %x)" in buf.getvalue()


def test_verify_after_each_pass_catches_broken_output():
    @module_pass(opt_level=0, name="Break")
    def breaks(mod, ctx):
        y = relay.var("y", shape=(3,))
        new = mod.copy()
        new["main"] = relay.Function(mod["main"].params, relay.add(mod["main"].body, y))
        return new

    with PassContext(instruments=[VerifyAfterEachPass()]), pytest.raises(
        relay.WellFormedError, match="after pass Break"
    ):
        breaks(_mod())


def test_bad_opt_level():
    with pytest.raises(relay.Error, match="opt_level"):
        PassContext(opt_level=5)
