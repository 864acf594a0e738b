"""``relay.analysis.detect_feature`` (Relay's node-kind set, ``fGraph`` for a shared
node, ``fLetRec`` for a recursive let) and TVM's ``uint1`` spelling of bool."""

from __future__ import annotations

import relayir.tvm as tvm
from relayir.tvm import relay
from relayir.tvm.relay.analysis import Feature, detect_feature


def test_a_tree_then_its_a_normal_form():
    x = relay.var("x", shape=(2,))
    y = relay.add(x, relay.const(1.0))
    f = relay.Function([x], relay.Tuple([y, relay.TupleGetItem(relay.Tuple([x]), 0)]))
    got = detect_feature(f)
    assert got == {Feature.fVar, Feature.fConstant, Feature.fTuple, Feature.fTupleGetItem,
                   Feature.fFunction, Feature.fOp, Feature.fCall}
    shared = relay.Function([x], relay.multiply(y, y))
    assert Feature.fGraph in detect_feature(shared)
    mod = tvm.IRModule.from_expr(shared)
    anf = relay.transform.ToANormalForm()(mod)
    assert Feature.fLet in detect_feature(anf) and Feature.fGraph not in detect_feature(anf)
    assert Feature.fGlobalVar not in detect_feature(anf)


def test_control_flow_refs_and_recursion():
    c = relay.var("c", shape=(), dtype="uint1")
    assert c.type_annotation.dtype == "bool"
    x = relay.var("x", shape=())
    r = relay.RefCreate(x)
    body = relay.If(c, relay.RefRead(r), relay.RefRead(r))
    got = detect_feature(relay.Function([c, x], body))
    assert {Feature.fIf, Feature.fRefCreate, Feature.fRefRead} <= got
    assert Feature.fRefWrite not in got and Feature.fLetRec not in got
    f = relay.var("f")
    loop = relay.Function([x], relay.Call(f, [x]))
    rec = relay.Let(f, loop, f)
    assert Feature.fLetRec in detect_feature(rec)
