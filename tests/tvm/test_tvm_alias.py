"""``install_alias()``: ``import tvm`` and ``import tvm.X`` give ``relayir.tvm`` and
``relayir.tvm.X`` (the same module objects); a real ``tvm`` already imported is refused;
``import relayir`` never imports the compatibility layer, which needs numpy alone."""

import subprocess
import sys
import types

import pytest

import relayir.tvm
from relayir.tvm import AliasError, install_alias, uninstall_alias


@pytest.fixture
def alias():
    saved = {k: v for k, v in sys.modules.items() if k == "tvm" or k.startswith("tvm.")}
    for k in saved:
        del sys.modules[k]
    install_alias()
    yield
    uninstall_alias()
    sys.modules.update(saved)


def test_import_tvm_gives_the_relayir_modules(alias):
    import tvm.relay.testing
    import tvm.runtime.vm
    from tvm.contrib import graph_executor

    import tvm
    from tvm import relay

    assert tvm is relayir.tvm
    assert relay is relayir.tvm.relay
    assert tvm.relay.testing is relayir.tvm.relay.testing
    assert graph_executor is relayir.tvm.contrib.graph_executor
    assert tvm.runtime.vm is relayir.tvm.runtime.vm
    # the module keeps its own identity: it is relayir.tvm.relay under a second name
    assert relay.__name__ == "relayir.tvm.relay"
    assert relay.__spec__.name == "relayir.tvm.relay"
    assert sys.modules["tvm.relay"] is relay


def test_alias_is_idempotent_and_undone(alias):
    install_alias()
    finders = [f for f in sys.meta_path if type(f).__name__ == "TvmAliasFinder"]
    assert len(finders) == 1
    import tvm  # noqa: F401

    uninstall_alias()
    assert "tvm" not in sys.modules
    assert not any(type(f).__name__ == "TvmAliasFinder" for f in sys.meta_path)
    install_alias()  # the fixture's teardown uninstalls again


def test_a_missing_module_is_named(alias):
    with pytest.raises(ModuleNotFoundError, match="tvm.relay.collage"):
        import tvm.relay.collage  # noqa: F401


def test_a_real_tvm_already_imported_is_refused():
    uninstall_alias()
    real = types.ModuleType("tvm")
    real.__file__ = "/opt/tvm/python/tvm/__init__.py"
    sys.modules["tvm"] = real
    try:
        with pytest.raises(AliasError, match="real 'tvm' package is already imported"):
            install_alias()
        assert not any(type(f).__name__ == "TvmAliasFinder" for f in sys.meta_path)
    finally:
        del sys.modules["tvm"]


def _fresh_python(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_import_relayir_does_not_import_the_compatibility_layer():
    code = ("import sys, relayir\n"
            "print(sorted(m for m in sys.modules if m.startswith('relayir.tvm')))")
    assert _fresh_python(code) == "[]"


def test_the_compatibility_layer_imports_no_framework_until_used():
    # what relayir.tvm adds to what ``import relayir`` imports (whose own numpy-only rule
    # tests/test_readme.py checks): no framework, no test tool
    code = ("import sys, relayir\n"
            "before = set(sys.modules)\n"
            "import relayir.tvm as tvm\n"
            "from relayir.tvm import relay\n"
            "from relayir.tvm.contrib import graph_executor\n"
            "import relayir.tvm.relay.testing\n"
            "added = {m.split('.')[0] for m in set(sys.modules) - before}\n"
            "print(sorted(added & {'torch', 'onnx', 'onnxruntime', 'pytest', 'scipy'}))")
    assert _fresh_python(code) == "[]"


def test_an_unmodified_relay_script_runs_under_the_alias():
    code = """
import relayir.tvm
relayir.tvm.install_alias()
import numpy as np
import tvm
from tvm import relay
x = relay.var("x", shape=(2, 3))
f = relay.Function([x], relay.nn.relu(x) * relay.const(2.0))
mod = tvm.IRModule.from_expr(f)
ex = relay.create_executor("debug", mod=mod, device=tvm.cpu(0), target="llvm")
out = ex.evaluate()(np.array([[1, -1, 2], [-2, 3, -3]], dtype="float32"))
print(type(out).__module__, out.numpy().tolist())
"""
    assert _fresh_python(code) == ("relayir.tvm.runtime.ndarray "
                                   "[[2.0, 0.0, 4.0], [0.0, 6.0, 0.0]]")
