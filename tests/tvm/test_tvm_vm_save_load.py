"""TVM's VM serialisation names over relayir's executable: ``code, lib = exe.save()``,
``lib.export_library`` / ``tvm.runtime.load_module``, ``Executable.load_exec(code, lib)``,
and ``globals`` / ``primitive_ops`` / ``bytecode`` as TVM gives them."""

import numpy as np
import pytest

import relayir.tvm as tvm
from relayir.tvm import relay
from relayir.tvm.runtime import vm as _vm


def _exe():
    x = relay.var("x", shape=(4, 3))
    f = relay.Function([x], relay.nn.relu(x) + x)
    return relay.vm.compile(tvm.IRModule.from_expr(f), target="llvm")


def _run(exe, data):
    return _vm.VirtualMachine(exe, tvm.cpu()).run(data).numpy()


DATA = np.array([[-1, 0, 2], [np.nan, -np.inf, np.inf], [-0.0, 3, -3], [1e-40, 5, 6]],
                "float32")
WANT = np.maximum(DATA, 0) + DATA


@pytest.mark.usefixtures("needs_cc")
def test_save_without_a_path_gives_code_and_lib_that_load_back(tmp_path):
    code, lib = _exe().save()
    assert isinstance(code, bytearray) and isinstance(lib, tvm.runtime.Module)
    np.testing.assert_array_equal(_run(_vm.Executable.load_exec(code, lib), DATA), WANT)
    lib.export_library(str(tmp_path / "lib.so"))
    (tmp_path / "code.ro").write_bytes(code)
    loaded = tvm.runtime.load_module(str(tmp_path / "lib.so"))
    assert isinstance(loaded, tvm.runtime.Module)
    exe = _vm.Executable.load_exec(bytearray((tmp_path / "code.ro").read_bytes()), loaded)
    np.testing.assert_array_equal(_run(exe, DATA), WANT)


@pytest.mark.usefixtures("needs_cc")
def test_save_with_a_path_is_relayirs_own(tmp_path):
    _exe().save(tmp_path / "exe.relayir")
    exe = _vm.Executable.load(tmp_path / "exe.relayir")
    np.testing.assert_array_equal(_run(exe, DATA), WANT)


@pytest.mark.usefixtures("needs_cc")
def test_introspection_names():
    exe = _exe()
    assert exe.globals == ["main"]
    assert exe.primitive_ops and all(isinstance(n, str) for n in exe.primitive_ops)
    assert isinstance(exe.bytecode, str) and "main" in exe.bytecode


def test_bad_code_is_a_format_error_not_a_crash():
    from relayir.runtime.module import ModuleFormatError

    with pytest.raises(ModuleFormatError):
        _vm.Executable.load_exec(bytearray(b"not an executable"), None)


def test_invoke_with_outputs_writes_the_given_arrays():
    x = relay.var("x", shape=(3, 2))
    exe = relay.vm.compile(tvm.IRModule.from_expr(relay.Function([x], x + x)), "llvm")
    vm = tvm.runtime.vm.VirtualMachine(exe, tvm.cpu())
    data = np.arange(6, dtype="float32").reshape(3, 2)
    out = tvm.nd.array(np.empty((3, 2), "float32"))
    vm.invoke_with_outputs("main", input_args={"x": tvm.nd.array(data)}, output_args=[out])
    np.testing.assert_array_equal(out.numpy(), data * 2)
    with pytest.raises(tvm.TVMError, match="output 0 is float32\\[3, 2\\], its array is"):
        vm.invoke_with_outputs("main", {"x": data}, [np.empty((2, 3), "float32")])
