"""The interpreter runs a dynamic call's type relation on the run-time shapes, as the
VM's shape functions do: a weight whose run-time kernel is larger than the padded input
is refused by both (fuzz campaign seed 33267: the VM refused it, the interpreter's
reference gave an empty value), and a shape the relation takes runs on both alike."""

import numpy as np
import pytest

import relayir as relay
from relayir.errors import Error, InterpreterError


def _module():
    x = relay.var("x", shape=(1, 2, 4, 4))
    w = relay.var("w", shape=(3, 2, relay.Any(), relay.Any()))
    return relay.IRModule.from_expr(relay.Function([x, w], relay.nn.conv2d(x, w)))


def test_a_run_time_kernel_larger_than_the_input_is_refused_like_the_vm():
    x = np.ones((1, 2, 4, 4), "float32")
    w = np.ones((3, 2, 5, 1), "float32")
    with pytest.raises(InterpreterError, match="nn.conv2d cannot take input types .*larger "
                                               "than the padded input"):
        relay.create_executor("debug", mod=_module()).evaluate()(x, w)
    with pytest.raises(Error, match="larger than the padded input"):
        relay.create_executor("vm", mod=_module(), target="cpu").evaluate()(x, w)


def test_a_shape_the_relation_takes_runs_alike():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 2, 4, 4)).astype("float32")
    w = rng.standard_normal((3, 2, 3, 2)).astype("float32")
    want = relay.create_executor("debug", mod=_module()).evaluate()(x, w)
    got = relay.create_executor("vm", mod=_module(), target="cpu").evaluate()(x, w)
    assert want.shape == (1, 3, 2, 3)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
