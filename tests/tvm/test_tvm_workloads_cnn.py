"""Relay's convolutional test workloads (``relay.testing.dqn``, ``dcgan``, ``squeezenet``,
``densenet``, ``inception_v3``): each builds, type-checks, has Relay's input, output and
parameter count, and initialises every weight by Relay's name rule; the small ones
compute the same on the graph executor as on the interpreter, and the text format
round-trips them."""

from __future__ import annotations

import numpy as np
import pytest

import relayir.tvm as tvm
from relayir.tvm import relay
from relayir.tvm.contrib import graph_executor
from relayir.tvm.relay.testing import dcgan, densenet, dqn, inception_v3, layers, squeezenet

# (id, workload, kwargs, data shape, output shape, parameters but data, weights in all);
# the counts are those of Relay's own workloads (SqueezeNet's as in its paper)
CASES = [
    ("dqn", dqn, {}, (1, 4, 84, 84), (1, 18), 10, 1_693_362),
    ("dqn-nhwc", dqn, dict(batch_size=2, num_actions=4, image_shape=(84, 84, 4),
                           layout="NHWC"), (2, 84, 84, 4), (2, 4), 10, None),
    ("dcgan", dcgan, {}, (1, 100), (1, 3, 64, 64), 17, 12_658_176),
    ("dcgan-nhwc", dcgan, dict(batch_size=2, ngf=4, random_len=8, layout="NHWC"), (2, 8),
     (2, 64, 64, 3), 17, None),
    ("squeezenet-1.0", squeezenet, {}, (1, 3, 224, 224), (1, 1000), 52, 1_248_424),
    ("squeezenet-1.1", squeezenet, dict(version="1.1", num_classes=10), (1, 3, 224, 224),
     (1, 10), 52, None),
    ("squeezenet-1.1-1000", squeezenet, dict(version="1.1"), (1, 3, 224, 224), (1, 1000), 52,
     1_235_496),
    ("densenet-121", densenet, {}, (4, 3, 224, 224), (4, 1000), 606, 3_568_808),
    ("densenet-169", densenet, dict(densenet_size=169, batch_size=1, classes=10),
     (1, 3, 224, 224), (1, 10), 846, None),
    ("inception_v3", inception_v3, {}, (1, 3, 299, 299), (1, 1000), 472, 23_869_000),
]


def _shape(t) -> tuple:
    return tuple(int(d) for d in t.shape)


