"""``relay.dataflow_pattern`` builds relayir's rewrite patterns: Relay's matching rules
(one expression per pattern object, commutative calls, lazily inferred types, attrs)
and Relay's callback ``rewrite``; dominators and ``partition`` are refused by name."""

import pytest

from relayir.tvm import relay
from relayir.tvm.error import NotInRelayirError
from relayir.tvm.relay.dataflow_pattern import (
    DFPatternCallback,
    FunctionPattern,
    has_dtype,
    is_op,
    is_tuple,
    is_tuple_get_item,
    is_var,
    rewrite,
    wildcard,
)


def test_match_follows_relays_rules():
    x, y = relay.var("x"), relay.var("y")
    assert is_op("add")(is_var("x"), is_var("y")).match(y + x)  # commutative
    assert not is_op("subtract")(is_var("x"), is_var("y")).match(y - x)
    w = wildcard()
    assert (w + w).match(x + x) and not (w + w).match(x + y)  # one expression per pattern
    assert FunctionPattern(None, wildcard()).match(relay.Function([x], x))
    t = relay.Tuple([x, y])
    assert is_tuple_get_item(is_tuple([wildcard(), wildcard()]), 1).match(relay.TupleGetItem(t, 1))
    assert not is_tuple_get_item(wildcard(), 0).match(relay.TupleGetItem(t, 1))
    z = relay.var("z", shape=(2,), dtype="int8")
    assert has_dtype("int8").match(z) and not has_dtype("float32").match(z)
    assert is_op("add").has_attr({"TOpPattern": 1}).match(relay.op.op.get("add"))
    conv = relay.nn.conv2d(relay.var("d"), relay.var("k"), padding=(1, 1))
    assert is_op("nn.conv2d")(wildcard(), wildcard()).has_attr({"padding": [1, 1, 1, 1]}
                                                             ).match(conv)


def test_callbacks_rewrite_until_nothing_changes():
    class AddToSub(DFPatternCallback):
        def __init__(self):
            super().__init__()
            self.a, self.b = wildcard(), wildcard()
            self.pattern = self.a + self.b

        def callback(self, pre, post, node_map):
            return node_map[self.a][0] - node_map[self.b][0]

    x, y = relay.var("x"), relay.var("y")
    out = rewrite(AddToSub(), (x + y) + y)
    assert not is_op("add")(wildcard(), wildcard()).match(out)
    assert is_op("subtract")(is_op("subtract")(wildcard(), wildcard()), wildcard()).match(out)


def test_dominators_and_partition_are_refused_by_name():
    x = relay.var("x")
    with pytest.raises(NotInRelayirError, match="partition"):
        wildcard().partition(x)
    with pytest.raises(NotInRelayirError, match="DominatorPattern"):
        wildcard().dominates(wildcard()).match(x)
