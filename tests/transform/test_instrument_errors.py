"""``PassContext`` with instruments that raise: entered instruments exit, the context
stack stays right, and ``override_instruments`` swaps instruments (exit, then enter)."""

import pytest

import relayir as relay
from relayir.transform import InferType, PassContext


class _Events:
    def __init__(self, log, name, fail=None):
        self.log, self.name, self.fail = log, name, fail

    def _event(self, what):
        self.log.append(f"{self.name} {what}")
        if what == self.fail:
            raise RuntimeError(f"{self.name} fails in {what}")

    def enter_pass_ctx(self):
        self._event("enter")

    def exit_pass_ctx(self):
        self._event("exit")

    def run_before_pass(self, mod, info):
        self._event("before")


def _mod():
    x = relay.var("x", shape=(2,))
    return relay.IRModule.from_expr(relay.Function([x], relay.add(x, x)))


def test_an_instrument_failing_to_enter_exits_the_entered_ones():
    log = []
    ctx = PassContext(instruments=[_Events(log, "a"), _Events(log, "b", "enter"),
                                   _Events(log, "c")])
    before = PassContext.current()
    with pytest.raises(RuntimeError, match="b fails in enter"), ctx:
        pass
    assert log == ["a enter", "b enter", "a exit"]
    assert PassContext.current() is before


def test_an_instrument_failing_to_exit_stops_the_rest_and_pops_the_context():
    log = []
    before = PassContext.current()
    ctx = PassContext(instruments=[_Events(log, "a"), _Events(log, "b", "exit"),
                                   _Events(log, "c")])
    with pytest.raises(RuntimeError, match="b fails in exit"), ctx:
        pass
    assert log[3:] == ["a exit", "b exit"] and PassContext.current() is before


def test_a_failing_hook_inside_a_pass_still_exits_the_context():
    log = []
    ctx = PassContext(instruments=[_Events(log, "a", "before")])
    with pytest.raises(RuntimeError, match="fails in before"), ctx:
        InferType()(_mod())
    assert log == ["a enter", "a before", "a exit"]


def test_override_instruments_exits_the_old_and_enters_the_new():
    log = []
    ctx = PassContext()
    ctx.override_instruments([_Events(log, "a")])
    ctx.override_instruments([_Events(log, "b")])
    assert log == ["a enter", "a exit", "b enter"]
    with pytest.raises(RuntimeError):
        ctx.override_instruments([_Events(log, "c", "enter")])
    assert ctx.instruments == []
    ctx.override_instruments([_Events(log, "d", "exit")])
    with pytest.raises(RuntimeError):
        ctx.override_instruments(None)
    assert ctx.instruments == []