@pytest.mark.parametrize("module, kwargs, data_shape, out_shape, n_params, n_weights",
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_workload_types_and_parameters(module, kwargs, data_shape, out_shape, n_params,
                                       n_weights):
    mod, params = module.get_workload(**kwargs)
    main = mod["main"]
    data, *weights = main.params
    assert data.name_hint == "data" and _shape(data.checked_type) == data_shape
    assert _shape(main.checked_type.ret_type) == out_shape
    assert [w.name_hint for w in weights] == list(params) and len(params) == n_params
    for w in weights:
        assert params[w.name_hint].shape == _shape(w.checked_type), w.name_hint
    if n_weights is not None:
        assert sum(v.numpy().size for v in params.values()) == n_weights
    # Relay's initialisation by name: zero biases and betas, unit gammas and variances
    for name, value in params.items():
        v = value.numpy()
        if name.endswith(("_bias", "_beta", "_moving_mean")):
            assert not v.any(), name
        elif name.endswith(("_gamma", "_moving_var")):
            assert (v == 1).all(), name
        else:
            assert v.std() > 0, name


def test_parameter_names_are_relays():
    _, params = inception_v3.get_workload()
    for name in ("conv_conv1_weight", "conv_bn_gamma", "mixed_conv_conv1_weight",
                 "mixed_tower_conv_1_conv1_weight", "mixed_3_tower_conv_2_bn_moving_var",
                 "mixed_10_tower_1_mixed_conv_1_conv1_weight", "mixed_10_tower_2_conv_bn_beta",
                 "fc1_weight", "fc2_bias"):
        assert name in params, name
    _, params = squeezenet.get_workload(version="1.1")
    assert {"fire8_right_conv_weight", "conv_final_bias"} <= set(params)
    _, params = densenet.get_workload(batch_size=1)
    assert {"batch_1_3_15_gamma", "conv2d_2_0_5_weight", "conv_t_2_weight",
            "dense_bias"} <= set(params) and "conv_t_3_weight" not in params


def test_get_net_takes_relays_positional_arguments():
    for net, out_shape in (
            (inception_v3.get_net(1, 10, (3, 299, 299), "float32"), (1, 10)),
            (squeezenet.get_net(2, (3, 224, 224), 10, "1.1", "float32"), (2, 10)),
            (densenet.get_net(64, 32, (6, 12, 24, 16), (1, 3, 224, 224)), (1, 1000))):
        mod = relay.transform.InferType()(tvm.IRModule.from_expr(net))
        assert mod["main"].params[0].name_hint == "data"
        assert _shape(mod["main"].ret_type) == out_shape
    # dcgan can generate from a given code expression instead of %data
    code = relay.var("z", shape=(3, 100), dtype="float32")
    net = dcgan.get_net(3, code=code)
    assert net.params[0] is code


@pytest.mark.parametrize("call, message", [
    (lambda: squeezenet.get_workload(version="1.2"), "version"),
    (lambda: densenet.get_workload(densenet_size=100), "densenet_size"),
    (lambda: dcgan.get_workload(oshape=(3, 32, 32)), "64x64"),
    (lambda: dcgan.get_workload(layout="NCHW4c"), "layout"),
    (lambda: dqn.get_workload(layout="CHWN"), "kernel layout"),
])
def test_bad_arguments_are_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_layers_make_named_untyped_weights():
    x = relay.var("x", shape=(1, 3, 8, 8))
    y = layers.conv_bn_relu(x, conv_name="c", bn_name="b", channels=4, kernel_size=(3, 3))
    y = layers.dense_add_bias(relay.nn.batch_flatten(y), units=2, name="fc")
    f = relay.Function(relay.analysis.free_vars(y), y)
    names = [p.name_hint for p in f.params]
    assert names == ["x", "c_weight", "b_gamma", "b_beta", "b_moving_mean", "b_moving_var",
                     "fc_weight", "fc_bias"]
    mod = relay.transform.InferType()(tvm.IRModule.from_expr(f))
    assert _shape(mod["main"].params[1].checked_type) == (4, 3, 3, 3)
    assert layers.conv_kernel_layout("NHWC", is_depthwise=True) == "HWOI"


SMALL = [
    ("dqn", lambda: dqn.get_workload(1, num_actions=5, image_shape=(4, 36, 36)),
     (1, 4, 36, 36)),
    ("dcgan", lambda: dcgan.get_workload(1, ngf=4, random_len=8), (1, 8)),
]


@pytest.mark.parametrize("make, data_shape", [s[1:] for s in SMALL], ids=[s[0] for s in SMALL])
def test_graph_executor_agrees_with_the_interpreter(make, data_shape, needs_cc):
    mod, params = make()
    data = np.random.default_rng(0).uniform(-1, 1, data_shape).astype("float32")
    ref = relay.create_executor("debug", mod=mod).evaluate()(data, **params).numpy()
    assert np.abs(ref).max() > 0
    got = relay.create_executor("graph", mod=mod, target="llvm").evaluate()(data, **params)
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-5, atol=1e-7)
    with tvm.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm", params=params)
    m = graph_executor.GraphModule(lib["default"](tvm.cpu(0)))
    m.run(data=data)
    np.testing.assert_allclose(m.get_output(0).numpy(), ref, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("make", [
    lambda: dqn.get_workload(),
    lambda: dcgan.get_workload(ngf=4),
    lambda: squeezenet.get_workload(version="1.0"),
    lambda: squeezenet.get_workload(version="1.1"),
    lambda: densenet.get_workload(batch_size=1),
    lambda: inception_v3.get_workload(),
], ids=["dqn", "dcgan", "squeezenet-1.0", "squeezenet-1.1", "densenet", "inception_v3"])
def test_text_format_round_trips(make):
    mod, _ = make()
    text = mod.astext()
    assert text.startswith('#[version = "0.0.5"]')
    tvm.ir.assert_structural_equal(relay.fromtext(text), mod, map_free_vars=True)
