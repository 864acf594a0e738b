"""``GraphModule.module["..."]``: TVM's packed functions of a graph executor by name, and
``set_input_zero_copy`` (a copy in relayir) giving the same outputs as ``set_input``."""

import numpy as np

from relayir.tvm import cpu, relay
from relayir.tvm.contrib import graph_executor


def test_packed_functions_by_name_and_zero_copy_input(needs_cc):
    x = relay.var("x", shape=(2, 3))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.Tuple([x, x * relay.const(2.0)])))
    lib = relay.build(mod, target="llvm")
    m = graph_executor.GraphModule(lib["default"](cpu()))
    data = np.arange(6, dtype="float32").reshape(2, 3)
    m.module["set_input_zero_copy"](m.get_input_index("x"), data)
    m.module["run"]()
    np.testing.assert_array_equal(m.get_output(1).numpy(), data * 2)
    np.testing.assert_array_equal(m.get_output(0).numpy(), data)
    assert m.module.get_params() == {}          # anything else is the factory's
