"""Runtime values as TVM users expect them: ``NDArray`` (a numpy subclass with
``numpy()``, ``copyto``, ``copyfrom``), ``tvm.nd.array`` / ``empty``, devices, and the
graph executor's TVM signatures (``get_output(i, out)``, ``run(**inputs)``,
``lib["default"](dev)``, ``set_input(**params)``)."""

import numpy as np
import pytest

import relayir
import relayir.tvm as tvm
from relayir.tvm import relay
from relayir.tvm.contrib import graph_executor
from relayir.tvm.runtime.container import ADT


def test_nd_array_is_a_numpy_array_with_tvm_methods():
    x = np.arange(6, dtype="float32").reshape(2, 3)
    a = tvm.nd.array(x, tvm.cpu(0))
    assert isinstance(a, tvm.nd.NDArray) and isinstance(a, np.ndarray)
    assert a.shape == (2, 3) and a.dtype == "float32"
    assert a.device == tvm.cpu(0) and str(a.device) == "cpu(0)"
    x[0, 0] = 100.0  # nd.array copies
    assert a.numpy()[0, 0] == 0.0
    plain = a.numpy()
    assert type(plain) is np.ndarray and plain is not a
    np.testing.assert_array_equal(a.asnumpy(), plain)
    assert np.sum(a) == 15.0  # numpy functions take it as it is


def test_copyto_copyfrom_and_empty():
    a = tvm.nd.array(np.ones((2, 2), "float32"))
    b = tvm.nd.empty((2, 2), "float32", tvm.cpu())
    assert b.numpy().tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert a.copyto(b) is b
    assert b.numpy().tolist() == [[1.0, 1.0], [1.0, 1.0]]
    c = a.copyto(tvm.cpu(0))
    assert isinstance(c, tvm.nd.NDArray) and c is not a
    b.copyfrom(np.full((2, 2), 3.0))
    assert b.numpy()[1, 1] == 3.0
    with pytest.raises(relayir.Error, match="shape"):
        b.copyfrom(np.zeros(3))


def test_devices():
    assert tvm.cpu(0) == tvm.device("cpu", 0) == tvm.device("llvm")
    assert tvm.cpu().exist and not tvm.cuda().exist
    with pytest.raises(relayir.Error, match="unknown device"):
        tvm.device("tpu")
    with pytest.raises(relayir.Error, match="host CPU only"):
        tvm.nd.array(np.zeros(2), tvm.cuda(0))


def _mlp_lib(target="llvm"):
    x = relay.var("data", shape=(2, 4))
    w = relay.var("w", shape=(3, 4))
    b = relay.var("b", shape=(3,))
    f = relay.Function([x, w, b], relay.nn.bias_add(relay.nn.dense(x, w), b))
    params = {"w": np.arange(12, dtype="float32").reshape(3, 4) / 10,
              "b": np.array([1, 2, 3], dtype="float32")}
    with tvm.transform.PassContext(opt_level=3):
        lib = relay.build(tvm.IRModule.from_expr(f), target=target, params=params)
    return lib, params


def _expected(data, params):
    return data @ params["w"].T + params["b"]


def test_graph_module_with_tvm_signatures(needs_cc):
    lib, params = _mlp_lib()
    m = graph_executor.GraphModule(lib["default"](tvm.cpu(0)))
    data = np.random.default_rng(0).standard_normal((2, 4)).astype("float32")
    m.run(data=tvm.nd.array(data))
    out = m.get_output(0)
    assert isinstance(out, tvm.nd.NDArray)
    np.testing.assert_allclose(out.numpy(), _expected(data, params), rtol=1e-5)
    buf = tvm.nd.empty((2, 3))
    assert m.get_output(0, buf) is buf
    np.testing.assert_array_equal(buf.numpy(), out.numpy())
    assert isinstance(m.get_input("data"), tvm.nd.NDArray)
    # set_input(**params) skips the names build bound as constants, as TVM does
    m.set_input(**params)
    m.set_input(data=data)
    m.run()
    np.testing.assert_array_equal(m.get_output(0).numpy(), out.numpy())
    with pytest.raises(relayir.Error, match="no input named 'nope'"):
        m.set_input("nope", data)


def test_a_numpy_input_is_cast_to_the_declared_dtype_as_tvm_copies_it(needs_cc):
    lib, params = _mlp_lib()
    m = graph_executor.GraphModule(lib["default"](tvm.cpu(0)))
    data = np.arange(8, dtype="float64").reshape(2, 4)
    m.set_input("data", data)
    m.run()
    np.testing.assert_allclose(m.get_output(0).numpy(), _expected(data, params), rtol=1e-5)
    # relayir's own graph executor refuses the float64 input
    plain = relayir.graph_executor.GraphModule(lib)
    with pytest.raises(relayir.Error, match="expected dtype float32"):
        plain.set_input("data", data)


def test_create_with_json_and_lib_then_params():
    lib, params = _mlp_lib("numpy")
    m = graph_executor.create(lib.get_graph_json(), lib.get_lib(), tvm.cpu())
    data = np.ones((2, 4), dtype="float32")
    with pytest.raises(relayir.Error, match="inputs not set"):
        m.run(data=data)  # the constants build made are params of the graph now
    m.set_input(**lib.get_params())
    m.run(data=data)
    np.testing.assert_allclose(m.get_output(0).numpy(), _expected(data, params), rtol=1e-5)


def test_executors_return_tvm_values():
    x = relay.var("x", shape=(2,))
    f = relay.Function([x], relay.Tuple([x, relay.Tuple([x * relay.const(2.0)])]))
    mod = tvm.IRModule.from_expr(f)
    data = np.array([1.0, 2.0], dtype="float32")
    for kind in ("debug", "vm"):
        out = relay.create_executor(kind, mod=mod, target="numpy").evaluate()(data)
        assert isinstance(out, ADT) and out.tag == 0 and len(out) == 2
        assert isinstance(out[0], tvm.nd.NDArray)
        assert isinstance(out[1], ADT)
        np.testing.assert_array_equal(out[1][0].numpy(), [2.0, 4.0])


def test_vm_with_device_and_keyword_inputs():
    x = relay.var("x", shape=(3,))
    y = relay.var("y", shape=(3,))
    mod = tvm.IRModule.from_expr(relay.Function([x, y], x - y))
    exe = relay.vm.compile(mod, target="numpy")
    vm = tvm.runtime.vm.VirtualMachine(exe, tvm.cpu())
    a, b = np.ones(3, "float32"), np.arange(3, dtype="float32")
    out = vm.invoke("main", a, y=b)
    assert isinstance(out, tvm.nd.NDArray)
    np.testing.assert_array_equal(out.numpy(), a - b)
    assert vm.get_input_index("y") == 1 and vm.get_input_index("z") == -1
    vm.set_one_input("main", "y", b)
    vm.set_one_input("main", 0, a)
    np.testing.assert_array_equal(vm.invoke("main").numpy(), a - b)
