"""The opt-level pipeline on real models: what it removes, what it fuses, and that it
preserves the interpreter's results."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import relayir as relay
from relayir.ir.expr import Call, Function, Op
from relayir.ir.functor import post_order
from relayir.testing.models import get_workload, make_inputs
from relayir.testing.pass_check import assert_same_results, evaluate
from relayir.testing.random_programs import random_program
from relayir.transform import PassContext, bind_params
from relayir.transform.fuse_ops import count_primitive_functions
from relayir.transform.pipeline import optimize


def _bound(name, **knobs):
    mod, params, _ = get_workload(name, **knobs)
    inputs = make_inputs(name, mod)
    mod = bind_params(mod, {k: relay.const(v) for k, v in params.items()})
    return mod, inputs


def _op_names(fn):
    return [n.op.name for n in post_order(fn) if isinstance(n, Call) and isinstance(n.op, Op)]


def _primitive_groups(mod):
    """The op names of every primitive function in @main."""
    return [_op_names(f.body) for f in post_order(mod["main"])
            if isinstance(f, Function) and f.is_primitive]


def test_resnet18_opt3_folds_batch_norm_and_fuses_conv_epilogues(capsys):
    mod, _ = _bound("resnet18", image_size=32)
    with PassContext(opt_level=0):
        unfused = count_primitive_functions(optimize(mod))
    with PassContext(opt_level=3):
        opt = optimize(mod)
    ops = _op_names(opt["main"])
    assert "nn.batch_norm" not in ops
    # the batch-norm scale is inside the conv weights: no multiply is left anywhere
    assert "multiply" not in ops
    groups = _primitive_groups(opt)
    conv_groups = [g for g in groups if "nn.conv2d" in g]
    assert sum(g.count("nn.conv2d") for g in groups) == 20
    assert all(g.count("nn.conv2d") == 1 for g in conv_groups)
    # every conv2d carries its epilogue: the folded bias add, and relu where the model has one
    assert all("add" in g for g in conv_groups)
    assert sum("nn.relu" in g for g in conv_groups) == 17
    with capsys.disabled():
        print(f"\nresnet18: {unfused} primitive functions at opt level 0, "
              f"{len(groups)} at opt level 3")
    assert len(groups) < unfused / 3
    text = opt.astext(show_meta_data=False)
    assert "Primitive=1" in text and "nn.conv2d" in text


@pytest.mark.parametrize("name,knobs", [
    ("mlp", {}),
    ("resnet18", {"image_size": 32}),
    ("mobilenet_v2", {"image_size": 32}),
    ("bert", {"num_layers": 2, "seq_len": 16, "vocab": 200}),
])
@pytest.mark.parametrize("opt_level", [0, 3])
def test_pipeline_preserves_model_results(name, knobs, opt_level):
    mod, inputs = _bound(name, **knobs)
    expected = evaluate(mod, inputs)
    with PassContext(opt_level=opt_level):
        opt = optimize(mod)
    scale = float(np.max(np.abs(expected)))
    np.testing.assert_allclose(evaluate(opt, inputs), expected, rtol=1e-4, atol=1e-5 * scale)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**31 - 1))
def test_pipeline_preserves_random_programs(seed):
    mod, inputs = random_program(seed)
    expected = evaluate(mod, inputs)
    with PassContext(opt_level=3):
        opt = optimize(mod)
    assert_same_results(evaluate(opt, inputs), expected)


def test_disabled_and_required_passes_behave_as_in_relay():
    mod, _ = _bound("mlp")
    with PassContext(opt_level=3, disabled_pass=["FuseOps"]):
        assert count_primitive_functions(optimize(mod)) == 0
    with PassContext(opt_level=3):
        assert count_primitive_functions(optimize(mod)) > 0
    # FoldScaleAxis is level 3: not run at level 1 unless required
    x = relay.var("x", shape=(1, 4))
    w = relay.const(np.ones((3, 4), "float32"))
    s = relay.const(np.array([1.0, 2.0, 3.0], "float32"))
    body = relay.multiply(relay.nn.dense(x, w), s)
    small = relay.IRModule.from_expr(relay.Function([x], body))
    with PassContext(opt_level=1, disabled_pass=["FuseOps"]):
        assert "multiply" in _op_names(optimize(small)["main"])
    with PassContext(opt_level=1, disabled_pass=["FuseOps"],
                     required_pass=["FoldScaleAxis", "FoldConstant"]):
        assert "multiply" not in _op_names(optimize(small)["main"])
