"""``relay.analysis.well_formed`` is Relay's: a free variable is fine, a variable bound
twice is not (relayir's own ``well_formed`` also refuses free variables)."""

from __future__ import annotations

from relayir.ir.analysis import well_formed as relayir_well_formed
from relayir.tvm import relay
from relayir.tvm.relay.analysis import well_formed


def test_free_variables_pass_and_a_second_binding_fails():
    x, v = relay.var("x"), relay.const(10)
    assert well_formed(x) and not relayir_well_formed(x)
    let = relay.Let(x, v, x)
    assert well_formed(let) and well_formed(relay.TupleGetItem(relay.var("t"), 2))
    assert not well_formed(relay.Let(x, v, let))
    assert not well_formed(relay.Tuple([let, relay.Let(x, v, x)]))
    f = relay.Function([x], x)
    assert well_formed(relay.Let(relay.var("y"), f, relay.Let(relay.var("z"), f, v)))
