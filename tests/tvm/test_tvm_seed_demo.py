"""The seed's demo, written for TVM Relay, runs on relayir with only ``tvm`` replaced by
``relayir.tvm``: a PyTorch MLP traced with TorchScript, imported with ``from_pytorch``,
differentiated with ``gradient``, built with ``relay.build`` for ``llvm`` and run by
``graph_executor.create(lib.get_graph_json(), lib.get_lib(), dev)``; outputs are read
with ``get_output(i).numpy()`` and checked against PyTorch (forward and autograd)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import relayir.tvm as tvm  # noqa: E402  (the one changed line: was ``import tvm``)
from relayir.tvm import relay  # noqa: E402
from relayir.tvm.contrib import graph_executor  # noqa: E402

BATCH, IN, HIDDEN, OUT = 4, 8, 16, 3
# TorchScript is what Relay's from_pytorch takes; torch now warns that it is deprecated
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.trace:DeprecationWarning")


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(IN, HIDDEN)
        self.fc2 = torch.nn.Linear(HIDDEN, OUT)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


@pytest.fixture(scope="module")
def model_and_input():
    torch.manual_seed(0)
    return MLP().eval(), torch.randn(BATCH, IN)


def import_model(model, example):
    scripted = torch.jit.trace(model, example).eval()
    shape_list = [("input0", (BATCH, IN))]
    return relay.frontend.from_pytorch(scripted, shape_list)


def test_forward_through_graph_executor_create(model_and_input, needs_cc):
    model, example = model_and_input
    mod, params = import_model(model, example)

    target = tvm.target.Target("llvm", host="llvm")
    dev = tvm.cpu(0)
    with tvm.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target=target, params=params)
    m = graph_executor.create(lib.get_graph_json(), lib.get_lib(), dev)
    m.set_input("input0", tvm.nd.array(example.numpy()))
    m.set_input(**lib.get_params())
    m.run()
    out = m.get_output(0).numpy()

    assert isinstance(out, np.ndarray) and out.shape == (BATCH, OUT)
    np.testing.assert_allclose(out, model(example).detach().numpy(), rtol=1e-5, atol=1e-5)


def test_gradient_through_graph_executor_create(model_and_input, needs_cc):
    model, example = model_and_input
    mod, params = import_model(model, example)

    mod = relay.transform.InferType()(mod)
    bwd = relay.transform.gradient(mod["main"], mode="first_order")
    grad_mod = tvm.IRModule.from_expr(bwd)
    dev = tvm.cpu(0)
    with tvm.transform.PassContext(opt_level=3):
        lib = relay.build(grad_mod, target="llvm")
    m = graph_executor.create(lib.get_graph_json(), lib.get_lib(), dev)
    m.set_input("input0", tvm.nd.array(example.numpy()))
    m.set_input(**params)
    m.set_input(**lib.get_params())
    m.run()
    names = [p.name_hint for p in mod["main"].params]
    assert m.get_num_outputs() == 1 + len(names)  # (y, (d input0, d weights...)) flattened
    got = {name: m.get_output(1 + i).numpy() for i, name in enumerate(names)}

    x = example.clone().requires_grad_(True)
    model.zero_grad()
    y = model(x)
    y.sum().backward()
    np.testing.assert_allclose(m.get_output(0).numpy(), y.detach().numpy(), rtol=1e-5,
                               atol=1e-5)
    np.testing.assert_allclose(got["input0"], x.grad.numpy(), rtol=1e-4, atol=1e-5)
    for name, p in model.named_parameters():
        np.testing.assert_allclose(got[name], p.grad.numpy(), rtol=1e-4, atol=1e-5)
