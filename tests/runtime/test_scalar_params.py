"""A 0-d param (a scalar constant the build keeps as a param, as a quantized model's
scales and zero points) keeps its shape through save and load."""

import numpy as np

import relayir as relay
from relayir.runtime.params import load_params, save_params


def test_zero_dimensional_params_round_trip():
    params = {"s": np.float32(2.5) * np.ones((), "float32"), "v": np.arange(3, dtype="int8")}
    back = load_params(save_params(params))
    assert back["s"].shape == () and back["s"] == np.float32(2.5)
    assert back["v"].shape == (3,)


def test_an_exported_model_with_scalar_constants_loads_and_runs(tmp_path):
    x = relay.var("x", shape=(4,), dtype="float32")
    y = relay.multiply(relay.add(x, relay.const(np.float32(2.5))), relay.const(np.float32(3)))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(y)))
    with relay.transform.PassContext(opt_level=0):  # the scalars stay params
        lib = relay.build(mod, target="numpy")
    lib.export_library(tmp_path / "m.relayir")
    model = relay.runtime.load(tmp_path / "m.relayir")
    assert [s.name for s in model.input_info] == ["x"]
    np.testing.assert_array_equal(model.run({"x": np.ones(4, "float32")})[0], [10.5] * 4)
