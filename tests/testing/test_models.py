"""The built-in workloads: well-typed, shaped as documented, named like their PyTorch
twins, and numerically equal to them.

Every model runs at a small size here. The weights are passed to the debug executor as
inputs rather than bound with ``params=``: bound, they would become megabytes of
constants that the conftest text round trip prints and parses for every module.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

import relayir as relay
from relayir.errors import Error
from relayir.ir.expr import Call, Constant, Function
from relayir.ir.functor import post_order
from relayir.ir.types import TensorType
from relayir.testing import models
from relayir.testing.models import WORKLOADS, get_workload, list_value, make_inputs

# small knobs for each workload, and the output type they give
SMALL = {
    "mlp": dict(batch_size=2, in_features=32, hidden=16),
    "resnet18": dict(batch_size=2, image_size=32, num_classes=10),
    "mobilenet_v2": dict(image_size=32, num_classes=10),
    "bert": dict(batch_size=2, num_layers=2, seq_len=16, hidden=64, heads=4,
                 intermediate=128, vocab=100, max_position=32),
    "lstm": dict(batch_size=3, seq_len=5, input_size=8, hidden_size=16),
    "resnet50": dict(image_size=32, num_classes=10),
    "lstm_recursive": dict(batch_size=3, seq_len=5, input_size=8, hidden_size=16),
}
OUTPUT = {
    "mlp": TensorType((2, 10), "float32"),
    "resnet18": TensorType((2, 10), "float32"),
    "mobilenet_v2": TensorType((1, 10), "float32"),
    "bert": TensorType((2, 16, 64), "float32"),
    "lstm": TensorType((5, 3, 16), "float32"),
    "resnet50": TensorType((1, 10), "float32"),
    "lstm_recursive": TensorType((3, 16), "float32"),
}
# float32 programs against float64 torch. ResNet and MobileNet are 20-50 layers deep:
# each op rounds to float32 (~6e-8 relative), the errors add up along the depth and
# outputs reach ~10, so their bound is atol 1e-5 *scaled by the largest output*
# (measured worst error: ~2e-7 of it); elementwise rtol alone would flag logits near 0.
DEEP = {"resnet18", "resnet50", "mobilenet_v2"}
# lstm_recursive needs the prelude (parser + Prelude); it runs last on purpose
ORDER = ["mlp", "lstm", "bert", "resnet18", "mobilenet_v2", "resnet50", "lstm_recursive"]
CASES = [pytest.param(n, marks=pytest.mark.slow) if n == "resnet50" else n for n in ORDER]
TORCH_CASES = [c for c in CASES if c != "mlp"]


@pytest.fixture(scope="module")
def torch_models():
    pytest.importorskip("torch")
    from relayir.testing.models import torch_models

    return torch_models


def _op_names(mod) -> set[str]:
    return {n.op.name for n in post_order(mod["main"].body)
            if isinstance(n, Call) and hasattr(n.op, "name")}


def _run(name: str):
    mod, params, reference = get_workload(name, **SMALL[name])
    mod = relay.transform.InferType()(mod)
    inputs = make_inputs(name, mod, seed=1)
    out = relay.create_executor("debug", mod).evaluate()(**inputs, **params)
    return mod, params, out, reference(params, *inputs.values())


@pytest.mark.parametrize("name", CASES)
def test_types_and_matches_reference(name, torch_models):
    mod, params, out, expected = _run(name)
    assert mod["main"].checked_type.ret_type == OUTPUT[name]
    assert all(v.dtype == np.float32 for v in params.values())
    assert out.dtype == np.float32 and out.shape == OUTPUT[name].shape
    scale = float(np.abs(expected).max()) if name in DEEP else 1.0
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5 * scale)


@pytest.mark.parametrize("name", TORCH_CASES)
def test_param_names_are_the_torch_state_dict_keys(name, torch_models):
    """Same names, order and shapes; torch's BN ``num_batches_tracked`` counter is the
    one key a Relay program has no use for."""
    _, params, _ = get_workload(name, **SMALL[name])
    state = torch_models.build(name, **SMALL[name]).state_dict()
    state = {k: v for k, v in state.items() if not k.endswith("num_batches_tracked")}
    assert list(params) == list(state)
    assert {k: v.shape for k, v in params.items()} == {k: tuple(v.shape) for k, v in
                                                        state.items()}


def test_mlp_torch_twin_equals_numpy_reference(torch_models):
    mod, params, reference = get_workload("mlp", **SMALL["mlp"])
    data = make_inputs("mlp", mod)["data"]
    np.testing.assert_allclose(torch_models.run("mlp", params, data, **SMALL["mlp"]),
                               reference(params, data), rtol=1e-12)


def test_builders_are_deterministic():
    a = models.lstm(**SMALL["lstm"])[1]
    b = models.lstm(**SMALL["lstm"])[1]
    c = models.lstm(**SMALL["lstm"], seed=1)[1]
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert not any(np.array_equal(a[k], c[k]) for k in a)


def test_resnet_keeps_batch_norm_with_nontrivial_statistics():
    mod, params = models.resnet18(image_size=32)
    bns = [n for n in post_order(mod["main"].body)
           if isinstance(n, Call) and getattr(n.op, "name", "") == "nn.batch_norm"]
    assert len(bns) == 20  # stem + 2 per block x 8 + 3 downsamples
    for suffix, identity in (("weight", 1), ("bias", 0), ("running_mean", 0),
                             ("running_var", 1)):
        vals = np.concatenate([v for k, v in params.items() if k.endswith(f"bn1.{suffix}")])
        assert np.abs(vals - identity).min() > 0 and vals.std() > 0.01
    assert {"nn.conv2d", "nn.max_pool2d", "nn.global_avg_pool2d", "nn.batch_flatten",
            "nn.dense"} <= _op_names(mod)


def test_resnet50_uses_bottlenecks():
    mod, params = models.resnet50(image_size=32)
    assert params["layer1.0.conv3.weight"].shape == (256, 64, 1, 1)
    assert params["layer4.0.downsample.0.weight"].shape == (2048, 1024, 1, 1)
    assert params["fc.weight"].shape == (1000, 2048)


def test_mobilenet_has_depthwise_convs_and_relu6():
    mod, _ = models.mobilenet_v2(image_size=32)
    convs = [n for n in post_order(mod["main"].body)
             if isinstance(n, Call) and getattr(n.op, "name", "") == "nn.conv2d"]
    depthwise = [c for c in convs if c.attrs.groups > 1]
    assert len(convs) == 52 and len(depthwise) == 17
    assert all(c.attrs.groups == c.attrs.channels for c in depthwise)
    clips = [n for n in post_order(mod["main"].body)
             if isinstance(n, Call) and getattr(n.op, "name", "") == "clip"]
    assert clips and all((c.attrs.a_min, c.attrs.a_max) == (0.0, 6.0) for c in clips)


def test_bert_is_written_like_tvm_imports():
    mod, _ = models.bert(**SMALL["bert"])
    assert {"take", "nn.layer_norm", "nn.dense", "nn.batch_matmul", "nn.softmax", "erf",
            "reshape", "transpose"} <= _op_names(mod)
    assert mod["main"].params[0].type_annotation == TensorType((2, 16), "int64")


def test_lstm_is_unrolled_into_dataflow():
    mod, _ = models.lstm(**SMALL["lstm"])
    calls = [n for n in post_order(mod["main"].body)
             if isinstance(n, Call) and getattr(n.op, "name", "") == "nn.dense"]
    assert len(calls) == 2 * SMALL["lstm"]["seq_len"]
    assert {"sigmoid", "tanh", "split", "stack"} <= _op_names(mod)


@pytest.mark.parametrize("name", CASES)
def test_make_inputs_fit_main(name):
    mod, params = WORKLOADS[name].builder(**SMALL[name])
    inputs = make_inputs(name, mod, seed=3)
    mains = [p for p in mod["main"].params if p.name_hint not in params]
    assert list(inputs) == [p.name_hint for p in mains]
    for p in mains:
        assert inputs[p.name_hint].shape == p.type_annotation.concrete_shape
        assert inputs[p.name_hint].dtype == p.type_annotation.dtype
    again = make_inputs(name, mod, seed=3)
    assert all(np.array_equal(inputs[k], again[k]) for k in inputs)


def test_bert_token_ids_are_in_the_vocabulary_even_with_weights_bound():
    mod, params = models.bert(**SMALL["bert"])
    ids = make_inputs("bert", mod)["input_ids"]
    assert ids.min() >= 0 and ids.max() < 100 and len(np.unique(ids)) > 10
    fn = mod["main"]
    weights = {p: Constant(params[p.name_hint]) for p in fn.params if p.name_hint in params}
    bound = relay.IRModule.from_expr(
        Function(fn.params[:1], relay.transform.bind(fn.body, weights)))
    assert make_inputs("bert", bound)["input_ids"].max() < 100


def test_get_workload_errors_name_what_exists():
    with pytest.raises(Error, match="resnet18"):
        get_workload("resnet19")
    with pytest.raises(Error, match="image_size"):
        get_workload("resnet18", image_sise=32)
    with pytest.raises(Error, match="resnet19"):
        make_inputs("resnet19", relay.IRModule())


def test_reference_without_torch_says_torch_is_needed(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # makes ``import torch`` fail
    monkeypatch.delitem(sys.modules, "relayir.testing.models.torch_models", raising=False)
    monkeypatch.delattr(models, "torch_models", raising=False)
    mod, params, reference = get_workload("lstm", **SMALL["lstm"])
    with pytest.raises(Error, match="torch"):
        reference(params, make_inputs("lstm", mod)["data"])
    # the MLP's numpy reference needs no torch
    mod, params, reference = get_workload("mlp", **SMALL["mlp"])
    assert reference(params, make_inputs("mlp", mod)["data"]).shape == (2, 10)


# ---------------------------------------------------------------- last: needs the prelude


def test_lstm_recursive_runs_over_lists_of_any_length(torch_models):
    knobs = SMALL["lstm_recursive"]
    mod, params = models.lstm_recursive(**knobs)
    mod = relay.transform.InferType()(mod)
    assert {"lstm_cell", "lstm", "main"} <= {gv.name_hint for gv in mod.get_global_vars()}
    # @lstm on a 3-step list, not the 5 steps @main was built for: the recursion is real
    rng = np.random.default_rng(4)
    steps = rng.standard_normal((3, 3, 8)).astype("float32")
    zero = np.zeros((3, 16), "float32")
    run = relay.create_executor("debug", mod).evaluate(mod.get_global_var("lstm"))
    weights = [params[p] for p in ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0")]
    out = run(list_value(mod, list(steps)), zero, zero, *weights)
    expected = torch_models.run("lstm_recursive", params, steps, **knobs)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)


def test_lstm_recursive_extends_a_given_module():
    mod = relay.IRModule()
    out, _ = models.lstm_recursive(mod, **SMALL["lstm_recursive"])
    assert out is mod and mod.has_type("List") and "lstm" in mod
